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

/* Every field of *c from the defaults of algo at rate_bps (bits/s); the
 * fairness module's policer and the high-water drop on, codel_state queue
 * (ALGORITHM.md sec. 4 and 6; only afcd and fall take any of them).
 * slot, ifindex and netns_cookie are 0 (the configuring tool fills
 * them). */
static inline void afcd_config_defaults(struct afcd_config *c, __u32 algo, __u64 rate_bps)
{
	struct afcd_algo_row row = afcd_algo_row(algo);

	*c = (struct afcd_config){
		.abi = AFCD_ABI_VERSION,
		.algo = algo,
		.flags = AFCD_F_POLICE | AFCD_F_CODEL_QUEUE | AFCD_F_HIGH_DROP,
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
