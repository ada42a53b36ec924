// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Fuzzed frames through every algorithm (BPF_PROG_TEST_RUN; see harness.h). */
#include "harness.h"

/* ---- Fuzz ------------------------------------------------------
 * Mutated frames through every algorithm with the refresh step running:
 * nothing may break the datapath's accounting or the EDT clock.
 * AFCD_FUZZ_N sets the frames per algorithm (default 10^5; `make fuzz`
 * runs 2 * 10^6 each, 10^7 in all).
 */
static __u64 fz_rng;

static __u32 fz_rand(void)
{
	fz_rng = fz_rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (__u32)(fz_rng >> 33);
}

/* A valid frame of a random kind (TCP/UDP/ICMP over IPv4/IPv6, VLAN tags,
 * extension headers, fragments, ECN codepoints, 60..1514 bytes), then
 * mutated: none (1/4), 1-8 random bytes of the first 80 (1/2) or truncated
 * (1/4). Returns its length. */
static int fz_frame(__u8 *buf)
{
	static const __u8 ext[] = { 60, 0, 1, 4, 0, 0, 0, 0 };   /* dst options, next TCP */
	/* 16 flows per family (before mutation), so flows hold samples and the
	 * drop laws and the policer act, not only the horizon */
	struct pkt_spec s = fz_rand() & 1 ? pkt_tcp4(1000 + fz_rand() % 16, 60)
					  : pkt_tcp6(1000 + fz_rand() % 16, 80);
	int len, k, n;

	s.proto = (__u8[]){ 6, 17, 1, 58, 132 }[fz_rand() % 5];
	s.ecn = fz_rand() & 3;
	s.vlans = fz_rand() % 8 == 0 ? 1 + fz_rand() % 2 : 0;
	if (s.family == 4 && fz_rand() % 16 == 0)
		s.frag_off = fz_rand() & 0x3fff;
	if (s.family == 6 && fz_rand() % 8 == 0) {
		s.v6_ext = ext;
		s.v6_ext_len = sizeof(ext);
		s.v6_first_nh = 60;
	}
	s.total_len = 100 + fz_rand() % 1415;
	len = pkt_build(buf, &s);
	switch (fz_rand() % 4) {
	case 0:
		break;
	case 1:   /* truncated anywhere after the fixed IP header (BPF_PROG_TEST_RUN
		   * refuses IP frames shorter than it; the stack never sends them) */
		k = 14 + 4 * s.vlans + (s.family == 4 ? 20 : 40);
		len = k + fz_rand() % (len - k + 1);
		break;
	default:
		n = 1 + fz_rand() % 8;
		for (k = 0; k < n; k++)
			buf[fz_rand() % (len < 80 ? len : 80)] = fz_rand() & 0xff;
	}
	return len;
}

/* The output of an admitted frame equals its input, except a CE mark:
 * ECT(0)/ECT(1) -> CE in the IP header after up to two VLAN tags, and for
 * IPv4 the header checksum, which must verify after when it did before. */
static void fz_check_output(const __u8 *in, int len, const struct out *o)
{
	int l3 = 12, diff = 0, i, tags;
	__u16 et = 0;

	CHECK_EQ(o->len, (__u32)len);
	for (i = 0; i < len; i++)
		diff += in[i] != o->data[i];
	if (!diff)
		return;
	for (tags = 0; tags <= 2; tags++, l3 += 4) {
		et = (__u16)(in[l3] << 8 | in[l3 + 1]);
		if (et != 0x8100 && et != 0x88a8)
			break;
	}
	l3 += 2;
	if (et == 0x0800 && (in[l3] >> 4) == 4) {
		int ihl = (in[l3] & 15) * 4;

		CHECK((o->data[l3 + 1] & 3) == 3 && (in[l3 + 1] & 3),
		      "IPv4 rewrite that is not ECT -> CE");
		if (!pkt_csum16(in + l3, ihl))
			CHECK(!pkt_csum16(o->data + l3, ihl), "IPv4 checksum broken by CE");
		for (i = 0; i < len; i++)
			if (i != l3 + 1 && i != l3 + 10 && i != l3 + 11)
				CHECK(in[i] == o->data[i], "byte %d rewritten", i);
	} else if (et == 0x86dd) {
		CHECK((o->data[l3 + 1] & 0x30) == 0x30 && (in[l3 + 1] & 0x30),
		      "IPv6 rewrite that is not ECT -> CE");
		for (i = 0; i < len; i++)
			if (i != l3 + 1)
				CHECK(in[i] == o->data[i], "byte %d rewritten", i);
	} else {
		CHECK(0, "a frame that is not IP was rewritten (EtherType %04x)", et);
	}
}

static void fuzz_algo(__u32 algo, long n)
{
	struct afcd_config c = cfg_base(algo);
	__u64 now = 1000 * MS, next_refresh = now, ok = 0, shot = 0;
	__u32 slot = slot_of(1);
	struct afcd_queue q;
	__u8 buf[PKT_MAX];
	static struct out o;
	long i;

	if (load() || load_ctl()) {
		CHECK(0, "load");
		return;
	}
	c.rate_bps = 40000000ULL;                /* ~1.1x the mean offered load, in bursts */
	c.horizon_ns = 20 * MS;
	c.sb_size = 500;
	c.window_ns = 200 * MS;
	c.sample_bytes = 1514;
	c.ce_threshold_ns = 2 * MS;
	c.alpha_milli = AFCD_DEF_ALPHA_MILLI;
	c.beta_milli = AFCD_DEF_BETA_MILLI;
	c.update_period_ns = 10 * MS;
	c.flags = AFCD_F_ECN | AFCD_F_POLICE | AFCD_F_CODEL_QUEUE | AFCD_F_HIGH_DROP; /* the defaults, ecn on */
	set_cfg(1, &c);
	fz_rng = 0x5eed0000 + algo;
	for (i = 0; i < n; i++) {
		int len = fz_frame(buf), v;

		/* bursts and gaps: 0-1.6 ms, mostly short, so the queue fills */
		now += fz_rand() % 8 ? fz_rand() % 400 * US / 4 : fz_rand() % 1600 * US;
		while (next_refresh <= now) {
			ctl_op(AFCD_CTL_REFRESH, 1, slot, next_refresh, 0, NULL);
			next_refresh += c.update_period_ns;
		}
		set_now(now);
		/* one frame in eight a GSO/GRO aggregate of up to 64 KiB on the
		 * wire: its samples a run of ring slots */
		if (fz_rand() % 8 == 0)
			next_wire_len = (__u32)len + fz_rand() % (65536 - (__u32)len + 1);
		v = run_if(buf, len, 1, &o);
		if (v == TC_ACT_OK) {
			ok++;
			/* no earlier than the pacing credit allows, no later
			 * than the horizon */
			CHECK(o.tstamp >= now - AFCD_DEF_BURST_NS && o.tstamp <= now + c.horizon_ns,
			      "frame %ld: tstamp %lld ns from now", i, (long long)(o.tstamp - now));
			fz_check_output(buf, len, &o);
		} else {
			shot++;
			CHECK_EQ(v, TC_ACT_SHOT);
		}
		if (check_failed_in_test > 20)      /* enough to debug from */
			break;
	}
	q = get_queue(1);
	CHECK_EQ(q.stats[AFCD_S_PASSED], ok);
	CHECK_EQ(q.stats[AFCD_S_AQM_DROP] + q.stats[AFCD_S_OVERLIMIT_DROP], shot);
	CHECK(q.stats[AFCD_S_POLICE_DROP] <= q.stats[AFCD_S_AQM_DROP], "police %llu > aqm %llu",
	      (unsigned long long)q.stats[AFCD_S_POLICE_DROP],
	      (unsigned long long)q.stats[AFCD_S_AQM_DROP]);
	CHECK(q.t_last_ns <= now + c.horizon_ns, "clock %lld ns ahead",
	      (long long)(q.t_last_ns - now));
	ring_books(c.sb_size, NULL);
	printf("    %-8s %ld frames: %llu passed (%llu marked), %llu dropped (%llu overlimit), "
	       "%llu parse errors, %llu non-IP\n", afcd_algo_name(algo), n, (unsigned long long)ok,
	       (unsigned long long)(q.stats[AFCD_S_ECN_MARK] + q.stats[AFCD_S_CE_THRESHOLD_MARK]),
	       (unsigned long long)shot, (unsigned long long)q.stats[AFCD_S_OVERLIMIT_DROP],
	       (unsigned long long)q.stats[AFCD_S_PARSE_ERR],
	       (unsigned long long)q.stats[AFCD_S_NON_IP]);
	unload_ctl();
}

/* Expected result: for each algorithm, AFCD_FUZZ_N (10^5) mutated frames
 * leave PASSED equal to the frames admitted and the drop counters equal to
 * the frames dropped, every admitted tstamp within [now, now + horizon],
 * the queue's clock at most a horizon ahead, admitted frames unchanged
 * but for valid CE marks (IPv4 checksum verifies), and the shadow
 * buffer's books consistent (one frame in eight an aggregate of up to 64
 * KiB on the wire). */
static void test_fuzz_all_algos(void)
{
	const char *e = getenv("AFCD_FUZZ_N");
	long n = e ? atol(e) : 100000;
	__u32 algo;

	CHECK(n > 0, "AFCD_FUZZ_N must be positive");
	for (algo = 0; algo < AFCD_ALGO__MAX && n > 0; algo++)
		fuzz_algo(algo, n);
}

const struct test_case fuzz_tests[] = {
	TC(test_fuzz_all_algos),
	{ NULL },
};
