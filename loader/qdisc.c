// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The root qdisc: the sch_fq that enforces skb->tstamp and the qdisc
 * backend's afcd (root, or the leaves of mq); see tc.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <bpf/libbpf_version.h>

#include "log.h"
#include "sys.h"
#include "tc.h"
#include "nl.h"

/* ---- sch_fq ------------------------------------------------------------------ */

struct fq_need fq_requirements(const struct afcd_config *c)
{
	struct fq_need n;
	double pkts = (double)c->rate_bps / 8.0 * ((double)c->horizon_ns / 1e9) / 64.0;
	__u64 hz = c->horizon_ns / 1000 * 2;

	n.limit = pkts < 10000 ? 10000 : pkts > 1000000 ? 1000000 : (__u32)pkts;
	n.flow_limit = n.limit;        /* one flow may hold the whole queue */
	n.horizon_us = hz < 10000000ULL ? 10000000U : hz > 0xffffffffULL ? 0xffffffffU : (__u32)hz;
	return n;
}

/* The qdiscs of one interface, from a dump. */
#define FQ_SCAN_MAX 256
struct fq_scan {
	__u32 ifindex;
	struct fq_need need;
	int n;
	struct qd { __u32 handle, parent; bool fq, big_enough; char kind[16]; } q[FQ_SCAN_MAX];
};

static int qdisc_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[TCA_MAX + 1], *ob[TCA_FQ_MAX + 1];
	const struct tcmsg *t = mnl_nlmsg_get_payload(nlh);
	struct fq_scan *s = data;
	struct qd *q;

	if ((__u32)t->tcm_ifindex != s->ifindex || s->n >= FQ_SCAN_MAX)
		return MNL_CB_OK;
	parse_tca(nlh, tb);
	q = &s->q[s->n++];
	memset(q, 0, sizeof(*q));
	q->handle = t->tcm_handle;
	q->parent = t->tcm_parent;
	if (tb[TCA_KIND])
		snprintf(q->kind, sizeof(q->kind), "%s", mnl_attr_get_str(tb[TCA_KIND]));
	q->fq = !strcmp(q->kind, "fq");
	if (q->fq && tb[TCA_OPTIONS]) {
		parse_nested(tb[TCA_OPTIONS], ob, TCA_FQ_MAX);
		q->big_enough =
			ob[TCA_FQ_PLIMIT] && mnl_attr_get_u32(ob[TCA_FQ_PLIMIT]) >= s->need.limit &&
			ob[TCA_FQ_FLOW_PLIMIT] &&
			mnl_attr_get_u32(ob[TCA_FQ_FLOW_PLIMIT]) >= s->need.flow_limit &&
			/* no horizon before Linux 5.7: nothing drops there */
			(!ob[TCA_FQ_HORIZON] ||
			 mnl_attr_get_u32(ob[TCA_FQ_HORIZON]) >= s->need.horizon_us / 2);
	}
	return MNL_CB_OK;
}

/* Every qdisc of s->ifindex into s. 0 or -errno. */
static int qdisc_dump(struct fq_scan *s)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];

	return nl_talk(tc_request(buf, RTM_GETQDISC, NLM_F_DUMP, s->ifindex, 0), qdisc_cb, s);
}

bool tc_has_clsact(__u32 ifindex)
{
	static struct fq_scan s;

	memset(&s, 0, sizeof(s));
	s.ifindex = ifindex;
	if (qdisc_dump(&s))
		return true;            /* unknown: let the delete tell */
	for (int i = 0; i < s.n; i++)
		if (!strcmp(s.q[i].kind, "clsact"))
			return true;
	return false;
}

/* 1 when the root is a big enough fq, or mq with one on every queue; 0
 * when fq is there but too small; -1 when it is not fq at all. */
static int fq_verdict(const struct fq_scan *s, const char **root_kind)
{
	const struct qd *root = NULL;
	int i, leaves = 0, fq = 0, big = 0;

	for (i = 0; i < s->n; i++)
		if (s->q[i].parent == TC_H_ROOT)
			root = &s->q[i];
	*root_kind = root ? root->kind : "none";
	if (!root)
		return -1;
	if (root->fq)
		return root->big_enough ? 1 : 0;
	if (strcmp(root->kind, "mq"))
		return -1;
	for (i = 0; i < s->n; i++) {
		if (TC_H_MAJ(s->q[i].parent) != TC_H_MAJ(root->handle) || &s->q[i] == root)
			continue;
		leaves++;
		fq += s->q[i].fq;
		big += s->q[i].big_enough;
	}
	if (!leaves || fq != leaves)
		return -1;
	return big == leaves ? 1 : 0;
}

static int fq_install(__u32 ifindex, const struct fq_need *n)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = tc_request(buf, RTM_NEWQDISC,
					  NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE, ifindex,
					  TC_H_ROOT);
	struct nlattr *opt;

	mnl_attr_put_strz(nlh, TCA_KIND, "fq");
	opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put_u32(nlh, TCA_FQ_PLIMIT, n->limit);
	mnl_attr_put_u32(nlh, TCA_FQ_FLOW_PLIMIT, n->flow_limit);
	mnl_attr_put_u32(nlh, TCA_FQ_HORIZON, n->horizon_us);
	mnl_attr_nest_end(nlh, opt);
	return nl_talk(nlh, NULL, NULL);
}

int fq_check(__u32 ifindex, const char *dev, const struct afcd_config *c, bool install,
	     bool *installed)
{
	char cmd[192];
	static struct fq_scan s;
	const char *root_kind;
	int err, v;

	*installed = false;
	memset(&s, 0, sizeof(s));
	s.ifindex = ifindex;
	s.need = fq_requirements(c);
	err = qdisc_dump(&s);
	if (err) {
		pr_warn("cannot read the qdiscs of %s: %s", dev, strerror(-err));
		return -1;
	}
	v = fq_verdict(&s, &root_kind);
	if (v == 1)
		return 0;
	snprintf(cmd, sizeof(cmd), "tc qdisc replace dev %s root fq limit %u flow_limit %u "
		 "horizon %ums", dev, s.need.limit, s.need.flow_limit, s.need.horizon_us / 1000);
	if (!install) {
		if (v == 0)
			pr_warn("sch_fq on %s would drop before afcd does (limit, flow_limit or "
				"horizon too small); run: %s   (or pass --install-fq)", dev, cmd);
		else
			pr_warn("the root qdisc of %s is '%s', not fq: skb->tstamp would not be "
				"enforced; run: %s   (or pass --install-fq)", dev, root_kind, cmd);
		return -1;
	}
	err = fq_install(ifindex, &s.need);
	if (err == -ENOENT)
		pr_warn("this kernel has no sch_fq (CONFIG_NET_SCH_FQ): the EDT timestamps cannot "
			"be enforced here; use a kernel with sch_fq");
	else if (err)
		pr_warn("installing fq failed (%s): %s", cmd, strerror(-err));
	if (err)
		return -1;
	*installed = true;
	return 0;
}

int fq_remove(__u32 ifindex)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];

	return nl_talk(tc_request(buf, RTM_DELQDISC, NLM_F_ACK, ifindex, TC_H_ROOT), NULL, NULL);
}

/* ---- The qdisc backend's root qdisc ------------------------------------------ */

/* The root of s (NULL: none) and, when it is mq, how many leaves it has
 * and how many of them are kind. */
static const struct qd *root_leaves(const struct fq_scan *s, const char *kind, int *leaves,
				    int *of_kind)
{
	const struct qd *root = NULL;
	int i;

	*leaves = *of_kind = 0;
	for (i = 0; i < s->n; i++)
		if (s->q[i].parent == TC_H_ROOT)
			root = &s->q[i];
	if (!root || strcmp(root->kind, "mq"))
		return root;
	for (i = 0; i < s->n; i++) {
		if (&s->q[i] == root || TC_H_MAJ(s->q[i].parent) != TC_H_MAJ(root->handle))
			continue;
		(*leaves)++;
		*of_kind += !strcmp(s->q[i].kind, kind);
	}
	return root;
}

bool afcd_qdisc_is_root(__u32 ifindex)
{
	static struct fq_scan s;
	const struct qd *root;
	int leaves, ours;

	memset(&s, 0, sizeof(s));
	s.ifindex = ifindex;
	if (qdisc_dump(&s))
		return false;
	root = root_leaves(&s, AFCD_QDISC_KIND, &leaves, &ours);
	if (!root)
		return false;
	return !strcmp(root->kind, AFCD_QDISC_KIND) ||
	       (!strcmp(root->kind, "mq") && leaves && ours == leaves);
}

/* A qdisc of kind at parent of ifindex, replacing the one there. */
static int qdisc_put(__u32 ifindex, __u32 parent, const char *kind)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = tc_request(buf, RTM_NEWQDISC,
					  NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE, ifindex, parent);

	mnl_attr_put_strz(nlh, TCA_KIND, kind);
	return nl_talk(nlh, NULL, NULL);
}

/* mq at the root and afcd on each of its leaves. 0, -EOPNOTSUPP (a device
 * with one queue: mq refuses it) or -errno. */
static int afcd_qdisc_install_mq(__u32 ifindex)
{
	static struct fq_scan s;
	const struct qd *root;
	int err, i, leaves, ours;

	err = qdisc_put(ifindex, TC_H_ROOT, "mq");
	if (err)
		return err;
	memset(&s, 0, sizeof(s));
	s.ifindex = ifindex;
	err = qdisc_dump(&s);
	root = err ? NULL : root_leaves(&s, AFCD_QDISC_KIND, &leaves, &ours);
	if (!root || strcmp(root->kind, "mq") || !leaves)
		return err ? err : -ENOENT;
	for (i = 0; i < s.n; i++) {
		if (&s.q[i] == root || TC_H_MAJ(s.q[i].parent) != TC_H_MAJ(root->handle))
			continue;
		err = qdisc_put(ifindex, s.q[i].parent, AFCD_QDISC_KIND);
		if (err)
			return err;
	}
	return 0;
}

int afcd_qdisc_install(__u32 ifindex, const char *dev, bool mq, int *leaves)
{
	int err = -EOPNOTSUPP;

	*leaves = 0;
	if (mq) {
		err = afcd_qdisc_install_mq(ifindex);
		if (!err) {
			static struct fq_scan s;
			int ours;

			memset(&s, 0, sizeof(s));
			s.ifindex = ifindex;
			if (!qdisc_dump(&s))
				root_leaves(&s, AFCD_QDISC_KIND, leaves, &ours);
			return 0;
		}
		if (err != -EOPNOTSUPP) {
			char buf[MNL_SOCKET_BUFFER_SIZE];

			pr_warn("cannot put %s on every queue of %s (under mq): %s (tc qdisc "
				"replace dev %s parent MQ:N %s)", AFCD_QDISC_KIND, dev,
				strerror(-err), dev, AFCD_QDISC_KIND);
			/* the mq just put there, half done: the default comes back */
			nl_talk(tc_request(buf, RTM_DELQDISC, NLM_F_ACK, ifindex, TC_H_ROOT),
				NULL, NULL);
			return err;
		}
	}
	err = qdisc_put(ifindex, TC_H_ROOT, AFCD_QDISC_KIND);
	if (err == -ENOENT)
		pr_warn("the qdisc %s is not registered (its struct_ops link was removed?)",
			AFCD_QDISC_KIND);
	else if (err)
		pr_warn("cannot make %s the root qdisc of %s: %s (tc qdisc replace dev %s root %s)",
			AFCD_QDISC_KIND, dev, strerror(-err), dev, AFCD_QDISC_KIND);
	return err;
}

int afcd_qdisc_remove(__u32 ifindex)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];

	if (!afcd_qdisc_is_root(ifindex))
		return 0;
	return nl_talk(tc_request(buf, RTM_DELQDISC, NLM_F_ACK, ifindex, TC_H_ROOT), NULL, NULL);
}
