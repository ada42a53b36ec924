/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_edt.h - the EDT virtual queue (ALGORITHM.md sec. 2): transmission times,
 * the departure-time schedule and its pacing credit.
 * Pure arithmetic, as every header of afcd_law.h: compiled into the BPF
 * programs (always_inline) and into the host tests (tests/unit/test_law.c).
 */
#ifndef AFCD_EDT_H
#define AFCD_EDT_H

#include "afcd_arith.h"


/* Transmission time of len bytes at rate_bps, ns: len * 8e9 / rate,
 * floored. len is clamped to AFCD_LEN_MAX so len * 8e9 < 2^63.
 * rate_bps must be non-zero (the caller checks; returns 0 if it is). */
AFCD_INLINE __u64 afcd_tx_ns(__u32 len, __u64 rate_bps)
{
	if (!rate_bps)
		return 0;
	if (len > AFCD_LEN_MAX)
		len = AFCD_LEN_MAX;
	return (__u64)len * (8 * AFCD_NSEC_PER_SEC) / rate_bps;
}

struct afcd_edt {
	__u64 t_dep_ns;   /* departure time: afcd_clock_start(t_last, now) + tx (the
			   * qdisc: its dequeue time) */
	__u64 sojourn_ns; /* time in queue: t_dep - now, 0 when t_dep is past (the
			   * qdisc: measured) */
	__u64 backlog;    /* work queued ahead of this packet, in the unit of CoDel's
			   * maxpacket: ns of the virtual queue, t_last - now or 0
			   * (EDT); bytes left in the FIFO (the qdisc, as the
			   * kernel's codel compares qdisc backlog and maxpacket) */
};

/* The pacing credit of a FIFO drained at a rate (the config's burst_ns,
 * default AFCD_DEF_BURST_NS): the clock of a queue
 * that stood empty restarts at most this far behind now, so that a packet
 * arriving after a gap may leave at once for what the link missed in the
 * gap (a burst of up to this much of the rate, sent at the device's
 * speed). Arrivals come in trains when the CPU that forwards or sends them
 * is late (a busy host, a late timer), and a clock restarted at now loses
 * each gap of the train for good. The EDT virtual queue and the qdisc
 * backend's pacing both have it; the testbed's HTB gives the kernel's AQMs
 * the same 3 ms bucket (testbed/bottleneck.py). sch_fq's own pacing
 * compensates its timer's drift the same way, by at most half a packet
 * (fq_dequeue(): "Account for schedule/timers drifts"). A flow the
 * fairness module polices (above the water level) takes its fair share
 * of it (afcd_burst_share()), or a flood, whose packets are most of every
 * train, would take what the others' gaps left. Source: docs/ALGORITHM.md
 * sec. 2.
 *
 * Where a FIFO's clock t_last stands for a packet arriving at now:
 * t_last while the queue is busy, else no earlier than now - burst_ns (the
 * pacing credit); now for a clock never started (t_last 0: no gap). */
AFCD_INLINE __u64 afcd_clock_start(__u64 t_last, __u64 now, __u64 burst_ns)
{
	__u64 floor = !t_last ? now : now > burst_ns ? now - burst_ns : 0;

	return afcd_time_after_eq(t_last, floor) ? t_last : floor;
}

/* Schedule one packet on the virtual FIFO: it leaves at
 * afcd_clock_start(t_last, now, burst_ns) + tx, which may be before now
 * (it leaves at once, sojourn 0). Pure: the caller commits t_last = t_dep
 * only if the packet is admitted. */
AFCD_INLINE void afcd_edt_schedule(__u64 now, __u64 t_last, __u64 tx_ns, __u64 burst_ns,
				   struct afcd_edt *e)
{
	__u64 start = afcd_clock_start(t_last, now, burst_ns);

	e->backlog = afcd_time_after_eq(start, now) ? start - now : 0;
	e->t_dep_ns = start + tx_ns;
	e->sojourn_ns = afcd_time_after_eq(e->t_dep_ns, now) ? e->t_dep_ns - now : 0;
}

/* The departure time an admitted packet gets: the virtual queue's t_dep,
 * or the time its sender stamped (sender_ns, CLOCK_MONOTONIC; 0 = none)
 * when that is later: a paced sender (TCP's EDT, SO_TXTIME) leaves no
 * earlier than it asked. The virtual queue charges the packet at its
 * arrival either way (t_dep is committed to its clock, not sender_ns), so
 * a packet waiting for its own pacing never delays the packets behind it. */
AFCD_INLINE __u64 afcd_departure(__u64 t_dep_ns, __u64 sender_ns)
{
	return afcd_time_after_eq(sender_ns, t_dep_ns) && sender_ns ? sender_ns : t_dep_ns;
}

#endif /* AFCD_EDT_H */
