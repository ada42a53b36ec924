/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * opts.h - one table per command for its options (the xdp-tools
 * DEFINE_OPTION pattern): the parser and the usage text are generated
 * from it. Options are "--name [value]" (or "-x [value]"); the
 * operator's parameters (params.h) are "name value" or "--name value".
 */
#ifndef AFCD_OPTS_H
#define AFCD_OPTS_H

#include <stddef.h>
#include <stdio.h>

#include "params.h"

enum opt_kind {
	OPT_FLAG,     /* bool, no value */
	OPT_STR,      /* const char *, the argument itself */
	OPT_PORT,     /* int, a TCP port 1..65535 */
	OPT_INT_POS,  /* int, >= 1 */
	OPT_SECONDS,  /* double, seconds, [0, 60] (a plain number) */
	OPT_TIME,     /* __u64 ns, a time with units ("10s"), > 0 */
	OPT_TIME_S,   /* double seconds from a time with units ("30s"), > 0 */
	OPT_CHOICE,   /* int, the index of the value in choices[] */
	OPT_VERBOSE,  /* sets log_level to LOG_DEBUG (no field) */
	OPT_QUIET,    /* sets log_level to LOG_WARN (no field) */
};

struct opt_def {
	const char *name;   /* long name, without "--" */
	char short_name;    /* 0: none */
	enum opt_kind kind;
	size_t off;         /* offset of the field in the command's options struct */
	const char *arg;    /* the value's name in the usage, NULL for flags */
	const char *help;
	const char *const *choices;  /* OPT_CHOICE: the values, NULL-terminated */
};

/* Parse argv[first..argc) into opts (per table t, ended by a NULL name)
 * and, when p is not NULL, parameters into p. When dev is not NULL, the
 * first word that is neither goes there (a second one is an error).
 * Returns 0, or -1 with one line printed naming the bad argument. */
int opts_parse(int argc, char **argv, int first, const struct opt_def *t, void *opts,
	       struct params *p, const char **dev);

/* The options of table t, one per line, for a usage text. */
void opts_usage(FILE *f, const struct opt_def *t);

#endif /* AFCD_OPTS_H */
