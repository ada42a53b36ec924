// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The loader's Prometheus endpoint on libmicrohttpd; see metrics_http.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include "metrics_http.h"

struct metrics_http {
	struct MHD_Daemon *d;
	metrics_render_fn render;
	void *ctx;
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, const char *type,
			     const char *body, size_t len, const char *allow)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **state)
{
	static const char not_found[] = "not found: the metrics are at /metrics\n";
	static const char not_allowed[] = "method not allowed: GET or HEAD\n";
	struct metrics_http *m = cls;
	char *body;
	size_t len;
	enum MHD_Result ret;

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

struct metrics_http *metrics_http_start(const char *addr, int port, metrics_render_fn render,
					void *ctx, char *err, size_t errlen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct metrics_http *m;
	sigset_t block, old;
	int saved;

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
	/* the server's thread inherits this mask: SIGINT/SIGTERM stay the main
	 * thread's, whose sleep they interrupt */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	errno = 0;
	m->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, (uint16_t)port,
				NULL, NULL, handle, m,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_MAX_CONNS,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)METRICS_MAX_PER_IP,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_TIMEOUT_S,
				MHD_OPTION_END);
	saved = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	if (!m->d) {
		snprintf(err, errlen, "prometheus: cannot listen on %s:%d: %s", addr, port,
			 errno ? strerror(errno) : "libmicrohttpd refused");
		free(m);
		return NULL;
	}
	return m;
}

void metrics_http_stop(struct metrics_http *m)
{
	if (!m)
		return;
	MHD_stop_daemon(m->d);
	free(m);
}
