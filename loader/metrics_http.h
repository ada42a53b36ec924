/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The loader's Prometheus endpoint: GNU libmicrohttpd serving GET/HEAD
 * /metrics from its own thread, so a slow or hostile client never delays
 * the loader's scans (issue 11.2). Everything else is answered 404 (other
 * paths) or 405 (other methods); connections are bounded in number, per
 * client address and in time.
 */
#ifndef AFCD_METRICS_HTTP_H
#define AFCD_METRICS_HTTP_H

#include <stddef.h>

/* Bounds (documented in README "Prometheus"). */
#define METRICS_MAX_CONNS       16  /* open connections in all */
#define METRICS_MAX_PER_IP       4  /* open connections from one address */
#define METRICS_TIMEOUT_S        2  /* an idle connection is closed after it, s */
#define METRICS_BODY_MAX     16384  /* the rendered exposition, bytes */

/* Render the exposition text into buf (at most n bytes, NUL-terminated) and
 * return its length, or 0 when there is nothing to show. Called from the
 * server's thread: it may only read state that is safe to read there (the
 * pinned maps). */
typedef size_t (*metrics_render_fn)(char *buf, size_t n, void *ctx);

struct metrics_http;

/* Listen on addr:port (IPv4 dotted quad, TCP port 1..65535) and serve
 * render()'s text at /metrics. NULL with one line in err on failure (a bad
 * address, the port in use). */
struct metrics_http *metrics_http_start(const char *addr, int port, metrics_render_fn render,
					void *ctx, char *err, size_t errlen);

/* Stop the thread and close every connection; NULL is ignored. */
void metrics_http_stop(struct metrics_http *m);

#endif
