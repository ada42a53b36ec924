/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * params.h/params.c - the operator's parameters: names, units, parsing, defaults
 * and validation (ALGORITHM.md sec. 3-6; Tables 3.1 and 4.1). Used by the
 * loader for command-line flags, config files and live changes.
 *
 * Units accepted:
 *   time:  ns, us, ms, s          ("5ms", "1.5s"; a bare 0 is allowed)
 *   rate:  bit, kbit, mbit, gbit, tbit, or k/m/g/t suffixes, bits/s
 *   bytes: plain, or k/m (x1024) suffixes
 */
#ifndef AFCD_PARAMS_H
#define AFCD_PARAMS_H

#include <stddef.h>
#include <linux/types.h>

#include "afcd_maps.h"
#include "units.h"

enum param_kind { P_ALGO, P_TIME, P_RATE, P_BYTES, P_U32, P_FLAG, P_CODEL_STATE, P_MILLI,
		  P_ISOLATE };

/* A parameter value set by the operator, before derivation. limit_bytes
 * is an alternative to horizon (converted with the rate). */
struct params {
	struct afcd_config c;
	__u64 limit_bytes;
	__u64 set;          /* bit i: params_table[i] was given */
};

struct param_def {
	const char *name;
	enum param_kind kind;
	size_t off;         /* offset in struct params */
	const char *field;  /* its field there: the key in `afcd stats -j` (numbers) */
	const char *help;   /* what it is; the default and range are added from the row */
	__u32 bit;          /* P_FLAG: the bit of struct afcd_config.flags */
	__u64 min, max;     /* a number's accepted range in its unit (ns, bit/s, bytes,
			     * a count, thousandths for P_MILLI); max 0: unchecked */
	__u32 pflags;       /* PF_* */
};

/* params_table[].pflags */
#define PF_NODEF   0x1      /* no default of its own: required, derived or an alternative */
#define PF_ZERO_OK 0x2      /* 0 is accepted outside [min, max] (rate: the link's own) */

/* The parameter table, in the order of `afcd params`. */
#define PARAMS_N 24
extern const struct param_def params_table[PARAMS_N];

/* codel_state: the name of flags' AFCD_F_CODEL_STATE bits (AFCD_CODEL_STATES),
 * and the bits of a name (-1: not one of them; per_flow is per-flow). */
const char *codel_state_name(__u32 flags);
int codel_state_bits(const char *name, __u32 *bits);
/* isolate: the name of the key the fair share is computed on. */
const char *isolate_name(__u32 flags);

/* A parameter's help as `afcd params` and the manual show it: its text,
 * then "(default V; ALGO V2 ...)" from afcd_config_defaults() for the
 * default algo and each algo whose default differs (the AFCD_ALGOS rows),
 * then its range "[MIN, MAX]"; for algo the algos' list. */
void param_help(const struct param_def *d, char *buf, size_t n);

/* A value of a parameter in the text it is given as: 5ms, 100mbit, 1514,
 * 1.7, on, queue, afcd. v: the value as stored (flags for the switches
 * and choices). */
void param_format(const struct param_def *d, __u64 v, char *buf, size_t n);

/* The value of d in config c as param_format() takes it. */
__u64 param_value(const struct param_def *d, const struct afcd_config *c);

/* Every parameter as `afcd params -j` prints it: name, kind, unit, help,
 * default and per-algo defaults (as given on the command line), min and
 * max. Returns a new json-c object. */
struct json_object;
struct json_object *params_table_json(void);

/* Index of a parameter in params_table ("ce-threshold" finds
 * ce_threshold), or -1. */
int param_index(const char *name);

/* Set one parameter from text. Returns 0, or -1 with a message in err. */
int param_set(struct params *p, const char *name, const char *val, char *err, size_t errlen);

/* Was the parameter `name` given (set in p->set)? 1 or 0. */
int param_given(const struct params *p, const char *name);

/* Overlay the parameters given in `top` onto `base` (both complete). */
void params_overlay(struct params *base, const struct params *top);

/* Fill what was not given with the defaults of the chosen algo, then
 * derive horizon from limit and sample_bytes from rate, window, sb_size. */
void params_complete(struct params *p);

/* Check a complete parameter set. Returns 0, or -1 naming the problem. */
int params_validate(const struct params *p, char *err, size_t errlen);

/* Read "name value" or "name = value" lines of a config file ('#'
 * starts a comment; at most PARAMS_LINE_MAX characters a line, at most
 * PARAMS_FILE_MAX bytes in all, so that /dev/zero or a runaway file is
 * refused, not read until memory runs out). Returns 0, or -1 with the
 * file, line and problem in err (a read error too). */
#define PARAMS_LINE_MAX 511
#define PARAMS_FILE_MAX (64 * 1024)
int params_load_file(struct params *p, const char *path, char *err, size_t errlen);

/* Every parameter of a written config as given (limit excepted: the
 * horizon stands for it), to overlay a live change on. */
struct params params_from_config(const struct afcd_config *c);

/* The config as `afcd stats -j` prints it, generated from params_table:
 * numbers under their field's name with its unit (rate_bps, target_ns,
 * sample_bytes, ...), switches and choices under the parameter's name
 * (algo, ecn, police, codel_state, isolate) and alpha/beta as fractions.
 * Returns a new json-c object (struct json_object *). */
struct json_object *params_to_json(const struct afcd_config *c);

#endif /* AFCD_PARAMS_H */
