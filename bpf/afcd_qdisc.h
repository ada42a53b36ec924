/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_qdisc.h - what only the qdisc backend (afcd_qdisc.bpf.c) needs
 * around the stages of afcd_decide.h: the sojourn a packet will see from
 * the bytes ahead of it, the one it saw, the pacing clock, and its CE
 * marks owed to the flow rather than set. Pure functions, compiled into
 * the BPF qdisc and into the host tests (tests/unit/test_law.c).
 */
#ifndef AFCD_QDISC_H
#define AFCD_QDISC_H

#include "afcd_decide.h"

/* The stages of afcd_decide.h on a real FIFO: at enqueue, afcd_arrive() with the
 * sojourn the packet will see predicted from the bytes queued ahead of it
 * (afcd_qdisc_arrival()); at dequeue, afcd_law() on the sojourn it saw
 * (afcd_qdisc_departure()), with CoDel's backlog and maxpacket in bytes as
 * the kernel's codel has them; then afcd_account(). A mark the stages
 * decide is owed by the packet's flow (afcd_defer_marks(); afcd_decide.h,
 * Deferred CE marks). */

/* Time to send bytes at rate_bps, ns (bytes < 2^40; rate 0: 0). */
AFCD_INLINE __u64 afcd_bytes_ns(__u64 bytes, __u64 rate_bps)
{
	if (!rate_bps)
		return 0;
	if (rate_bps >= (1ULL << 34))   /* mul_div's d < 2^34; >= 17 Gbit/s */
		return bytes * 8 * 1000 / (rate_bps / 1000000);
	return afcd_mul_div_u64(bytes * 8, AFCD_NSEC_PER_SEC, rate_bps);
}

/* A packet arriving at now behind backlog_bytes of the FIFO, paced at
 * rate_bps: its predicted sojourn and departure, for afcd_admit() (the
 * horizon and the policer). rate_bps 0 (the qdisc sends at the device's
 * own rate): while packets are queued, the larger of the sojourn the last
 * packet dequeued saw (last_sojourn_ns) and the backlog at the measured
 * link rate link_bps (0: unknown), the latter at most horizon_ns; else 0.
 * The last sojourn alone lags the queue by a whole sojourn: a flood let
 * through while the queue drained (the policer's gate closed) ran on for
 * that long after it built again (measured on a NIC that pushes back,
 * testbed/wire_bench.py: CUBIC got a third to a half of the flood's
 * goodput). The backlog at
 * the measured rate sees the queue at once; capped at the horizon, a
 * measured rate too low (a device that stalled) cannot drop a packet by
 * the horizon, only open the gate, where flows below their share pass. */
AFCD_INLINE void afcd_qdisc_arrival(__u64 now, __u64 backlog_bytes, __u64 rate_bps,
				    __u64 link_bps, __u64 last_sojourn_ns, __u64 horizon_ns,
				    struct afcd_edt *e)
{
	__u64 d = 0, p;

	if (rate_bps) {
		d = afcd_bytes_ns(backlog_bytes, rate_bps);
	} else if (backlog_bytes) {
		p = link_bps ? afcd_bytes_ns(backlog_bytes, link_bps) : 0;
		if (p > horizon_ns)
			p = horizon_ns;
		d = p > last_sojourn_ns ? p : last_sojourn_ns;
	}
	e->sojourn_ns = d;
	e->t_dep_ns = now + d;
	e->backlog = backlog_bytes;
}

/* A packet leaving the FIFO at now that entered at enq_ns, with
 * backlog_bytes left behind it: its true sojourn, for afcd_law(). */
AFCD_INLINE void afcd_qdisc_departure(__u64 now, __u64 enq_ns, __u64 backlog_bytes,
				      struct afcd_edt *e)
{
	e->t_dep_ns = now;
	e->sojourn_ns = afcd_time_after_eq(now, enq_ns) ? now - enq_ns : 0;
	e->backlog = backlog_bytes;
}

/* The pacing clock after a packet of tx_ns leaves at now with the clock
 * at t_next: afcd_clock_start(t_next, now, burst_ns) + tx_ns. The next
 * packet may leave when now reaches it. */
AFCD_INLINE __u64 afcd_pace_next(__u64 t_next, __u64 now, __u64 tx_ns, __u64 burst_ns)
{
	return afcd_clock_start(t_next, now, burst_ns) + tx_ns;
}

/* The arrival's marks (the policer's, the high-water mark) owed by the
 * packet's flow, which afcd_egress sets on its next ECT packet: the
 * verdict stays a PASS when the flow can owe them (afcd_ce_owe()); else
 * the policer's becomes its drop (AFCD_V_DROP_POLICE, recorded as the
 * policer's signal to the flow) and the high-water mark is let go (the
 * law at dequeue still judges the packet). a->marks is cleared when they
 * are not owed. */
AFCD_INLINE __u32 afcd_defer_marks(struct afcd_flow *f, const struct afcd_in *in,
				   struct afcd_arrival *a)
{
	__u32 verdict = AFCD_V_PASS;

	if (a->verdict != AFCD_V_PASS || !a->marks || (f && afcd_ce_owe(&f->ce_owed)))
		return a->verdict;
	if (a->marks & AFCD_MARK_POLICE) {
		verdict = AFCD_V_DROP_POLICE;
		if (f && !in->mouse)
			f->police_signal_ns = in->now_ns;
	}
	a->marks = 0;
	return verdict;
}

/* The law stage at dequeue on the packet's true sojourn (e), with CoDel's
 * maxpacket in bytes: AFCD_V_DROP_AQM, AFCD_V_MARK (the mark owed by its
 * flow; a flow that cannot owe more is dropped) or AFCD_V_PASS (with
 * ce_threshold's mark owed when due); the counters of either. */
AFCD_INLINE __u32 afcd_qdisc_law(struct afcd_queue *q, struct afcd_flow *f, struct afcd_in *in,
				 struct afcd_edt *e)
{
	__u32 v = afcd_law_verdict(q, f, in, e, q->maxpacket_bytes);
	__u8 marks = 0;

	if (v == AFCD_V_MARK && !afcd_ce_owe(&f->ce_owed))
		v = AFCD_V_DROP_AQM;
	if (v == AFCD_V_PASS && f && afcd_ce_threshold_due(in, e) && afcd_ce_owe(&f->ce_owed))
		marks = AFCD_MARK_CE_THRESHOLD;
	afcd_account(q, f, in, e, v, marks);
	return v;
}

#endif /* AFCD_QDISC_H */
