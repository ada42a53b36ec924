// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* FaLL: the global target RTT/sqrt(N), the loader estimate, gate 1 (BPF_PROG_TEST_RUN; see harness.h). */
#include "harness.h"

/* ---- FaLL ----------------------------------------------------------------- */

static __u64 fall_target_for_n(int n)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_FALL);
	struct afcd_flow f;
	__u64 now = 1000 * MS;
	int round, k;

	if (load()) {
		CHECK(0, "load");
		return 0;
	}
	c.sample_bytes = 100;   /* one sample a packet */
	c.sb_size = 2 * n;      /* each flow holds two samples: m_i = m_fair = 2 (flows
				 * with one are outside FaLL's N) */
	set_cfg(1, &c);
	for (round = 0; round < 2; round++)
		for (k = 0; k < n; k++) {
			struct pkt_spec s = pkt_tcp4(10000 + k, 100);

			if (!round)
				CHECK(!old_flow(&s, 1, now), "old flow");
			set_now(now += 100 * US);
			run(&s, NULL);
		}
	{
		struct pkt_spec s = pkt_tcp4(10000 + n - 1, 100);

		CHECK(!get_flow(&s, 1, &f), "flow");
		CHECK_EQ(f.m_i, 2);
		CHECK_EQ(get_queue(1).n_active, n);
	}
	unload();
	return f.target_ns;
}

static void test_fall_global_target_n(void)
{
	/* RTT 20 ms, interval 100 ms: RTT/sqrt(N) */
	CHECK_EQ(fall_target_for_n(1), 20 * MS);
	CHECK_EQ(fall_target_for_n(4), 10 * MS);
	CHECK_EQ(fall_target_for_n(100), 2 * MS);
}

static void test_fall_uses_loader_estimate(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_FALL);
	struct pkt_spec a = pkt_tcp4(1111, 100);
	struct afcd_flow f;
	__u64 now = 1000 * MS;

	SETUP();
	c.sample_bytes = 100;   /* one sample a packet */
	c.sb_size = 100;
	set_cfg(1, &c);
	CHECK(!old_flow(&a, 1, now), "old flow");
	fill_samples(&a, 100, &now);
	set_est(1, 50, 3 * MS);            /* (50/100)^3 * 3 ms */
	run(&a, NULL);
	get_flow(&a, 1, &f);
	CHECK_EQ(f.target_ns, 3 * MS / 8);
	unload();
}

/* FaLL gate 1: a flow far above fair share is not dropped while the queue
 * stays below the global target. */
static void test_fall_gate1_blocks(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_FALL);
	struct pkt_spec a = pkt_tcp4(1111, 1514), b = pkt_tcp4(2222, 1514);
	__u64 now = 1000 * MS;
	int i, drops = 0;

	SETUP();
	c.interval_ns = 20 * MS;
	c.sample_bytes = 1514;   /* one sample a packet */
	c.sb_size = 100;
	set_cfg(1, &c);
	/* offered at 1.2x for 2000 packets: the queue reaches ~40 ms */
	for (i = 0; i < 2000; i++, now += 101 * US) {
		set_now(now);
		set_est(1, 10, 100 * MS);  /* gate 1 target 100 ms: never open */
		if (run((i % 4) ? &a : &b, NULL) == TC_ACT_SHOT)
			drops++;
	}
	CHECK_EQ(drops, 0);
	CHECK(get_queue(1).max_sojourn_ns > 20 * MS, "queue built: %llu",
	      (unsigned long long)get_queue(1).max_sojourn_ns);
	/* same load, gate 1 at 1 ms: now the heavy flow is dropped */
	for (i = 0; i < 2000; i++, now += 101 * US) {
		set_now(now);
		set_est(1, 10, 1 * MS);
		if (run((i % 4) ? &a : &b, NULL) == TC_ACT_SHOT)
			drops++;
	}
	CHECK(drops > 0, "drops %d", drops);
	unload();
}

const struct test_case fall_tests[] = {
	TC(test_fall_global_target_n),
	TC(test_fall_uses_loader_estimate),
	TC(test_fall_gate1_blocks),
	{ NULL },
};
