/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ctl.h - the control program (bpf/afcd_ctl.bpf.c) loaded on the pinned
 * maps, and typed wrappers of its control frame, run with
 * BPF_PROG_TEST_RUN: arm or disarm a slot's refresh timer, collect idle
 * flow state in the kernel. Needs BPF timers usable from tc programs
 * (Linux >= 5.15). Each returns the program's answer: 0 or -errno.
 */
#ifndef AFCD_CTL_LOADER_H
#define AFCD_CTL_LOADER_H

#include <stddef.h>
#include <linux/types.h>

struct afcd_ctl_bpf;

/* Load the control object on the pins; NULL (and a reason in why) when
 * the kernel cannot run it. Free with ctl_destroy(). */
struct afcd_ctl_bpf *ctl_load(char *why, size_t n);
void ctl_destroy(struct afcd_ctl_bpf *ctl);

/* Arm slot's refresh timer for ifindex (the refresh step runs every
 * update_period in the kernel from then on); disarm it. */
int ctl_arm(struct afcd_ctl_bpf *ctl, __u32 ifindex, __u32 slot);
int ctl_disarm(struct afcd_ctl_bpf *ctl, __u32 slot);

/* Delete ifindex's flow state idle for more than idle_ns with no sample
 * left in the shadow buffer; how many in *deleted, and the flows of its
 * crowd (afcd_in_crowd(), for sb_grow) in *crowd. */
int ctl_gc(struct afcd_ctl_bpf *ctl, __u32 ifindex, __u64 idle_ns, unsigned long long *deleted,
	   __u32 *crowd);

#endif /* AFCD_CTL_LOADER_H */
