/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * qdisc_ops.h - the qdisc backend's registration: the Qdisc_ops `afcd`
 * of bpf/afcd_qdisc.bpf.c as a struct_ops link (Linux >= 6.16 with
 * CONFIG_NET_SCH_BPF; net/sched/bpf_qdisc.c), over the maps pinned at
 * AFCD_PIN_DIR, its link pinned at AFCD_QDISC_OPS_PIN so that the kind
 * outlives the loader. Once registered, `tc qdisc add dev DEV root afcd`
 * works for any interface; an interface runs AFCD or FaLL in it when its
 * config has AFCD_F_QDISC (a plain FIFO otherwise).
 */
#ifndef AFCD_QDISC_OPS_H
#define AFCD_QDISC_OPS_H

#include <stdbool.h>
#include <stddef.h>

/* Can this kernel run BPF qdiscs (its BTF has the struct_ops value type
 * of Qdisc_ops)? true, or false with the reason in why. */
bool qdisc_ops_available(char *why, size_t n);

/* Register the Qdisc_ops afcd and pin its link, unless the pinned link
 * is there already (then nothing changes). Loads the object over the
 * pinned maps (creating them when there are none). Call with pins_lock()
 * held. 0, or -1 with one line printed (another Qdisc_ops named afcd,
 * one registered by hand, is refused, not replaced). */
int qdisc_ops_ensure(void);

#endif /* AFCD_QDISC_OPS_H */
