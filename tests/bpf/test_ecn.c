// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* CE marks on IPv4, IPv6 and VLAN frames: ce_threshold, marks instead of drops (BPF_PROG_TEST_RUN; see harness.h). */
#include "harness.h"

/* ---- ECN ------------------------------------------------------------------ */

static void check_ipv4_ce(const struct out *o, int l3)
{
	CHECK_EQ(o->data[l3 + 1] & 3, 3);
	CHECK_EQ(pkt_csum16(o->data + l3, 20), 0); /* header checksum still valid */
}

static void test_ecn_ce_threshold_ipv4(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_DROPTAIL);
	struct pkt_spec s = pkt_tcp4(1000, 1514), n = pkt_tcp4(1001, 1514);
	struct out o;

	SETUP();
	c.ce_threshold_ns = 200 * US;     /* the 2nd packet waits 242 us */
	set_cfg(1, &c);
	set_now(1000 * MS);
	s.ecn = 2;                        /* ECT(0) */
	CHECK_EQ(run(&s, &o), TC_ACT_OK);
	CHECK_EQ(o.data[15] & 3, 2);      /* below threshold: untouched */
	CHECK_EQ(run(&s, &o), TC_ACT_OK);
	check_ipv4_ce(&o, 14);
	s.ecn = 1;                        /* ECT(1) */
	s.vlans = 1;
	CHECK_EQ(run(&s, &o), TC_ACT_OK);
	check_ipv4_ce(&o, 18);
	CHECK_EQ(run(&n, &o), TC_ACT_OK); /* Not-ECT: never marked */
	CHECK_EQ(o.data[15] & 3, 0);
	CHECK_EQ(pkt_csum16(o.data + 14, 20), 0);
	CHECK_EQ(get_queue(1).stats[AFCD_S_CE_THRESHOLD_MARK], 2);
	{
		struct afcd_flow f;

		get_flow(&s, 1, &f);
		CHECK_EQ(f.marks, 2);
	}
	unload();
}

static void test_ecn_ce_ipv6(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_DROPTAIL);
	struct pkt_spec s = pkt_tcp6(1000, 1514);
	struct out o;

	SETUP();
	c.ce_threshold_ns = 200 * US;
	set_cfg(1, &c);
	set_now(1000 * MS);
	s.ecn = 2;
	s.vlans = 2;
	run(&s, &o);
	CHECK_EQ(run(&s, &o), TC_ACT_OK);
	CHECK_EQ((o.data[22 + 1] >> 4) & 3, 3);
	CHECK_EQ(o.data[22] >> 4, 6);          /* version untouched */
	CHECK_EQ(o.data[22 + 1] & 0x0f, 0);    /* flow label untouched */
	s.vlans = 0;                           /* untagged: bpf_skb_ecn_set_ce() */
	CHECK_EQ(run(&s, &o), TC_ACT_OK);
	CHECK_EQ((o.data[14 + 1] >> 4) & 3, 3);
	CHECK_EQ(o.data[14] >> 4, 6);
	CHECK_EQ(o.data[14 + 1] & 0x0f, 0);
	unload();
}

/* With ecn on, the drop law marks ECT packets instead of dropping them and
 * still drops Not-ECT ones; overlimit packets are always dropped. */
static void test_ecn_aqm_mark_instead_of_drop(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_CODEL);
	struct pkt_spec e = pkt_tcp4(1000, 1514), n = pkt_tcp4(1001, 1514);
	__u64 now = 1000 * MS;
	int i, marks = 0, drops_ect = 0, drops_not = 0;
	struct out o;

	SETUP();
	c.interval_ns = 20 * MS;
	c.horizon_ns = 1000 * MS;          /* no overlimit drops in this test */
	c.flags = AFCD_F_ECN;
	set_cfg(1, &c);
	e.ecn = 2;
	for (i = 0; i < 3000; i++, now += 70 * US) {
		int ect = i & 1;

		set_now(now);
		run(ect ? &e : &n, &o);
		if (o.verdict == TC_ACT_SHOT)
			(ect ? &drops_ect : &drops_not)[0]++;
		else if (ect && (o.data[15] & 3) == 3) {
			marks++;
			CHECK_EQ(pkt_csum16(o.data + 14, 20), 0);
		}
	}
	CHECK(marks > 5, "marks %d", marks);
	CHECK(drops_not > 5, "Not-ECT drops %d", drops_not);
	{
		struct afcd_queue q = get_queue(1);

		CHECK_EQ(q.stats[AFCD_S_ECN_MARK], marks);
		CHECK_EQ(drops_ect, 0);
		CHECK_EQ(q.stats[AFCD_S_AQM_DROP], drops_not);
		CHECK_EQ(q.stats[AFCD_S_OVERLIMIT_DROP], 0);
	}
	unload();
}

/* With ecn on, an ECN-capable packet that would wait more than half the
 * horizon is marked (high_mark) even where no law applies (drop-tail);
 * Not-ECT packets are not, and beyond the horizon both are dropped. */
static void test_ecn_high_water_mark(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_DROPTAIL);
	struct pkt_spec e = pkt_tcp4(1000, 1514), n = pkt_tcp4(1001, 1514);
	int i, marked = 0, unmarked_high = 0, not_marked_ect = 0, drops = 0;
	struct out o;

	SETUP();
	c.horizon_ns = 1 * MS;             /* a burst at one instant: 121 us per frame */
	c.flags = AFCD_F_ECN;
	set_cfg(1, &c);
	set_now(1000 * MS);
	e.ecn = 2;
	for (i = 0; i < 12; i++) {
		int ect = i & 1;

		run(ect ? &e : &n, &o);
		if (o.verdict == TC_ACT_SHOT)
			drops++;
		else if (ect && (o.data[15] & 3) == 3)
			marked++;
		else if (ect)
			not_marked_ect++;
		else if ((o.data[15] & 3) != 0)
			unmarked_high++;    /* a Not-ECT frame touched: never */
	}
	/* expected: frames 0-3 wait up to 484 us (<= 500: untouched), 4-7 up
	 * to 968 us (the ECT ones marked), 8 on past the horizon (dropped) */
	CHECK_EQ(not_marked_ect, 2);
	CHECK_EQ(marked, 2);
	CHECK_EQ(unmarked_high, 0);
	CHECK_EQ(drops, 4);
	CHECK_EQ(get_queue(1).stats[AFCD_S_HIGH_MARK], 2);
	CHECK_EQ(get_queue(1).stats[AFCD_S_ECN_MARK], 0);
	c.flags = 0;                       /* ecn off: no marks */
	set_cfg(1, &c);
	set_now(2000 * MS);
	for (i = 0; i < 8; i++)
		run(&e, &o);
	CHECK_EQ(get_queue(1).stats[AFCD_S_HIGH_MARK], 2);
	unload();
}

/* The high-water tests' afcd config (flags: its flags) while their
 * samples fill: one sample a packet in a ring of 200, no pacing credit
 * (a burst's frames queue from the first), and a rate at which nothing
 * queues yet; each test then sets its own rate and horizon. */
static struct afcd_config high_water_cfg(__u32 flags)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);

	c.sample_bytes = 1514;
	c.sb_size = 200;
	c.flags = flags;
	c.burst_ns = 0;
	c.rate_bps = 1000000000000ULL;
	return c;
}

/* The high-water mark and a flow below its share: a Not-ECT flood above
 * its share builds the queue past half the horizon, where an ECT flow
 * holding a fifth of m_fair is marked once an interval, not at every
 * packet; the same flow at its share (m_fair lowered to its m_i) is
 * marked at every packet there. */
static void test_ecn_high_water_below_share(void)
{
	struct afcd_config c = high_water_cfg(AFCD_F_ECN);
	struct pkt_spec e = pkt_tcp4(1000, 1514), n = pkt_tcp4(1001, 1514);
	__u64 now = 1000 * MS;
	struct out o;
	int i;

	SETUP();
	set_cfg(1, &c);
	e.ecn = 2;
	fill_samples(&n, 180, &now);       /* the oldest samples: the burst's own
					    * replace them, e's 20 stay */
	fill_samples(&e, 20, &now);
	c.rate_bps = 100000000ULL;         /* 121 us a frame */
	c.horizon_ns = 2 * MS;
	set_cfg(1, &c);
	set_now(now += 200 * MS);          /* the queue empty, an interval on */
	set_est(1, 100, 0);                /* n at 1.8 shares, e at 0.2 */
	for (i = 0; i < 8; i++)            /* the flood: up to 969 us queued */
		run(&n, &o);
	run(&e, &o);                       /* waits 1090 us: past half the horizon */
	CHECK_EQ(o.verdict, TC_ACT_OK);
	CHECK_EQ(o.data[15] & 3, 3);       /* its one mark of the interval */
	run(&e, &o);                       /* 1211 us */
	CHECK_EQ(o.verdict, TC_ACT_OK);
	CHECK_EQ(o.data[15] & 3, 2);       /* not again within the interval */
	CHECK_EQ(get_queue(1).stats[AFCD_S_HIGH_MARK], 1);
	set_est(1, 20, 0);                 /* e now at its share */
	for (i = 0; i < 2; i++) {          /* 1332, 1453 us: each marked */
		run(&e, &o);
		CHECK_EQ(o.verdict, TC_ACT_OK);
		CHECK_EQ(o.data[15] & 3, 3);
	}
	CHECK_EQ(get_queue(1).stats[AFCD_S_HIGH_MARK], 3);
	CHECK_EQ(get_queue(1).stats[AFCD_S_OVERLIMIT_DROP], 0);
	unload();
}

/* The high-water mark as a drop (high_drop, ecn off): two flows at their
 * share build the queue past half the horizon; each loses one packet
 * there (high_drop, counted in aqm_drop too), then none within the
 * interval; a flow below its share loses none; high_drop off, none. */
static void test_high_water_drop(void)
{
	struct afcd_config c = high_water_cfg(AFCD_F_HIGH_DROP);
	struct pkt_spec a = pkt_tcp4(1000, 1514), b = pkt_tcp4(1001, 1514),
			x = pkt_tcp4(1002, 1514);
	__u64 now = 1000 * MS;
	struct out o;
	int i;

	SETUP();
	set_cfg(1, &c);
	fill_samples(&x, 20, &now);        /* the oldest: the burst's replace them */
	fill_samples(&a, 90, &now);
	fill_samples(&b, 90, &now);
	c.rate_bps = 100000000ULL;         /* 121 us a frame */
	c.horizon_ns = 2 * MS;
	set_cfg(1, &c);
	set_now(now += 200 * MS);
	set_est(1, 90, 0);                 /* a and b at their share, x at 0.2 */
	for (i = 0; i < 8; i++)            /* up to 969 us queued */
		CHECK_EQ(run(&a, &o), TC_ACT_OK);
	CHECK_EQ(run(&x, &o), TC_ACT_OK);  /* 1090 us, below its share */
	CHECK_EQ(run(&b, &o), TC_ACT_SHOT);/* 1211 us: b's one drop */
	CHECK_EQ(run(&b, &o), TC_ACT_OK);
	CHECK_EQ(run(&a, &o), TC_ACT_SHOT);/* a's */
	CHECK_EQ(run(&a, &o), TC_ACT_OK);
	CHECK_EQ(run(&x, &o), TC_ACT_OK);
	CHECK_EQ(get_queue(1).stats[AFCD_S_HIGH_DROP], 2);
	CHECK_EQ(get_queue(1).stats[AFCD_S_AQM_DROP], 2);
	CHECK_EQ(get_queue(1).stats[AFCD_S_OVERLIMIT_DROP], 0);
	c.flags = 0;                       /* high_drop off: the same queue, no drop */
	set_cfg(1, &c);
	set_now(now += 150 * MS);          /* an interval on: both due again */
	for (i = 0; i < 8; i++)
		CHECK_EQ(run(&a, &o), TC_ACT_OK);
	CHECK_EQ(run(&b, &o), TC_ACT_OK);
	CHECK_EQ(get_queue(1).stats[AFCD_S_HIGH_DROP], 2);
	unload();
}

/* The qdisc backend's deferred marks (afcd_decide.h): on an interface
 * whose config is the qdisc's, afcd_egress decides nothing and sets CE on
 * the next ECT packets of a flow that owes marks, one each, and on no
 * other packet; a flow without an entry pays its aggregate's; it creates
 * no state and stamps no departure time. */
static void put_owed(const struct pkt_spec *s, __u32 owed)
{
	struct afcd_flow f = { .key = key_of(s, 1), .ce_owed = owed };
	__u64 id = flow_id_of(s, 1);

	CHECK(!bpf_map__update_elem(skel->maps.afcd_flows, &id, sizeof(id), &f, sizeof(f),
				    BPF_ANY), "flow");
}

static void test_ecn_qdisc_deferred_marks(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	struct pkt_spec e = pkt_tcp4(1000, 1514), n = pkt_tcp4(1000, 1514),
			x = pkt_tcp4(2000, 1514);
	struct afcd_queue q;
	struct afcd_flow f;
	__u32 slot = 0;
	struct out o;
	int i;

	SETUP();
	c.flags |= AFCD_F_QDISC | AFCD_F_ECN;
	set_cfg(1, &c);
	set_now(1000 * MS);
	e.ecn = 2;
	x.ecn = 1;
	put_owed(&e, 2);
	CHECK_EQ(run(&n, &o), TC_ACT_OK);       /* Not-ECT of the same flow: untouched */
	CHECK_EQ(o.data[15] & 3, 0);
	CHECK_EQ(o.tstamp, 0);
	for (i = 0; i < 3; i++) {               /* two owed: two marks, then none */
		CHECK_EQ(run(&e, &o), TC_ACT_OK);
		CHECK_EQ(o.data[15] & 3, i < 2 ? 3 : 2);
		CHECK_EQ(pkt_csum16(o.data + 14, 20), 0);
		CHECK_EQ(o.tstamp, 0);
	}
	get_flow(&e, 1, &f);
	CHECK_EQ(f.ce_owed, 0);
	CHECK_EQ(f.marks, 0);                   /* counted by the qdisc, when decided */
	/* a flow without an entry pays the overflow aggregate's */
	q = get_queue(1);
	q.agg[AFCD_AGG_OVERFLOW].ce_owed = 1;
	CHECK(!bpf_map__update_elem(skel->maps.afcd_queue, &slot, 4, &q, sizeof(q), BPF_ANY),
	      "queue");
	CHECK_EQ(run(&x, &o), TC_ACT_OK);
	CHECK_EQ(o.data[15] & 3, 3);
	CHECK_EQ(run(&x, &o), TC_ACT_OK);
	CHECK_EQ(o.data[15] & 3, 1);
	CHECK_EQ(get_flow(&x, 1, &f), -ENOENT); /* looked up, never created */
	q = get_queue(1);
	CHECK_EQ(q.agg[AFCD_AGG_OVERFLOW].ce_owed, 0);
	CHECK_EQ(q.astats[AFCD_A_DEFERRED_MARK], 3);
	CHECK_EQ(q.astats[AFCD_A_SAMPLED], 0);
	CHECK_EQ(q.stats[AFCD_S_PASSED], 0);
	/* without ecn on or ce_threshold nothing is marked */
	put_owed(&e, 1);
	c.flags &= ~AFCD_F_ECN;
	set_cfg(1, &c);
	CHECK_EQ(run(&e, &o), TC_ACT_OK);
	CHECK_EQ(o.data[15] & 3, 2);
	get_flow(&e, 1, &f);
	CHECK_EQ(f.ce_owed, 1);
	c.ce_threshold_ns = 1 * MS;             /* ce_threshold's marks are owed too */
	set_cfg(1, &c);
	CHECK_EQ(run(&e, &o), TC_ACT_OK);
	CHECK_EQ(o.data[15] & 3, 3);
	CHECK_EQ(get_queue(1).astats[AFCD_A_DEFERRED_MARK], 4);
	unload();
}

const struct test_case ecn_tests[] = {
	TC(test_ecn_ce_threshold_ipv4),
	TC(test_ecn_ce_ipv6),
	TC(test_ecn_aqm_mark_instead_of_drop),
	TC(test_ecn_high_water_mark),
	TC(test_ecn_high_water_below_share),
	TC(test_high_water_drop),
	TC(test_ecn_qdisc_deferred_marks),
	{ NULL },
};
