// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The clsact hook, the afcd_egress filter and the root sch_fq; see tc.h. */
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

/* tcx needs libbpf >= 1.3 here (bpf_prog_query_opts' link_ids,
 * bpf_prog_detach_opts) */
#define AFCD_HAVE_TCX (LIBBPF_MAJOR_VERSION > 1 || \
		       (LIBBPF_MAJOR_VERSION == 1 && LIBBPF_MINOR_VERSION >= 3))
#ifdef BPF_F_BEFORE
#define AFCD_TCX_EGRESS BPF_TCX_EGRESS
#else  /* <linux/bpf.h> older than Linux 6.6: the value in its UAPI */
#define AFCD_TCX_EGRESS 47
#endif

#define PROG_NAME "afcd_egress"

/* ---- rtnetlink with libmnl ------------------------------------------------ */

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

static void parse_tca(const struct nlmsghdr *nlh, const struct nlattr **tb)
{
	struct attrs t = { tb, TCA_MAX };

	memset(tb, 0, sizeof(*tb) * (TCA_MAX + 1));
	mnl_attr_parse(nlh, sizeof(struct tcmsg), attr_cb, &t);
}

static void parse_nested(const struct nlattr *nest, const struct nlattr **tb, unsigned max)
{
	struct attrs t = { tb, max };

	memset(tb, 0, sizeof(*tb) * (max + 1));
	mnl_attr_parse_nested(nest, attr_cb, &t);
}

/* A tc request: header, struct tcmsg for ifindex and parent. */
static struct nlmsghdr *tc_request(char *buf, __u16 type, __u16 flags, __u32 ifindex,
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
static int nl_talk(struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
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

/* ---- the filter ------------------------------------------------------------ */

struct filter_scan {
	int n, all;           /* afcd_egress filters; filters of any kind */
	struct tc_filter first;
};

/* Is the BPF program with this id named afcd_egress? */
static bool prog_is_afcd(__u32 id)
{
	struct bpf_prog_info info = {0};
	__u32 len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);
	bool yes;

	if (fd < 0)
		return false;
	yes = !bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, PROG_NAME);
	close(fd);
	return yes;
}

static int filter_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[TCA_MAX + 1], *ob[TCA_BPF_MAX + 1];
	const struct tcmsg *t = mnl_nlmsg_get_payload(nlh);
	struct filter_scan *s = data;

	parse_tca(nlh, tb);
	if (!tb[TCA_OPTIONS])          /* the chain's own entry, not a filter */
		return MNL_CB_OK;
	s->all++;
	if (!tb[TCA_KIND] || strcmp(mnl_attr_get_str(tb[TCA_KIND]), "bpf"))
		return MNL_CB_OK;
	parse_nested(tb[TCA_OPTIONS], ob, TCA_BPF_MAX);
	if (!ob[TCA_BPF_ID] || !prog_is_afcd(mnl_attr_get_u32(ob[TCA_BPF_ID])))
		return MNL_CB_OK;
	if (!s->n++) {
		s->first.prio = TC_H_MAJ(t->tcm_info) >> 16;
		s->first.handle = t->tcm_handle;
	}
	return MNL_CB_OK;
}

static int filter_dump(__u32 ifindex, __u32 side, struct filter_scan *s)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];

	memset(s, 0, sizeof(*s));
	return nl_talk(tc_request(buf, RTM_GETTFILTER, NLM_F_DUMP, ifindex,
				  TC_H_MAKE(TC_H_CLSACT, side)), filter_cb, s);
}

int tc_find_afcd_filter(__u32 ifindex, struct tc_filter *f)
{
	struct filter_scan s;

	if (filter_dump(ifindex, TC_H_MIN_EGRESS, &s))
		return 0;
	if (f)
		*f = s.first;
	return s.n;
}

int tc_attach(__u32 ifindex, const char *dev, int prog_fd)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex, .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, to, .handle = AFCD_TC_HANDLE, .priority = AFCD_TC_PRIO,
		    .prog_fd = prog_fd);
	int err = bpf_tc_hook_create(&hook);

	if (err && err != -EEXIST) {
		pr_warn("cannot create the clsact qdisc on %s: %s", dev, strerror(-err));
		return err;
	}
	err = bpf_tc_attach(&hook, &to);
	if (err)
		pr_warn("cannot attach to %s egress: %s", dev, strerror(-err));
	return err;
}

int tc_detach_filters(__u32 ifindex, const char *dev)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex, .attach_point = BPF_TC_EGRESS);
	struct tc_filter f;
	int err, left = 64;

	while (tc_find_afcd_filter(ifindex, &f) && left--) {
		LIBBPF_OPTS(bpf_tc_opts, o, .handle = f.handle, .priority = f.prio);

		err = bpf_tc_detach(&hook, &o);
		if (err) {
			pr_warn("cannot remove the filter (pref %u handle 0x%x) from %s: %s",
				f.prio, f.handle, dev, strerror(-err));
			return err;
		}
	}
	return 0;
}

static bool has_clsact(__u32 ifindex);

void tc_remove_clsact_if_unused(__u32 ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex,
		    .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);   /* = the clsact qdisc */
	struct filter_scan eg, in;

	if (!has_clsact(ifindex) || filter_dump(ifindex, TC_H_MIN_EGRESS, &eg) ||
	    filter_dump(ifindex, TC_H_MIN_INGRESS, &in) || eg.all || in.all)
		return;                /* someone else's filters (or no clsact): keep it */
	bpf_tc_hook_destroy(&hook);
}

/* ---- tcx ------------------------------------------------------------------- */

#define TCX_MAX 64    /* programs on one tcx egress we look at */

/* The programs (and their links, 0 for a plain attachment) on ifindex's
 * tcx egress. Their number, or -errno (-EINVAL: no tcx in this kernel). */
static int tcx_query(__u32 ifindex, __u32 *progs, __u32 *links)
{
#if AFCD_HAVE_TCX
	LIBBPF_OPTS(bpf_prog_query_opts, q, .prog_ids = progs, .link_ids = links,
		    .count = TCX_MAX);
	int err = bpf_prog_query_opts((int)ifindex, AFCD_TCX_EGRESS, &q);

	return err ? err : (int)(q.count < TCX_MAX ? q.count : TCX_MAX);
#else
	return -EOPNOTSUPP;
#endif
}

bool tcx_available(__u32 ifindex, char *why, size_t len)
{
	__u32 progs[TCX_MAX], links[TCX_MAX];
	struct utsname u;
	int n;

	if (!AFCD_HAVE_TCX) {
		snprintf(why, len, "this afcd is built with libbpf %d.%d, tcx needs >= 1.3 "
			 "(tools/deps.sh --backports, then make)", LIBBPF_MAJOR_VERSION,
			 LIBBPF_MINOR_VERSION);
		return false;
	}
	n = tcx_query(ifindex, progs, links);
	if (n >= 0)
		return true;
	uname(&u);
	snprintf(why, len, "this kernel (%s) has no tcx (Linux >= 6.6): %s", u.release,
		 strerror(-n));
	return false;
}

int tcx_find_afcd(__u32 ifindex)
{
	__u32 progs[TCX_MAX], links[TCX_MAX];
	int n = tcx_query(ifindex, progs, links), found = 0;

	for (int i = 0; i < n; i++)
		found += prog_is_afcd(progs[i]);
	return found;
}

int tcx_attach(__u32 ifindex, const char *dev, int prog_fd)
{
	char pin[128];
	int fd, err;

	snprintf(pin, sizeof(pin), AFCD_TCX_PIN_FMT, (unsigned long long)netns_cookie(),
		 ifindex);
	fd = bpf_link_create(prog_fd, (int)ifindex, AFCD_TCX_EGRESS, NULL);
	if (fd < 0) {
		pr_warn("cannot attach to %s's tcx egress: %s", dev, strerror(-fd));
		return fd;
	}
	unlink(pin);             /* stale: its link is gone (no afcd program was attached) */
	err = bpf_obj_pin(fd, pin) ? -errno : 0;
	if (err) {
		pr_warn("cannot pin the tcx link at %s: %s", pin, strerror(-err));
		bpf_link_detach(fd);
	}
	close(fd);
	return err;
}

int tcx_detach(__u32 ifindex, const char *dev)
{
	__u32 progs[TCX_MAX], links[TCX_MAX];
	char pin[128];
	int n, fd, err = 0;

	snprintf(pin, sizeof(pin), AFCD_TCX_PIN_FMT, (unsigned long long)netns_cookie(),
		 ifindex);
	fd = bpf_obj_get(pin);   /* ours, also in a build without tcx */
	if (fd >= 0) {
		bpf_link_detach(fd);
		close(fd);
	}
	unlink(pin);
	n = tcx_query(ifindex, progs, links);   /* any other: attached by hand */
	for (int i = 0; i < n; i++) {
		if (!prog_is_afcd(progs[i]))
			continue;
#if AFCD_HAVE_TCX
		if (links[i]) {
			fd = bpf_link_get_fd_by_id(links[i]);
			err = fd < 0 ? fd : bpf_link_detach(fd);
		} else {
			fd = bpf_prog_get_fd_by_id(progs[i]);
			err = fd < 0 ? fd : bpf_prog_detach_opts(fd, (int)ifindex, AFCD_TCX_EGRESS,
								 NULL);
		}
		if (fd >= 0)
			close(fd);
		if (err) {
			pr_warn("cannot detach afcd_egress (program %u) from %s's tcx egress: %s",
				progs[i], dev, strerror(-err));
			break;
		}
#endif
	}
	return err;
}

const char *hook_name(__u32 ifindex)
{
	int t = tcx_find_afcd(ifindex) > 0, c = tc_find_afcd_filter(ifindex, NULL) > 0;
	bool qd = afcd_qdisc_is_root(ifindex);

	if (qd)
		return t && c ? "qdisc+tcx+clsact" : t ? "qdisc+tcx" : c ? "qdisc+clsact" : "qdisc";
	return t && c ? "tcx+clsact" : t ? "tcx" : c ? "clsact" : "none";
}

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

static bool has_clsact(__u32 ifindex)
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
