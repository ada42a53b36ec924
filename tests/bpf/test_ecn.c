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

const struct test_case ecn_tests[] = {
	TC(test_ecn_ce_threshold_ipv4),
	TC(test_ecn_ce_ipv6),
	TC(test_ecn_aqm_mark_instead_of_drop),
	TC(test_ecn_high_water_mark),
	{ NULL },
};
