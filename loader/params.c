// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The operator's parameters; see params.h. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "afcd_config.h"
#include "afcd_law.h"
#include "params.h"

#define POFF(f) offsetof(struct params, c.f), #f
const struct param_def params_table[PARAMS_N] = {
	{ "algo",          P_ALGO,  POFF(algo),            "the drop law (default afcd)", 0 },
	{ "rate",          P_RATE,  POFF(rate_bps),        "virtual queue drain rate, bits/s (required; --backend qdisc: optional, paces the qdisc, without it the link's own rate)", 0 },
	{ "target",        P_TIME,  POFF(target_ns),       "target delay", 0 },
	{ "interval",      P_TIME,  POFF(interval_ns),     "CoDel interval", 0 },
	{ "horizon",       P_TIME,  POFF(horizon_ns),      "buffer in time, sojourn above is dropped (default 100ms)", 0 },
	{ "limit",         P_BYTES, offsetof(struct params, limit_bytes), "limit_bytes", "buffer in bytes instead of horizon", 0 },
	{ "rtt",           P_TIME,  POFF(rtt_ns),          "FaLL base RTT for RTT/sqrt(N) (default 1ms)", 0 },
	{ "ecn",           P_FLAG,  POFF(flags),           "on|off: CE-mark ECT packets instead of dropping (the drop law; the policer for an interval past its lead)",
	  AFCD_F_ECN },
	{ "ce_threshold",  P_TIME,  POFF(ce_threshold_ns), "mark ECT packets whose sojourn exceeds it (0 = off)", 0 },
	{ "burst",         P_TIME,  POFF(burst_ns),        "pacing credit: after a gap the queue may send up to this much of the rate at once (default 3ms, 0 = none, at most 1s)", 0 },
	{ "sb_size",       P_U32,   POFF(sb_size),         "shadow buffer slots, 1..4096 (default 2000)", 0 },
	{ "window",        P_TIME,  POFF(window_ns),       "time the shadow buffer covers (default 1s)", 0 },
	{ "sample_bytes",  P_BYTES, POFF(sample_bytes),    "bytes per sample (default max(mtu, rate/8*window/sb_size))", 0 },
	{ "update_period", P_TIME,  POFF(update_period_ns),"refresh period of the estimates", 0 },
	{ "stale_after",   P_TIME,  POFF(stale_after_ns),  "heartbeat age before the datapath falls back (default 1s)", 0 },
	{ "exponent",      P_U32,   POFF(exponent),        "k in target*(m_fair/m_i)^k, 1..4 (default 3)", 0 },
	{ "codel_state",   P_CODEL_STATE, POFF(flags),     "per-flow|global|queue: whose CoDel state drops (default queue)", 0 },
	{ "police",        P_FLAG,  POFF(flags),           "on|off: hold flows above the fair share at the fair rate (default on)",
	  AFCD_F_POLICE },
	{ "isolate",       P_ISOLATE, POFF(flags),         "flows|srchost|dsthost: what the fair share is per (default flows)", 0 },
	{ "mtu",           P_U32,   POFF(mtu_bytes),       "largest packet, bytes (default 1514)", 0 },
	{ "alpha",         P_MILLI, POFF(alpha_milli),     "AFD controller alpha (default 1.7)", 0 },
	{ "beta",          P_MILLI, POFF(beta_milli),      "AFD controller beta (default 1.8)", 0 },
};
_Static_assert(sizeof(params_table) / sizeof(params_table[0]) == PARAMS_N,
	       "PARAMS_N is the table's length");

/* isolate: the name of the key the fair share is computed on. */
#define CODEL_STATE_ROW_(name, bits) { name, bits },
static const struct { const char *name; __u32 bits; } codel_states[] = {
	AFCD_CODEL_STATES(CODEL_STATE_ROW_)
};
#undef CODEL_STATE_ROW_

const char *codel_state_name(__u32 flags)
{
	unsigned i;

	for (i = 1; i < sizeof(codel_states) / sizeof(codel_states[0]); i++)
		if ((flags & AFCD_F_CODEL_STATE) == codel_states[i].bits)
			return codel_states[i].name;
	return codel_states[0].name;
}

int codel_state_bits(const char *name, __u32 *bits)
{
	unsigned i;

	for (i = 0; i < sizeof(codel_states) / sizeof(codel_states[0]); i++)
		if (!strcmp(name, codel_states[i].name)) {
			*bits = codel_states[i].bits;
			return 0;
		}
	if (!strcmp(name, "per_flow")) {
		*bits = 0;
		return 0;
	}
	return -1;
}

const char *isolate_name(__u32 flags)
{
	return (flags & AFCD_F_ISOLATE_SRC) ? "srchost" :
	       (flags & AFCD_F_ISOLATE_DST) ? "dsthost" : "flows";
}

/* A time as afcd params prints it: 5ms, 100ms, 1s. */
static void fmt_default_time(char *b, size_t n, __u64 ns)
{
	if (ns % 1000000000ULL == 0)
		snprintf(b, n, "%llus", (unsigned long long)(ns / 1000000000ULL));
	else if (ns % 1000000ULL == 0)
		snprintf(b, n, "%llums", (unsigned long long)(ns / 1000000ULL));
	else
		snprintf(b, n, "%lluus", (unsigned long long)(ns / 1000ULL));
}

/* The per-algo default of a row field, for the help: "default 5ms; fall
 * 1ms" (the default algo's value, then each algo that differs). */
static void help_per_algo(char *b, size_t n, size_t off)
{
	char v[32], d[32];
	size_t l;
	unsigned a;

#define ROW_FIELD_(row) (*(const __u64 *)((const char *)&(row) + off))
	struct afcd_algo_row def = afcd_algo_row(AFCD_ALGO_DEFAULT);

	fmt_default_time(d, sizeof(d), ROW_FIELD_(def));
	l = (size_t)snprintf(b, n, " (default %s", d);
	for (a = 0; a < AFCD_ALGO__MAX && l < n; a++) {
		struct afcd_algo_row r = afcd_algo_row(a);

		if (ROW_FIELD_(r) == ROW_FIELD_(def))
			continue;
		fmt_default_time(v, sizeof(v), ROW_FIELD_(r));
		l += (size_t)snprintf(b + l, n - l, "; %s %s", afcd_algo_name(a), v);
	}
	if (l < n)
		snprintf(b + l, n - l, ")");
#undef ROW_FIELD_
}

void param_help(const struct param_def *d, char *b, size_t n)
{
	size_t l = (size_t)snprintf(b, n, "%s", d->help);

	if (l >= n)
		return;
	if (!strcmp(d->field, "target_ns"))
		help_per_algo(b + l, n - l, offsetof(struct afcd_algo_row, target_ns));
	else if (!strcmp(d->field, "interval_ns"))
		help_per_algo(b + l, n - l, offsetof(struct afcd_algo_row, interval_ns));
	else if (!strcmp(d->field, "update_period_ns"))
		help_per_algo(b + l, n - l, offsetof(struct afcd_algo_row, update_period_ns));
	else if (d->kind == P_ALGO) {
		unsigned a;

		for (a = 0; a < AFCD_ALGO__MAX && l < n; a++) {
#define ALGO_DOC_(E, name, law, traits, t, i, u, doc) [AFCD_ALGO_##E] = doc,
			static const char *const docs[] = { AFCD_ALGOS(ALGO_DOC_) };
#undef ALGO_DOC_
			l += (size_t)snprintf(b + l, n - l, "%s %s: %s", a ? ";" : ":", afcd_algo_name(a),
					      docs[a]);
		}
	}
}

int param_index(const char *name)
{
	unsigned i;

	for (i = 0; i < PARAMS_N; i++) {
		const char *a = params_table[i].name, *b = name;

		/* accept ce-threshold for ce_threshold */
		while (*a && (*a == *b || (*a == '_' && *b == '-'))) {
			a++;
			b++;
		}
		if (!*a && !*b)
			return (int)i;
	}
	return -1;
}

/* Set one parameter from text. Returns 0, or -1 with a message in err. */
int param_set(struct params *p, const char *name, const char *val,
			    char *err, size_t errlen)
{
	int i = param_index(name);
	const struct param_def *d;
	void *field;
	__u64 v;

	if (i < 0) {
		snprintf(err, errlen, "unknown parameter '%s'", name);
		return -1;
	}
	d = &params_table[i];
	field = (char *)p + d->off;
	if (!val) {
		snprintf(err, errlen, "%s: missing value", d->name);
		return -1;
	}
	switch (d->kind) {
	case P_ALGO: {
		unsigned a;

		for (a = 0; a < AFCD_ALGO__MAX; a++)
			if (!strcmp(val, afcd_algo_name(a)))
				break;
		if (a == AFCD_ALGO__MAX) {
			int l = snprintf(err, errlen, "algo: '%s' is not one of", val);

			for (a = 0; a < AFCD_ALGO__MAX && l > 0 && (size_t)l < errlen; a++)
				l += snprintf(err + l, errlen - (size_t)l, "%s %s", a ? "," : "",
					      afcd_algo_name(a));
			return -1;
		}
		*(__u32 *)field = a;
		break;
	}
	case P_TIME:
		if (parse_time_ns(val, &v)) {
			snprintf(err, errlen, "%s: '%s' is not a time (e.g. 5ms, 100us, 1s)", d->name, val);
			return -1;
		}
		*(__u64 *)field = v;
		break;
	case P_RATE:
		if (parse_rate_bps(val, &v)) {
			snprintf(err, errlen, "%s: '%s' is not a rate (e.g. 100mbit, 10gbit)", d->name, val);
			return -1;
		}
		*(__u64 *)field = v;
		break;
	case P_BYTES:
		if (parse_bytes(val, &v)) {
			snprintf(err, errlen, "%s: '%s' is not a size in bytes (e.g. 1500, 64k)", d->name, val);
			return -1;
		}
		*(__u64 *)field = v;
		break;
	case P_U32: {
		char *end;
		unsigned long x;

		errno = 0;
		x = strtoul(val, &end, 10);
		if (errno || *end || end == val || x > 0xffffffffUL) {
			snprintf(err, errlen, "%s: '%s' is not a whole number", d->name, val);
			return -1;
		}
		*(__u32 *)field = (__u32)x;
		break;
	}
	case P_MILLI: {
		const char *u;
		double x;

		if (parse_number(val, &x, &u) || *u || x <= 0 || x > 1000) {
			snprintf(err, errlen, "%s: '%s' is not a number in (0, 1000]", d->name, val);
			return -1;
		}
		*(__u32 *)field = (__u32)(x * 1000 + 0.5);
		break;
	}
	case P_FLAG:
		if (!strcmp(val, "on") || !strcmp(val, "1") || !strcmp(val, "yes"))
			p->c.flags |= d->bit;
		else if (!strcmp(val, "off") || !strcmp(val, "0") || !strcmp(val, "no"))
			p->c.flags &= ~d->bit;
		else {
			snprintf(err, errlen, "%s: '%s' is not on or off", d->name, val);
			return -1;
		}
		break;
	case P_ISOLATE:
		p->c.flags &= ~(AFCD_F_ISOLATE_SRC | AFCD_F_ISOLATE_DST);
		if (!strcmp(val, "srchost"))
			p->c.flags |= AFCD_F_ISOLATE_SRC;
		else if (!strcmp(val, "dsthost"))
			p->c.flags |= AFCD_F_ISOLATE_DST;
		else if (strcmp(val, "flows")) {
			snprintf(err, errlen, "isolate: '%s' is not flows, srchost or dsthost", val);
			return -1;
		}
		break;
	case P_CODEL_STATE:
	{
		__u32 bits;

		if (codel_state_bits(val, &bits)) {
			snprintf(err, errlen, "codel_state: '%s' is not per-flow, global or queue", val);
			return -1;
		}
		p->c.flags = (p->c.flags & ~AFCD_F_CODEL_STATE) | bits;
		break;
	}
	}
	p->set |= 1ULL << i;
	return 0;
}

int param_given(const struct params *p, const char *name)
{
	int i = param_index(name);

	return i >= 0 && (p->set & (1ULL << i));
}

/* Overlay the parameters given in `top` onto `base` (both complete). */
void params_overlay(struct params *base, const struct params *top)
{
	unsigned i;

	for (i = 0; i < PARAMS_N; i++) {
		const struct param_def *d = &params_table[i];

		if (!(top->set & (1ULL << i)))
			continue;
		switch (d->kind) {
		case P_FLAG:
		case P_CODEL_STATE:
		case P_ISOLATE: {
			__u32 bit = d->kind == P_FLAG ? d->bit : d->kind == P_ISOLATE ?
				    (AFCD_F_ISOLATE_SRC | AFCD_F_ISOLATE_DST) : AFCD_F_CODEL_STATE;

			base->c.flags = (base->c.flags & ~bit) | (top->c.flags & bit);
			break;
		}
		case P_TIME: case P_RATE: case P_BYTES:
			memcpy((char *)base + d->off, (const char *)top + d->off, 8);
			break;
		default:
			memcpy((char *)base + d->off, (const char *)top + d->off, 4);
			break;
		}
		base->set |= 1ULL << i;
	}
}

/* Fill what was not given with the defaults of the chosen algo
 * (afcd_config_defaults(): the AFCD_ALGOS rows and ALGORITHM.md's
 * defaults, one place), then derive horizon from limit and sample_bytes
 * from rate, window, sb_size and mtu. */
void params_complete(struct params *p)
{
	struct afcd_config *c = &p->c, d;

	if (!param_given(p, "algo"))
		c->algo = AFCD_ALGO_DEFAULT;
	afcd_config_defaults(&d, c->algo, c->rate_bps);
	c->abi = d.abi;
#define DEF_(name, field) do { if (!param_given(p, name)) c->field = d.field; } while (0)
	DEF_("target", target_ns);
	DEF_("interval", interval_ns);
	DEF_("rtt", rtt_ns);
	DEF_("sb_size", sb_size);
	DEF_("window", window_ns);
	DEF_("update_period", update_period_ns);
	DEF_("stale_after", stale_after_ns);
	DEF_("exponent", exponent);
	DEF_("mtu", mtu_bytes);
	DEF_("alpha", alpha_milli);
	DEF_("beta", beta_milli);
	DEF_("burst", burst_ns);
#undef DEF_
	if (!param_given(p, "police"))
		c->flags |= d.flags & AFCD_F_POLICE;
	if (!param_given(p, "codel_state"))
		c->flags = (c->flags & ~AFCD_F_CODEL_STATE) | (d.flags & AFCD_F_CODEL_STATE);
	if (param_given(p, "limit") && c->rate_bps)
		c->horizon_ns = (__u64)((double)p->limit_bytes * 8e9 / (double)c->rate_bps);
	else if (!param_given(p, "horizon"))
		c->horizon_ns = d.horizon_ns;
	/* without a rate (backend qdisc), one MTU until the loader has the
	 * link's measured rate to derive it from (AFCD_F_SAMPLE_AUTO) */
	c->flags &= ~AFCD_F_SAMPLE_AUTO;
	if (!param_given(p, "sample_bytes")) {
		c->sample_bytes = afcd_default_sample_bytes(c);
		if (!c->rate_bps)
			c->flags |= AFCD_F_SAMPLE_AUTO;
	}
}

/* Check a complete parameter set. Returns 0, or -1 naming the problem. */
int params_validate(const struct params *p, char *err, size_t errlen)
{
	const struct afcd_config *c = &p->c;

#define BAD(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)
	if (param_given(p, "limit") && param_given(p, "horizon"))
		BAD("give horizon or limit, not both");
	if (!c->rate_bps && !(c->flags & AFCD_F_QDISC))
		BAD("rate: must be given and above 0 (e.g. rate 100mbit)");
	if (!c->rate_bps && param_given(p, "limit"))
		BAD("limit: needs a rate (give horizon instead: the link's rate is not known "
		    "in advance)");
	if (c->rate_bps && (c->rate_bps < AFCD_RATE_MIN_BPS || c->rate_bps > AFCD_RATE_MAX_BPS))
		BAD("rate: %llu bit/s is outside [1kbit, 1tbit]", (unsigned long long)c->rate_bps);
	if (c->algo >= AFCD_ALGO__MAX)
		BAD("algo: unknown");
	if (!c->interval_ns || c->interval_ns > AFCD_INTERVAL_MAX_NS)
		BAD("interval: must be in (0, 10s]");
	if (!c->target_ns || c->target_ns > AFCD_TIME_MAX_NS)
		BAD("target: must be in (0, 17s]");
	if (c->target_ns >= c->interval_ns)
		BAD("target (%llu ns) must be below interval (%llu ns)",
		    (unsigned long long)c->target_ns, (unsigned long long)c->interval_ns);
	if (c->horizon_ns < c->target_ns)
		BAD("horizon (%llu ns) must be at least target (%llu ns)",
		    (unsigned long long)c->horizon_ns, (unsigned long long)c->target_ns);
	if (c->horizon_ns > AFCD_TIME_MAX_NS)
		BAD("horizon: at most 17s");
	if (!c->rtt_ns || c->rtt_ns > AFCD_TIME_MAX_NS)
		BAD("rtt: must be in (0, 17s]");
	if (c->ce_threshold_ns > AFCD_TIME_MAX_NS)
		BAD("ce_threshold: at most 17s");
	if (c->burst_ns > AFCD_BURST_MAX_NS)
		BAD("burst: at most 1s");
	if (!c->sb_size || c->sb_size > AFCD_SB_SIZE_MAX)
		BAD("sb_size: must be in [1, %d]", AFCD_SB_SIZE_MAX);
	if (!c->window_ns || c->window_ns > AFCD_TIME_MAX_NS)
		BAD("window: must be in (0, 17s]");
	if (!c->sample_bytes || c->sample_bytes > AFCD_SAMPLE_BYTES_MAX)
		BAD("sample_bytes: must be in [1, %llu]", (unsigned long long)AFCD_SAMPLE_BYTES_MAX);
	if (c->update_period_ns < 100000ULL || c->update_period_ns > 10000000000ULL)
		BAD("update_period: must be in [100us, 10s]");
	if (c->stale_after_ns < c->update_period_ns)
		BAD("stale_after must be at least update_period");
	if (c->stale_after_ns > AFCD_TIME_MAX_NS)
		BAD("stale_after: at most 17s (longer would keep a dead loader's estimates)");
	if (!c->alpha_milli || !c->beta_milli || c->alpha_milli >= c->beta_milli)
		BAD("alpha (%.3f) and beta (%.3f) must be above 0 with alpha < beta (the AFD "
		    "controller's integral gain beta - alpha must be positive)",
		    c->alpha_milli / 1e3, c->beta_milli / 1e3);
	if (c->exponent < 1 || c->exponent > AFCD_EXPONENT_MAX)
		BAD("exponent: must be in [1, 4]");
	if (c->mtu_bytes < 68 || c->mtu_bytes > 65536)
		BAD("mtu: must be in [68, 65536]");
#undef BAD
	return 0;
}

struct params params_from_config(const struct afcd_config *c)
{
	struct params p = { .c = *c, .set = (1ULL << PARAMS_N) - 1 };

	p.set &= ~(1ULL << param_index("limit"));
	return p;
}

struct json_object *params_to_json(const struct afcd_config *c)
{
	struct json_object *o = json_object_new_object();
	unsigned i;

	for (i = 0; i < PARAMS_N; i++) {
		const struct param_def *d = &params_table[i];
		const char *v = (const char *)c + (d->off - offsetof(struct params, c));
		struct json_object *j;
		const char *key = d->name;

		if (d->off >= offsetof(struct params, limit_bytes))
			continue;               /* limit: not stored, the horizon stands for it */
		switch (d->kind) {
		case P_ALGO:
			j = json_object_new_string(afcd_algo_name(c->algo));
			break;
		case P_FLAG:
			j = json_object_new_boolean(!!(c->flags & d->bit));
			break;
		case P_CODEL_STATE:
			j = json_object_new_string(codel_state_name(c->flags));
			break;
		case P_ISOLATE:
			j = json_object_new_string(isolate_name(c->flags));
			break;
		case P_MILLI: {
			__u32 m;

			memcpy(&m, v, sizeof(m));
			j = json_object_new_double(m / 1e3);
			break;
		}
		case P_U32: {
			__u32 u;

			memcpy(&u, v, sizeof(u));
			j = json_object_new_int64(u);
			key = d->field;
			break;
		}
		default: {                      /* P_TIME, P_RATE, P_BYTES: __u64 */
			__u64 u;

			memcpy(&u, v, sizeof(u));
			j = json_object_new_uint64(u);
			key = d->field;
			break;
		}
		}
		json_object_object_add(o, key, j);
	}
	return o;
}
