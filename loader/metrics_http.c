// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The loader's Prometheus endpoint on libmicrohttpd; see metrics_http.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <microhttpd.h>

#include "metrics_http.h"

/* One client connection, from its start (MHD_CONNECTION_NOTIFY_STARTED)
 * to its end (_CLOSED). */
struct conn {
	bool used;
	bool evicted;            /* shut down by us; MHD closes it at its next poll */
	bool spoke;              /* a request line has arrived on it (MHD's URI log) */
	int fd;
	struct in_addr addr;     /* the client's address */
	uint64_t since_ns;       /* start of the request in progress: the connection's
				  * start, or the end of its last answer */
};

struct metrics_http {
	struct MHD_Daemon *d;
	pthread_t thread;
	int stop;                /* set by metrics_http_stop(), read by the thread */
	metrics_render_fn render;
	void *ctx;
	struct conn conns[METRICS_TRACKED];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Close a connection whose request is late or that makes room: shutdown(2)
 * wakes MHD, which sees the end of the stream and closes it. */
static void evict(struct conn *k)
{
	shutdown(k->fd, SHUT_RDWR);
	k->evicted = true;
}

/* May connection k be closed for a bound at now: past METRICS_GRACE_MS,
 * or past METRICS_SILENT_MS without a request line (a connection held
 * open in silence, as in a connect burst, whose members would otherwise
 * fill the table for the whole grace while a scraper waits behind them in
 * the listen queue)? */
static bool closable(const struct conn *k, uint64_t now)
{
	return now - k->since_ns >= METRICS_GRACE_MS * 1000000ULL ||
	       (!k->spoke && now - k->since_ns >= METRICS_SILENT_MS * 1000000ULL);
}

/* Of the live connections from addr (any address when addr is NULL): how
 * many there are, in *n, and the oldest closable() one at now, or NULL. */
static struct conn *oldest(struct metrics_http *m, const struct in_addr *addr, uint64_t now,
			   unsigned *n)
{
	struct conn *o = NULL;
	unsigned i;

	*n = 0;
	for (i = 0; i < METRICS_TRACKED; i++) {
		struct conn *k = &m->conns[i];

		if (!k->used || k->evicted || (addr && k->addr.s_addr != addr->s_addr))
			continue;
		(*n)++;
		if (!closable(k, now))
			continue;
		if (!o || k->since_ns < o->since_ns)
			o = k;
	}
	return o;
}

/* Close the oldest connections past the grace until at most max are open
 * from addr (from all when addr is NULL), or none past the grace is left. */
static void bound(struct metrics_http *m, const struct in_addr *addr, unsigned max,
		  uint64_t now)
{
	struct conn *o;
	unsigned n;

	while ((o = oldest(m, addr, now, &n)) && n > max)
		evict(o);
}

/* Connection bookkeeping (MHD's thread, which is ours: no lock). A new
 * connection over a bound closes the oldest one of its address
 * (METRICS_MAX_PER_IP) or of all (METRICS_MAX_CONNS) past the grace, never
 * itself nor one that may not have been read yet: a client that holds
 * connections open cannot keep a new one out, and a scraper's request,
 * read within the grace, completes in milliseconds. */
static void notify(void *cls, struct MHD_Connection *c, void **socket_context,
		   enum MHD_ConnectionNotificationCode code)
{
	struct metrics_http *m = cls;
	const union MHD_ConnectionInfo *fi, *ai;
	struct conn *k = *socket_context;
	uint64_t now;
	unsigned i;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (k)
			memset(k, 0, sizeof(*k));
		*socket_context = NULL;
		return;
	}
	fi = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	ai = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	for (i = 0; i < METRICS_TRACKED && m->conns[i].used; i++)
		;
	if (i == METRICS_TRACKED || !fi) {   /* cannot happen: MHD's limit is the table's */
		if (fi)
			shutdown(fi->connect_fd, SHUT_RDWR);
		return;
	}
	now = mono_ns();
	k = &m->conns[i];
	*k = (struct conn){ .used = true, .fd = fi->connect_fd, .since_ns = now };
	if (ai && ai->client_addr && ai->client_addr->sa_family == AF_INET)
		k->addr = ((const struct sockaddr_in *)ai->client_addr)->sin_addr;
	*socket_context = k;
	bound(m, &k->addr, METRICS_MAX_PER_IP, now);
	bound(m, NULL, METRICS_MAX_CONNS, now);
}

/* MHD's URI log callback, called when a request line has arrived: the
 * connection is no longer silent. */
static void *spoke(void *cls, const char *uri, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	if (ci && ci->socket_context)
		((struct conn *)ci->socket_context)->spoke = true;
	return NULL;
}

/* Close every connection whose request has taken longer than
 * METRICS_REQUEST_S (a client trickling its request, or idle after an
 * answer): MHD's own timeout restarts at every byte received. Then apply
 * the bounds to the connections that have come past the grace since. */
static void reap(struct metrics_http *m)
{
	uint64_t now = mono_ns();
	unsigned i;

	for (i = 0; i < METRICS_TRACKED; i++) {
		struct conn *k = &m->conns[i];

		if (k->used && !k->evicted && now - k->since_ns > METRICS_REQUEST_S * 1000000000ULL)
			evict(k);
	}
	for (i = 0; i < METRICS_TRACKED; i++)
		if (m->conns[i].used && !m->conns[i].evicted)
			bound(m, &m->conns[i].addr, METRICS_MAX_PER_IP, now);
	bound(m, NULL, METRICS_MAX_CONNS, now);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, const char *type,
			     const char *body, size_t len, const char *allow)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	const union MHD_ConnectionInfo *ci;
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	/* the next request on this connection has its own deadline */
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (ci && ci->socket_context)
		((struct conn *)ci->socket_context)->since_ns = mono_ns();
	return ret;
}

/* The access handler: MHD calls it once with the headers (*state NULL),
 * then once more when the request, body included, is complete; answering
 * in the second call keeps the connection alive for the next request
 * (answering in the first made MHD close it after every answer, so of
 * pipelined requests only the first was answered). */
static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **state)
{
	static const char not_found[] = "not found: the metrics are at /metrics\n";
	static const char not_allowed[] = "method not allowed: GET or HEAD\n";
	static int headers_seen;
	struct metrics_http *m = cls;
	char *body;
	size_t len;
	enum MHD_Result ret;

	if (!*state) {
		*state = &headers_seen;
		return MHD_YES;
	}
	if (*upload_size) {            /* a body we do not want: read and ignore it */
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", not_allowed,
			     sizeof(not_allowed) - 1, "GET, HEAD");
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", not_found,
			     sizeof(not_found) - 1, NULL);
	body = malloc(METRICS_BODY_MAX);
	if (!body)
		return MHD_NO;
	len = m->render(body, METRICS_BODY_MAX, m->ctx);
	ret = reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4", body, len, NULL);
	free(body);
	return ret;
}

/* The server's thread: MHD's work, and the deadline every 100 ms. */
static void *serve(void *arg)
{
	struct metrics_http *m = arg;

	while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
		MHD_run_wait(m->d, 100);
		reap(m);
	}
	return NULL;
}

struct metrics_http *metrics_http_start(const char *addr, int port, metrics_render_fn render,
					void *ctx, char *err, size_t errlen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct metrics_http *m;
	sigset_t block, old;
	int saved, terr;

	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		snprintf(err, errlen, "prometheus-addr '%s' is not an IPv4 address", addr);
		return NULL;
	}
	if (port < 1 || port > 65535) {
		snprintf(err, errlen, "prometheus: %d is not a TCP port", port);
		return NULL;
	}
	sa.sin_port = htons((unsigned short)port);
	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "prometheus: out of memory");
		return NULL;
	}
	m->render = render;
	m->ctx = ctx;
	errno = 0;
	m->d = MHD_start_daemon(MHD_USE_EPOLL, (uint16_t)port, NULL, NULL, handle, m,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_TRACKED,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_TIMEOUT_S,
				MHD_OPTION_NOTIFY_CONNECTION, notify, m,
				MHD_OPTION_URI_LOG_CALLBACK, spoke, m,
				MHD_OPTION_END);
	if (!m->d) {
		snprintf(err, errlen, "prometheus: cannot listen on %s:%d: %s", addr, port,
			 errno ? strerror(errno) : "libmicrohttpd refused");
		free(m);
		return NULL;
	}
	/* the server's thread inherits this mask: SIGINT/SIGTERM stay the main
	 * thread's, whose sleep they interrupt */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	terr = pthread_create(&m->thread, NULL, serve, m);
	saved = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	if (terr) {
		snprintf(err, errlen, "prometheus: cannot start its thread: %s", strerror(terr));
		MHD_stop_daemon(m->d);
		free(m);
		return NULL;
	}
	return m;
}

void metrics_http_stop(struct metrics_http *m)
{
	if (!m)
		return;
	__atomic_store_n(&m->stop, 1, __ATOMIC_RELEASE);
	pthread_join(m->thread, NULL);
	MHD_stop_daemon(m->d);
	free(m);
}
