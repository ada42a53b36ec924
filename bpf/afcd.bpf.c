// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * afcd.bpf.c - AFCD and FaLL as a tc-bpf egress classifier (clsact,
 * direct-action) over an EDT virtual queue.
 *
 * Per packet (ALGORITHM.md sec. 2-6):
 *   1. the interface's slot and config (afcd_cfg_of(): array lookups
 *      only), written from the device's own network namespace
 *      (afcd_dev_netns_cookie()); unconfigured: pass untouched;
 *   2. parse; IP packets get a flow key and per-flow state (LRU, keyed by
 *      the SipHash id of the key); a packet that cannot have its own state
 *      is judged as an aggregate flow (unclassified frames, flows without
 *      an entry: afcd_maps.h); with probability len/sample_bytes (the
 *      flow's own generator) a sample in the shadow buffer;
 *   3. m_i, m_fair, target_i, the fair rate (or the AFD probability):
 *      afcd_inputs() of afcd_decide.h;
 *   4. afcd_decide(), lock-free: EDT schedule, horizon, the fair-rate
 *      policer, the drop law of cfg->algo, counters, t_last committed
 *      with atomics (the whole queue's CoDel state, algo codel or
 *      codel_state global, under a try-lock);
 *   5. admitted packets get skb->tstamp = max(t_dep, the departure time
 *      the sender set on the monotonic clock) (sch_fq holds them until
 *      then) and, when the law says so, CE instead of a drop.
 * On an interface whose config is the qdisc backend's (AFCD_F_QDISC) the
 * qdisc decides; here, before it, only the CE marks it owes are set
 * (afcd_deferred_mark()).
 *
 * Attach by hand:
 *   tc qdisc add dev DEV clsact
 *   tc filter add dev DEV egress bpf da obj afcd.bpf.o sec tc
 * and give it a config with `afcd set DEV ...` (or run the loader).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#define AFCD_INLINE static __always_inline
#include "afcd_maps.bpf.h"
#define AFCD_DECIDE_FN __attribute__((noinline)) __u32
#include "afcd_decide.h"
#include "afcd_parse.h"
#include "afcd_classify.bpf.h"
#include "afcd_stage.h"

#define TC_ACT_OK   0
#define TC_ACT_SHOT 2
#define AFCD_PULL_LEN 128
/* How far ahead a sender's departure time may be: sch_fq's default
 * horizon (10 s), beyond which sch_fq itself drops or caps the packet. */
#define AFCD_SENDER_AHEAD_NS 10000000000ULL

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Load skb->data or skb->data_end as one ctx+constant access, which the
 * verifier requires (clang may otherwise reuse a modified ctx pointer). */
#define afcd_ctx_u32(skb, off) ({					\
	__u64 __v;							\
	asm volatile("%[v] = *(u32 *)(%[b] + %[o])"			\
		     : [v] "=r"(__v) : [b] "r"(skb), [o] "i"(off));	\
	__v; })
#define afcd_ctx_ptr(skb, off) ((void *)(long)afcd_ctx_u32(skb, off))
#define afcd_ctx_u8(skb, off) ({					\
	__u64 __v;							\
	asm volatile("%[v] = *(u8 *)(%[b] + %[o])"			\
		     : [v] "=r"(__v) : [b] "r"(skb), [o] "i"(off));	\
	(__u8)__v; })
#define afcd_ctx_u64(skb, off) ({					\
	__u64 __v;							\
	asm volatile("%[v] = *(u64 *)(%[b] + %[o])"			\
		     : [v] "=r"(__v) : [b] "r"(skb), [o] "i"(off));	\
	__v; })

/* The cookie of the network namespace of the packet's device
 * (skb->dev->nd_net.net->net_cookie, what SO_NETNS_COOKIE gives a socket
 * there; never 0 for a device), which the interface's config must carry
 * (afcd_config.netns_cookie): ifindexes repeat across namespaces, and a
 * program attached by hand in another namespace, on a device with a
 * configured ifindex, shares the pinned maps. bpf_get_netns_cookie()
 * will not do: in a tc program it gives the namespace of the packet's
 * socket, or the initial one for a forwarded packet. Read through
 * bpf_cast_to_kern_ctx() (Linux >= 6.2; a few loads) where the kernel
 * and libbpf (>= 1.2: weak kfuncs; the Makefile sets AFCD_NO_KFUNC
 * below) have it, else with bpf_probe_read_kernel() (about 19 ns). 0
 * when it cannot be read. afcd_test_netns_probe (tests) forces the
 * second way. */
const volatile __u8 afcd_test_netns_probe = 0;
#ifndef AFCD_NO_KFUNC
extern void *bpf_cast_to_kern_ctx(void *obj) __ksym __weak;
#endif

AFCD_INLINE __u64 afcd_dev_netns_cookie(struct __sk_buff *skb)
{
#ifndef AFCD_NO_KFUNC
	if (bpf_ksym_exists(bpf_cast_to_kern_ctx) && !afcd_test_netns_probe) {
		struct sk_buff *k = bpf_cast_to_kern_ctx(skb);

		return k->dev->nd_net.net->net_cookie;
	}
#endif
	return BPF_CORE_READ((struct sk_buff *)skb, dev, nd_net.net, net_cookie);
}

/* Parse the packet's headers into *pkt (afcd_parse()); returns enum
 * afcd_parse_status, AFCD_P_MALFORMED for a NULL pkt. A global function:
 * the verifier checks the parser once on its own, so the stages after it
 * start from one state instead of one per way through the headers (a
 * tenth of the instructions to verify, and the parser's frame is not the
 * program's). It reads the packet and never changes it. */
__attribute__((noinline)) int afcd_parse_skb(struct __sk_buff *skb, struct afcd_pkt *pkt)
{
	void *data, *data_end;

	if (!pkt)
		return AFCD_P_MALFORMED;
	data = afcd_ctx_ptr(skb, offsetof(struct __sk_buff, data));
	data_end = afcd_ctx_ptr(skb, offsetof(struct __sk_buff, data_end));
	return afcd_parse(data, data_end, pkt);
}

/* Set CE on an ECT packet whose IP header is at l3_off. An untagged frame
 * goes through the kernel's bpf_skb_ecn_set_ce() (INET_ECN_set_ce(): the
 * IPv4 checksum kept right by the kernel's own code); a frame whose IP
 * header sits behind VLAN tags in the data, which that helper does not
 * look through (it reads skb->protocol), is marked by hand: IPv4 with an
 * incremental header checksum update (RFC 1624), IPv6 without checksum.
 * Returns 1 if marked. */
AFCD_INLINE int afcd_set_ce(struct __sk_buff *skb, __u32 l3_off, __u8 family)
{
	__u8 b[2];

	if (l3_off == AFCD_ETH_HLEN)
		return bpf_skb_ecn_set_ce(skb) == 1;
	if (bpf_skb_load_bytes(skb, l3_off, b, 2))
		return 0;
	if (family == 4) {
		__u16 old = *(__u16 *)b, new;

		b[1] |= 3;
		new = *(__u16 *)b;
		if (bpf_skb_store_bytes(skb, l3_off + 1, &b[1], 1, 0))
			return 0;
		return bpf_l3_csum_replace(skb, l3_off + 10, old, new, 2) == 0;
	}
	b[1] |= 0x30; /* traffic class ECN bits */
	return bpf_skb_store_bytes(skb, l3_off + 1, &b[1], 1, 0) == 0;
}

/* Pull the first AFCD_PULL_LEN bytes into the linear area when the
 * headers may lie beyond it (bounded: once), then parse. */
AFCD_INLINE int afcd_pull_parse(struct __sk_buff *skb, __u32 skb_len, struct afcd_pkt *pkt)
{
	__u32 lin = afcd_ctx_u32(skb, offsetof(struct __sk_buff, data_end)) -
		    afcd_ctx_u32(skb, offsetof(struct __sk_buff, data));

	if (lin < AFCD_PULL_LEN && skb_len > lin)
		bpf_skb_pull_data(skb, skb_len < AFCD_PULL_LEN ? skb_len : AFCD_PULL_LEN);
	return afcd_parse_skb(skb, pkt);
}

/* The qdisc backend's marks (afcd_decide.h, Deferred CE marks): an ECT
 * packet of a flow that owes one gets CE here, before the qdisc, since
 * the qdisc cannot write it. The flow is looked up, never created or
 * sampled (the qdisc does that at enqueue): its own entry, or, without
 * one (a new flow, or one the qdisc put in the overflow aggregate), the
 * overflow aggregate's. Nothing to do without ecn on or ce_threshold. */
AFCD_INLINE void afcd_deferred_mark(struct __sk_buff *skb, const struct afcd_config *cfg,
				    struct afcd_queue *q, __u32 ifindex, __u32 skb_len)
{
	struct afcd_flow *f;
	struct afcd_pkt pkt;
	__u64 id;

	if (!(cfg->flags & AFCD_F_ECN) && !cfg->ce_threshold_ns)
		return;
	if (afcd_pull_parse(skb, skb_len, &pkt) != AFCD_P_IP || (pkt.ecn != 1 && pkt.ecn != 2))
		return;
	pkt.key.ifindex = ifindex;
	afcd_isolate_key(cfg->flags, &pkt.key);
	id = afcd_flow_id(&pkt.key, q->flow_id_key);
	f = bpf_map_lookup_elem(&afcd_flows, &id);
	if (!f || !afcd_flow_key_eq(&f->key, &pkt.key))
		f = &q->agg[AFCD_AGG_OVERFLOW];
	if (afcd_ce_take(&f->ce_owed) && afcd_set_ce(skb, pkt.l3_off, pkt.family))
		__sync_fetch_and_add(&q->astats[AFCD_A_DEFERRED_MARK], 1);
}

/* afcd_egress up to and including stage upto (afcd_stage.h), a constant. */
AFCD_INLINE int afcd_egress_upto(struct __sk_buff *skb, const enum afcd_stage upto)
{
	struct afcd_config *cfg;
	struct afcd_queue *q;
	struct afcd_flow *f = 0;
	struct afcd_in in = {};
	struct afcd_pkt pkt;
	__u32 ifindex = afcd_ctx_u32(skb, offsetof(struct __sk_buff, ifindex));
	__u32 skb_len = afcd_ctx_u32(skb, offsetof(struct __sk_buff, len));
	__u32 wire_len = afcd_ctx_u32(skb, offsetof(struct __sk_buff, wire_len));
	__u32 verdict, slot;
	__u64 t_dep = 0, sender_ts = 0;
	__u8 ce_thr_mark = 0;
	int st;

	cfg = afcd_cfg_of(ifindex, &slot);
	if (!cfg || cfg->abi != AFCD_ABI_VERSION || cfg->algo >= AFCD_ALGO__MAX ||
	    (!cfg->rate_bps && !(cfg->flags & AFCD_F_QDISC))) {
		afcd_gstat_inc(AFCD_G_UNCONFIGURED);
		return TC_ACT_OK;
	}
	/* the config of this ifindex in another namespace is another
	 * interface's: this device has none of its own namespace, and its
	 * packet passes untouched, as on any interface without a config,
	 * never judged on (or counted in) that interface's queue */
	if (cfg->netns_cookie != afcd_dev_netns_cookie(skb)) {
		afcd_gstat_inc(AFCD_G_FOREIGN_NETNS);
		return TC_ACT_OK;
	}
	q = bpf_map_lookup_elem(&afcd_queue, &slot);
	if (!q || q->ifindex != ifindex || q->slot != slot) {
		afcd_gstat_inc(AFCD_G_BAD_SLOT);
		return TC_ACT_OK;
	}
	if (upto == AFCD_STAGE_config)
		return TC_ACT_OK;
	/* the qdisc backend decides in the qdisc: here only its owed marks */
	if (cfg->flags & AFCD_F_QDISC) {
		afcd_deferred_mark(skb, cfg, q, ifindex, skb_len);
		return TC_ACT_OK;
	}

	afcd_in_init(cfg, afcd_now(), wire_len ? wire_len : skb_len, &in);
	/* the sender's departure time: sch_fq takes a non-zero skb->tstamp as
	 * one on CLOCK_MONOTONIC whatever its type (before Linux 6.11 an
	 * SO_TXTIME stamp has type UNSPEC, not MONO), and so does this; a
	 * value beyond AFCD_SENDER_AHEAD_NS from now is on another clock
	 * (CLOCK_REALTIME, TAI: decades ahead) and is not one */
	sender_ts = afcd_ctx_u64(skb, offsetof(struct __sk_buff, tstamp));
	if (sender_ts > in.now_ns + AFCD_SENDER_AHEAD_NS)
		sender_ts = 0;
	if (upto == AFCD_STAGE_clock)
		return TC_ACT_OK;

	st = afcd_pull_parse(skb, skb_len, &pkt);
	if (upto == AFCD_STAGE_parse)
		return TC_ACT_OK;

	f = afcd_flow_of(cfg, q, ifindex, st, &pkt, &in);
	if (upto == AFCD_STAGE_flow)
		return TC_ACT_OK;
	if (f)
		afcd_judge_inputs(cfg, q, slot, f, &in);
	if (upto == AFCD_STAGE_fair)
		return TC_ACT_OK;
	verdict = afcd_decide(q, f, &in, &t_dep, &ce_thr_mark);

	if (verdict != AFCD_V_PASS && verdict != AFCD_V_MARK)
		return TC_ACT_SHOT;
	if (upto == AFCD_STAGE_decide)
		return TC_ACT_OK;
	/* the sender's own departure time (TCP's pacing, SO_TXTIME), when it
	 * is on sch_fq's clock (CLOCK_MONOTONIC) and later: the packet leaves
	 * no earlier than its socket asked. The virtual queue has charged it
	 * at its arrival, so a packet waiting for its pacing does not push the
	 * clock others queue behind (as Cilium's edt.h keeps the later one) */
	skb->tstamp = afcd_departure(t_dep, sender_ts);
	if (verdict == AFCD_V_MARK || ce_thr_mark)
		afcd_set_ce(skb, pkt.l3_off, pkt.family);
	return TC_ACT_OK;
}

SEC("tc")
int afcd_egress(struct __sk_buff *skb)
{
	return afcd_egress_upto(skb, AFCD_STAGE_ALL);
}
