/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * prom.h - the /metrics page (Prometheus text exposition format 0.0.4):
 * every counter of AFCD_STATS and AFCD_ASTATS (maps/afcd_maps.h) with its
 * family, label and help from that list, plus the gauges of the queue and
 * the estimates; every sample labelled dev="DEV". Served by
 * metrics_http.c (libmicrohttpd) from its own thread.
 */
#ifndef AFCD_PROM_H
#define AFCD_PROM_H

#include <stddef.h>

#include "snapshot.h"

/* Render DEV's state s into b (at most n bytes). Returns the length. */
size_t prom_render(char *b, size_t n, const char *dev, const struct snapshot *s);

/* What the metrics thread reads: the pins (descriptors shared with the
 * main thread, read-only there) once ready is set. */
struct prom_ctx {
	const char *dev;
	struct pins *p;
	__u32 ifindex;
	volatile int ready;
};

/* A metrics_render_fn for metrics_http_start(): a fresh snapshot of
 * ctx's interface, rendered; 0 (an empty page) before ready or when the
 * interface has no config. */
size_t prom_render_ctx(char *buf, size_t n, void *ctx);

#endif /* AFCD_PROM_H */
