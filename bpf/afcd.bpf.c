// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * afcd.bpf.c - AFCD and FaLL as a tc-bpf egress classifier (clsact,
 * direct-action) over an EDT virtual queue.
 *
 * Per packet (ALGORITHM.md sec. 2-6):
 *   1. config for skb->ifindex (one hash lookup; it names the interface's
 *      slot in the array maps); unconfigured: pass untouched;
 *   2. parse; IP packets get a flow key, per-flow state (LRU) and, with
 *      probability len/sample_bytes, a sample in the shadow buffer;
 *   3. outside the lock: m_i, m_fair, target_i (or the AFD probability);
 *   4. under the interface's bpf_spin_lock: EDT schedule, horizon, the
 *      drop law selected by cfg->algo, counters, t_last;
 *   5. admitted packets get skb->tstamp = t_dep (sch_fq holds them until
 *      then) and, when the law says so, CE instead of a drop.
 *
 * Attach by hand:
 *   tc qdisc add dev DEV clsact
 *   tc filter add dev DEV egress bpf da obj afcd.bpf.o sec tc
 * and give it a config with `afcd set DEV ...` (or run the loader).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define AFCD_INLINE static __always_inline
#include "afcd_maps.bpf.h"
#include "afcd_law.h"
#include "afcd_parse.h"

#define TC_ACT_OK   0
#define TC_ACT_SHOT 2
#define AFCD_EEXIST 17
#define AFCD_PULL_LEN 128

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Test hooks. afcd_test_clock is read-only data fixed at load time: 0 in
 * every production load (tc, loader), so the verifier prunes the test
 * branches. Unit tests set it to 1 and drive the clock and the random
 * source through .bss for deterministic BPF_PROG_TEST_RUN. */
const volatile __u8 afcd_test_clock = 0;
__u64 afcd_test_now_ns = 0;
__u64 afcd_test_rand_state = 0;

AFCD_INLINE __u64 afcd_now(void)
{
	if (afcd_test_clock)
		return afcd_test_now_ns;
	return bpf_ktime_get_ns();
}

AFCD_INLINE __u32 afcd_rand(void)
{
	if (afcd_test_clock) {
		/* xorshift64 (Marsaglia), deterministic for tests */
		__u64 x = afcd_test_rand_state ? afcd_test_rand_state : 0x9e3779b97f4a7c15ULL;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		afcd_test_rand_state = x;
		return (__u32)(x >> 32);
	}
	return bpf_get_prandom_u32();
}

/* Load skb->data or skb->data_end as one ctx+constant access, which the
 * verifier requires (clang may otherwise reuse a modified ctx pointer). */
#define afcd_ctx_u32(skb, off) ({					\
	__u64 __v;							\
	asm volatile("%[v] = *(u32 *)(%[b] + %[o])"			\
		     : [v] "=r"(__v) : [b] "r"(skb), [o] "i"(off));	\
	__v; })
#define afcd_ctx_ptr(skb, off) ((void *)(long)afcd_ctx_u32(skb, off))

AFCD_INLINE void afcd_gstat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&afcd_global, &idx);

	if (v)
		*v += 1;
}

/* Per-flow state, created on first sight with m_i taken from the shadow
 * buffer's count (the flow may have been evicted and come back). */
AFCD_INLINE struct afcd_flow *afcd_flow_get(struct afcd_queue *q, struct afcd_flow_key *key)
{
	struct afcd_flow *f = bpf_map_lookup_elem(&afcd_flows, key);
	struct afcd_flow zero = {};
	__u32 *cnt;
	long err;

	if (f)
		return f;
	err = bpf_map_update_elem(&afcd_flows, key, &zero, BPF_NOEXIST);
	if (err && err != -AFCD_EEXIST) {
		__sync_fetch_and_add(&q->astats[AFCD_A_FLOW_FAIL], 1);
		return 0;
	}
	f = bpf_map_lookup_elem(&afcd_flows, key);
	if (!err && f) {
		__sync_fetch_and_add(&q->astats[AFCD_A_FLOW_NEW], 1);
		cnt = bpf_map_lookup_elem(&afcd_sb_count, key);
		if (cnt)
			f->m_i = *cnt;
	}
	return f;
}

/* Write one sample into the shadow buffer (AFD, Pan et al.; dissertation
 * Algorithm 1 enqueue): the slot's previous flow loses a sample, this
 * flow gains one; N (q->n_active) follows the 0 <-> 1 transitions. */
AFCD_INLINE void afcd_sb_sample(struct afcd_queue *q, __u32 slot, __u32 sb_size,
				struct afcd_flow_key *key, struct afcd_flow *f)
{
	struct afcd_flow_key old;
	struct afcd_sb_ring *ring;
	struct afcd_flow *fo;
	__u32 pos, one = 1, *cnt;
	long err;

	if (sb_size == 0 || sb_size > AFCD_SB_SIZE_MAX)
		return;
	ring = bpf_map_lookup_elem(&afcd_sb_ring, &slot);
	if (!ring)
		return;
	pos = __sync_fetch_and_add(&q->sb_head, 1) % sb_size;
	asm volatile("" : "+r"(pos)); /* keep the bound below visible to the verifier */
	pos &= AFCD_SB_SIZE_MAX - 1;  /* no-op: pos < sb_size <= AFCD_SB_SIZE_MAX */
	old = ring->slot[pos];
	ring->slot[pos] = *key;
	__sync_fetch_and_add(&q->astats[AFCD_A_SAMPLED], 1);

	if (old.ifindex) {
		cnt = bpf_map_lookup_elem(&afcd_sb_count, &old);
		if (cnt) {
			if (__sync_fetch_and_add(cnt, -1) <= 1) {
				bpf_map_delete_elem(&afcd_sb_count, &old);
				__sync_fetch_and_add(&q->n_active, -1);
			}
		}
		fo = bpf_map_lookup_elem(&afcd_flows, &old);
		if (fo && fo->m_i)
			__sync_fetch_and_add(&fo->m_i, -1);
	}

	cnt = bpf_map_lookup_elem(&afcd_sb_count, key);
	if (cnt) {
		__sync_fetch_and_add(cnt, 1);
	} else {
		err = bpf_map_update_elem(&afcd_sb_count, key, &one, BPF_NOEXIST);
		if (!err) {
			__sync_fetch_and_add(&q->n_active, 1);
		} else {
			cnt = bpf_map_lookup_elem(&afcd_sb_count, key);
			if (cnt)
				__sync_fetch_and_add(cnt, 1);
			else
				__sync_fetch_and_add(&q->astats[AFCD_A_SB_FAIL], 1);
		}
	}
	if (f)
		__sync_fetch_and_add(&f->m_i, 1);
}

/* Set CE in the IP header at l3_off (IPv4: with an incremental header
 * checksum update; IPv6: no checksum). Returns 1 if marked. */
AFCD_INLINE int afcd_set_ce(struct __sk_buff *skb, __u32 l3_off, __u8 family)
{
	__u8 b[2];

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

/* Everything the locked section needs, prepared before taking the lock. */
struct afcd_in {
	__u64 now_ns;
	__u64 tx_ns;
	__u64 rate_bps;
	__u64 horizon_ns;
	__u64 interval_ns;
	__u64 law_target_ns;  /* codel: target; fall: global_target (gate 1) */
	__u64 target_i_ns;    /* afcd/fall: per-flow target */
	__u64 ce_threshold_ns;
	__u32 len;
	__u32 algo;
	__u8  aqm;            /* IP packet with flow state: the drop law applies */
	__u8  ip;             /* IP packet: horizon applies */
	__u8  ect;
	__u8  ecn_on;
	__u8  codel_global;
	__u8  afd_drop;       /* AFD coin: rand < (1 - m_fair/m_i)+ */
	__u8  stale;          /* no fresh loader estimate: fallback used */
	__u8  afd_floor;
};

/* The locked section: no helper calls, no map lookups (verifier rule for
 * bpf_spin_lock). Returns enum afcd_verdict; t_dep in *t_dep_ns. */
AFCD_INLINE __u32 afcd_decide_locked(struct afcd_queue *q, struct afcd_flow *f,
				     const struct afcd_in *in, __u64 *t_dep_ns,
				     __u8 *ce_thr_mark)
{
	struct afcd_codel_vars *cv;
	struct afcd_edt e;
	__u64 maxpacket_tx;
	__u32 verdict = AFCD_V_PASS;
	int drop = 0;

	if (in->len > q->maxpacket_bytes)
		q->maxpacket_bytes = in->len;
	afcd_edt_schedule(in->now_ns, q->t_last_ns, in->tx_ns, &e);
	*t_dep_ns = e.t_dep_ns;

	if (in->ip && e.sojourn_ns > in->horizon_ns) {
		verdict = AFCD_V_DROP_OVERLIMIT;
		goto account;
	}
	if (!in->aqm || !f)
		goto no_aqm;
	if (in->stale)
		q->stats[AFCD_S_STALE_FALLBACK]++;

	maxpacket_tx = afcd_tx_ns(q->maxpacket_bytes, in->rate_bps);
	if (e.backlog_ns == 0) /* arrival to an empty queue */
		afcd_codel_reset_empty(&q->gcv, &q->q_first_above_ns);
	if (afcd_time_after_eq(in->now_ns, f->t_last_ns)) /* flow has nothing queued */
		afcd_codel_reset_empty(&f->cv, &f->first_above_ns);

	switch (in->algo) {
	case AFCD_ALGO_CODEL: {
		int ok = afcd_codel_should_drop(&q->q_first_above_ns, e.t_dep_ns,
						e.sojourn_ns, e.backlog_ns,
						in->law_target_ns, in->interval_ns,
						maxpacket_tx);
		drop = afcd_codel_decide(&q->gcv, ok, e.t_dep_ns, in->interval_ns);
		break;
	}
	case AFCD_ALGO_AFD:
		drop = in->afd_drop;
		break;
	case AFCD_ALGO_AFCD:
	case AFCD_ALGO_FALL: {
		int gate1 = 1, ok;

		if (in->algo == AFCD_ALGO_FALL)
			gate1 = afcd_codel_should_drop(&q->q_first_above_ns, e.t_dep_ns,
						       e.sojourn_ns, e.backlog_ns,
						       in->law_target_ns, in->interval_ns,
						       maxpacket_tx);
		ok = afcd_codel_should_drop(&f->first_above_ns, e.t_dep_ns,
					    e.sojourn_ns, e.backlog_ns,
					    in->target_i_ns, in->interval_ns,
					    maxpacket_tx);
		cv = in->codel_global ? &q->gcv : &f->cv;
		drop = afcd_codel_decide(cv, ok && gate1, e.t_dep_ns, in->interval_ns);
		if (!drop && in->afd_floor && in->afd_drop) {
			drop = 1;  /* AFD floor: (1 - 1.25 m_fair/m_i)+ */
			q->stats[AFCD_S_AFD_FLOOR_DROP]++;
		}
		break;
	}
	default:
		break;
	}

	if (drop)
		verdict = (in->ecn_on && in->ect) ? AFCD_V_MARK : AFCD_V_DROP_AQM;
no_aqm:
	if (verdict == AFCD_V_PASS && in->ce_threshold_ns && in->ect &&
	    e.sojourn_ns > in->ce_threshold_ns)
		*ce_thr_mark = 1;

account:
	if (verdict == AFCD_V_PASS || verdict == AFCD_V_MARK) {
		q->t_last_ns = e.t_dep_ns;
		q->last_sojourn_ns = e.sojourn_ns;
		if (e.sojourn_ns > q->max_sojourn_ns)
			q->max_sojourn_ns = e.sojourn_ns;
		q->stats[AFCD_S_PASSED]++;
		q->stats[AFCD_S_PASSED_BYTES] += in->len;
		q->sojourn_sum_ns += e.sojourn_ns;
		if (verdict == AFCD_V_MARK)
			q->stats[AFCD_S_ECN_MARK]++;
		if (*ce_thr_mark)
			q->stats[AFCD_S_CE_THRESHOLD_MARK]++;
		if (f) {
			f->t_last_ns = e.t_dep_ns;
			f->bytes += in->len;
			f->packets++;
			if (verdict == AFCD_V_MARK || *ce_thr_mark)
				f->marks++;
		}
	} else {
		q->stats[verdict == AFCD_V_DROP_AQM ? AFCD_S_AQM_DROP : AFCD_S_OVERLIMIT_DROP]++;
		if (f)
			f->drops++;
	}
	if (f) {
		f->last_seen_ns = in->now_ns;
		f->last_sojourn_ns = e.sojourn_ns;
		f->target_ns = in->target_i_ns;
		f->last_verdict = verdict;
	}
	return verdict;
}

SEC("tc")
int afcd_egress(struct __sk_buff *skb)
{
	struct afcd_config *cfg;
	struct afcd_queue *q;
	struct afcd_flow *f = 0;
	struct afcd_in in = {};
	struct afcd_pkt pkt;
	__u32 ifindex = afcd_ctx_u32(skb, offsetof(struct __sk_buff, ifindex));
	__u32 skb_len = afcd_ctx_u32(skb, offsetof(struct __sk_buff, len));
	__u32 wire_len = afcd_ctx_u32(skb, offsetof(struct __sk_buff, wire_len));
	__u32 verdict, sb_size, slot, lin;
	__u64 t_dep = 0;
	__u8 ce_thr_mark = 0;
	void *data, *data_end;
	int st;

	cfg = bpf_map_lookup_elem(&afcd_cfg, &ifindex);
	if (!cfg || cfg->abi != AFCD_ABI_VERSION || !cfg->rate_bps ||
	    cfg->algo >= AFCD_ALGO__MAX) {
		afcd_gstat_inc(AFCD_G_UNCONFIGURED);
		return TC_ACT_OK;
	}
	slot = cfg->slot;
	q = bpf_map_lookup_elem(&afcd_queue, &slot);  /* array: inlined */
	if (!q || q->ifindex != ifindex) {
		afcd_gstat_inc(AFCD_G_BAD_SLOT);
		return TC_ACT_OK;
	}

	in.now_ns = afcd_now();
	in.len = wire_len ? wire_len : skb_len;
	in.rate_bps = cfg->rate_bps;
	in.tx_ns = afcd_tx_ns(in.len, in.rate_bps);
	in.horizon_ns = cfg->horizon_ns;
	in.interval_ns = cfg->interval_ns;
	in.algo = cfg->algo;
	in.ecn_on = !!(cfg->flags & AFCD_F_ECN);
	in.codel_global = !!(cfg->flags & AFCD_F_CODEL_GLOBAL);
	in.afd_floor = !!(cfg->flags & AFCD_F_AFD_FLOOR);
	in.ce_threshold_ns = cfg->ce_threshold_ns;
	in.law_target_ns = cfg->target_ns;
	in.target_i_ns = AFCD_TARGET_INF;
	sb_size = cfg->sb_size;

	/* Headers beyond the linear area: pull once (bounded), then parse. */
	lin = afcd_ctx_u32(skb, offsetof(struct __sk_buff, data_end)) -
	      afcd_ctx_u32(skb, offsetof(struct __sk_buff, data));
	if (lin < AFCD_PULL_LEN && skb_len > lin)
		bpf_skb_pull_data(skb, skb_len < AFCD_PULL_LEN ? skb_len : AFCD_PULL_LEN);
	data = afcd_ctx_ptr(skb, offsetof(struct __sk_buff, data));
	data_end = afcd_ctx_ptr(skb, offsetof(struct __sk_buff, data_end));
	st = afcd_parse(data, data_end, &pkt);

	if (st == AFCD_P_IP) {
		in.ip = 1;
		in.ect = pkt.ecn == 1 || pkt.ecn == 2;
		pkt.key.ifindex = ifindex;
		f = afcd_flow_get(q, &pkt.key);
		if (afcd_sample_hit(afcd_rand(), in.len, cfg->sample_bytes))
			afcd_sb_sample(q, slot, sb_size, &pkt.key, f);
	}

	if (f && in.algo != AFCD_ALGO_DROPTAIL) {
		__u32 m_i = f->m_i, m_fair = 0;
		__u64 gt = 0;

		in.aqm = 1;
		if (in.algo != AFCD_ALGO_CODEL) {
			struct afcd_est *est = bpf_map_lookup_elem(&afcd_est, &slot);

			if (m_i > sb_size)
				m_i = sb_size;
			if (est && (__s64)(in.now_ns - est->heartbeat_ns) <= (__s64)cfg->stale_after_ns &&
			    est->m_fair) {
				m_fair = est->m_fair;
				gt = est->global_target_ns;
			} else {
				__s32 n = q->n_active;

				/* no fresh estimate: the datapath's own (sec. 3) */
				m_fair = afcd_m_fair_fallback(sb_size, n);
				if (in.algo == AFCD_ALGO_FALL)
					gt = afcd_fall_global_target_ns(cfg->rtt_ns, n,
						2 * afcd_tx_ns(cfg->mtu_bytes, in.rate_bps),
						in.interval_ns);
				in.stale = 1;
			}
			if (in.algo == AFCD_ALGO_AFD)
				in.afd_drop = (afcd_rand() & 0xffff) < afcd_afd_drop_q16(m_fair, m_i);
			else if (in.afd_floor && m_i > m_fair)
				in.afd_drop = (afcd_rand() & 0xffff) <
					afcd_afd_floor_q16(m_fair, m_i, AFCD_AFD_FLOOR_SLACK_Q16);
			if (in.algo != AFCD_ALGO_AFD) {
				if (in.algo == AFCD_ALGO_FALL)
					in.law_target_ns = gt;
				in.target_i_ns = afcd_target_i_ns(in.law_target_ns, m_fair, m_i,
								  cfg->exponent, in.horizon_ns);
			}
		}
	}
	/* IP without flow state (insert failed): EDT and horizon only. */

	bpf_spin_lock(&q->lock);
	if (st == AFCD_P_NON_IP)
		q->stats[AFCD_S_NON_IP]++;
	else if (st == AFCD_P_MALFORMED)
		q->stats[AFCD_S_PARSE_ERR]++;
	if (pkt.fragment)
		q->stats[AFCD_S_FRAGMENT]++;
	verdict = afcd_decide_locked(q, f, &in, &t_dep, &ce_thr_mark);
	bpf_spin_unlock(&q->lock);

	if (verdict == AFCD_V_DROP_AQM || verdict == AFCD_V_DROP_OVERLIMIT)
		return TC_ACT_SHOT;
	skb->tstamp = t_dep;
	if (verdict == AFCD_V_MARK || ce_thr_mark)
		afcd_set_ce(skb, pkt.l3_off, pkt.family);
	return TC_ACT_OK;
}
