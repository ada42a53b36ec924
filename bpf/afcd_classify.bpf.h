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

/* Create flow key's entry under id, with its key, its birth stamp born
 * (afcd_flow.born) and its generator seeded: 0 created, 1 there already
 * (another CPU made it, or a colliding flow), -1 the insert failed
 * (counted), -2 a NULL q or key. A global function: the entry's initial
 * value is on its own frame, not the program's. */
__attribute__((noinline)) int afcd_flow_create(struct afcd_queue *q,
					       const struct afcd_flow_key *key, __u64 id,
					       __u32 born)
{
	struct afcd_flow init = {};
	long err;

	if (!q || !key)
		return -2;
	init.key = *key;
	init.rng = (__u64)afcd_rand() << 32 | afcd_rand();
	init.born = born;
	err = bpf_map_update_elem(&afcd_flows, &id, &init, BPF_NOEXIST);
	if (err == -AFCD_EEXIST)
		return 1;
	if (err) {
		__sync_fetch_and_add(&q->astats[AFCD_A_FLOW_FAIL], 1);
		return -1;
	}
	return 0;
}

/* The flow memory's slot of flow id id (struct afcd_seen: the id's low
 * bits index it); NULL only if the array lookup fails. */
AFCD_INLINE struct afcd_seen *afcd_seen_of(__u64 id)
{
	__u32 idx = (__u32)id & (AFCD_SEEN_SLOTS - 1);

	return bpf_map_lookup_elem(&afcd_seen, &idx);
}

/* A new entry f of flow id id on queue q takes its m_i from the shadow
 * buffer's count of that id (0 if it has none). Returns 0, or 1 for a
 * NULL q or f. A global function: the count's key is on its own frame,
 * not the program's. */
__attribute__((noinline)) int afcd_flow_count_in(struct afcd_queue *q, struct afcd_flow *f,
						 __u64 id)
{
	struct afcd_sb_key ck = {};
	__u32 *cnt;

	if (!q || !f)
		return 1;
	ck.sid = id;
	ck.slot = q->slot;
	cnt = bpf_map_lookup_elem(&afcd_sb_count, &ck);
	if (cnt)
		f->m_i = *cnt;
	return 0;
}

/* Per-flow state, created when the flow has no entry (a first sight, or
 * the LRU evicted it) with m_i taken from the shadow buffer's count (with
 * two samples or more it is no mouse, afcd_is_mouse()), its key, its birth
 * stamp (its first sight while the flow memory remembers it:
 * afcd_seen_born(); window_ns, ns) and its generator set; *id: its flow
 * id, which is also its sample id (afcd_sample_id()). NULL: no entry of
 * its own for this packet (the insert failed, its id is another flow's, or
 * it is one of the aggregates' sample ids, 0..AFCD_AGG__MAX, with
 * probability 2^-62 under a key nobody knows): the caller puts it in the
 * overflow aggregate. */
AFCD_INLINE struct afcd_flow *afcd_flow_get(struct afcd_queue *q, struct afcd_flow_key *key,
					    __u64 now_ns, __u64 window_ns, __u64 *id)
{
	struct afcd_flow *f;
	int made;

	*id = afcd_flow_id(key, q->flow_id_key);
	if (*id <= AFCD_AGG__MAX) {
		__sync_fetch_and_add(&q->astats[AFCD_A_FLOW_COLLIDE], 1);
		return 0;
	}
	f = bpf_map_lookup_elem(&afcd_flows, id);
	if (f)
		return afcd_flow_own(q, f, key);
	made = afcd_flow_create(q, key, *id, afcd_seen_born(afcd_seen_of(*id), afcd_seen_tag(*id),
							    now_ns, window_ns));
	if (made < 0)
		return 0;
	/* there already: another CPU created it (or a colliding flow did) */
	f = afcd_flow_own(q, bpf_map_lookup_elem(&afcd_flows, id), key);
	if (made == 0 && f) {
		__sync_fetch_and_add(&q->astats[AFCD_A_FLOW_NEW], 1);
		afcd_flow_count_in(q, f, *id);
	}
	return f;
}

/* The state of aggregate kind (enum afcd_agg) of the interface, which
 * every CPU shares; its key (the key its samples take in the shadow
 * buffer: ifindex and agg = 1 + kind, every other field 0, as the
 * configuring tool zeroed the slot) and its generator are set at its
 * first packet, the generator seeded so that nobody can predict its
 * sampling coins. NULL for a bad kind. */
AFCD_INLINE struct afcd_flow *afcd_agg_get(struct afcd_queue *q, __u32 kind, __u32 ifindex)
{
	struct afcd_flow *f;

	if (kind >= AFCD_AGG__MAX)
		return 0;
	f = &q->agg[kind];
	if (!f->rng) {
		/* every CPU that gets here writes the same key */
		f->key.ifindex = ifindex;
		f->key.agg = (__u8)(kind + 1);
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

/* k samples of the entity of sample id sid (afcd_sample_id()) leave
 * its count in queue q's shadow buffer: its entry in afcd_sb_count
 * (deleted at 0, N then one less), the histogram and the m_i of its state
 * (its aggregate's, or its own entry: the entry under that flow id, if it
 * is this interface's), each in one step whatever k. */
AFCD_INLINE void afcd_sb_evict(struct afcd_queue *q, struct afcd_sb_hist *h, __u64 sid,
			       __u32 k)
{
	struct afcd_sb_key ck = { .sid = sid, .slot = q->slot };
	struct afcd_flow *fo = 0;
	__u32 *cnt, c, m;

	cnt = bpf_map_lookup_elem(&afcd_sb_count, &ck);
	if (cnt) {
		c = __sync_fetch_and_add(cnt, -k);
		afcd_hist_move(h, c, c > k ? c - k : 0);
		if (c <= k) {
			bpf_map_delete_elem(&afcd_sb_count, &ck);
			__sync_fetch_and_add(&q->n_active, -1);
		}
	}
	if (sid <= AFCD_AGG__MAX) {
		__u32 ai = (__u32)sid - 1u;

		/* the bound on the index itself, after the barrier: clang
		 * would compute the address before a test of sid */
		asm volatile("" : "+r"(ai));
		if (ai < AFCD_AGG__MAX)
			fo = &q->agg[ai];
	} else {
		fo = bpf_map_lookup_elem(&afcd_flows, &ck.sid);
		if (fo && fo->key.ifindex != q->ifindex)
			fo = 0;
	}
	if (fo) {
		m = AFCD_READ_ONCE(fo->m_i);
		if (m)
			__sync_fetch_and_add(&fo->m_i, -(m < k ? m : k));
	}
}

/* The walk of afcd_sb_sample() over the k slots it writes, in ring
 * order: the slots' previous occupants leave in runs (consecutive slots of
 * one entity, as an aggregate's samples lie), one afcd_sb_evict() per run,
 * of the run's sample id. */
struct afcd_sb_walk {
	__u64 sid;                 /* the sample id of the entity sampled */
	__u32 slot;                /* the interface's slot (ring, histogram) */
	__u32 pos;                 /* the next slot of the ring, < sb_size */
	__u32 sb_size;
	__u32 left;                /* slots left to write, the next one included */
	__u32 run_n;               /* slots of the current run seen; 0: none */
	__u32 pad;
};

/* One slot of the walk w on queue q: its occupant joins the current run;
 * the run leaves when the next slot holds another entity or this is the
 * walk's last slot; then the slot takes w->sid. Returns 0, or 1 for a
 * NULL argument or a missing ring. A global function, verified once on its
 * own: the loop that calls it (bpf_loop()) then has no state of its own to
 * verify. */
__attribute__((noinline)) int afcd_sb_step(struct afcd_queue *q, struct afcd_sb_walk *w)
{
	struct afcd_sb_ring *ring;
	__u32 pos, npos, slot;
	__u64 cur, *at;

	if (!q || !w)
		return 1;
	slot = w->slot;
	ring = bpf_map_lookup_elem(&afcd_sb_ring, &slot);
	if (!ring)
		return 1;
	pos = w->pos;
	npos = pos + 1 >= w->sb_size ? 0 : pos + 1;
	asm volatile("" : "+r"(pos), "+r"(npos)); /* keep the bounds below visible */
	pos &= AFCD_SB_SIZE_MAX - 1;  /* no-ops: both < sb_size <= AFCD_SB_SIZE_MAX */
	npos &= AFCD_SB_SIZE_MAX - 1;
	at = &ring->slot[pos];
	cur = *at;
	if (cur)
		w->run_n++;
	if (w->run_n && (w->left <= 1 || cur != ring->slot[npos])) {
		afcd_sb_evict(q, bpf_map_lookup_elem(&afcd_sb_hist, &slot), cur, w->run_n);
		w->run_n = 0;
	}
	*at = w->sid;
	w->pos = npos;
	if (w->left)
		w->left--;
	return 0;
}

/* What the bpf_loop() callback of afcd_sb_sample() needs. */
struct afcd_sb_walk_ctx {
	struct afcd_queue *q;
	struct afcd_sb_walk w;
};

static long afcd_sb_walk_cb(__u32 i, void *ctx)
{
	struct afcd_sb_walk_ctx *c = ctx;

	return afcd_sb_step(c->q, &c->w) ? 1 : 0;   /* 1 stops the loop */
}

/* Write k samples of f, of sample id sid (afcd_sample_id() of its key
 * and flow id), into queue q's shadow buffer (AFD, Pan et al.;
 * dissertation Algorithm 1 enqueue), k consecutive slots claimed at once:
 * each slot's previous entity loses a sample (afcd_sb_evict(), a run at a
 * time: afcd_sb_step()), f gains k; N (q->n_active) follows the 0 <-> 1
 * transitions and the histogram of counts (afcd_sb_hist) every
 * transition. Each sample stands for cfg->sample_bytes of f's traffic
 * (AFCD_A_SAMPLED_BYTES). k: 1..cfg->sb_size (afcd_sample_count(); a
 * packet of several sample_bytes, a GSO/GRO aggregate, takes several).
 * Returns 0, or 1 (nothing done) for a NULL cfg, q or f, sid 0, k 0 or
 * above sb_size, an sb_size out of 1..AFCD_SB_SIZE_MAX or a missing ring.
 * A global function, verified once on its own, with its own frame. */
__attribute__((noinline)) int afcd_sb_sample(const struct afcd_config *cfg,
					     struct afcd_queue *q, struct afcd_flow *f, __u64 sid,
					     __u32 k)
{
	struct afcd_sb_walk_ctx c = {};
	struct afcd_sb_key ck = {};
	struct afcd_sb_hist *h;
	__u32 *cnt, v, sb_size;
	long err;

	if (!cfg || !q || !f || !sid)
		return 1;
	sb_size = cfg->sb_size;
	if (sb_size == 0 || sb_size > AFCD_SB_SIZE_MAX || k == 0 || k > sb_size)
		return 1;
	ck.sid = sid;
	ck.slot = q->slot;
	h = bpf_map_lookup_elem(&afcd_sb_hist, &ck.slot);
	c.q = q;
	c.w.sid = sid;
	c.w.slot = ck.slot;
	c.w.sb_size = sb_size;
	c.w.left = k;
	c.w.pos = __sync_fetch_and_add(&q->sb_head, k) % sb_size;
	bpf_loop(k, afcd_sb_walk_cb, &c, 0);
	__sync_fetch_and_add(&q->astats[AFCD_A_SAMPLED], k);
	__sync_fetch_and_add(&q->astats[AFCD_A_SAMPLED_BYTES], (__u64)k * cfg->sample_bytes);

	cnt = bpf_map_lookup_elem(&afcd_sb_count, &ck);
	if (cnt) {
		v = __sync_fetch_and_add(cnt, k);
		afcd_hist_move(h, v, v + k);
	} else {
		err = bpf_map_update_elem(&afcd_sb_count, &ck, &k, BPF_NOEXIST);
		if (!err) {
			__sync_fetch_and_add(&q->n_active, 1);
			afcd_hist_move(h, 0, k);
		} else {
			cnt = bpf_map_lookup_elem(&afcd_sb_count, &ck);
			if (cnt) {
				v = __sync_fetch_and_add(cnt, k);
				afcd_hist_move(h, v, v + k);
			} else {
				__sync_fetch_and_add(&q->astats[AFCD_A_SB_FAIL], 1);
			}
		}
	}
	__sync_fetch_and_add(&f->m_i, k);
	return 0;
}

/* The flow a packet is judged as, st and pkt being the parser's result:
 * an IP packet's own entry (its key reduced by isolate), else the
 * overflow aggregate; any other frame the unclassified aggregate (whose
 * key then replaces pkt->key). Counts
 * fragments, non-IP and unparsable frames, sets in->ect, and takes the
 * packet's samples, in->len / sample_bytes of them in expectation
 * (afcd_sample_count(), the flow's own generator): a GSO/GRO aggregate
 * weighs its wire bytes. A mouse's samples go to the mice aggregate
 * (afcd_is_mouse(), docs/ALGORITHM.md sec. 3a), everyone else's to
 * itself; a flow's own samples are marked in the flow memory
 * (afcd_seen_own()). NULL only when the aggregate cannot be had. */
AFCD_INLINE struct afcd_flow *afcd_flow_of(const struct afcd_config *cfg, struct afcd_queue *q,
					   __u32 ifindex, int st, struct afcd_pkt *pkt,
					   struct afcd_in *in)
{
	struct afcd_flow *f;
	__u64 id = 0;
	int own = 0;       /* f is the packet's own entry, of flow id id */

	if (st == AFCD_P_IP) {
		in->ect = pkt->ecn == 1 || pkt->ecn == 2;
		pkt->key.ifindex = ifindex;
		afcd_isolate_key(cfg->flags, &pkt->key);
		f = afcd_flow_get(q, &pkt->key, in->now_ns, cfg->window_ns, &id);
		own = !!f;
		if (!f && (f = afcd_agg_get(q, AFCD_AGG_OVERFLOW, ifindex)))
			pkt->key = f->key;
		if (pkt->fragment)
			AFCD_COUNT(q, stats[AFCD_S_FRAGMENT], 1);
	} else {
		AFCD_COUNT(q, stats[st == AFCD_P_NON_IP ? AFCD_S_NON_IP : AFCD_S_PARSE_ERR], 1);
		f = afcd_agg_get(q, AFCD_AGG_UNCLASSIFIED, ifindex);
		if (f)
			pkt->key = f->key;
	}
	if (f) {
		__u32 k = afcd_sample_count(afcd_rng_next(&f->rng), in->len, cfg->sample_bytes,
					    cfg->sb_size);
		struct afcd_flow *e;
		int mouse;

		if (!k)
			return f;
		mouse = afcd_is_mouse(f->m_i, f->bytes, cfg->sample_bytes, f->born, in->now_ns,
				      cfg->window_ns);
		e = mouse ? afcd_agg_get(q, AFCD_AGG_MICE, ifindex) : f;
		if (e)
			afcd_sb_sample(cfg, q, e, afcd_sample_id(&e->key, id), k);
		if (own && !mouse)
			afcd_seen_own(afcd_seen_of(id), afcd_seen_tag(id));
	}
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
	if (in->traits & AFCD_T_FAIR)
		afcd_fair_now(cfg, bpf_map_lookup_elem(&afcd_est, &slot), afcd_rate_of(cfg, q),
			      q->n_active, AFCD_READ_ONCE(q->agg[AFCD_AGG_MICE].m_i), in->now_ns,
			      &q->fb_gt, &fs);
	afcd_inputs(cfg, &fs, f->m_i,
		    afcd_is_mouse(f->m_i, f->bytes, cfg->sample_bytes, f->born, in->now_ns,
				  cfg->window_ns),
		    afcd_opening(f->bytes, cfg->mtu_bytes),
		    in->law == AFCD_LAW_AFD ? afcd_rng_next(&f->rng) & 0xffff : 0, in);
	return 0;
}

#endif /* AFCD_CLASSIFY_BPF_H */
