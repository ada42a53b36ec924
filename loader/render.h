/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * render.h - `afcd stats` as text (tc -s style) or JSON (json-c). The
 * counters are printed by iterating AFCD_STATS, AFCD_ASTATS and
 * AFCD_GSTATS (maps/afcd_maps.h) and the config from params_table, so a
 * counter or parameter added there appears here without an edit.
 */
#ifndef AFCD_RENDER_H
#define AFCD_RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "snapshot.h"

struct stats_opts {
	bool json;      /* -j */
	bool flows;     /* --flows: the flow table too */
	int top;        /* -k: at most this many flows, fastest first, >= 1 */
	double dt;      /* --dt: seconds between the two readings, [0, 60] */
};

/* Print DEV's state at s1 (rates over s0..s1), with rows[0..nrows) (sorted
 * by rate) when o->flows; live_flows is the flow-state entry count; hook
 * is where afcd_egress runs (tc.h hook_name()). */
void render_stats(const char *dev, __u32 ifindex, const char *hook, const struct snapshot *s0,
		  const struct snapshot *s1, const struct flow_row *rows, size_t nrows,
		  unsigned long long live_flows, const struct stats_opts *o);

#endif /* AFCD_RENDER_H */
