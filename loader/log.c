// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The loader's messages; see log.h. */
#include <stdio.h>
#include <bpf/libbpf.h>

#include "log.h"

enum log_level log_level = LOG_INFO;

static void pr_line(const char *fmt, va_list ap)
{
	fputs("afcd: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pr_line(fmt, ap);
	va_end(ap);
}

void pr_info(const char *fmt, ...)
{
	va_list ap;

	if (log_level < LOG_INFO)
		return;
	va_start(ap, fmt);
	pr_line(fmt, ap);
	va_end(ap);
}

void pr_debug(const char *fmt, ...)
{
	va_list ap;

	if (log_level < LOG_DEBUG)
		return;
	va_start(ap, fmt);
	pr_line(fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level l, const char *f, va_list a)
{
	if (l == LIBBPF_DEBUG || (l == LIBBPF_INFO && log_level < LOG_DEBUG))
		return 0;
	return vfprintf(stderr, f, a);
}

void log_libbpf_setup(void)
{
	libbpf_set_print(libbpf_print);
}
