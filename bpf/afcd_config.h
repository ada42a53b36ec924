/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_config.h - a complete config from the defaults, the one place
 * they are put together: the loader fills what the operator did not give
 * from it (loader/params.c), the bench, the BPF tests and the host tests
 * build their configs with it. Host side only (no BPF).
 *
 * Defaults: ALGORITHM.md sec. 3-5; the per-algo target, interval and
 * update period from the AFCD_ALGOS rows (Tables 3.1 and 4.1); the
 * derived sample_bytes covers `window` of traffic at `rate` with the
 * shadow buffer's sb_size samples, at least one MTU (ALGORITHM.md 3a).
 */
#ifndef AFCD_CONFIG_H
#define AFCD_CONFIG_H

#include "afcd_maps.h"

/* sample_bytes for a config's rate, window, sb_size and mtu: rate/8 *
 * window / sb_size, at least one MTU (so that a packet is sampled with
 * probability len / sample_bytes <= 1 and the ring weighs bytes exactly). */
static inline __u64 afcd_default_sample_bytes(const struct afcd_config *c)
{
	double sb;

	if (!c->sb_size)
		return c->mtu_bytes;
	sb = (double)c->rate_bps / 8.0 * ((double)c->window_ns / 1e9) / c->sb_size;
	return sb < c->mtu_bytes ? c->mtu_bytes : (__u64)sb;
}

/* What afcd_sb_grow() keeps between the scans of one interface. */
struct afcd_sb_grow_state {
	__u64 over_since_ns;    /* the first scan of the present run short of slots */
	__u32 over;             /* 1: the last scan was short (over_since_ns holds) */
	__u32 grows;            /* growths so far */
};

/* sb_grow (AFCD_F_SB_GROW): a scan's decision on the ring's size. crowd:
 * the interface's flows of their own that sent within a window, from the
 * GC's last walk (afcd_in_crowd(); the flows the ring has to judge one by
 * one); rate_bps: the config's rate, or the qdisc's measured link rate
 * (0 = unknown); now_ns: the scan's time. The ring is short when all of
 * these hold: the flag and an algo that judges each flow's share by it
 * (AFCD_T_FAIR, not AFD's law: the project's afcd and fall); fewer than
 * AFCD_SB_GROW_AT_MILLI thousandths of a slot a flow of the crowd;
 * sample_bytes derived from the rate (afcd_default_sample_bytes(), or the
 * loader's AFCD_F_SAMPLE_AUTO), not given; and room to grow: a ring of at
 * most 2 * rate/8 * window / mtu slots (the derived sample_bytes is at
 * least an MTU, so a larger ring covers more than `window` of the link:
 * at most two windows; at 1 Gbit/s and 9,000-byte frames 27,734 slots, at
 * 100 Mbit/s and 1,514 bytes 16,512). Once it has been short at every
 * scan for a window (a crowd, not a moment of one) it grows to
 * AFCD_SB_GROW_TO_MILLI thousandths of a slot a flow, at most
 * AFCD_SB_SIZE_MAX and that bound. Returns 1 with c's sb_size and
 * sample_bytes (derived again at rate_bps) set for the new ring, else 0
 * and c untouched. The ring grows in place: the datapath's head runs free
 * (afcd_sb_sample() takes head % sb_size) and the slots past the old size
 * are empty, so every sample keeps its count and leaves when its slot is
 * next written (loader/slots.c restarts a ring only when it shrinks).
 * Source: docs/ALGORITHM.md sec. 3a (the ring's growth; the project's,
 * not the dissertation's: Table 3.1 fixes 2,000 slots). */
static inline int afcd_sb_grow(struct afcd_config *c, struct afcd_sb_grow_state *g,
			       __u32 crowd, __u64 rate_bps, __u64 now_ns)
{
	struct afcd_algo_row row = afcd_algo_row(c->algo);
	struct afcd_config t = *c;
	double bound, want;

	t.rate_bps = rate_bps;
	bound = c->mtu_bytes ? 2.0 * (double)rate_bps / 8.0 * ((double)c->window_ns / 1e9) /
			       c->mtu_bytes : 0;
	if (bound > AFCD_SB_SIZE_MAX)
		bound = AFCD_SB_SIZE_MAX;
	if (!(c->flags & AFCD_F_SB_GROW) || !(row.traits & AFCD_T_FAIR) ||
	    row.law == AFCD_LAW_AFD || !rate_bps || !c->sb_size ||
	    (__u64)c->sb_size * 1000 >= (__u64)crowd * AFCD_SB_GROW_AT_MILLI ||
	    (!(c->flags & AFCD_F_SAMPLE_AUTO) && c->sample_bytes != afcd_default_sample_bytes(&t)) ||
	    bound < c->sb_size + 1) {
		g->over = 0;
		return 0;
	}
	if (!g->over) {
		g->over = 1;
		g->over_since_ns = now_ns;
	}
	if (now_ns - g->over_since_ns < c->window_ns)
		return 0;
	g->over = 0;
	g->grows++;
	want = (double)crowd * AFCD_SB_GROW_TO_MILLI / 1000.0;
	if (want > bound)
		want = bound;
	t.sb_size = (__u32)want;
	c->sb_size = t.sb_size;
	c->sample_bytes = afcd_default_sample_bytes(&t);
	return 1;
}

/* Every field of *c from the defaults of algo at rate_bps (bits/s); the
 * fairness module's policer, the high-water drop and the ring's growth
 * (sb_grow) on, codel_state queue (ALGORITHM.md sec. 3, 4 and 6; only afcd
 * and fall take any of them).
 * slot, ifindex and netns_cookie are 0 (the configuring tool fills
 * them). */
static inline void afcd_config_defaults(struct afcd_config *c, __u32 algo, __u64 rate_bps)
{
	struct afcd_algo_row row = afcd_algo_row(algo);

	*c = (struct afcd_config){
		.abi = AFCD_ABI_VERSION,
		.algo = algo,
		.flags = AFCD_F_POLICE | AFCD_F_CODEL_QUEUE | AFCD_F_HIGH_DROP | AFCD_F_SB_GROW,
		.exponent = AFCD_DEF_EXPONENT,
		.rate_bps = rate_bps,
		.target_ns = row.target_ns,
		.interval_ns = row.interval_ns,
		.horizon_ns = AFCD_DEF_HORIZON_NS,
		.rtt_ns = AFCD_DEF_RTT_NS,
		.stale_after_ns = AFCD_DEF_STALE_AFTER_NS,
		.update_period_ns = row.update_period_ns,
		.window_ns = AFCD_DEF_WINDOW_NS,
		.sb_size = AFCD_SB_SIZE_DEFAULT,
		.mtu_bytes = AFCD_DEF_MTU_BYTES,
		.alpha_milli = AFCD_DEF_ALPHA_MILLI,
		.beta_milli = AFCD_DEF_BETA_MILLI,
		.burst_ns = AFCD_DEF_BURST_NS,
	};
	c->sample_bytes = afcd_default_sample_bytes(c);
}

#endif /* AFCD_CONFIG_H */
