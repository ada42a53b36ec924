/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_codel.h - CoDel's control law and state machine (RFC 8289 sec. 5;
 * include/net/codel.h), on the EDT clock or the true sojourn.
 * Pure arithmetic, as every header of afcd_law.h: compiled into the BPF
 * programs (always_inline) and into the host tests (tests/unit/test_law.c).
 */
#ifndef AFCD_CODEL_H
#define AFCD_CODEL_H

#include "afcd_arith.h"


/* One Newton-Raphson step towards rec_inv_sqrt = 1/sqrt(count):
 *   x' = x * (3 - count * x^2) / 2
 * computed in Q0.32 as codel.h does, stored back as Q0.16. Converges
 * quadratically as count grows by one per drop. */
AFCD_INLINE void afcd_codel_newton_step(struct afcd_codel_vars *cv)
{
	__u32 invsqrt = ((__u32)cv->rec_inv_sqrt) << 16;           /* Q0.32 */
	__u32 invsqrt2 = (__u32)(((__u64)invsqrt * invsqrt) >> 32); /* x^2, Q0.32 */
	__u64 val = (3ULL << 32) - ((__u64)cv->count * invsqrt2);  /* 3 - c x^2, Q32.32 */

	val >>= 2;                                 /* keep the product in 64 bits */
	val = (val * invsqrt) >> (32 - 2 + 1);     /* * x / 2, back to Q0.32 */
	cv->rec_inv_sqrt = (__u16)(val >> 16);
}

/* Next drop time: t + interval / sqrt(count) = t + interval * rec_inv_sqrt.
 * interval_ns <= AFCD_INTERVAL_MAX_NS, so the product fits in 64 bits.
 * Note the precedence: the scaled interval is added to t, not t scaled. */
AFCD_INLINE __u64 afcd_codel_control_law(__u64 t, __u64 interval_ns, __u16 rec_inv_sqrt)
{
	return t + ((interval_ns * rec_inv_sqrt) >> 16);
}

/* RFC 8289 codel_should_drop on one (packet, state) pair, driven by the
 * EDT clock: now is the packet's departure time t_dep (its dequeue time in
 * the FIFO) and sojourn its predicted sojourn.
 *   - below target, or no more than one maximal packet queued ahead of it
 *     (backlog <= maxpacket, both ns of work or both bytes): the window
 *     resets;
 *   - first time above: the window opens, ending at now + interval;
 *   - otherwise: ok to drop once the window has ended.
 * *first_above_ns is 0 while below target. Returns 1 when ok to drop. */
AFCD_INLINE int afcd_codel_should_drop(__u64 *first_above_ns, __u64 now,
				       __u64 sojourn_ns, __u64 backlog,
				       __u64 target_ns, __u64 interval_ns,
				       __u64 maxpacket)
{
	if (sojourn_ns < target_ns || backlog <= maxpacket) {
		if (*first_above_ns) /* a shared window's line stays clean */
			*first_above_ns = 0;
		return 0;
	}
	if (*first_above_ns == 0) {
		*first_above_ns = (now + interval_ns) | 1; /* never 0 */
		return 0;
	}
	return afcd_time_after_eq(now, *first_above_ns);
}

/* The CoDel dropping state machine (RFC 8289 codel_dequeue, one packet at
 * a time: the decision is taken for the arriving packet at enqueue).
 * ok_to_drop comes from afcd_codel_should_drop (and, for FaLL, gate 1).
 * Returns 1 if this packet must be dropped or CE-marked; the state
 * advances identically in both cases. */
AFCD_INLINE int afcd_codel_decide(struct afcd_codel_vars *cv, int ok_to_drop,
				  __u64 now, __u64 interval_ns)
{
	if (cv->dropping) {
		if (!ok_to_drop) {
			cv->dropping = 0;         /* sojourn went below target */
			return 0;
		}
		if (!afcd_time_after_eq(now, cv->drop_next_ns))
			return 0;
		cv->count++;
		afcd_codel_newton_step(cv);
		cv->drop_next_ns = afcd_codel_control_law(cv->drop_next_ns, interval_ns,
							  cv->rec_inv_sqrt);
		return 1;
	}
	if (!ok_to_drop)
		return 0;

	/* Enter the dropping state. If we were dropping recently, resume
	 * near the drop rate that controlled the queue then (codel.h). */
	cv->dropping = 1;
	{
		__u32 delta = cv->count - cv->lastcount;

		if (delta > 1 && (__s64)(now - cv->drop_next_ns) < (__s64)(16 * interval_ns)) {
			cv->count = delta;
			afcd_codel_newton_step(cv);
		} else {
			cv->count = 1;
			cv->rec_inv_sqrt = AFCD_REC_INV_SQRT_ONE;
		}
	}
	cv->lastcount = cv->count;
	cv->drop_next_ns = afcd_codel_control_law(now, interval_ns, cv->rec_inv_sqrt);
	return 1;
}

/* codel_state queue: one CoDel state machine for the whole queue, whose
 * ok_to_drop is the queue's own (gate: its sojourn above the law's target
 * for an interval, afcd_codel_should_drop() on the queue's window), as one
 * CoDel on the aggregate would take it (RFC 8289 sec. 5). Which packet
 * takes a drop the schedule makes due is the fairness module's choice:
 * only one whose flow has been above its own target_i for an interval
 * (mine: afcd_codel_should_drop() on the flow's window, which every
 * packet of the flow updates). A packet of a flow within its share
 * neither drops nor moves the schedule: the drop waits for the next
 * packet of a flow above it.
 *   - gate closed: the state leaves dropping (the queue went below target);
 *   - gate open, the flow not above target_i: no drop, state unchanged;
 *   - gate open, the flow above target_i: afcd_codel_decide(ok_to_drop).
 * Per-flow states on one FIFO all see the same sojourn, so N flows enter
 * dropping within an interval of each other and cut N windows where one
 * CoDel cuts one (ALGORITHM.md sec. 4). Returns 1 to drop or CE-mark. */
AFCD_INLINE int afcd_codel_run_queue(struct afcd_codel_vars *cv, int gate, int mine,
				     __u64 now, __u64 interval_ns)
{
	if (!gate)
		return afcd_codel_decide(cv, 0, now, interval_ns);
	return mine ? afcd_codel_decide(cv, 1, now, interval_ns) : 0;
}

/* CoDel on an empty queue: leave the dropping state and close the window
 * (codel_dequeue when the queue is empty). count/lastcount are kept for
 * the resume heuristic above. */
AFCD_INLINE void afcd_codel_reset_empty(struct afcd_codel_vars *cv, __u64 *first_above_ns)
{
	cv->dropping = 0;
	*first_above_ns = 0;
}

#endif /* AFCD_CODEL_H */
