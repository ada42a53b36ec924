// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Times, rates and byte counts with units; see units.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "units.h"

/* The end of the decimal number at the start of s: digits, optionally a
 * point and digits, optionally an exponent (e, a sign, digits); s itself
 * when there is none. strtod() alone also reads signs, leading blanks,
 * hexadecimal ("0x10"), "inf" and "nan". */
static const char *decimal_end(const char *s)
{
	const char *p = s, *d;

	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '.') {
		d = ++p;
		while (*p >= '0' && *p <= '9')
			p++;
		if (p == d && d - 1 == s)
			return s;      /* "." alone */
	}
	if (p == s)
		return s;
	if (*p == 'e' || *p == 'E') {
		d = p + 1 + (p[1] == '+' || p[1] == '-');
		if (*d >= '0' && *d <= '9') {
			p = d;
			while (*p >= '0' && *p <= '9')
				p++;
		}
	}
	return p;
}

/* See units.h. */
int parse_number(const char *s, double *num, const char **suffix)
{
	const char *want = decimal_end(s);
	char *end;

	if (want == s)
		return -1;
	errno = 0;
	*num = strtod(s, &end);
	if (errno || end != want || !(*num >= 0) || *num > 1.8e19)
		return -1;
	*suffix = end;
	return 0;
}

int parse_time_ns(const char *s, __u64 *out)
{
	const char *u;
	double v, mul;

	if (parse_number(s, &v, &u))
		return -1;
	if (!*u)
		mul = v == 0 ? 1 : -1;
	else if (!strcasecmp(u, "ns"))
		mul = 1;
	else if (!strcasecmp(u, "us") || !strcasecmp(u, "usec"))
		mul = 1e3;
	else if (!strcasecmp(u, "ms") || !strcasecmp(u, "msec"))
		mul = 1e6;
	else if (!strcasecmp(u, "s") || !strcasecmp(u, "sec"))
		mul = 1e9;
	else
		return -1;
	if (mul < 0 || v * mul > 1.8e19)
		return -1;
	*out = (__u64)(v * mul + 0.5);
	return 0;
}

int parse_rate_bps(const char *s, __u64 *out)
{
	const char *u;
	double v, mul;

	if (parse_number(s, &v, &u))
		return -1;
	if (!*u || !strcasecmp(u, "bit") || !strcasecmp(u, "bps"))
		mul = 1;
	else if (!strcasecmp(u, "k") || !strcasecmp(u, "kbit"))
		mul = 1e3;
	else if (!strcasecmp(u, "m") || !strcasecmp(u, "mbit"))
		mul = 1e6;
	else if (!strcasecmp(u, "g") || !strcasecmp(u, "gbit"))
		mul = 1e9;
	else if (!strcasecmp(u, "t") || !strcasecmp(u, "tbit"))
		mul = 1e12;
	else
		return -1;
	if (v * mul > 1.8e19)
		return -1;
	*out = (__u64)(v * mul + 0.5);
	return 0;
}

int parse_bytes(const char *s, __u64 *out)
{
	const char *u;
	double v, mul;

	if (parse_number(s, &v, &u))
		return -1;
	if (!*u || !strcasecmp(u, "b"))
		mul = 1;
	else if (!strcasecmp(u, "k") || !strcasecmp(u, "kb"))
		mul = 1024;
	else if (!strcasecmp(u, "m") || !strcasecmp(u, "mb"))
		mul = 1024 * 1024;
	else
		return -1;
	if (v * mul > 1.8e19)
		return -1;
	*out = (__u64)(v * mul + 0.5);
	return 0;
}

