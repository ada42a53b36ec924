/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tc.h - the traffic-control objects on the interface: the egress hook
 * that runs afcd_egress, either tcx (a BPF link, Linux >= 6.6; libbpf's
 * bpf_program__attach_tcx, so a build with libbpf >= 1.3) or a clsact
 * filter (libbpf's bpf_tc_* API), and the root sch_fq that enforces
 * skb->tstamp (ALGORITHM.md sec. 1; queried and installed over rtnetlink
 * with libmnl). The only file that talks to tc.
 *
 * Why a dump to find the filter: one attached by hand (`tc filter add
 * ... bpf da obj afcd.bpf.o sec tc`) gets a priority and handle tc chose,
 * and bpf_tc_query() needs both; the dump finds it by its program's name.
 * Every function returns 0 or a negative errno unless it says otherwise.
 */
#ifndef AFCD_TC_H
#define AFCD_TC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "afcd_maps.h"

/* The egress hook (afcd attach --attach; cmd_attach.c names them in
 * this order). */
enum tc_hook { HOOK_AUTO = 0, HOOK_TCX, HOOK_CLSACT };

/* Can afcd_egress be attached with tcx here? Needs a build against libbpf
 * >= 1.3 and a kernel with tcx (Linux >= 6.6, probed by a tcx query on
 * ifindex). true, or false with the reason in why. */
bool tcx_available(__u32 ifindex, char *why, size_t len);

/* How many afcd_egress programs run on ifindex's tcx egress (0 when
 * there is no tcx or on any error). */
int tcx_find_afcd(__u32 ifindex);

/* Attach prog_fd to ifindex's tcx egress (appended after the programs
 * there) and pin the link at AFCD_TCX_PIN_FMT, replacing a stale pin.
 * 0 or -errno (printed). */
int tcx_attach(__u32 ifindex, const char *dev, int prog_fd);

/* Detach every afcd_egress program from ifindex's tcx egress (links and
 * plain attachments) and unlink its pin. 0 or -errno (printed). */
int tcx_detach(__u32 ifindex, const char *dev);

/* The hooks running afcd on ifindex: "tcx", "clsact", "tcx+clsact"
 * (both: every packet is stamped twice), "none", or "qdisc" (the root
 * qdisc is afcd), alone or before the others ("qdisc+tcx": the EDT
 * program passes the packets of a qdisc-backend interface untouched). */
const char *hook_name(__u32 ifindex);

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

/* The qdisc backend (bpf/afcd_qdisc.bpf.c, registered by qdisc_ops.h):
 * the kind of its root qdisc. */
#define AFCD_QDISC_KIND "afcd"

/* Is the BPF qdisc afcd ifindex's qdisc: its root, or every leaf of an mq
 * root? false on any error. */
bool afcd_qdisc_is_root(__u32 ifindex);

/* Make afcd ifindex's qdisc, replacing the one there (its packets are
 * dropped, as `tc qdisc replace` does): with mq, mq at the root and afcd
 * on each of its leaves, one FIFO per transmit queue (*leaves: how many),
 * unless the device has one queue (mq refuses it); else afcd at the root,
 * one FIFO for all queues (*leaves 0). 0 or -errno (printed). */
int afcd_qdisc_install(__u32 ifindex, const char *dev, bool mq, int *leaves);

/* Delete ifindex's root qdisc when afcd is its qdisc (the kernel's
 * default takes its place). 0 (also when it is not afcd) or -errno. */
int afcd_qdisc_remove(__u32 ifindex);

#endif /* AFCD_TC_H */
