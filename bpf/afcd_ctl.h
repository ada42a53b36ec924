/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_ctl.h - the refresh step of the fair-share estimate, as pure
 * integer arithmetic over the maps' structs. It runs every update_period
 * in the kernel, from the BPF timer of bpf/afcd_ctl.bpf.c, or in the
 * loader process where the kernel has no BPF timers; the host unit tests
 * (tests/unit/test_law.c) run the same code. No helpers, no maps, no
 * signed division (BPF cpu v3), every loop bounded by a constant.
 *
 * Sources: ALGORITHM.md sec. 3 (m_fair, eq. 3.4-3.5, the AFD controller
 * of Pan et al., CCR 2003) and sec. 5 (FaLL's global_target = RTT /
 * sqrt(N), eq. 4.5-4.6).
 */
#ifndef AFCD_CTL_H
#define AFCD_CTL_H

#include "afcd_law.h"

/* Longest gap between refreshes the offered-load EWMA integrates, ns; a
 * longer one (a loader restarted after a pause) restarts the average. */
#define AFCD_EWMA_DT_MAX_NS AFCD_TIME_MAX_NS
/* Largest offered load the EWMA represents, bits/s (2^46 ~ 70 Tbit/s). */
#define AFCD_ARRIVAL_MAX_BPS (1ULL << 46)

/* The GC's rule, for the kernel's walk (afcd_ctl.bpf.c) and the loader's
 * (loader/scan.c): a flow-state entry may be deleted at now when it holds
 * no sample (m_i 0: the shadow buffer no longer names it, so deleting it
 * cannot leave a count behind) and has seen no packet for more than
 * idle_ns (the `--gc-idle` option, ns). A last_seen in the future (another
 * CPU's packet since `now` was read) is never idle. */
AFCD_INLINE int afcd_gc_idle(const struct afcd_flow *f, __u64 now_ns, __u64 idle_ns)
{
	return f->m_i == 0 && now_ns > f->last_seen_ns && now_ns - f->last_seen_ns > idle_ns;
}

/* Offered load, bits/s: EWMA of the rate of sampled bytes,
 *   inst = bytes * 8e9 / dt,  a = dt / (dt + tau),  rate += a (inst - rate)
 * (a first-order low-pass with time constant tau whatever the refresh
 * period). bytes: bytes offered in the last dt ns (sampled packets times
 * sample_bytes), dt_ns > 0, tau_ns: window / 2. Returns the new rate,
 * at most AFCD_ARRIVAL_MAX_BPS. dt > AFCD_EWMA_DT_MAX_NS restarts it. */
AFCD_INLINE __u64 afcd_rate_ewma(__u64 rate_bps, __u64 bytes, __u64 dt_ns, __u64 tau_ns)
{
	__u64 inst, a_q16;

	if (!dt_ns)
		return rate_bps;
	if (dt_ns > AFCD_EWMA_DT_MAX_NS)
		return bytes * 8 / (dt_ns / AFCD_NSEC_PER_SEC);
	inst = afcd_mul_div_u64(bytes * 8, AFCD_NSEC_PER_SEC, dt_ns);
	if (inst > AFCD_ARRIVAL_MAX_BPS)
		inst = AFCD_ARRIVAL_MAX_BPS;
	if (rate_bps > AFCD_ARRIVAL_MAX_BPS)
		rate_bps = AFCD_ARRIVAL_MAX_BPS;
	if (tau_ns > AFCD_TIME_MAX_NS)
		tau_ns = AFCD_TIME_MAX_NS;
	a_q16 = (dt_ns << 16) / (dt_ns + tau_ns);    /* (0, 1] in Q16; dt < 2^34 */
	if (inst >= rate_bps)
		return rate_bps + (((inst - rate_bps) * a_q16) >> 16);
	return rate_bps - (((rate_bps - inst) * a_q16) >> 16);
}

/* Samples of the shadow buffer the link can carry (the water level's
 * capacity): sb_size when the offered load fits the rate, sb_size *
 * rate / arrival when it exceeds it. At least 1 for sb_size >= 1. */
AFCD_INLINE __u64 afcd_sb_capacity(__u32 sb_size, __u64 rate_bps, __u64 arrival_bps)
{
	__u64 cap;

	if (arrival_bps <= rate_bps)
		return sb_size;
	if (rate_bps > AFCD_RATE_MAX_BPS)
		rate_bps = AFCD_RATE_MAX_BPS;          /* sb_size * rate < 2^52 */
	cap = (__u64)sb_size * rate_bps / arrival_bps;
	return cap ? cap : 1;
}

/* A link below 1/AFCD_IDLE_LOAD_DIV of its rate is idle for the offered
 * load's average: the next load starts an average of its own. */
#define AFCD_IDLE_LOAD_DIV 64

/* The offered load (afcd_est.arrival_bps) after the bytes sampled since
 * the last refresh, dt_ns ago (0: the first refresh). A load that starts
 * after an idle spell is averaged from its own start (time constant the
 * load's age until it reaches window/2): a low-pass rising from zero took
 * 1.5 s to see a flood that had held the queue at the horizon from its
 * first packet, and the responsive flows starting with it lost their slow
 * start to the horizon (closed loop, tests/bpf/loop.h). */
AFCD_INLINE void afcd_refresh_load(const struct afcd_config *c, struct afcd_est *e,
				   __u64 sampled, __u64 rate, __u64 dt_ns)
{
	__u64 tau = c->window_ns / 2, age = (__u64)e->load_age_ms * 1000000ULL;

	if (!dt_ns)
		return;
	e->arrival_bps = afcd_rate_ewma(e->arrival_bps, sampled - e->prev_sampled, dt_ns,
					age < tau ? age : tau);
	if (rate && e->arrival_bps < rate / AFCD_IDLE_LOAD_DIV)
		e->load_age_ms = 0;
	else if (e->load_age_ms < (1u << 30))
		e->load_age_ms += (__u32)(dt_ns / 1000000ULL) ? (__u32)(dt_ns / 1000000ULL) : 1;
}

/* The counters of the queue the refresh step reads, each whole (its word
 * in the queue plus its CPUs' parts: maps/afcd_maps.h, afcd_qpcpu). */
struct afcd_refresh_counts {
	__u64 passed;          /* stats[AFCD_S_PASSED], packets */
	__u64 sojourn_sum_ns;  /* sojourn_sum_ns */
	__u64 idle_ns;         /* stats[AFCD_S_IDLE_NS] */
	__u64 police_drop;     /* stats[AFCD_S_POLICE_DROP], packets */
};

/* The counters of a queue whose words hold them whole (a folded copy, or
 * the host build's queue). */
AFCD_INLINE void afcd_refresh_counts_of(const struct afcd_queue *q, struct afcd_refresh_counts *n)
{
	n->passed = q->stats[AFCD_S_PASSED];
	n->sojourn_sum_ns = q->sojourn_sum_ns;
	n->idle_ns = q->stats[AFCD_S_IDLE_NS];
	n->police_drop = q->stats[AFCD_S_POLICE_DROP];
}

/* The queue's backlog, ns: the mean sojourn of the packets passed since
 * the last refresh (n: its counters), or (none passed) what the EDT clock
 * holds ahead of now. */
AFCD_INLINE __u64 afcd_refresh_backlog(const struct afcd_queue *q,
				       const struct afcd_refresh_counts *n, struct afcd_est *e,
				       __u64 now)
{
	__u64 passed = n->passed, sum = n->sojourn_sum_ns, t_last = q->t_last_ns;
	__u64 backlog = t_last > now ? t_last - now : 0;

	if (passed > e->prev_passed && e->prev_passed)
		backlog = (sum - e->prev_sojourn_sum_ns) / (passed - e->prev_passed);
	e->prev_passed = passed;
	e->prev_sojourn_sum_ns = sum;
	return backlog;
}

/* The fair rate for the policer: the water level's share of the ring's
 * samples (of sb_size once it is full) of the offered load (at least the
 * rate), falling at once and rising with time constant window, times the
 * drain factor; 0 when nobody is above the level. */
AFCD_INLINE void afcd_refresh_fair_rate(const struct afcd_config *c, const struct afcd_scan *s,
					struct afcd_est *e, __u64 rate, __u64 dt_ns)
{
	__u64 level;

	if (!s->waterline || s->waterline >= s->max_count || !c->sb_size) {
		e->fair_level_bps = 0;
		e->fair_rate_bps = 0;
		return;
	}
	/* waterline_milli <= AFCD_SB_SIZE_MAX * 1000 < 2^22: exact below a
	 * load of 2^42 bit/s (4.4 Tbit/s) */
	level = (__u64)s->waterline_milli * (e->arrival_bps > rate ? e->arrival_bps : rate) /
		((__u64)(s->samples && s->samples < c->sb_size ? s->samples : c->sb_size) * 1000);
	e->fair_level_bps = !e->fair_level_bps || level <= e->fair_level_bps ? level :
		afcd_rate_ewma(e->fair_level_bps, level / 8 * dt_ns / AFCD_NSEC_PER_SEC,
			       dt_ns, c->window_ns);
	e->fair_rate_bps = e->fair_level_bps * e->drain_milli / 1000;
}

/*
 * One refresh (ALGORITHM.md sec. 3 and 5), at time now (ns):
 *  - offered load: EWMA of the bytes the samples since the last refresh
 *    stand for (AFCD_A_SAMPLED_BYTES);
 *  - Q: the mean predicted sojourn of the packets admitted since the last
 *    refresh (the instantaneous backlog swings between empty and the
 *    horizon within a period), or the backlog now when nothing passed,
 *    in milli-samples through sample_bytes;
 *  - Q_target: target (AFCD) or global_target (FaLL) in milli-samples;
 *  - m_fair by the AFD controller around the loader's water level of the
 *    shadow buffer (s->waterline: afcd_waterfill_hist(), each aggregate,
 *    the mice one too, one entity), or sb_size / N without one (eq. 3.4-3.5);
 *  - the fair level = waterline * offered load / sb_size, the rate of a
 *    flow that holds the max-min share; it falls at once and rises with
 *    time constant window: a responsive flow that backed off (a loss) is
 *    still below its share in the ring for a window, and the level would
 *    otherwise hand its room to a non-responsive flow before it recovers;
 *  - fair_rate = fair level * the drain factor of the mean sojourn, for the
 *    policer; 0 when no entity (flow or aggregate) holds more than the
 *    water level: nobody is above the fair share;
 *  - the crowd gate (afcd_gate_step()): the policer's gate for entities
 *    near the water level, raised while the link idled as it dropped;
 *  - global_target = RTT / sqrt(N), N = entities with >= 2 samples (or the
 *    datapath's N without any), clamped [2 tx(MTU), interval].
 * The rate is afcd_rate_of(): the rate parameter, or the qdisc's measured
 * link rate; while that is unknown (0), m_fair is the anchor and nobody is
 * policed. c: the interface's config (sample_bytes != 0 as the loader
 * validates; returns without writing otherwise). q: its queue,
 * read with plain loads (monotonic u64 counters, aligned); cnt: its
 * counters whole (NULL: q's words hold them, as in a folded copy). s: the
 * loader's last scan. e: updated in place; heartbeat_ns = now last.
 */
AFCD_INLINE void afcd_refresh(const struct afcd_config *c, const struct afcd_queue *q,
			      const struct afcd_refresh_counts *cnt, const struct afcd_scan *s,
			      struct afcd_est *e, __u64 now)
{
	struct afcd_refresh_counts own;
	__u64 sampled = q->astats[AFCD_A_SAMPLED_BYTES];
	__s32 n_active = q->n_active, n;
	__u64 rate = afcd_rate_of(c, q), backlog, gt, qt_ns, dt_ns;
	__u32 traits = afcd_algo_row(c->algo).traits;
	__u32 anchor;
	__s64 qm, qt;

	if (!c->sample_bytes)
		return;
	if (!cnt) {
		afcd_refresh_counts_of(q, &own);
		cnt = &own;
	}
	dt_ns = e->prev_t_ns && now > e->prev_t_ns ? now - e->prev_t_ns : 0;
	afcd_refresh_load(c, e, sampled, rate, dt_ns);
	e->prev_t_ns = now;
	e->prev_sampled = sampled;
	backlog = afcd_refresh_backlog(q, cnt, e, now);

	n = s->n_long ? (__s32)s->n_long : n_active;
	gt = afcd_fall_global_target_ns(c->rtt_ns, n, 2 * afcd_tx_ns(c->mtu_bytes, rate),
					c->interval_ns);
	anchor = s->waterline ? s->waterline : afcd_m_fair_fallback(c->sb_size, n_active);
	if (!rate) {
		/* the link's rate is not known yet (a qdisc without a rate
		 * that has never been backlogged): it has carried all it was
		 * offered, so nobody is above the level: the anchor as m_fair,
		 * no fair rate, no controller state */
		e->m_fair = anchor;
		e->ctrl_milli = 0;
		e->q_old_milli = 0;
		e->drain_milli = 1000;
		e->fair_level_bps = 0;
		e->fair_rate_bps = 0;
		goto out;
	}
	qt_ns = traits & AFCD_T_GTARGET ? gt : c->target_ns;
	qm = afcd_backlog_milli_samples(backlog, rate, c->sample_bytes);
	qt = afcd_backlog_milli_samples(qt_ns, rate, c->sample_bytes);
	e->m_fair = afcd_afd_m_fair(&e->ctrl_milli, e->q_old_milli, qm, qt, c->alpha_milli,
				    c->beta_milli, c->sb_size, anchor, !!(traits & AFCD_T_LIFT));
	e->q_old_milli = qm;
	e->drain_milli = afcd_drain_milli(backlog, qt_ns, c->horizon_ns);
	afcd_refresh_fair_rate(c, s, e, rate, dt_ns);
	e->crowd_gate_ns = afcd_gate_step(e->crowd_gate_ns,
					  afcd_police_gate_ns(c->target_ns,
							      traits & AFCD_T_GTARGET ? gt : 0),
					  dt_ns, cnt->idle_ns - e->prev_idle_ns,
					  cnt->police_drop - e->prev_police_drop,
					  c->window_ns);
out:
	e->prev_idle_ns = cnt->idle_ns;
	e->prev_police_drop = cnt->police_drop;
	e->n_flows = n_active > 0 ? (__u32)n_active : 0;
	e->n_long = s->n_long;
	e->mice_samples = q->agg[AFCD_AGG_MICE].m_i;
	e->waterline = s->waterline;
	e->global_target_ns = gt;
	e->refreshes++;
	e->heartbeat_ns = now;
}

/* The loader's scan (every AFCD_SCAN_PERIOD_NS): the water level of the
 * shadow buffer for capacity samples (afcd_sb_capacity()) from its
 * histogram of per-flow counts n (struct afcd_sb_hist's n[]), written into
 * the fields of sc the refresh step reads (waterline, max_count, samples,
 * n_long); the caller stamps the heartbeat. User space only (two
 * passes of up to sb_size steps): the loader, the ns-3 engine, the tests.
 * Source: docs/ALGORITHM.md sec. 3a. */
static inline void afcd_scan_of_hist(const __u32 *n, __u32 sb_size, __u64 capacity,
				     struct afcd_scan *sc)
{
	struct afcd_water w;

	afcd_waterfill_hist(n, sb_size, capacity, &w);
	sc->waterline = w.level;
	sc->waterline_milli = w.level_milli;
	sc->max_count = w.max_count;
	sc->samples = w.samples;
	sc->n_long = w.n_long;
}

#endif /* AFCD_CTL_H */
