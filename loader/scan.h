/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * scan.h - the loader's refresh loop, one tick at a time. Work is split
 * by cost (docs/ALGORITHM.md sec. 3 and 5):
 *  - the refresh step (bpf/afcd_ctl.h: offered load, the water level from
 *    the datapath's histogram of sample counts, AFD controller, fair rate,
 *    FaLL's RTT/sqrt(N), heartbeat) runs every update_period from the BPF
 *    timer of afcd_ctl.bpf.o, so that a 1 ms period costs no user-space
 *    wake-ups; on kernels without BPF timers the loader runs the same
 *    step itself (--refresh user);
 *  - the water level of the shadow buffer runs here every
 *    AFCD_SCAN_PERIOD_NS, from the datapath's histogram of per-flow
 *    sample counts (one 16 KiB read, two passes, no sort), into
 *    afcd_scan, whose heartbeat the timer needs to keep running;
 *  - GC of idle flow state runs in the kernel through the control
 *    program (no copy of the flow map) every AFCD_GC_PERIOD_NS.
 */
#ifndef AFCD_SCAN_H
#define AFCD_SCAN_H

#include <stdbool.h>
#include <linux/types.h>

#include "afcd_config.h"
#include "afcd_maps.h"
#include "pins.h"


/* --refresh: who runs the refresh step. */
enum refresh_mode { REFRESH_AUTO = 0, REFRESH_KERNEL, REFRESH_USER };

struct afcd_ctl_bpf;

/* Loader-side state of the refresh loop. */
struct loop_state {
	struct afcd_ctl_bpf *ctl;  /* control program, NULL if not loaded */
	bool kernel;               /* the BPF timer refreshes (else this process) */
	struct afcd_est e;         /* user-mode refresh: the estimate we own */
	struct afcd_scan sc;       /* what we write to afcd_scan */
	__u64 last_scan_ns, last_gc_ns, last_arm_ns;   /* CLOCK_MONOTONIC */
	unsigned long long rearms; /* watchdog re-arms of the timer */
	__u32 taken_over;          /* PID of the loader that took the interface over */
	__u64 taken_netns;         /* its network namespace's cookie when not ours (the
				    * slot is then another interface's), else 0 */
	char lost[224];            /* why the loader must stop: its pins or its program
				    * went away ("" while all is well) */
	__u64 last_check_ns;       /* last full check of the pins and the hook */
	struct { __u64 dev, ino, mtime_ns, ctime_ns; } pin_dir; /* AFCD_PIN_DIR then */
	struct afcd_sb_grow_state sb_grow; /* afcd_sb_grow()'s state between scans */
	__u32 crowd;               /* the GC's last count of the crowd (afcd_in_crowd()) */
};

/* The full check of the pins and of the hook runs at least this often,
 * and at once when the pin directory changes (a pin removed or replaced,
 * bpffs remounted): a netlink dump and 33 bpf(2) calls every 50 ms scan
 * cost the loader 8 % of a vCPU under TCG. */
#define WATCH_PERIOD_NS 1000000000ULL

/* One tick of the loop at time now (ns): the refresh step (user mode),
 * the scan when due, the timer's watchdog (kernel mode). Every scan first
 * looks at the pin directory, and when it changed (or WATCH_PERIOD_NS
 * passed) checks that the pins are still the maps the loader holds and
 * that afcd_egress still runs on the interface's egress, so that no
 * heartbeat is written for a program nobody can reach or that is not
 * attached.
 * Returns the time to the next tick, ns, or 0 when the interface lost its
 * config, was taken over (another loader's token in its scan:
 * ls->taken_over set) or lost its pins or program (ls->lost says which). */
__u64 loop_tick(struct pins *p, __u32 ifindex, struct loop_state *ls, __u64 now);

/* Why the loop stopped (loop_tick() returned 0), one line (pr_warn): the
 * pins or program lost (ls->lost), the interface taken over (by a loader
 * of this namespace, or claimed from another), or its config gone. */
void loop_report_stop(const struct loop_state *ls, const char *dev);

/* Claim slot's scan for this loader, pins_lock() held, right after its
 * config is written: the scan so far into ls->sc (the counts of the loader
 * before carry on), then this loader's PID and a fresh random token
 * (afcd_scan.owner) written back at once, so that a loader this one takes
 * over from finds it at its next scan. */
void scan_claim_locked(struct pins *p, __u32 slot, struct loop_state *ls);

/* Delete ifindex's flow state idle for more than idle_ns with no sample
 * left in the shadow buffer: in the kernel through the control program
 * when ctl is not NULL, else from user space in batches. How many; the
 * flows of its crowd (afcd_in_crowd(), for sb_grow) in *crowd. */
unsigned long long gc_flows(struct pins *p, struct afcd_ctl_bpf *ctl, __u32 ifindex,
			    __u64 idle_ns, __u32 *crowd);

#endif /* AFCD_SCAN_H */
