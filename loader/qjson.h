/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * qjson.h - an interface's counters and aggregates as JSON (json-c), under
 * the names `afcd stats -j` gives them in its "queue" object. One
 * definition for the loader (render.c) and for the ns-3 engine's driver
 * (sim/afcd_drive.c), so that a simulation's afcd_stats reads as the
 * loader's. The names are generated from maps/afcd_maps.h's AFCD_STATS,
 * AFCD_ASTATS, AFCD_GSTATS and AFCD_AGGS: a counter or aggregate added
 * there appears here without an edit.
 */
#ifndef AFCD_QJSON_H
#define AFCD_QJSON_H

#include <json-c/json.h>

#include "afcd_maps.h"

/* The counters' names, in their lists' order (the index is the counter's
 * enum value: AFCD_S_*, AFCD_A_*, AFCD_G_*). */
extern const char *const qjson_stat_keys[AFCD_S__MAX];
extern const char *const qjson_astat_keys[AFCD_A__MAX];
extern const char *const qjson_gstat_keys[AFCD_G__MAX];

/* The aggregates' names (enum afcd_agg order). */
extern const char *const qjson_agg_names[AFCD_AGG__MAX];

/* The n counters v[0..n) as "keys[i]": v[i] members of o (unsigned). */
void qjson_counters(struct json_object *o, const char *const *keys, const __u64 *v,
		    unsigned n);

/* q's aggregates: {"NAME": {"packets", "bytes", "drops", "marks": counts
 * since the interface was set up, "m_i": its samples in the shadow buffer
 * now}} in enum afcd_agg order (the mice aggregate has only m_i: its
 * packets count in their own flows). A new object; NULL when out of
 * memory. */
struct json_object *qjson_aggregates(const struct afcd_queue *q);

#endif /* AFCD_QJSON_H */
