/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_arith.h - what the decision headers share: units, fixed point, the clock's
 * comparison and the rate the estimates use.
 *
 * Times are u64 CLOCK_MONOTONIC nanoseconds. "samples" are shadow-buffer
 * slots. Q16 is unsigned fixed point with 16 fractional bits (1.0 = 65536).
 * Pure arithmetic, as every header of afcd_law.h: compiled into the BPF
 * programs (always_inline) and into the host tests (tests/unit/test_law.c).
 */
#ifndef AFCD_ARITH_H
#define AFCD_ARITH_H


#include "afcd_maps.h"

#ifndef AFCD_INLINE
#define AFCD_INLINE static inline __attribute__((always_inline))
#endif

#define AFCD_NSEC_PER_SEC   1000000000ULL
#define AFCD_Q16_ONE        65536ULL
/* target_i of a flow that is never AQM-dropped (m_i < m_fair or m_i = 0). */
#define AFCD_TARGET_INF     (~0ULL)
#define AFCD_REC_INV_SQRT_ONE 0xffffu            /* ~1.0 in Q0.16 */

/* floor(a * b / d) for b < 2^30 and 0 < d < 2^34, without 128-bit
 * arithmetic: (a / d) * b + (a % d) * b / d. Saturates at U64_MAX when
 * (a / d) * b overflows. d = 0 returns 0. */
AFCD_INLINE __u64 afcd_mul_div_u64(__u64 a, __u64 b, __u64 d)
{
	__u64 q, r;

	if (!d)
		return 0;
	q = a / d;
	r = a % d;
	if (b && q > ~0ULL / b)
		return ~0ULL;
	return q * b + r * b / d;
}

/* The measured link rate's margin: the estimates take 1/AFCD_LINK_MARGIN_DIV
 * less than was measured. A fair share computed on a rate above the
 * link's admits more than the link carries: the queue stands above the
 * target and the drop law cuts the responsive flows (measured on a NIC
 * that pushes back, testbed/wire_bench.py: a rate 8 % high gave CUBIC
 * 4.1 Mbit/s to a flood's 7.3; 2 % high, 5.6 to 5.6). One below it costs
 * little: the policer's gate passes every packet while the queue is short
 * (afcd_police_gate_ns()), so the link does not idle. */
#define AFCD_LINK_MARGIN_DIV 16

/* The rate the interface's estimates use, bits/s: its rate parameter, or
 * (backend qdisc without one) the rate measured at dequeue less its
 * margin (AFCD_LINK_MARGIN_DIV); 0 = unknown. */
AFCD_INLINE __u64 afcd_rate_of(const struct afcd_config *c, const struct afcd_queue *q)
{
	return c->rate_bps ? c->rate_bps : q->link_bps - q->link_bps / AFCD_LINK_MARGIN_DIV;
}

/* a >= b on a clock that may be compared across small reorderings. */
AFCD_INLINE int afcd_time_after_eq(__u64 a, __u64 b)
{
	return (__s64)(a - b) >= 0;
}

#endif /* AFCD_ARITH_H */
