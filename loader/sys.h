/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sys.h - the loader's checks of the system outside BPF, done before
 * anything is changed (interface name, privileges, BTF, bpffs), and its
 * clocks. Each check prints one line through pr_warn() when it fails.
 */
#ifndef AFCD_SYS_H
#define AFCD_SYS_H

#include <linux/types.h>

/* DEV names an interface of this network namespace: 0 and its ifindex,
 * or -1 (name missing, too long, invalid characters, no such interface). */
int check_ifname(const char *dev, __u32 *ifindex);

/* Running as root with CAP_NET_ADMIN (rtnetlink: clsact, sch_fq) and
 * CAP_SYS_ADMIN (BPF_PROG_GET_FD_BY_ID, to recognise afcd_egress among a
 * hook's programs; it also grants what CAP_BPF and CAP_PERFMON would):
 * the least set (deploy/systemd/afcd@.service). 0, or -1 with one line printed. */
int check_privileges(void);

/* Kernel BTF present (AFCD_BTF_PATH overrides the path, for tests): 1 or 0. */
int have_btf(void);

/* Mount bpffs on /sys/fs/bpf if it is not, and create pin_dir (mode
 * 0700). Returns 0 or -errno. */
int ensure_bpffs(const char *pin_dir);

/* The cookie of this process's network namespace (SO_NETNS_COOKIE, Linux
 * >= 5.14), or 0 when the kernel cannot tell. Cached. */
__u64 netns_cookie(void);

/* CLOCK_MONOTONIC, ns (the clock of bpf_ktime_get_ns()). */
__u64 now_ns(void);

/* CPU time (user + system) this process used so far, seconds; BPF program
 * verification during loading counts as system time. */
double cpu_seconds(void);

#endif /* AFCD_SYS_H */
