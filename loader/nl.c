// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* rtnetlink requests and replies with libmnl, for tc.c and qdisc.c; see nl.h. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <libmnl/libmnl.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "nl.h"

/* Attribute table of one nest level: tb[type] for type <= max. */
struct attrs { const struct nlattr **tb; unsigned max; };

static int attr_cb(const struct nlattr *a, void *data)
{
	struct attrs *t = data;
	unsigned type = mnl_attr_get_type(a);

	if (type <= t->max)
		t->tb[type] = a;
	return MNL_CB_OK;
}

void parse_tca(const struct nlmsghdr *nlh, const struct nlattr **tb)
{
	struct attrs t = { tb, TCA_MAX };

	memset(tb, 0, sizeof(*tb) * (TCA_MAX + 1));
	mnl_attr_parse(nlh, sizeof(struct tcmsg), attr_cb, &t);
}

void parse_nested(const struct nlattr *nest, const struct nlattr **tb, unsigned max)
{
	struct attrs t = { tb, max };

	memset(tb, 0, sizeof(*tb) * (max + 1));
	mnl_attr_parse_nested(nest, attr_cb, &t);
}

/* A tc request: header, struct tcmsg for ifindex and parent. */
struct nlmsghdr *tc_request(char *buf, __u16 type, __u16 flags, __u32 ifindex,
				   __u32 parent)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *t;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	t = mnl_nlmsg_put_extra_header(nlh, sizeof(*t));
	t->tcm_family = AF_UNSPEC;
	t->tcm_ifindex = (int)ifindex;
	t->tcm_parent = parent;
	return nlh;
}

/* Send one request and run cb on every answer (a dump's messages, or the
 * ack). 0, or -errno (the kernel's error for a request that failed). */
int nl_talk(struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	static char buf[65536];
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
	unsigned portid, seq;
	int ret, err = 0;

	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	nlh->nlmsg_seq = seq = (unsigned)time(NULL);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		err = -errno;
		goto out;
	}
	while ((ret = (int)mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		ret = mnl_cb_run(buf, (size_t)ret, seq, portid, cb, data);
		if (ret <= MNL_CB_STOP)
			break;
	}
	if (ret < 0)
		err = errno ? -errno : -EIO;
out:
	mnl_socket_close(nl);
	return err;
}
