/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * units.h - the operator's numbers with units, as every parameter and
 * option takes them:
 *   time:  ns, us, ms, s          ("5ms", "1.5s"; a bare 0 is allowed)
 *   rate:  bit, kbit, mbit, gbit, tbit, or k/m/g/t suffixes, bits/s
 *   bytes: plain, or k/m (x1024) suffixes
 * Each returns 0, or -1 (malformed, negative, NaN, infinite, overflow).
 */
#ifndef AFCD_UNITS_H
#define AFCD_UNITS_H

#include <linux/types.h>

/* A decimal number (digits, an optional fraction and exponent: "10",
 * "1.5", "2e3"; no sign, blank, hexadecimal, inf or nan) and where its
 * suffix starts, in *suffix. 0, or -1. */
int parse_number(const char *s, double *num, const char **suffix);

int parse_time_ns(const char *s, __u64 *out);
int parse_rate_bps(const char *s, __u64 *out);
int parse_bytes(const char *s, __u64 *out);

#endif /* AFCD_UNITS_H */
