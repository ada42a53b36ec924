/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_decide.h - the per-packet decision of every algo as pure
 * functions, compiled into the BPF program and into the host tests
 * (tests/unit/test_law.c), in the manner of the kernel's codel_impl.h:
 *
 *   afcd_fair_now()  the estimate a packet is judged against: the
 *                    refresh step's while fresh, else the datapath's
 *                    fallback (also what `afcd stats` shows);
 *   afcd_inputs()    from it, for one flow: target_i, the AFD coin, the
 *                    policer's tx at the fair rate;
 *   afcd_decide()    lock-free (atomics on the interface's clock and
 *                    counters), in four stages: afcd_admit() (the
 *                    horizon, the policer), afcd_law() (the algo's drop
 *                    law, one switch on enum afcd_law), afcd_commit()
 *                    (the EDT clock) and afcd_account() (counters and
 *                    the state of admitted packets).
 *
 * The .bpf.c does only I/O around them: ctx, maps, tstamp, CE.
 * Source: docs/ALGORITHM.md sec. 2-6 and 3a; RFC 8289 sec. 5; dissertation
 * eq. 3.14 (AFCD), 4.5-4.6 and 4.16 (FaLL); AFD (Pan et al., CCR 2003).
 */
#ifndef AFCD_DECIDE_H
#define AFCD_DECIDE_H

#include "afcd_law.h"

/* Everything afcd_decide() needs from the config, the estimate and the flow. */
struct afcd_in {
	__u64 now_ns;
	__u64 tx_ns;          /* len at the virtual queue's rate */
	__u64 rate_bps;
	__u64 horizon_ns;
	__u64 interval_ns;
	__u64 law_target_ns;  /* codel: target; fall: global_target (gate 1) */
	__u64 target_i_ns;    /* afcd/fall: per-flow target (AFCD_TARGET_INF: never) */
	__u64 ce_threshold_ns;
	__u64 police_tx_ns;   /* len at the fair rate; 0 = the policer is off */
	__u64 police_lead_ns; /* how far a flow may run ahead of its fair-rate clock
			       * (two leads for a mouse's opening, afcd_opening()) */
	__u64 police_band_ns; /* the band past the lead where a flow is dropped once an
			       * interval (afcd_police_band_ns()); 0: none */
	__u64 police_gate_ns; /* the policer holds a flow only while the packet's sojourn
			       * is above this (afcd_police_gate_ns()) */
	__u32 len;            /* wire length, bytes (a GSO/GRO aggregate's: all its
			       * segments with their headers, qdisc_pkt_len()) */

	__u32 traits;         /* enum afcd_trait of the algo */
	__u32 burst_ns;       /* the pacing credit, ns (the config's burst_ns, <= 1 s);
			       * the EDT clock gives a policed entity its share of it
			       * (afcd_burst_share(), in afcd_decide()) */
	__u8  law;            /* enum afcd_law of the algo */
	__u8  aqm;            /* the drop law applies (every law but none) */
	__u8  ect;            /* ECT(0) or ECT(1) */
	__u8  ecn_on:1,       /* AFCD_F_ECN */
	      high_drop:1;    /* AFCD_F_HIGH_DROP: the high-water mark drops a packet
			       * that cannot carry it (afcd_high_water()) */
	__u8  codel_global;   /* the whole queue's CoDel state decides (law codel, or
			       * codel_state global where the algo allows it) */
	__u8  codel_queue;    /* codel_state queue where the algo allows it: that state,
			       * driven by the queue's sojourn against law_target
			       * (afcd_codel_run_queue()) */
	__u8  afd_drop;       /* algo afd: the coin says drop, p = (1 - m_fair/m_i)+ */
	__u8  law_no_mark;    /* the law's verdict is a drop even for an ECT packet
			       * under ecn on (afd above AFCD_AFD_MARK_MAX_Q16) */
	__u8  stale;          /* no fresh estimate: the datapath's fallback was used */
	__u8  mouse;          /* afcd_is_mouse(): policed on the mice aggregate's clock */
	__u16 maxpacket_len;  /* what the packet counts as in CoDel's maxpacket: len,
			       * at most the config's mtu_bytes and 65535 (afcd_in_init()) */
};

/* The estimate a packet is judged against: the refresh step's while its
 * heartbeat is younger than stale_after (ALGORITHM.md sec. 3), else the
 * datapath's own (sb_size / N, RTT / sqrt(N), a policer at rate / N while
 * the queue is above target). */
struct afcd_fair {
	__u32 m_fair;         /* samples */
	__u32 waterline;      /* max-min share, samples: only entities above it are policed */
	__u32 mice_samples;   /* the mice aggregate's samples */
	__u64 gt_ns;          /* FaLL's global target */
	__u64 fair_rate_bps;  /* 0: nobody policed */
	__u64 mice_floor_bps; /* the mice aggregate is never held below this
			       * (afcd_mice_floor_bps() of the link's rate) */
	__u64 crowd_gate_ns;  /* the policer's gate near the water level (afcd_gate_step());
			       * 0: the base gate only */
	__u8  stale;
};

/* FaLL's fallback global target for n_long flows on a link of rate_bps
 * (afcd_rate_of(); 0: unknown, no lower clamp): gc's value while it was
 * computed for the same N (clamped as afcd_fall_global_target_ns()
 * clamps it) less than update_period ago, else computed and stored there
 * (gc NULL: always computed). */
AFCD_INLINE __u64 afcd_fall_fallback_gt(const struct afcd_config *c, __u64 rate_bps,
					__s32 n_long, __u64 now, struct afcd_gt_cache *gc)
{
	__u64 n = n_long <= 1 ? 1 : n_long >= (1 << 13) ? (1 << 13) : (__u64)n_long, v, gt;

	if (gc) {
		v = *(volatile __u64 *)&gc->v;
		if (v && v >> 34 == n &&
		    now - *(volatile __u64 *)&gc->at_ns < c->update_period_ns)
			return v & ((1ULL << 34) - 1);
	}
	gt = afcd_fall_global_target_ns(c->rtt_ns, (__s32)n,
					2 * afcd_tx_ns(c->mtu_bytes, rate_bps), c->interval_ns);
	if (gc && gt < (1ULL << 34)) {
		gc->v = n << 34 | gt;
		gc->at_ns = now;
	}
	return gt;
}

/* rate_bps: the link's (afcd_rate_of(): the rate parameter, or the
 * qdisc's measured rate; 0 while unknown: no fallback policer, no mice
 * floor); n_active:
 * N, the entities holding samples (q->n_active); n_mice: the mice
 * aggregate's samples now (q->agg[AFCD_AGG_MICE].m_i), what a mouse is
 * judged and policed by, fresh estimate or not; gc: the interface's cache
 * of FaLL's fallback global target (NULL: none). */
AFCD_INLINE void afcd_fair_now(const struct afcd_config *c, const struct afcd_est *e,
			       __u64 rate_bps, __s32 n_active, __u32 n_mice, __u64 now,
			       struct afcd_gt_cache *gc, struct afcd_fair *fs)
{
	fs->mice_samples = n_mice;
	fs->mice_floor_bps = afcd_mice_floor_bps(rate_bps);
	if (e && e->m_fair && (__s64)(now - e->heartbeat_ns) <= (__s64)c->stale_after_ns) {
		fs->m_fair = e->m_fair;
		fs->waterline = e->waterline;
		fs->gt_ns = e->global_target_ns;
		fs->fair_rate_bps = e->fair_rate_bps;
		fs->crowd_gate_ns = e->crowd_gate_ns;
		fs->stale = 0;
		return;
	}
	/* N counts the mice aggregate as one entity, as the scan does: a
	 * sender that rotates ports or spoofs sources must not drive
	 * sb_size / N to 1 */
	if (n_active < 0)
		n_active = 0;
	fs->m_fair = afcd_m_fair_fallback(c->sb_size, n_active);
	fs->gt_ns = afcd_algo_row(c->algo).traits & AFCD_T_GTARGET ?
		afcd_fall_fallback_gt(c, rate_bps, n_active, now, gc) : 0;
	/* the fallback policer: without the scan's water level,
	 * a flow holding more than the equal share of the ring (sb_size / N)
	 * (the mice aggregate too, on its own clock) is held at rate / N, and
	 * only while the queue is above its target (afcd_decide()), so the
	 * fallback never idles the link */
	fs->waterline = fs->m_fair;
	fs->fair_rate_bps = n_active > 1 ? rate_bps / (__u64)n_active : 0;
	fs->crowd_gate_ns = 0;
	fs->stale = 1;
}

/* The pacing credit of an entity the policer holds (above the water
 * level), ns: its fair share of the queue's credit burst_ns (<= 1 s),
 * burst_ns * fair rate / link rate = burst_ns * tx_ns / police_tx_ns
 * (the packet's time at the link's rate and at the fair rate), what a
 * round robin over the flows would give it of the burst after a gap: a
 * flood beside one responsive flow recovers half the gap its sender's
 * stall left, and beside ten CUBIC flows, which idle the link often, an
 * eleventh. burst_ns when police_tx_ns is 0 or not above tx_ns. Source:
 * docs/ALGORITHM.md sec. 2. */
AFCD_INLINE __u32 afcd_burst_share(__u32 burst_ns, __u64 tx_ns, __u64 police_tx_ns)
{
	__u64 share_q10;

	if (!police_tx_ns || tx_ns >= police_tx_ns)
		return burst_ns;
	/* fair rate / rate in Q10: tx_ns < 2^44 (a 1 MiB frame at 1
	 * kbit/s) and burst_ns < 2^32, so neither product overflows */
	share_q10 = (tx_ns << 10) / police_tx_ns;
	return (__u32)(((__u64)burst_ns * share_q10) >> 10);
}

/* A flow entry's birth stamp (afcd_flow.born) for an entry made at
 * now_ns (ns, the datapath's clock): now in units of 2^20 ns (about
 * 1.05 ms), modulo 2^32 (52 days), never 0 (0 marks an aggregate). No
 * error. Source: docs/ALGORITHM.md sec. 3a (mice as one flow). */
#define AFCD_BORN_SHIFT 20
AFCD_INLINE __u32 afcd_flow_born(__u64 now_ns)
{
	return (__u32)(now_ns >> AFCD_BORN_SHIFT) | 1;
}

/* Is an entry born at born (afcd_flow_born()) younger than window_ns at
 * now_ns (both ns), to within one unit of 2^20 ns? 1 or 0; 0 for born 0
 * (an aggregate). Modular: an entry 52 days old reads as young for a
 * window. Source: docs/ALGORITHM.md sec. 3a (mice as one flow). */
AFCD_INLINE int afcd_flow_young(__u32 born, __u64 now_ns, __u64 window_ns)
{
	return born && (__u32)(afcd_flow_born(now_ns) - born) <
		       (__u32)(window_ns >> AFCD_BORN_SHIFT) + 1;
}

/* Is flow-state entry f one of the interface's crowd at now_ns, for
 * sb_grow (afcd_sb_grow(), bpf/afcd_config.h): a flow of its own (an entry
 * of a flow, not an aggregate, born at least window_ns ago: no mouse by its
 * age) that sent within window_ns (a last packet after now, another CPU's,
 * counts). Counted by the GC's walk (bpf/afcd_ctl.bpf.c, loader/scan.c),
 * once a GC period. 1 or 0. Source: docs/ALGORITHM.md sec. 3a (the ring's
 * growth; a mouse's age as in afcd_is_mouse()). */
AFCD_INLINE int afcd_in_crowd(const struct afcd_flow *f, __u64 now_ns, __u64 window_ns)
{
	return f->born && !afcd_flow_young(f->born, now_ns, window_ns) &&
	       (f->last_seen_ns >= now_ns || now_ns - f->last_seen_ns <= window_ns);
}

/* A flow's tag in the flow memory (struct afcd_seen.tag, maps/afcd_maps.h)
 * for flow id id (afcd_flow_id()): its high 32 bits, never 0 (0 marks an
 * empty slot); the slot is the id's low bits. */
AFCD_INLINE __u32 afcd_seen_tag(__u64 id)
{
	return (__u32)(id >> 32) | 1;
}

/* How long after its entry was last made a flow that has never been a
 * flow of its own is still known when it comes back, beyond the window:
 * one retransmission timeout, 1 s (RFC 6298 sec. 2.1's initial RTO,
 * Linux's TCP_TIMEOUT_INIT), so that a flow whose first packets were lost
 * and which waited out a timeout is the flow it was. ns. */
#define AFCD_SEEN_BACK_NS 1000000000ULL

/* The birth stamp (afcd_flow.born) of an entry made at now_ns for the flow
 * of tag tag, and its slot s of the flow memory updated (struct
 * afcd_seen): the flow's first sight when s holds its tag and either its
 * entry was last made less than window_ns + AFCD_SEEN_BACK_NS ago (the
 * LRU table evicts it while it sends: more long-lived flows than entries;
 * or it waited out a retransmission timeout; such a flow is a flow of its
 * own from then on, s->own) or it has been a flow of its own (back from
 * any silence); now (a new flow) otherwise: a flow never seen, one whose
 * slot another flow took since, one that only ever comes back after
 * longer than that and was never more than a mouse (a churn of such flows
 * stays mice, one entity). So past the table's bound a long-lived flow is
 * young, a mouse, only in its first window, as it is inside the bound.
 * s NULL: now, nothing written. now_ns, window_ns: ns (window_ns below
 * 2^51). Source: docs/ALGORITHM.md sec. 3a (the flow memory). */
AFCD_INLINE __u32 afcd_seen_born(struct afcd_seen *s, __u32 tag, __u64 now_ns,
				 __u64 window_ns)
{
	__u32 now = afcd_flow_born(now_ns);

	if (!s)
		return now;
	if (s->tag == tag &&
	    ((__u32)(now - s->made) <
	     (__u32)((window_ns + AFCD_SEEN_BACK_NS) >> AFCD_BORN_SHIFT) + 1 || s->own)) {
		s->made = now;
		s->own = 1;
		return s->born;
	}
	s->tag = tag;
	s->born = now;
	s->made = now;
	s->own = 0;
	return now;
}

/* A flow of tag tag takes samples of its own (it is no mouse): its slot s
 * of the flow memory, if still its, says so (afcd_seen.own), written once.
 * s NULL: nothing. Source: docs/ALGORITHM.md sec. 3a (the flow memory). */
AFCD_INLINE void afcd_seen_own(struct afcd_seen *s, __u32 tag)
{
	if (s && s->tag == tag && !s->own)
		s->own = 1;
}

/* A mouse: a flow holding at most one sample (m_i <= 1) whose entry is
 * young, made less than the shadow buffer's window ago (window_ns, the
 * time the ring covers at the link's rate), and has carried fewer than
 * AFCD_MOUSE_SAMPLES samples' worth of bytes since (bytes: its entry's
 * admitted bytes; sample_bytes: the config's). A mouse's samples go to the
 * mice aggregate (afcd_flow_of()), which is one entity of the water level
 * and is judged and policed as one (afcd_inputs()), so that a sender that
 * rotates ports or spoofs sources (every packet a new flow, its entry made
 * anew or young) is one entity. A flow is itself once either bound is
 * passed:
 *  - bytes: a port that a rotating sender keeps past that many bytes
 *    holds its own samples while it sends and is judged, and policed,
 *    by them;
 *  - age: an entry older than the window has an m_i that counts every
 *    sample the flow took over the whole ring, so an m_i <= 1 then is a
 *    measurement (a flow below its share), not a flow too young to have
 *    samples. A long-lived flow of a crowd (N near or above sb_size / 2,
 *    where m_fair is a few samples and hundreds of flows hold one sample
 *    or none at a time) that lost its first packets never carries
 *    4 samples' bytes (250 KB at 1 Gbit/s). Judged with the aggregate,
 *    such flows were held to one fair rate among them, timed out and
 *    stayed there, and their aggregate held the water level at its own
 *    size, above every flow (closed loop, tests/bpf test_loop_crowd_is_no_mice:
 *    1,000 CUBIC flows at 1 Gbit/s and 100 ms, sb_size 2000: Jain 0.24,
 *    half the flows under 0.05 of a share; 0.98 with the age bound).
 * A churn of one-datagram flows whose entries are evicted before their
 * flows come back stays one entity; flows that keep entries longer than
 * a window are flows of their own, each below its share, as a scheduler
 * with a queue per flow would hold them. Source: docs/ALGORITHM.md sec. 3a
 * (mice as one flow). m_i: samples; bytes, sample_bytes: bytes; born:
 * afcd_flow.born; now_ns, window_ns: ns. Returns 1 for a mouse, else 0. */
#define AFCD_MOUSE_SAMPLES 4
AFCD_INLINE int afcd_is_mouse(__u32 m_i, __u64 bytes, __u64 sample_bytes, __u32 born,
			      __u64 now_ns, __u64 window_ns)
{
	return m_i <= 1 && bytes / AFCD_MOUSE_SAMPLES < sample_bytes &&
	       afcd_flow_young(born, now_ns, window_ns);
}

/* A flow's opening: a packet of an entry that has admitted fewer than
 * mtu_bytes before it (bytes: afcd_flow.bytes; mtu_bytes: the config's),
 * its SYN and first segment, or its first GSO aggregate; a new entry's
 * first packet always is. A mouse's opening gets a second lead on the
 * mice aggregate's clock (afcd_inputs()), so that a flow's first packets
 * are not dropped because other young flows ran the aggregate past its
 * lead. In ns-3 at 1 Gbit/s (figs. 4.7 and 4.8: 40 long CUBIC flows and
 * 1,235 short flows a second, mice at two fair shares, under the floor)
 * the aggregate's clock past its lead dropped SYNs: 0.6-1.0 % of the
 * short flows took a SYN timeout, 1 s; with the second lead none did,
 * FCT p99 4.8-21.9 ms (docs/NS3.md). fq_codel gives a
 * new flow its first quantum ahead of the others in the same way (RFC
 * 8290 sec. 4.1, the new-flows list). Returns 1 for an opening, else 0.
 * Source: docs/ALGORITHM.md sec. 3a (mice as one flow). */
AFCD_INLINE int afcd_opening(__u64 bytes, __u32 mtu_bytes)
{
	return bytes < mtu_bytes;
}

/* Fill in for a packet of a flow (or an aggregate, afcd_maps.h) holding
 * m_i samples, a mouse or not (afcd_is_mouse()), the flow's opening or
 * not (afcd_opening(); it counts for a mouse only), by the algo's law.
 * rand16: uniform on [0, 2^16) (the AFD coin). in->now_ns, len, tx_ns,
 * law, traits and the config copies are set by afcd_in_init(). */
AFCD_INLINE void afcd_inputs(const struct afcd_config *c, const struct afcd_fair *fs,
			     __u32 m_i, int mouse, int opening, __u32 rand16,
			     struct afcd_in *in)
{
	if (in->law == AFCD_LAW_NONE)
		return;
	in->aqm = 1;
	if (!(in->traits & AFCD_T_FAIR))
		return;
	if (m_i > c->sb_size)
		m_i = c->sb_size;
	in->stale = fs->stale;
	if (in->law == AFCD_LAW_AFD) {
		/* AFD (Pan et al.) drops the excess of an entity above the max-min
		 * share: a flow with m_i above the water level, or (a mouse) the
		 * mice aggregate, one entity as for the policer below, so that a
		 * sender that rotates ports or spoofs sources is judged as one */
		__u32 m = mouse ? fs->mice_samples : m_i, p = afcd_afd_drop_q16(fs->m_fair, m);

		in->afd_drop = m > fs->waterline && rand16 < p;
		in->law_no_mark = p > AFCD_AFD_MARK_MAX_Q16;
		return;
	}
	if (in->traits & AFCD_T_GTARGET)
		in->law_target_ns = fs->gt_ns;
	in->target_i_ns = afcd_target_i_ns(in->law_target_ns, fs->m_fair, m_i, c->exponent,
					   in->horizon_ns);
	/* the policer holds the entities above the water level: a flow with
	 * m_i above it, or (a mouse) the mice aggregate when it is above it.
	 * Flows below their share are never policed, even while the drain
	 * factor pulls the fair rate below their rate. */
	if ((in->traits & AFCD_T_POLICE) && (c->flags & AFCD_F_POLICE) && fs->fair_rate_bps &&
	    (mouse ? fs->mice_samples : m_i) > fs->waterline) {
		__u32 me = mouse ? fs->mice_samples : m_i;
		/* the mice together are never held below their floor */
		__u64 fair = mouse && fs->mice_floor_bps > fs->fair_rate_bps ?
			     fs->mice_floor_bps : fs->fair_rate_bps;

		in->police_tx_ns = afcd_tx_ns(in->len, afcd_police_rate_bps(fair, me,
									   fs->waterline));
		if (!in->police_tx_ns)
			in->police_tx_ns = 1;
		/* one interval of burst at the fair rate, but never more than
		 * half the buffer: a policed sender that stalls and then bursts
		 * (its clock fell behind) must not fill the queue to the
		 * horizon, where compliant flows would be dropped too */
		in->police_lead_ns = c->interval_ns < c->horizon_ns / 2 ? c->interval_ns :
				     c->horizon_ns / 2;
		in->police_band_ns = afcd_police_band_ns(in->police_lead_ns, me, fs->waterline);
		/* a mouse's opening passes up to two leads ahead of the mice
		 * clock, the others up to one: young flows past their opening
		 * (a flow in slow start, a large transfer) hold the clock near
		 * one lead and are dropped there first. A sender that makes
		 * every packet a new flow's opening is held to the floor as
		 * before, with a burst of two leads. */
		if (mouse && opening)
			in->police_lead_ns *= 2;
		in->police_gate_ns = afcd_police_gate_ns(c->target_ns, in->law_target_ns);
		/* an entity near the level (a crowd's flow, afcd_gate_step())
		 * waits for the crowd gate; a flow far above it (a flood), with
		 * a fresh estimate, for the far gate (afcd_police_gate_far_ns());
		 * the mice aggregate, held to its floor, for the base gate */
		if (fs->crowd_gate_ns > in->police_gate_ns &&
		    (__u64)me <= (__u64)fs->waterline * AFCD_GATE_CROWD_MUL)
			in->police_gate_ns = fs->crowd_gate_ns;
		else if (!mouse && !fs->stale)
			in->police_gate_ns = afcd_police_gate_far_ns(in->police_gate_ns,
								     in->tx_ns, me,
								     fs->waterline);
		in->mouse = !!mouse;
	}
}

/* The part of the inputs every packet has, from the config. */
AFCD_INLINE void afcd_in_init(const struct afcd_config *c, __u64 now, __u32 len,
			      struct afcd_in *in)
{
	struct afcd_algo_row row = afcd_algo_row(c->algo);

	in->now_ns = now;
	in->len = len;
	/* CoDel's maxpacket floor (RFC 8289 sec. 5.2: no drop while the
	 * queue holds less than a packet) counts an aggregate as the
	 * segments it leaves as, at most one MTU, as the kernel's codel
	 * floors at the device's MTU (psched_mtu()): a 64 kB GSO packet
	 * must not keep the law off below 64 kB of backlog for every flow */
	in->maxpacket_len = (__u16)(len < c->mtu_bytes && len < 0xffff ? len :
				    c->mtu_bytes < 0xffff ? c->mtu_bytes : 0xffff);
	in->rate_bps = c->rate_bps;
	in->tx_ns = afcd_tx_ns(len, c->rate_bps);
	in->horizon_ns = c->horizon_ns;
	in->interval_ns = c->interval_ns;
	in->law = (__u8)row.law;
	in->traits = row.traits;
	in->ecn_on = !!(c->flags & AFCD_F_ECN);
	in->high_drop = !!(c->flags & AFCD_F_HIGH_DROP);
	in->codel_queue = (c->flags & AFCD_F_CODEL_QUEUE) && (row.traits & AFCD_T_GCODEL);
	in->codel_global = row.law == AFCD_LAW_CODEL ||
			   (!in->codel_queue && (c->flags & AFCD_F_CODEL_GLOBAL) &&
			    (row.traits & AFCD_T_GCODEL));
	in->ce_threshold_ns = c->ce_threshold_ns;
	in->burst_ns = c->burst_ns < AFCD_BURST_MAX_NS ? (__u32)c->burst_ns : AFCD_BURST_MAX_NS;
	in->law_target_ns = c->target_ns;
	in->target_i_ns = AFCD_TARGET_INF;
}

/* Lock-free on the interface: the interface's shared state is
 * touched with atomics (the EDT clock, the counters) or single-word
 * writes whose races are benign (maxpacket, last/max sojourn, the whole
 * queue's first_above_time). The one multi-word state machine two CPUs
 * may share, the whole queue's CoDel vars (q->gcv: algo codel, or
 * codel_state global), is updated by one CPU at a time under a try-lock
 * (q->gcv_busy, compare-and-swap): a packet that finds it taken passes
 * that law for this packet (as if below target) rather than wait, so no
 * CPU ever spins on another. Per-flow state is written without a lock:
 * one flow is sent from one CPU at a time in practice (one socket), and
 * a race there costs that flow one stale CoDel decision, nobody else.
 * (A bpf_spin_lock taken once per packet costs as much as the minimal EDT
 * program itself, afcd-bench's edt_lock, and serializes every CPU.) */
#define AFCD_READ_ONCE(x) (*(volatile __typeof__(x) *)&(x))
#define AFCD_ATOMIC_ADD(p, v) ((void)__sync_fetch_and_add((p), (v)))

/* Add v to counter field of queue q (stats[i] or sojourn_sum_ns, a field
 * of both struct afcd_queue and struct afcd_qpcpu): in this CPU's part
 * (maps/afcd_maps.h, afcd_qpcpu), a plain add, where the includer gives
 * AFCD_QPCPU(q) (the BPF programs: afcd_maps.bpf.h) and it has the
 * entry; else in the queue's shared word, atomically (the host build, or
 * a per-CPU entry that cannot be had). AFCD_COUNT_PC takes the part an
 * earlier AFCD_PC(q) found, for several counters of one packet. */
#ifdef AFCD_QPCPU
#define AFCD_PC(q) AFCD_QPCPU(q)
#else
#define AFCD_PC(q) ((struct afcd_qpcpu *)0)
#endif
#define AFCD_COUNT_PC(pc, q, field, v) do {					\
	struct afcd_qpcpu *pc_ = (pc);						\
										\
	if (pc_)								\
		pc_->field += (v);						\
	else									\
		AFCD_ATOMIC_ADD(&(q)->field, (v));				\
} while (0)
#define AFCD_COUNT(q, field, v) AFCD_COUNT_PC(AFCD_PC(q), q, field, v)

/* Advance a shared EDT clock by tx_ns for an admitted packet and return
 * its departure time: afcd_clock_start(clock, now, burst_ns) + tx, as
 * afcd_edt_schedule() computed from the value `seen` before the decision
 * (burst_ns: afcd_burst_share() of in->burst_ns there; 0 for a policer's
 * clock, which has no credit), but committed atomically so that packets admitted on other
 * CPUs in between are queued ahead of this one, never lost (an idle clock
 * is moved with one compare-and-swap; a busy one by a fetch-add, which
 * cannot fail). The departure may thus be later than the one the decision
 * saw, by the packets other CPUs admitted meanwhile. *idle_ns: the time
 * the clock skipped for this packet, which the link lost for good (the
 * gap beyond the credit, now - burst_ns - seen, when its compare-and-swap
 * moved the clock; else 0; 0 for a clock never started). */
AFCD_INLINE __u64 afcd_clock_advance(__u64 *clock_ns, __u64 seen, __u64 now, __u64 tx_ns,
				     __u64 burst_ns, __u64 *idle_ns)
{
	__u64 start = afcd_clock_start(seen, now, burst_ns);

	*idle_ns = 0;
	if (!afcd_time_after_eq(seen, now) &&
	    __sync_val_compare_and_swap(clock_ns, seen, start + tx_ns) == seen) {
		*idle_ns = seen ? start - seen : 0;
		return start + tx_ns;
	}
	return __sync_fetch_and_add(clock_ns, tx_ns) + tx_ns;
}

/* CoDel's verdict on the state machine cv with the window first_above
 * (RFC 8289 sec. 5.2-5.4): should_drop against target, then the
 * dropping-state law. */
AFCD_INLINE int afcd_codel_run(struct afcd_codel_vars *cv, __u64 *first_above_ns,
			       const struct afcd_edt *e, __u64 target_ns, int gate,
			       const struct afcd_in *in, __u64 maxpacket)
{
	int ok = afcd_codel_should_drop(first_above_ns, e->t_dep_ns, e->sojourn_ns,
					e->backlog, target_ns, in->interval_ns, maxpacket);

	return afcd_codel_decide(cv, ok && gate, e->t_dep_ns, in->interval_ns);
}

/* Has a flow whose last packet leaves the virtual queue at t_last_ns
 * (0: none yet) had nothing queued for an interval at now? Its CoDel
 * state then starts over, as CoDel's does on an empty queue (RFC 8289
 * sec. 5.4). Not at every moment the flow has nothing queued: in one FIFO
 * an ACK-clocked flow's packets come in trains a round trip apart, and a
 * window reset at every gap between two trains (tens of ms at a large
 * RTT) would keep its law from ever seeing a standing queue for an
 * interval (measured in the closed loop, tests/bpf/loop.h: CUBIC at 1.2x
 * its share under a 10-20 ms queue for 1.3 s, never dropped). The whole
 * queue's emptiness still resets every window (afcd_codel_should_drop()). */
AFCD_INLINE int afcd_flow_idle(__u64 now, __u64 t_last_ns, __u64 interval_ns)
{
	return afcd_time_after_eq(now, t_last_ns + interval_ns);
}

/* Stage 1, admission: the horizon, which bounds every frame, IP or not (a
 * flood of non-IP or unparsable frames must not push the clock past it,
 * where every IP packet after them would be dropped), then the fairness
 * module's enforcement, which holds a flow far beyond its fair rate there
 * whatever the drop law says, while the queue is above the policer's
 * gate (afcd_police_gate_ns()). The band past a flow's lead
 * (afcd_police()) is one interval for an ECN-capable packet under ecn on,
 * else in->police_band_ns; there the flow gets one signal an interval
 * (afcd_police_signal_due()), a mark or a drop, the mice aggregate (many
 * senders, one clock) one each time, and the rest pass, charged to its
 * clock. Returns PASS, MARK (the policer's), DROP_OVERLIMIT or
 * DROP_POLICE; *vt_seen and *vt_next: the policer's clock as read and as
 * it advances when the packet is admitted (*vt_next 0: it does not move).
 * A policer drop of a flow's packet sets f->police_signal_ns (a mark
 * does once the packet is admitted, afcd_decide()). */
AFCD_INLINE __u32 afcd_admit(struct afcd_queue *q, struct afcd_flow *f,
			     const struct afcd_in *in, const struct afcd_edt *e,
			     __u64 *vt_seen, __u64 *vt_next)
{
	int mark;

	if (e->sojourn_ns > in->horizon_ns)
		return AFCD_V_DROP_OVERLIMIT;
	if (!in->aqm || !f)
		return AFCD_V_PASS;
	if (in->stale)
		AFCD_COUNT(q, stats[AFCD_S_STALE_FALLBACK], 1);
	if (!in->police_tx_ns)
		return AFCD_V_PASS;
	*vt_seen = in->mouse ? AFCD_READ_ONCE(q->mice_vt_ns) : f->vt_ns;
	mark = in->ecn_on && in->ect;
	switch (afcd_police(*vt_seen, in->now_ns, in->police_tx_ns, in->police_lead_ns,
			    mark ? in->interval_ns : in->police_band_ns, vt_next)) {
	case AFCD_POLICE_PASS:
		return AFCD_V_PASS;
	case AFCD_POLICE_BAND:
		if (e->sojourn_ns <= in->police_gate_ns)
			break;
		if (!in->mouse && !afcd_police_signal_due(f->police_signal_ns, in->now_ns,
							  in->interval_ns))
			return AFCD_V_PASS;
		if (mark)
			return AFCD_V_MARK;
		goto drop;
	default:
		if (e->sojourn_ns > in->police_gate_ns)
			goto drop;
	}
	/* the link is not congested (the queue below the gate): the flow
	 * beyond its lead passes, so that the link never idles while it has
	 * packets, and its clock stays where it is, at its lead: the moment
	 * the queue builds, the flow is held to the fair rate again */
	*vt_next = 0;
	return AFCD_V_PASS;
drop:
	if (!in->mouse)
		f->police_signal_ns = in->now_ns;
	return AFCD_V_DROP_POLICE;
}

/* Stage 2, the drop law of in->law: 1 when it drops (or CE-marks) the
 * packet. codel: one CoDel on the whole queue against target (RFC 8289);
 * target_i: CoDel's law against the flow's target_i (eq. 3.14, 4.16),
 * on the flow's state machine or (codel_global) the whole queue's, gated
 * for FaLL (trait GTARGET) by the whole queue's sojourn above the global
 * target (gate 1, eq. 4.5-4.6), and with codel_queue by the whole queue's
 * sojourn above the law's target for every algo (afcd_codel_run_queue());
 * afd: the coin afcd_inputs() tossed.
 * maxpacket: CoDel's, in the unit of e->backlog. The caller resets the
 * flow's state when the flow had nothing queued (afcd_codel_reset_empty()). */
AFCD_INLINE int afcd_law(struct afcd_queue *q, struct afcd_flow *f, const struct afcd_in *in,
			 const struct afcd_edt *e, __u64 maxpacket)
{
	struct afcd_codel_vars *cv = &f->cv;
	__u64 *first_above = &f->first_above_ns, target = in->target_i_ns;
	int gate1 = 1, drop;

	switch (in->law) {
	case AFCD_LAW_AFD:
		return in->afd_drop;
	case AFCD_LAW_CODEL:
		first_above = &q->q_first_above_ns;
		target = in->law_target_ns;
		break;
	case AFCD_LAW_TARGET_I:
		break;
	default:
		return 0;
	}
	if (in->codel_queue) {
		/* one CoDel for the queue: its window and the flow's are single
		 * words (a lost race moves a window by one packet); the state
		 * machine is taken, one CPU at a time, only when the packet can
		 * change it: to drop (the gate open and the flow above its
		 * target_i) or to leave dropping (the gate closed). A packet
		 * that finds it taken gets no verdict from it. */
		int mine = afcd_codel_should_drop(first_above, e->t_dep_ns, e->sojourn_ns,
						  e->backlog, target, in->interval_ns, maxpacket);

		gate1 = afcd_codel_should_drop(&q->q_first_above_ns, e->t_dep_ns, e->sojourn_ns,
					       e->backlog, in->law_target_ns, in->interval_ns,
					       maxpacket);
		if (gate1 ? !mine : !AFCD_READ_ONCE(q->gcv.dropping))
			return 0;
		if (__sync_val_compare_and_swap(&q->gcv_busy, 0, 1) != 0)
			return 0;
		drop = afcd_codel_run_queue(&q->gcv, gate1, mine, e->t_dep_ns, in->interval_ns);
		__sync_fetch_and_and(&q->gcv_busy, 0);
		return drop;
	}
	if (in->codel_global) {
		/* the whole queue's state machine: one CPU at a time; another
		 * CPU in it means no verdict from it for this packet */
		if (__sync_val_compare_and_swap(&q->gcv_busy, 0, 1) != 0)
			return 0;
		if (e->backlog == 0) /* arrival to an empty queue */
			afcd_codel_reset_empty(&q->gcv, &q->q_first_above_ns);
		cv = &q->gcv;
	} else if ((in->traits & AFCD_T_GTARGET) && e->backlog == 0) {
		/* gate 1 keeps only the whole queue's first_above_time, one
		 * word: a lost race moves its window by one packet */
		q->q_first_above_ns = 0;
	}
	if (in->traits & AFCD_T_GTARGET)
		gate1 = afcd_codel_should_drop(&q->q_first_above_ns, e->t_dep_ns, e->sojourn_ns,
					       e->backlog, in->law_target_ns, in->interval_ns,
					       maxpacket);
	drop = afcd_codel_run(cv, first_above, e, target, gate1, in, maxpacket);
	if (in->codel_global) /* release: the gcv writes above are ordered before it */
		__sync_fetch_and_and(&q->gcv_busy, 0);
	return drop;
}

/* Stage 3, commit of an admitted packet (PASS or MARK) to the shared EDT
 * clock: its departure time in *e, or DROP_OVERLIMIT when other CPUs
 * filled the queue to the horizon since it looked (its slot given back).
 * The time the queue stood idle before it goes to stats[AFCD_S_IDLE_NS].
 * burst_ns: the packet's pacing credit, as afcd_edt_schedule() took it. */
AFCD_INLINE __u32 afcd_commit(struct afcd_queue *q, const struct afcd_in *in, __u64 t_seen,
			      __u64 burst_ns, __u32 verdict, struct afcd_edt *e)
{
	__u64 idle;

	e->t_dep_ns = afcd_clock_advance(&q->t_last_ns, t_seen, in->now_ns, in->tx_ns,
					 burst_ns, &idle);
	if (idle)
		AFCD_COUNT(q, stats[AFCD_S_IDLE_NS], idle);
	e->sojourn_ns = afcd_time_after_eq(e->t_dep_ns, in->now_ns) ? e->t_dep_ns - in->now_ns : 0;
	if (e->sojourn_ns > in->horizon_ns) {
		AFCD_ATOMIC_ADD(&q->t_last_ns, -in->tx_ns);
		return AFCD_V_DROP_OVERLIMIT;
	}
	return verdict;
}

/* An admitted packet's policer clock moves to vt_next (afcd_admit();
 * 0: no policer): the flow's own, or the mice aggregate's, which other
 * CPUs share. */
AFCD_INLINE void afcd_police_commit(struct afcd_queue *q, struct afcd_flow *f,
				    const struct afcd_in *in, __u64 vt_seen, __u64 vt_next)
{
	__u64 idle;

	if (!vt_next)
		return;
	if (in->mouse)
		afcd_clock_advance(&q->mice_vt_ns, vt_seen, in->now_ns, in->police_tx_ns, 0, &idle);
	else if (f)
		f->vt_ns = vt_next;
}

/* Does the algo judge a flow's share against the fairness module's
 * estimate (afcd, fall: a per-flow target)? 0 for droptail, codel and
 * afd, which judge no flow's share. */
AFCD_INLINE int afcd_judges_share(const struct afcd_in *in)
{
	return in->aqm && (in->traits & AFCD_T_FAIR) && in->law != AFCD_LAW_AFD;
}

/* Is the packet's flow below its fair share by the fairness module's
 * estimate (m_i < 7/8 m_fair, the flows afcd_target_i_ns() exempts from
 * the drop law, sec. 3.3.3; the mice among them)? 0 for the algos that
 * judge no flow's share (afcd_judges_share()). */
AFCD_INLINE int afcd_below_share(const struct afcd_in *in)
{
	return afcd_judges_share(in) && in->target_i_ns == AFCD_TARGET_INF;
}

/* Does the drop law's verdict on packet in take the form of a CE mark
 * (ecn on, an ECT packet, and a law that marks at this probability:
 * AFD only up to AFCD_AFD_MARK_MAX_Q16) rather than a drop? Both
 * backends ask it of every verdict of afcd_law(). */
AFCD_INLINE int afcd_law_marks(const struct afcd_in *in)
{
	return in->ecn_on && in->ect && !in->law_no_mark;
}

/* The buffer's high-water mark: the signal due to a packet that would
 * wait sojourn_ns, more than half the horizon, whatever the law says, so
 * that its sender slows before the horizon drops it. Returns AFCD_V_PASS
 * (none), AFCD_V_MARK or AFCD_V_DROP_HIGH.
 * - An ECN-capable packet under ecn on is marked (RFC 7567 sec. 4.2: mark
 *   rather than drop while that can still help; a flow below its share
 *   has no law, and in slow start nothing else signals it). A flow below
 *   its share (afcd_below_share(), *below = 1) did not build that queue:
 *   it gets one such mark an interval (afcd_police_signal_due()), which
 *   ends a slow start, where a mark at every packet cut its window every
 *   round trip and handed the link to whoever built the queue.
 * - Any other packet, under high_drop, of a flow the algo judges
 *   (afcd_judges_share()) and not below its share, is dropped once an
 *   interval (the same spacing). The horizon drops by arrival: its first
 *   drop reaches the sender a horizon of queue later, while a slow start
 *   doubles its window every round trip, and in one FIFO two slow starts
 *   lost their windows to timeouts that way; this drop reaches it half a
 *   horizon sooner, about when fq_codel's drop from the head of the
 *   fattest queue would (ALGORITHM.md sec. 6). A flow below its share,
 *   or a packet without a flow's state, is not dropped by it.
 * f: the flow's state or NULL; climbing: afcd_high_climb()'s answer for
 * this packet (the drop form only, 0 without high_drop). */
AFCD_INLINE __u32 afcd_high_water(const struct afcd_in *in, const struct afcd_flow *f,
				  __u64 sojourn_ns, int climbing, __u8 *below)
{
	*below = 0;
	if (sojourn_ns <= in->horizon_ns / 2)
		return AFCD_V_PASS;
	if (in->ecn_on && in->ect) {
		*below = f && afcd_below_share(in);
		return !*below || afcd_police_signal_due(f->police_signal_ns, in->now_ns,
							 in->interval_ns) ? AFCD_V_MARK : AFCD_V_PASS;
	}
	if (!in->high_drop || !climbing || !f || !afcd_judges_share(in) ||
	    in->target_i_ns == AFCD_TARGET_INF ||       /* below its share */
	    !afcd_police_signal_due(f->police_signal_ns, in->now_ns, in->interval_ns))
		return AFCD_V_PASS;
	return AFCD_V_DROP_HIGH;
}

/* Is queue q climbing into the top half of its buffer, for the
 * high-water drop: within an interval of the arrival at which its sojourn
 * rose past half the horizon (q->high_since_ns, set here on the crossing,
 * cleared once a packet finds it below a quarter)? Asked by afcd_signal()
 * of each packet that passes with no other signal, under high_drop (the
 * packets it drops or marks do not move it). A queue that stands
 * there longer is a crowd the law cannot hold, which the horizon holds;
 * drops there would fall on the flows with an entry of their own, never
 * on an aggregate's, and handed the aggregates and the flood the room
 * (2,000 flows in 1,024 entries: the flood at 2.1 shares for 1.3). */
AFCD_INLINE int afcd_high_climb(struct afcd_queue *q, const struct afcd_in *in,
				__u64 sojourn_ns)
{
	__u64 since;

	if (sojourn_ns > in->horizon_ns / 4 && sojourn_ns <= in->horizon_ns / 2)
		return 0;                 /* between: the crossing stays as it is */
	since = AFCD_READ_ONCE(q->high_since_ns);
	if (sojourn_ns <= in->horizon_ns / 4) {
		if (since)
			q->high_since_ns = 0;
		return 0;
	}
	if (!since) {
		since = in->now_ns | 1;   /* 0 is "not above" */
		q->high_since_ns = since;
	}
	return !afcd_time_after_eq(in->now_ns, since + in->interval_ns);
}

/* ---- Deferred CE marks (the qdisc backend) -------------------------------
 * A BPF qdisc cannot write a packet (net/sched/bpf_qdisc.c lets it write
 * skb->tstamp and the cb's data only), so a CE mark its drop law,
 * policer, high-water mark or ce_threshold decides is owed by the flow
 * (afcd_flow.ce_owed) and set by afcd_egress, which runs before the qdisc
 * on the same interface, on the flow's next ECT packet: the signal
 * reaches the sender one sojourn later than a mark on the packet judged
 * (PIE marks at enqueue too, RFC 8033 sec. 5.1). A flow that owes
 * AFCD_CE_OWED_MAX marks, which nothing takes (afcd_egress is not
 * attached, or the flow sends no more ECT packets), is dropped instead:
 * the law never loses its hold on an ECN-capable flow. */
#define AFCD_CE_OWED_MAX 4u

/* Owe one mark on *owed: 1, or 0 when AFCD_CE_OWED_MAX are owed already
 * (the caller drops). Instances under mq and the classifier run on other
 * CPUs: the add is atomic, and concurrent owes may pass the bound by one
 * each. */
AFCD_INLINE int afcd_ce_owe(__u32 *owed)
{
	if (AFCD_READ_ONCE(*owed) >= AFCD_CE_OWED_MAX)
		return 0;
	AFCD_ATOMIC_ADD(owed, 1);
	return 1;
}

/* Take one owed mark from *owed: 1, or 0 when none is owed (or other
 * CPUs took them first: four tries of compare-and-swap). */
AFCD_INLINE int afcd_ce_take(__u32 *owed)
{
	__u32 v = AFCD_READ_ONCE(*owed), seen;
	int i;

	for (i = 0; i < 4 && v; i++) {
		seen = __sync_val_compare_and_swap(owed, v, v - 1);
		if (seen == v)
			return 1;
		v = seen;
	}
	return 0;
}

/* What marked a packet, for afcd_account(): a mark by ce_threshold (on a
 * passed packet), and whether a MARK verdict is the policer's or the
 * high-water mark's rather than the drop law's. */
enum afcd_mark_by {
	AFCD_MARK_CE_THRESHOLD = 1u << 0,
	AFCD_MARK_POLICE       = 1u << 1,
	AFCD_MARK_HIGH         = 1u << 2,   /* the high-water mark (afcd_decide()) */
};

/* The counters of a mark decided for flow f (NULL: none): mark, the
 * packet's verdict is MARK (the law's, or the policer's or high-water
 * mark's as marks says); marks: enum afcd_mark_by; pc: this CPU's part of
 * q's counters as AFCD_PC(q) gave it (NULL: q's words). The EDT backend
 * counts a mark with its packet (afcd_account()); the qdisc backend counts
 * one decided at enqueue there and the packet when it leaves. */
AFCD_INLINE void afcd_count_marks(struct afcd_queue *q, struct afcd_qpcpu *pc,
				  struct afcd_flow *f, int mark, __u8 marks)
{
	if (mark)
		AFCD_COUNT_PC(pc, q, stats[(marks & AFCD_MARK_POLICE) ? AFCD_S_POLICE_MARK :
					   (marks & AFCD_MARK_HIGH) ? AFCD_S_HIGH_MARK :
					   AFCD_S_ECN_MARK], 1);
	if (marks & AFCD_MARK_CE_THRESHOLD)
		AFCD_COUNT_PC(pc, q, stats[AFCD_S_CE_THRESHOLD_MARK], 1);
	if (f && (mark || (marks & AFCD_MARK_CE_THRESHOLD)))
		f->marks++;
}

/* Stage 4, the counters of the queue and of the flow f (NULL: none) for
 * a packet sent (PASS, MARK: e its sojourn) or dropped; marks: enum
 * afcd_mark_by. */
AFCD_INLINE void afcd_account(struct afcd_queue *q, struct afcd_flow *f,
			      const struct afcd_in *in, const struct afcd_edt *e, __u32 verdict,
			      __u8 marks)
{
	struct afcd_qpcpu *pc = AFCD_PC(q);

	if (verdict == AFCD_V_PASS || verdict == AFCD_V_MARK) {
		q->last_sojourn_ns = e->sojourn_ns;
		if (e->sojourn_ns > AFCD_READ_ONCE(q->max_sojourn_ns))
			q->max_sojourn_ns = e->sojourn_ns;
		AFCD_COUNT_PC(pc, q, stats[AFCD_S_PASSED], 1);
		AFCD_COUNT_PC(pc, q, stats[AFCD_S_PASSED_BYTES], in->len);
		AFCD_COUNT_PC(pc, q, sojourn_sum_ns, e->sojourn_ns);
		afcd_count_marks(q, pc, f, verdict == AFCD_V_MARK, marks);
		if (f) {
			f->bytes += in->len;
			f->packets++;
		}
	} else {
		if (verdict == AFCD_V_DROP_POLICE)
			AFCD_COUNT_PC(pc, q, stats[AFCD_S_POLICE_DROP], 1);
		else if (verdict == AFCD_V_DROP_HIGH)
			AFCD_COUNT_PC(pc, q, stats[AFCD_S_HIGH_DROP], 1);
		AFCD_COUNT_PC(pc, q, stats[verdict == AFCD_V_DROP_OVERLIMIT ? AFCD_S_OVERLIMIT_DROP :
					  AFCD_S_AQM_DROP], 1);
		if (f)
			f->drops++;
	}
	if (f) {
		f->last_seen_ns = in->now_ns;
		f->last_sojourn_ns = e->sojourn_ns;
		f->target_ns = in->target_i_ns;
	}
}

/* CoDel's maxpacket on queue q after packet in: the largest
 * in->maxpacket_len seen (bytes; a single-word race loses one packet's
 * update). Both backends' enqueues keep it. */
AFCD_INLINE __u32 afcd_maxpacket_seen(struct afcd_queue *q, const struct afcd_in *in)
{
	__u32 m = AFCD_READ_ONCE(q->maxpacket_bytes);

	if (in->maxpacket_len > m) {
		q->maxpacket_bytes = in->maxpacket_len;
		m = in->maxpacket_len;
	}
	return m;
}

/* ---- The stages both backends compose ----------------------------------
 * Each rule of the decision is written once, here; a backend composes
 * them around its queue (the EDT backend: all at enqueue on the predicted
 * sojourn, afcd_decide(); the qdisc backend: the arrival at enqueue, the
 * law at dequeue on the true sojourn, afcd_qdisc.bpf.c):
 *   afcd_arrive()          admission (the horizon, the policer, a
 *                          policer's mark as a pass that carries a mark),
 *                          CoDel's maxpacket;
 *   afcd_signal()          the high-water mark on a packet nothing else
 *                          signals;
 *   afcd_law_verdict()     the drop law, as a mark or a drop;
 *   afcd_ce_threshold_due() ce_threshold's mark;
 *   afcd_arrival_commit()  an admitted packet's policer clock and the
 *                          policer's record of a signal to its flow;
 *   afcd_account()         the counters (above). */

/* What the arrival stage decided for a packet. */
struct afcd_arrival {
	__u64 vt_seen;    /* the policer's clock as read (afcd_admit()), ns */
	__u64 vt_next;    /* and as it advances if the packet is admitted, ns (0: stays) */
	__u32 verdict;    /* AFCD_V_PASS or a drop: a mark is in marks */
	__u32 maxpacket;  /* CoDel's maxpacket after the packet, bytes */
	__u8  marks;      /* enum afcd_mark_by: AFCD_MARK_POLICE (afcd_arrive()),
			   * AFCD_MARK_HIGH (afcd_signal()) */
	__u8  below;      /* the high-water mark went to a flow below its share */
};

/* Arrival: CoDel's maxpacket, then admission (afcd_admit()) of a packet
 * that would see the sojourn e->sojourn_ns; the policer's MARK becomes a
 * PASS carrying AFCD_MARK_POLICE, which the backend sets on the packet
 * (EDT) or owes to its flow (qdisc). */
AFCD_INLINE void afcd_arrive(struct afcd_queue *q, struct afcd_flow *f, const struct afcd_in *in,
			     const struct afcd_edt *e, struct afcd_arrival *a)
{
	a->vt_seen = 0;
	a->vt_next = 0;
	a->marks = 0;
	a->below = 0;
	a->maxpacket = afcd_maxpacket_seen(q, in);
	a->verdict = afcd_admit(q, f, in, e, &a->vt_seen, &a->vt_next);
	if (a->verdict == AFCD_V_MARK) {
		a->verdict = AFCD_V_PASS;
		a->marks = AFCD_MARK_POLICE;
	}
}

/* The high-water mark (afcd_high_water()) on a packet that passes with no
 * other signal: 1 when it is to carry one (a->marks AFCD_MARK_HIGH) or
 * to be dropped (a->verdict AFCD_V_DROP_HIGH, recorded in the flow's
 * f->police_signal_ns). The EDT backend asks after the law, which has the
 * first word; the qdisc backend at enqueue, its law coming at dequeue. */
AFCD_INLINE int afcd_signal(struct afcd_queue *q, const struct afcd_in *in, struct afcd_flow *f,
			    __u64 sojourn_ns, struct afcd_arrival *a)
{
	__u32 v;

	if (a->verdict != AFCD_V_PASS || a->marks)
		return 0;
	v = afcd_high_water(in, f, sojourn_ns, in->high_drop && afcd_high_climb(q, in, sojourn_ns),
			    &a->below);
	if (v == AFCD_V_MARK)
		a->marks = AFCD_MARK_HIGH;
	else if (v == AFCD_V_DROP_HIGH && f) {
		a->verdict = v;
		f->police_signal_ns = in->now_ns;
	}
	return v != AFCD_V_PASS;
}

/* The drop law's verdict on a packet of flow f (afcd_law()): AFCD_V_PASS,
 * AFCD_V_MARK where the verdict takes the form of a CE mark
 * (afcd_law_marks()), else AFCD_V_DROP_AQM. maxpacket in e->backlog's
 * unit. No law without a flow's state or for an algo without one. */
AFCD_INLINE __u32 afcd_law_verdict(struct afcd_queue *q, struct afcd_flow *f,
				   const struct afcd_in *in, const struct afcd_edt *e,
				   __u64 maxpacket)
{
	if (!in->aqm || !f || !afcd_law(q, f, in, e, maxpacket))
		return AFCD_V_PASS;
	return afcd_law_marks(in) ? AFCD_V_MARK : AFCD_V_DROP_AQM;
}

/* Is ce_threshold's mark due on an ECT packet that waits e->sojourn_ns? */
AFCD_INLINE int afcd_ce_threshold_due(const struct afcd_in *in, const struct afcd_edt *e)
{
	return in->ce_threshold_ns && in->ect && e->sojourn_ns > in->ce_threshold_ns;
}

/* An admitted packet: its policer clock moves (afcd_police_commit()), and
 * a signal the policer gave its flow, or the high-water mark gave a flow
 * below its share, is recorded (afcd_police_signal_due() spaces them). */
AFCD_INLINE void afcd_arrival_commit(struct afcd_queue *q, struct afcd_flow *f,
				     const struct afcd_in *in, const struct afcd_arrival *a)
{
	afcd_police_commit(q, f, in, a->vt_seen, a->vt_next);
	if (f && (((a->marks & AFCD_MARK_POLICE) && !in->mouse) ||
		  ((a->marks & AFCD_MARK_HIGH) && a->below)))
		f->police_signal_ns = in->now_ns;
}

/* AFCD_DECIDE_FN: how afcd_decide() is compiled. The BPF program makes it
 * a global function, which the verifier checks once on its own instead of
 * once per path through the parser and the shadow buffer before it. */
#ifndef AFCD_DECIDE_FN
#define AFCD_DECIDE_FN AFCD_INLINE __u32
#endif

/* The EDT backend's decision, without helper calls or map lookups: the
 * stages above at enqueue, on the sojourn the EDT clock predicts, then
 * the commit to that clock. q: the interface's queue, f: the flow's state
 * or NULL (no drop law then). Returns enum afcd_verdict (PASS without
 * touching anything when q, in or an output is NULL); the departure time
 * in *t_dep_ns and *ce_thr_mark = 1 when ce_threshold marks an admitted
 * packet. */
AFCD_DECIDE_FN afcd_decide(struct afcd_queue *q, struct afcd_flow *f,
			   const struct afcd_in *in, __u64 *t_dep_ns, __u8 *ce_thr_mark)
{
	struct afcd_arrival a;
	struct afcd_edt e;
	__u64 t_seen, burst;
	__u32 verdict;

	if (!q || !in || !t_dep_ns || !ce_thr_mark)
		return AFCD_V_PASS;
	t_seen = AFCD_READ_ONCE(q->t_last_ns);
	/* the credit, computed once for the schedule and the commit: the
	 * qdisc backend paces its FIFO with the config's and never needs it */
	burst = afcd_burst_share(in->burst_ns, in->tx_ns, in->police_tx_ns);
	afcd_edt_schedule(in->now_ns, t_seen, in->tx_ns, burst, &e);
	*t_dep_ns = e.t_dep_ns;

	afcd_arrive(q, f, in, &e, &a);
	verdict = a.verdict;
	if (verdict == AFCD_V_PASS && in->aqm && f) {
		if (afcd_flow_idle(in->now_ns, f->t_last_ns, in->interval_ns))
			afcd_codel_reset_empty(&f->cv, &f->first_above_ns);
		verdict = afcd_law_verdict(q, f, in, &e, afcd_tx_ns(a.maxpacket, in->rate_bps));
	}
	if (verdict == AFCD_V_PASS && (a.marks || afcd_signal(q, in, f, e.sojourn_ns, &a)))
		verdict = a.verdict == AFCD_V_PASS ? AFCD_V_MARK : a.verdict;
	if (verdict == AFCD_V_PASS && afcd_ce_threshold_due(in, &e))
		*ce_thr_mark = 1;
	if (verdict == AFCD_V_PASS || verdict == AFCD_V_MARK) {
		verdict = afcd_commit(q, in, t_seen, burst, verdict, &e);
		if (verdict == AFCD_V_DROP_OVERLIMIT)
			*ce_thr_mark = 0;
		*t_dep_ns = e.t_dep_ns;
	}
	if (verdict == AFCD_V_PASS || verdict == AFCD_V_MARK) {
		afcd_arrival_commit(q, f, in, &a);
		if (f)
			f->t_last_ns = e.t_dep_ns;
	}
	afcd_account(q, f, in, &e, verdict, (*ce_thr_mark ? AFCD_MARK_CE_THRESHOLD : 0) | a.marks);
	return verdict;
}

/* isolate (AFCD_F_ISOLATE_SRC / _DST): reduce the flow key to the host the
 * fair share is computed on, in place; the 5-tuple otherwise. */
AFCD_INLINE void afcd_isolate_key(__u32 flags, struct afcd_flow_key *k)
{
	if (!(flags & (AFCD_F_ISOLATE_SRC | AFCD_F_ISOLATE_DST)))
		return;
	k->proto = 0;      /* the host: its address (and family) only */
	k->sport = 0;
	k->dport = 0;
	if (flags & AFCD_F_ISOLATE_SRC)
		__builtin_memset(k->daddr, 0, sizeof(k->daddr));
	else
		__builtin_memset(k->saddr, 0, sizeof(k->saddr));
}

#endif /* AFCD_DECIDE_H */
