// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The operator's parameters; see params.h. */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "afcd_config.h"
#include "afcd_law.h"
#include "params.h"

/* One row a parameter: name, kind, where it is stored, help, flag bit,
 * range and PF_ flags. The default, its per-algo values and the range
 * that `afcd params`, the manual pages and the JSON print are generated
 * from afcd_config_defaults() and these bounds (the datapath's constants
 * of maps/afcd_maps.h), and params_complete() and params_validate() use
 * the same: adding a parameter is one row here plus the code that reads
 * its field. */
#define POFF(f) offsetof(struct params, c.f), #f
#define T_MAX AFCD_TIME_MAX_NS
const struct param_def params_table[PARAMS_N] = {
	{ "algo",          P_ALGO,  POFF(algo),            "the drop law", 0, 0, 0, 0 },
	{ "rate",          P_RATE,  POFF(rate_bps),        "virtual queue drain rate, bits/s (required; --backend qdisc: optional, paces the qdisc, without it the link's own rate)",
	  0, AFCD_RATE_MIN_BPS, AFCD_RATE_MAX_BPS, PF_NODEF | PF_ZERO_OK },
	{ "target",        P_TIME,  POFF(target_ns),       "target delay, below interval", 0, 1, T_MAX, 0 },
	{ "interval",      P_TIME,  POFF(interval_ns),     "CoDel interval", 0, 1, AFCD_INTERVAL_MAX_NS, 0 },
	{ "horizon",       P_TIME,  POFF(horizon_ns),      "buffer in time, sojourn above is dropped; at least target", 0, 0, T_MAX, 0 },
	{ "limit",         P_BYTES, offsetof(struct params, limit_bytes), "limit_bytes", "buffer in bytes instead of horizon (needs a rate)",
	  0, 0, 0, PF_NODEF },
	{ "rtt",           P_TIME,  POFF(rtt_ns),          "FaLL base RTT for RTT/sqrt(N)", 0, 1, T_MAX, 0 },
	{ "ecn",           P_FLAG,  POFF(flags),           "CE-mark ECT packets instead of dropping (the drop law; the policer for an interval past its lead)",
	  AFCD_F_ECN, 0, 0, 0 },
	{ "ce_threshold",  P_TIME,  POFF(ce_threshold_ns), "mark ECT packets whose sojourn exceeds it (0 = off)", 0, 0, T_MAX, 0 },
	{ "burst",         P_TIME,  POFF(burst_ns),        "pacing credit: after a gap the queue may send up to this much of the rate at once (0 = none)",
	  0, 0, AFCD_BURST_MAX_NS, 0 },
	{ "sb_size",       P_U32,   POFF(sb_size),         "shadow buffer slots", 0, 1, AFCD_SB_SIZE_MAX, 0 },
	{ "sb_grow",       P_FLAG,  POFF(flags),           "grow sb_size in place to 3.3 slots a flow of the crowd (flows older than a window that sent within it) once it has had fewer than 3.0 for a window (up to 32,768 and 2*rate/8*window/mtu)",
	  AFCD_F_SB_GROW, 0, 0, 0 },
	{ "window",        P_TIME,  POFF(window_ns),       "time the shadow buffer covers, and the longest a new flow is a mouse", 0, 1, T_MAX, 0 },
	{ "sample_bytes",  P_BYTES, POFF(sample_bytes),    "bytes per sample (default max(mtu, rate/8*window/sb_size))",
	  0, 1, AFCD_SAMPLE_BYTES_MAX, PF_NODEF },
	{ "update_period", P_TIME,  POFF(update_period_ns),"refresh period of the estimates", 0,
	  AFCD_UPDATE_PERIOD_MIN_NS, AFCD_UPDATE_PERIOD_MAX_NS, 0 },
	{ "stale_after",   P_TIME,  POFF(stale_after_ns),  "heartbeat age before the datapath falls back; at least update_period", 0, 1, T_MAX, 0 },
	{ "exponent",      P_U32,   POFF(exponent),        "k in target*(m_fair/m_i)^k", 0, 1, AFCD_EXPONENT_MAX, 0 },
	{ "codel_state",   P_CODEL_STATE, POFF(flags),     "whose CoDel state drops", 0, 0, 0, 0 },
	{ "police",        P_FLAG,  POFF(flags),           "hold flows above the fair share at the fair rate", AFCD_F_POLICE, 0, 0, 0 },
	{ "high_drop",     P_FLAG,  POFF(flags),           "past half the horizon, drop a packet that cannot be CE-marked once an interval of each flow not below its share",
	  AFCD_F_HIGH_DROP, 0, 0, 0 },
	{ "isolate",       P_ISOLATE, POFF(flags),         "what the fair share is per", 0, 0, 0, 0 },
	{ "mtu",           P_U32,   POFF(mtu_bytes),       "largest packet, bytes", 0, AFCD_MTU_MIN_BYTES, AFCD_MTU_MAX_BYTES, 0 },
	{ "alpha",         P_MILLI, POFF(alpha_milli),     "AFD controller alpha, below beta", 0, 1, AFCD_MILLI_MAX, 0 },
	{ "beta",          P_MILLI, POFF(beta_milli),      "AFD controller beta", 0, 1, AFCD_MILLI_MAX, 0 },
};
#undef T_MAX
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

/* The bits of afcd_config.flags a switch or choice owns. */
static __u32 param_flag_mask(const struct param_def *d)
{
	return d->kind == P_FLAG ? d->bit : d->kind == P_ISOLATE ?
	       (AFCD_F_ISOLATE_SRC | AFCD_F_ISOLATE_DST) : AFCD_F_CODEL_STATE;
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

/* algo: the index of the name val in *out, or -1 naming the algos. */
static int parse_algo(const char *val, __u32 *out, char *err, size_t errlen)
{
	unsigned a;
	int l;

	for (a = 0; a < AFCD_ALGO__MAX; a++)
		if (!strcmp(val, afcd_algo_name(a))) {
			*out = a;
			return 0;
		}
	l = snprintf(err, errlen, "algo: '%s' is not one of", val);
	for (a = 0; a < AFCD_ALGO__MAX && l > 0 && (size_t)l < errlen; a++)
		l += snprintf(err + l, errlen - (size_t)l, "%s %s", a ? "," : "", afcd_algo_name(a));
	return -1;
}

/* A switch or a choice (P_FLAG, P_ISOLATE, P_CODEL_STATE) into
 * p->c.flags. 0, or -1 with the message in err. */
static int parse_choice(const struct param_def *d, struct params *p, const char *val,
			char *err, size_t errlen)
{
	__u32 bits = 0;

	if (d->kind == P_FLAG) {
		if (!strcmp(val, "on") || !strcmp(val, "1") || !strcmp(val, "yes"))
			bits = d->bit;
		else if (strcmp(val, "off") && strcmp(val, "0") && strcmp(val, "no")) {
			snprintf(err, errlen, "%s: '%s' is not on or off", d->name, val);
			return -1;
		}
	} else if (d->kind == P_ISOLATE) {
		if (!strcmp(val, "srchost"))
			bits = AFCD_F_ISOLATE_SRC;
		else if (!strcmp(val, "dsthost"))
			bits = AFCD_F_ISOLATE_DST;
		else if (strcmp(val, "flows")) {
			snprintf(err, errlen, "isolate: '%s' is not flows, srchost or dsthost", val);
			return -1;
		}
	} else if (codel_state_bits(val, &bits)) {
		snprintf(err, errlen, "codel_state: '%s' is not per-flow, global or queue", val);
		return -1;
	}
	p->c.flags = (p->c.flags & ~param_flag_mask(d)) | bits;
	return 0;
}

/* A number of d's kind (P_TIME, P_RATE, P_BYTES: u64; P_U32; P_MILLI:
 * thousandths) into field; its range is params_validate()'s. 0, or -1
 * with the message in err. */
static int parse_amount(const struct param_def *d, const char *val, void *field, char *err,
			size_t errlen)
{
	const char *u;
	unsigned long x;
	char *end;
	double m;
	__u64 v;

	switch (d->kind) {
	case P_TIME:
		if (parse_time_ns(val, &v))
			goto bad;
		break;
	case P_RATE:
		if (parse_rate_bps(val, &v))
			goto bad;
		break;
	case P_BYTES:
		if (parse_bytes(val, &v))
			goto bad;
		break;
	case P_U32:
		errno = 0;
		x = strtoul(val, &end, 10);
		if (errno || *end || end == val || x > 0xffffffffUL)
			goto bad;
		*(__u32 *)field = (__u32)x;
		return 0;
	default:                        /* P_MILLI */
		if (parse_number(val, &m, &u) || *u || m < 0 || m * 1e3 > (double)d->max)
			goto bad;
		*(__u32 *)field = (__u32)(m * 1000 + 0.5);
		return 0;
	}
	*(__u64 *)field = v;
	return 0;
bad:
	snprintf(err, errlen, "%s: '%s' is not %s", d->name, val,
		 d->kind == P_TIME ? "a time (e.g. 5ms, 100us, 1s)" :
		 d->kind == P_RATE ? "a rate (e.g. 100mbit, 10gbit)" :
		 d->kind == P_BYTES ? "a size in bytes (e.g. 1500, 64k)" :
		 d->kind == P_U32 ? "a whole number" : "a number in [0.001, 1000]");
	return -1;
}

/* Set one parameter from text. Returns 0, or -1 with a message in err. */
int param_set(struct params *p, const char *name, const char *val, char *err, size_t errlen)
{
	int i = param_index(name), rc;
	const struct param_def *d;

	if (i < 0) {
		snprintf(err, errlen, "unknown parameter '%s'", name);
		return -1;
	}
	d = &params_table[i];
	if (!val) {
		snprintf(err, errlen, "%s: missing value", d->name);
		return -1;
	}
	if (d->kind == P_ALGO)
		rc = parse_algo(val, &p->c.algo, err, errlen);
	else if (d->kind == P_FLAG || d->kind == P_ISOLATE || d->kind == P_CODEL_STATE)
		rc = parse_choice(d, p, val, err, errlen);
	else
		rc = parse_amount(d, val, (char *)p + d->off, err, errlen);
	if (rc)
		return rc;
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
			__u32 bit = param_flag_mask(d);

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
	unsigned i;

	if (!param_given(p, "algo"))
		c->algo = AFCD_ALGO_DEFAULT;
	afcd_config_defaults(&d, c->algo, c->rate_bps);
	c->abi = d.abi;
	for (i = 0; i < PARAMS_N; i++) {
		const struct param_def *pd = &params_table[i];
		__u32 mask;

		if ((p->set & (1ULL << i)) || (pd->pflags & PF_NODEF) || pd->kind == P_ALGO)
			continue;
		switch (pd->kind) {
		case P_FLAG: case P_CODEL_STATE: case P_ISOLATE:
			mask = param_flag_mask(pd);
			c->flags = (c->flags & ~mask) | (d.flags & mask);
			break;
		case P_TIME: case P_RATE: case P_BYTES:
			memcpy((char *)c + pd->off, (const char *)&d + pd->off, 8);
			break;
		default:
			memcpy((char *)c + pd->off, (const char *)&d + pd->off, 4);
			break;
		}
	}
	if (param_given(p, "limit") && c->rate_bps)
		c->horizon_ns = (__u64)((double)p->limit_bytes * 8e9 / (double)c->rate_bps);
	/* without a rate (backend qdisc), one MTU until the loader has the
	 * link's measured rate to derive it from (AFCD_F_SAMPLE_AUTO) */
	c->flags &= ~AFCD_F_SAMPLE_AUTO;
	if (!param_given(p, "sample_bytes")) {
		c->sample_bytes = afcd_default_sample_bytes(c);
		if (!c->rate_bps)
			c->flags |= AFCD_F_SAMPLE_AUTO;
	}
}

/* Check a complete parameter set: every number within its row's range,
 * then the rules between parameters. Returns 0, or -1 naming the problem. */
int params_validate(const struct params *p, char *err, size_t errlen)
{
	const struct afcd_config *c = &p->c;
	char v[32], lo[32], hi[32];
	unsigned i;

#define BAD(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)
	if (param_given(p, "limit") && param_given(p, "horizon"))
		BAD("give horizon or limit, not both");
	if (!c->rate_bps && !(c->flags & AFCD_F_QDISC))
		BAD("rate: must be given and above 0 (e.g. rate 100mbit)");
	if (!c->rate_bps && param_given(p, "limit"))
		BAD("limit: needs a rate (give horizon instead: the link's rate is not known "
		    "in advance)");
	if (c->algo >= AFCD_ALGO__MAX)
		BAD("algo: unknown");
	for (i = 0; i < PARAMS_N; i++) {
		const struct param_def *d = &params_table[i];
		__u64 x;

		if (!d->max || d->off >= offsetof(struct params, limit_bytes))
			continue;
		x = param_value(d, c);
		if ((x == 0 && (d->pflags & PF_ZERO_OK)) || (x >= d->min && x <= d->max))
			continue;
		param_format(d, x, v, sizeof(v));
		param_format(d, d->min, lo, sizeof(lo));
		param_format(d, d->max, hi, sizeof(hi));
		BAD("%s: %s is outside [%s, %s]", d->name, v, lo, hi);
	}
	if (c->target_ns >= c->interval_ns)
		BAD("target (%llu ns) must be below interval (%llu ns)",
		    (unsigned long long)c->target_ns, (unsigned long long)c->interval_ns);
	if (c->horizon_ns < c->target_ns)
		BAD("horizon (%llu ns) must be at least target (%llu ns)",
		    (unsigned long long)c->horizon_ns, (unsigned long long)c->target_ns);
	if (c->stale_after_ns < c->update_period_ns)
		BAD("stale_after must be at least update_period");
	if (c->alpha_milli >= c->beta_milli)
		BAD("alpha (%.3f) must be below beta (%.3f): the AFD controller's integral gain "
		    "beta - alpha must be positive", c->alpha_milli / 1e3, c->beta_milli / 1e3);
#undef BAD
	return 0;
}

struct params params_from_config(const struct afcd_config *c)
{
	struct params p = { .c = *c, .set = (1ULL << PARAMS_N) - 1 };

	p.set &= ~(1ULL << param_index("limit"));
	return p;
}
