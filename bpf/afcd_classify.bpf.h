/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_classify.bpf.h - the per-packet part of the fairness module, for
 * both backends (afcd.bpf.c, the EDT classifier; afcd_qdisc.bpf.c, the
 * qdisc): a packet's flow (its own entry in afcd_flows, or the aggregate
 * it belongs to: afcd_maps.h, Aggregates), its sample in the shadow buffer
 * (AFD, Pan et al.; dissertation Algorithm 1), and the estimate and
 * inputs it is judged with (afcd_decide.h). BPF side only: map lookups
 * and helpers around the pure headers.
 */
#ifndef AFCD_CLASSIFY_BPF_H
#define AFCD_CLASSIFY_BPF_H

#include "afcd_maps.bpf.h"
#include "afcd_decide.h"
#include "afcd_parse.h"

#define AFCD_EEXIST 17

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

/* Create flow key's entry under id, with its key and its generator
 * seeded: 0 created, 1 there already (another CPU made it, or a colliding
 * flow), -1 the insert failed (counted), -2 a NULL q or key. A global
 * function: the entry's initial value is on its own frame, not the
 * program's. */
__attribute__((noinline)) int afcd_flow_create(struct afcd_queue *q,
					       const struct afcd_flow_key *key, __u64 id)
{
	struct afcd_flow init = {};
	long err;

	if (!q || !key)
		return -2;
	init.key = *key;
	init.rng = (__u64)afcd_rand() << 32 | afcd_rand();
	err = bpf_map_update_elem(&afcd_flows, &id, &init, BPF_NOEXIST);
	if (err == -AFCD_EEXIST)
		return 1;
	if (err) {
		__sync_fetch_and_add(&q->astats[AFCD_A_FLOW_FAIL], 1);
		return -1;
	}
	return 0;
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
	__u32 *cnt;
	int made;

	if (f)
		return afcd_flow_own(q, f, key);
	made = afcd_flow_create(q, key, id);
	if (made < 0)
		return 0;
	/* there already: another CPU created it (or a colliding flow did) */
	f = afcd_flow_own(q, bpf_map_lookup_elem(&afcd_flows, &id), key);
	if (made == 0 && f) {
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
 * histogram of counts (afcd_sb_hist) every transition. The sample is f's
 * key (f->key: its own entry's, or its aggregate's), weight bytes of its
 * traffic. Returns 0, or 1 (nothing done) for a NULL q or f, an sb_size
 * out of 1..AFCD_SB_SIZE_MAX or a missing ring. A global function,
 * verified once on its own, with its own frame. */
__attribute__((noinline)) int afcd_sb_sample(struct afcd_queue *q, __u32 slot, __u32 sb_size,
					     struct afcd_flow *f, __u64 weight)
{
	struct afcd_flow_key key;
	struct afcd_flow_key old;
	struct afcd_sb_ring *ring;
	struct afcd_sb_hist *h;
	struct afcd_flow *fo;
	__u32 pos, one = 1, *cnt, c;
	__u64 old_id;
	long err;

	if (!q || !f || sb_size == 0 || sb_size > AFCD_SB_SIZE_MAX)
		return 1;
	/* on the stack: Linux 6.1 takes no map key from f's memory */
	key = f->key;
	ring = bpf_map_lookup_elem(&afcd_sb_ring, &slot);
	h = bpf_map_lookup_elem(&afcd_sb_hist, &slot);
	if (!ring)
		return 1;
	pos = __sync_fetch_and_add(&q->sb_head, 1) % sb_size;
	asm volatile("" : "+r"(pos)); /* keep the bound below visible to the verifier */
	pos &= AFCD_SB_SIZE_MAX - 1;  /* no-op: pos < sb_size <= AFCD_SB_SIZE_MAX */
	old = ring->slot[pos];
	ring->slot[pos] = key;
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

	cnt = bpf_map_lookup_elem(&afcd_sb_count, &key);
	if (cnt) {
		c = __sync_fetch_and_add(cnt, 1);
		afcd_hist_move(h, c, c + 1);
	} else {
		err = bpf_map_update_elem(&afcd_sb_count, &key, &one, BPF_NOEXIST);
		if (!err) {
			__sync_fetch_and_add(&q->n_active, 1);
			afcd_hist_move(h, 0, 1);
		} else {
			cnt = bpf_map_lookup_elem(&afcd_sb_count, &key);
			if (cnt) {
				c = __sync_fetch_and_add(cnt, 1);
				afcd_hist_move(h, c, c + 1);
			} else {
				__sync_fetch_and_add(&q->astats[AFCD_A_SB_FAIL], 1);
			}
		}
	}
	__sync_fetch_and_add(&f->m_i, 1);
	return 0;
}

/* The flow a packet is judged as, st and pkt being the parser's result:
 * an IP packet's own entry (its key reduced by isolate), else the
 * overflow aggregate; any other frame the unclassified aggregate. Counts
 * fragments, non-IP and unparsable frames, sets in->ect, and takes the
 * packet's sample with probability in->len / sample_bytes (the flow's own
 * generator). NULL only when the aggregate cannot be had. */
AFCD_INLINE struct afcd_flow *afcd_flow_of(const struct afcd_config *cfg, struct afcd_queue *q,
					   __u32 slot, __u32 ifindex, int st, struct afcd_pkt *pkt,
					   struct afcd_in *in)
{
	struct afcd_flow *f;

	if (st == AFCD_P_IP) {
		in->ect = pkt->ecn == 1 || pkt->ecn == 2;
		pkt->key.ifindex = ifindex;
		afcd_isolate_key(cfg->flags, &pkt->key);
		f = afcd_flow_get(q, &pkt->key);
		if (!f)
			f = afcd_agg_get(q, AFCD_AGG_OVERFLOW, ifindex, &pkt->key);
		if (pkt->fragment)
			__sync_fetch_and_add(&q->stats[AFCD_S_FRAGMENT], 1);
	} else {
		__sync_fetch_and_add(&q->stats[st == AFCD_P_NON_IP ? AFCD_S_NON_IP :
					       AFCD_S_PARSE_ERR], 1);
		f = afcd_agg_get(q, AFCD_AGG_UNCLASSIFIED, ifindex, &pkt->key);
	}
	if (f && afcd_sample_hit(afcd_rng_next(&f->rng), in->len, cfg->sample_bytes))
		afcd_sb_sample(q, slot, cfg->sb_size, f,
			       in->len > cfg->sample_bytes ? in->len : cfg->sample_bytes);
	return f;
}

/* The inputs of flow f's packet in: the estimate it is judged against
 * now (afcd_fair_now(): the refresh step's while fresh, else the
 * datapath's fallback), then target_i, the policer and the AFD coin from
 * f's share (afcd_inputs()). Returns 0, or 1 (nothing done) when an
 * argument is NULL. A global function, verified once on its own, whose
 * frame is not the program's: the program's and afcd_decide()'s together
 * stay within the 512 bytes of stack Linux 6.1 allows a call chain. */
__attribute__((noinline)) int afcd_judge_inputs(const struct afcd_config *cfg,
						struct afcd_queue *q, __u32 slot,
						struct afcd_flow *f, struct afcd_in *in)
{
	struct afcd_fair fs = {};

	if (!cfg || !q || !f || !in)
		return 1;
	if (in->traits & AFCD_T_FAIR) {
		struct afcd_sb_hist *h = bpf_map_lookup_elem(&afcd_sb_hist, &slot);

		afcd_fair_now(cfg, bpf_map_lookup_elem(&afcd_est, &slot), afcd_rate_of(cfg, q),
			      q->n_active,
			      h ? *(volatile __u32 *)&h->n[1] : 0, in->now_ns, &q->fb_gt, &fs);
	}
	afcd_inputs(cfg, &fs, f->m_i, in->law == AFCD_LAW_AFD ? afcd_rng_next(&f->rng) & 0xffff : 0,
		    in);
	return 0;
}

#endif /* AFCD_CLASSIFY_BPF_H */
