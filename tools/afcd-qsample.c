// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * afcd-qsample DEV PERIOD_MS DURATION_S - the testbed's queue sampler: the
 * backlog of DEV's root qdisc (bytes and packets, TCA_STATS2 /
 * TCA_STATS_QUEUE over rtnetlink with libmnl) every PERIOD_MS for
 * DURATION_S seconds (or until SIGTERM), one line each on stdout:
 *
 *   T_NS BACKLOG_BYTES QLEN        (T_NS: CLOCK_REALTIME, ns)
 *
 * The root qdisc holds every queued packet whatever the scheme (sch_fq
 * under afcd, HTB above the kernel's AQMs, cake), so its backlog is the
 * one queueing-delay measure valid for all (testbed/qsample.py). A native
 * sampler because under TCG one Python rtnetlink dump a tenth of a second
 * kept a third of a vCPU busy, and a `tc` spawned as often half of one.
 * One socket for the whole run; nothing but the dump per sample.
 */
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <libmnl/libmnl.h>
#include <linux/gen_stats.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

struct sample {
	int ifindex, found;
	unsigned long long backlog, qlen;
};

static int stats_cb(const struct nlattr *a, void *data)
{
	struct sample *s = data;

	if (mnl_attr_get_type(a) == TCA_STATS_QUEUE &&
	    mnl_attr_get_payload_len(a) >= sizeof(struct gnet_stats_queue)) {
		const struct gnet_stats_queue *q = mnl_attr_get_payload(a);

		s->backlog = q->backlog;
		s->qlen = q->qlen;
		s->found = 1;
	}
	return MNL_CB_OK;
}

static int attr_cb(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) == TCA_STATS2)
		mnl_attr_parse_nested(a, stats_cb, data);
	return MNL_CB_OK;
}

/* One qdisc of the dump: the root of our device only. */
static int qdisc_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct tcmsg *t = mnl_nlmsg_get_payload(nlh);
	struct sample *s = data;

	if (t->tcm_ifindex != s->ifindex || t->tcm_parent != TC_H_ROOT || s->found)
		return MNL_CB_OK;
	return mnl_attr_parse(nlh, sizeof(*t), attr_cb, data);
}

/* Dump the device's qdiscs and fill s: 0, or -1. */
static int sample_once(struct mnl_socket *nl, unsigned portid, unsigned seq, struct sample *s)
{
	static char buf[65536];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *t;
	int ret;

	nlh->nlmsg_type = RTM_GETQDISC;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	t = mnl_nlmsg_put_extra_header(nlh, sizeof(*t));
	t->tcm_family = AF_UNSPEC;
	t->tcm_ifindex = s->ifindex;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	s->found = 0;
	while ((ret = (int)mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		ret = mnl_cb_run(buf, (size_t)ret, seq, portid, qdisc_cb, s);
		if (ret <= MNL_CB_STOP)
			break;
	}
	return ret < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct mnl_socket *nl;
	struct sample s = {0};
	struct timespec now, next;
	double period_ms, duration_s;
	unsigned portid, seq = 1;
	long long end_ns;

	if (argc != 4 || !(s.ifindex = (int)if_nametoindex(argv[1])) ||
	    (period_ms = atof(argv[2])) <= 0 || (duration_s = atof(argv[3])) <= 0) {
		fprintf(stderr, "usage: afcd-qsample DEV PERIOD_MS DURATION_S (DEV must exist)\n");
		return 2;
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		fprintf(stderr, "afcd-qsample: rtnetlink: %s\n", strerror(errno));
		return 1;
	}
	portid = mnl_socket_get_portid(nl);
	clock_gettime(CLOCK_MONOTONIC, &next);
	end_ns = next.tv_sec * 1000000000LL + next.tv_nsec + (long long)(duration_s * 1e9);
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (!stop) {
		if (!sample_once(nl, portid, seq++, &s) && s.found) {
			clock_gettime(CLOCK_REALTIME, &now);
			printf("%lld %llu %llu\n", now.tv_sec * 1000000000LL + now.tv_nsec, s.backlog,
			       s.qlen);
		}
		next.tv_nsec += (long)(period_ms * 1e6);
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		if (next.tv_sec * 1000000000LL + next.tv_nsec >= end_ns)
			break;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	mnl_socket_close(nl);
	return 0;
}
