/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * snapshot.h - one consistent-enough reading of an interface's state
 * (config, queue, estimates, scan, global counters; the flow table on
 * request) for `afcd stats` and /metrics, and the values derived from it
 * the way the datapath derives them.
 */
#ifndef AFCD_SNAPSHOT_H
#define AFCD_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "afcd_decide.h"
#include "pins.h"

struct snapshot {
	__u64 t_ns;                     /* CLOCK_MONOTONIC at the reading */
	struct afcd_config c;
	struct afcd_queue q;            /* its counters folded (queue_read()) */
	struct afcd_est e;
	struct afcd_scan s;
	__u64 global[AFCD_G__MAX];      /* afcd_global summed over CPUs */
	struct afcd_fair fair;          /* the estimate the datapath uses at t_ns:
					 * the refresh step's while fresh, else its
					 * fallback (afcd_fair_now(), ALGORITHM.md
					 * sec. 3); zero for an algo without the
					 * fairness module, gt_ns zero for one
					 * without the global target */
};

/* Read ifindex's state. 0, or -1 (no config, or its slot unreadable). */
int snapshot_read(struct pins *p, __u32 ifindex, struct snapshot *s);

/* The virtual queue's delay at the reading, ns (t_last - now, >= 0). */
double delay_now_ns(const struct snapshot *s);

/* Is the loader's estimate fresh (heartbeat within stale_after)? */
bool est_fresh(const struct snapshot *s);

/* Who runs the refresh step: "kernel" (the loader's BPF timer), "loader"
 * (the loader process) or "none" (stale: the datapath's fallback). */
const char *refresher_name(const struct snapshot *s);


/* One flow-state entry (its key in f.key) and its rate between two
 * readings, bits/s. */
struct flow_row {
	struct afcd_flow f;
	double rate_bps;
};

/* Every flow-state entry of ifindex and each aggregate that has seen a
 * packet (its key.agg set; afcd_maps.h, Aggregates): a malloc'ed copy,
 * *n entries. */
struct flow_row *flows_read(struct pins *p, __u32 ifindex, size_t *n);

/* rate_bps of each row of r1 from the byte counters of the row of r0 with
 * its key (dt_s apart; r0 is sorted by key in place for the join), then
 * r1 sorted by rate, fastest first. O(n log n). */
void flows_rate(struct flow_row *r1, size_t n1, struct flow_row *r0, size_t n0, double dt_s);

/* How many flow-state entries ifindex has. */
unsigned long long count_iface_flows(struct pins *p, __u32 ifindex);

#endif /* AFCD_SNAPSHOT_H */
