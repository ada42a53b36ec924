/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * qread.h - an interface's queue as its readers take it: the shared value
 * (map afcd_queue) with its counters' per-CPU parts (map afcd_qpcpu)
 * folded in (maps/afcd_maps.h, afcd_qpcpu_fold()). By map descriptor, for
 * the loader (pins.c) and for the programs that load their own maps (the
 * tests, the ns-3 engine).
 */
#ifndef AFCD_QREAD_H
#define AFCD_QREAD_H

#include <linux/types.h>

#include "afcd_maps.h"

/* Read slot's queue into *q with its counters' per-CPU parts folded in:
 * what each counter of the interface is. Never to be written back (the
 * parts would count twice). 0 or -errno. */
int queue_read_fd(int queue_fd, int qpcpu_fd, __u32 slot, struct afcd_queue *q);

/* Zero every CPU's part of slot's counters: 0 or -errno. */
int qpcpu_reset_fd(int qpcpu_fd, __u32 slot);

#endif /* AFCD_QREAD_H */
