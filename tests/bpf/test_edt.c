// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* EDT spacing, the horizon, non-IP frames, unconfigured interfaces, two CPUs on one clock (BPF_PROG_TEST_RUN; see harness.h). */
#include "harness.h"
#include "sys.h"

/* ---- EDT ---------------------------------------------------------------- */

static void test_edt_spacing(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_DROPTAIL);
	/* the last is a GSO-like packet: 1514 bytes in the buffer, 9000 on the
	 * wire; tx uses the wire length */
	const int lens[] = { 1514, 66, 1000, 1514, 9000 };
	__u64 now = 1000 * MS, t = now, t_burst;
	struct out o;
	unsigned i;

	SETUP();
	set_cfg(1, &c);
	set_now(now);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct pkt_spec s = pkt_tcp4(1000, lens[i] > 1514 ? 1514 : lens[i]);

		next_wire_len = lens[i] > 1514 ? lens[i] : 0;
		CHECK_EQ(run(&s, &o), TC_ACT_OK);
		t += (__u64)lens[i] * 8000000000ULL / c.rate_bps;
		CHECK_EQ(o.tstamp, t);     /* exact: tx = len * 8e9 / rate */
	}
	t_burst = t;
	/* idle for 50 us, within the pacing credit (AFCD_DEF_BURST_NS): the next
	 * packet is scheduled where the clock stood, before its arrival, and
	 * the queue lost no time */
	now = t + 50 * US;
	set_now(now);
	{
		struct pkt_spec s = pkt_tcp4(1000, 1514);

		CHECK_EQ(run(&s, &o), TC_ACT_OK);
		CHECK_EQ(o.tstamp, t + 121120);
		t += 121120;
	}
	/* idle for 10 ms: the clock restarts AFCD_DEF_BURST_NS behind the
	 * arrival, and the rest of the gap counts as idle */
	now = t + 10 * MS;
	set_now(now);
	{
		struct pkt_spec s = pkt_tcp4(1000, 1514);

		CHECK_EQ(run(&s, &o), TC_ACT_OK);
		CHECK_EQ(o.tstamp, now - AFCD_DEF_BURST_NS + 121120);
	}
	{
		struct afcd_queue q = get_queue(1);

		CHECK_EQ(q.stats[AFCD_S_PASSED], 7);
		CHECK_EQ(q.stats[AFCD_S_PASSED_BYTES], 1514 + 66 + 1000 + 1514 + 9000 + 1514 + 1514);
		CHECK_EQ(q.t_last_ns, now - AFCD_DEF_BURST_NS + 121120);
		CHECK_EQ(q.stats[AFCD_S_IDLE_NS], 10 * MS - AFCD_DEF_BURST_NS);
		CHECK_EQ(q.max_sojourn_ns, t_burst - 1000 * MS);
	}
	unload();
}

/* Expected result: a packet its sender stamped (CLOCK_MONOTONIC: TCP's
 * pacing, SO_TXTIME) 50 ms ahead leaves at that stamp, not earlier, while
 * the virtual queue charges it at its arrival: the next, unstamped packet
 * departs one transmission time after it on the virtual clock, not behind
 * the 50 ms; a stamp earlier than the virtual departure, and one on
 * another clock (realtime or TAI: decades ahead), are not kept; one 9 s
 * ahead, within sch_fq's horizon, is (whatever its type: before Linux
 * 6.11 an SO_TXTIME stamp is UNSPEC, and sch_fq honours it). */
static void test_sender_departure_kept(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	struct pkt_spec p = pkt_tcp4(1000, 1514), q = pkt_tcp4(2000, 1514);
	__u64 now = 1000 * MS, tx = 121120;
	struct out o;

	SETUP();
	set_cfg(1, &c);
	set_now(now);
	next_tstamp = now + 50 * MS;               /* TCP's pacing, SO_TXTIME */
	CHECK_EQ(run(&p, &o), TC_ACT_OK);
	CHECK_EQ(o.tstamp, now + 50 * MS);
	CHECK_EQ(peek_t_last(1), now + tx);        /* charged now, not at +50 ms */
	CHECK_EQ(run(&q, &o), TC_ACT_OK);
	CHECK_EQ(o.tstamp, now + 2 * tx);          /* not behind the paced packet */
	next_tstamp = now + tx;                    /* earlier than its virtual departure */
	CHECK_EQ(run(&q, &o), TC_ACT_OK);
	CHECK_EQ(o.tstamp, now + 3 * tx);
	next_tstamp = 1795000000ULL * 1000000000ULL; /* CLOCK_REALTIME's (or TAI's) clock */
	CHECK_EQ(run(&q, &o), TC_ACT_OK);
	CHECK_EQ(o.tstamp, now + 4 * tx);
	next_tstamp = now + 9000 * MS;             /* 9 s ahead: within sch_fq's horizon */
	CHECK_EQ(run(&q, &o), TC_ACT_OK);
	CHECK_EQ(o.tstamp, now + 9000 * MS);
	unload();
}

static void test_horizon_drop(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_DROPTAIL);
	struct pkt_spec big = pkt_tcp4(1000, 1514), small = pkt_tcp4(1000, 66);
	__u64 now = 1000 * MS;
	struct out o;
	int i;

	SETUP();
	c.horizon_ns = 1 * MS;    /* 8 full frames fit (8 * 121120 ns) */
	set_cfg(1, &c);
	set_now(now);
	for (i = 1; i <= 8; i++)
		CHECK_EQ(run(&big, &o), TC_ACT_OK);
	CHECK_EQ(o.tstamp, now + 8 * 121120);
	CHECK_EQ(run(&big, &o), TC_ACT_SHOT);       /* sojourn 1.09 ms > 1 ms */
	CHECK_EQ(run(&big, &o), TC_ACT_SHOT);
	/* a dropped packet did not advance t_last: a small one still fits */
	CHECK_EQ(run(&small, &o), TC_ACT_OK);
	CHECK_EQ(o.tstamp, now + 8 * 121120 + 5280);
	{
		struct afcd_queue q = get_queue(1);
		struct afcd_flow f;

		CHECK_EQ(q.stats[AFCD_S_OVERLIMIT_DROP], 2);
		CHECK_EQ(q.stats[AFCD_S_AQM_DROP], 0);
		CHECK_EQ(q.stats[AFCD_S_PASSED], 9);
		CHECK(!get_flow(&big, 1, &f), "flow state");
		CHECK_EQ(f.drops, 2);
		CHECK_EQ(f.packets, 9);
	}
	unload();
}

static void test_non_ip_never_dropped(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	struct pkt_spec big = pkt_tcp4(1000, 1514);
	__u8 arp[60];
	struct out o;
	int i;

	SETUP();
	c.horizon_ns = 1 * MS;
	set_cfg(1, &c);
	set_now(1000 * MS);
	for (i = 0; i < 9; i++)
		run(&big, &o);
	CHECK_EQ(o.verdict, TC_ACT_SHOT); /* the queue is full */
	memset(arp, 0, sizeof(arp));
	arp[12] = 0x08;
	arp[13] = 0x06;
	CHECK_EQ(run_if(arp, sizeof(arp), 1, &o), TC_ACT_OK);
	CHECK_EQ(o.tstamp, 1000 * MS + 8 * 121120 + 4800); /* still on the virtual queue */
	{
		struct afcd_queue q = get_queue(1);

		CHECK_EQ(q.stats[AFCD_S_NON_IP], 1);
		CHECK_EQ(q.t_last_ns, o.tstamp);
	}
	unload();
}

/* Expected result: 20,000 back-to-back 1514-byte non-IP frames on a 10 Mbit/s
 * queue with a 100 ms horizon never push the clock beyond the horizon (they
 * are dropped as overlimit there), and an IP packet once the queue drained
 * passes again; so do unparsable IP frames. */
static void test_non_ip_flood_bounded_by_horizon(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	struct pkt_spec ip = pkt_tcp4(1000, 1514);
	__u8 frame[1514];
	__u64 now = 1000 * MS;
	struct out o;
	int i, passed = 0;

	SETUP();
	c.rate_bps = 10000000ULL;          /* tx(1514) = 1.2112 ms */
	c.horizon_ns = 100 * MS;
	set_cfg(1, &c);
	set_now(now);
	memset(frame, 0, sizeof(frame));
	frame[12] = 0x88;                  /* LLDP-like EtherType: not IP */
	frame[13] = 0xcc;
	for (i = 0; i < 20000; i++)
		passed += run_if(frame, sizeof(frame), 1, &o) == TC_ACT_OK;
	CHECK(peek_t_last(1) <= now + c.horizon_ns, "t_last %llu ms ahead",
	      (unsigned long long)(peek_t_last(1) - now) / MS);
	CHECK_EQ(passed, 82);              /* floor(100 ms / 1.2112 ms) */
	/* a malformed IPv4 frame (bad version) is bounded the same way */
	{
		__u8 buf[PKT_MAX];
		int len = pkt_build(buf, &ip);

		buf[14] = 0x75;
		CHECK_EQ(run_if(buf, len, 1, &o), TC_ACT_SHOT);
	}
	set_now(now + c.horizon_ns + 2 * MS);
	CHECK_EQ(run(&ip, &o), TC_ACT_OK);
	{
		struct afcd_queue q = get_queue(1);

		CHECK_EQ(q.stats[AFCD_S_NON_IP], 20000);
		CHECK_EQ(q.stats[AFCD_S_OVERLIMIT_DROP], 20000 - 82 + 1);
	}
	unload();
}

static __u64 gstat(__u32 k)
{
	__u64 g[256] = {0}, sum = 0;
	int ncpu = libbpf_num_possible_cpus(), i;

	CHECK(!bpf_map__lookup_elem(skel->maps.afcd_global, &k, sizeof(k), g,
				    sizeof(__u64) * ncpu, 0), "global");
	for (i = 0; i < ncpu; i++)
		sum += g[i];
	return sum;
}

static void test_unconfigured_passthrough(void)
{
	struct pkt_spec s = pkt_tcp4(1000, 1514);
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	struct out o;
	__u32 slot = 0;

	SETUP();
	CHECK_EQ(run(&s, &o), TC_ACT_OK);        /* no config at all */
	CHECK_EQ(o.tstamp, 0);
	c.abi = AFCD_ABI_VERSION + 1;            /* a foreign layout is ignored */
	set_cfg(1, &c);
	CHECK_EQ(run(&s, &o), TC_ACT_OK);
	CHECK_EQ(o.tstamp, 0);
	CHECK_EQ(gstat(AFCD_G_UNCONFIGURED), 2);
	/* an index that leads to another interface's config is no config */
	c.abi = AFCD_ABI_VERSION;
	c.slot = 0;
	c.ifindex = 2;
	put_cfg(1, 0, &c);
	CHECK_EQ(run(&s, &o), TC_ACT_OK);
	CHECK_EQ(o.tstamp, 0);
	CHECK_EQ(gstat(AFCD_G_UNCONFIGURED), 3);
	/* a config whose slot belongs to no / another interface is ignored */
	c.ifindex = 1;
	put_cfg(1, 0, &c);
	{
		struct afcd_queue q = { .ifindex = 77 };

		bpf_map__update_elem(skel->maps.afcd_queue, &slot, 4, &q, sizeof(q), BPF_ANY);
	}
	CHECK_EQ(run(&s, &o), TC_ACT_OK);
	CHECK_EQ(o.tstamp, 0);
	CHECK_EQ(gstat(AFCD_G_BAD_SLOT), 1);
	CHECK_EQ(queues_in_use(), 0);
	/* a config for the qdisc backend: the qdisc decides, this passes
	 * (test_ecn_qdisc_deferred_marks: the marks it owes) */
	c.flags |= AFCD_F_QDISC;
	set_cfg(1, &c);
	CHECK_EQ(run(&s, &o), TC_ACT_OK);
	CHECK_EQ(o.tstamp, 0);
	CHECK_EQ(gstat(AFCD_G_UNCONFIGURED), 3);
	CHECK_EQ(get_queue(1).stats[AFCD_S_PASSED], 0);
	/* claimed properly, the same packet is scheduled */
	c.flags &= ~AFCD_F_QDISC;
	set_cfg(1, &c);
	set_now(5 * MS);
	CHECK_EQ(run(&s, &o), TC_ACT_OK);
	CHECK_EQ(o.tstamp, 5 * MS + 121120);
	unload();
}

/* Expected result: a config is taken only for a device of the namespace
 * that wrote it (afcd_config.netns_cookie against the device's, read by
 * the kfunc and by bpf_probe_read_kernel() alike): with another
 * namespace's cookie the packet passes untouched, no departure stamped,
 * counted as foreign_netns, and the queue's counters and flows stay as
 * they were, and so with a cookie no namespace has (~0); with this
 * namespace's the same packet is scheduled. */
static void test_config_of_another_netns_not_taken(void)
{
	struct pkt_spec s = pkt_tcp4(1000, 1514);
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	struct out o;
	int way;

	for (way = 0; way < 2; way++) {
		test_netns_probe = way;
		SETUP();
		c.netns_cookie = netns_cookie() + 1;
		set_cfg(1, &c);
		set_now(5 * MS);
		CHECK_EQ(run(&s, &o), TC_ACT_OK);
		CHECK_EQ(o.tstamp, 0);
		c.netns_cookie = ~0ULL;
		set_cfg(1, &c);
		CHECK_EQ(run(&s, &o), TC_ACT_OK);
		CHECK_EQ(o.tstamp, 0);
		CHECK_EQ(gstat(AFCD_G_FOREIGN_NETNS), 2);
		CHECK_EQ(get_queue(1).stats[AFCD_S_PASSED], 0);
		CHECK_EQ(map_count(skel->maps.afcd_flows), 0);
		c.netns_cookie = 0;             /* this namespace's */
		set_cfg(1, &c);
		CHECK_EQ(run(&s, &o), TC_ACT_OK);
		CHECK_EQ(o.tstamp, 5 * MS + 121120);
		CHECK_EQ(get_queue(1).stats[AFCD_S_PASSED], 1);
		CHECK_EQ(gstat(AFCD_G_FOREIGN_NETNS), 2);
		unload();
	}
	test_netns_probe = 0;
}

/* ---- Two CPUs on one interface (the lock-free datapath) ------------------ */

struct cpu_worker {
	pthread_t th;
	pthread_barrier_t *bar;
	int cpu, runs, err;
	__u16 sport;
};

static void *cpu_worker_main(void *arg)
{
	struct cpu_worker *w = arg;
	struct pkt_spec s = pkt_tcp4(w->sport, 1514);
	struct __sk_buff ctx = { .ifindex = 1 };
	__u8 buf[PKT_MAX];
	cpu_set_t set;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = w->runs);

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set); /* best effort */
	o.data_size_in = pkt_build(buf, &s);
	pthread_barrier_wait(w->bar);
	w->err = bpf_prog_test_run_opts(prog_fd, &o) ? -errno : 0;
	return NULL;
}

/* Expected result: two threads, pinned to CPUs 0 and 1, each send `runs`
 * 1514-byte packets of their own flow at the same instant (test clock) on
 * one interface. No departure is lost or doubled: every packet is counted
 * once (passed + dropped = 2 runs), the clock stands exactly at now +
 * passed * tx, and for drop-tail the predicted sojourns sum to tx *
 * P (P + 1) / 2 (the k-th packet admitted waits k tx). A clock or counter
 * updated without atomics loses updates here whenever the two runs
 * overlap; on a machine where they never overlap the test still holds. */
static void test_two_cpus_lose_no_departure(void)
{
	static const __u32 algos[] = { AFCD_ALGO_DROPTAIL, AFCD_ALGO_CODEL, AFCD_ALGO_AFCD,
				       AFCD_ALGO_FALL };
	const __u64 now = 1000 * MS, tx = 121120; /* 1514 B at 100 Mbit/s */
	const int runs = 100000;
	unsigned a;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		printf("    (one CPU online: the two runs cannot overlap)\n");
	for (a = 0; a < sizeof(algos) / sizeof(algos[0]); a++) {
		struct afcd_config c = cfg_base(algos[a]);
		struct cpu_worker w[2];
		pthread_barrier_t bar;
		struct afcd_queue q;
		__u64 passed, dropped;
		int i;

		SETUP();
		c.horizon_ns = 1000000 * MS; /* 2 runs x tx fit: nothing overlimit */
		set_cfg(1, &c);
		set_now(now);
		pthread_barrier_init(&bar, NULL, 2);
		for (i = 0; i < 2; i++) {
			w[i] = (struct cpu_worker){ .bar = &bar, .cpu = i, .runs = runs,
						    .sport = (__u16)(2000 + i) };
			pthread_create(&w[i].th, NULL, cpu_worker_main, &w[i]);
		}
		for (i = 0; i < 2; i++)
			pthread_join(w[i].th, NULL);
		pthread_barrier_destroy(&bar);
		CHECK(!w[0].err && !w[1].err, "test_run: %d %d", w[0].err, w[1].err);
		q = get_queue(1);
		passed = q.stats[AFCD_S_PASSED];
		dropped = q.stats[AFCD_S_AQM_DROP] + q.stats[AFCD_S_OVERLIMIT_DROP];
		CHECK(passed + dropped == 2ULL * runs, "%s: passed %llu + dropped %llu != %d",
		      afcd_algo_name(algos[a]), (unsigned long long)passed,
		      (unsigned long long)dropped, 2 * runs);
		CHECK(q.stats[AFCD_S_PASSED_BYTES] == passed * 1514, "%s: bytes",
		      afcd_algo_name(algos[a]));
		CHECK(q.t_last_ns == now + passed * tx, "%s: clock %llu, expected %llu",
		      afcd_algo_name(algos[a]), (unsigned long long)q.t_last_ns,
		      (unsigned long long)(now + passed * tx));
		CHECK(q.gcv_busy == 0, "%s: try-lock left taken", afcd_algo_name(algos[a]));
		if (algos[a] == AFCD_ALGO_DROPTAIL) {
			CHECK_EQ(dropped, 0);
			CHECK(q.sojourn_sum_ns == tx * passed * (passed + 1) / 2,
			      "sojourn sum %llu", (unsigned long long)q.sojourn_sum_ns);
		}
		printf("    %-8s passed %llu, dropped %llu of %d\n", afcd_algo_name(algos[a]),
		       (unsigned long long)passed, (unsigned long long)dropped, 2 * runs);
		unload();
	}
}

/* ---- Shared state written per packet ------------------------------------ */

/* Expected result: below target, a packet that takes no sample writes no
 * word of the interface's shared queue state (map afcd_queue) but the EDT
 * clock's group at its head (t_last_ns, last_sojourn_ns, max_sojourn_ns:
 * 24 bytes that share one cache line with t_last_ns at any 8-byte
 * alignment but the worst, and t_last_ns is what any EDT program writes);
 * the queue's counters go to the CPU's own part (afcd_qpcpu), where the
 * folded reading still counts every packet. (Without a refresh step, FaLL
 * computes its fallback global target again once an update period.) A word written with the value
 * it held is not seen: the counters, which change at every packet, are.
 * The queue is held between 0 and 2.4 ms (under target 5 ms): 1 Gbit/s,
 * a 1514-byte frame (12.1 us) every 10 us for 200 packets. */
static void test_below_target_writes_only_the_clock(void)
{
	static const __u32 algos[] = { AFCD_ALGO_DROPTAIL, AFCD_ALGO_AFCD, AFCD_ALGO_FALL };
	const size_t clock_end = offsetof(struct afcd_queue, max_sojourn_ns) + 8;
	unsigned a, i, w;

	_Static_assert(offsetof(struct afcd_queue, t_last_ns) == 8 &&
		       offsetof(struct afcd_queue, last_sojourn_ns) == 16 &&
		       offsetof(struct afcd_queue, max_sojourn_ns) == 24,
		       "the clock's group is the queue's head");
	for (a = 0; a < sizeof(algos) / sizeof(algos[0]); a++) {
		struct afcd_config c = cfg_base(algos[a]);
		struct pkt_spec p = pkt_tcp4(1000, 1514);
		static struct afcd_queue q0, q1;
		__u32 slot, changed[sizeof(struct afcd_queue) / 8] = {0}, sampled = 0;
		__u64 now = 1000 * MS;
		struct out o;

		SETUP();
		c.rate_bps = 1000000000ULL;
		set_cfg(1, &c);
		slot = slot_of(1);
		for (i = 0; i < 10; i++) {      /* the flow's entry, maxpacket */
			set_now(now += 10 * US);
			CHECK_EQ(run(&p, &o), TC_ACT_OK);
		}
		for (i = 0; i < 200; i++) {
			const __u64 *x = (const __u64 *)&q0, *y = (const __u64 *)&q1;

			CHECK(!bpf_map__lookup_elem(skel->maps.afcd_queue, &slot, 4, &q0,
						    sizeof(q0), 0), "queue");
			set_now(now += 10 * US);
			CHECK_EQ(run(&p, &o), TC_ACT_OK);
			CHECK(!bpf_map__lookup_elem(skel->maps.afcd_queue, &slot, 4, &q1,
						    sizeof(q1), 0), "queue");
			if (q1.astats[AFCD_A_SAMPLED] != q0.astats[AFCD_A_SAMPLED]) {
				sampled++;      /* the shadow buffer's shared books */
				continue;
			}
			for (w = 0; w < sizeof(q0) / 8; w++)
				changed[w] += x[w] != y[w];
		}
		CHECK(changed[offsetof(struct afcd_queue, t_last_ns) / 8] == 200 - sampled,
		      "%s: the clock moved on %u of %u packets", afcd_algo_name(algos[a]),
		      changed[1], 200 - sampled);
		for (w = clock_end / 8; w < sizeof(q0) / 8; w++) {
			/* FaLL's fallback global target (no refresh step here)
			 * is computed again once an update period */
			int gt = w * 8 >= offsetof(struct afcd_queue, fb_gt) &&
				 w * 8 < offsetof(struct afcd_queue, fb_gt) + sizeof(q0.fb_gt);
			__u32 most = gt ? (__u32)(200 * 10 * US / c.update_period_ns + 1) : 0;

			CHECK(changed[w] <= most, "%s: byte %u of the shared queue written by %u "
			      "packets", afcd_algo_name(algos[a]), w * 8, changed[w]);
		}
		q1 = get_queue(1);
		CHECK_EQ(q1.stats[AFCD_S_PASSED], 210);
		CHECK_EQ(q1.stats[AFCD_S_PASSED_BYTES], 210 * 1514);
		CHECK(q1.max_sojourn_ns > 0 && q1.max_sojourn_ns < c.target_ns,
		      "%s: max sojourn %llu", afcd_algo_name(algos[a]),
		      (unsigned long long)q1.max_sojourn_ns);
		printf("    %-8s 200 packets below target, %u sampled: no shared word written per "
		       "packet but the clock's group\n", afcd_algo_name(algos[a]), sampled);
		unload();
	}
}

const struct test_case edt_tests[] = {
	TC(test_edt_spacing),
	TC(test_sender_departure_kept),
	TC(test_horizon_drop),
	TC(test_non_ip_never_dropped),
	TC(test_non_ip_flood_bounded_by_horizon),
	TC(test_unconfigured_passthrough),
	TC(test_config_of_another_netns_not_taken),
	TC(test_two_cpus_lose_no_departure),
	TC(test_below_target_writes_only_the_clock),
	{ NULL },
};
