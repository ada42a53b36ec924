// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * afcd_qdisc.bpf.c - AFCD and FaLL as a qdisc: a BPF Qdisc_ops (struct_ops,
 * Linux >= 6.16 with CONFIG_NET_SCH_BPF; net/sched/bpf_qdisc.c) named
 * `afcd`, the interface's root qdisc, one FIFO per instance.
 *
 * The dissertation's schemes are qdiscs (sec. 3.3, 4.4; the authors'
 * sch_afcodel on Linux 3.6): the drop law runs at dequeue on each
 * packet's true sojourn. This backend does that with the EDT backend's
 * fairness module and decision stages (afcd_classify.bpf.h,
 * afcd_decide.h) and the same maps, counters and estimates:
 *   enqueue  the interface's config (afcd_cfg_of(); none, not backend
 *            qdisc, or written from another network namespace: a plain
 *            FIFO), parse a copy of the headers (a dynptr
 *            read), the flow or aggregate, its sample in the shadow
 *            buffer, then afcd_admit(): the horizon on the sojourn the
 *            packet will see (the bytes ahead of it at rate_bps; without
 *            one, what the last packet dequeued waited) and the fair-rate
 *            policer (only while that sojourn is above its gate,
 *            afcd_police_gate_ns()), the high-water mark (the arrival
 *            stages of afcd_decide.h); the packet limit; the flow's CoDel
 *            state reset when it has had nothing queued for an interval;
 *   dequeue  (paced at rate_bps when it is set, with the qdisc watchdog)
 *            the head packet's true sojourn (now - its enqueue time), the
 *            drop law of the algo against the current estimate and its
 *            flow's m_i (afcd_law(): per-flow target_i, FaLL's gate 1),
 *            head drops (at most AFCD_QDISC_DROPS per dequeue), the
 *            counters; without rate_bps, the link's rate measured from
 *            the dequeue gaps while backlogged (afcd_queue.link_bps, the
 *            sum over the interface's instances: the leaves of mq).
 * A BPF qdisc cannot write the packet (only skb->tstamp and the cb's
 * data): a CE mark it decides on an ECT packet is owed by the packet's
 * flow and set by afcd_egress, attached before it on the same interface,
 * on the flow's next ECT packet (afcd_decide.h, Deferred CE marks); a
 * flow that owes AFCD_CE_OWED_MAX is dropped instead (docs/ALGORITHM.md,
 * the two backends).
 *
 * `afcd attach DEV --backend qdisc rate R` registers it over the maps
 * pinned at AFCD_PIN_DIR (its link pinned at AFCD_QDISC_OPS_PIN), writes
 * the interface's config with AFCD_F_QDISC and makes it the root qdisc;
 * once registered, `tc qdisc replace dev DEV root afcd` works too (a plain
 * FIFO on an interface without such a config). Registered by hand
 * (`bpftool struct_ops register afcd_qdisc.bpf.o DIR`) its maps are
 * pinned elsewhere, without any config: every instance is a plain FIFO.
 */
#define BPF_NO_KFUNC_PROTOTYPES
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#define AFCD_INLINE static __always_inline
#include "afcd_maps.bpf.h"
#define AFCD_DECIDE_FN __attribute__((noinline)) __u32
#include "afcd_qdisc.h"
#include "afcd_ctl.h"
#include "afcd_parse.h"
#include "afcd_classify.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define NET_XMIT_SUCCESS 0x00
#define NET_XMIT_DROP    0x01
#define AFCD_ENOMEM      12

/* Packets an instance holds (sch->limit; fq_codel's 10240). */
#define AFCD_QDISC_LIMIT 10240
/* Head drops one dequeue may take before it lets the qdisc be run again. */
#define AFCD_QDISC_DROPS 8
/* Instances of the qdisc on the machine (the FIFOs' map). */
#define AFCD_QDISC_MAX   256
/* Time constant of the link rate measured at dequeue, ns. A device that
 * frees room in bursts (a NIC's completions) makes the dequeues come in
 * bursts: on a 12 Mbit/s NIC under TCG (testbed/wire_bench.py) 100 ms
 * read 11-17 Mbit/s, 400 ms 10.5-12.6. */
#define AFCD_QDISC_RATE_TAU_NS 400000000ULL
/* Slack of the pacing watchdog, ns (sch_fq's timer_slack). */
#define AFCD_QDISC_SLACK_NS 10000ULL

/* ---- The kernel's BPF qdisc interface (net/sched/bpf_qdisc.c) ---------- */
struct bpf_sk_buff_ptr___afcd {
	struct sk_buff *skb;
};

extern void bpf_kfree_skb(struct sk_buff *p) __ksym;
extern void bpf_qdisc_skb_drop(struct sk_buff *p, struct bpf_sk_buff_ptr___afcd *to_free) __ksym;
extern void bpf_qdisc_watchdog_schedule(struct Qdisc *sch, __u64 expire, __u64 delta_ns) __ksym;
extern void bpf_qdisc_bstats_update(struct Qdisc *sch, const struct sk_buff *skb) __ksym;
extern int bpf_dynptr_from_skb(struct __sk_buff *skb, __u64 flags,
			       struct bpf_dynptr *ptr__uninit) __ksym;
extern void *bpf_obj_new_impl(__u64 local_type_id__k, void *meta__ign) __ksym;
extern void bpf_obj_drop_impl(void *kptr, void *meta__ign) __ksym;
extern int bpf_list_push_back_impl(struct bpf_list_head *head, struct bpf_list_node *node,
				   void *meta__ign, __u64 off) __ksym;
extern struct bpf_list_node *bpf_list_pop_front(struct bpf_list_head *head) __ksym;

#define bpf_obj_new(type) ((type *)bpf_obj_new_impl(bpf_core_type_id_local(type), 0))
#define bpf_obj_drop(p) bpf_obj_drop_impl(p, 0)
#define bpf_list_push_back(head, node) bpf_list_push_back_impl(head, node, 0, 0)
#define __contains(name, node) __attribute__((btf_decl_tag("contains:" #name ":" #node)))
#define __kptr __attribute__((btf_type_tag("kptr")))
#ifndef container_of
#define container_of(ptr, type, member) ((type *)((void *)(ptr) - offsetof(type, member)))
#endif

AFCD_INLINE __u32 afcd_pkt_len(const struct sk_buff *skb)
{
	return ((const struct qdisc_skb_cb *)skb->cb)->pkt_len;
}

/* ---- State ----------------------------------------------------------- */

/* A queued packet. */
struct afcd_qnode {
	struct sk_buff __kptr *skb;
	struct bpf_list_node node;
	__u64 enq_ns;    /* enqueue time, CLOCK_MONOTONIC */
	__u64 seq;       /* its sequence number in the FIFO (afcd_qfifo.enq_seq) */
	__u64 flow_id;   /* its flow's id in afcd_flows (agg 0) */
	__u32 len;       /* qdisc_pkt_len(): wire bytes */
	__u8  agg;       /* 0: its own flow; else the aggregate enum afcd_agg + 1 */
	__u8  ect;       /* ECT(0) or ECT(1) */
};

/* One instance's FIFO and clocks. Enqueue and dequeue of an instance run
 * under its qdisc lock, one at a time: no field needs atomics. */
struct afcd_qfifo {
	struct bpf_spin_lock lock;  /* for the list operations only */
	struct bpf_list_head head __contains(afcd_qnode, node);
	__u64 enq_seq;    /* packets ever queued: the last one's sequence number */
	__u64 deq_seq;    /* sequence number of the last packet dequeued or dropped */
	__u64 t_next_ns;  /* pacing (rate_bps): when the next packet may leave */
	__u64 t_deq_ns;   /* the last dequeue, for the link rate */
	__u64 link_bps;   /* the link rate measured at dequeue (EWMA) */
	__u64 busy_ns;    /* time it was measured over (dequeue gaps while
			   * backlogged), ns, at most AFCD_QDISC_RATE_TAU_NS */
	__u64 sojourn_ns; /* the true sojourn of the last packet dequeued */
	__u32 deq_len;    /* the last dequeued packet's length */
	__u32 busy;       /* the last dequeue left packets queued */
};

/* An instance: its device's network namespace, the device and the
 * qdisc's handle (unique per device). ifindexes repeat across namespaces
 * and the qdisc kind is registered for all of them: without the
 * namespace, two instances would share one FIFO (and one's packets leave
 * by the other's device). */
struct afcd_qkey {
	__u64 netns_cookie;  /* the device's struct net net_cookie (never 0) */
	__u32 ifindex;
	__u32 handle;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AFCD_QDISC_MAX);
	__type(key, struct afcd_qkey);
	__type(value, struct afcd_qfifo);
} afcd_qfifo SEC(".maps");

/* The parser's copy of a packet's first bytes, one per CPU. */
struct afcd_qbuf {
	__u8 b[AFCD_PARSE_COPY_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct afcd_qbuf);
} afcd_qbuf SEC(".maps");

AFCD_INLINE struct afcd_qkey afcd_qkey_of(struct Qdisc *sch)
{
	struct net_device *dev = sch->dev_queue->dev;
	struct afcd_qkey k = {
		.netns_cookie = dev->nd_net.net->net_cookie,
		.ifindex = dev->ifindex,
		.handle = sch->handle,
	};

	return k;
}

/* The config of the instance's interface, if it runs this backend and was
 * written from the interface's own network namespace (else NULL: the
 * instance is a plain FIFO, counted as AFCD_G_UNCONFIGURED; a config of
 * the same ifindex in another namespace is another interface's), its
 * queue and its slot. */
AFCD_INLINE struct afcd_config *afcd_qdisc_cfg(const struct afcd_qkey *k, __u32 *slot,
					       struct afcd_queue **q)
{
	struct afcd_config *cfg = afcd_cfg_of(k->ifindex, slot);

	if (!cfg || cfg->abi != AFCD_ABI_VERSION || !(cfg->flags & AFCD_F_QDISC) ||
	    cfg->algo >= AFCD_ALGO__MAX || cfg->netns_cookie != k->netns_cookie) {
		afcd_gstat_inc(AFCD_G_UNCONFIGURED);
		return 0;
	}
	*q = bpf_map_lookup_elem(&afcd_queue, slot);
	if (!*q || (*q)->ifindex != k->ifindex || (*q)->slot != *slot) {
		afcd_gstat_inc(AFCD_G_BAD_SLOT);
		return 0;
	}
	return cfg;
}

/* Parse the packet from a copy of its first bytes. */
AFCD_INLINE int afcd_qdisc_parse(struct sk_buff *skb, struct afcd_pkt *pkt)
{
	struct afcd_qbuf *buf;
	struct bpf_dynptr dp;
	__u32 zero = 0, n = skb->len;

	__builtin_memset(pkt, 0, sizeof(*pkt));
	buf = bpf_map_lookup_elem(&afcd_qbuf, &zero);
	if (!buf)
		return AFCD_P_MALFORMED;
	if (n > AFCD_PARSE_COPY_MAX)
		n = AFCD_PARSE_COPY_MAX;
	if (bpf_dynptr_from_skb((struct __sk_buff *)skb, 0, &dp) ||
	    bpf_dynptr_read(buf->b, n, &dp, 0, 0))
		return AFCD_P_MALFORMED;
	return afcd_parse_copy(buf->b, n, pkt);
}

/* Flow f's packet, sequence number seq in fq, joins the FIFO at now. A
 * flow that has had nothing queued for an interval (its last packet left,
 * or came, before that) starts its CoDel state over (afcd_flow_idle());
 * cfg NULL: a plain FIFO, no law. */
AFCD_INLINE void afcd_qdisc_flow_joins(struct afcd_flow *f, const struct afcd_qfifo *fq,
				       const struct afcd_config *cfg, __u64 seq, __u64 now)
{
	if (f->last_seq <= fq->deq_seq && cfg &&
	    afcd_flow_idle(now, f->last_seen_ns, cfg->interval_ns))
		afcd_codel_reset_empty(&f->cv, &f->first_above_ns);
	f->last_seq = seq;
	f->last_seen_ns = now;
}

/* ---- Qdisc_ops -------------------------------------------------------- */

SEC("struct_ops/afcd_qdisc_enqueue")
int BPF_PROG(afcd_qdisc_enqueue, struct sk_buff *skb, struct Qdisc *sch,
	     struct bpf_sk_buff_ptr___afcd *to_free)
{
	struct afcd_qkey k = afcd_qkey_of(sch);
	struct afcd_qfifo *fq = bpf_map_lookup_elem(&afcd_qfifo, &k);
	__u32 len = afcd_pkt_len(skb), slot = 0, verdict = AFCD_V_PASS;
	struct afcd_arrival a = { .verdict = AFCD_V_PASS };
	__u64 now = afcd_now(), seq;
	struct afcd_queue *q = 0;
	struct afcd_flow *f = 0;
	struct afcd_config *cfg;
	struct afcd_qnode *n;
	struct afcd_in in = {};
	struct afcd_pkt pkt = {};
	struct afcd_edt e = {};

	cfg = afcd_qdisc_cfg(&k, &slot, &q);
	if (!fq)
		goto drop;
	if (cfg) {
		afcd_in_init(cfg, now, len, &in);
		f = afcd_flow_of(cfg, q, k.ifindex, afcd_qdisc_parse(skb, &pkt), &pkt, &in);
		if (f)
			afcd_judge_inputs(cfg, q, slot, f, &in);
		/* the measured rate once it rests on a time constant of
		 * backlog: a young one (a new instance) is not yet the link's,
		 * and one too low would hold the queue near empty, where it
		 * cannot be measured */
		afcd_qdisc_arrival(now, sch->qstats.backlog, cfg->rate_bps,
				   fq->busy_ns >= AFCD_QDISC_RATE_TAU_NS ? fq->link_bps : 0,
				   fq->sojourn_ns, cfg->horizon_ns, &e);
		/* the arrival stage; the law waits for the packet's dequeue */
		afcd_arrive(q, f, &in, &e, &a);
		afcd_signal(q, &in, f, e.sojourn_ns, &a);
	}
	if (a.verdict == AFCD_V_PASS && sch->q.qlen >= sch->limit)
		a.verdict = AFCD_V_DROP_OVERLIMIT;
	verdict = afcd_defer_marks(f, &in, &a);
	if (verdict != AFCD_V_PASS)
		goto drop;
	n = bpf_obj_new(struct afcd_qnode);
	if (!n) {
		verdict = AFCD_V_DROP_OVERLIMIT;   /* no memory for the node */
		goto drop;
	}
	seq = ++fq->enq_seq;
	n->enq_ns = now;
	n->seq = seq;
	n->len = len;
	if (cfg) {
		afcd_arrival_commit(q, f, &in, &a);
		/* counted as decided; the packet itself is counted passed
		 * when it leaves */
		if (a.marks)
			afcd_count_marks(q, AFCD_PC(q), f, 1, a.marks);
	}
	if (f) {
		afcd_qdisc_flow_joins(f, fq, cfg, seq, now);
		n->agg = pkt.key.agg;
		n->ect = in.ect;
		if (!pkt.key.agg && q)
			n->flow_id = afcd_flow_id(&pkt.key, q->flow_id_key);
	}
	skb = bpf_kptr_xchg(&n->skb, skb);
	if (skb)                        /* never: the node is new */
		bpf_qdisc_skb_drop(skb, to_free);
	bpf_spin_lock(&fq->lock);
	bpf_list_push_back(&fq->head, &n->node);
	bpf_spin_unlock(&fq->lock);
	sch->q.qlen++;
	sch->qstats.backlog += len;
	return NET_XMIT_SUCCESS;
drop:
	if (cfg)
		afcd_account(q, f, &in, &e, verdict == AFCD_V_PASS ? AFCD_V_DROP_OVERLIMIT : verdict,
			     0);
	bpf_qdisc_skb_drop(skb, to_free);
	sch->qstats.drops++;
	return NET_XMIT_DROP;
}

/* The head packet of fq, off the list (NULL: empty), with its node's
 * fields in *nd. */
AFCD_INLINE struct sk_buff *afcd_qdisc_pop(struct afcd_qfifo *fq, struct afcd_qnode *nd)
{
	struct bpf_list_node *ln;
	struct afcd_qnode *n;
	struct sk_buff *skb;

	bpf_spin_lock(&fq->lock);
	ln = bpf_list_pop_front(&fq->head);
	bpf_spin_unlock(&fq->lock);
	if (!ln)
		return 0;
	n = container_of(ln, struct afcd_qnode, node);
	nd->enq_ns = n->enq_ns;
	nd->seq = n->seq;
	nd->flow_id = n->flow_id;
	nd->len = n->len;
	nd->agg = n->agg;
	nd->ect = n->ect;
	skb = bpf_kptr_xchg(&n->skb, 0);
	bpf_obj_drop(n);
	return skb;
}

/* The state a dequeued packet's flow left: its entry, or its aggregate's;
 * NULL when the entry has gone (evicted while the packet waited). */
AFCD_INLINE struct afcd_flow *afcd_qdisc_flow(struct afcd_queue *q, const struct afcd_qnode *nd)
{
	__u32 ai;

	if (!nd->agg)
		return bpf_map_lookup_elem(&afcd_flows, &nd->flow_id);
	ai = nd->agg - 1u;
	if (ai >= AFCD_AGG__MAX)
		return 0;
	/* the address from the tested index: clang would compute it first */
	asm volatile("" : "+r"(ai));
	return &q->agg[ai];
}

/* The law stage on a dequeued packet (afcd_qdisc_law()): a global
 * function, verified once on its own rather than in each pass of the
 * dequeue loop. */
__attribute__((noinline)) __u32 afcd_qdisc_judge(struct afcd_queue *q, struct afcd_flow *f,
						 struct afcd_in *in, struct afcd_edt *e)
{
	if (!q || !in || !e)
		return AFCD_V_PASS;
	return afcd_qdisc_law(q, f, in, e);
}

SEC("struct_ops/afcd_qdisc_dequeue")
struct sk_buff *BPF_PROG(afcd_qdisc_dequeue, struct Qdisc *sch)
{
	struct afcd_qkey k = afcd_qkey_of(sch);
	struct afcd_qfifo *fq = bpf_map_lookup_elem(&afcd_qfifo, &k);
	struct afcd_queue *q = 0;
	struct afcd_config *cfg;
	struct afcd_qnode nd;
	struct sk_buff *skb;
	__u32 slot = 0;
	__u64 now;
	int i;

	if (!fq || !sch->q.qlen)
		return 0;
	cfg = afcd_qdisc_cfg(&k, &slot, &q);
	now = afcd_now();
	if (cfg && cfg->rate_bps && !afcd_time_after_eq(now, fq->t_next_ns)) {
		bpf_qdisc_watchdog_schedule(sch, fq->t_next_ns, AFCD_QDISC_SLACK_NS);
		return 0;
	}
	for (i = 0; i < AFCD_QDISC_DROPS; i++) {
		struct afcd_flow *f;
		struct afcd_in in = {};
		struct afcd_edt e;

		skb = afcd_qdisc_pop(fq, &nd);
		if (!skb)
			return 0;
		sch->q.qlen--;
		sch->qstats.backlog -= nd.len;
		fq->deq_seq = nd.seq;
		if (!cfg)
			goto out;
		/* the link's rate, from the gap since the last dequeue while
		 * packets were waiting (the device took that long for it) */
		if (fq->busy && now > fq->t_deq_ns) {
			__u64 old = fq->link_bps;

			fq->link_bps = afcd_rate_ewma(old, fq->deq_len, now - fq->t_deq_ns,
						      AFCD_QDISC_RATE_TAU_NS);
			/* the interface's rate is the sum of its instances'
			 * (the leaves of mq): each adds its own change */
			AFCD_ATOMIC_ADD(&q->link_bps, fq->link_bps - old);
			fq->busy_ns = fq->busy_ns + (now - fq->t_deq_ns) > AFCD_QDISC_RATE_TAU_NS ?
				      AFCD_QDISC_RATE_TAU_NS : fq->busy_ns + (now - fq->t_deq_ns);
		}
		fq->t_deq_ns = now;
		fq->deq_len = nd.len;
		fq->busy = sch->q.qlen > 0;

		f = afcd_qdisc_flow(q, &nd);
		afcd_in_init(cfg, now, nd.len, &in);
		in.ect = nd.ect;
		if (f)
			afcd_judge_inputs(cfg, q, slot, f, &in);
		afcd_qdisc_departure(now, nd.enq_ns, sch->qstats.backlog, &e);
		fq->sojourn_ns = e.sojourn_ns;
		if (afcd_qdisc_judge(q, f, &in, &e) == AFCD_V_DROP_AQM) {
			bpf_kfree_skb(skb);
			sch->qstats.drops++;
			continue;
		}
		if (cfg->rate_bps)
			fq->t_next_ns = afcd_pace_next(fq->t_next_ns, now,
						       afcd_bytes_ns(nd.len, cfg->rate_bps),
						       cfg->burst_ns);
		goto out;
	}
	/* AFCD_QDISC_DROPS head drops: let the qdisc run again at once */
	if (sch->q.qlen)
		bpf_qdisc_watchdog_schedule(sch, now, 0);
	return 0;
out:
	bpf_qdisc_bstats_update(sch, skb);
	return skb;
}

/* Free every queued packet. */
AFCD_INLINE void afcd_qdisc_drain(struct Qdisc *sch)
{
	struct afcd_qkey k = afcd_qkey_of(sch);
	struct afcd_qfifo *fq = bpf_map_lookup_elem(&afcd_qfifo, &k);
	struct afcd_qnode nd;
	struct sk_buff *skb;
	int i;

	if (fq) {
		bpf_for(i, 0, AFCD_QDISC_LIMIT) {
			skb = afcd_qdisc_pop(fq, &nd);
			if (!skb)
				break;
			bpf_kfree_skb(skb);
		}
		fq->deq_seq = fq->enq_seq;
		fq->busy = 0;
	}
	sch->q.qlen = 0;
	sch->qstats.backlog = 0;
}

SEC("struct_ops/afcd_qdisc_reset")
void BPF_PROG(afcd_qdisc_reset, struct Qdisc *sch)
{
	afcd_qdisc_drain(sch);
}

SEC("struct_ops/afcd_qdisc_init")
int BPF_PROG(afcd_qdisc_init, struct Qdisc *sch, struct nlattr *opt,
	     struct netlink_ext_ack *extack)
{
	struct afcd_qkey k = afcd_qkey_of(sch);
	struct afcd_qfifo zero = {};

	sch->limit = AFCD_QDISC_LIMIT;
	if (bpf_map_update_elem(&afcd_qfifo, &k, &zero, BPF_ANY))
		return -AFCD_ENOMEM;
	return 0;
}

SEC("struct_ops/afcd_qdisc_destroy")
void BPF_PROG(afcd_qdisc_destroy, struct Qdisc *sch)
{
	struct afcd_qkey k = afcd_qkey_of(sch);
	struct afcd_qfifo *fq = bpf_map_lookup_elem(&afcd_qfifo, &k);
	struct afcd_queue *q = 0;
	__u32 slot = 0;

	/* its share of the interface's measured rate goes with it */
	if (fq && fq->link_bps && afcd_qdisc_cfg(&k, &slot, &q))
		AFCD_ATOMIC_ADD(&q->link_bps, 0 - fq->link_bps);
	afcd_qdisc_drain(sch);
	bpf_map_delete_elem(&afcd_qfifo, &k);
}

/* The loader sets BPF_F_LINK on this map before loading (a struct_ops
 * link, pinned at AFCD_QDISC_OPS_PIN, so the registration lives as long
 * as the pin); the section stays ".struct_ops" because bpftool >= 7.5
 * writes a ".struct_ops.link" map into a skeleton that needs libbpf 1.5 */
SEC(".struct_ops")
struct Qdisc_ops afcd = {
	.enqueue = (void *)afcd_qdisc_enqueue,
	.dequeue = (void *)afcd_qdisc_dequeue,
	.reset   = (void *)afcd_qdisc_reset,
	.init    = (void *)afcd_qdisc_init,
	.destroy = (void *)afcd_qdisc_destroy,
	.id      = "afcd",
};
