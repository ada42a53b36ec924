// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The demo's workloads in the closed loop of model senders (loop.h):
 * utilization, shares and delay, on the test clock. */
#include "harness.h"
#include "loop.h"

/* The demo's setting (README, testbed/bottleneck.py) at 35 Mbit/s: buffer
 * 1 BDP, target 5 ms, interval 100 ms, update period 10 ms, 30 s of
 * which 10 are warm-up. */
static struct loop_cfg demo_cfg(__u32 algo, double rtt_s)
{
	struct loop_cfg c = {
		.algo = algo, .flags = AFCD_F_POLICE, .rate_bps = 35e6, .rtt_s = rtt_s,
		.buffer_bdp = 1.0, .target_s = 0.005, .interval_s = 0.100, .update_s = 0.010,
		.secs = 30.0, .warm_s = 10.0, .seed = 7,
	};
	return c;
}

/* AFCD_LOOP="algo rtt_ms secs kinds" (kinds: c cubic, r reno, uN udp at
 * N x the rate, e.g. "cu1.5"): one run printed, nothing checked; for
 * trying a change of the decision in seconds. */
static void test_loop_explore(void)
{
	const char *spec = getenv("AFCD_LOOP");
	char algo[16], kinds[64], *p;
	double rtt_ms, secs;
	struct loop_flow f[16];
	struct loop_res r;
	struct loop_cfg c;
	int n = 0;

	if (!spec) {
		printf("    (AFCD_LOOP unset: nothing to explore)\n");
		return;
	}
	if (sscanf(spec, "%15s %lf %lf %63s", algo, &rtt_ms, &secs, kinds) != 4) {
		CHECK(0, "AFCD_LOOP: algo rtt_ms secs kinds");
		return;
	}
	c = demo_cfg(!strcmp(algo, "fall") ? AFCD_ALGO_FALL : !strcmp(algo, "codel") ? AFCD_ALGO_CODEL : !strcmp(algo, "droptail") ?
		     AFCD_ALGO_DROPTAIL : AFCD_ALGO_AFCD, rtt_ms / 1e3);
	if (getenv("AFCD_LOOP_RATE"))
		c.rate_bps = atof(getenv("AFCD_LOOP_RATE")) * 1e6;
	if (getenv("AFCD_LOOP_SEED"))
		c.seed = strtoull(getenv("AFCD_LOOP_SEED"), NULL, 0);
	if (getenv("AFCD_LOOP_FLAGS"))
		c.flags = (__u32)strtoul(getenv("AFCD_LOOP_FLAGS"), NULL, 0);
	c.secs = secs;
	c.warm_s = secs / 3;
	memset(f, 0, sizeof(f));
	for (p = kinds; *p && n < 16; p++) {
		if (*p == 'c' || *p == 'r' || *p == 'C' || *p == 'R') {
			f[n].kind = (*p == 'c' || *p == 'C') ? LOOP_CUBIC : LOOP_RENO;
			f[n++].ect = *p == 'C' || *p == 'R';
		} else if (*p == 'u') {
			f[n].kind = LOOP_UDP;
			f[n++].rate_bps = strtod(p + 1, &p) * c.rate_bps;
			p--;
		}
	}
	if (getenv("AFCD_LOOP_ECN"))
		c.flags |= AFCD_F_ECN;
	CHECK(!loop_run(&c, f, n, &r), "loop_run");
	loop_print(spec, f, n, &r);
}

const struct test_case loop_tests[] = {
	TC(test_loop_explore),
	{ NULL },
};
