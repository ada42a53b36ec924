/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * log.h - the loader's messages, all on stderr, each one line prefixed
 * with "afcd: ", by level (the xdp-tools logging.h pattern):
 *   pr_warn   an error or a refusal: the caller returns non-zero after it;
 *             always printed
 *   pr_info   what the loader did: not under -q (--quiet)
 *   pr_debug  only with -v (--verbose), which also lets libbpf's INFO through
 */
#ifndef AFCD_LOG_H
#define AFCD_LOG_H

#include <stdarg.h>

enum log_level {
	LOG_WARN,     /* -q */
	LOG_INFO,     /* the default */
	LOG_DEBUG,    /* -v */
};
extern enum log_level log_level;

void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* libbpf's print callback: warnings always, INFO with -v, DEBUG never. */
void log_libbpf_setup(void);

#endif /* AFCD_LOG_H */
