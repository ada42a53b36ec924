// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Option tables: parser and usage; see opts.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "opts.h"

static const struct opt_def *opt_find(const struct opt_def *t, const char *a)
{
	for (; t && t->name; t++) {
		if (a[0] == '-' && a[1] == '-' && !strcmp(a + 2, t->name))
			return t;
		if (a[0] == '-' && t->short_name && a[1] == t->short_name && !a[2])
			return t;
	}
	return NULL;
}

/* An OPT_CHOICE: the index of val among d->choices into *field, or -1
 * with one line naming them. */
static int opt_choice(const struct opt_def *d, const char *val, int *field)
{
	char list[128] = "";
	size_t n = 0;

	for (int i = 0; d->choices[i]; i++) {
		if (!strcmp(val, d->choices[i])) {
			*field = i;
			return 0;
		}
	}
	for (int i = 0; d->choices[i] && n < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s",
				      i ? (d->choices[i + 1] ? ", " : " or ") : "", d->choices[i]);
	pr_warn("--%s: '%s' is not %s", d->name, val, list);
	return -1;
}

/* Store the value of option d (its text in val) into opts. */
static int opt_store(const struct opt_def *d, const char *val, void *opts)
{
	char *field = (char *)opts + d->off, *end;
	__u64 ns;

	switch (d->kind) {
	case OPT_FLAG:
		*(bool *)field = true;
		return 0;
	case OPT_VERBOSE:
		log_level = LOG_DEBUG;
		return 0;
	case OPT_QUIET:
		log_level = LOG_WARN;
		return 0;
	case OPT_STR:
		*(const char **)field = val;
		return 0;
	case OPT_PORT: {
		long v = strtol(val, &end, 10);

		if (*end || end == val || v < 1 || v > 65535)
			break;
		*(int *)field = (int)v;
		return 0;
	}
	case OPT_INT_POS: {
		long v = strtol(val, &end, 10);

		if (*end || end == val || v < 1 || v > 1000000000L)
			break;
		*(int *)field = (int)v;
		return 0;
	}
	case OPT_SECONDS: {
		double v = strtod(val, &end);

		if (*end || end == val || !(v >= 0 && v <= 60))
			break;
		*(double *)field = v;
		return 0;
	}
	case OPT_TIME:
	case OPT_TIME_S:
		if (parse_time_ns(val, &ns) || !ns)
			break;
		if (d->kind == OPT_TIME)
			*(__u64 *)field = ns;
		else
			*(double *)field = (double)ns / 1e9;
		return 0;
	case OPT_CHOICE:
		return opt_choice(d, val, (int *)field);
	}
	{
		static const char *const want[] = {
			[OPT_PORT] = "a TCP port (1..65535)",
			[OPT_INT_POS] = "an integer >= 1",
			[OPT_SECONDS] = "a number of seconds in [0, 60]",
			[OPT_TIME] = "a time above 0 (10s, 500ms)",
			[OPT_TIME_S] = "a time above 0 (10s, 500ms)",
		};

		pr_warn("--%s: '%s' is not %s", d->name, val, want[d->kind]);
	}
	return -1;
}

int opts_parse(int argc, char **argv, int first, const struct opt_def *t, void *opts,
	       struct params *p, const char **dev)
{
	char err[256];
	int i;

	for (i = first; i < argc; i++) {
		const char *a = argv[i];
		const struct opt_def *d = opt_find(t, a);

		if (d) {
			bool has_arg = d->kind != OPT_FLAG && d->kind != OPT_VERBOSE &&
				       d->kind != OPT_QUIET;

			if (has_arg && i + 1 >= argc) {
				pr_warn("%s: missing value (%s)", a, d->arg);
				return -1;
			}
			if (opt_store(d, has_arg ? argv[i + 1] : NULL, opts))
				return -1;
			i += has_arg;
			continue;
		}
		if (p) {
			const char *name = a[0] == '-' && a[1] == '-' ? a + 2 : a;

			if (param_index(name) < 0) {
				pr_warn("unknown parameter or option '%s' (see 'afcd params')", a);
				return -1;
			}
			if (param_set(p, name, i + 1 < argc ? argv[i + 1] : NULL, err, sizeof(err))) {
				pr_warn("%s", err);
				return -1;
			}
			i++;
			continue;
		}
		if (dev && !*dev && a[0] != '-') {
			*dev = a;
			continue;
		}
		pr_warn("unknown option or argument '%s'", a);
		return -1;
	}
	return 0;
}

void opts_usage(FILE *f, const struct opt_def *t)
{
	for (; t && t->name; t++) {
		char left[64];

		if (t->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", t->short_name, t->name,
				 t->arg ? " " : "", t->arg ? t->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", t->name, t->arg ? " " : "",
				 t->arg ? t->arg : "");
		fprintf(f, "  %-26s %s\n", left, t->help);
	}
}
