/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The loader's Prometheus endpoint: GNU libmicrohttpd serving GET/HEAD
 * /metrics from its own thread, so a slow or hostile client never delays
 * the loader's scans. Everything else is answered 404 (other paths) or 405
 * (other methods). HTTP/1.1 keep-alive, pipelined requests answered in
 * order (RFC 9112 sec. 9.3.2). Connections are bounded in number and per
 * client address: over a bound, the oldest connection older than
 * METRICS_GRACE_MS is closed, never a younger one, so connections held
 * open cannot keep a scraper out and a burst of new ones cannot close a
 * scraper's before its request is read (a bound is exceeded for at most
 * the grace; METRICS_TRACKED is the hard limit). A connection on which no
 * request line has come for METRICS_SILENT_MS has no grace: a burst of
 * silent connects is closed as fast as it is accepted, and a scraper's,
 * queued behind it, finds room. In time: each request
 * must arrive whole within METRICS_REQUEST_S of the connection's start or
 * of the previous answer, however slowly it trickles in.
 */
#ifndef AFCD_METRICS_HTTP_H
#define AFCD_METRICS_HTTP_H

#include <stddef.h>

/* Bounds (documented in docs/OPERATING.md, "With the loader"). */
#define METRICS_MAX_CONNS       16  /* open connections in all (the oldest goes first) */
#define METRICS_MAX_PER_IP       4  /* open connections from one address (ditto) */
#define METRICS_GRACE_MS       500  /* a connection this young is never closed for a bound, ms */
#define METRICS_SILENT_MS       20  /* ... unless no request line came on it for this long, ms */
#define METRICS_TRACKED        256  /* libmicrohttpd's own limit: refused beyond it */
#define METRICS_TIMEOUT_S        2  /* no byte for this long closes a connection, s */
#define METRICS_REQUEST_S        2  /* a request must be whole within this, s */
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
