// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The parameters as the operator reads them: a value as text, the help with
 * its defaults and range, `afcd params -j` and the config as `afcd stats -j`
 * prints it, all from params_table; see params.h. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "afcd_config.h"
#include "params.h"

/* A number in the largest unit not above it, its fraction truncated to
 * three decimals (so that a bound printed is one the parser accepts):
 * 5ms, 100ms, 1.5ms, 17.179s, 100mbit (0 in the smallest unit). */
static void fmt_scaled(char *b, size_t n, __u64 v, const __u64 *mul, const char *const *unit,
		       unsigned nu)
{
	unsigned i = nu - 1, d = 3;
	__u64 frac;

	while (i > 0 && v < mul[i])
		i--;
	frac = (v % mul[i]) * 1000 / mul[i];
	if (!frac) {
		snprintf(b, n, "%llu%s", (unsigned long long)(v / mul[i]), unit[i]);
		return;
	}
	while (frac % 10 == 0) {
		frac /= 10;
		d--;
	}
	snprintf(b, n, "%llu.%0*llu%s", (unsigned long long)(v / mul[i]), (int)d,
		 (unsigned long long)frac, unit[i]);
}

void param_format(const struct param_def *d, __u64 v, char *b, size_t n)
{
	static const __u64 tmul[] = { 1, 1000, 1000000, 1000000000ULL };
	static const char *const tunit[] = { "ns", "us", "ms", "s" };
	static const __u64 rmul[] = { 1, 1000, 1000000, 1000000000ULL, 1000000000000ULL };
	static const char *const runit[] = { "bit", "kbit", "mbit", "gbit", "tbit" };

	switch (d->kind) {
	case P_ALGO:
		snprintf(b, n, "%s", afcd_algo_name((__u32)v));
		break;
	case P_TIME:
		fmt_scaled(b, n, v, tmul, tunit, 4);
		break;
	case P_RATE:
		fmt_scaled(b, n, v, rmul, runit, 5);
		break;
	case P_MILLI:
		snprintf(b, n, "%g", (double)v / 1e3);
		break;
	case P_FLAG:
		snprintf(b, n, "%s", (v & d->bit) ? "on" : "off");
		break;
	case P_CODEL_STATE:
		snprintf(b, n, "%s", codel_state_name((__u32)v));
		break;
	case P_ISOLATE:
		snprintf(b, n, "%s", isolate_name((__u32)v));
		break;
	default:                        /* P_U32, P_BYTES */
		snprintf(b, n, "%llu", (unsigned long long)v);
		break;
	}
}

__u64 param_value(const struct param_def *d, const struct afcd_config *c)
{
	const char *f = (const char *)c + d->off;     /* c is struct params' first member */
	__u32 u;
	__u64 v;

	switch (d->kind) {
	case P_TIME: case P_RATE: case P_BYTES:
		memcpy(&v, f, sizeof(v));
		return v;
	default:                        /* P_ALGO, P_U32, P_MILLI, the flags' word */
		memcpy(&u, f, sizeof(u));
		return u;
	}
}

/* " (default 5ms; fall 1ms)": the default algo's default, then each algo
 * whose default differs. */
static size_t help_defaults(const struct param_def *d, char *b, size_t n)
{
	struct afcd_config def, c;
	char v[32];
	size_t l;
	unsigned a;

	afcd_config_defaults(&def, AFCD_ALGO_DEFAULT, 0);
	param_format(d, param_value(d, &def), v, sizeof(v));
	l = (size_t)snprintf(b, n, " (default %s", v);
	for (a = 0; a < AFCD_ALGO__MAX && d->kind != P_ALGO && l < n; a++) {
		afcd_config_defaults(&c, a, 0);
		if (param_value(d, &c) == param_value(d, &def))
			continue;
		param_format(d, param_value(d, &c), v, sizeof(v));
		l += (size_t)snprintf(b + l, n - l, "; %s %s", afcd_algo_name(a), v);
	}
	if (l < n)
		l += (size_t)snprintf(b + l, n - l, ")");
	return l;
}

void param_help(const struct param_def *d, char *b, size_t n)
{
	size_t l = (size_t)snprintf(b, n, "%s", d->help);
	char lo[32], hi[32];

	if (l < n && d->off < offsetof(struct params, limit_bytes) && !(d->pflags & PF_NODEF))
		l += help_defaults(d, b + l, n - l);
	if (l < n && d->max) {
		param_format(d, d->min, lo, sizeof(lo));
		param_format(d, d->max, hi, sizeof(hi));
		l += (size_t)snprintf(b + l, n - l, " [%s, %s]", lo, hi);
	}
	if (l < n && d->kind == P_ALGO) {
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

/* The unit a number is given in, for `afcd params -j`. */
static const char *param_unit_name(enum param_kind k)
{
	switch (k) {
	case P_TIME:  return "time";
	case P_RATE:  return "bit/s";
	case P_BYTES: return "bytes";
	case P_MILLI: return "number";
	case P_U32:   return "count";
	default:      return "choice";
	}
}

struct json_object *params_table_json(void)
{
	struct json_object *all = json_object_new_array();
	struct afcd_config def, c;
	char v[32];
	unsigned i, a;

	afcd_config_defaults(&def, AFCD_ALGO_DEFAULT, 0);
	for (i = 0; i < PARAMS_N; i++) {
		const struct param_def *d = &params_table[i];
		struct json_object *o = json_object_new_object(), *per;
		bool has_def = d->off < offsetof(struct params, limit_bytes) &&
			       !(d->pflags & PF_NODEF);

		json_object_object_add(o, "name", json_object_new_string(d->name));
		json_object_object_add(o, "unit", json_object_new_string(param_unit_name(d->kind)));
		json_object_object_add(o, "help", json_object_new_string(d->help));
		if (has_def) {
			param_format(d, param_value(d, &def), v, sizeof(v));
			json_object_object_add(o, "default", json_object_new_string(v));
		}
		if (has_def && d->kind != P_ALGO) {
			per = json_object_new_object();
			for (a = 0; a < AFCD_ALGO__MAX; a++) {
				afcd_config_defaults(&c, a, 0);
				param_format(d, param_value(d, &c), v, sizeof(v));
				json_object_object_add(per, afcd_algo_name(a), json_object_new_string(v));
			}
			json_object_object_add(o, "default_per_algo", per);
		}
		if (d->max) {
			param_format(d, d->min, v, sizeof(v));
			json_object_object_add(o, "min", json_object_new_string(v));
			param_format(d, d->max, v, sizeof(v));
			json_object_object_add(o, "max", json_object_new_string(v));
		}
		json_object_array_add(all, o);
	}
	return all;
}
