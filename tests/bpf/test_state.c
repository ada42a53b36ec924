// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Malformed input, per-interface isolation, the flow-table bound (BPF_PROG_TEST_RUN; see harness.h). */
#include "harness.h"
#include "afcd_decide.h"

/* ---- Malformed input ------------------------------------------------------ */

static void test_malformed_pass_and_counted(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	__u8 buf[PKT_MAX];
	struct pkt_spec s;
	struct out o;
	int len, n_ok = 0, agg_bytes = 0;
	const __u8 frag6[8] = { 17, 0, 0x00, 0x09, 0, 0, 0, 7 };
	__u8 chain[16 * 8];

	SETUP();
	c.sample_bytes = 1;   /* a sample per byte: each frame takes its length */
	set_cfg(1, &c);
	set_now(1000 * MS);

	/* (the kernel's test_run refuses IPv4 frames shorter than 34 bytes;
	 * the host parser tests cover every truncation) */
	/* VLAN-tagged IPv4 cut inside the IP header */
	s = pkt_tcp4(1, 60);
	s.vlans = 1;
	len = pkt_build(buf, &s);
	n_ok += run_if(buf, 24, 1, &o) == TC_ACT_OK;
	agg_bytes += 24;
	/* IHL 15: options run past a 40-byte frame */
	s = pkt_tcp4(1, 60);
	len = pkt_build(buf, &s);
	buf[14] = 0x4f;
	n_ok += run_if(buf, 40, 1, &o) == TC_ACT_OK;
	agg_bytes += 40;
	buf[14] = 0x45;
	/* IPv4 complete, TCP ports cut */
	n_ok += run_if(buf, 36, 1, &o) == TC_ACT_OK;
	agg_bytes += 36;
	/* bad IHL and bad version */
	buf[14] = 0x43;
	n_ok += run_if(buf, len, 1, &o) == TC_ACT_OK;
	agg_bytes += len;
	CHECK_EQ(o.data[14], 0x43);               /* passed unharmed */
	buf[14] = 0x75;
	n_ok += run_if(buf, len, 1, &o) == TC_ACT_OK;
	agg_bytes += len;
	/* IPv6 with a chain of 16 extension headers: one more than the
	 * kernel's flow dissector follows (15, which the parser follows too) */
	s = pkt_tcp6(2, 200);
	memset(chain, 0, sizeof(chain));
	for (int i = 0; i < 16; i++)
		chain[8 * i] = i == 15 ? 6 : 60;
	s.v6_ext = chain;
	s.v6_ext_len = sizeof(chain);
	s.v6_first_nh = 60;
	len = pkt_build(buf, &s);
	n_ok += run_if(buf, len, 1, &o) == TC_ACT_OK;
	agg_bytes += len;
	/* and of 15: a TCP flow with its ports */
	s.v6_ext_len = 15 * 8;
	chain[8 * 14] = 6;
	len = pkt_build(buf, &s);
	n_ok += run_if(buf, len, 1, &o) == TC_ACT_OK;
	/* truncated VLAN tag */
	s = pkt_tcp4(3, 60);
	s.vlans = 1;
	len = pkt_build(buf, &s);
	n_ok += run_if(buf, 16, 1, &o) == TC_ACT_OK;
	agg_bytes += 16;
	/* fragments: IPv4 later fragment, IPv6 fragment header (offset 1) */
	s = pkt_tcp4(4, 100);
	s.frag_off = 0x0020;
	n_ok += run(&s, &o) == TC_ACT_OK;
	s = pkt_tcp6(5, 100);
	s.v6_ext = frag6;
	s.v6_ext_len = sizeof(frag6);
	s.v6_first_nh = 44;
	n_ok += run(&s, &o) == TC_ACT_OK;
	CHECK_EQ(n_ok, 10);
	{
		struct afcd_queue q = get_queue(1);

		CHECK_EQ(q.stats[AFCD_S_PARSE_ERR], 6);  /* VLAN cut, options, ports, IHL, version, chain */
		CHECK_EQ(q.stats[AFCD_S_NON_IP], 1);     /* the truncated VLAN frame */
		CHECK_EQ(q.stats[AFCD_S_FRAGMENT], 2);
		CHECK_EQ(q.stats[AFCD_S_PASSED], 10);
		CHECK_EQ(q.stats[AFCD_S_AQM_DROP] + q.stats[AFCD_S_OVERLIMIT_DROP], 0);
	}
	/* only the two fragment flows and the 15-header one got state of
	 * their own: the 7 malformed frames are the unclassified aggregate,
	 * which holds samples as one entity; the three flows, new and of
	 * one packet, are mice, whose samples the mice aggregate holds */
	CHECK_EQ(map_count(skel->maps.afcd_flows), 3);
	CHECK_EQ(map_count(skel->maps.afcd_sb_count), 2);
	CHECK(get_queue(1).agg[AFCD_AGG_MICE].m_i > 0, "mice");
	{
		struct afcd_queue q = get_queue(1);
		const struct afcd_flow *u = &q.agg[AFCD_AGG_UNCLASSIFIED];

		CHECK_EQ(u->packets, 7);
		CHECK_EQ(u->key.agg, 1 + AFCD_AGG_UNCLASSIFIED);
		CHECK_EQ(u->m_i, agg_bytes);   /* a sample per byte (below the ring's size) */
		CHECK_EQ(q.agg[AFCD_AGG_OVERFLOW].packets, 0);
	}
	{
		struct afcd_flow f;

		s.v6_ext_len = 15 * 8;
		CHECK(!get_flow(&s, 1, &f), "15-header flow keyed by its ports");
	}
	unload();
}

/* ---- Per-interface state ------------------------------------------------- */

static void test_interfaces_do_not_share_state(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	struct pkt_spec s = pkt_tcp4(1000, 1514);
	__u8 buf[PKT_MAX];
	struct out o;
	int len = pkt_build(buf, &s), i;

	if (!veth_ifindex) {
		CHECK(0, "no veth");
		return;
	}
	SETUP();
	c.sample_bytes = 1514;   /* one sample a packet */
	c.sb_size = 10;
	set_cfg(1, &c);
	set_cfg(veth_ifindex, &c);
	set_now(1000 * MS);
	CHECK(!old_flow(&s, 1, 1000 * MS) && !old_flow(&s, veth_ifindex, 1000 * MS), "old flows");
	for (i = 0; i < 10; i++)
		run_if(buf, len, 1, &o);              /* 10 packets queued on lo */
	CHECK_EQ(o.tstamp, 1000 * MS + 10 * 121120);
	CHECK_EQ(run_if(buf, len, veth_ifindex, &o), TC_ACT_OK);
	CHECK_EQ(o.tstamp, 1000 * MS + 121120);   /* its own, empty queue */
	CHECK_EQ(queues_in_use(), 2);
	CHECK_EQ(map_count(skel->maps.afcd_flows), 2); /* same 5-tuple, two flows */
	{
		struct afcd_flow f1, f2;

		get_flow(&s, 1, &f1);
		get_flow(&s, veth_ifindex, &f2);
		CHECK_EQ(f1.m_i, 10);
		CHECK_EQ(f2.m_i, 1);
		CHECK_EQ(get_queue(1).n_active, 1);
		CHECK_EQ(get_queue(veth_ifindex).n_active, 1);
	}
	unload();
}

/* ---- Flow-table bound ---------------------------------------------------- */

static void test_flow_flood_bounded(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	const __u32 nflows = 1000000;
	__u8 buf[PKT_MAX];
	struct pkt_spec s = pkt_tcp4(0, 64);
	__u64 now = 1000 * MS;
	__u32 i, live, counts;
	int len;

	SETUP();
	c.rate_bps = AFCD_RATE_MAX_BPS;
	c.sample_bytes = 640;        /* ~1 in 10 packets sampled */
	c.sb_size = 2000;
	set_cfg(1, &c);
	len = pkt_build(buf, &s);
	for (i = 0; i < nflows; i++) {
		__u32 src = htonl(0xC6120000u | (i >> 16));
		__u16 sport = htons((__u16)i);

		memcpy(buf + 26, &src, 4);       /* distinct (saddr, sport) */
		memcpy(buf + 34, &sport, 2);
		set_now(now += 1000);
		if (run_if(buf, len, 1, NULL) != TC_ACT_OK)
			break;
	}
	CHECK_EQ(i, nflows);
	live = map_count(skel->maps.afcd_flows);
	counts = map_count(skel->maps.afcd_sb_count);
	{
		struct afcd_queue q = get_queue(1);
		__u64 evicted = q.astats[AFCD_A_FLOW_NEW] - live;

		printf("    flood: %u flows offered, %u live (bound %u), %llu evicted, "
		       "%llu sampled, N = %d\n", nflows, live, AFCD_FLOWS_MAX,
		       (unsigned long long)evicted,
		       (unsigned long long)q.astats[AFCD_A_SAMPLED], q.n_active);
		CHECK(live <= AFCD_FLOWS_MAX && live > AFCD_FLOWS_MAX / 2, "live %u", live);
		CHECK_EQ(q.astats[AFCD_A_FLOW_NEW], nflows);
		CHECK(evicted >= nflows - AFCD_FLOWS_MAX, "evicted %llu", (unsigned long long)evicted);
		CHECK_EQ(q.stats[AFCD_S_PASSED], nflows);
		/* N is exact: one count entry per flow holding samples */
		CHECK_EQ((__u32)q.n_active, counts);
		CHECK(counts <= c.sb_size, "counts %u", counts);
		CHECK(q.astats[AFCD_A_SAMPLED] > nflows / 20, "sampled");
		CHECK_EQ(q.astats[AFCD_A_SB_FAIL], 0);
		/* a million keys, none shares its 64-bit id with a live one */
		CHECK_EQ(q.astats[AFCD_A_FLOW_COLLIDE], 0);
	}
	unload();
}

/* A long-lived flow keeps its entry while a million one-packet flows, 15
 * times the table's bound, churn through it: the table is LRU-evicted and
 * the long flow, sending one packet in every 64, is never the least
 * recently used. Its entry counts every packet it sent (an entry evicted
 * and made again would count only those since), and it keeps its samples'
 * count. */
static void test_long_flow_survives_churn(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	const __u32 nflows = 1000000, every = 64;
	struct pkt_spec s = pkt_tcp4(0, 64), lng = pkt_tcp4(4242, 1514);
	__u8 buf[PKT_MAX], lbuf[PKT_MAX];
	__u64 now = 1000 * MS, sent = 0;
	struct afcd_flow f;
	__u32 i;
	int len, llen;

	SETUP();
	c.rate_bps = AFCD_RATE_MAX_BPS;
	c.sample_bytes = 640;
	c.sb_size = 2000;
	set_cfg(1, &c);
	lng.src4 = 0xC6130101;       /* 198.19.1.1: no churn flow's address */
	len = pkt_build(buf, &s);
	llen = pkt_build(lbuf, &lng);
	for (i = 0; i < nflows; i++) {
		__u32 src = htonl(0xC6120000u | (i >> 16));
		__u16 sport = htons((__u16)i);

		memcpy(buf + 26, &src, 4);
		memcpy(buf + 34, &sport, 2);
		set_now(now += 1000);
		if (run_if(buf, len, 1, NULL) != TC_ACT_OK)
			break;
		if (i % every == 0) {
			set_now(now += 1000);
			if (run_if(lbuf, llen, 1, NULL) != TC_ACT_OK)
				break;
			sent++;
		}
	}
	CHECK_EQ(i, nflows);
	CHECK(!get_flow(&lng, 1, &f), "the long flow has no entry");
	{
		struct afcd_queue q = get_queue(1);

		printf("    churn: %u one-packet flows past a bound of %u; the long flow sent "
		       "%llu, its entry counts %llu, m_i %u; %llu entries made\n", nflows,
		       AFCD_FLOWS_MAX, (unsigned long long)sent, (unsigned long long)f.packets,
		       f.m_i, (unsigned long long)q.astats[AFCD_A_FLOW_NEW]);
		CHECK_EQ(f.packets, sent);
		CHECK(f.m_i > 0, "m_i %u", f.m_i);
		CHECK_EQ(q.astats[AFCD_A_FLOW_NEW], nflows + 1);
	}
	unload();
}

/* Expected result: past the flow table's bound (1,024 entries, 4,096
 * one-packet flows through it) a flow whose entry the LRU evicted gets its
 * first sight back from the flow memory (afcd_seen_born()) when its entry
 * is made again: a churn flow back within the window, and a long flow
 * that had samples of its own back after three windows of silence; a
 * churn flow back after three windows, never more than a mouse, is a new
 * flow (a fresh birth stamp), as every entry is made anew (4,096 + 3). */
static struct pkt_spec churn_spec(__u32 i)
{
	struct pkt_spec s = pkt_tcp4((__u16)i, 64);

	s.src4 = 0xC6120000u | (i >> 16);
	return s;
}

static void test_flow_memory_past_the_table(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	const __u32 nflows = 4096;
	const __u64 win = 1000 * MS, t0 = 1000 * MS;
	struct pkt_spec lng = pkt_tcp4(4242, 1514), cs;
	__u8 buf[PKT_MAX];
	__u64 now = t0;
	struct afcd_flow f;
	__u32 i, born_long = 0;
	int len, ok = 1;

	test_flow_table = 1024;
	ok = !load();
	test_flow_table = 0;
	if (!ok) {
		CHECK(0, "load failed");
		return;
	}
	c.sample_bytes = 640;        /* a 1,514-byte packet: 2-3 samples */
	c.sb_size = 2000;
	c.window_ns = win;
	set_cfg(1, &c);
	lng.src4 = 0xC6130101;       /* 198.19.1.1: no churn flow's address */
	/* the long flow: 10 packets, 15 KB, past 4 samples' bytes: no mouse */
	len = pkt_build(buf, &lng);
	for (i = 0; i < 10; i++) {
		set_now(now += 10 * US);
		ok &= run_if(buf, len, 1, NULL) == TC_ACT_OK;
	}
	CHECK(!get_flow(&lng, 1, &f), "the long flow's entry");
	born_long = f.born;
	CHECK(born_long == afcd_flow_born(t0 + 10 * US), "born %u", born_long);
	for (i = 0; i < nflows; i++) {
		cs = churn_spec(i);
		len = pkt_build(buf, &cs);
		set_now(now += 10 * US);
		ok &= run_if(buf, len, 1, NULL) == TC_ACT_OK;
	}
	CHECK(ok, "a packet not passed");
	CHECK(get_flow(&lng, 1, &f), "the long flow still has its entry");
	cs = churn_spec(0);
	CHECK(get_flow(&cs, 1, &f), "churn flow 0 still has its entry");
	/* churn flow 0, made at t0 + 110 us, back 50 ms later: its first sight */
	len = pkt_build(buf, &cs);
	set_now(now += 50 * MS);
	run_if(buf, len, 1, NULL);
	CHECK(!get_flow(&cs, 1, &f) && f.born == afcd_flow_born(t0 + 110 * US),
	      "churn flow 0 back in the window: born %u, first sight %u", f.born,
	      afcd_flow_born(t0 + 110 * US));
	/* three windows of silence */
	now += 3 * win;
	set_now(now);
	len = pkt_build(buf, &lng);
	run_if(buf, len, 1, NULL);
	CHECK(!get_flow(&lng, 1, &f) && f.born == born_long,
	      "the long flow back after 3 windows: born %u, first sight %u", f.born, born_long);
	CHECK(!afcd_is_mouse(f.m_i, f.bytes, c.sample_bytes, f.born, now, win), "a mouse");
	cs = churn_spec(1);
	len = pkt_build(buf, &cs);
	set_now(now += 10 * US);
	run_if(buf, len, 1, NULL);
	CHECK(!get_flow(&cs, 1, &f) && f.born == afcd_flow_born(now),
	      "churn flow 1 back after 3 windows: born %u, new %u", f.born, afcd_flow_born(now));
	CHECK_EQ(get_queue(1).astats[AFCD_A_FLOW_NEW], nflows + 4);
	unload();
}

/* Two flows under one id are never merged (afcd_flows is keyed by the
 * 64-bit flow id, the entry holds the full key). The collision is forged:
 * flow b's entry is written under flow a's id. a's packets then go to the
 * overflow aggregate (sampled, judged and counted as that one flow), and
 * leave that entry alone, also when a's samples leave the shadow buffer. */
static void test_flow_id_collision_not_merged(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	struct pkt_spec a = pkt_tcp4(1000, 1514), b = pkt_tcp4(2000, 1514);
	struct afcd_flow fb, fx;
	struct out o;
	__u64 id_a;
	int i;

	SETUP();
	c.sample_bytes = 1514;   /* one sample a packet */
	c.sb_size = 4;
	set_cfg(1, &c);
	set_now(1000 * MS);
	CHECK(!old_flow(&b, 1, 1000 * MS), "old flow");
	CHECK_EQ(run(&b, &o), TC_ACT_OK);
	CHECK(!get_flow(&b, 1, &fb), "b has state");
	id_a = flow_id_of(&a, 1);
	CHECK(id_a != flow_id_of(&b, 1), "ids differ");
	fb.m_i = 5;
	CHECK(!bpf_map__update_elem(skel->maps.afcd_flows, &id_a, sizeof(id_a), &fb, sizeof(fb),
				    BPF_NOEXIST), "forge");
	for (i = 0; i < 3; i++) {
		set_now(1000 * MS + (i + 1) * 10 * MS);
		CHECK_EQ(run(&a, &o), TC_ACT_OK);
		CHECK(o.tstamp > 0, "a still gets its departure time");
	}
	CHECK_EQ(get_queue(1).astats[AFCD_A_FLOW_COLLIDE], 3);
	CHECK_EQ(get_flow(&a, 1, &fx), -ENOENT);
	{
		struct afcd_queue q = get_queue(1);

		CHECK_EQ(q.agg[AFCD_AGG_OVERFLOW].packets, 3);
		CHECK_EQ(q.agg[AFCD_AGG_OVERFLOW].m_i, 3);   /* every packet a sample */
		CHECK_EQ(q.agg[AFCD_AGG_OVERFLOW].key.agg, 1 + AFCD_AGG_OVERFLOW);
	}
	/* four samples of b push a's three out of the ring of 4 */
	for (i = 0; i < 4; i++) {
		set_now(1100 * MS + i * 10 * MS);
		CHECK_EQ(run(&b, &o), TC_ACT_OK);
	}
	CHECK(!bpf_map__lookup_elem(skel->maps.afcd_flows, &id_a, sizeof(id_a), &fx, sizeof(fx), 0),
	      "forged entry kept");
	CHECK(!memcmp(&fx, &fb, sizeof(fx)), "forged entry unchanged (m_i %u)", fx.m_i);
	CHECK(!get_flow(&b, 1, &fb), "b");
	CHECK_EQ(fb.m_i, 4);
	CHECK_EQ(get_queue(1).n_active, 1);
	unload();
}

/* Sampling through the datapath (ALGORITHM.md sec. 3): each flow's coins
 * come from its own generator, and a flow of 1500-byte frames gets ten
 * times the samples of one of 150-byte frames at the same packet rate:
 * p = len / sample_bytes, so m_i is a byte share. */
static void test_sampling_is_byte_weighted(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	struct pkt_spec big = pkt_tcp4(1000, 1500), small = pkt_tcp4(2000, 150);
	struct afcd_flow fb, fs;
	__u64 now = 1000 * MS;
	__u32 i;

	SETUP();
	c.rate_bps = AFCD_RATE_MAX_BPS;   /* no queue: nothing dropped */
	c.sample_bytes = 15000;
	c.sb_size = AFCD_SB_SIZE_MAX;     /* no sample leaves the ring */
	set_cfg(1, &c);
	CHECK(!old_flow(&big, 1, now) && !old_flow(&small, 1, now), "old flows");
	for (i = 0; i < 20000; i++) {
		set_now(now += 10 * US);
		CHECK_EQ(run(&big, NULL), TC_ACT_OK);
		CHECK_EQ(run(&small, NULL), TC_ACT_OK);
	}
	CHECK_EQ(get_flow(&big, 1, &fb), 0);
	CHECK_EQ(get_flow(&small, 1, &fs), 0);
	printf("    samples: 1500-byte flow %u, 150-byte flow %u (expected 2000, 200)\n",
	       fb.m_i, fs.m_i);
	/* binomial, 6 sigma: 2000 +- 255, 200 +- 85 */
	CHECK(fb.m_i > 1745 && fb.m_i < 2255, "big flow: %u samples", fb.m_i);
	CHECK(fs.m_i > 115 && fs.m_i < 285, "small flow: %u samples", fs.m_i);
	CHECK(fb.rng != fs.rng, "one generator each");
	CHECK_EQ(get_queue(1).astats[AFCD_A_SAMPLED], fb.m_i + fs.m_i);
	unload();
}

/* Expected result: a GSO/GRO aggregate of n segments weighs what its n
 * segments would (afcd_sample_count()): with sample_bytes one segment's
 * wire length, aggregates of 2 to 45 segments of flow A give it exactly
 * one sample a segment, the ring's books stay consistent (counts,
 * histogram, N) when an aggregate's run of slots overwrites another
 * flow's and wraps around the ring, and an aggregate longer than the ring
 * takes the ring. CoDel's maxpacket stays one MTU. */
static void test_gso_aggregate_weighs_its_segments(void)
{
	static const __u32 segs[] = { 2, 3, 7, 16, 29, 45 };
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	struct pkt_spec a = pkt_tcp4(1000, 1400), b = pkt_tcp4(2000, 1400);
	__u64 now = 1000 * MS, total = 0;
	struct afcd_flow fa, fb;
	__u32 i, j, of_a;

	SETUP();
	c.rate_bps = AFCD_RATE_MAX_BPS;   /* no queue: nothing dropped */
	c.sample_bytes = 1400;             /* one sample a segment */
	c.sb_size = 256;
	set_cfg(1, &c);
	CHECK(!old_flow(&a, 1, now) && !old_flow(&b, 1, now), "old flows");
	/* A's aggregates, 102 segments: each its own count of samples */
	for (i = 0; i < sizeof(segs) / sizeof(segs[0]); i++) {
		set_now(now += 10 * US);
		next_wire_len = segs[i] * 1400;
		CHECK_EQ(run(&a, NULL), TC_ACT_OK);
		total += segs[i];
		CHECK(!get_flow(&a, 1, &fa), "a");
		CHECK_EQ(fa.m_i, total);
	}
	CHECK_EQ(get_queue(1).astats[AFCD_A_SAMPLED], total);
	/* CoDel's maxpacket: a segment (at most mtu_bytes), not 63 kB */
	CHECK_EQ(get_queue(1).maxpacket_bytes, c.mtu_bytes);
	CHECK_EQ(get_queue(1).astats[AFCD_A_SAMPLED_BYTES], total * 1400);
	CHECK_EQ(ring_books(c.sb_size, &a), total);
	/* B, 200 single frames: the ring (256) wraps, A's oldest runs leave */
	for (j = 0; j < 200; j++) {
		set_now(now += 10 * US);
		CHECK_EQ(run(&b, NULL), TC_ACT_OK);
	}
	CHECK(!get_flow(&a, 1, &fa) && !get_flow(&b, 1, &fb), "flows");
	CHECK_EQ(fb.m_i, 200);
	CHECK_EQ(fa.m_i, 256 - 200);
	of_a = ring_books(c.sb_size, &a);
	CHECK_EQ(of_a, fa.m_i);
	/* A again, three 45-segment aggregates (135 slots from slot 46, where
	 * A's 56 oldest left start): they overwrite A's own run and 79 of B's */
	for (j = 0; j < 3; j++) {
		set_now(now += 10 * US);
		next_wire_len = 45 * 1400;
		CHECK_EQ(run(&a, NULL), TC_ACT_OK);
	}
	CHECK(!get_flow(&a, 1, &fa) && !get_flow(&b, 1, &fb), "flows");
	CHECK_EQ(fa.m_i, 135);
	CHECK_EQ(fb.m_i, 121);
	CHECK_EQ(ring_books(c.sb_size, &a), fa.m_i);
	/* two more (90 slots from slot 181): across the end of the ring */
	for (j = 0; j < 2; j++) {
		set_now(now += 10 * US);
		next_wire_len = 45 * 1400;
		CHECK_EQ(run(&a, NULL), TC_ACT_OK);
	}
	CHECK(!get_flow(&a, 1, &fa) && !get_flow(&b, 1, &fb), "flows");
	CHECK_EQ(fa.m_i, 225);
	CHECK_EQ(fb.m_i, 31);
	CHECK_EQ(ring_books(c.sb_size, &a), fa.m_i);
	/* an aggregate longer than the ring takes the ring, no more */
	c.sample_bytes = 100;
	set_cfg(1, &c);
	set_now(now += 10 * US);
	next_wire_len = 45 * 1400;         /* 630 samples of 100 bytes */
	CHECK_EQ(run(&b, NULL), TC_ACT_OK);
	CHECK(!get_flow(&b, 1, &fb), "b");
	CHECK_EQ(fb.m_i, 256);
	CHECK_EQ(ring_books(c.sb_size, &a), 0);
	unload();
}

/* Expected result: a ring grown in place (sb_grow, an `afcd set` to a
 * larger sb_size: the config's sb_size alone changes) keeps its books.
 * 256 slots, A 200 samples then B 100 (the ring wraps: A keeps 156, slots
 * 44-199); at 384 slots the head (300) goes on into the new, empty slots:
 * B's next 100 take slots 300-383 and 0-15 (its own), A keeps its 156;
 * then 384 of C's evict every old sample: A and B hold none, N is 1. */
static void test_ring_grows_in_place(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	struct pkt_spec a = pkt_tcp4(1000, 1400), b = pkt_tcp4(2000, 1400),
			d = pkt_tcp4(3000, 1400);
	__u64 now = 1000 * MS;
	struct afcd_flow fa, fb, fd;

	SETUP();
	c.rate_bps = AFCD_RATE_MAX_BPS;   /* no queue: nothing dropped */
	c.sample_bytes = 1400;             /* one sample a packet */
	c.sb_size = 256;
	set_cfg(1, &c);
	CHECK(!old_flow(&a, 1, now) && !old_flow(&b, 1, now) && !old_flow(&d, 1, now),
	      "old flows");
	fill_samples(&a, 200, &now);
	fill_samples(&b, 100, &now);
	CHECK(!get_flow(&a, 1, &fa) && !get_flow(&b, 1, &fb), "flows");
	CHECK_EQ(fa.m_i, 156);
	CHECK_EQ(fb.m_i, 100);
	CHECK_EQ(ring_books(c.sb_size, &a), 156);
	c.sb_size = 384;
	set_cfg(1, &c);
	CHECK_EQ(ring_books(c.sb_size, &a), 156);
	fill_samples(&b, 100, &now);
	CHECK(!get_flow(&a, 1, &fa) && !get_flow(&b, 1, &fb), "flows");
	CHECK_EQ(fa.m_i, 156);
	CHECK_EQ(fb.m_i, 184);
	CHECK_EQ(ring_books(c.sb_size, &b), 184);
	CHECK_EQ(get_queue(1).n_active, 2);
	fill_samples(&d, 384, &now);
	CHECK(!get_flow(&a, 1, &fa) && !get_flow(&b, 1, &fb) && !get_flow(&d, 1, &fd), "flows");
	CHECK_EQ(fa.m_i, 0);
	CHECK_EQ(fb.m_i, 0);
	CHECK_EQ(fd.m_i, 384);
	CHECK_EQ(ring_books(c.sb_size, &d), 384);
	CHECK_EQ(get_queue(1).n_active, 1);
	unload();
}

/* Expected result: the largest ring (AFCD_SB_SIZE_MAX slots of sample
 * ids) keeps its books through a wrap: 800 flows of their own, each one
 * 45-segment aggregate, 36,000 samples in all; N counts the 729 flows
 * the wrap left (71 gone whole, the 72nd in part), and for every 79th
 * flow its count, its slots and its m_i agree, with the histogram. */
static void test_largest_ring_keeps_its_books(void)
{
	struct afcd_config c = cfg_base(AFCD_ALGO_AFCD);
	__u64 now = 1000 * MS;
	struct afcd_flow f;
	__u32 i, held = 0;

	SETUP();
	c.rate_bps = AFCD_RATE_MAX_BPS;   /* no queue: nothing dropped */
	c.sample_bytes = 1400;             /* one sample a segment */
	c.sb_size = AFCD_SB_SIZE_MAX;
	set_cfg(1, &c);
	for (i = 0; i < 800; i++) {
		struct pkt_spec p = pkt_tcp4(1000 + i, 1400);

		CHECK(!old_flow(&p, 1, now), "old flow %u", i);
	}
	for (i = 0; i < 800; i++) {
		struct pkt_spec p = pkt_tcp4(1000 + i, 1400);

		set_now(now += 10 * US);
		next_wire_len = 45 * 1400;
		CHECK_EQ(run(&p, NULL), TC_ACT_OK);
	}
	CHECK_EQ(get_queue(1).astats[AFCD_A_SAMPLED], 800 * 45);
	CHECK_EQ(get_queue(1).n_active, 800 - (800 * 45 - AFCD_SB_SIZE_MAX) / 45);
	for (i = 0; i < 800; i += 79) {
		struct pkt_spec p = pkt_tcp4(1000 + i, 1400);

		CHECK(!get_flow(&p, 1, &f), "flow %u", i);
		CHECK_EQ(ring_books(c.sb_size, &p), f.m_i);
		held += f.m_i;
	}
	/* of the eleven, flow 0 left whole, the ten others hold 45 slots each */
	CHECK_EQ(held, 10 * 45);
	unload();
}

const struct test_case state_tests[] = {
	TC(test_malformed_pass_and_counted),
	TC(test_interfaces_do_not_share_state),
	TC(test_sampling_is_byte_weighted),
	TC(test_gso_aggregate_weighs_its_segments),
	TC(test_largest_ring_keeps_its_books),
	TC(test_ring_grows_in_place),
	TC(test_flow_flood_bounded),
	TC(test_long_flow_survives_churn),
	TC(test_flow_memory_past_the_table),
	TC(test_flow_id_collision_not_merged),
	{ NULL },
};
