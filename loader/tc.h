/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tc.h - the traffic-control objects on the interface: the clsact hook
 * and the afcd_egress filter in it (libbpf's bpf_tc_* API), and the root
 * sch_fq that enforces skb->tstamp (ALGORITHM.md sec. 1; queried and
 * installed over rtnetlink with libmnl). The only file that talks to tc.
 *
 * Why a dump to find the filter: one attached by hand (`tc filter add
 * ... bpf da obj afcd.bpf.o sec tc`) gets a priority and handle tc chose,
 * and bpf_tc_query() needs both; the dump finds it by its program's name.
 * Every function returns 0 or a negative errno unless it says otherwise.
 */
#ifndef AFCD_TC_H
#define AFCD_TC_H

#include <stdbool.h>
#include <linux/types.h>

#include "afcd_maps.h"

/* Where the loader attaches afcd_egress: clsact egress, this handle and
 * priority (a filter attached by hand has others). */
#define AFCD_TC_HANDLE 0xafcd
#define AFCD_TC_PRIO   0xafc

/* The first filter on ifindex's egress running a program named
 * afcd_egress: its priority and handle. */
struct tc_filter { __u32 prio, handle; };

/* How many afcd_egress filters ifindex's egress has (0 on any error);
 * the first one in *f when f is not NULL. */
int tc_find_afcd_filter(__u32 ifindex, struct tc_filter *f);

/* Create the clsact hook if missing and attach prog_fd at AFCD_TC_HANDLE
 * and AFCD_TC_PRIO on egress. 0 or -errno (with one line printed). */
int tc_attach(__u32 ifindex, const char *dev, int prog_fd);

/* Remove every afcd_egress filter from ifindex's egress. 0 or -errno
 * (printed). */
int tc_detach_filters(__u32 ifindex, const char *dev);

/* Remove the clsact hook when it holds no filter on either side. */
void tc_remove_clsact_if_unused(__u32 ifindex);

/* sch_fq sized so that it never drops before the program does: enough
 * packets for a full horizon of 64-byte packets (10k..1M), one flow may
 * hold them all, and its horizon at least twice the program's (>= 10 s). */
struct fq_need { __u32 limit, flow_limit, horizon_us; };
struct fq_need fq_requirements(const struct afcd_config *c);

/* Is the root qdisc of ifindex sch_fq (or mq with fq on every queue)
 * with at least the limits above? 0 when it is (or, with install, once
 * this installed it: *installed set), -1 with one line printed that says
 * what to run otherwise. */
int fq_check(__u32 ifindex, const char *dev, const struct afcd_config *c, bool install,
	     bool *installed);

/* Delete ifindex's root qdisc (the fq this loader installed). */
int fq_remove(__u32 ifindex);

#endif /* AFCD_TC_H */
