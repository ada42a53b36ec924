// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* An interface's counters and aggregates as JSON; see qjson.h. */
#include "qjson.h"

#define KEY_(E, key, fam, lbl, help) key,
const char *const qjson_stat_keys[AFCD_S__MAX] = { AFCD_STATS(KEY_) };
const char *const qjson_astat_keys[AFCD_A__MAX] = { AFCD_ASTATS(KEY_) };
const char *const qjson_gstat_keys[AFCD_G__MAX] = { AFCD_GSTATS(KEY_) };
#undef KEY_

#define AGG_NAME_(E, name, doc) name,
const char *const qjson_agg_names[AFCD_AGG__MAX] = { AFCD_AGGS(AGG_NAME_) };
#undef AGG_NAME_

void qjson_counters(struct json_object *o, const char *const *keys, const __u64 *v,
		    unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		json_object_object_add(o, keys[i], json_object_new_uint64(v[i]));
}

struct json_object *qjson_aggregates(const struct afcd_queue *q)
{
	struct json_object *ja = json_object_new_object();
	unsigned i;

	if (!ja)
		return NULL;
	for (i = 0; i < AFCD_AGG__MAX; i++) {
		struct json_object *o = json_object_new_object();
		const struct afcd_flow *f = &q->agg[i];

		if (!o) {
			json_object_put(ja);
			return NULL;
		}
		json_object_object_add(o, "packets", json_object_new_uint64(f->packets));
		json_object_object_add(o, "bytes", json_object_new_uint64(f->bytes));
		json_object_object_add(o, "drops", json_object_new_uint64(f->drops));
		json_object_object_add(o, "marks", json_object_new_uint64(f->marks));
		json_object_object_add(o, "m_i", json_object_new_uint64(f->m_i));
		json_object_object_add(ja, qjson_agg_names[i], o);
	}
	return ja;
}
