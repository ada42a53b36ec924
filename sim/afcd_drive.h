/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_drive.h - the datapath's own programs on a simulated clock, for the
 * ns-3 engine (sim/afcd_sim.cc): afcd_egress (bpf/afcd.bpf.c) decides every
 * packet through BPF_PROG_TEST_RUN with the test clock set to the
 * simulation's time, the control program (bpf/afcd_ctl.bpf.c) runs the
 * refresh step every update_period, and the loader's scan
 * (afcd_scan_of_hist()) every AFCD_SCAN_PERIOD_NS, when the caller says
 * (Simulator::Schedule). No rule of the datapath is restated here: this
 * file only loads the objects, writes the config as the loader does and
 * moves frames in and out. Private maps (nothing pinned), so that two
 * simulations never share a flow table. Needs root (CAP_BPF, CAP_NET_ADMIN)
 * like the BPF tests. C, so that the maps' header (C11 _Static_assert)
 * compiles as it is; the engine's C++ calls it through extern "C".
 */
#ifndef AFCD_SIM_DRIVE_H
#define AFCD_SIM_DRIVE_H

#include <stddef.h>
#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct afcd_drive;

/* The estimates and the driver's own counts, for the simulation's result
 * (the datapath's counters: afcd_drive_queue_json()). */
struct afcd_drive_stats {
	__u64 t_last_ns;          /* the virtual queue's clock (backlog: t_last - now) */
	__u32 n_active, n_long, m_fair, waterline;
	__u64 global_target_ns, fair_rate_bps, arrival_bps;
	__u64 runs, run_ns;       /* BPF_PROG_TEST_RUN calls of afcd_egress and the
				   * program's own time in them (the kernel's duration) */
	__u64 memlock_bytes;      /* the maps' memory */
	__u32 sb_size;            /* the ring's size now, slots (sb_grow may have grown it) */
	__u32 sb_grows;           /* the scans that grew it (afcd_sb_grow()) */
};

/* Load afcd.bpf.o and afcd_ctl.bpf.o (the build's skeletons) with the test
 * clock, on private maps, and write the config the loader would write for
 * `afcd attach DEV NAME VALUE...` for the loopback interface (ifindex 1 of
 * the caller's network namespace; its slot, ifindex and namespace filled
 * in here): kv holds n names and values in turn (the testbed's loader
 * parameters, testbed/bottleneck.py), parsed, completed and validated by
 * the loader's own code (loader/params.c). seed: the programs' random
 * source (flow-id key, generators). NULL with the reason in err (the
 * loader's message for a bad parameter). A last pair "flow-table" N sizes
 * the flow table as `afcd attach --flow-table N` does. */
struct afcd_drive *afcd_drive_open(const char *const *kv, int n, __u64 seed, char *err,
				   size_t errlen);

/* The config's update_period and rate: when the caller runs the refresh
 * step, and the rate the virtual queue drains at (bits/s). */
__u64 afcd_drive_update_period_ns(const struct afcd_drive *d);
__u64 afcd_drive_rate_bps(const struct afcd_drive *d);
/* The loader's periods and its default idle time (maps/afcd_maps.h):
 * AFCD_SCAN_PERIOD_NS, AFCD_GC_PERIOD_NS and AFCD_GC_IDLE_NS, ns. */
__u64 afcd_drive_scan_period_ns(void);
__u64 afcd_drive_gc_period_ns(void);
__u64 afcd_drive_gc_idle_ns(void);

/* One packet at now_ns (simulated, > 0): frame (len bytes: Ethernet, IP and
 * the first bytes of L4 suffice; CE, when set, is written back into it) of
 * wire_len bytes on the wire. Returns 0 admitted (*t_dep_ns: its departure
 * time, on the same clock), 1 dropped, -1 error (errno). */
int afcd_drive_egress(struct afcd_drive *d, __u64 now_ns, void *frame, __u32 len,
		      __u32 wire_len, __u64 *t_dep_ns);

/* The refresh step at now_ns (the kernel timer's work); the loader's scan
 * at now_ns; the loader's GC of flow state idle for idle_ns. 0 or -1. */
int afcd_drive_refresh(struct afcd_drive *d, __u64 now_ns);
int afcd_drive_scan(struct afcd_drive *d, __u64 now_ns);
int afcd_drive_gc(struct afcd_drive *d, __u64 now_ns, __u64 idle_ns);

/* The estimates and counts now. 0 or -1. */
int afcd_drive_read(struct afcd_drive *d, struct afcd_drive_stats *s);

/* The interface's counters and aggregates now as one JSON object, the
 * "queue" of `afcd stats -j` without its rates and times (loader/qjson.h:
 * the same names, from the same lists). A string to free(); NULL on a
 * failed read or out of memory. */
char *afcd_drive_queue_json(struct afcd_drive *d);

void afcd_drive_close(struct afcd_drive *d);

#ifdef __cplusplus
}
#endif

#endif /* AFCD_SIM_DRIVE_H */
