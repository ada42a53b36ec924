// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The control program: refresh step against the host, the timer, GC (BPF_PROG_TEST_RUN; see harness.h). */
#include "harness.h"
#include "afcd_decide.h"

/* Count passed packets, their sojourn and idle time in the per-CPU parts of
 * slot's counters (afcd_qpcpu), CPU c getting (c + 1) shares of each. */
static void add_pcpu(__u32 slot, __u64 passed, __u64 sojourn_ns, __u64 idle_ns)
{
	int ncpu = libbpf_num_possible_cpus(), cpu;
	struct afcd_qpcpu *pc = calloc((size_t)(ncpu > 0 ? ncpu : 1), sizeof(*pc));
	size_t sz = (size_t)ncpu * sizeof(*pc);

	CHECK(pc && ncpu > 0 && !bpf_map__lookup_elem(skel->maps.afcd_qpcpu, &slot, 4, pc, sz, 0),
	      "per-CPU counters");
	for (cpu = 0; pc && cpu < ncpu; cpu++) {
		pc[cpu].stats[AFCD_S_PASSED] += passed * (__u64)(cpu + 1);
		pc[cpu].sojourn_sum_ns += sojourn_ns * (__u64)(cpu + 1);
		pc[cpu].stats[AFCD_S_IDLE_NS] += idle_ns * (__u64)(cpu + 1);
	}
	CHECK(pc && !bpf_map__update_elem(skel->maps.afcd_qpcpu, &slot, 4, pc, sz, BPF_ANY),
	      "per-CPU counters");
	free(pc);
}

/* The BPF-compiled refresh step computes exactly what the host-compiled
 * one does (same header), step after step, with the loader's scan: the
 * BPF one summing the queue's counters over every CPU's part, the host
 * one on the folded reading. */
static void test_ctl_refresh_matches_host(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_FALL);
	struct afcd_scan sc = { .heartbeat_ns = 1 };
	static struct afcd_sb_hist h;
	struct afcd_est host = {0};
	struct afcd_queue q;
	__u32 slot = slot_of(1);
	int i;

	SETUP_CTL();
	c.sample_bytes = 6250;
	c.window_ns = 1000 * MS;
	c.alpha_milli = 1700;
	c.beta_milli = 1800;
	c.update_period_ns = 1 * MS;
	set_cfg(1, &c);
	c.slot = slot;
	c.ifindex = 1;
	put_scan(1, &sc);
	h.n[1] = 3;       /* 3 mice, 9 long flows: 150 x 3, 300 x 6 */
	h.n[150] = 3;
	h.n[300] = 6;
	scan_from_hist(&h, 2000, 1500, &sc);
	put_scan(1, &sc);
	for (i = 0; i < 50; i++) {
		__u64 now = 1000 * MS + (__u64)i * MS;
		struct afcd_est bpf;

		/* traffic between refreshes: counters move as the datapath's do,
		 * the queue's in its CPUs' parts (the BPF step sums them) */
		CHECK(!bpf_map__lookup_elem(skel->maps.afcd_queue, &slot, 4, &q, sizeof(q), 0),
		      "queue");
		q.astats[AFCD_A_SAMPLED] += 2 + i % 3;
		q.astats[AFCD_A_SAMPLED_BYTES] += (2 + i % 3) * 6250;
		q.t_last_ns = now + (__u64)(i % 5) * MS;
		q.n_active = 12;
		CHECK(!bpf_map__update_elem(skel->maps.afcd_queue, &slot, 4, &q, sizeof(q), BPF_ANY),
		      "queue");
		add_pcpu(slot, 80, 80 * (__u64)(i % 7) * MS, (__u64)(i % 3) * MS);
		CHECK_EQ(ctl_op(AFCD_CTL_REFRESH, 1, slot, now, 0, NULL), 0);
		q = get_queue(1);
		afcd_refresh(&c, &q, NULL, &sc, &host, now);
		bpf = get_est(1);
		CHECK(!memcmp(&bpf, &host, sizeof(host)),
		      "step %d: bpf m_fair %u gt %llu arrival %llu, host %u %llu %llu", i,
		      bpf.m_fair, (unsigned long long)bpf.global_target_ns,
		      (unsigned long long)bpf.arrival_bps, host.m_fair,
		      (unsigned long long)host.global_target_ns,
		      (unsigned long long)host.arrival_bps);
	}
	CHECK_EQ(host.refreshes, 50);
	CHECK_EQ(host.global_target_ns, 20 * MS / 3);   /* RTT / sqrt(9 long flows) */
	/* errors: no config, slot of another interface */
	CHECK_EQ(ctl_op(AFCD_CTL_REFRESH, 77, 0, 1, 0, NULL), -ENOENT);
	CHECK_EQ(ctl_op(AFCD_CTL_REFRESH, 1, slot + 1, 1, 0, NULL), -EINVAL);
	CHECK_EQ(ctl_op(AFCD_CTL_ARM, 77, 0, 0, 0, NULL), -ENOENT);
	CHECK_EQ(ctl_op(99, 1, slot, 0, 0, NULL), -EINVAL);
	/* anything but a control frame passes untouched: a TCP packet, a
	 * control frame without the magic */
	{
		struct pkt_spec tcp = pkt_tcp4(1000, 200);
		struct afcd_ctl_frame f = { .eth_proto = htons(AFCD_CTL_ETH_P),
					    .a = { .op = AFCD_CTL_GC, .ifindex = 1 } }, out;
		__u8 buf[PKT_MAX];
		LIBBPF_OPTS(bpf_test_run_opts, o, .repeat = 1);

		o.data_in = buf;
		o.data_size_in = pkt_build(buf, &tcp);
		CHECK(!bpf_prog_test_run_opts(bpf_program__fd(ctl->progs.afcd_ctl), &o), "run");
		CHECK_EQ(o.retval, TC_ACT_OK);
		o.data_in = &f;
		o.data_size_in = sizeof(f);
		o.data_out = &out;
		o.data_size_out = sizeof(out);
		CHECK(!bpf_prog_test_run_opts(bpf_program__fd(ctl->progs.afcd_ctl), &o), "run");
		CHECK_EQ(o.retval, TC_ACT_SHOT);
		CHECK_EQ(out.a.ret, -EBADMSG);
		CHECK_EQ(out.a.deleted, 0);
	}
	unload_ctl();
}

/* The timer refreshes every update_period while the loader's scan is
 * fresh, stops on DISARM, and stops by itself (zeroing the heartbeat, so
 * that the datapath falls back) when the scan is older than stale_after. */
static void test_ctl_timer_refreshes_and_stops(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_FALL);
	struct afcd_scan sc = {0};
	static struct afcd_sb_hist h;
	__u32 slot = slot_of(1);
	struct afcd_est e;
	__u64 r1, t0;

	SETUP_CTL();
	c.sample_bytes = 6250;
	c.update_period_ns = 1 * MS;
	c.stale_after_ns = 300 * MS;
	set_cfg(1, &c);
	sc.heartbeat_ns = mono_ns();
	put_scan(1, &sc);
	h.n[25] = 4;                  /* 4 long flows */
	scan_from_hist(&h, 2000, 2000, &sc);
	put_scan(1, &sc);
	t0 = mono_ns();
	CHECK_EQ(ctl_op(AFCD_CTL_ARM, 1, slot, 0, 0, NULL), 0);
	usleep(100 * 1000);
	e = get_est(1);
	/* ~100 firings at 1 ms; timers run late under load, so only a floor */
	CHECK(e.refreshes >= 20, "refreshes %llu in 100 ms", (unsigned long long)e.refreshes);
	CHECK_EQ(e.refresher, AFCD_REFRESHER_KERNEL);
	CHECK(e.heartbeat_ns > t0, "heartbeat %llu", (unsigned long long)e.heartbeat_ns);
	CHECK_EQ(e.global_target_ns, 10 * MS);           /* 20 ms / sqrt(4) */
	CHECK(e.busy_ns > 0, "busy");
	printf("    timer: %llu refreshes in 100 ms, %.2f us per refresh step\n",
	       (unsigned long long)e.refreshes, e.refreshes ? e.busy_ns / 1e3 / e.refreshes : 0);
	/* re-arming an armed timer (a restarted loader) is fine */
	CHECK_EQ(ctl_op(AFCD_CTL_ARM, 1, slot, 0, 0, NULL), 0);
	CHECK_EQ(ctl_op(AFCD_CTL_DISARM, 1, slot, 0, 0, NULL), 0);
	r1 = get_est(1).refreshes;
	usleep(30 * 1000);
	CHECK_EQ(get_est(1).refreshes, r1);
	/* a loader that stops scanning (kill -9): the timer stops itself */
	CHECK_EQ(ctl_op(AFCD_CTL_ARM, 1, slot, 0, 0, NULL), 0);
	usleep(400 * 1000);                              /* > stale_after */
	e = get_est(1);
	CHECK_EQ(e.heartbeat_ns, 0);
	CHECK_EQ(e.refresher, AFCD_REFRESHER_NONE);
	r1 = e.refreshes;
	usleep(30 * 1000);
	CHECK_EQ(get_est(1).refreshes, r1);
	/* a config that goes away (detach) stops it too */
	sc.heartbeat_ns = mono_ns();
	put_scan(1, &sc);
	CHECK_EQ(ctl_op(AFCD_CTL_ARM, 1, slot, 0, 0, NULL), 0);
	usleep(20 * 1000);
	del_cfg(1);
	usleep(20 * 1000);
	r1 = get_est(1).refreshes;
	usleep(30 * 1000);
	CHECK_EQ(get_est(1).refreshes, r1);
	unload_ctl();
}

/* GC deletes exactly the interface's idle flows without samples, and counts
 * its crowd (afcd_in_crowd()). */
static void test_ctl_gc_idle_flows(void)
{
	struct afcd_flow_key k = { .proto = 17 };
	struct afcd_flow f;
	__u64 deleted = 0, now = 100000 * MS, id;
	const __u64 key7[2] = { 7, 7 };
	int i;

	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);

	SETUP_CTL();
	c.window_ns = 1000 * MS;
	set_cfg(1, &c);
	for (i = 0; i < 1000; i++) {
		memset(&f, 0, sizeof(f));
		k.ifindex = i < 800 ? 1 : 2;
		k.sport = (__u16)i;
		f.last_seen_ns = i % 2 ? now - 20000 * MS : now - 1000 * MS; /* odd: idle 20 s */
		f.m_i = i % 4 == 3;                                        /* some still sampled */
		/* a third born 5 s ago, the rest half a window ago (young) */
		f.born = afcd_flow_born(i % 3 ? now - 500 * MS : now - 5000 * MS);
		f.key = k;
		id = afcd_flow_id(&k, key7);
		CHECK(!bpf_map__update_elem(skel->maps.afcd_flows, &id, sizeof(id), &f, sizeof(f),
					    BPF_ANY), "flow %d", i);
	}
	CHECK_EQ(ctl_op(AFCD_CTL_GC, 1, 0, now, 10000 * MS, &deleted), 0);
	/* ifindex 1: i < 800, odd (idle), i % 4 == 1 (no samples): 200 */
	CHECK_EQ(deleted, 200);
	/* its crowd: sent within the window (even), born 5 s ago (i % 3 == 0):
	 * i % 6 == 0, 134 of them */
	CHECK_EQ(ctl_crowd, 134);
	CHECK_EQ(map_count(skel->maps.afcd_flows), 800);
	for (i = 0; i < 1000; i += 97) {
		k.ifindex = i < 800 ? 1 : 2;
		k.sport = (__u16)i;
		id = afcd_flow_id(&k, key7);
		CHECK((bpf_map__lookup_elem(skel->maps.afcd_flows, &id, sizeof(id), &f, sizeof(f), 0)
		       != 0) == (i < 800 && i % 4 == 1), "flow %d", i);
	}
	CHECK_EQ(ctl_op(AFCD_CTL_GC, 1, 0, now, 10000 * MS, &deleted), 0);
	CHECK_EQ(deleted, 0);
	unload_ctl();
}

const struct test_case ctl_tests[] = {
	TC(test_ctl_refresh_matches_host),
	TC(test_ctl_timer_refreshes_and_stops),
	TC(test_ctl_gc_idle_flows),
	{ NULL },
};
