// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The egress hook: the clsact filter or the tcx link of afcd_egress; see tc.h. */
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

void tc_remove_clsact_if_unused(__u32 ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex,
		    .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);   /* = the clsact qdisc */
	struct filter_scan eg, in;

	if (!tc_has_clsact(ifindex) || filter_dump(ifindex, TC_H_MIN_EGRESS, &eg) ||
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
