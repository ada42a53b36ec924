// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* `afcd stats` text and JSON; see render.h. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

#include "afcd_law.h"
#include "params.h"
#include "qjson.h"
#include "render.h"

static void fmt_rate(char *b, size_t n, double bps)
{
	if (bps >= 1e9)
		snprintf(b, n, "%.2fGbit", bps / 1e9);
	else if (bps >= 1e6)
		snprintf(b, n, "%.2fMbit", bps / 1e6);
	else if (bps >= 1e3)
		snprintf(b, n, "%.2fKbit", bps / 1e3);
	else
		snprintf(b, n, "%.0fbit", bps);
}

static void fmt_time(char *b, size_t n, double ns)
{
	if (ns >= 1.8e19)
		snprintf(b, n, "inf");
	else if (ns >= 1e9)
		snprintf(b, n, "%.3fs", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(b, n, "%.3fms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(b, n, "%.1fus", ns / 1e3);
	else
		snprintf(b, n, "%.0fns", ns);
}

/* An address of a flow key: dotted IPv4 for v4-mapped, else IPv6. */
static bool addr_str(char *b, size_t n, const __u32 a[4])
{
	bool v4 = !a[0] && !a[1] && a[2] == htonl(0xffff);

	inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? &a[3] : a, b, (socklen_t)n);
	return v4;
}

/* The aggregate a key stands for, or NULL for a flow's key. */
static const char *agg_name(const struct afcd_flow_key *k)
{
	return k->agg && k->agg <= AFCD_AGG__MAX ? qjson_agg_names[k->agg - 1] :
	       k->agg ? "aggregate?" : NULL;
}

static void fmt_key(char *b, size_t n, const struct afcd_flow_key *k)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];

	if (agg_name(k)) {
		snprintf(b, n, "aggregate %s", agg_name(k));
		return;
	}
	const char *proto = k->proto == 6 ? "tcp" : k->proto == 17 ? "udp" :
			    k->proto == 1 ? "icmp" : k->proto == 58 ? "icmp6" : "ip";
	bool v4 = addr_str(s, sizeof(s), k->saddr);

	addr_str(d, sizeof(d), k->daddr);
	snprintf(b, n, v4 ? "%s %s:%u > %s:%u" : "%s [%s]:%u > [%s]:%u", proto, s,
		 ntohs(k->sport), d, ntohs(k->dport));
	if (k->proto != 6 && k->proto != 17 && k->proto != 1 && k->proto != 58) {
		size_t l = strlen(b);

		snprintf(b + l, n - l, " proto %u", k->proto);
	}
}

/* Text: "key value" for every counter of a list. */
static void text_counters(const char *const *keys, const __u64 *v, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		printf("%s%s %llu", i % 6 ? "  " : "\n ", keys[i], (unsigned long long)v[i]);
}

static struct json_object *json_flow(const struct flow_row *r)
{
	struct json_object *o = json_object_new_object();
	char key[160], src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];

	fmt_key(key, sizeof(key), &r->f.key);
	addr_str(src, sizeof(src), r->f.key.saddr);
	addr_str(dst, sizeof(dst), r->f.key.daddr);
	json_object_object_add(o, "key", json_object_new_string(key));
	json_object_object_add(o, "aggregate", agg_name(&r->f.key) ?
			       json_object_new_string(agg_name(&r->f.key)) : NULL);
	json_object_object_add(o, "proto", json_object_new_int(r->f.key.proto));
	json_object_object_add(o, "src", json_object_new_string(src));
	json_object_object_add(o, "sport", json_object_new_int(ntohs(r->f.key.sport)));
	json_object_object_add(o, "dst", json_object_new_string(dst));
	json_object_object_add(o, "dport", json_object_new_int(ntohs(r->f.key.dport)));
	json_object_object_add(o, "rate_bps", json_object_new_int64((long long)r->rate_bps));
	json_object_object_add(o, "bytes", json_object_new_uint64(r->f.bytes));
	json_object_object_add(o, "packets", json_object_new_uint64(r->f.packets));
	json_object_object_add(o, "m_i", json_object_new_int64(r->f.m_i));
	json_object_object_add(o, "target_ns", json_object_new_int64(
		r->f.target_ns == AFCD_TARGET_INF ? -1 : (long long)r->f.target_ns));
	json_object_object_add(o, "last_sojourn_ns", json_object_new_uint64(r->f.last_sojourn_ns));
	json_object_object_add(o, "drops", json_object_new_uint64(r->f.drops));
	json_object_object_add(o, "marks", json_object_new_uint64(r->f.marks));
	json_object_object_add(o, "dropping", json_object_new_int(r->f.cv.dropping));
	json_object_object_add(o, "codel_count", json_object_new_int64(r->f.cv.count));
	return o;
}

#define ADD(o, k, v) json_object_object_add(o, k, v)
#define JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
#define U64(v) json_object_new_uint64((__u64)(v))
#define I64(v) json_object_new_int64((long long)(v))

/* The estimates a packet is judged against and the refresh's state. */
static struct json_object *json_estimates(const struct snapshot *s1)
{
	const struct afcd_queue *q = &s1->q;
	const struct afcd_fair *fs = &s1->fair;
	bool fresh = est_fresh(s1);
	struct json_object *je;

	je = json_object_new_object();
	ADD(je, "n_flows", I64(q->n_active));
	ADD(je, "m_fair", U64(fs->m_fair));
	ADD(je, "global_target_ns", U64(fs->gt_ns));
	ADD(je, "n_long", U64(s1->e.n_long));
	ADD(je, "waterline", U64(fs->waterline));
	/* the level the fair rate takes, thousandths of a sample (the
	 * loader's last scan; 0 without one) */
	ADD(je, "waterline_milli", U64(s1->s.waterline_milli));
	ADD(je, "arrival_bps", U64(s1->e.arrival_bps));
	ADD(je, "loader_fresh", json_object_new_boolean(fresh));
	ADD(je, "heartbeat_age_ns", I64(s1->e.heartbeat_ns ? (long long)(s1->t_ns - s1->e.heartbeat_ns)
							     : -1LL));
	ADD(je, "loader_pid", U64(s1->s.loader_pid));
	ADD(je, "refreshes", U64(s1->e.refreshes));
	ADD(je, "ctrl_milli", I64(s1->e.ctrl_milli));
	ADD(je, "refresher", json_object_new_string(refresher_name(s1)));
	ADD(je, "refresh_busy_ns", U64(s1->e.busy_ns));
	ADD(je, "scans", U64(s1->s.scans));
	ADD(je, "fair_rate_bps", U64(fs->fair_rate_bps));
	ADD(je, "mice_samples", U64(fs->mice_samples));
	ADD(je, "drain_milli", U64(s1->e.drain_milli));
	ADD(je, "crowd_gate_ns", U64(s1->e.crowd_gate_ns));
	return je;
}

/* root, then the flows streamed into it: the object without its last
 * brace, then one flow at a time, so that 65,536 flows never sit in
 * memory as JSON objects at once (they took 243 MB). */
static void json_print_with_flows(struct json_object *root, const struct flow_row *rows,
				  size_t shown)
{
	const char *text = json_object_to_json_string_ext(root, JSON_FLAGS);
	size_t i;

	fwrite(text, 1, strlen(text) - 1, stdout);
	fputs(",\"flows\":[", stdout);
	for (i = 0; i < shown; i++) {
		struct json_object *jf = json_flow(&rows[i]);

		if (i)
			fputc(',', stdout);
		fputs(json_object_to_json_string_ext(jf, JSON_FLAGS), stdout);
		json_object_put(jf);
	}
	puts("]}");
}

static void render_json(const char *dev, __u32 ifindex, const char *hook,
			const struct snapshot *s1,
			const struct flow_row *rows, size_t shown, unsigned long long live_flows,
			long long evicted, double rate, double pps, double dt,
			const struct stats_opts *o)
{
	const struct afcd_queue *q = &s1->q;
	struct json_object *root = json_object_new_object(), *jq, *jg;
	size_t i;

	ADD(root, "dev", json_object_new_string(dev));
	ADD(root, "ifindex", U64(ifindex));
	ADD(root, "hook", json_object_new_string(hook));
	ADD(root, "slot", U64(s1->c.slot));
	ADD(root, "config", params_to_json(&s1->c));
	{       /* the per-interface counters' names (AFCD_STATS), for tools */
		struct json_object *jk = json_object_new_array();

		for (i = 0; i < AFCD_S__MAX; i++)
			json_object_array_add(jk, json_object_new_string(qjson_stat_keys[i]));
		ADD(root, "stats_keys", jk);
	}

	jq = json_object_new_object();
	qjson_counters(jq, qjson_stat_keys, q->stats, AFCD_S__MAX);
	qjson_counters(jq, qjson_astat_keys, q->astats, AFCD_A__MAX);
	ADD(jq, "flows_live", U64(live_flows));
	ADD(jq, "flows_evicted", I64(evicted));
	ADD(jq, "flows_gc", U64(s1->s.gc_deleted));
	ADD(jq, "delay_now_ns", I64(delay_now_ns(s1)));
	ADD(jq, "delay_max_ns", U64(q->max_sojourn_ns));
	ADD(jq, "last_sojourn_ns", U64(q->last_sojourn_ns));
	ADD(jq, "sojourn_sum_ns", U64(q->sojourn_sum_ns));   /* over passed and marked packets */
	ADD(jq, "rate_bps", I64(rate));
	ADD(jq, "link_bps", U64(q->link_bps));   /* the qdisc's measured link rate (0: none) */
	ADD(jq, "pps", I64(pps));
	ADD(jq, "dt_s", json_object_new_double(dt));
	ADD(jq, "dropping", U64(q->gcv.dropping));
	ADD(jq, "codel_count", U64(q->gcv.count));
	ADD(jq, "aggregates", qjson_aggregates(q));
	ADD(root, "queue", jq);

	ADD(root, "estimates", json_estimates(s1));

	jg = json_object_new_object();
	qjson_counters(jg, qjson_gstat_keys, s1->global, AFCD_G__MAX);
	ADD(root, "global", jg);
	if (!o->flows)
		puts(json_object_to_json_string_ext(root, JSON_FLAGS));
	else
		json_print_with_flows(root, rows, shown);
	json_object_put(root);
}

/* The flow table, one line a flow, fastest first. */
static void text_flows(const struct flow_row *rows, size_t shown)
{
	size_t i;

	printf("\n %-52s %12s %6s %10s %10s %7s %7s\n", "flow", "rate", "m_i", "target_i",
	       "sojourn", "drops", "marks");
	for (i = 0; i < shown; i++) {
		const struct flow_row *r = &rows[i];
		char key[160], rt[32], tg[32], sj[32];

		fmt_key(key, sizeof(key), &r->f.key);
		fmt_rate(rt, sizeof(rt), r->rate_bps);
		fmt_time(tg, sizeof(tg), (double)r->f.target_ns);
		fmt_time(sj, sizeof(sj), (double)r->f.last_sojourn_ns);
		printf(" %-52s %12s %6u %10s %10s %7llu %7llu\n", key, rt, r->f.m_i, tg, sj,
		       (unsigned long long)r->f.drops, (unsigned long long)r->f.marks);
	}
}

void render_stats(const char *dev, __u32 ifindex, const char *hook, const struct snapshot *s0,
		  const struct snapshot *s1, const struct flow_row *rows, size_t nrows,
		  unsigned long long live_flows, const struct stats_opts *o)
{
	const struct afcd_queue *q = &s1->q;
	double dt = (double)(s1->t_ns - s0->t_ns) / 1e9;
	double rate = dt > 0 ? (double)(q->stats[AFCD_S_PASSED_BYTES] -
					 s0->q.stats[AFCD_S_PASSED_BYTES]) * 8 / dt : 0;
	double pps = dt > 0 ? (double)(q->stats[AFCD_S_PASSED] - s0->q.stats[AFCD_S_PASSED]) / dt : 0;
	long long evicted = (long long)q->astats[AFCD_A_FLOW_NEW] - (long long)live_flows -
			    (long long)s1->s.gc_deleted;
	__u32 m_fair = s1->fair.m_fair;
	__u64 gt = s1->fair.gt_ns;
	size_t shown = nrows < (size_t)o->top ? nrows : (size_t)o->top;

	if (evicted < 0)
		evicted = 0;
	if (o->json) {
		render_json(dev, ifindex, hook, s1, rows, shown, live_flows, evicted, rate, pps, dt, o);
		return;
	}
	{
		char r1[48], r2[32], t1[32], t2[32], t3[32], t4[32], t5[32];

		if (s1->c.rate_bps) {
			fmt_rate(r1, sizeof(r1), (double)s1->c.rate_bps);
		} else {   /* backend qdisc, work-conserving: the rate it measured */
			fmt_rate(r2, sizeof(r2), (double)q->link_bps);
			snprintf(r1, sizeof(r1), "link(%s)", r2);
		}
		fmt_time(t1, sizeof(t1), (double)s1->c.target_ns);
		fmt_time(t2, sizeof(t2), (double)s1->c.interval_ns);
		fmt_time(t3, sizeof(t3), (double)s1->c.horizon_ns);
		printf("afcd dev %s hook %s slot %u algo %s rate %s target %s interval %s horizon %s "
		       "ecn %s codel_state %s\n", dev, hook, s1->c.slot,
		       afcd_algo_name(s1->c.algo), r1, t1, t2, t3,
		       (s1->c.flags & AFCD_F_ECN) ? "on" : "off",
		       codel_state_name(s1->c.flags));
		printf(" Sent %llu bytes %llu pkt (dropped %llu: aqm %llu, overlimit %llu) "
		       "marked %llu (ce_threshold %llu)\n",
		       (unsigned long long)q->stats[AFCD_S_PASSED_BYTES],
		       (unsigned long long)q->stats[AFCD_S_PASSED],
		       (unsigned long long)(q->stats[AFCD_S_AQM_DROP] + q->stats[AFCD_S_OVERLIMIT_DROP]),
		       (unsigned long long)q->stats[AFCD_S_AQM_DROP],
		       (unsigned long long)q->stats[AFCD_S_OVERLIMIT_DROP],
		       (unsigned long long)q->stats[AFCD_S_ECN_MARK],
		       (unsigned long long)q->stats[AFCD_S_CE_THRESHOLD_MARK]);
		fmt_rate(r2, sizeof(r2), rate);
		fmt_time(t4, sizeof(t4), delay_now_ns(s1));
		fmt_time(t5, sizeof(t5), (double)q->max_sojourn_ns);
		printf(" rate %s %.0fpps  delay now %s max %s  %s\n", r2, pps, t4, t5,
		       q->gcv.dropping ? "dropping" : "");
		fmt_time(t1, sizeof(t1), (double)gt);
		printf(" N %d  m_fair %u/%u samples  global_target %s  sampled %llu  "
		       "estimates %s", q->n_active, m_fair, s1->c.sb_size, t1,
		       (unsigned long long)q->astats[AFCD_A_SAMPLED],
		       est_fresh(s1) ? "from loader" : "fallback (no loader)");
		if (est_fresh(s1))
			printf(" pid %u, refreshed by %s", s1->s.loader_pid, refresher_name(s1));
		printf("\n flows live %llu evicted %lld gc %llu", live_flows, evicted,
		       (unsigned long long)s1->s.gc_deleted);
		text_counters(qjson_stat_keys, q->stats, AFCD_S__MAX);
		text_counters(qjson_astat_keys, q->astats, AFCD_A__MAX);
		text_counters(qjson_gstat_keys, s1->global, AFCD_G__MAX);
		printf("\n");
	}
	if (o->flows)
		text_flows(rows, shown);
}
