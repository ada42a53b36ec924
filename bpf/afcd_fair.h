/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_fair.h - the fairness module's arithmetic (AFD; dissertation eq. 3.4-3.5,
 * 3.14, 4.5-4.6, 4.16; ALGORITHM.md sec. 3, 3a, 5): target_i, the sampling,
 * the fair share's estimators, FaLL's global target and the policer.
 * Pure arithmetic, as every header of afcd_law.h: compiled into the BPF
 * programs (always_inline) and into the host tests (tests/unit/test_law.c).
 */
#ifndef AFCD_FAIR_H
#define AFCD_FAIR_H

#include "afcd_arith.h"
#include "afcd_edt.h"


/* m_fair / m_i in Q31 for m_fair <= m_i (the only case the law powers:
 * below fair share a flow is never dropped), clamped to [1/64, 1]. */
#define AFCD_Q31_ONE        (1ULL << 31)
#define AFCD_RATIO_MIN_Q31  (AFCD_Q31_ONE / 64)
AFCD_INLINE __u64 afcd_ratio_q31(__u32 m_fair, __u32 m_i)
{
	__u64 r;

	if (m_i == 0 || m_fair >= m_i)
		return AFCD_Q31_ONE;
	r = ((__u64)m_fair << 31) / m_i;
	return r < AFCD_RATIO_MIN_Q31 ? AFCD_RATIO_MIN_Q31 : r;
}

/* r^k in Q31 for r in [1/64, 1] (Q31) and k in 1..4 (k outside is taken
 * as 3). Products stay below 2^62; the smallest result, 2^-24, is 128. */
AFCD_INLINE __u64 afcd_pow_q31(__u64 r, __u32 k)
{
	__u64 p = r;

	if (k < 1 || k > AFCD_EXPONENT_MAX)
		k = AFCD_DEF_EXPONENT;
	if (k >= 2)
		p = (p * r) >> 31;
	if (k >= 3)
		p = (p * r) >> 31;
	if (k >= 4)
		p = (p * r) >> 31;
	return p;
}

/* Per-flow target delay (eq. 3.14 / 4.16):
 *   target_i = target * (m_fair / m_i)^k, clamped to [0, horizon].
 * Flows below fair share are never AQM-dropped (sec. 3.3.3; reference
 * afcodel.h): AFCD_TARGET_INF for m_i < 7/8 m_fair, including unsampled
 * flows (m_i = 0). Within 1/8 below their share flows keep the plain
 * target: the shadow buffer's estimate moves by a few percent between
 * samples, and measured in the VM a hard cut at m_fair let two flows of
 * equal share take turns being exempt, resetting their CoDel windows, and
 * the queue settled well above target.
 * target_ns is capped at 2^34 ns; the ratio is taken in Q31 (<= 1,
 * clamped at 1/64) and the product split so that every partial product
 * fits in 64 bits. */
#define AFCD_FAIR_BAND_NUM 7   /* m_i >= 7/8 m_fair counts as at fair share */
#define AFCD_FAIR_BAND_DEN 8
AFCD_INLINE __u64 afcd_target_i_ns(__u64 target_ns, __u32 m_fair, __u32 m_i,
				   __u32 k, __u64 horizon_ns)
{
	__u64 rk, t;

	if (m_i == 0 || (__u64)m_i * AFCD_FAIR_BAND_DEN < (__u64)m_fair * AFCD_FAIR_BAND_NUM)
		return AFCD_TARGET_INF;
	if (target_ns > AFCD_TIME_MAX_NS)
		target_ns = AFCD_TIME_MAX_NS;
	rk = afcd_pow_q31(afcd_ratio_q31(m_fair, m_i), k);        /* <= 2^31 */
	t = (((target_ns >> 16) * rk) >> 15) +                    /* high part */
	    (((target_ns & 0xffff) * rk) >> 31);                  /* low part */
	return t > horizon_ns ? horizon_ns : t;
}

/* AFD drop probability (1 - m_fair/m_i)+ in Q16 (Pan et al., eq. 2). */
AFCD_INLINE __u32 afcd_afd_drop_q16(__u32 m_fair, __u32 m_i)
{
	__u64 r;

	if (m_i == 0 || m_i <= m_fair)
		return 0;
	r = ((__u64)m_fair << 16) / m_i; /* < 1.0 here */
	return (__u32)(AFCD_Q16_ONE - r);
}

/* The largest AFD drop probability at which an ECN-capable packet is
 * CE-marked instead (Q16, 10 %): PIE's mark_ecnth (RFC 8033 sec. 5.1),
 * the same bound for the same reason. AFD (Pan et al.) defines drops
 * only; an entity that ignores its marks keeps its m_i where AFD marked
 * it, so above the bound, where m_i > 1.11 m_fair, its packets are
 * dropped as a Not-ECT entity's are: a flood that sets ECT and ignores
 * CE is held like any other, and a responsive flow near its share, whose
 * probability stays small, is marked. */
#define AFCD_AFD_MARK_MAX_Q16 6554u

/* The next output of a splitmix64 generator (Steele, Lea, Flood, "Fast
 * splittable pseudorandom number generators", OOPSLA 2014; the finaliser
 * constants of Vigna's public-domain splitmix64.c) with state *s: 32
 * bits, uniform on [0, 2^32). Each flow owns one (afcd_flow.rng), seeded
 * from bpf_get_prandom_u32() when its entry is created, so that its
 * sampling and AFD coins cost no helper call. Any seed is
 * valid; every seed has period 2^64. */
AFCD_INLINE __u32 afcd_rng_next(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (__u32)((z ^ (z >> 31)) >> 32);
}


/* Byte-weighted sampling (ALGORITHM.md sec. 3): the number of samples a
 * packet of len wire bytes takes, len / sample_bytes in expectation:
 * floor(len / sample_bytes), and one more with probability
 * (len mod sample_bytes) / sample_bytes, for rand uniform on [0, 2^32);
 * at most max (the ring's size). A GSO/GRO aggregate of wire length len
 * thus weighs in the shadow buffer what its segments would have weighed
 * had they arrived one by one (each with probability seg / sample_bytes),
 * and a packet below sample_bytes takes one sample with probability
 * len / sample_bytes. 0 for sample_bytes 0. The division runs only for a
 * packet of at least sample_bytes. */
AFCD_INLINE __u32 afcd_sample_count(__u32 rand, __u32 len, __u64 sample_bytes, __u32 max)
{
	__u64 n = 0, rem = len;

	if (!sample_bytes)
		return 0;
	if (rem >= sample_bytes) {
		n = rem / sample_bytes;
		rem -= n * sample_bytes;
	}
	n += (__u64)rand * sample_bytes < (rem << 32);
	return n > max ? max : (__u32)n;
}

/* Datapath fallback fair share when the loader is absent (sec. 3):
 * sb_size / N samples, at least 1; sb_size when no flow is sampled. */
AFCD_INLINE __u32 afcd_m_fair_fallback(__u32 sb_size, __s32 n)
{
	__u32 m;

	if (n <= 0)
		return sb_size;
	m = sb_size / (__u32)n;
	return m ? m : 1;
}

/* floor(sqrt(x)) (may be one above for x = s^2 - 1) for 1 <= x < 2^62:
 * Newton's iteration x' = (x + a/x) / 2 from above, a fixed number of
 * times and without data-dependent branches, so the verifier walks one
 * path. 40 steps cover the halving phase from 2^62 plus the quadratic
 * phase. x = 0 returns 0. */
AFCD_INLINE __u64 afcd_isqrt64(__u64 a)
{
	__u64 x = a;
	int i;

	if (!a)
		return 0;
	if (x > (1ULL << 32))
		x = 1ULL << 32;     /* sqrt(2^62) < 2^32: start just above */
	for (i = 0; i < 40; i++)
		x = (x + a / x) >> 1;
	return x;
}

/* sqrt(n) in Q24 for 1 <= n <= 2^15, i.e. isqrt(n * 2^48) within +1:
 * the same Newton iteration from 2^31 (its first step lands above
 * sqrt(n * 2^48) <= 2^31.5), where 14 steps suffice (checked for every n
 * by the tests).
 * The FaLL fallback runs per packet, so this is kept short. */
AFCD_INLINE __u64 afcd_sqrt_q24(__u32 n)
{
	__u64 a = (__u64)n << 48, x = 1ULL << 31;
	int i;

	for (i = 0; i < 14; i++)
		x = (x + a / x) >> 1;
	return x;
}

/* FaLL efficiency module (eq. 4.5-4.6, after Appenzeller's C*RTT/sqrt(N)):
 *   global_target = RTT / sqrt(N), clamped to [lo_ns, hi_ns]
 * with lo = 2 tx(MTU) and hi = interval. N <= 0 is taken as 1, N above
 * AFCD_SB_SIZE_MAX (2^15) as AFCD_SB_SIZE_MAX (N <= sb_size). Computed as
 * RTT * 2^24 / sqrt(N * 2^48) for 2^-24 relative precision; rtt_ns <= 2^34
 * keeps RTT * 2^24 below 2^58. */
AFCD_INLINE __u64 afcd_fall_global_target_ns(__u64 rtt_ns, __s32 n,
					     __u64 lo_ns, __u64 hi_ns)
{
	__u64 s, gt;

	if (n <= 0)
		n = 1;
	_Static_assert(AFCD_SB_SIZE_MAX <= (1 << 15), "afcd_sqrt_q24 takes n <= 2^15");
	if (n > AFCD_SB_SIZE_MAX)
		n = AFCD_SB_SIZE_MAX;
	if (rtt_ns > AFCD_TIME_MAX_NS)
		rtt_ns = AFCD_TIME_MAX_NS;
	s = afcd_sqrt_q24((__u32)n);                /* sqrt(N) in Q24, >= 2^24 */
	gt = (rtt_ns << 24) / s;
	if (gt > hi_ns)
		gt = hi_ns;
	if (gt < lo_ns)
		gt = lo_ns;
	return gt;
}

/* Queue length in milli-samples for a backlog of backlog_ns at rate_bps:
 * bytes = backlog * rate / 8e9, samples = bytes / sample_bytes. Used by
 * the AFD controller (refresh step). Saturates instead of overflowing. */
AFCD_INLINE __s64 afcd_backlog_milli_samples(__u64 backlog_ns, __u64 rate_bps,
					     __u64 sample_bytes)
{
	/* bytes * 1000 = backlog_ns * rate / 8e6; split to avoid overflow. */
	__u64 bytes_milli;

	if (!sample_bytes)
		return 0;
	if (backlog_ns > AFCD_TIME_MAX_NS)
		backlog_ns = AFCD_TIME_MAX_NS;
	/* backlog <= 2^34, rate <= 2^40: compute (backlog/1000) * rate / 8000 */
	bytes_milli = (backlog_ns / 1000) * (rate_bps / 1000) / 8;
	return (__s64)(bytes_milli / sample_bytes);
}

/* The water level of the shadow buffer, from the histogram of per-entity
 * sample counts (struct afcd_sb_hist), and the counts it yields. An
 * entity is a flow or an aggregate (enum afcd_agg): the mice aggregate,
 * which holds the samples of every mouse (afcd_is_mouse()), is one. */
struct afcd_water {
	__u32 level;      /* max-min fair share, samples: the largest count when
			   * everything fits, at least 1 otherwise, 0 for no entity */
	__u32 fits;       /* 1: no entity above the level */
	__u32 n_flows;    /* entities with samples (N) */
	__u32 n_long;     /* entities with >= 2 samples (FaLL's N) */
	__u32 max_count;  /* the largest entity's count */
	__u32 samples;    /* samples in the ring: sum of c n[c] */
	__u32 level_milli; /* the level exactly, thousandths of a sample: the
			    * capacity left over the entities left at the count
			    * where the level falls (below 1000 where even one
			    * sample each is more than the link carries), at
			    * least 1; level * 1000 when everything fits, 0 for
			    * no entity */
};

/* Max-min fair share (the water level L with sum_i min(m_i, L) =
 * capacity), where capacity is the number of samples the link can carry
 * (sb_size * min(1, rate / offered load)). n: n[c] = entities with c
 * samples, c in [1, sb_size]; sb_size <= AFCD_SB_SIZE_MAX; capacity is
 * for a full ring (see below for one still filling). A sender that
 * rotates ports or spoofs sources does not push the level down: its
 * young one-sample 5-tuples are mice, whose samples the mice aggregate
 * holds as one entity (docs/ALGORITHM.md sec. 3a); a crowd's long-lived
 * flows that hold one sample each are flows of their own. Two passes of
 * at most sb_size steps, no sort. Runs in the loader's scan (user space:
 * two 4096-step passes are beyond what the BPF verifier walks) and in
 * the host tests. Replaces eq. 3.4's sb_size / N as the controller's
 * anchor, which is the fair share only when every flow is saturating and
 * the offered load equals capacity. The level in whole samples (level)
 * is what entities are compared with; the fair rate takes its fraction
 * (level_milli): floored, a crowd's level of a few samples made the fair
 * rate up to half too low, the crowd was held below the link and a flood
 * took the rest under the policer's gate (ns-3, 500 CUBIC flows and a
 * flood at 100 Mbit/s: a level of 1.4 samples read as 1, the fair rate
 * 27 % low, the flood 53-58 fair shares, 30-36 with the fraction;
 * docs/ALGORITHM.md sec. 3a). */
static inline void afcd_waterfill_hist(const __u32 *n, __u32 sb_size, __u64 capacity,
				       struct afcd_water *w)
{
	__u64 rem = capacity, tot = 0;
	__u32 c, ntot = 0, nlong = 0, nrem, cmax = 0;

	if (sb_size > AFCD_SB_SIZE_MAX)
		sb_size = AFCD_SB_SIZE_MAX;
	for (c = 1; c <= sb_size; c++)
		if (n[c]) {
			ntot += n[c];
			nlong += c >= 2 ? n[c] : 0;
			tot += (__u64)c * n[c];
			cmax = c;
		}
	/* a ring not yet full (a fresh slot) carries the capacity's share of
	 * the samples it holds: without this, every flow fitted under a
	 * capacity meant for the full ring until it filled (a second of
	 * traffic), and a flood went unpoliced from its first packet */
	w->samples = tot < sb_size ? (__u32)tot : sb_size;
	if (tot && tot < sb_size)
		rem = capacity * tot / sb_size;
	w->n_flows = ntot;
	w->n_long = nlong;
	w->max_count = cmax;
	w->level = cmax;
	w->level_milli = cmax * 1000;
	w->fits = 1;
	nrem = ntot;
	for (c = 1; c <= cmax && nrem; c++) {
		__u32 k = n[c];
		__u64 share;

		if (!k)
			continue;
		share = rem / nrem;
		if (c > share) {
			w->level = share ? (__u32)share : 1;
			w->level_milli = rem * 1000 >= nrem ? (__u32)(rem * 1000 / nrem) : 1;
			w->fits = 0;
			return;
		}
		rem -= (__u64)c * k;
		nrem = k < nrem ? nrem - k : 0;
	}
}

/* The policer's drain factor, in thousandths (1000 = the water level's
 * rate unchanged): the water level shares the link's capacity, so the
 * admitted aggregate equals the capacity and the queue does a random walk
 * that ends at the horizon, where overlimit drops hit compliant flows too.
 * While the mean sojourn q_ns of the last refresh period exceeds
 * min(target, horizon / 4) the flows above the fair share are held below
 * it, proportionally, down to 1/4 at half a horizon above, so the queue
 * drains within a few refresh periods (docs/ALGORITHM.md sec. 3a). */
#define AFCD_DRAIN_MIN_MILLI 250
AFCD_INLINE __u32 afcd_drain_milli(__u64 q_ns, __u64 target_ns, __u64 horizon_ns)
{
	__u64 ref = target_ns < horizon_ns / 4 ? target_ns : horizon_ns / 4;
	__u64 span = horizon_ns / 2, cut;

	if (q_ns <= ref || !span)
		return 1000;
	cut = (q_ns - ref) > span ? 1000 : (q_ns - ref) * 1000 / span;
	return cut >= 1000 - AFCD_DRAIN_MIN_MILLI ? AFCD_DRAIN_MIN_MILLI : (__u32)(1000 - cut);
}

/* The policer's gate: it holds a flow to the fair rate only while a
 * packet's sojourn is above a quarter of the smaller of target and the
 * law's target (FaLL's global target), the queue building; below it every
 * flow passes, so that the link never idles while a policed flow has
 * packets to send (work conservation, as a scheduler with a queue per
 * flow gives a flood the room a responsive flow leaves), and the queue
 * that a flood can hold is about that quarter. A fair rate that rests on
 * an estimate too low (a stale estimate, the qdisc's measured link rate
 * while its device stalls) cannot idle the link either: nothing queues,
 * nobody is held. ns. Source: docs/ALGORITHM.md sec. 3a. */
#define AFCD_POLICE_GATE_DIV 4
AFCD_INLINE __u64 afcd_police_gate_ns(__u64 target_ns, __u64 law_target_ns)
{
	__u64 t = law_target_ns && law_target_ns < target_ns ? law_target_ns : target_ns;

	return t / AFCD_POLICE_GATE_DIV;
}

/* The far gate: the policer's gate for an entity of m samples more than
 * AFCD_GATE_FAR_MUL times the water level (a flood, not a flow the ring's
 * noise puts above its share): the base gate (afcd_police_gate_ns())
 * divided by AFCD_GATE_FAR_DIV, but no less than the packet's own
 * transmission at the link's rate (the sojourn the gate is compared with
 * includes it) and no more than the base gate. So a flood past its lead
 * passes only while the queue and its own frame take at most an eighth
 * of the base gate, and always onto an empty queue, where the link would
 * otherwise idle. Why: under the base gate every entity past its lead
 * passes, so the room there goes by arrival rate, and where flows near
 * their share are held too (a crowd at a few samples a flow, many above
 * the level by the ring's noise) a flood takes most of it (ns-3, 5,000
 * CUBIC flows at 1 Gbit/s in 10,000 slots beside a flood at the link's
 * rate: 72 fair shares with the base gate, 0.53 with this one;
 * docs/PERFORMANCE.md). The floor keeps a large frame able to fill an
 * idle link (a 9,000-byte frame at 100 Mbit/s takes 0.72 ms, more than
 * the eighth). An entity up to 8 times the level (two flows and a flood
 * at up to 4 times the link) keeps the base gate. gate_ns: the base
 * gate; tx_ns: the packet's transmission at the link's rate. Returns the
 * gate, ns: gate_ns, or max(gate_ns / 8, min(tx_ns, gate_ns)). Source:
 * docs/ALGORITHM.md sec. 3a. */
#define AFCD_GATE_FAR_MUL 8
#define AFCD_GATE_FAR_DIV 8
AFCD_INLINE __u64 afcd_police_gate_far_ns(__u64 gate_ns, __u64 tx_ns, __u32 m, __u32 waterline)
{
	__u64 far = gate_ns / AFCD_GATE_FAR_DIV;

	if ((__u64)m <= (__u64)waterline * AFCD_GATE_FAR_MUL)
		return gate_ns;
	if (far < tx_ns)
		far = tx_ns < gate_ns ? tx_ns : gate_ns;
	return far;
}

/* The crowd gate: the policer's gate for entities within
 * AFCD_GATE_CROWD_MUL times the water level, raised by the refresh step
 * while the link idles as the policer drops. Many responsive flows with
 * windows of a few packets (fig. 3.7's 30 flows at 20-60 ms: a fair rate
 * times RTT below 4 packets) need a standing queue to keep the link busy:
 * each flow's smallest window over the RTT is above its fair rate until
 * the queue adds to the RTT. Held to the fair rate above the base gate
 * (afcd_police_gate_ns(), target/4), their windows were cut to timeouts
 * and the link idled (closed loop, tests/bpf/loop.h, 10 CUBIC + 20 Reno
 * at 20 ms, 25 Mbit/s: utilization 0.89, the virtual queue idle 10 %,
 * 12 % of the packets dropped by the policer). The step: after a refresh
 * period of dt_ns in which the virtual queue stood idle more than
 * 1/AFCD_GATE_IDLE_DIV of the time (idle_ns) while the policer dropped
 * (police_drops > 0), the gate rises by base, up to AFCD_GATE_TOP_MUL *
 * base (the smaller of target and the law's target); otherwise it falls
 * back toward base with time constant window_ns. A flood keeps the link
 * busy, so alone with responsive flows it never raises the gate, and in a
 * crowd it stays above AFCD_GATE_CROWD_MUL times the level, held at the
 * base gate (afcd_inputs()). Returns the new gate, ns, in [base, top].
 * Source: docs/ALGORITHM.md sec. 3a. */
#define AFCD_GATE_IDLE_DIV 64
#define AFCD_GATE_TOP_MUL 4
#define AFCD_GATE_CROWD_MUL 2
AFCD_INLINE __u64 afcd_gate_step(__u64 gate_ns, __u64 base_ns, __u64 dt_ns, __u64 idle_ns,
				 __u64 police_drops, __u64 window_ns)
{
	__u64 top = base_ns * AFCD_GATE_TOP_MUL, fall;

	if (gate_ns < base_ns)
		gate_ns = base_ns;
	if (gate_ns > top)
		gate_ns = top;
	if (!dt_ns)
		return gate_ns;
	if (police_drops && idle_ns > dt_ns / AFCD_GATE_IDLE_DIV)
		return gate_ns + base_ns > top ? top : gate_ns + base_ns;
	if (!window_ns || dt_ns >= window_ns)
		return base_ns;
	fall = (gate_ns - base_ns) * dt_ns / window_ns;
	return gate_ns - (fall ? fall : gate_ns > base_ns);
}

/* The mice aggregate's floor: the rate below which the policer never
 * holds the mice (young flows, afcd_is_mouse()), rate_bps / 8, bits/s
 * (0 for an unknown rate). The aggregate is one entity of the water
 * level, so that a sender that makes a new 5-tuple a packet is held as
 * one; held to one fair rate, a link's short flows were held too. In
 * ns-3 at 1 Gbit/s (figs. 4.7 and 4.8: 40 long CUBIC flows and 1,235
 * short flows a second, 5 % of the link, two fair shares) the policer
 * dropped their SYNs: a quarter to a half of the short flows took a SYN
 * timeout and 0.2-0.5 % never completed (with the floor 0.6-1.0 % took
 * one; with the openings too, afcd_opening(), none; docs/NS3.md).
 * Held to the floor instead, a sender rotating 5-tuples gets
 * at most an eighth of the link where per-flow queues (fq_codel) give it
 * one queue per 5-tuple. Source: docs/ALGORITHM.md sec. 3a. */
#define AFCD_MICE_FLOOR_DIV 8
AFCD_INLINE __u64 afcd_mice_floor_bps(__u64 rate_bps)
{
	return rate_bps / AFCD_MICE_FLOOR_DIV;
}

/* The rate the policer holds an entity of m samples to, above the water
 * level: the fair rate, and 9/8 of it for an entity within 1/8 above the
 * level (AFCD_POLICE_BAND_DIV). A responsive flow's sawtooth peaks above
 * its mean; held to exactly the fair rate at its peaks, CUBIC kept 84-88 %
 * of its share against UDP under TCG (the demo's VM; the closed loop,
 * tests/bpf/loop.h, with a late enforcing timer: 90-95 %, and 93-96 %
 * with the band). A flood is far above the level (its samples are its
 * offered load) and gets the fair rate; one that aims within the band
 * gets at most 9/8 of it. bits/s. Source: docs/ALGORITHM.md sec. 3a. */
#define AFCD_POLICE_BAND_DIV 8
/* Is an entity of m samples within 1/8 above the water level (the rate
 * band above, and the drop band of afcd_police_band_ns())? */
AFCD_INLINE int afcd_police_near(__u32 m, __u32 waterline)
{
	return m <= waterline + waterline / AFCD_POLICE_BAND_DIV;
}

AFCD_INLINE __u64 afcd_police_rate_bps(__u64 fair_rate_bps, __u32 m, __u32 waterline)
{
	if (afcd_police_near(m, waterline))
		return fair_rate_bps + fair_rate_bps / AFCD_POLICE_BAND_DIV;
	return fair_rate_bps;
}

/* The band past the lead of an entity of m samples where the policer
 * drops once an interval (afcd_police(), afcd_admit()): one lead for an
 * entity within 1/8 above the water level (afcd_police_near(): a
 * responsive flow at the peak of its sawtooth, which answers one drop),
 * none for one further above it (a flood), whose burst after its
 * sender stalls stays one lead. (With the band for every entity, two ECN
 * CUBIC flows against UDP at 1.5x under TCG fell to 45-53 % of their
 * share in 2 of 5 valid runs, the queue past half the horizon where they were
 * CE-marked; in none of 6 without it.) The marking band of an
 * ECN-capable packet is an interval whatever m (afcd_admit()). ns.
 * Source: docs/ALGORITHM.md sec. 3a. */
AFCD_INLINE __u64 afcd_police_band_ns(__u64 lead_ns, __u32 m, __u32 waterline)
{
	return afcd_police_near(m, waterline) ? lead_ns : 0;
}

/* The policer's verdicts (afcd_police()). */
enum afcd_police_verdict {
	AFCD_POLICE_PASS = 0,
	AFCD_POLICE_DROP = 1,
	AFCD_POLICE_BAND = 2,
};

/* The fair-rate policer (AFCD_F_POLICE): a flow (or the mice aggregate)
 * above the fair share is held to fair_rate on its own virtual clock vt,
 * the EDT schedule it would have on a link of that rate. The packet at
 * now would start at max(now, vt): up to lead_ns ahead of now it passes;
 * up to lead_ns + band_ns ahead it is in the band (AFCD_POLICE_BAND),
 * where the caller signals the flow once an interval, a CE mark if it
 * can mark the packet, else a drop, and passes the rest
 * (afcd_police_signal_due()); further ahead, the flow has sent more than
 * that beyond its fair rate and the packet is dropped (AFCD_POLICE_DROP).
 * A passed or marked packet, if admitted, moves the clock: the caller
 * sets vt = *vt_next (= start + tx_fair_ns). A flow at or below the fair
 * rate never builds a lead; a sender that answers its signal (one window
 * reduction per RTT: RFC 3168 sec. 6.1.2 for marks, RFC 6582 sec. 3 and
 * RFC 9438 sec. 4.6 for losses) leaves the band within a round trip, and
 * one that ignores it reaches the band's end and is held to the fair rate
 * by drops as any other. Source: docs/ALGORITHM.md sec. 3a (the EDT
 * clock of sec. 2 per flow, as a token bucket of depth lead_ns at
 * fair_rate). */
AFCD_INLINE int afcd_police(__u64 vt, __u64 now, __u64 tx_fair_ns, __u64 lead_ns,
			    __u64 band_ns, __u64 *vt_next)
{
	__u64 start = afcd_time_after_eq(vt, now) ? vt : now;

	*vt_next = start + tx_fair_ns;
	if (start - now <= lead_ns)
		return AFCD_POLICE_PASS;
	return start - now - lead_ns <= band_ns ? AFCD_POLICE_BAND : AFCD_POLICE_DROP;
}

/* May the policer signal (CE-mark or drop) a flow in its band whose last
 * policer signal came at last_ns (0: none) at now? Once an interval at
 * most: a sender answers one window reduction per round trip (RFC 3168
 * sec. 6.1.2; a window's losses are one congestion event, RFC 6582 sec.
 * 3), and interval is CoDel's bound on the round trips it serves (RFC
 * 8289 sec. 4.2), so the first signal has been answered, or is about to
 * be, when the next is due. Signalling every packet of the band while the
 * lead drained took the sender's answer to one excursion as a series of
 * cuts: marks in consecutive round trips (under TCG, two ECN CUBIC flows
 * against UDP at 1.5x: the virtual queue idle 1.3-3.1 % of the time,
 * where the same flows losing packets left it idle 0.6-1.5 %; marking
 * once an interval, 0.5-2.0 %, utilization 0.946-0.952 against
 * 0.939-0.945, no retransmit after the warm-up), and drops of 4-23
 * packets at each peak of CUBIC's sawtooth against UDP, a window cut
 * twice in some (under TCG at 70 Mbit/s: CUBIC at 84-90 % of its share).
 * Between signals the flow's packets in the band pass and move its clock,
 * so a sender that ignores them still runs into the band's end. */
AFCD_INLINE int afcd_police_signal_due(__u64 last_ns, __u64 now, __u64 interval_ns)
{
	return !last_ns || afcd_time_after_eq(now, last_ns + interval_ns);
}

/* a / d for d > 0, truncated toward zero as C does, with unsigned
 * division only: BPF before cpu v4 has no signed division. */
AFCD_INLINE __s64 afcd_sdiv64(__s64 a, __u64 d)
{
	if (a < 0)
		return -(__s64)((0 - (__u64)a) / d);
	return (__s64)((__u64)a / d);
}

/* The AFD controller (dissertation eq. 3.4-3.5 and 4.2-4.3; AFD paper):
 *   c <- c + alpha (Q_old - Q_target) - beta (Q - Q_target)
 *   m_fair = clamp(anchor + c, 1, sb_size)
 * with anchor = sb_size / N (eq. 3.4) or the water level above. All Q
 * and c are milli-samples; alpha, beta are *1000 (1700, 1800). The
 * anchor, the water level, is already the max-min share, so c only lifts:
 * it is bounded to [0, +1/8 anchor] (AFCD_CTRL_LIFT_DIV) for the target_i
 * laws and to [0, +3/4 anchor] with wide_lift (algo afd).
 *  - Not below 0: an m_fair wound below the water level made a flow below
 *    its max-min share the law's target while a policed flood held the
 *    queue near target (fig. 3.5, CUBIC against UDP at 1.0x, 120 ms,
 *    under TCG: m_fair at 0.55-0.7 of the level, CUBIC's target_i 1-3 ms,
 *    its window cut at 75-90 % of its share, 35 % of the link); and
 *    AFD's law below the max-min share drops flows at their fair share,
 *    which idled the link (3.1 of 10 Mbit/s with two flows).
 *  - At most +1/8 for the target_i laws: an m_fair lifted far above the
 *    level puts every flow below 7/8 m_fair, where target_i is infinite,
 *    so that after a quiet spell the law stayed off while a standing
 *    queue built and the controller unwound (closed loop,
 *    tests/bpf/loop.h: p99 queueing delay 14-16 ms at 60-120 ms RTT with
 *    +3/4, 6 ms with +1/8, at 0.01-0.02 of utilization).
 * Updates *ctrl_milli and returns m_fair in samples. Runs in the BPF
 * refresh step and on the host. */
#define AFCD_CTRL_LIFT_DIV 8
AFCD_INLINE __u32 afcd_afd_m_fair(__s64 *ctrl_milli, __s64 q_old_milli, __s64 q_milli,
				  __s64 q_target_milli, __u32 alpha_milli,
				  __u32 beta_milli, __u32 sb_size, __u32 anchor, int wide_lift)
{
	__s64 c = *ctrl_milli;
	__u64 a = anchor ? anchor : sb_size;
	/* the bound above, in milli-samples (of sb_size without an anchor) */
	__s64 hi = wide_lift ? (__s64)(a * 1000 * 3 / 4) : (__s64)(a * 1000 / AFCD_CTRL_LIFT_DIV);
	__s64 m;

	c += afcd_sdiv64((__s64)alpha_milli * (q_old_milli - q_target_milli), 1000);
	c -= afcd_sdiv64((__s64)beta_milli * (q_milli - q_target_milli), 1000);
	if (c > hi)
		c = hi;
	if (c < 0)
		c = 0;
	*ctrl_milli = c;
	m = (__s64)anchor + afcd_sdiv64(c, 1000);
	if (m < 1)
		m = 1;
	if (m > (__s64)sb_size)
		m = sb_size;
	return (__u32)m;
}

#endif /* AFCD_FAIR_H */
