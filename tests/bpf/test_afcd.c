// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The drop laws in the datapath: AFCD heavy and light flows, CoDel, codel_state, target_i from the estimate, AFD (BPF_PROG_TEST_RUN; see harness.h). */
#include "harness.h"

/* ---- AFCD --------------------------------------------------------------- */

/* Heavy flow A (3 of every 4 packets) and light flow B share a queue
 * offered at 2x its rate. Every packet takes one sample (sample_bytes = its
 * length), so
 * m_A ~ 75, m_B ~ 25 of sb_size 100, N = 2 and m_fair = 50 (fallback):
 * target_A = 5 ms (50/75)^3 ~ 1.5 ms, target_B = inf. A is dropped, but
 * only after its sojourn stayed above target_A for an interval; B never. */
static void test_afcd_heavy_dropped_light_never(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	struct pkt_spec a = pkt_tcp4(1111, 1514), b = pkt_tcp4(2222, 1514);
	__u64 now = 1000 * MS, above_since = 0, first_drop = 0, window_end = 0;
	int i, drops_a = 0, drops_b = 0;
	struct out o;

	SETUP();
	c.interval_ns = 20 * MS;
	c.sample_bytes = 1514;        /* one sample a packet */
	c.sb_size = 100;
	set_cfg(1, &c);
	for (i = 0; i < 1200; i++, now += 60 * US) {
		int is_b = (i % 4) == 3;
		__u64 t_last = peek_t_last(1);
		__u64 t_dep = (t_last > now ? t_last : now) + 121120;
		struct afcd_flow f;

		set_now(now);
		run(is_b ? &b : &a, &o);
		if (o.verdict == TC_ACT_SHOT) {
			(is_b ? &drops_b : &drops_a)[0]++;
			if (!first_drop)
				first_drop = t_dep;
			continue;
		}
		/* the CoDel clock is t_dep: note when A's window (re)opened */
		if (!is_b && !first_drop && !get_flow(&a, 1, &f)) {
			if (f.first_above_ns && f.first_above_ns != window_end) {
				window_end = f.first_above_ns;
				above_since = t_dep;
			}
		}
	}
	CHECK_EQ(drops_b, 0);
	CHECK(drops_a > 10, "drops_a %d", drops_a);
	/* dropped only after A's sojourn stayed above target_A an interval */
	CHECK(above_since && first_drop >= above_since + c.interval_ns,
	      "first drop %llu, above since %llu", (unsigned long long)first_drop,
	      (unsigned long long)above_since);
	{
		struct afcd_flow fa, fb;
		struct afcd_queue q = get_queue(1);

		CHECK(!get_flow(&a, 1, &fa) && !get_flow(&b, 1, &fb), "flows");
		CHECK(fa.m_i > 60 && fa.m_i < 90, "m_A %u", fa.m_i);
		CHECK(fb.m_i > 15 && fb.m_i < 40, "m_B %u", fb.m_i);
		CHECK_EQ(fa.m_i + fb.m_i, 100);
		CHECK_EQ(fb.target_ns, AFCD_TARGET_INF);
		CHECK(fa.target_ns < 5 * MS, "target_A %llu", (unsigned long long)fa.target_ns);
		CHECK_EQ(q.n_active, 2);
		CHECK_EQ(q.stats[AFCD_S_AQM_DROP], drops_a);
		CHECK(q.stats[AFCD_S_STALE_FALLBACK] > 0, "fallback used");
		CHECK_EQ(q.astats[AFCD_A_SAMPLED], 1200);
		CHECK_EQ(map_count(skel->maps.afcd_sb_count), 2);
	}
	unload();
}

/* Global CoDel (algo codel) on a queue held above target: the control
 * law spaces drops interval/sqrt(count) on the t_dep clock. */
static void test_codel_law_in_datapath(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_CODEL);
	struct pkt_spec a = pkt_tcp4(1111, 1514);
	__u64 now = 1000 * MS, last_drop_t = 0;
	int i, drops = 0, checked = 0;
	struct out o;

	SETUP();
	c.interval_ns = 20 * MS;
	c.horizon_ns = 1000 * MS;
	set_cfg(1, &c);
	for (i = 0; i < 6000; i++, now += 70 * US) {
		struct afcd_queue q;
		__u64 t_dep, t_last;

		set_now(now);
		t_last = peek_t_last(1);
		t_dep = (t_last > now ? t_last : now) + 121120;
		if (run(&a, &o) != TC_ACT_SHOT)
			continue;
		drops++;
		q = get_queue(1);
		if (drops >= 6 && last_drop_t) {
			/* gap before this drop was set at count - 1 */
			double want = c.interval_ns / sqrt((double)(q.gcv.count - 1));
			double gap = (double)(t_dep - last_drop_t);

			CHECK(fabs(gap - want) < 0.03 * want + 2 * 121120,
			      "count %u gap %.0f want %.0f", q.gcv.count, gap, want);
			checked++;
		}
		last_drop_t = t_dep;
	}
	CHECK(drops > 20 && checked > 10, "drops %d checked %d", drops, checked);
	{
		struct afcd_queue q = get_queue(1);

		CHECK_EQ(q.gcv.count, drops);  /* never left the dropping state */
		CHECK_EQ(q.stats[AFCD_S_AQM_DROP], drops);
	}
	unload();
}

/* Two flows above fair share: per-flow CoDel state keeps a count per
 * flow; codel_state = global and queue keep one count for the queue. */
static void codel_state_case(__u32 flags, __u32 *count_q, __u32 *count_a, __u32 *count_b,
			     int *drops)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	struct pkt_spec a = pkt_tcp4(1111, 1514), b = pkt_tcp4(2222, 1514);
	__u64 now = 1000 * MS;
	struct afcd_flow fa, fb;
	struct out o;
	int i;

	*drops = 0;
	if (load()) {
		CHECK(0, "load");
		return;
	}
	c.interval_ns = 20 * MS;
	c.sample_bytes = 1514;        /* one sample a packet */
	c.sb_size = 100;
	c.flags = flags;
	set_cfg(1, &c);
	for (i = 0; i < 1500; i++, now += 60 * US) {
		set_now(now);
		set_est(1, 10, 0);   /* m_fair = 10: both flows (~50) far above */
		if (run((i & 1) ? &b : &a, &o) == TC_ACT_SHOT)
			(*drops)++;
	}
	get_flow(&a, 1, &fa);
	get_flow(&b, 1, &fb);
	*count_q = get_queue(1).gcv.count;
	*count_a = fa.cv.count;
	*count_b = fb.cv.count;
	CHECK_EQ(get_queue(1).stats[AFCD_S_STALE_FALLBACK], 0);
	unload();
}

static void test_codel_state_global_vs_per_flow(void)
{
	__u32 q, fa, fb;
	int drops;

	codel_state_case(0, &q, &fa, &fb, &drops);
	CHECK(drops > 10, "per-flow drops %d", drops);
	CHECK_EQ(q, 0);
	CHECK(fa > 1 && fb > 1, "per-flow counts %u %u", fa, fb);
	CHECK(fa + fb <= (__u32)drops, "counts %u + %u vs drops %d", fa, fb, drops);

	codel_state_case(AFCD_F_CODEL_GLOBAL, &q, &fa, &fb, &drops);
	CHECK(drops > 10, "global drops %d", drops);
	CHECK_EQ(fa, 0);
	CHECK_EQ(fb, 0);
	CHECK(q > 1 && q <= (__u32)drops, "global count %u drops %d", q, drops);

	codel_state_case(AFCD_F_CODEL_QUEUE, &q, &fa, &fb, &drops);
	CHECK(drops > 10, "queue drops %d", drops);
	CHECK_EQ(fa, 0);
	CHECK_EQ(fb, 0);
	CHECK(q > 1 && q <= (__u32)drops, "queue count %u drops %d", q, drops);
}

/* The per-flow target from the loader's estimate: (m_fair/m_i)^3 and the
 * 1/64 clamp when m_i >> m_fair. */
static void test_target_i_from_estimate(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	struct pkt_spec a = pkt_tcp4(1111, 100);
	struct afcd_flow f;
	__u64 now = 1000 * MS;

	SETUP();
	c.sample_bytes = 100;        /* one sample a packet */
	c.sb_size = 200;
	set_cfg(1, &c);
	CHECK(!old_flow(&a, 1, now), "old flow");
	fill_samples(&a, 200, &now);      /* m_i = 200 after 200 samples */
	set_est(1, 100, 0);
	run(&a, NULL);
	CHECK(!get_flow(&a, 1, &f), "flow");
	CHECK_EQ(f.m_i, 200);
	CHECK_EQ(f.target_ns, 5 * MS / 8);
	set_est(1, 1, 0);                  /* ratio 1/200 clamps at 1/64 */
	run(&a, NULL);
	get_flow(&a, 1, &f);
	CHECK_EQ(f.target_ns, afcd_target_i_ns(5 * MS, 1, 64, 3, c.horizon_ns));
	CHECK_EQ(f.target_ns, 19);
	set_est(1, 400, 0);                /* half its share: never dropped */
	run(&a, NULL);
	get_flow(&a, 1, &f);
	CHECK_EQ(f.target_ns, AFCD_TARGET_INF);
	set_est(1, 210, 0);                /* just under its share: plain target */
	run(&a, NULL);
	get_flow(&a, 1, &f);
	CHECK_EQ(f.target_ns, 5 * MS);
	/* N = 1 without a loader: m_fair = sb_size = m_i, target_i = target */
	set_now(now + 2000 * MS);          /* estimate now stale */
	run(&a, NULL);
	get_flow(&a, 1, &f);
	CHECK_EQ(f.target_ns, 5 * MS);
	unload();
}

/* ---- AFD -------------------------------------------------------------------- */

static void test_afd_drop_rate(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFD);
	struct pkt_spec a = pkt_tcp4(1111, 100);
	__u64 now = 1000 * MS;
	int i, drops = 0;

	SETUP();
	c.sample_bytes = 100;        /* one sample a packet */
	c.sb_size = 100;
	c.rate_bps = 1000000000000ULL;
	set_cfg(1, &c);
	fill_samples(&a, 100, &now);
	for (i = 0; i < 4000; i++) {
		set_now(now += 10 * US);
		set_est(1, 50, 0);            /* m_i = 100: p = 1 - 50/100 */
		if (run(&a, NULL) == TC_ACT_SHOT)
			drops++;
	}
	CHECK(drops > 1800 && drops < 2200, "drops %d of 4000", drops);
	unload();
}

const struct test_case afcd_tests[] = {
	TC(test_afcd_heavy_dropped_light_never),
	TC(test_codel_law_in_datapath),
	TC(test_codel_state_global_vs_per_flow),
	TC(test_target_i_from_estimate),
	TC(test_afd_drop_rate),
	{ NULL },
};
