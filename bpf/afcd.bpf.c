// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * afcd.bpf.c - AFCD and FaLL as a tc-bpf egress classifier (clsact,
 * direct-action) over an EDT virtual queue.
 *
 * Per packet (ALGORITHM.md sec. 2-6):
 *   1. the interface's slot and config (afcd_cfg_of(): array lookups
 *      only); unconfigured: pass untouched;
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
#define AFCD_DECIDE_FN __attribute__((noinline)) __u32
#include "afcd_decide.h"
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
__u8 afcd_test_tstamp_type = 0;   /* BPF_PROG_TEST_RUN takes no ctx tstamp_type */

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

AFCD_INLINE void afcd_gstat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&afcd_global, &idx);

	if (v)
		*v += 1;
}

/* f if it is key's entry, else NULL: an entry of another flow under the
 * same id (a collision) is counted and left alone, never shared. */
AFCD_INLINE struct afcd_flow *afcd_flow_own(struct afcd_queue *q, struct afcd_flow *f,
					    const struct afcd_flow_key *key)
{
	if (f && !afcd_flow_key_eq(&f->key, key)) {
		__sync_fetch_and_add(&q->astats[AFCD_A_FLOW_COLLIDE], 1);
		return 0;
	}
	return f;
}

/* Per-flow state, created on first sight with m_i taken from the shadow
 * buffer's count (the flow may have been evicted and come back), its key
 * and its generator seeded. NULL: no entry of its own for this packet
 * (the insert failed, or its id is another flow's): the caller puts it
 * in the overflow aggregate. */
AFCD_INLINE struct afcd_flow *afcd_flow_get(struct afcd_queue *q, struct afcd_flow_key *key)
{
	__u64 id = afcd_flow_id(key, q->flow_id_key);
	struct afcd_flow *f = bpf_map_lookup_elem(&afcd_flows, &id);
	struct afcd_flow init = {};
	__u32 *cnt;
	long err;

	if (f)
		return afcd_flow_own(q, f, key);
	init.key = *key;
	init.rng = (__u64)afcd_rand() << 32 | afcd_rand();
	err = bpf_map_update_elem(&afcd_flows, &id, &init, BPF_NOEXIST);
	if (err && err != -AFCD_EEXIST) {
		__sync_fetch_and_add(&q->astats[AFCD_A_FLOW_FAIL], 1);
		return 0;
	}
	/* EEXIST: another CPU created it (or a colliding flow did) */
	f = afcd_flow_own(q, bpf_map_lookup_elem(&afcd_flows, &id), key);
	if (!err && f) {
		__sync_fetch_and_add(&q->astats[AFCD_A_FLOW_NEW], 1);
		cnt = bpf_map_lookup_elem(&afcd_sb_count, key);
		if (cnt)
			f->m_i = *cnt;
	}
	return f;
}

/* The state of aggregate kind (enum afcd_agg) of the interface, which
 * every CPU shares, with its key written into *key (the key its samples
 * take in the shadow buffer). Its generator is seeded at its first packet,
 * so that nobody can predict its sampling coins. NULL for a bad kind. */
AFCD_INLINE struct afcd_flow *afcd_agg_get(struct afcd_queue *q, __u32 kind, __u32 ifindex,
					   struct afcd_flow_key *key)
{
	struct afcd_flow *f;

	if (kind >= AFCD_AGG__MAX)
		return 0;
	f = &q->agg[kind];
	__builtin_memset(key, 0, sizeof(*key));
	key->ifindex = ifindex;
	key->agg = (__u8)(kind + 1);
	if (!f->rng) {
		f->key = *key;
		f->rng = (__u64)afcd_rand() << 32 | afcd_rand();
	}
	return f;
}

/* n[c] += d in the interface's histogram, for 1 <= c <= AFCD_SB_SIZE_MAX. */
AFCD_INLINE void afcd_hist_add(struct afcd_sb_hist *h, __u32 c, int d)
{
	if (!c)
		return;
	/* a bound on c itself, after the barrier: clang would merge the two
	 * tests into one range check on c - 1, which Linux 6.1's verifier
	 * does not carry over to c */
	asm volatile("" : "+r"(c));
	if (c > AFCD_SB_SIZE_MAX)
		return;
	__sync_fetch_and_add(&h->n[c], d);
}

/* A flow's count moved from c to c_new (0 = no entry): the histogram
 * follows every change exactly because each change returns its old count. */
AFCD_INLINE void afcd_hist_move(struct afcd_sb_hist *h, __u32 c, __u32 c_new)
{
	if (!h)
		return;
	afcd_hist_add(h, c, -1);
	afcd_hist_add(h, c_new, 1);
}

/* Write one sample into the shadow buffer (AFD, Pan et al.; dissertation
 * Algorithm 1 enqueue): the slot's previous flow loses a sample, this
 * flow gains one; N (q->n_active) follows the 0 <-> 1 transitions and the
 * histogram of counts (afcd_sb_hist) every transition. */
AFCD_INLINE void afcd_sb_sample(struct afcd_queue *q, __u32 slot, __u32 sb_size,
				struct afcd_flow_key *key, struct afcd_flow *f, __u64 weight)
{
	struct afcd_flow_key old;
	struct afcd_sb_ring *ring;
	struct afcd_sb_hist *h;
	struct afcd_flow *fo;
	__u32 pos, one = 1, *cnt, c;
	__u64 old_id;
	long err;

	if (sb_size == 0 || sb_size > AFCD_SB_SIZE_MAX)
		return;
	ring = bpf_map_lookup_elem(&afcd_sb_ring, &slot);
	h = bpf_map_lookup_elem(&afcd_sb_hist, &slot);
	if (!ring)
		return;
	pos = __sync_fetch_and_add(&q->sb_head, 1) % sb_size;
	asm volatile("" : "+r"(pos)); /* keep the bound below visible to the verifier */
	pos &= AFCD_SB_SIZE_MAX - 1;  /* no-op: pos < sb_size <= AFCD_SB_SIZE_MAX */
	old = ring->slot[pos];
	ring->slot[pos] = *key;
	__sync_fetch_and_add(&q->astats[AFCD_A_SAMPLED], 1);
	__sync_fetch_and_add(&q->astats[AFCD_A_SAMPLED_BYTES], weight);

	if (old.ifindex) {
		cnt = bpf_map_lookup_elem(&afcd_sb_count, &old);
		if (cnt) {
			c = __sync_fetch_and_add(cnt, -1);
			afcd_hist_move(h, c, c - 1);
			if (c <= 1) {
				bpf_map_delete_elem(&afcd_sb_count, &old);
				__sync_fetch_and_add(&q->n_active, -1);
			}
		}
		if (old.agg) {
			__u32 ai = old.agg - 1u;

			/* the bound on the index itself, after the barrier: clang
			 * would compute the address before a test of old.agg */
			asm volatile("" : "+r"(ai));
			fo = 0;
			if (ai < AFCD_AGG__MAX)
				fo = &q->agg[ai];
		} else {
			old_id = afcd_flow_id(&old, q->flow_id_key);
			fo = bpf_map_lookup_elem(&afcd_flows, &old_id);
		}
		if (fo && fo->m_i && afcd_flow_key_eq(&fo->key, &old))
			__sync_fetch_and_add(&fo->m_i, -1);
	}

	cnt = bpf_map_lookup_elem(&afcd_sb_count, key);
	if (cnt) {
		c = __sync_fetch_and_add(cnt, 1);
		afcd_hist_move(h, c, c + 1);
	} else {
		err = bpf_map_update_elem(&afcd_sb_count, key, &one, BPF_NOEXIST);
		if (!err) {
			__sync_fetch_and_add(&q->n_active, 1);
			afcd_hist_move(h, 0, 1);
		} else {
			cnt = bpf_map_lookup_elem(&afcd_sb_count, key);
			if (cnt) {
				c = __sync_fetch_and_add(cnt, 1);
				afcd_hist_move(h, c, c + 1);
			} else {
				__sync_fetch_and_add(&q->astats[AFCD_A_SB_FAIL], 1);
			}
		}
	}
	if (f)
		__sync_fetch_and_add(&f->m_i, 1);
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
	__u64 t_dep = 0, sender_ts = 0;
	__u8 ce_thr_mark = 0;
	void *data, *data_end;
	int st;

	cfg = afcd_cfg_of(ifindex, &slot);
	if (!cfg || cfg->abi != AFCD_ABI_VERSION || !cfg->rate_bps ||
	    cfg->algo >= AFCD_ALGO__MAX) {
		afcd_gstat_inc(AFCD_G_UNCONFIGURED);
		return TC_ACT_OK;
	}
	q = bpf_map_lookup_elem(&afcd_queue, &slot);
	if (!q || q->ifindex != ifindex) {
		afcd_gstat_inc(AFCD_G_BAD_SLOT);
		return TC_ACT_OK;
	}

	afcd_in_init(cfg, afcd_now(), wire_len ? wire_len : skb_len, &in);
	if ((afcd_test_clock ? afcd_test_tstamp_type :
	     afcd_ctx_u8(skb, offsetof(struct __sk_buff, tstamp_type))) ==
	    BPF_SKB_TSTAMP_DELIVERY_MONO)
		sender_ts = afcd_ctx_u64(skb, offsetof(struct __sk_buff, tstamp));
	sb_size = cfg->sb_size;

	/* Headers beyond the linear area: pull once (bounded), then parse. */
	lin = afcd_ctx_u32(skb, offsetof(struct __sk_buff, data_end)) -
	      afcd_ctx_u32(skb, offsetof(struct __sk_buff, data));
	if (lin < AFCD_PULL_LEN && skb_len > lin)
		bpf_skb_pull_data(skb, skb_len < AFCD_PULL_LEN ? skb_len : AFCD_PULL_LEN);
	data = afcd_ctx_ptr(skb, offsetof(struct __sk_buff, data));
	data_end = afcd_ctx_ptr(skb, offsetof(struct __sk_buff, data_end));
	st = afcd_parse(data, data_end, &pkt);

	/* every packet is judged as a flow: its own, or the aggregate of the
	 * packets that cannot have one (afcd_maps.h, Aggregates) */
	if (st == AFCD_P_IP) {
		in.ect = pkt.ecn == 1 || pkt.ecn == 2;
		pkt.key.ifindex = ifindex;
		afcd_isolate_key(cfg->flags, &pkt.key);
		f = afcd_flow_get(q, &pkt.key);
		if (!f)
			f = afcd_agg_get(q, AFCD_AGG_OVERFLOW, ifindex, &pkt.key);
		if (pkt.fragment)
			__sync_fetch_and_add(&q->stats[AFCD_S_FRAGMENT], 1);
	} else {
		__sync_fetch_and_add(&q->stats[st == AFCD_P_NON_IP ? AFCD_S_NON_IP :
					       AFCD_S_PARSE_ERR], 1);
		f = afcd_agg_get(q, AFCD_AGG_UNCLASSIFIED, ifindex, &pkt.key);
	}
	if (f) {
		struct afcd_fair fs = {};

		if (afcd_sample_hit(afcd_rng_next(&f->rng), in.len, cfg->sample_bytes))
			afcd_sb_sample(q, slot, sb_size, &pkt.key, f,
				       in.len > cfg->sample_bytes ? in.len : cfg->sample_bytes);
		if (in.traits & AFCD_T_FAIR) {
			struct afcd_sb_hist *h = bpf_map_lookup_elem(&afcd_sb_hist, &slot);

			afcd_fair_now(cfg, bpf_map_lookup_elem(&afcd_est, &slot), q->n_active,
				      h ? *(volatile __u32 *)&h->n[1] : 0, in.now_ns, &q->fb_gt, &fs);
		}
		afcd_inputs(cfg, &fs, f->m_i,
			    in.law == AFCD_LAW_AFD ? afcd_rng_next(&f->rng) & 0xffff : 0, &in);
	}
	verdict = afcd_decide(q, f, &in, &t_dep, &ce_thr_mark);

	if (verdict != AFCD_V_PASS && verdict != AFCD_V_MARK)
		return TC_ACT_SHOT;
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
