// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_law.c - host unit tests of the decision headers compiled for the
 * host: EDT arithmetic, the CoDel control law (RFC 8289 / codel.h), the
 * fixed-point per-flow target (eq. 3.14 / 4.16), FaLL's RTT/sqrt(N)
 * (eq. 4.5), the AFD controller (eq. 3.5), the refresh step
 * (bpf/afcd_ctl.h) and the parser (with every
 * truncation of crafted packets and random bytes, under ASan/UBSan).
 *
 *   build/test_law [name-filter]
 */
#include <math.h>
#include <stdlib.h>
#include <stdint.h>

#include "afcd_law.h"
#include "afcd_ctl.h"
#include "afcd_config.h"
#include "afcd_qdisc.h"
#include "afcd_parse.h"
#include "check.h"
#include "pkt.h"

static const char *filter;

/* A complete config: algo's defaults at rate_bps (bits/s), as the loader
 * builds it; each test overrides what it is about. */
static struct afcd_config cfg(__u32 algo, __u64 rate_bps)
{
	struct afcd_config c;

	afcd_config_defaults(&c, algo, rate_bps);
	return c;
}

static void test_tx_ns_exact(void)
{
	CHECK_EQ(afcd_tx_ns(1500, 100000000ULL), 120000);     /* 1500 B at 100 Mbit/s */
	CHECK_EQ(afcd_tx_ns(64, 10000000000ULL), 51);         /* 51.2 ns, floored */
	CHECK_EQ(afcd_tx_ns(1, 3), 8000000000ULL / 3);
	CHECK_EQ(afcd_tx_ns(1514, 0), 0);                     /* rate 0 guarded */
	/* lengths clamp at 2^20: no overflow even at 1 bit/s */
	CHECK_EQ(afcd_tx_ns(0xffffffffu, 1), (__u64)AFCD_LEN_MAX * 8000000000ULL);
}

static void test_edt_schedule(void)
{
	struct afcd_edt e;

	afcd_edt_schedule(1000, 0, 120, AFCD_DEF_BURST_NS, &e);          /* never started: no credit */
	CHECK_EQ(e.t_dep_ns, 1120);
	CHECK_EQ(e.sojourn_ns, 120);
	CHECK_EQ(e.backlog, 0);
	afcd_edt_schedule(1000, 5000, 120, AFCD_DEF_BURST_NS, &e);       /* 4 us of work ahead */
	CHECK_EQ(e.t_dep_ns, 5120);
	CHECK_EQ(e.sojourn_ns, 4120);
	CHECK_EQ(e.backlog, 4000);
	/* the pacing credit: a queue empty for 1 ms restarts where it stood,
	 * so the packet leaves at once (in the past: sojourn 0) */
	afcd_edt_schedule(10000000, 9000000, 120, AFCD_DEF_BURST_NS, &e);
	CHECK_EQ(e.t_dep_ns, 9000120);
	CHECK_EQ(e.sojourn_ns, 0);
	CHECK_EQ(e.backlog, 0);
	/* empty for 10 ms: it gets back AFCD_DEF_BURST_NS of the gap, no more */
	afcd_edt_schedule(20000000, 10000000, 120, AFCD_DEF_BURST_NS, &e);
	CHECK_EQ(e.t_dep_ns, 20000000 - AFCD_DEF_BURST_NS + 120);
	CHECK_EQ(e.sojourn_ns, 0);
	/* credit smaller than the packet: it waits the rest */
	afcd_edt_schedule(20000000, 20000000 - 50, 120, AFCD_DEF_BURST_NS, &e);
	CHECK_EQ(e.t_dep_ns, 20000070);
	CHECK_EQ(e.sojourn_ns, 70);
	CHECK_EQ(e.backlog, 0);
	/* no credit (burst 0: a flow the policer holds): from now */
	afcd_edt_schedule(10000000, 9000000, 120, 0, &e);
	CHECK_EQ(e.t_dep_ns, 10000120);
	CHECK_EQ(e.sojourn_ns, 120);
	/* early clock: the floor never goes below 0 */
	afcd_edt_schedule(1000, 1, 120, AFCD_DEF_BURST_NS, &e);
	CHECK_EQ(e.t_dep_ns, 121);
}

static void test_newton_converges(void)
{
	struct afcd_codel_vars cv = { .count = 1, .rec_inv_sqrt = AFCD_REC_INV_SQRT_ONE };
	uint32_t c;

	for (c = 2; c <= 1000; c++) {
		double want, got;

		cv.count = c;
		afcd_codel_newton_step(&cv);
		want = 1.0 / sqrt((double)c);
		got = cv.rec_inv_sqrt / 65536.0;
		if (c >= 4)
			CHECK(fabs(got - want) / want < 0.03, "count %u: %f vs %f", c, got, want);
		if (c >= 20)
			CHECK(fabs(got - want) / want < 0.005, "count %u: %f vs %f", c, got, want);
	}
}

static void test_control_law_precedence(void)
{
	/* t + interval/sqrt(count): with rec = 0.5 the step is interval/2,
	 * added to t (a wrong precedence would scale t too). */
	CHECK_EQ(afcd_codel_control_law(1000000000ULL, 100000000ULL, 0x8000), 1050000000ULL);
	CHECK_EQ(afcd_codel_control_law(0, 100000000ULL, AFCD_REC_INV_SQRT_ONE),
		 (100000000ULL * 0xffff) >> 16);
	/* largest interval does not overflow */
	CHECK_EQ(afcd_codel_control_law(0, AFCD_INTERVAL_MAX_NS, 0x8000), AFCD_INTERVAL_MAX_NS / 2);
}

static void test_should_drop_window(void)
{
	__u64 fa = 0;
	const __u64 target = 5000000, interval = 100000000, mp = 120000;

	CHECK(!afcd_codel_should_drop(&fa, 1000, 1000, 900000, target, interval, mp), "below");
	CHECK_EQ(fa, 0);
	CHECK(!afcd_codel_should_drop(&fa, 10000000, 6000000, 6000000, target, interval, mp), "opens");
	CHECK(fa != 0, "window opened");
	CHECK(!afcd_codel_should_drop(&fa, 10000000 + interval - 2, 6000000, 6000000,
				      target, interval, mp), "inside window");
	CHECK(afcd_codel_should_drop(&fa, 10000000 + interval + 1, 6000000, 6000000,
				     target, interval, mp), "after interval");
	/* one packet's worth of backlog is never "above" (CoDel maxpacket) */
	CHECK(!afcd_codel_should_drop(&fa, 10000000 + 2 * interval, 6000000, mp,
				      target, interval, mp), "maxpacket");
	CHECK_EQ(fa, 0);
}

/* Drive the state machine with ok_to_drop = 1 and a packet every 1 us:
 * drops are spaced interval/sqrt(count) (within Newton's accuracy). */
static void test_control_law_spacing(void)
{
	struct afcd_codel_vars cv = {0};
	const __u64 interval = 100000000;
	__u64 t, last = 0, prev_gap = ~0ULL;
	uint32_t drops = 0;

	for (t = 0; t < 3 * 1000000000ULL && drops < 60; t += 1000) {
		if (!afcd_codel_decide(&cv, 1, t, interval))
			continue;
		drops++;
		if (drops >= 2) {
			__u64 gap = t - last;
			double want = interval / sqrt((double)(drops - 1));

			/* the gap before drop k is set after drop k-1 (count k-1) */
			if (drops >= 5)
				CHECK(fabs(gap - want) / want < 0.03,
				      "drop %u gap %llu want %.0f", drops,
				      (unsigned long long)gap, want);
			if (drops >= 5) /* Newton's first steps undershoot (codel.h too) */
				CHECK(gap <= prev_gap, "accelerates: drop %u", drops);
			prev_gap = gap;
		}
		last = t;
	}
	CHECK_EQ(drops, 60);
	CHECK_EQ(cv.count, 60);
	/* leaving and re-entering soon resumes near the old count */
	CHECK(!afcd_codel_decide(&cv, 0, last + 1000, interval), "leave");
	CHECK_EQ(cv.dropping, 0);
	CHECK(afcd_codel_decide(&cv, 1, last + 2000, interval), "re-enter drops at once");
	CHECK_EQ(cv.count, 59); /* delta = count - lastcount = 60 - 1 */
}

/* The resume heuristic of codel.h: count - lastcount > 1 and recent. */
static void test_codel_resume(void)
{
	struct afcd_codel_vars cv = {0};
	const __u64 interval = 100000000;

	CHECK(afcd_codel_decide(&cv, 1, 0, interval), "enter");
	CHECK_EQ(cv.lastcount, 1);
	cv.count = 11;                 /* ten more drops happened */
	CHECK(!afcd_codel_decide(&cv, 0, 1000, interval), "leave");
	CHECK(afcd_codel_decide(&cv, 1, 2000, interval), "re-enter");
	CHECK_EQ(cv.count, 10);        /* delta = 11 - 1 */
	cv.count = 30;
	cv.lastcount = 10;
	CHECK(!afcd_codel_decide(&cv, 0, 3000, interval), "leave");
	CHECK(afcd_codel_decide(&cv, 1, 3000 + 20 * interval, interval), "late re-enter");
	CHECK_EQ(cv.count, 1);         /* too long ago: start over */
}

static void test_target_i_fixed_point(void)
{
	const __u64 T = 5000000, H = 100000000;

	CHECK_EQ(afcd_target_i_ns(T, 100, 100, 3, H), T);            /* fair: target */
	CHECK_EQ(afcd_target_i_ns(T, 100, 200, 3, H), T / 8);        /* 2x: 1/8 */
	CHECK_EQ(afcd_target_i_ns(T, 100, 200, 4, H), T / 16);       /* reference's k=4 */
	CHECK_EQ(afcd_target_i_ns(T, 100, 200, 1, H), T / 2);
	/* just under fair share: the plain target; clearly under: never */
	CHECK_EQ(afcd_target_i_ns(T, 100, 99, 3, H), T);
	CHECK_EQ(afcd_target_i_ns(T, 800, 700, 3, H), T);              /* 7/8: in the band */
	CHECK_EQ(afcd_target_i_ns(T, 800, 699, 3, H), AFCD_TARGET_INF);
	CHECK_EQ(afcd_target_i_ns(T, 100, 50, 3, H), AFCD_TARGET_INF);
	CHECK_EQ(afcd_target_i_ns(T, 100, 0, 3, H), AFCD_TARGET_INF);  /* unsampled */
	CHECK_EQ(afcd_target_i_ns(T, 1, 1, 3, H), T);                /* m_i = 1, N = sb */
	/* m_i >> m_fair: ratio clamped at 1/64, so (1/64)^3 */
	CHECK_EQ(afcd_target_i_ns(T, 1, 2000, 3, H), T / 262144);
	CHECK_EQ(afcd_target_i_ns(T, 1, 4096, 4, H), T / 16777216);
	/* the reference wrapped above ~19 ms: here 10 s * (1/2)^3 is exact */
	CHECK_EQ(afcd_target_i_ns(10000000000ULL, 500, 1000, 3, 20000000000ULL), 1250000000ULL);
	/* largest target, equal shares, clamped to the horizon */
	CHECK_EQ(afcd_target_i_ns(AFCD_TIME_MAX_NS, 7, 7, 3, H), H);
	/* ratio and power at the clamps stay in range */
	CHECK_EQ(afcd_ratio_q31(1, 4096), AFCD_RATIO_MIN_Q31);
	CHECK_EQ(afcd_ratio_q31(4096, 1), AFCD_Q31_ONE);
	CHECK_EQ(afcd_pow_q31(AFCD_RATIO_MIN_Q31, 4), 128);
	CHECK_EQ(afcd_pow_q31(AFCD_Q31_ONE, 3), AFCD_Q31_ONE);
	/* 1000 random (m_fair, m_i, k): within 2 ns + 1e-6 of floating point (floors) */
	{
		__u64 x = 99;

		for (int i = 0; i < 1000; i++) {
			__u32 mf, mi, k;
			double want, got;

			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			double r;

			mf = 1 + x % 4096;
			mi = mf + (x >> 20) % 4096;
			k = 1 + (x >> 40) % 4;
			r = (double)mf / mi;
			r = r < 1.0 / 64 ? 1.0 / 64 : r;
			want = (double)T * pow(r, k);
			got = (double)afcd_target_i_ns(T, mf, mi, k, H);
			CHECK(fabs(got - want) <= 2.0 + want * 1e-6, "mf %u mi %u k %u: %f vs %f",
			      mf, mi, k, got, want);
		}
	}
}

static void test_afd_probability(void)
{
	CHECK_EQ(afcd_afd_drop_q16(100, 200), 32768);  /* 1 - 1/2 */
	CHECK_EQ(afcd_afd_drop_q16(100, 100), 0);
	CHECK_EQ(afcd_afd_drop_q16(100, 50), 0);
	CHECK_EQ(afcd_afd_drop_q16(100, 0), 0);
	CHECK_EQ(afcd_afd_drop_q16(1, 4096), 65536 - 16);
}

/* Expected result: under ecn on, AFD's verdict on an ECT packet is a CE
 * mark while its entity's drop probability is at most 10 % (PIE's
 * mark_ecnth; m_i 105 against m_fair 100: 4.8 %), and a drop above it
 * (m_i 300: 67 %), so that an ECT flood that ignores its marks is dropped
 * as a Not-ECT one is; a Not-ECT packet is never marked. */
static void test_afd_ecn_marks_near_share_only(void)
{
	struct afcd_config c = cfg(AFCD_ALGO_AFD, 10000000ULL);
	struct afcd_fair fs = { .m_fair = 100, .waterline = 100 };
	static const struct { __u32 m_i; int ect, drop, marks; } k[] = {
		{ 105, 1, 1, 1 }, { 111, 1, 1, 1 }, { 112, 1, 1, 0 }, { 300, 1, 1, 0 },
		{ 105, 0, 1, 0 }, { 100, 1, 0, 1 },
	};
	struct afcd_in in;
	unsigned i;

	c.flags |= AFCD_F_ECN;
	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		memset(&in, 0, sizeof(in));
		afcd_in_init(&c, 1000, 1500, &in);
		in.ect = (__u8)k[i].ect;
		/* a new flow (no bytes yet); rand16 0: the coin drops if p > 0 */
		afcd_inputs(&c, &fs, k[i].m_i,
			    afcd_is_mouse(k[i].m_i, 0, c.sample_bytes, afcd_flow_born(1000), 1000,
					  c.window_ns), 1, 0, &in);
		CHECK_EQ(in.afd_drop, k[i].drop);
		CHECK_EQ(afcd_law_marks(&in), k[i].marks);
	}
}

/* Expected result: a mouse (afcd_is_mouse()) is a flow of m_i <= 1 whose
 * entry is younger than the window and has carried fewer than 4 samples'
 * bytes; past either bound it is judged as itself. Age is modular in
 * units of 2^20 ns; an aggregate (born 0) is never young. */
static void test_mouse_is_young(void)
{
	const __u64 win = 1000000000ULL, sb = 62500, now = 7ULL << 40;
	const __u64 unit = 1ULL << AFCD_BORN_SHIFT;
	__u32 born = afcd_flow_born(now);

	CHECK(born & 1, "born %u", born);
	CHECK_EQ(afcd_flow_born(0), 1);
	CHECK(afcd_is_mouse(0, 0, sb, born, now, win), "new flow, m_i 0");
	CHECK(afcd_is_mouse(1, 4 * sb - 1, sb, born, now, win), "new flow, m_i 1");
	CHECK(!afcd_is_mouse(2, 0, sb, born, now, win), "m_i 2");
	CHECK(!afcd_is_mouse(1, 4 * sb, sb, born, now, win), "4 samples' bytes");
	/* young up to the window, within one unit; old past it */
	CHECK(afcd_is_mouse(1, 0, sb, born, now + win - unit, win), "just young");
	CHECK(!afcd_is_mouse(1, 0, sb, born, now + win + 2 * unit, win), "old");
	CHECK(!afcd_is_mouse(0, 0, sb, 0, now, win), "an aggregate");
	/* across the stamp's wrap (2^52 ns) */
	born = afcd_flow_born((1ULL << 52) - unit);
	CHECK(afcd_flow_young(born, (1ULL << 52) + unit, win), "young across the wrap");
	CHECK(!afcd_flow_young(born, (1ULL << 52) + 2 * win, win), "old across the wrap");
}

/* Expected result: the flow memory (afcd_seen_born(), afcd_seen_own())
 * gives an entry made again the flow's first sight when the flow was
 * last made less than a window and a timeout (AFCD_SEEN_BACK_NS) ago or
 * has been a flow of its own (its own samples, or known once before), and
 * a fresh stamp otherwise: a first sight, another flow's slot, a flow back
 * after longer that was only ever a mouse (a churn). */
static void test_seen_keeps_first_sight(void)
{
	const __u64 win = 1000000000ULL, t0 = 5ULL << 40, back = AFCD_SEEN_BACK_NS;
	const __u64 unit = 1ULL << AFCD_BORN_SHIFT;
	const __u32 tag = afcd_seen_tag(0x123456789abcdef0ULL);
	struct afcd_seen s = {0};
	__u32 b0 = afcd_flow_born(t0);

	CHECK_EQ(tag, 0x12345679u);
	CHECK_EQ(afcd_seen_tag(0), 1u);
	CHECK_EQ(afcd_seen_born(NULL, tag, t0, win), b0);
	/* a first sight writes the slot */
	CHECK_EQ(afcd_seen_born(&s, tag, t0, win), b0);
	CHECK(s.tag == tag && s.born == b0 && s.made == b0 && !s.own, "slot %u %u %u %u",
	      s.tag, s.born, s.made, s.own);
	/* back after a window and a timeout (AFCD_SEEN_BACK_NS) and then some:
	 * new, the slot starts over */
	CHECK_EQ(afcd_seen_born(&s, tag, t0 + 2 * win + 2 * back, win),
		 afcd_flow_born(t0 + 2 * win + 2 * back));
	CHECK(!s.own, "own %u", s.own);
	memset(&s, 0, sizeof(s));
	CHECK_EQ(afcd_seen_born(&s, tag, t0, win), b0);
	/* evicted and made again within a window, three times: the first sight
	 * stays, the entry is old (no mouse) once a window has passed; a flow
	 * back after a window and a timeout less a unit is known */
	CHECK_EQ(afcd_seen_born(&s, tag, t0 + win / 2, win), b0);
	CHECK_EQ(afcd_seen_born(&s, tag, t0 + win, win), b0);
	CHECK_EQ(afcd_seen_born(&s, tag, t0 + 3 * win / 2, win), b0);
	CHECK(!afcd_flow_young(b0, t0 + 3 * win / 2, win), "old");
	/* as if never a flow of its own: back after a window and a timeout
	 * less a unit, known, and a flow of its own from then on */
	s.own = 0;
	CHECK_EQ(afcd_seen_born(&s, tag, t0 + 5 * win / 2 + back - unit, win), b0);
	CHECK_EQ(s.own, 1u);
	/* another flow took the slot; the first one back: new */
	CHECK_EQ(afcd_seen_born(&s, tag ^ 4, t0 + 4 * win, win), afcd_flow_born(t0 + 4 * win));
	CHECK_EQ(afcd_seen_born(&s, tag, t0 + 5 * win, win), afcd_flow_born(t0 + 5 * win));
	CHECK(!s.own, "own %u", s.own);
	/* own samples, then back after ten windows: its first sight */
	b0 = s.born;
	afcd_seen_own(&s, tag);
	CHECK_EQ(s.own, 1u);
	CHECK_EQ(afcd_seen_born(&s, tag, t0 + 15 * win, win), b0);
	/* another flow takes the slot: it starts afresh, and so does the first
	 * one when it comes back; the other's samples never mark the first's */
	CHECK_EQ(afcd_seen_born(&s, tag ^ 2, t0 + 16 * win, win), afcd_flow_born(t0 + 16 * win));
	CHECK(!s.own, "own %u after another flow", s.own);
	afcd_seen_own(&s, tag);
	CHECK(!s.own, "own set by a flow not the slot's");
	CHECK_EQ(afcd_seen_born(&s, tag, t0 + 16 * win + 1000, win),
		 afcd_flow_born(t0 + 16 * win + 1000));
	afcd_seen_own(NULL, tag);
}

/* The policer: at or below the fair rate a flow never builds a lead; far
 * above it, it is held to the fair rate plus one lead's worth. */
static void test_police_law(void)
{
	__u64 vt = 0, next, now, admitted;
	int i;

	/* expected: the first packet at an idle clock starts now */
	CHECK_EQ(afcd_police(0, 1000, 100, 500, 0, &next), AFCD_POLICE_PASS);
	CHECK_EQ(next, 1100);
	/* drain factor: 1 up to min(target, horizon/4), then down to 1/4 */
	CHECK_EQ(afcd_drain_milli(5000000, 5000000, 100000000), 1000);
	CHECK_EQ(afcd_drain_milli(30000000, 5000000, 100000000), 500);
	CHECK_EQ(afcd_drain_milli(100000000, 5000000, 100000000), 250);
	CHECK_EQ(afcd_drain_milli(6000000, 14000000, 20000000), 900);   /* FaLL, 20 ms buffer */
	CHECK_EQ(afcd_drain_milli(1, 0, 0), 1000);
	/* expected: 600 ns ahead with a 500 ns lead: dropped */
	CHECK_EQ(afcd_police(1600, 1000, 100, 500, 0, &next), AFCD_POLICE_DROP);
	CHECK_EQ(afcd_police(1500, 1000, 100, 500, 0, &next), AFCD_POLICE_PASS);
	/* expected: offered at 3x the fair rate for 1 s (tx 300 us per packet at
	 * the fair rate, one every 100 us): 1/3 admitted, plus the lead */
	admitted = 0;
	for (i = 0, now = 0; i < 10000; i++, now += 100000) {
		if (!afcd_police(vt, now, 300000, 100000000ULL, 0, &next)) {
			vt = next;
			admitted++;
		}
	}
	CHECK(admitted >= 3333 && admitted <= 3333 + 334, "admitted %llu",
	      (unsigned long long)admitted);
	/* expected: offered at 0.9x the fair rate: never dropped */
	vt = 0;
	for (i = 0, now = 0; i < 10000; i++, now += 100000)
		CHECK(!afcd_police(vt, now, 90000, 1000, 0, &vt), "drop at %d", i);
	/* expected: with a band of 500 ns the packet 600 ns ahead with a 500
	 * ns lead is in the band; up to lead + band in it, beyond it dropped */
	CHECK_EQ(afcd_police(1600, 1000, 100, 500, 500, &next), AFCD_POLICE_BAND);
	CHECK_EQ(next, 1700);
	CHECK_EQ(afcd_police(2000, 1000, 100, 500, 500, &next), AFCD_POLICE_BAND);
	CHECK_EQ(afcd_police(2001, 1000, 100, 500, 500, &next), AFCD_POLICE_DROP);
	/* expected: a flood at 3x that ignores its signals is still held to
	 * the fair rate, plus the lead and the band */
	vt = 0;
	admitted = 0;
	for (i = 0, now = 0; i < 10000; i++, now += 100000) {
		if (afcd_police(vt, now, 300000, 100000000ULL, 100000000ULL, &next) !=
		    AFCD_POLICE_DROP) {
			vt = next;
			admitted++;
		}
	}
	CHECK(admitted >= 3333 && admitted <= 3333 + 667, "ECT admitted %llu",
	      (unsigned long long)admitted);
}

/* Expected result: a packet below sample_bytes takes one sample with
 * probability len / sample_bytes; one of several sample_bytes (a GSO/GRO
 * aggregate) takes floor(len / sample_bytes) and one more with the
 * remainder's probability, so that in expectation every packet takes
 * len / sample_bytes, aggregated or not; at most max. */
static void test_sampling_probability(void)
{
	static const __u32 segs[] = { 2, 3, 7, 16, 29, 45 };
	uint32_t i, j, hits = 0;
	__u64 x = 88172645463325252ULL, n;

	CHECK_EQ(afcd_sample_count(0xffffffffu, 1500, 1500, 2000), 1);
	CHECK_EQ(afcd_sample_count(0, 1, 1000000, 2000), 1);
	CHECK_EQ(afcd_sample_count(0xffffffffu, 999, 1000, 2000), 0);
	CHECK_EQ(afcd_sample_count(0, 999, 0, 2000), 0);
	/* a 45-segment aggregate of 1514-byte frames: 45 samples at
	 * sample_bytes 1514, 44 or 45 at 1500 */
	CHECK_EQ(afcd_sample_count(0xffffffffu, 45 * 1514, 1514, 2000), 45);
	CHECK_EQ(afcd_sample_count(0xffffffffu, 45 * 1514, 1500, 2000), 45);
	CHECK_EQ(afcd_sample_count(0xffffffffu, 45 * 1514, 1514 + 1, 2000), 44);
	CHECK_EQ(afcd_sample_count(0, 65536 * 8, 64, 2000), 2000);   /* the ring's size */
	for (i = 0; i < 1000000; i++)
		hits += afcd_sample_count(afcd_rng_next(&x), 100, 1000, 2000);
	/* p = 0.1: 100000 +- 5 sigma (sigma = 300) */
	CHECK(hits > 98500 && hits < 101500, "hits %u", hits);
	/* aggregates of 2-45 segments of 1514 bytes against sample_bytes 4000:
	 * 200000 of them take segs * 1514 / 4000 each on average (+- 0.5 %) */
	for (j = 0; j < sizeof(segs) / sizeof(segs[0]); j++) {
		double want = segs[j] * 1514.0 / 4000.0 * 200000;

		for (i = 0, n = 0; i < 200000; i++)
			n += afcd_sample_count(afcd_rng_next(&x), segs[j] * 1514, 4000, 2000);
		CHECK(fabs((double)n - want) < want * 0.005, "%u segments: %llu samples for %.0f",
		      segs[j], (unsigned long long)n, want);
	}
}

/* The flows' generator (afcd_rng_next()): splitmix64's reference output;
 * flows with neighbouring seeds start apart and each gets its own
 * binomial share of coins. */
static void test_flow_rng(void)
{
	__u64 s = 0, seeds[1000];
	uint32_t i, f, g, hits, total = 0, first[1000];

	/* splitmix64 from 0: 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4 (high halves) */
	CHECK_EQ(afcd_rng_next(&s), 0xe220a839u);
	CHECK_EQ(afcd_rng_next(&s), 0x6e789e6au);
	for (f = 0; f < 1000; f++) {
		seeds[f] = f;
		first[f] = afcd_rng_next(&seeds[f]);
		for (g = 0; g < f; g++)
			CHECK(first[g] != first[f], "flows %u and %u start alike", g, f);
	}
	for (f = 0; f < 1000; f++) {
		for (i = 0, hits = 0; i < 1000; i++)
			hits += afcd_sample_count(afcd_rng_next(&seeds[f]), 100, 1000, 2000);
		/* 100 +- 6 sigma (sigma 9.5) */
		CHECK(hits > 43 && hits < 157, "flow %u: %u hits", f, hits);
		total += hits;
	}
	CHECK(total > 98500 && total < 101500, "total %u", total);
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* SipHash-c-d of in[0, len) under the 16-byte key k, byte by byte as the
 * reference implementation (Aumasson and Bernstein, siphash.c) reads its
 * input: an independent check of afcd_flow_id()'s word-wise code. */
static __u64 ref_siphash(int c, int d, const __u8 *in, size_t len, const __u8 k[16])
{
	__u64 k0 = 0, k1 = 0, v0, v1, v2, v3, m, b = (__u64)len << 56;
	size_t i, j;

	for (i = 0; i < 8; i++) {
		k0 |= (__u64)k[i] << (8 * i);
		k1 |= (__u64)k[8 + i] << (8 * i);
	}
	v0 = k0 ^ 0x736f6d6570736575ULL;
	v1 = k1 ^ 0x646f72616e646f6dULL;
	v2 = k0 ^ 0x6c7967656e657261ULL;
	v3 = k1 ^ 0x7465646279746573ULL;
	for (i = 0; i + 8 <= len; i += 8) {
		for (m = 0, j = 0; j < 8; j++)
			m |= (__u64)in[i + j] << (8 * j);
		v3 ^= m;
		for (j = 0; j < (size_t)c; j++)
			AFCD_SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	for (j = 0; i + j < len; j++)
		b |= (__u64)in[i + j] << (8 * j);
	v3 ^= b;
	for (j = 0; j < (size_t)c; j++)
		AFCD_SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	for (j = 0; j < (size_t)d; j++)
		AFCD_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

static __u64 splitmix_next(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* afcd_flow_id() is SipHash-1-3 of its message (afcd_flow_id_msg(): 16
 * bytes for an IPv4 key, 40 otherwise): the byte-wise reference above
 * gives the published SipHash-2-4 vectors (key 00..0f, message 00..len-1;
 * the paper's appendix and the reference's vectors.h), and with c = 1,
 * d = 3 the same ids as afcd_flow_id() for random keys and flow keys of
 * both families. */
static void test_flow_id_is_siphash13(void)
{
	static const struct { size_t len; __u64 h; } v24[] = {
		{ 0, 0x726fdb47dd0e0e31ULL }, { 1, 0x74f839c593dc67fdULL },
		{ 7, 0xab0200f58b01d137ULL }, { 8, 0x93f5f5799a932462ULL },
		{ 15, 0xa129ca6149be45e5ULL }, { 16, 0x3f2acc7f57c29bdbULL },
		{ 44, 0xf935451de4f21df2ULL }, { 63, 0x958a324ceb064572ULL },
	};
	__u8 key[16], msg[64];
	__u64 s = 1, k[2];
	struct afcd_flow_key fk;
	unsigned i, j, len;

	for (i = 0; i < 16; i++)
		key[i] = (__u8)i;
	for (i = 0; i < 64; i++)
		msg[i] = (__u8)i;
	for (i = 0; i < sizeof(v24) / sizeof(v24[0]); i++)
		CHECK_EQ(ref_siphash(2, 4, msg, v24[i].len, key), v24[i].h);
	for (i = 0; i < 100000; i++) {
		k[0] = splitmix_next(&s);
		k[1] = splitmix_next(&s);
		for (j = 0; j < sizeof(fk); j++)
			((__u8 *)&fk)[j] = (__u8)splitmix_next(&s);
		fk.family = i & 1 ? 4 : (__u8)(splitmix_next(&s) | 1);   /* 4, and others */
		memcpy(key, k, 16);        /* the key words little-endian, as the map holds them */
		len = afcd_flow_id_msg(&fk, msg);
		CHECK_EQ(len, fk.family == 4 ? 16 : 40);
		if (afcd_flow_id(&fk, k) != ref_siphash(1, 3, msg, len, key)) {
			CHECK(0, "flow id %u differs from SipHash-1-3 of its message", i);
			break;
		}
	}
}

/* A key with the bits of diff flipped (diff: the key's 11 words). */
static void key_xor(struct afcd_flow_key *x, const struct afcd_flow_key *k, const __u32 *diff)
{
	unsigned i;

	for (i = 0; i < 11; i++)
		((__u32 *)x)[i] = ((const __u32 *)k)[i] ^ diff[i];
}

/* The key words that make message word u of afcd_flow_id() (low, high):
 * an IPv6 key's message is words 1..10, an IPv4 key's words 1, 2, 6, 10. */
static int msg_word(int v4, unsigned u, unsigned half)
{
	static const int w4[2][2] = { { 1, 2 }, { 6, 10 } };

	if (v4)
		return u < 2 ? w4[u][half] : -1;
	return u < 5 ? (int)(1 + 2 * u + half) : -1;
}

/* Flip bit b (0..63) of message word u in diff; 0 if there is no such word. */
static int diff_flip(__u32 *diff, int v4, unsigned u, unsigned b)
{
	int w = msg_word(v4, u, b / 32);

	if (w < 0)
		return 0;
	diff[w] ^= 1u << (b % 32);
	return 1;
}

/* No differential collides whatever the key (the property the flow map's
 * 64-bit id needs against a sender who chooses its addresses and ports):
 * for an IPv6 and an IPv4 flow, every difference of one bit in a message
 * word plus one or two bits in one of the next two words (bits b and
 * b + s mod 64, s in {0, 1, 29, 31, 32, 33}: the shapes a
 * multiply-xorshift leaves, among them the one that made the previous id
 * collide under every seed: bit 63 of a word of a lane and bits 63 and 32
 * of the next word of the same lane) leaves the id unchanged for none of
 * 8 random keys; the previous id's own differential (bit 31 of saddr[2],
 * bits 31 and 0 of daddr[2]: IPv6 interface-ID bits) for none of 1000
 * keys. Expected chance collisions: 1.3M * 2^-64 ~ 0. */
static void test_flow_id_no_differentials(void)
{
	static const unsigned shifts[] = { 0, 1, 29, 31, 32, 33 };
	struct afcd_flow_key k6 = { .ifindex = 3, .proto = 6, .family = 6, .sport = 0x1234,
				    .dport = 0x5000,
				    .saddr = { 0x000000fd, 0, 0x11223344u, 0x55667788u },
				    .daddr = { 0x000000fd, 0, 0x99aabbccu, 0xddeeff00u } },
			     k4 = { .ifindex = 3, .proto = 17, .family = 4, .sport = 0x1234,
				    .dport = 0x5000,
				    .saddr = { 0, 0, 0xffff0000u, 0x010012c6u },
				    .daddr = { 0, 0, 0xffff0000u, 0x020013c6u } }, x = { 0 };
	__u64 s = 7, key[2], base;
	long tried = 0, coll = 0;
	unsigned r, u, v, a, b, i;
	int v4;

	for (v4 = 0; v4 < 2; v4++) {
		const struct afcd_flow_key *k = v4 ? &k4 : &k6;

		for (r = 0; r < 8; r++) {
			key[0] = splitmix_next(&s);
			key[1] = splitmix_next(&s);
			base = afcd_flow_id(k, key);
			for (u = 0; u < 5; u++)
				for (v = u + 1; v <= u + 2; v++)
					for (a = 0; a < 64; a++)
						for (b = 0; b < 64; b++)
							for (i = 0; i < sizeof(shifts) / sizeof(shifts[0]); i++) {
								__u32 diff[11] = {0};

								if (!diff_flip(diff, v4, u, a) ||
								    !diff_flip(diff, v4, v, b))
									continue;
								if (shifts[i] && !diff_flip(diff, v4, v,
											    (b + shifts[i]) % 64))
									continue;
								key_xor(&x, k, diff);
								tried++;
								coll += afcd_flow_id(&x, key) == base;
							}
		}
	}
	CHECK(tried > 1000000, "tried %ld", tried);
	CHECK_EQ(coll, 0);
	for (r = 0, coll = 0; r < 1000; r++) {
		__u32 diff[11] = {0};

		key[0] = splitmix_next(&s);
		key[1] = splitmix_next(&s);
		diff[5] = 1u << 31;                 /* saddr[2], bit 31 */
		diff[9] = 1u << 31 | 1u;            /* daddr[2], bits 31 and 0 */
		key_xor(&x, &k6, diff);
		coll += afcd_flow_id(&x, key) == afcd_flow_id(&k6, key);
	}
	CHECK_EQ(coll, 0);
}

/* The flow id (afcd_flow_id(), the key of afcd_flows): a function of the
 * key's message and the secret key. Every IPv4 key one or two bit flips
 * away from another in its message (protocol, ports, addresses) gets
 * another id; each flip changes about half of the id's bits; a million
 * keys of the shape a port-rotating or address-scanning sender makes get a
 * million ids. The bits outside the message (the interface, the mapped
 * prefix) leave the id alone, and afcd_flow_key_eq() sees them and every
 * other bit: an entry is a packet's only if its whole key is. */
static void test_flow_id(void)
{
	struct afcd_flow_key k = { .ifindex = 3, .proto = 6, .family = 4, .sport = 0x1234,
				   .dport = 0x5000,
				   .saddr = { 0, 0, 0xffff0000u, 0x010012c6u },
				   .daddr = { 0, 0, 0xffff0000u, 0x020012c6u } }, x, y;
	const __u64 key[2] = { 42, 4242 }, key2[2] = { 43, 4242 }, key3[2] = { 42, 4243 };
	const int nbits = 8 * sizeof(k), n = 1 << 20;
	__u64 base = afcd_flow_id(&k, key), *ids = malloc(n * sizeof(*ids)), d;
	long flips = 0, nmsg = 0, i, j;

#define IN_MSG(bit) (((bit) / 8 >= 4 && (bit) / 8 < 12) || ((bit) / 8 >= 24 && (bit) / 8 < 28) || \
		     ((bit) / 8 >= 40))
	CHECK_EQ(afcd_flow_id(&k, key), base);
	CHECK(afcd_flow_id(&k, key2) != base, "key word 0");
	CHECK(afcd_flow_id(&k, key3) != base, "key word 1");
	for (i = 0; i < nbits; i++) {
		x = k;
		((__u8 *)&x)[i / 8] ^= 1 << (i % 8);
		CHECK(!afcd_flow_key_eq(&x, &k), "eq sees bit %ld", i);
		if (i / 8 == 6)                   /* family: another encoding, another id */
			continue;
		d = afcd_flow_id(&x, key) ^ base;
		if (!IN_MSG(i)) {
			CHECK(d == 0, "bit %ld outside the message changed the id", i);
			continue;
		}
		CHECK(d != 0, "bit %ld", i);
		flips += __builtin_popcountll(d);
		nmsg++;
		for (j = i + 1; j < nbits; j++) {
			if (!IN_MSG(j) || j / 8 == 6)
				continue;
			y = x;
			((__u8 *)&y)[j / 8] ^= 1 << (j % 8);
			CHECK(afcd_flow_id(&y, key) != base, "bits %ld and %ld", i, j);
		}
	}
#undef IN_MSG
	/* 32 +- 1 per flip on average over the message's 120 flips */
	CHECK(nmsg == 120, "message bits %ld", nmsg);
	CHECK(flips > 31 * nmsg && flips < 33 * nmsg, "avalanche %ld / %ld", flips, nmsg);
	x = k;
	CHECK(afcd_flow_key_eq(&k, &x), "eq");
	x.family = 6;                             /* the same bytes as an IPv6 key */
	CHECK(afcd_flow_id(&x, key) != base, "family");
	if (!ids)
		return;
	for (i = 0; i < n; i++) {
		x = k;
		x.sport = (__u16)i;                     /* rotating ports ... */
		x.saddr[3] = 0x000012c6u | (__u32)(i >> 16) << 24; /* ... over 16 hosts */
		ids[i] = afcd_flow_id(&x, key);
	}
	qsort(ids, n, sizeof(*ids), cmp_u64);
	for (i = 1, j = 0; i < n; i++)
		j += ids[i] == ids[i - 1];
	CHECK_EQ(j, 0);
	free(ids);
}

static void test_m_fair_fallback(void)
{
	CHECK_EQ(afcd_m_fair_fallback(2000, 0), 2000);
	CHECK_EQ(afcd_m_fair_fallback(2000, -3), 2000);
	CHECK_EQ(afcd_m_fair_fallback(2000, 1), 2000);
	CHECK_EQ(afcd_m_fair_fallback(2000, 3), 666);
	CHECK_EQ(afcd_m_fair_fallback(2000, 5000), 1);
}

static void test_isqrt(void)
{
	__u64 x, r;
	__u64 s = 12345;
	int i;

	for (x = 1; x < 100000; x++) {
		r = afcd_isqrt64(x);
		CHECK(r * r <= x + 2 * r && (r + 1) * (r + 1) > x, "isqrt(%llu) = %llu",
		      (unsigned long long)x, (unsigned long long)r);
	}
	for (i = 0; i < 100000; i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		x = (s >> 2) | 1;
		r = afcd_isqrt64(x);
		CHECK((__uint128_t)r * r <= (__uint128_t)x + 2 * r &&
		      (__uint128_t)(r + 1) * (r + 1) > x, "isqrt(%llu) = %llu",
		      (unsigned long long)x, (unsigned long long)r);
	}
	CHECK_EQ(afcd_isqrt64(0), 0);
	for (x = 1; x <= AFCD_SB_SIZE_MAX; x++) {
		__u64 q = afcd_sqrt_q24((__u32)x), e = afcd_isqrt64(x << 48);

		CHECK(q == e || q == e + 1, "sqrt_q24(%llu) = %llu, isqrt %llu",
		      (unsigned long long)x, (unsigned long long)q, (unsigned long long)e);
	}
	CHECK_EQ(afcd_isqrt64(1ULL << 32), 1ULL << 16);
}

static void test_fall_global_target(void)
{
	const __u64 rtt = 20000000, lo = 240000, hi = 100000000;

	CHECK_EQ(afcd_fall_global_target_ns(rtt, 1, lo, hi), rtt);
	CHECK_EQ(afcd_fall_global_target_ns(rtt, 4, lo, hi), rtt / 2);
	CHECK_EQ(afcd_fall_global_target_ns(rtt, 100, lo, hi), rtt / 10);
	CHECK_EQ(afcd_fall_global_target_ns(rtt, 0, lo, hi), rtt);       /* N = 0 -> 1 */
	CHECK_EQ(afcd_fall_global_target_ns(rtt, 10000, lo, hi), lo);    /* 200 us < lo */
	CHECK_EQ(afcd_fall_global_target_ns(500000000, 1, lo, hi), hi);  /* > interval */
	/* N up to the largest ring, and past it as the largest ring */
	CHECK_EQ(afcd_fall_global_target_ns(rtt * 128, 16384, 0, ~0ULL), rtt);
	CHECK_EQ(afcd_fall_global_target_ns(rtt * 181, AFCD_SB_SIZE_MAX, 0, ~0ULL),
		 afcd_fall_global_target_ns(rtt * 181, 1 << 20, 0, ~0ULL));
	{
		__u64 g = afcd_fall_global_target_ns(rtt * 181, AFCD_SB_SIZE_MAX, 0, ~0ULL);

		CHECK(g >= rtt - rtt / 500 && g <= rtt + rtt / 500, "RTT x 181 / sqrt(2^15) = %llu",
		      (unsigned long long)g);
	}
	{
		__u64 g = afcd_fall_global_target_ns(1000000, 2, 0, ~0ULL);

		CHECK(g >= 707105 && g <= 707108, "1ms/sqrt2 = %llu", (unsigned long long)g);
	}
}

static void test_afd_controller(void)
{
	__s64 c = 0;
	uint32_t m;

	/* at Q = Q_target the correction stays 0: m_fair = the anchor */
	m = afcd_afd_m_fair(&c, 10000, 10000, 10000, 1700, 1800, 2000, 500, 0);
	CHECK_EQ(m, 500);
	CHECK_EQ(c, 0);
	/* empty queue: m_fair rises above the anchor */
	m = afcd_afd_m_fair(&c, 0, 0, 10000, 1700, 1800, 2000, 500, 0);
	CHECK(m > 500, "m_fair %u", m);
	/* queue above target and growing: m_fair falls back */
	{
		uint32_t before = m;

		m = afcd_afd_m_fair(&c, 10000, 50000, 10000, 1700, 1800, 2000, 500, 0);
		CHECK(m < before, "m_fair %u after %u", m, before);
	}
	/* a standing queue never takes m_fair below the anchor, the water
	 * level: a flow below its max-min share (7/8 of it) has no law */
	c = 0;
	for (int i = 0; i < 100000; i++)
		m = afcd_afd_m_fair(&c, 1000000, 1000000, 0, 1700, 1800, 2000, 500, 0);
	CHECK_EQ(m, 500);
	CHECK_EQ(c, 0);
	CHECK(afcd_target_i_ns(5000000, m, 500 * 7 / 8 - 1, 3, 100000000) == AFCD_TARGET_INF,
	      "a flow below 7/8 of the water level is the law's target under a standing queue");
	CHECK(afcd_target_i_ns(5000000, m, 500, 3, 100000000) == 5000000,
	      "the flow at the water level keeps the plain target");
	/* the target_i laws: an empty queue lifts m_fair by at most 1/8 of
	 * the anchor, so that the flow at the water level stays within the
	 * 7/8 band where target_i is finite */
	for (int i = 0; i < 100000; i++)
		m = afcd_afd_m_fair(&c, 0, 0, 10000, 1700, 1800, 2000, 500, 0);
	CHECK_EQ(m, 500 + 500 / AFCD_CTRL_LIFT_DIV);
	CHECK_EQ(c, 500 * 1000 / AFCD_CTRL_LIFT_DIV);
	CHECK(afcd_target_i_ns(5000000, m, 500, 3, 100000000) != AFCD_TARGET_INF,
	      "the flow at the water level has no law under the lifted m_fair");
	/* wide_lift (algo afd): never below the anchor, up to 3/4 above it */
	c = 0;
	for (int i = 0; i < 1000; i++)
		m = afcd_afd_m_fair(&c, 1000000, 1000000, 0, 1700, 1800, 2000, 500, 1);
	CHECK_EQ(m, 500);
	CHECK_EQ(c, 0);
	for (int i = 0; i < 100000; i++)
		m = afcd_afd_m_fair(&c, 0, 0, 10000, 1700, 1800, 2000, 500, 1);
	CHECK_EQ(m, 500 + 500 * 3 / 4);
	CHECK_EQ(afcd_backlog_milli_samples(8000000, 100000000, 100), 1000000);
}

static void hist_of(__u32 *n, const __u32 *counts, int k)
{
	memset(n, 0, sizeof(__u32) * (AFCD_SB_SIZE_MAX + 1));
	while (k--)
		n[counts[k]]++;
}

/* A crowd of k entities of c samples each beside one of big samples. */
static void crowd_hist(__u32 *n, __u32 k, __u32 c, __u32 big)
{
	memset(n, 0, sizeof(__u32) * (AFCD_SB_SIZE_MAX + 1));
	n[c] = k;
	n[big] = 1;
}

static void test_waterfill_max_min(void)
{
	static __u32 n[AFCD_SB_SIZE_MAX + 1];
	const __u32 two[] = { 586, 1414 }, four[] = { 10, 20, 600, 1370 };
	struct afcd_water w;
	int i;

	/* expected: UDP 1414 + CUBIC 586 samples, the link carries 2/3 of the
	 * offered load: CUBIC keeps its 586, UDP gets the remaining 747 */
	hist_of(n, two, 2);
	afcd_waterfill_hist(n, 2000, 1333, &w);
	CHECK_EQ(w.level, 747);
	CHECK_EQ(w.level_milli, 747000);
	CHECK_EQ(w.fits, 0);
	CHECK_EQ(w.n_flows, 2);
	CHECK_EQ(w.n_long, 2);
	CHECK_EQ(w.max_count, 1414);
	/* expected: everything fits: the level is the largest count */
	afcd_waterfill_hist(n, 2000, 2000, &w);
	CHECK_EQ(w.level, 1414);
	CHECK_EQ(w.level_milli, 1414000);
	CHECK_EQ(w.fits, 1);
	/* expected: small flows keep theirs, the rest split what is left */
	hist_of(n, four, 4);
	afcd_waterfill_hist(n, 2000, 1000, &w);
	CHECK_EQ(w.level, 485);
	afcd_waterfill_hist(n, 2000, 3, &w);
	CHECK_EQ(w.level, 1);
	/* below one sample: 3 of the 4 entities' single samples */
	CHECK_EQ(w.level_milli, 750);
	hist_of(n, four, 0);
	afcd_waterfill_hist(n, 2000, 1000, &w);
	CHECK_EQ(w.level, 0);
	CHECK_EQ(w.level_milli, 0);
	CHECK_EQ(w.n_flows, 0);
	/* expected: a legitimate flow (1000 samples) against 1000 rotating
	 * 5-tuples of one sample each, capacity half the offered load: their
	 * samples are the mice aggregate's (afcd_is_mouse()), ONE entity of
	 * 1000, so the level is 500, not 1 */
	memset(n, 0, sizeof(n));
	n[1000] = 2;
	afcd_waterfill_hist(n, 2000, 1000, &w);
	CHECK_EQ(w.level, 500);
	CHECK_EQ(w.n_flows, 2);
	CHECK_EQ(w.n_long, 2);
	CHECK_EQ(w.max_count, 1000);
	/* expected: a crowd of 1000 long-lived flows of one sample each (no
	 * mice: their entries are old) beside one of 1000 samples, capacity
	 * half the offered load: each of the crowd is a flow, the level is 1
	 * and only the large flow is above it */
	crowd_hist(n, 1000, 1, 1000);
	afcd_waterfill_hist(n, 2000, 1000, &w);
	CHECK_EQ(w.level, 1);
	CHECK_EQ(w.level_milli, 999);
	CHECK_EQ(w.fits, 0);
	CHECK_EQ(w.n_flows, 1001);
	CHECK_EQ(w.n_long, 1);
	/* expected: a crowd of 500 flows of two samples beside a flood of
	 * 1000, capacity 682 (the link carries a third of the load): the
	 * level is 682 / 501 = 1.361 samples, compared as 1, its fraction
	 * kept for the fair rate (floored, the rate was 27 % low) */
	crowd_hist(n, 500, 2, 1000);
	afcd_waterfill_hist(n, 2000, 682, &w);
	CHECK_EQ(w.level, 1);
	CHECK_EQ(w.level_milli, 1361);
	/* expected: a few flows of one sample below the level keep theirs */
	crowd_hist(n, 20, 1, 1000);
	n[980] = 1;
	afcd_waterfill_hist(n, 2000, 1000, &w);
	CHECK_EQ(w.level, 490);
	/* expected: a ring still filling (400 of 2000 samples) carries the
	 * capacity's share of them: half the load, 200 samples: the flow of
	 * 100 keeps them, the flow of 300 gets the other 100 */
	memset(n, 0, sizeof(n));
	n[100] = 1;
	n[300] = 1;
	afcd_waterfill_hist(n, 2000, 1000, &w);
	CHECK_EQ(w.samples, 400);
	CHECK_EQ(w.level, 100);
	CHECK_EQ(w.fits, 0);
	/* against the sort-based definition on random histograms */
	srand(7);
	for (i = 0; i < 200; i++) {
		__u32 counts[64], k = 1 + rand() % 60, j, cap = 1 + rand() % 2500, want, want_milli;
		__u64 rem = cap;

		for (j = 0; j < k; j++)
			counts[j] = 2 + rand() % 300;
		hist_of(n, counts, k);
		afcd_waterfill_hist(n, 2000, cap, &w);
		for (j = 0, rem = 0; j < k; j++)     /* a ring not full: its share */
			rem += counts[j];
		rem = rem < 2000 ? (__u64)cap * rem / 2000 : cap;
		/* sort ascending, fill */
		for (j = 1; j < k; j++)
			for (__u32 m = j; m > 0 && counts[m - 1] > counts[m]; m--) {
				__u32 t = counts[m];
				counts[m] = counts[m - 1];
				counts[m - 1] = t;
			}
		want = counts[k - 1];
		want_milli = want * 1000;
		for (j = 0; j < k; j++) {
			__u64 share = rem / (k - j);

			if (counts[j] > share) {
				want = share ? (__u32)share : 1;
				/* the level exactly: what is left over those left */
				want_milli = rem * 1000 >= k - j ? (__u32)(rem * 1000 / (k - j)) : 1;
				break;
			}
			rem -= counts[j];
		}
		CHECK_EQ(w.level, want);
		CHECK_EQ(w.level_milli, want_milli);
		CHECK(want_milli < (want + 1) * 1000 && (want > 1 ? want_milli >= want * 1000 : 1),
		      "level %u, exactly %u thousandths", want, want_milli);
	}
}

/* Signed division without signed instructions matches C's. */
static void test_sdiv(void)
{
	const __s64 as[] = { 0, 1, -1, 999, -999, 1000, -1000, 1001, -1001,
			     INT64_MAX, INT64_MIN + 1, -123456789 };
	const __u64 ds[] = { 1, 3, 1000, 1700 };

	for (unsigned i = 0; i < sizeof(as) / sizeof(as[0]); i++)
		for (unsigned j = 0; j < sizeof(ds) / sizeof(ds[0]); j++)
			CHECK(afcd_sdiv64(as[i], ds[j]) == as[i] / (__s64)ds[j],
			      "%lld / %llu", (long long)as[i], (unsigned long long)ds[j]);
}

/* a*b/d without overflow, against long double; saturation. */
static void test_mul_div(void)
{
	const __u64 as[] = { 0, 1, 12345, 1ULL << 40, (1ULL << 45) + 12345, 1ULL << 53 };
	const __u64 ds[] = { 1, 1000, 999983, 1ULL << 30, (1ULL << 34) - 1 };

	for (unsigned i = 0; i < sizeof(as) / sizeof(as[0]); i++)
		for (unsigned j = 0; j < sizeof(ds) / sizeof(ds[0]); j++) {
			unsigned __int128 x = (unsigned __int128)as[i] * 1000000000ULL / ds[j];
			__u64 want = x > ~0ULL ? ~0ULL : (__u64)x;

			CHECK(afcd_mul_div_u64(as[i], 1000000000ULL, ds[j]) == want,
			      "%llu * 1e9 / %llu", (unsigned long long)as[i],
			      (unsigned long long)ds[j]);
		}
	CHECK_EQ(afcd_mul_div_u64(5, 7, 0), 0);
}

/* Offered-load EWMA: converges to a constant rate with time constant tau
 * whatever the refresh period, follows steps both ways. */
static void test_rate_ewma(void)
{
	const __u64 tau = 500 * 1000000ULL;       /* window 1 s / 2 */
	const __u64 periods[] = { 1000000ULL, 10000000ULL, 50000000ULL };

	for (unsigned k = 0; k < 3; k++) {
		__u64 dt = periods[k], r = 0, t;
		/* 100 Mbit/s offered: 12.5e6 bytes per second */
		__u64 bytes = 12500000ULL * dt / 1000000000ULL;

		for (t = 0; t < tau; t += dt)
			r = afcd_rate_ewma(r, bytes, dt, tau);
		/* after one tau: 1 - 1/e of the step, within the discretisation */
		CHECK(r > 0.60e8 && r < 0.66e8, "period %llu: %llu after tau",
		      (unsigned long long)dt, (unsigned long long)r);
		for (; t < 10 * tau; t += dt)
			r = afcd_rate_ewma(r, bytes, dt, tau);
		CHECK(r > 0.999e8 && r <= 1.0e8, "period %llu: %llu at 10 tau",
		      (unsigned long long)dt, (unsigned long long)r);
		for (t = 0; t < 10 * tau; t += dt)
			r = afcd_rate_ewma(r, 0, dt, tau);
		CHECK(r < 0.001e8, "decays: %llu", (unsigned long long)r);
	}
	/* a gap beyond AFCD_EWMA_DT_MAX_NS restarts from the mean over it */
	CHECK_EQ(afcd_rate_ewma(1ULL << 40, 20ULL * 125000000ULL, 20 * 1000000000ULL, tau),
		 1000000000ULL);
	CHECK_EQ(afcd_rate_ewma(777, 5, 0, tau), 777);
	CHECK_EQ(afcd_sb_capacity(2000, 100000000ULL, 50000000ULL), 2000);
	CHECK_EQ(afcd_sb_capacity(2000, 100000000ULL, 150000000ULL), 1333);
	CHECK_EQ(afcd_sb_capacity(2000, 1000, ~0ULL), 1);
}

/* The loader's scan of a histogram for a capacity (loader/scan.c). */
static void scan_of(const struct afcd_sb_hist *h, __u64 capacity, struct afcd_scan *sc)
{
	afcd_scan_of_hist(h->n, 2000, capacity, sc);
}

/* The refresh step: water level, controller, fair rate, FaLL target,
 * heartbeat, memory. */
static void test_refresh_step(void)
{
	struct afcd_config c = cfg(AFCD_ALGO_AFCD, 100000000ULL);
	struct afcd_queue q = { .n_active = 4 };
	static struct afcd_sb_hist h;
	const __u32 counts[] = { 100, 200, 300, 1400 };
	struct afcd_scan sc = {0};
	struct afcd_est e = {0};
	__u64 now = 1000000000ULL;
	__u32 m0;

	c.rtt_ns = 20000000ULL;
	c.sample_bytes = 6250;
	hist_of(h.n, counts, 4);
	scan_of(&h, 2000, &sc);
	/* expected: first refresh, no offered load yet, empty queue: the
	 * level is the largest count, m_fair above it, nobody policed */
	afcd_refresh(&c, &q, NULL, &sc, &e, now);
	CHECK_EQ(e.heartbeat_ns, now);
	CHECK_EQ(e.refreshes, 1);
	CHECK_EQ(e.waterline, 1400);
	CHECK(e.m_fair > 1400, "m_fair %u", e.m_fair);
	CHECK_EQ(e.fair_rate_bps, 0);
	/* FaLL: RTT / sqrt(n_long) = 20 ms / 2 */
	CHECK_EQ(e.global_target_ns, 10000000ULL);
	m0 = e.m_fair;
	/* expected: 10 ms later, 2000 packets passed with a mean sojourn of
	 * 20 ms (above the 5 ms target) and 160 samples = 1 Mbyte = 800
	 * Mbit/s instantaneous: m_fair falls, the offered load rises */
	q.stats[AFCD_S_PASSED] = 2000;
	q.sojourn_sum_ns = 2000 * 20000000ULL;
	q.astats[AFCD_A_SAMPLED_BYTES] = 160 * 6250;
	/* the first interval has no passed history: Q is the backlog now */
	q.t_last_ns = now + 10000000ULL + 20000000ULL;
	afcd_refresh(&c, &q, NULL, &sc, &e, now + 10000000ULL);
	CHECK(e.m_fair < m0, "m_fair %u, was %u", e.m_fair, m0);
	/* a load after an idle spell is its first period's rate (the
	 * average starts from it, not from zero), then an average over the
	 * load's age until that reaches window/2: 10 ms on, no more bytes,
	 * half of it */
	CHECK_EQ(e.arrival_bps, 800000000ULL);
	CHECK_EQ(e.load_age_ms, 10);
	CHECK_EQ(e.prev_passed, 2000);
	afcd_refresh(&c, &q, NULL, &sc, &e, now + 20000000ULL);
	CHECK_EQ(e.arrival_bps, 400000000ULL);
	CHECK_EQ(e.load_age_ms, 20);
	/* expected: offered 200 Mbit/s on a 100 Mbit/s link: capacity 1000 of
	 * 2000 samples: 100, 200 and 300 fit, the largest gets 400 */
	e.arrival_bps = 200000000ULL;
	scan_of(&h, afcd_sb_capacity(2000, c.rate_bps, e.arrival_bps), &sc);
	e.ctrl_milli = 0;
	e.q_old_milli = 0;
	q.stats[AFCD_S_PASSED] = 4000;   /* mean sojourn 0 this time: Q = 0 */
	afcd_refresh(&c, &q, NULL, &sc, &e, now + 10000000ULL);
	CHECK_EQ(e.waterline, 400);
	CHECK(e.m_fair >= 400 && e.m_fair < 1400, "m_fair %u", e.m_fair);
	/* the fair rate is the rate of a flow holding the water level, the
	 * queue being empty (drain factor 1) */
	CHECK_EQ(e.drain_milli, 1000);
	CHECK_EQ(e.fair_rate_bps, 400ULL * e.arrival_bps / 2000);
	/* expected: the controller lowers m_fair while the queue is high */
	q.stats[AFCD_S_PASSED] = 6000;
	q.sojourn_sum_ns += 2000 * 20000000ULL;
	m0 = e.m_fair;
	afcd_refresh(&c, &q, NULL, &sc, &e, now + 20000000ULL);
	CHECK(e.m_fair < m0, "m_fair %u, was %u", e.m_fair, m0);
	CHECK(e.q_old_milli > 0, "Q %lld", (long long)e.q_old_milli);
	/* 20 ms mean sojourn, 5 ms above min(target, horizon/4) = 5 ms, half a
	 * horizon = 50 ms: the policer drains at 1 - 15/50 */
	CHECK_EQ(e.drain_milli, 700);
	CHECK_EQ(e.fair_rate_bps, 400ULL * e.arrival_bps / 2000 * 700 / 1000);
	/* expected: the crowd gate is at the base (target / 4) until a
	 * period in which the link idled while the policer dropped raises it
	 * by the base: 5 ms of 10 idle, 7 policer drops */
	CHECK_EQ(e.crowd_gate_ns, c.target_ns / 4);
	q.stats[AFCD_S_IDLE_NS] += 5000000ULL;
	q.stats[AFCD_S_POLICE_DROP] += 7;
	afcd_refresh(&c, &q, NULL, &sc, &e, now + 30000000ULL);
	CHECK_EQ(e.crowd_gate_ns, c.target_ns / 2);
	CHECK_EQ(e.prev_police_drop, q.stats[AFCD_S_POLICE_DROP]);
	/* expected: a crowd of 500 flows of two samples beside a flood of
	 * 1000, 293 Mbit/s offered to 100: the level is 1.361 samples and
	 * the fair rate that level's share of the load, not one sample's
	 * (the queue at the target: no drain; the level falls at once) */
	crowd_hist(h.n, 500, 2, 1000);
	e.arrival_bps = 293000000ULL;
	scan_of(&h, afcd_sb_capacity(2000, c.rate_bps, e.arrival_bps), &sc);
	CHECK_EQ(sc.waterline, 1);
	CHECK_EQ(sc.waterline_milli, 682 * 1000 / 501);
	q.stats[AFCD_S_PASSED] += 1000;
	q.sojourn_sum_ns += 1000 * c.target_ns;
	afcd_refresh(&c, &q, NULL, &sc, &e, now + 35000000ULL);
	CHECK_EQ(e.drain_milli, 1000);
	CHECK_EQ(e.fair_rate_bps, e.arrival_bps * 1361 / 2000000);
	now += 10000000ULL;
	/* expected: with no samples the anchor is sb_size / N */
	memset(&h, 0, sizeof(h));
	scan_of(&h, 2000, &sc);
	afcd_refresh(&c, &q, NULL, &sc, &e, now + 30000000ULL);
	CHECK(e.m_fair <= 500 * 7 / 4 && e.m_fair >= 500 / 4, "m_fair %u", e.m_fair);
	CHECK_EQ(e.n_flows, 4);
	CHECK_EQ(e.fair_rate_bps, 0);
	/* N = 4 from the datapath when the histogram has no long flows */
	CHECK_EQ(e.global_target_ns, 10000000ULL);
	/* expected: without a rate and before the qdisc measured one, the
	 * refresh still beats: m_fair is the anchor (sb_size / N), nobody is
	 * policed, the controller starts from zero */
	c.rate_bps = 0;
	q.link_bps = 0;
	e.ctrl_milli = 12345;
	afcd_refresh(&c, &q, NULL, &sc, &e, now + 40000000ULL);
	CHECK_EQ(e.heartbeat_ns, now + 40000000ULL);
	CHECK_EQ(e.m_fair, 500);
	CHECK(e.fair_rate_bps == 0 && e.ctrl_milli == 0 && e.drain_milli == 1000,
	      "unknown rate: fair %llu ctrl %lld", (unsigned long long)e.fair_rate_bps,
	      (long long)e.ctrl_milli);
	/* expected: an invalid config (no sample_bytes) writes nothing */
	c.sample_bytes = 0;
	afcd_refresh(&c, &q, NULL, &sc, &e, now + 50000000ULL);
	CHECK_EQ(e.heartbeat_ns, now + 40000000ULL);
}

/* Expected result: with a stale estimate, the datapath's fallback takes
 * N as the entities holding samples (the mice aggregate one of them): 3
 * entities are m_fair = sb_size / 3, the water level the same, the fair
 * rate rate / 3; with a fresh estimate the refresh step's values are used.
 * The mice aggregate's samples are the live count given, fresh or not. */
static void test_fair_now_fallback(void)
{
	struct afcd_config c = cfg(AFCD_ALGO_AFCD, 90000000ULL);
	struct afcd_est e = { .heartbeat_ns = 1, .m_fair = 77, .waterline = 66,
			      .fair_rate_bps = 5, .mice_samples = 4 };
	struct afcd_fair fs;

	c.sb_size = 3000;
	c.stale_after_ns = 1000000ULL;

	afcd_fair_now(&c, &e, c.rate_bps, 3, 1000, 500000ULL, NULL, &fs);             /* fresh */
	CHECK_EQ(fs.stale, 0);
	CHECK_EQ(fs.m_fair, 77);
	CHECK_EQ(fs.waterline, 66);
	CHECK_EQ(fs.fair_rate_bps, 5);
	CHECK_EQ(fs.mice_samples, 1000);
	afcd_fair_now(&c, &e, c.rate_bps, 3, 1000, 5000000ULL, NULL, &fs);            /* stale */
	CHECK_EQ(fs.stale, 1);
	CHECK_EQ(fs.m_fair, 1000);
	CHECK_EQ(fs.waterline, 1000);
	CHECK_EQ(fs.mice_samples, 1000);
	CHECK_EQ(fs.fair_rate_bps, 30000000ULL);
	afcd_fair_now(&c, NULL, c.rate_bps, 1, 0, 5000000ULL, NULL, &fs);             /* one flow: no policer */
	CHECK_EQ(fs.m_fair, 3000);
	CHECK_EQ(fs.fair_rate_bps, 0);
	afcd_fair_now(&c, NULL, c.rate_bps, -2, 0, 5000000ULL, NULL, &fs);            /* racy count: none */
	CHECK_EQ(fs.m_fair, 3000);
	CHECK_EQ(fs.fair_rate_bps, 0);
	/* expected: the rate given stands in for the config's (the qdisc's
	 * measured one when it has none); unknown (0): no fallback policer */
	afcd_fair_now(&c, NULL, 60000000ULL, 3, 0, 5000000ULL, NULL, &fs);
	CHECK_EQ(fs.fair_rate_bps, 20000000ULL);
	afcd_fair_now(&c, NULL, 0, 3, 0, 5000000ULL, NULL, &fs);
	CHECK_EQ(fs.fair_rate_bps, 0);
}

/* FaLL's fallback global target is computed once per N and update_period
 * and is always the value afcd_fall_global_target_ns() gives. */
static void test_fall_fallback_cached(void)
{
	struct afcd_config c = cfg(AFCD_ALGO_FALL, 100000000ULL);   /* update_period 1 ms */
	struct afcd_gt_cache gc = {0};
	__u64 t = 1000000000ULL, lo = 2 * afcd_tx_ns(1500, 100000000ULL);
	__s32 n;

	c.rtt_ns = 20000000ULL;
	c.interval_ns = 100000000ULL;
	c.mtu_bytes = 1500;
	CHECK_EQ(afcd_fall_fallback_gt(&c, c.rate_bps, 4, t, &gc), 10000000ULL);     /* 20 ms / 2 */
	CHECK_EQ(gc.v, 4ULL << 34 | 10000000ULL);
	CHECK_EQ(gc.at_ns, t);
	gc.v = 4ULL << 34 | 12345;        /* a marker: the next call must reuse it */
	CHECK_EQ(afcd_fall_fallback_gt(&c, c.rate_bps, 4, t + 999999, &gc), 12345);
	CHECK_EQ(afcd_fall_fallback_gt(&c, c.rate_bps, 4, t + 1000000, &gc), 10000000ULL); /* aged */
	CHECK_EQ(afcd_fall_fallback_gt(&c, c.rate_bps, 5, t + 1000001, &gc),
		 afcd_fall_global_target_ns(c.rtt_ns, 5, lo, c.interval_ns));      /* N moved */
	/* N clamped as the law clamps it: 0 and 1 are one key, as are 8192 and more */
	afcd_fall_fallback_gt(&c, c.rate_bps, 0, t + 2000000, &gc);
	CHECK_EQ(gc.v >> 34, 1);
	gc.v = 1ULL << 34 | 777;
	CHECK_EQ(afcd_fall_fallback_gt(&c, c.rate_bps, 1, t + 2000001, &gc), 777);
	afcd_fall_fallback_gt(&c, c.rate_bps, 100000, t + 4000000, &gc);
	CHECK_EQ(gc.v >> 34, 8192);
	/* every N: cached or not, the law's value */
	for (n = 1; n <= 9000; n++) {
		__u64 want = afcd_fall_global_target_ns(c.rtt_ns, n, lo, c.interval_ns);

		CHECK_EQ(afcd_fall_fallback_gt(&c, c.rate_bps, n, t + 5000000, &gc), want);
		CHECK_EQ(afcd_fall_fallback_gt(&c, c.rate_bps, n, t + 5000001, &gc), want);
	}
	CHECK_EQ(afcd_fall_fallback_gt(&c, c.rate_bps, 9, t, NULL),
		 afcd_fall_global_target_ns(c.rtt_ns, 9, lo, c.interval_ns));
}

/* The per-packet decision on the host (bpf/afcd_decide.h): inputs from an
 * estimate, then the locked section, with a clock we drive. */
static __u32 decide_pkt(const struct afcd_config *c, const struct afcd_est *e,
			struct afcd_queue *q, struct afcd_flow *f, __u32 m_i, __u64 now,
			__u32 len, int ect, __u64 *t_dep)
{
	struct afcd_fair fs;
	struct afcd_in in;
	__u8 ce = 0;

	memset(&in, 0, sizeof(in));
	afcd_in_init(c, now, len, &in);
	in.ect = ect;
	afcd_fair_now(c, e, c->rate_bps, q->n_active, q->agg[AFCD_AGG_MICE].m_i, now, &q->fb_gt,
		      &fs);
	/* a flow without an entry, or a zeroed one, was made now */
	afcd_inputs(c, &fs, m_i,
		    afcd_is_mouse(m_i, f ? f->bytes : 0, c->sample_bytes,
				  f && f->born ? f->born : afcd_flow_born(now), now, c->window_ns),
		    afcd_opening(f ? f->bytes : 0, c->mtu_bytes), 0, &in);
	return afcd_decide(q, f, &in, t_dep, &ce);
}

/* The same for a Not-ECT packet. */
static __u32 decide_one(const struct afcd_config *c, const struct afcd_est *e,
			struct afcd_queue *q, struct afcd_flow *f, __u32 m_i, __u64 now,
			__u32 len, __u64 *t_dep)
{
	return decide_pkt(c, e, q, f, m_i, now, len, 0, t_dep);
}

/* Expected result: under ecn on, an ECN-capable flow far above its fair
 * rate that ignores the marks (a flood), beside a Not-ECT one, is marked
 * by the policer once an interval at most, not at each packet of the
 * band: the first mark when its lead is spent, then at most one each 100
 * ms while it stays in the band, whose end it reaches and where it is
 * dropped (a drop is a signal too: no mark within an interval of it);
 * its packets between signals pass and count against its clock, so it is
 * held to the fair rate as the Not-ECT one is, plus the band (100 ms at
 * the fair rate, 375 frames) */
static void test_decide_police_mark_once(void)
{
	struct afcd_config c = cfg(AFCD_ALGO_AFCD, 100000000ULL);
	struct afcd_est e = { .heartbeat_ns = 1, .m_fair = 500, .waterline = 500,
			      .fair_rate_bps = 45000000ULL };
	struct afcd_queue q = { .n_active = 2 };
	struct afcd_flow ect = {0}, plain = {0};
	__u64 now = 1000000ULL, t, pmarks = 0, sent = 0, sent_plain = 0, drops = 0, last = 0;
	__u64 gap = ~0ULL;
	__u32 v;
	int i;

	c.flags |= AFCD_F_ECN;
	for (i = 0; i < 20000; i++, now += 60000) {
		e.heartbeat_ns = now;
		v = decide_pkt(&c, &e, &q, &ect, 1500, now, 1500, 1, &t);
		sent += v == AFCD_V_PASS || v == AFCD_V_MARK;
		drops += v == AFCD_V_DROP_POLICE;
		if (v == AFCD_V_MARK && ect.police_signal_ns == now) {
			if (last && now - last < gap)
				gap = now - last;
			last = now;
			pmarks++;
		}
		sent_plain += decide_one(&c, &e, &q, &plain, 1500, now + 30000, 1500, &t) ==
			      AFCD_V_PASS;
	}
	CHECK(pmarks >= 1 && pmarks <= 13, "policer marks %llu", (unsigned long long)pmarks);
	CHECK(gap >= c.interval_ns, "marks %llu ns apart", (unsigned long long)gap);
	CHECK_EQ(q.stats[AFCD_S_POLICE_MARK], pmarks);
	CHECK(drops > 0, "never dropped");
	CHECK(sent >= sent_plain && sent <= sent_plain + 375 + 50, "sent %llu, Not-ECT %llu",
	      (unsigned long long)sent, (unsigned long long)sent_plain);
}

/* Expected result: a policed entity's pacing credit is its fair share
 * of the queue's (fair rate 45 of 100 Mbit/s: 0.45 of 3 ms, within Q10's
 * rounding); the whole credit without a fair-rate clock or at the link's
 * rate; no overflow for a 1 MiB frame at 1 kbit/s with the 1 s maximum. */
static void test_burst_share(void)
{
	__u64 tx = afcd_tx_ns(1500, 100000000ULL), ptx = afcd_tx_ns(1500, 45000000ULL);
	__u32 b = afcd_burst_share(3000000, tx, ptx);

	CHECK(b >= 1345000 && b <= 1350000, "share %u", b);
	CHECK_EQ(afcd_burst_share(3000000, tx, 0), 3000000);
	CHECK_EQ(afcd_burst_share(3000000, tx, tx), 3000000);
	CHECK_EQ(afcd_burst_share(0, tx, ptx), 0);
	tx = (1ULL << 20) * 8 * 1000000ULL;      /* 1 MiB at 1 kbit/s, ns */
	b = afcd_burst_share(AFCD_BURST_MAX_NS, tx, 2 * tx);
	CHECK(b >= 499000000 && b <= 500000000, "half of 1 s: %u", b);
}

/* One packet of a young flow (a new entry, afcd_is_mouse()), or of own
 * (a flow of 200 samples, above the water level) when given, every
 * `every` steps of 125 us over n steps, each behind a standing queue of
 * 20 ms (the EDT clock set ahead: above the policer's gate, below the
 * horizon). Returns the packets passed. */
static __u64 mice_run(const struct afcd_config *c, struct afcd_est *e, struct afcd_queue *q,
		      __u64 *now, int n, int every, struct afcd_flow *own)
{
	struct afcd_flow f;
	__u64 t, passed = 0;
	int i;

	for (i = 0; i < n; i += every, *now += 125000ULL * every) {
		e->heartbeat_ns = *now;
		q->t_last_ns = *now + 20000000ULL;
		memset(&f, 0, sizeof(f));
		passed += decide_one(c, e, q, own ? own : &f, own ? 200 : 0, *now, 1500, &t) ==
			  AFCD_V_PASS;
	}
	return passed;
}

/* Expected result: 20 entities share a 100 Mbit/s link (fair rate 5
 * Mbit/s) behind a standing queue; the mice aggregate, above the water
 * level, is held to its floor, an eighth of the link
 * (afcd_mice_floor_bps()), never to the fair rate: young flows (a new
 * entry for each packet) at 9.6 Mbit/s, two shares, all pass; a sender
 * making a new 5-tuple for each packet at 48 Mbit/s is held to 12.5
 * Mbit/s, plus its lead (50 ms of it), the rest dropped by the policer;
 * a flow of its own above the level at 9.6 Mbit/s is held to the fair
 * rate, 5 Mbit/s (the policer and the law drop the rest). */
static void test_mice_floor(void)
{
	struct afcd_config c = cfg(AFCD_ALGO_AFCD, 100000000ULL);
	struct afcd_est e = { .heartbeat_ns = 1, .m_fair = 100, .waterline = 100,
			      .fair_rate_bps = 5000000ULL };
	struct afcd_queue q = { .n_active = 20 };
	struct afcd_flow own = {0};
	__u64 now = 1000000ULL, passed, drops;

	CHECK_EQ(afcd_mice_floor_bps(100000000ULL), 12500000ULL);
	CHECK_EQ(afcd_mice_floor_bps(0), 0);
	q.agg[AFCD_AGG_MICE].m_i = 200;           /* two shares of the ring */
	passed = mice_run(&c, &e, &q, &now, 80000, 10, NULL);   /* 10 s, 8,000 packets */
	CHECK_EQ(passed, 8000);
	CHECK_EQ(q.stats[AFCD_S_POLICE_DROP], 0);
	q.agg[AFCD_AGG_MICE].m_i = 1000;
	passed = mice_run(&c, &e, &q, &now, 80000, 2, NULL);    /* 48 Mbit/s, 40,000 */
	/* 10 s at 12.5 Mbit/s: 10,417 frames, + two leads of 50 ms (every
	 * packet is a new flow's opening, afcd_opening()): 104 */
	CHECK(passed >= 10417 + 104 - 100 && passed <= 10417 + 104 + 100,
	      "rotating sender passed %llu",
	      (unsigned long long)passed);
	CHECK(q.stats[AFCD_S_POLICE_DROP] >= 40000 - 10417 - 104 - 100, "police drops %llu",
	      (unsigned long long)q.stats[AFCD_S_POLICE_DROP]);
	drops = q.stats[AFCD_S_AQM_DROP];
	passed = mice_run(&c, &e, &q, &now, 80000, 10, &own);   /* 9.6 Mbit/s of one flow */
	/* 10 s at 5 Mbit/s: 4,167 frames */
	CHECK(passed >= 4167 - 300 && passed <= 4167 + 150, "flow of its own passed %llu",
	      (unsigned long long)passed);
	CHECK(q.stats[AFCD_S_AQM_DROP] - drops + passed == 8000, "own flow: %llu dropped",
	      (unsigned long long)(q.stats[AFCD_S_AQM_DROP] - drops));
}

/* Expected result: behind a standing queue, young flows past their
 * opening (entries that have carried 20 kB, afcd_opening()) at 48 Mbit/s
 * run the mice aggregate past its lead and are held to its floor, 12.5
 * Mbit/s (10 s: 10,417 frames, + a lead); the openings of new flows
 * beside them, a 60-byte SYN every 10 ms, all pass, on the aggregate's
 * second lead. With one lead for every mouse the clock stood past it
 * most of the time and most openings were dropped. The openings stay
 * held: a sender that makes every packet a new flow is held to the floor
 * (test_mice_floor). */
static void test_mice_opening(void)
{
	struct afcd_config c = cfg(AFCD_ALGO_AFCD, 100000000ULL);
	struct afcd_est e = { .heartbeat_ns = 1, .m_fair = 100, .waterline = 100,
			      .fair_rate_bps = 5000000ULL };
	struct afcd_queue q = { .n_active = 20 };
	struct afcd_flow young, syn;
	__u64 now = 1000000ULL, t, passed = 0, syns = 0;
	int i;

	CHECK(afcd_opening(0, 1500) && afcd_opening(1499, 1500), "below one MTU");
	CHECK(!afcd_opening(1500, 1500), "one MTU carried");
	q.agg[AFCD_AGG_MICE].m_i = 1000;          /* ten shares of the ring */
	for (i = 0; i < 80000; i += 2, now += 250000ULL) {   /* 10 s */
		e.heartbeat_ns = now;
		q.t_last_ns = now + 20000000ULL;
		memset(&young, 0, sizeof(young));
		young.bytes = 20000;
		passed += decide_one(&c, &e, &q, &young, 0, now, 1500, &t) == AFCD_V_PASS;
		if (i % 80 == 0) {
			memset(&syn, 0, sizeof(syn));
			syns += decide_one(&c, &e, &q, &syn, 0, now + 125000ULL, 60, &t) ==
				AFCD_V_PASS;
		}
	}
	CHECK_EQ(syns, 1000);
	CHECK(passed >= 10417 - 100 && passed <= 10417 + 100, "young flows passed %llu",
	      (unsigned long long)passed);
}

static void test_decide_policer(void)
{
	/* the defaults: target 5 ms, interval and horizon 100 ms, police on */
	struct afcd_config c = cfg(AFCD_ALGO_AFCD, 100000000ULL);
	/* fresh estimate: water level 500 samples, fair rate 50 Mbit/s */
	struct afcd_est e = { .heartbeat_ns = 1, .m_fair = 500, .waterline = 500,
			      .mice_samples = 3, .fair_rate_bps = 50000000ULL };
	struct afcd_queue q = { .n_active = 2 };
	struct afcd_flow heavy = {0}, heavy2 = {0}, light = {0};
	__u64 now = 1000000ULL, t, passed_heavy = 0, passed_heavy2 = 0, passed_light = 0;
	__u32 v;
	int i;

	/* expected: two flows above the water level, each offered at 200
	 * Mbit/s (a 1500-byte frame every 60 us), congest the link: each is
	 * held at the fair rate, here 45 Mbit/s, plus its lead (min(interval,
	 * horizon/2) = 50 ms of the fair rate), without a band (a flood: it
	 * is far above the water level); one below the level at 10
	 * Mbit/s is never policed, although its rate is far above its own
	 * m_i: the policer judges entities by the water level, not by rate */
	e.fair_rate_bps = 45000000ULL;
	for (i = 0; i < 20000; i++, now += 60000) {
		e.heartbeat_ns = now;
		passed_heavy += decide_one(&c, &e, &q, &heavy, 1500, now, 1500, &t) == AFCD_V_PASS;
		passed_heavy2 += decide_one(&c, &e, &q, &heavy2, 1500, now + 30000, 1500, &t) ==
				 AFCD_V_PASS;
		if (i % 20 == 0) {
			v = decide_one(&c, &e, &q, &light, 100, now, 1500, &t);
			passed_light += v == AFCD_V_PASS;
			CHECK(v != AFCD_V_DROP_POLICE, "light flow policed at %d", i);
		}
	}
	/* 1.2 s at 45 Mbit/s = 4500 frames, + 50 ms lead ~ 188 */
	CHECK(passed_heavy >= 4500 && passed_heavy <= 4700, "heavy passed %llu",
	      (unsigned long long)passed_heavy);
	CHECK(passed_heavy2 >= 4500 && passed_heavy2 <= 4700, "heavy2 passed %llu",
	      (unsigned long long)passed_heavy2);
	CHECK_EQ(passed_light, 1000);
	/* expected: alone with the light flow, the heavy flow takes what the
	 * link has left (work conservation: below the policer's gate nobody
	 * is held), ~90 Mbit/s, not the 45 of its fair rate: 1.2 s of 100
	 * Mbit/s is 10000 frames, the light flow's 1000 off */
	memset(&q, 0, sizeof(q));
	memset(&heavy, 0, sizeof(heavy));
	memset(&light, 0, sizeof(light));
	q.n_active = 2;
	passed_heavy = passed_light = 0;
	for (i = 0; i < 20000; i++, now += 60000) {
		e.heartbeat_ns = now;
		passed_heavy += decide_one(&c, &e, &q, &heavy, 1500, now, 1500, &t) == AFCD_V_PASS;
		if (i % 20 == 0)
			passed_light += decide_one(&c, &e, &q, &light, 100, now, 1500, &t) ==
					AFCD_V_PASS;
	}
	CHECK(passed_heavy >= 8800 && passed_heavy <= 9100, "heavy alone passed %llu",
	      (unsigned long long)passed_heavy);
	CHECK_EQ(passed_light, 1000);
	CHECK(q.stats[AFCD_S_POLICE_DROP] > 0, "never held");
	CHECK(q.stats[AFCD_S_AQM_DROP] >= q.stats[AFCD_S_POLICE_DROP], "aqm counts police");
	CHECK_EQ(q.mice_vt_ns, 0);
	/* expected: a flow of m_i <= 1 that has carried 1000 packets (more than
	 * AFCD_MOUSE_SAMPLES samples' bytes) is no mouse: judged as itself,
	 * below its share, it leaves the mice clock alone; a new flow of m_i
	 * <= 1 (afcd_is_mouse()) is policed on the aggregate's clock when the
	 * mice aggregate is above the level */
	q.agg[AFCD_AGG_MICE].m_i = 600;
	CHECK(light.bytes / AFCD_MOUSE_SAMPLES >= c.sample_bytes, "light %llu bytes",
	      (unsigned long long)light.bytes);
	CHECK_EQ(decide_one(&c, &e, &q, &light, 1, now, 1500, &t), AFCD_V_PASS);
	CHECK_EQ(q.mice_vt_ns, 0);
	memset(&light, 0, sizeof(light));
	v = decide_one(&c, &e, &q, &light, 1, now, 1500, &t);
	CHECK(q.mice_vt_ns > now, "mice clock %llu", (unsigned long long)q.mice_vt_ns);
	/* expected: so is a flow of m_i <= 1 that has carried one packet in an
	 * entry older than the window: its m_i covers the whole ring */
	q.mice_vt_ns = 0;
	light.born = afcd_flow_born(now - c.window_ns - 2 * (1ULL << AFCD_BORN_SHIFT));
	CHECK_EQ(decide_one(&c, &e, &q, &light, 1, now, 1500, &t), AFCD_V_PASS);
	CHECK_EQ(q.mice_vt_ns, 0);
	/* expected: the pacing credit: after the queue stood empty 3 ms, the
	 * light flow's packet (within its share) is scheduled where the clock
	 * stood (it leaves at once); the heavy flow's (above the level:
	 * policed at 45 of 100 Mbit/s) takes its fair share of the credit,
	 * 0.45 of 3 ms, so it is scheduled 1.35 ms before its arrival */
	memset(&q, 0, sizeof(q));
	memset(&heavy, 0, sizeof(heavy));
	memset(&light, 0, sizeof(light));
	q.n_active = 2;
	q.agg[AFCD_AGG_MICE].m_i = 0;
	now += 1000000000ULL;
	e.heartbeat_ns = now;
	q.t_last_ns = now - 3000000;
	CHECK_EQ(decide_one(&c, &e, &q, &light, 100, now, 1500, &t), AFCD_V_PASS);
	CHECK_EQ(t, now - 3000000 + afcd_tx_ns(1500, c.rate_bps));
	q.t_last_ns = now - 3000000;
	CHECK_EQ(decide_one(&c, &e, &q, &heavy, 1500, now, 1500, &t), AFCD_V_PASS);
	CHECK(t + 1340000 <= now + afcd_tx_ns(1500, c.rate_bps) &&
	      t + 1360000 >= now + afcd_tx_ns(1500, c.rate_bps),
	      "heavy's credit %lld ns", (long long)(now + afcd_tx_ns(1500, c.rate_bps) - t));
	/* expected: no fresh estimate: no policer, the datapath's fallback */
	memset(&q, 0, sizeof(q));
	memset(&heavy, 0, sizeof(heavy));
	e.heartbeat_ns = 0;
	now += 2000000000ULL;
	for (i = 0; i < 100; i++, now += 60000)
		CHECK(decide_one(&c, &e, &q, &heavy, 1500, now, 1500, &t) != AFCD_V_DROP_POLICE,
		      "stale estimate policed");
	CHECK_EQ(q.stats[AFCD_S_STALE_FALLBACK], 100);
	/* expected: police off: never policed */
	c.flags = 0;
	e.heartbeat_ns = now;
	for (i = 0; i < 1000; i++, now += 60000)
		CHECK(decide_one(&c, &e, &q, &heavy, 1500, now, 1500, &t) != AFCD_V_DROP_POLICE,
		      "police off");
	/* expected: the horizon bounds everything (droptail, 1 ms) */
	c.algo = AFCD_ALGO_DROPTAIL;
	c.horizon_ns = 1000000ULL;
	memset(&q, 0, sizeof(q));
	for (i = 0; i < 9; i++)
		v = decide_one(&c, &e, &q, NULL, 0, now, 1514, &t);
	CHECK_EQ(v, AFCD_V_DROP_OVERLIMIT);
	CHECK_EQ(q.stats[AFCD_S_PASSED], 8);
}

/* Expected result: the crowd gate (afcd_gate_step()) rises by the base
 * gate per refresh period in which the link idled over 1/64 of the time
 * while the policer dropped, up to 4x the base; otherwise it falls back
 * toward the base with time constant window, and at once after a window.
 * In the datapath, a flow within twice the water level waits for it
 * before the policer holds it, and a flood does not: with the queue at
 * 2.5 ms (between the base gate, 1.25 ms, and the crowd gate, 5 ms) the
 * flow at 1.2x the level is never policed and the one at 3x is; without
 * the crowd gate both are. */
static void test_crowd_gate(void)
{
	const __u64 base = 1250000ULL, win = 1000000000ULL, dt = 10000000ULL;
	struct afcd_config c = cfg(AFCD_ALGO_AFCD, 100000000ULL);
	struct afcd_est e = { .heartbeat_ns = 1, .m_fair = 500, .waterline = 500,
			      .fair_rate_bps = 45000000ULL };
	struct afcd_queue q = { .n_active = 2 };
	struct afcd_flow near = {0}, flood = {0};
	__u64 g, now = 1000000000ULL, t;
	int i, k, dropped[2][2] = {{0}};

	CHECK_EQ(afcd_police_gate_ns(c.target_ns, 0), base);
	/* no idle, or idle without policer drops: at the base */
	CHECK_EQ(afcd_gate_step(0, base, dt, 0, 100, win), base);
	CHECK_EQ(afcd_gate_step(0, base, dt, dt, 0, win), base);
	/* idle 1/64 of the period is not enough; just over it is */
	CHECK_EQ(afcd_gate_step(base, base, dt, dt / 64, 1, win), base);
	CHECK_EQ(afcd_gate_step(base, base, dt, dt / 64 + 1, 1, win), 2 * base);
	for (g = base, i = 0; i < 10; i++)
		g = afcd_gate_step(g, base, dt, dt / 2, 3, win);
	CHECK_EQ(g, 4 * base);
	/* falls with time constant window: 3 base * dt / win off */
	CHECK_EQ(afcd_gate_step(4 * base, base, dt, 0, 0, win), 4 * base - 3 * base * dt / win);
	CHECK_EQ(afcd_gate_step(4 * base, base, win, 0, 0, win), base);
	CHECK_EQ(afcd_gate_step(base + 1, base, 1, 0, 0, win), base);   /* never stuck above */
	CHECK_EQ(afcd_gate_step(9 * base, base, 0, 0, 0, win), 4 * base);  /* clamped, dt 0 */

	for (k = 0; k < 2; k++) {
		e.crowd_gate_ns = k ? 0 : 4 * base;
		memset(&near, 0, sizeof(near));
		memset(&flood, 0, sizeof(flood));
		for (i = 0; i < 2000; i++, now += 60000) {
			e.heartbeat_ns = now;
			q.t_last_ns = now + 2 * base;
			dropped[k][0] += decide_one(&c, &e, &q, &near, 600, now, 1500, &t) ==
					 AFCD_V_DROP_POLICE;
			q.t_last_ns = now + 2 * base;
			dropped[k][1] += decide_one(&c, &e, &q, &flood, 1500, now, 1500, &t) ==
					 AFCD_V_DROP_POLICE;
		}
	}
	CHECK(dropped[0][0] == 0 && dropped[0][1] > 1000, "crowd gate: near %d, flood %d",
	      dropped[0][0], dropped[0][1]);
	CHECK(dropped[1][0] > 1000 && dropped[1][1] > 1000, "base gate: near %d, flood %d",
	      dropped[1][0], dropped[1][1]);
}

/* Expected result: the far gate. With a fresh estimate, a flow more than
 * 8 times the water level (a flood) waits for a queue of an eighth of the
 * base gate before it passes past its lead; one at 8 times or less, and
 * the mice aggregate however far above the level, keep the base gate
 * (1.25 ms).
 * Each sends at 11 times the fair rate, past its lead within 0.2 s:
 * with the queue at 0.6 ms a flow at 1.5x and one at 8x are never
 * dropped, the flood at 8x and one sample is, and the mice aggregate at
 * 10x (its entry's m_i 1, young) is not, with the crowd gate raised or
 * not. Without a fresh estimate (the fallback: 40 entities, the level 50
 * samples) the flows at 16x keep the base gate and pass. With the queue
 * empty nobody is dropped (work conservation). The packets are 1,500-byte
 * frames at 100 Mbit/s, 120 us, under the far gate's 156 us; its floor at
 * a frame's transmission is checked on the function. */
static void test_far_gate(void)
{
	const __u64 base = 1250000ULL;
	struct afcd_config c = cfg(AFCD_ALGO_AFCD, 100000000ULL);
	struct afcd_est e = { .m_fair = 100, .waterline = 100, .fair_rate_bps = 4500000ULL };
	static const __u32 m[4] = { 150, 800, 801, 1 };
	static const __u64 crowd[3] = { 0, 4 * base, 0 };
	struct afcd_queue q;
	struct afcd_flow f[4];
	__u64 now = 1000000000ULL, t;
	int i, k, g, dropped[2][3][4];

	CHECK_EQ(afcd_police_gate_far_ns(base, 120000, 800, 100), base);
	CHECK_EQ(afcd_police_gate_far_ns(base, 120000, 801, 100), base / AFCD_GATE_FAR_DIV);
	CHECK_EQ(afcd_police_gate_far_ns(base, 0, 1, 0), base / AFCD_GATE_FAR_DIV);
	CHECK_EQ(afcd_police_gate_far_ns(base, 0, 0xffffffffu, 0xffffffffu), base);
	/* never below the packet's own transmission (a 9,000-byte frame at
	 * 100 Mbit/s, 720 us), nor above the base gate */
	CHECK_EQ(afcd_police_gate_far_ns(base, 720000, 801, 100), 720000);
	CHECK_EQ(afcd_police_gate_far_ns(base, 2 * base, 801, 100), base);
	CHECK_EQ(afcd_police_gate_far_ns(base, 2 * base, 800, 100), base);
	memset(dropped, 0, sizeof(dropped));
	for (g = 0; g < 3; g++) {
		e.crowd_gate_ns = crowd[g];
		e.heartbeat_ns = 1;
		for (k = 0; k < 2; k++) {
			memset(&q, 0, sizeof(q));
			memset(f, 0, sizeof(f));
			q.n_active = g == 2 ? 40 : 4;
			q.agg[AFCD_AGG_MICE].m_i = 1000;
			for (i = 0; i < 4000; i++, now += 60000) {
				int j = i % 4;

				if (g != 2)
					e.heartbeat_ns = now;
				q.t_last_ns = now + (k ? 0 : base / 2);
				/* the mice aggregate's packet: a new entry's, of one sample */
				if (j == 3) {
					f[j].born = afcd_flow_born(now);
					f[j].bytes = 0;
				}
				dropped[k][g][j] += decide_one(&c, &e, &q, &f[j], m[j], now, 1500,
							       &t) == AFCD_V_DROP_POLICE;
			}
		}
	}
	for (g = 0; g < 3; g++) {
		CHECK(dropped[0][g][0] == 0 && dropped[0][g][1] == 0,
		      "at 0.6 ms, case %d: 1.5x dropped %d, 8x %d", g, dropped[0][g][0],
		      dropped[0][g][1]);
		if (g < 2)
			CHECK(dropped[0][g][2] > 500, "at 0.6 ms, case %d: the flood dropped %d",
			      g, dropped[0][g][2]);
		else
			CHECK(dropped[0][g][2] == 0, "at 0.6 ms, case %d: the flood dropped %d",
			      g, dropped[0][g][2]);
		CHECK(dropped[0][g][3] == 0, "at 0.6 ms, case %d: the mice dropped %d", g,
		      dropped[0][g][3]);
		CHECK(dropped[1][g][0] + dropped[1][g][1] + dropped[1][g][2] + dropped[1][g][3] == 0,
		      "empty queue, case %d: %d %d %d %d dropped", g, dropped[1][g][0],
		      dropped[1][g][1], dropped[1][g][2], dropped[1][g][3]);
	}
	/* 9,000-byte frames of the flood (720 us each at 100 Mbit/s, its
	 * sojourn at least that): onto an empty queue it passes (the gate is
	 * its frame's time; an eighth of the base gate would hold it on an
	 * idle link), behind 0.1 ms of queue it is held (the base gate would
	 * let it pass) */
	for (k = 0; k < 2; k++) {
		int n = 0;

		memset(&q, 0, sizeof(q));
		memset(f, 0, sizeof(f));
		q.n_active = 4;
		e.crowd_gate_ns = 0;
		for (i = 0; i < 1000; i++, now += 60000) {
			e.heartbeat_ns = now;
			q.t_last_ns = k ? now + 100000 : 0;
			n += decide_one(&c, &e, &q, &f[2], 801, now, 9000, &t) == AFCD_V_DROP_POLICE;
		}
		if (k)
			CHECK(n > 900, "9,000-byte frames behind 0.1 ms: %d dropped", n);
		else
			CHECK(n == 0, "9,000-byte frames onto an empty queue: %d dropped", n);
	}
}

/* The four stages of afcd_decide() one by one, each against what it alone
 * decides. */
/* One pass of 1 s of packets 100 us apart at a constant sojourn, round
 * robin over nf flows of which the first nh are above their share
 * (target_i 1 ms) and the rest below it (never dropped); the drops of
 * each flow in drops[]. Returns the drops of all. */
static int codel_state_run(__u32 flags, __u64 sojourn, int nf, int nh, int *drops)
{
	struct afcd_config c = cfg(AFCD_ALGO_AFCD, 100000000ULL);
	struct afcd_queue q = {0};
	struct afcd_flow f[16] = {0};
	struct afcd_in in;
	struct afcd_edt e;
	__u64 t = 1000000000ULL;
	int i, all = 0;

	c.flags = flags;
	for (i = 0; i < nf; i++)
		drops[i] = 0;
	for (i = 0; i < 10000; i++, t += 100000) {
		int k = i % nf;

		memset(&in, 0, sizeof(in));
		afcd_in_init(&c, t, 1500, &in);
		in.aqm = 1;
		in.target_i_ns = k < nh ? 1000000 : AFCD_TARGET_INF;
		e = (struct afcd_edt){ .t_dep_ns = t + sojourn, .sojourn_ns = sojourn,
				       .backlog = sojourn };
		if (afcd_law(&q, &f[k], &in, &e, 121120)) {
			drops[k]++;
			all++;
		}
	}
	return all;
}

static void test_codel_state_queue(void)
{
	int d_pf[16], d_q[16], d_g[16], pf, qd, i;

	/* expected: with codel_state queue nothing is dropped while the
	 * queue's sojourn (3 ms) stays below the target (5 ms), though the
	 * heavy flows are above their own target_i (1 ms) the whole time;
	 * per-flow states drop them */
	CHECK_EQ(codel_state_run(AFCD_F_CODEL_QUEUE, 3000000, 10, 8, d_q), 0);
	CHECK(codel_state_run(0, 3000000, 10, 8, d_pf) > 0, "per-flow: no drop at 3 ms");
	/* expected: above target, one schedule for the queue: about one
	 * CoDel's drops in a second (interval 100 ms, drops at 100 ms + the
	 * sum of 100 ms / sqrt(k): 27 by 1 s), where
	 * eight per-flow states make eight schedules; the two flows below
	 * their share are never dropped in any mode */
	pf = codel_state_run(0, 8000000, 10, 8, d_pf);
	qd = codel_state_run(AFCD_F_CODEL_QUEUE, 8000000, 10, 8, d_q);
	codel_state_run(AFCD_F_CODEL_GLOBAL, 8000000, 10, 8, d_g);
	CHECK(qd >= 20 && qd <= 35, "queue: %d drops in 1 s", qd);
	CHECK(pf >= 4 * qd, "per-flow %d drops, queue %d", pf, qd);
	for (i = 8; i < 10; i++)
		CHECK(!d_pf[i] && !d_q[i] && !d_g[i], "flow %d below its share dropped", i);
	/* expected: the drops fall on the flows above their share, spread
	 * over them rather than on one */
	for (pf = 0, i = 0; i < 8; i++)
		pf += d_q[i] > 0;
	CHECK(pf >= 4, "queue: drops on %d of 8 heavy flows", pf);
}

static void test_decide_stages(void)
{
	struct afcd_config c = cfg(AFCD_ALGO_FALL, 100000000ULL);
	struct afcd_queue q = {0};
	struct afcd_flow f = {0};
	struct afcd_in in;
	struct afcd_edt e;
	__u64 seen = 0, next = 0, now = 1000000000ULL, t;
	int i, drops;

	/* admit. expected: above the horizon, overlimit before anything else;
	 * without the law (or a flow), pass; a policed flow whose fair-rate
	 * clock is beyond its lead is dropped by the policer, and vt_next is
	 * where its clock goes when a packet is admitted */
	memset(&in, 0, sizeof(in));
	afcd_in_init(&c, now, 1500, &in);
	e = (struct afcd_edt){ .t_dep_ns = now + 6000000, .sojourn_ns = c.horizon_ns + 1 };
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_DROP_OVERLIMIT);
	e.sojourn_ns = 1000;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_PASS);   /* aqm 0 */
	in.aqm = 1;
	in.police_tx_ns = 240000;          /* 1500 B at 50 Mbit/s */
	in.police_lead_ns = 1000000;
	in.police_band_ns = 1000000;       /* a flow near the water level */
	f.vt_ns = now + 900000;            /* within the lead */
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_PASS);
	CHECK_EQ(next, now + 900000 + 240000);
	/* expected: beyond it, in the band of one more lead, the first packet
	 * is dropped and recorded as the flow's signal; within an interval of
	 * it the band's packets pass and move the clock (charged); beyond the
	 * band every packet is dropped */
	f.vt_ns = now + 1000001;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_DROP_POLICE);
	CHECK_EQ(f.police_signal_ns, now);
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_PASS);
	CHECK_EQ(next, now + 1000001 + 240000);
	f.vt_ns = now + 2000000;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_PASS);
	f.vt_ns = now + 2000001;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_DROP_POLICE);
	f.police_signal_ns = now - in.interval_ns;      /* an interval on: due again */
	f.vt_ns = now + 1000001;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_DROP_POLICE);
	/* expected: an entity far above the level (a flood) has no band: every
	 * packet beyond its lead is dropped, its last signal notwithstanding */
	in.police_band_ns = 0;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_DROP_POLICE);
	CHECK_EQ(afcd_police_band_ns(1000000, 500, 500), 1000000);
	CHECK_EQ(afcd_police_band_ns(1000000, 562, 500), 1000000);
	CHECK_EQ(afcd_police_band_ns(1000000, 563, 500), 0);
	in.police_band_ns = 1000000;
	/* expected: an ECT packet is dropped there too without ecn on, and
	 * marked with it, up to one interval (FaLL's 5 ms) past the lead, the
	 * time its sender takes to answer; beyond that dropped */
	in.ect = 1;
	f.police_signal_ns = 0;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_DROP_POLICE);
	f.police_signal_ns = 0;
	in.ecn_on = 1;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_MARK);
	CHECK_EQ(next, now + 1000001 + 240000);
	CHECK_EQ(in.interval_ns, 5000000);
	f.vt_ns = now + 1000000 + in.interval_ns;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_MARK);
	f.vt_ns = now + 1000001 + in.interval_ns;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_DROP_POLICE);
	/* expected: a flow is marked once an interval; within an interval of
	 * its last mark its packet in the band passes and moves its clock (it
	 * is charged), from an interval on it is marked again; the band's end
	 * still drops; the mice aggregate (many senders) is marked each time */
	f.vt_ns = now + 1000001;
	f.police_signal_ns = now - in.interval_ns + 1;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_PASS);
	CHECK_EQ(next, now + 1000001 + 240000);
	f.police_signal_ns = now - in.interval_ns;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_MARK);
	CHECK_EQ(f.police_signal_ns, now - in.interval_ns);   /* set once admitted */
	f.police_signal_ns = now;
	f.vt_ns = now + 1000001 + in.interval_ns;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_DROP_POLICE);
	CHECK_EQ(afcd_police_signal_due(0, 5, 10), 1);
	CHECK_EQ(afcd_police_signal_due(100, 109, 10), 0);
	CHECK_EQ(afcd_police_signal_due(100, 110, 10), 1);
	CHECK_EQ(afcd_police_signal_due(~0ULL - 3, 7, 10), 1);   /* across the wrap */
	/* expected: the mice aggregate (many senders, one clock) is signalled
	 * at each packet of its band, marked or dropped, whatever its entry's
	 * last signal */
	in.mouse = 1;
	q.mice_vt_ns = now + 1000001;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_MARK);
	in.ect = 0;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_DROP_POLICE);
	CHECK_EQ(f.police_signal_ns, now);
	in.ect = 1;
	in.mouse = 0;
	f.police_signal_ns = 0;
	in.ect = 0;                        /* not ECN-capable: its band is one lead */
	f.vt_ns = now + 1000001;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_DROP_POLICE);
	f.police_signal_ns = 0;
	in.ecn_on = 0;
	/* expected: the policer holds a flow only while the sojourn is above
	 * its gate; below it a flow beyond its lead passes and its clock
	 * stays where it was (next 0: not moved), one within its lead moves
	 * its clock as always; the fallback policer follows the same gate */
	in.police_gate_ns = afcd_police_gate_ns(5000000, 5000000);
	CHECK_EQ(in.police_gate_ns, 5000000 / AFCD_POLICE_GATE_DIV);
	CHECK_EQ(afcd_police_gate_ns(5000000, 2000000), 2000000 / AFCD_POLICE_GATE_DIV);
	CHECK_EQ(afcd_police_gate_ns(5000000, 0), 5000000 / AFCD_POLICE_GATE_DIV);
	e.sojourn_ns = in.police_gate_ns;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_PASS);
	CHECK_EQ(next, 0);
	e.sojourn_ns = in.police_gate_ns + 1;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_DROP_POLICE);
	f.police_signal_ns = 0;
	in.ect = 1;                        /* the mark band is gated the same way */
	in.ecn_on = 1;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_MARK);
	e.sojourn_ns = 1000;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_PASS);
	CHECK_EQ(next, 0);
	in.ect = 0;
	in.ecn_on = 0;
	f.vt_ns = now + 900000;            /* within the lead: the clock moves */
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_PASS);
	CHECK_EQ(next, now + 900000 + 240000);
	f.vt_ns = now + 1000001;
	in.stale = 1;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_PASS);
	CHECK_EQ(q.stats[AFCD_S_STALE_FALLBACK], 1);
	e.sojourn_ns = in.police_gate_ns + 1;
	CHECK_EQ(afcd_admit(&q, &f, &in, &e, &seen, &next), AFCD_V_DROP_POLICE);
	in.stale = 0;
	/* expected: a flow's CoDel state starts over only once it has had
	 * nothing queued for an interval, not in the gaps between the
	 * trains of an ACK-clocked flow */
	CHECK(!afcd_flow_idle(now, now - 1000, 100000000), "a gap of 1 us");
	CHECK(!afcd_flow_idle(now, now + 1000, 100000000), "a packet still queued");
	CHECK(afcd_flow_idle(now, now - 100000000, 100000000), "an interval");
	CHECK(afcd_flow_idle(now, 0, 100000000), "a flow never seen");

	/* law, FaLL. expected: a flow far above its target_i for many
	 * intervals is not dropped while the whole queue's sojourn stays
	 * below the global target (gate 1), and is once it is above */
	memset(&q, 0, sizeof(q));
	memset(&f, 0, sizeof(f));
	memset(&in, 0, sizeof(in));
	afcd_in_init(&c, now, 1500, &in);
	in.aqm = 1;
	in.target_i_ns = 100000;           /* 0.1 ms */
	in.law_target_ns = 2000000;        /* global target 2 ms */
	f.t_last_ns = ~0ULL >> 1;          /* the flow always has a backlog */
	for (drops = 0, i = 0, t = now; i < 2000; i++, t += 100000) {
		in.now_ns = t;
		e = (struct afcd_edt){ .t_dep_ns = t + 1500000, .sojourn_ns = 1500000,
				       .backlog = 1400000 };
		drops += afcd_law(&q, &f, &in, &e, 121120);
	}
	CHECK_EQ(drops, 0);
	for (i = 0; i < 2000; i++, t += 100000) {
		in.now_ns = t;
		e = (struct afcd_edt){ .t_dep_ns = t + 2500000, .sojourn_ns = 2500000,
				       .backlog = 2400000 };
		drops += afcd_law(&q, &f, &in, &e, 121120);
	}
	CHECK(drops > 0, "fall above its global target for 200 ms never dropped");
	/* expected: with codel_state global the whole queue's state machine
	 * decides, and a packet that finds it taken by another CPU gets no
	 * verdict from it */
	in.codel_global = 1;
	q.gcv_busy = 1;
	CHECK_EQ(afcd_law(&q, &f, &in, &e, 121120), 0);
	CHECK_EQ(q.gcv_busy, 1);
	q.gcv_busy = 0;
	for (drops = 0, i = 0; i < 2000; i++, t += 100000) {
		in.now_ns = t;
		e = (struct afcd_edt){ .t_dep_ns = t + 2500000, .sojourn_ns = 2500000,
				       .backlog = 2400000 };
		drops += afcd_law(&q, &f, &in, &e, 121120);
	}
	CHECK(drops > 0 && q.gcv.count > 0, "global state machine not used");
	CHECK_EQ(q.gcv_busy, 0);
	/* expected: afd's verdict is the coin afcd_inputs() tossed */
	in.law = AFCD_LAW_AFD;
	in.afd_drop = 1;
	CHECK_EQ(afcd_law(&q, &f, &in, &e, 121120), 1);
	in.afd_drop = 0;
	CHECK_EQ(afcd_law(&q, &f, &in, &e, 121120), 0);

	/* commit. expected: the clock advances by tx from
	 * max(now - AFCD_DEF_BURST_NS, clock) (from now for a clock never
	 * started); when other CPUs pushed it so
	 * far that the packet would leave past the horizon, it is overlimit
	 * and its slot is given back */
	memset(&q, 0, sizeof(q));
	memset(&in, 0, sizeof(in));
	afcd_in_init(&c, now, 1500, &in);
	CHECK_EQ(afcd_commit(&q, &in, 0, in.burst_ns, AFCD_V_MARK, &e), AFCD_V_MARK);
	CHECK_EQ(e.t_dep_ns, now + in.tx_ns);
	CHECK_EQ(e.sojourn_ns, in.tx_ns);
	CHECK_EQ(q.t_last_ns, now + in.tx_ns);
	q.t_last_ns = now + c.horizon_ns;  /* filled since the packet looked */
	CHECK_EQ(afcd_commit(&q, &in, now + in.tx_ns, in.burst_ns, AFCD_V_PASS, &e), AFCD_V_DROP_OVERLIMIT);
	CHECK_EQ(q.t_last_ns, now + c.horizon_ns);
	/* expected: the idle time counts only what the clock skipped: none
	 * for the first packet (above), for a busy queue, nor for a gap within
	 * the credit; a gap beyond it, the rest, once */
	CHECK_EQ(q.stats[AFCD_S_IDLE_NS], 0);
	q.t_last_ns = now - 7000;
	CHECK_EQ(afcd_commit(&q, &in, now - 7000, in.burst_ns, AFCD_V_PASS, &e), AFCD_V_PASS);
	CHECK_EQ(e.t_dep_ns, now - 7000 + in.tx_ns);
	CHECK_EQ(q.stats[AFCD_S_IDLE_NS], 0);
	q.t_last_ns = now - AFCD_DEF_BURST_NS - 7000;
	CHECK_EQ(afcd_commit(&q, &in, q.t_last_ns, in.burst_ns, AFCD_V_PASS, &e), AFCD_V_PASS);
	CHECK_EQ(q.stats[AFCD_S_IDLE_NS], 7000);
	CHECK_EQ(e.t_dep_ns, now - AFCD_DEF_BURST_NS + in.tx_ns);
	/* the next packets of the train catch up on the credit: no idle */
	CHECK_EQ(afcd_commit(&q, &in, q.t_last_ns, in.burst_ns, AFCD_V_PASS, &e), AFCD_V_PASS);
	CHECK_EQ(e.t_dep_ns, now - AFCD_DEF_BURST_NS + 2 * in.tx_ns);
	CHECK_EQ(q.stats[AFCD_S_IDLE_NS], 7000);
	/* expected: burst 0 (no credit): the clock restarts at the arrival
	 * and the whole gap is idle */
	c.burst_ns = 0;
	afcd_in_init(&c, now, 1500, &in);
	q.t_last_ns = now - 7000;
	CHECK_EQ(afcd_commit(&q, &in, q.t_last_ns, in.burst_ns, AFCD_V_PASS, &e), AFCD_V_PASS);
	CHECK_EQ(e.t_dep_ns, now + in.tx_ns);
	CHECK_EQ(e.sojourn_ns, in.tx_ns);
	CHECK_EQ(q.stats[AFCD_S_IDLE_NS], 14000);
	c.burst_ns = AFCD_DEF_BURST_NS;

	/* account. expected: a police drop counts as a police and an AQM
	 * drop, a mark as passed and marked, and a flow's target_i recorded
	 * either way */
	memset(&q, 0, sizeof(q));
	memset(&f, 0, sizeof(f));
	in.target_i_ns = 777;
	afcd_account(&q, &f, &in, &e, AFCD_V_DROP_POLICE, 0);
	CHECK(q.stats[AFCD_S_POLICE_DROP] == 1 && q.stats[AFCD_S_AQM_DROP] == 1 &&
	      q.stats[AFCD_S_OVERLIMIT_DROP] == 0 && f.drops == 1 && f.target_ns == 777,
	      "police drop accounting");
	e = (struct afcd_edt){ .t_dep_ns = now + 5000, .sojourn_ns = 5000 };
	afcd_account(&q, &f, &in, &e, AFCD_V_MARK, 0);
	CHECK(q.stats[AFCD_S_PASSED] == 1 && q.stats[AFCD_S_ECN_MARK] == 1 &&
	      q.stats[AFCD_S_PASSED_BYTES] == 1500 && f.marks == 1 && f.packets == 1 &&
	      q.max_sojourn_ns == 5000 && q.sojourn_sum_ns == 5000, "mark accounting");
	/* expected: the policer's mark counts as a police mark, not the law's */
	afcd_account(&q, &f, &in, &e, AFCD_V_MARK, AFCD_MARK_POLICE);
	CHECK(q.stats[AFCD_S_PASSED] == 2 && q.stats[AFCD_S_ECN_MARK] == 1 &&
	      q.stats[AFCD_S_POLICE_MARK] == 1 && f.marks == 2, "police mark accounting");
	/* expected: an admitted packet moves its flow's policer clock, or the
	 * mice aggregate's for a mouse; without a policer nothing moves */
	afcd_police_commit(&q, &f, &in, now, now + 240000);
	CHECK_EQ(f.vt_ns, now + 240000);
	in.mouse = 1;
	in.police_tx_ns = 240000;
	afcd_police_commit(&q, &f, &in, 0, now + 240000);
	CHECK(q.mice_vt_ns == now + 240000 && f.vt_ns == now + 240000, "mice clock");
	afcd_police_commit(&q, &f, &in, q.mice_vt_ns, 0);
	CHECK_EQ(q.mice_vt_ns, now + 240000);
}

/* The qdisc backend's arithmetic (afcd_decide.h). */
static void test_qdisc_helpers(void)
{
	struct afcd_config c = cfg(AFCD_ALGO_AFCD, 0);
	struct afcd_queue q = { .link_bps = 40000000ULL };
	struct afcd_edt e;

	/* expected: bytes to time exact at the rates the tests use and
	 * without overflow at the extremes (15 MB at 10 Mbit/s: 12 s;
	 * 1 Tbit/s) */
	CHECK_EQ(afcd_bytes_ns(1500, 100000000ULL), 120000);
	CHECK_EQ(afcd_bytes_ns(15000000ULL, 10000000ULL), 12000000000ULL);
	CHECK_EQ(afcd_bytes_ns(1500, 1000000000000ULL), 12);
	CHECK_EQ(afcd_bytes_ns(1500, 0), 0);
	/* expected: the estimates' rate is the parameter, else the measured one
	 * less its margin of 1/16 (never above the link: the fairness costs
	 * of a rate too high) */
	CHECK_EQ(afcd_rate_of(&c, &q), 37500000ULL);
	q.link_bps = 0;
	CHECK_EQ(afcd_rate_of(&c, &q), 0);
	q.link_bps = 40000000ULL;
	c.rate_bps = 20000000ULL;
	CHECK_EQ(afcd_rate_of(&c, &q), 20000000ULL);
	/* expected: an arrival behind 30 kB paced at 20 Mbit/s will wait 12 ms
	 * (the measured rate does not matter then); at the device's own rate
	 * it is taken to wait the larger of what the last packet dequeued
	 * waited and the backlog at the measured rate, the latter at most the
	 * horizon (a rate measured too low cannot make horizon drops); an empty
	 * FIFO waits nothing */
	afcd_qdisc_arrival(1000, 30000, 20000000ULL, 1000000, 777, 100000000, &e);
	CHECK(e.sojourn_ns == 12000000 && e.t_dep_ns == 12001000 && e.backlog == 30000,
	      "arrival %llu", (unsigned long long)e.sojourn_ns);
	afcd_qdisc_arrival(1000, 30000, 0, 0, 3000000, 100000000, &e);
	CHECK(e.sojourn_ns == 3000000 && e.t_dep_ns == 3001000, "arrival, rate unknown");
	afcd_qdisc_arrival(1000, 30000, 0, 40000000ULL, 3000000, 100000000, &e);
	CHECK(e.sojourn_ns == 6000000 && e.t_dep_ns == 6001000, "arrival, backlog ahead");
	afcd_qdisc_arrival(1000, 30000, 0, 400000000ULL, 3000000, 100000000, &e);
	CHECK_EQ(e.sojourn_ns, 3000000);
	afcd_qdisc_arrival(1000, 30000, 0, 1000, 3000000, 100000000, &e);
	CHECK_EQ(e.sojourn_ns, 100000000);
	afcd_qdisc_arrival(1000, 0, 0, 40000000ULL, 3000000, 100000000, &e);
	CHECK(e.sojourn_ns == 0 && e.t_dep_ns == 1000, "arrival to an empty FIFO");
	/* expected: the true sojourn at dequeue; never negative */
	afcd_qdisc_departure(5000000, 1000000, 4500, &e);
	CHECK(e.sojourn_ns == 4000000 && e.t_dep_ns == 5000000 && e.backlog == 4500, "departure");
	afcd_qdisc_departure(1000, 2000, 0, &e);
	CHECK_EQ(e.sojourn_ns, 0);
	/* expected: pacing keeps its clock while it is ahead of now, and
	 * keeps at most burst_ns of credit for a late dequeue */
	CHECK_EQ(afcd_pace_next(10000, 5000, 600, 3000), 10600);
	CHECK_EQ(afcd_pace_next(10000, 12000, 600, 3000), 10600);
	CHECK_EQ(afcd_pace_next(10000, 20000, 600, 3000), 17600);
	CHECK_EQ(afcd_pace_next(0, 100, 600, 3000), 700);     /* never started: from now */
}

/* The qdisc backend's deferred marks: a flow owes at most
 * AFCD_CE_OWED_MAX (the qdisc drops beyond), each taken once. */
static void test_ce_owed(void)
{
	__u32 owed = 0;
	unsigned int i;

	for (i = 0; i < AFCD_CE_OWED_MAX; i++)
		CHECK_EQ(afcd_ce_owe(&owed), 1);
	CHECK_EQ(afcd_ce_owe(&owed), 0);        /* nothing takes them: drop */
	CHECK_EQ(owed, AFCD_CE_OWED_MAX);
	for (i = 0; i < AFCD_CE_OWED_MAX; i++)
		CHECK_EQ(afcd_ce_take(&owed), 1);
	CHECK_EQ(afcd_ce_take(&owed), 0);
	CHECK_EQ(owed, 0);
	CHECK_EQ(afcd_ce_owe(&owed), 1);        /* owed again once taken */
}

/* The high-water mark past half the horizon: an ECT packet under ecn on
 * is marked (a flow below its share once an interval); any other packet,
 * under high_drop, of a flow not below its share is dropped once an
 * interval, and never for a flow below its share, without a flow's state,
 * or under an algo that judges no share. */
#define MS 1000000ULL
static void test_high_water(void)
{
	struct afcd_in in = { .ecn_on = 1, .ect = 1, .horizon_ns = 100 * MS,
			      .interval_ns = 100 * MS, .now_ns = 1000 * MS, .aqm = 1,
			      .traits = AFCD_T_FAIR, .law = AFCD_LAW_TARGET_I,
			      .target_i_ns = 5 * MS };
	struct afcd_flow f = {0};
	__u8 below = 9;

	CHECK_EQ(afcd_high_water(&in, &f, 50 * MS, 1, &below), AFCD_V_PASS);   /* not past half */
	CHECK_EQ(below, 0);
	CHECK_EQ(afcd_high_water(&in, &f, 51 * MS, 1, &below), AFCD_V_MARK);
	CHECK_EQ(below, 0);
	in.ect = 0;                      /* cannot carry a mark, high_drop off */
	CHECK_EQ(afcd_high_water(&in, &f, 51 * MS, 1, &below), AFCD_V_PASS);
	in.ect = 1;
	in.ecn_on = 0;
	CHECK_EQ(afcd_high_water(&in, &f, 51 * MS, 1, &below), AFCD_V_PASS);
	in.ecn_on = 1;
	in.target_i_ns = AFCD_TARGET_INF;                           /* below its share */
	f.police_signal_ns = 950 * MS;
	CHECK_EQ(afcd_high_water(&in, &f, 51 * MS, 1, &below), AFCD_V_PASS);
	CHECK_EQ(below, 1);
	f.police_signal_ns = 900 * MS;
	CHECK_EQ(afcd_high_water(&in, &f, 51 * MS, 1, &below), AFCD_V_MARK);

	/* high_drop: the drop form, for packets that cannot carry a mark */
	in.high_drop = 1;
	in.ecn_on = 0;
	in.target_i_ns = 5 * MS;                                    /* at its share */
	f.police_signal_ns = 0;
	CHECK_EQ(afcd_high_water(&in, &f, 50 * MS, 1, &below), AFCD_V_PASS);
	CHECK_EQ(afcd_high_water(&in, &f, 51 * MS, 1, &below), AFCD_V_DROP_HIGH);
	CHECK_EQ(below, 0);
	f.police_signal_ns = 950 * MS;                              /* one an interval */
	CHECK_EQ(afcd_high_water(&in, &f, 51 * MS, 1, &below), AFCD_V_PASS);
	f.police_signal_ns = 900 * MS;
	CHECK_EQ(afcd_high_water(&in, &f, 51 * MS, 1, &below), AFCD_V_DROP_HIGH);
	CHECK_EQ(afcd_high_water(&in, NULL, 51 * MS, 1, &below), AFCD_V_PASS);
	in.target_i_ns = AFCD_TARGET_INF;                           /* below its share */
	CHECK_EQ(afcd_high_water(&in, &f, 99 * MS, 1, &below), AFCD_V_PASS);
	in.target_i_ns = 5 * MS;
	in.ecn_on = 1;
	in.ect = 0;                                                 /* not ECT under ecn on */
	CHECK_EQ(afcd_high_water(&in, &f, 51 * MS, 1, &below), AFCD_V_DROP_HIGH);
	in.ect = 1;                                                 /* ECT: the mark */
	CHECK_EQ(afcd_high_water(&in, &f, 51 * MS, 1, &below), AFCD_V_MARK);
	in.ecn_on = 0;
	in.law = AFCD_LAW_AFD;                                      /* judges no share */
	CHECK_EQ(afcd_high_water(&in, &f, 51 * MS, 1, &below), AFCD_V_PASS);
	in.law = AFCD_LAW_TARGET_I;
	in.traits = 0;
	CHECK_EQ(afcd_high_water(&in, &f, 51 * MS, 1, &below), AFCD_V_PASS);
	in.traits = AFCD_T_FAIR;
	in.aqm = 0;
	CHECK_EQ(afcd_high_water(&in, &f, 51 * MS, 1, &below), AFCD_V_PASS);
}

/* The high-water drop's climb: from the arrival that finds the sojourn
 * past half the horizon, for one interval; a sojourn between a quarter
 * and a half keeps the crossing, one at most a quarter forgets it. */
static void test_high_climb(void)
{
	struct afcd_in in = { .horizon_ns = 100 * MS, .interval_ns = 100 * MS,
			      .now_ns = 1000 * MS };
	struct afcd_queue q = {0};

	CHECK_EQ(afcd_high_climb(&q, &in, 50 * MS), 0);
	CHECK_EQ(q.high_since_ns, 0);
	CHECK_EQ(afcd_high_climb(&q, &in, 51 * MS), 1);
	CHECK_EQ(q.high_since_ns, (1000 * MS) | 1);
	in.now_ns = 1099 * MS;
	CHECK_EQ(afcd_high_climb(&q, &in, 99 * MS), 1);
	in.now_ns = 1100 * MS + 1;                  /* an interval on: standing */
	CHECK_EQ(afcd_high_climb(&q, &in, 60 * MS), 0);
	CHECK_EQ(afcd_high_climb(&q, &in, 30 * MS), 0);
	CHECK_EQ(q.high_since_ns, (1000 * MS) | 1);  /* not yet below a quarter */
	CHECK_EQ(afcd_high_climb(&q, &in, 60 * MS), 0);
	CHECK_EQ(afcd_high_climb(&q, &in, 25 * MS), 0);
	CHECK_EQ(q.high_since_ns, 0);
	in.now_ns = 1200 * MS;                      /* a new climb */
	CHECK_EQ(afcd_high_climb(&q, &in, 51 * MS), 1);
	CHECK_EQ(q.high_since_ns, 1200 * MS | 1);
}

/* One scan of afcd_sb_grow() on a fresh state, then another a window on:
 * the first starts the wait, the second decides. */
static int grow_after_window(struct afcd_config *c, __u32 crowd, __u64 rate)
{
	struct afcd_sb_grow_state g = {0};
	__u64 t = 10 * AFCD_NSEC_PER_SEC;

	if (afcd_sb_grow(c, &g, crowd, rate, t))
		return -1;                      /* never at the first scan */
	return afcd_sb_grow(c, &g, crowd, rate, t + c->window_ns);
}

/* sb_grow: the ring grows once it has had fewer than 3.0 slots a flow of
 * the crowd at every scan for a window, for afcd and fall, with a derived
 * sample_bytes of at least an MTU, to 3.3 slots a flow; and the GC's
 * count of the crowd: flows of their own (born a window ago) that sent
 * within the window. */
static void test_sb_grow(void)
{
	struct afcd_config c, d;
	struct afcd_sb_grow_state g = {0};
	const __u64 G = 1000000000ULL, t = 10 * G;
	struct afcd_flow f = {0};

	afcd_config_defaults(&c, AFCD_ALGO_AFCD, G);
	CHECK(c.flags & AFCD_F_SB_GROW, "default on");
	CHECK_EQ(c.sb_size, 2000);
	CHECK_EQ(c.sample_bytes, 62500);
	/* 2,000 slots for 666 flows: 3.003 a flow, enough; 667: 2.999 */
	d = c;
	CHECK_EQ(grow_after_window(&d, 666, G), 0);
	CHECK_EQ(grow_after_window(&d, 667, G), 1);
	CHECK_EQ(d.sb_size, 2201);                     /* 3.3 x 667 */
	CHECK_EQ(d.sample_bytes, 125000000ULL / 2201); /* derived again */
	d = c;
	CHECK_EQ(grow_after_window(&d, 5000, G), 1);
	CHECK_EQ(d.sb_size, 16500);
	/* short at every scan for a window: a scan with enough starts again */
	d = c;
	CHECK_EQ(afcd_sb_grow(&d, &g, 5000, G, t), 0);
	CHECK_EQ(afcd_sb_grow(&d, &g, 5000, G, t + G / 2), 0);
	CHECK_EQ(afcd_sb_grow(&d, &g, 600, G, t + G / 2 + 1), 0);
	CHECK_EQ(afcd_sb_grow(&d, &g, 5000, G, t + G), 0);
	CHECK_EQ(afcd_sb_grow(&d, &g, 5000, G, t + 2 * G - 1), 0);
	CHECK_EQ(d.sb_size, 2000);
	CHECK_EQ(afcd_sb_grow(&d, &g, 5000, G, t + 2 * G), 1);
	CHECK_EQ(g.grows, 1);
	CHECK_EQ(d.sb_size, 16500);
	CHECK_EQ(afcd_sb_grow(&d, &g, 5000, G, t + 4 * G), 0);   /* enough now */
	/* a crowd that grows again: the ring follows, a window later */
	CHECK_EQ(afcd_sb_grow(&d, &g, 6000, G, t + 5 * G), 0);
	CHECK_EQ(afcd_sb_grow(&d, &g, 6000, G, t + 6 * G), 1);
	CHECK_EQ(d.sb_size, 19800);
	/* not without the flag, a rate, or with a sample_bytes given */
	d = c;
	d.flags &= ~AFCD_F_SB_GROW;
	CHECK_EQ(grow_after_window(&d, 5000, G), 0);
	d = c;
	CHECK_EQ(grow_after_window(&d, 5000, 0), 0);
	d.sample_bytes = 1514;
	CHECK_EQ(grow_after_window(&d, 5000, G), 0);
	CHECK_EQ(d.sb_size, 2000);
	/* a qdisc without a rate (sample_bytes from the measured link rate) */
	d = c;
	d.rate_bps = 0;
	d.flags |= AFCD_F_SAMPLE_AUTO;
	d.sample_bytes = 70000;                         /* within the loader's 2x */
	CHECK_EQ(grow_after_window(&d, 5000, G), 1);
	CHECK_EQ(d.sample_bytes, 125000000ULL / 16500);
	CHECK_EQ(d.rate_bps, 0);
	/* only the algos that judge each flow by the ring */
	afcd_config_defaults(&d, AFCD_ALGO_FALL, G);
	d.flags |= AFCD_F_SB_GROW;
	CHECK_EQ(grow_after_window(&d, 5000, G), 1);
	afcd_config_defaults(&d, AFCD_ALGO_AFD, G);
	d.flags |= AFCD_F_SB_GROW;
	CHECK_EQ(grow_after_window(&d, 5000, G), 0);
	afcd_config_defaults(&d, AFCD_ALGO_CODEL, G);
	d.flags |= AFCD_F_SB_GROW;
	CHECK_EQ(grow_after_window(&d, 5000, G), 0);
	/* the bound: two windows of the link at a sample an MTU (100 Mbit/s,
	 * 1 s, 1,514 bytes: 16,512 slots), and AFCD_SB_SIZE_MAX */
	afcd_config_defaults(&d, AFCD_ALGO_AFCD, 100000000ULL);
	d.flags |= AFCD_F_SB_GROW;
	CHECK_EQ(grow_after_window(&d, 4000, 100000000ULL), 1);
	CHECK_EQ(d.sb_size, 13200);
	CHECK_EQ(d.sample_bytes, d.mtu_bytes);
	CHECK_EQ(grow_after_window(&d, 9000, 100000000ULL), 1);
	CHECK_EQ(d.sb_size, 16512);
	CHECK_EQ(grow_after_window(&d, 20000, 100000000ULL), 0);
	d = c;
	CHECK_EQ(grow_after_window(&d, 100000, G), 1);
	CHECK_EQ(d.sb_size, AFCD_SB_SIZE_MAX);
	CHECK_EQ(grow_after_window(&d, 100000, G), 0);
	/* the crowd: a flow of its own that sent within the window */
	f.born = afcd_flow_born(t - 2 * G);
	f.last_seen_ns = t - G / 2;
	CHECK_EQ(afcd_in_crowd(&f, t, G), 1);
	f.last_seen_ns = t - G - 1;                     /* silent for a window */
	CHECK_EQ(afcd_in_crowd(&f, t, G), 0);
	f.last_seen_ns = t + 5;                         /* another CPU's packet */
	CHECK_EQ(afcd_in_crowd(&f, t, G), 1);
	f.born = afcd_flow_born(t - G / 2);             /* young: a mouse's age */
	CHECK_EQ(afcd_in_crowd(&f, t, G), 0);
	f.born = 0;                                     /* an aggregate */
	CHECK_EQ(afcd_in_crowd(&f, t, G), 0);
}

/* The GC's rule (the kernel's walk and the loader's use the same). */
static void test_gc_idle(void)
{
	struct afcd_flow f = { .last_seen_ns = 1000 };

	/* expected: idle for more than idle_ns and no sample: deleted; a
	 * sample, a recent packet or a packet after `now` keep it */
	CHECK_EQ(afcd_gc_idle(&f, 1000 + 501, 500), 1);
	CHECK_EQ(afcd_gc_idle(&f, 1000 + 500, 500), 0);
	CHECK_EQ(afcd_gc_idle(&f, 999, 0), 0);
	f.m_i = 1;
	CHECK_EQ(afcd_gc_idle(&f, 1000000, 500), 0);
}

/* isolate: the key is reduced to the host. */
static void test_isolate_key(void)
{
	struct afcd_flow_key k = { .ifindex = 3, .proto = 6, .sport = 1, .dport = 2,
				   .saddr = { 1, 2, 3, 4 }, .daddr = { 5, 6, 7, 8 } }, x;

	x = k;
	afcd_isolate_key(0, &x);
	CHECK(!memcmp(&x, &k, sizeof(k)), "flows: unchanged");
	x = k;
	afcd_isolate_key(AFCD_F_ISOLATE_SRC, &x);
	CHECK(x.ifindex == 3 && !x.proto && !x.sport && !x.dport && x.saddr[3] == 4 &&
	      !x.daddr[0] && !x.daddr[3], "srchost");
	x = k;
	afcd_isolate_key(AFCD_F_ISOLATE_DST, &x);
	CHECK(x.ifindex == 3 && !x.proto && !x.saddr[3] && x.daddr[3] == 8, "dsthost");
}

/* Both parsers on the frame src[0..len): direct access on an exact-size
 * heap copy (ASan catches any read past the end), and the copy parser. */
static int parse_buf(const uint8_t *src, int len, struct afcd_pkt *p)
{
	uint8_t *b = malloc(len ? len : 1);
	int st;

	memcpy(b, src, len);
	st = afcd_parse(b, b + len, p);
	free(b);
	/* the qdisc backend's parser on a copy of the frame's first bytes in
	 * its buffer, the rest of which is garbage: on a frame that fits, the
	 * same status and the same result, byte for byte */
	if (len <= AFCD_PARSE_COPY_MAX) {
		uint8_t *c = malloc(AFCD_PARSE_COPY_MAX);
		struct afcd_pkt q;
		int st2;

		memset(c, 0xa5, AFCD_PARSE_COPY_MAX);
		memcpy(c, src, len);
		st2 = afcd_parse_copy(c, (__u32)len, &q);
		free(c);
		CHECK(st2 == st && !memcmp(&q, p, sizeof(q)),
		      "copy parser differs on %d bytes: %d vs %d", len, st2, st);
	}
	return st;
}

static void test_parse_basic(void)
{
	uint8_t buf[PKT_MAX];
	struct afcd_pkt p;
	struct pkt_spec s = pkt_tcp4(40000, 100);
	int len;

	s.ecn = 2;
	len = pkt_build(buf, &s);
	CHECK_EQ(parse_buf(buf, len, &p), AFCD_P_IP);
	CHECK_EQ(p.family, 4);
	CHECK_EQ(p.ecn, 2);
	CHECK_EQ(p.l3_off, 14);
	CHECK_EQ(p.key.proto, 6);
	CHECK_EQ(ntohs(p.key.sport), 40000);
	CHECK_EQ(ntohs(p.key.dport), 5201);
	CHECK_EQ(ntohl(p.key.saddr[3]), 0xC6120001);
	CHECK_EQ(ntohl(p.key.saddr[2]), 0xffff);   /* IPv4-mapped */
	CHECK_EQ(p.key.saddr[0], 0);

	s.vlans = 2;
	len = pkt_build(buf, &s);
	CHECK_EQ(parse_buf(buf, len, &p), AFCD_P_IP);
	CHECK_EQ(p.l3_off, 22);
	CHECK_EQ(ntohs(p.key.sport), 40000);

	s = pkt_tcp6(40001, 100);
	s.ecn = 1;
	s.vlans = 1;
	len = pkt_build(buf, &s);
	CHECK_EQ(parse_buf(buf, len, &p), AFCD_P_IP);
	CHECK_EQ(p.family, 6);
	CHECK_EQ(p.ecn, 1);
	CHECK_EQ(p.l3_off, 18);
	CHECK_EQ(ntohs(p.key.sport), 40001);
	CHECK_EQ(((uint8_t *)p.key.daddr)[15], 2);
	CHECK_EQ(p.key.family, 6);
	CHECK_EQ(p.key.agg, 0);

	/* an IPv6 packet with the IPv4-mapped addresses and the ports of an
	 * IPv4 flow does not spell that flow's key (it would share its state) */
	{
		struct pkt_spec v4 = pkt_tcp4(40000, 100), v6 = pkt_tcp6(40000, 100);
		struct afcd_pkt p4, p6;

		len = pkt_build(buf, &v4);
		CHECK_EQ(parse_buf(buf, len, &p4), AFCD_P_IP);
		memcpy(v6.src6, p4.key.saddr, 16);
		memcpy(v6.dst6, p4.key.daddr, 16);
		len = pkt_build(buf, &v6);
		CHECK_EQ(parse_buf(buf, len, &p6), AFCD_P_IP);
		CHECK(!memcmp(p4.key.saddr, p6.key.saddr, 32), "same addresses");
		CHECK(!afcd_flow_key_eq(&p4.key, &p6.key), "v4-mapped IPv6 spells an IPv4 key");
		CHECK_EQ(p4.key.family, 4);
	}
}

static void test_parse_ipv6_ext_and_fragments(void)
{
	uint8_t buf[PKT_MAX];
	/* hop-by-hop (8 B) -> destination options (16 B) -> TCP */
	const uint8_t ext[24] = { 60, 0, 1, 4, 0, 0, 0, 0,
				  6, 1, 1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	/* fragment header, offset 0, M = 1 -> UDP */
	const uint8_t frag[8] = { 17, 0, 0x00, 0x01, 0, 0, 0, 1 };
	/* atomic fragment (offset 0, M = 0) -> TCP: parsed through */
	const uint8_t afrag[8] = { 6, 0, 0, 0, 0, 0, 0, 1 };
	uint8_t chain[8 * 16];
	struct afcd_pkt p;
	struct pkt_spec s = pkt_tcp6(40002, 200);
	int len, i;

	s.v6_ext = ext;
	s.v6_ext_len = sizeof(ext);
	s.v6_first_nh = 0;
	len = pkt_build(buf, &s);
	CHECK_EQ(parse_buf(buf, len, &p), AFCD_P_IP);
	CHECK_EQ(p.key.proto, 6);
	CHECK_EQ(ntohs(p.key.sport), 40002);

	s.v6_ext = frag;
	s.v6_ext_len = sizeof(frag);
	s.v6_first_nh = 44;
	len = pkt_build(buf, &s);
	CHECK_EQ(parse_buf(buf, len, &p), AFCD_P_IP);
	CHECK_EQ(p.fragment, 1);
	CHECK_EQ(p.key.proto, 17);
	CHECK_EQ(p.key.sport, 0);

	s.v6_ext = afrag;
	s.v6_ext_len = sizeof(afrag);
	len = pkt_build(buf, &s);
	CHECK_EQ(parse_buf(buf, len, &p), AFCD_P_IP);
	CHECK_EQ(p.fragment, 0);
	CHECK_EQ(ntohs(p.key.sport), 40002);

	/* seven destination-options headers (routers forward these): followed,
	 * as the kernel's flow dissector does up to 15 */
	for (i = 0; i < 16; i++) {
		memset(chain + 8 * i, 0, 8);
		chain[8 * i] = i == 6 ? 6 : 60;
	}
	s.v6_ext = chain;
	s.v6_ext_len = 7 * 8;
	s.v6_first_nh = 60;
	len = pkt_build(buf, &s);
	CHECK_EQ(parse_buf(buf, len, &p), AFCD_P_IP);
	CHECK_EQ(ntohs(p.key.sport), 40002);
	CHECK_EQ(p.key.proto, 6);
	/* sixteen: longer than the flow dissector (and we) follow */
	chain[8 * 6] = 60;
	chain[8 * 15] = 6;
	s.v6_ext_len = 16 * 8;
	len = pkt_build(buf, &s);
	CHECK_EQ(parse_buf(buf, len, &p), AFCD_P_MALFORMED);

	/* IPv4 fragments: first (MF) and later (offset) both have ports 0 */
	s = pkt_tcp4(40003, 100);
	s.frag_off = 0x2000;
	len = pkt_build(buf, &s);
	CHECK_EQ(parse_buf(buf, len, &p), AFCD_P_IP);
	CHECK_EQ(p.fragment, 1);
	CHECK_EQ(p.key.sport, 0);
	s.frag_off = 0x0010;
	len = pkt_build(buf, &s);
	CHECK_EQ(parse_buf(buf, len, &p), AFCD_P_IP);
	CHECK_EQ(p.fragment, 1);
	s.frag_off = 0x4000; /* DF only: not a fragment */
	len = pkt_build(buf, &s);
	CHECK_EQ(parse_buf(buf, len, &p), AFCD_P_IP);
	CHECK_EQ(p.fragment, 0);
}

static void test_parse_malformed(void)
{
	uint8_t buf[PKT_MAX];
	struct afcd_pkt p;
	struct pkt_spec s = pkt_tcp4(40004, 60);
	int len, cut, st;

	len = pkt_build(buf, &s);
	buf[14] = 0x44; /* IHL 4 < 5 */
	CHECK_EQ(parse_buf(buf, len, &p), AFCD_P_MALFORMED);
	buf[14] = 0x55; /* version 5 */
	CHECK_EQ(parse_buf(buf, len, &p), AFCD_P_MALFORMED);
	buf[14] = 0x4f; /* IHL 15: options run past the frame */
	CHECK_EQ(parse_buf(buf, 40, &p), AFCD_P_MALFORMED);

	/* ARP is not IP */
	len = pkt_build(buf, &s);
	buf[12] = 0x08;
	buf[13] = 0x06;
	CHECK_EQ(parse_buf(buf, len, &p), AFCD_P_NON_IP);

	/* every truncation of IPv4, double-VLAN IPv6 with extension headers */
	{
		const uint8_t ext[16] = { 60, 0, 1, 4, 0, 0, 0, 0, 6, 0, 1, 4, 0, 0, 0, 0 };
		struct pkt_spec v[2] = { pkt_tcp4(1, 60), pkt_tcp6(2, 100) };

		v[1].vlans = 2;
		v[1].v6_ext = ext;
		v[1].v6_ext_len = sizeof(ext);
		v[1].v6_first_nh = 0;
		for (int k = 0; k < 2; k++) {
			int hdr_end;

			len = pkt_build(buf, &v[k]);
			hdr_end = k == 0 ? 14 + 20 + 4 : 22 + 40 + 16 + 4;
			for (cut = 0; cut <= len; cut++) {
				st = parse_buf(buf, cut, &p);
				if (cut >= hdr_end)
					CHECK(st == AFCD_P_IP, "k %d cut %d st %d", k, cut, st);
				else
					CHECK(st != AFCD_P_IP, "k %d cut %d st %d", k, cut, st);
			}
		}
	}
}

static void test_parse_random_bytes(void)
{
	uint8_t buf[256];
	struct afcd_pkt p;
	__u64 x = 0x1234567;
	int i, j, len;

	for (i = 0; i < 200000; i++) {
		for (j = 0; j < (int)sizeof(buf); j++) {
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			buf[j] = (uint8_t)x;
		}
		/* bias toward IP ethertypes and VLANs so deep paths run */
		if (i & 1) { buf[12] = 0x86; buf[13] = 0xdd; buf[14] = 0x60 | (buf[14] & 0xf); }
		if (i & 2) { buf[12] = 0x08; buf[13] = 0x00; buf[14] = 0x40 | (buf[14] & 0xf); }
		if (i & 4) { buf[16] = buf[12]; buf[17] = buf[13]; buf[12] = 0x81; buf[13] = 0; }
		len = (int)(x % sizeof(buf));
		(void)parse_buf(buf, len, &p);
	}
	CHECK(1, "no crash");
}

int main(int argc, char **argv)
{
	filter = argc > 1 ? argv[1] : NULL;
	TEST(test_tx_ns_exact);
	TEST(test_edt_schedule);
	TEST(test_newton_converges);
	TEST(test_control_law_precedence);
	TEST(test_should_drop_window);
	TEST(test_control_law_spacing);
	TEST(test_codel_resume);
	TEST(test_target_i_fixed_point);
	TEST(test_afd_probability);
	TEST(test_afd_ecn_marks_near_share_only);
	TEST(test_mouse_is_young);
	TEST(test_seen_keeps_first_sight);
	TEST(test_police_law);
	TEST(test_fair_now_fallback);
	TEST(test_fall_fallback_cached);
	TEST(test_burst_share);
	TEST(test_decide_policer);
	TEST(test_mice_floor);
	TEST(test_mice_opening);
	TEST(test_decide_police_mark_once);
	TEST(test_crowd_gate);
	TEST(test_far_gate);
	TEST(test_codel_state_queue);
	TEST(test_decide_stages);
	TEST(test_gc_idle);
	TEST(test_qdisc_helpers);
	TEST(test_ce_owed);
	TEST(test_high_water);
	TEST(test_high_climb);
	TEST(test_sb_grow);
	TEST(test_isolate_key);
	TEST(test_sampling_probability);
	TEST(test_flow_rng);
	TEST(test_flow_id_is_siphash13);
	TEST(test_flow_id_no_differentials);
	TEST(test_flow_id);
	TEST(test_m_fair_fallback);
	TEST(test_isqrt);
	TEST(test_fall_global_target);
	TEST(test_afd_controller);
	TEST(test_waterfill_max_min);
	TEST(test_sdiv);
	TEST(test_mul_div);
	TEST(test_rate_ewma);
	TEST(test_refresh_step);
	TEST(test_parse_basic);
	TEST(test_parse_ipv6_ext_and_fragments);
	TEST(test_parse_malformed);
	TEST(test_parse_random_bytes);
	return test_summary();
}
