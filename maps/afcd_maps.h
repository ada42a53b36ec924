/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_maps.h - the one definition of every map key, map value, config
 * field, counter index and enum shared by the BPF datapath (bpf/), the
 * loader (loader/) and the tools (tools/).
 *
 * Conventions
 *   - Fixed-width types only, explicit padding, sizes pinned by static
 *     asserts: the layout is an ABI between the BPF object, the loader and
 *     anything that reads the pinned maps (bpftool, afcd-top).
 *   - Units are in the field name (_ns, _bps, _bytes) or in its comment.
 *     All times are CLOCK_MONOTONIC nanoseconds, the clock of
 *     bpf_ktime_get_ns() and of sch_fq.
 *   - "samples" are shadow-buffer slots (AFD paper, Pan et al. CCR 2003;
 *     dissertation sec. 3.3.1 and 4.4.1).
 *
 * Source of the algorithm: docs/ALGORITHM.md, which cites
 * L. Xue's dissertation (AFCD: ch. 3, eq. 3.3-3.14; FaLL: ch. 4,
 * eq. 4.1-4.16) and RFC 8289 (CoDel).
 */
#ifndef AFCD_MAPS_H
#define AFCD_MAPS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#include <linux/bpf.h> /* struct bpf_timer */
#endif

/* Bump whenever a struct below changes layout. The datapath ignores a
 * config whose abi field differs (the packet passes, counted as
 * AFCD_G_UNCONFIGURED) and the loader refuses to adopt foreign pins. */
#define AFCD_ABI_VERSION 23u

/* Where every map is pinned: iproute2 pins LIBBPF_PIN_BY_NAME maps of
 * `tc filter ... bpf obj` here, and the loader uses the same directory so
 * that a program attached by hand and one attached by the loader share
 * their maps (state inside them is keyed by ifindex). */
#define AFCD_PIN_DIR "/sys/fs/bpf/tc/globals"

/* Every pinned map, once: FN(field, name, map type, key, value). The
 * loader's struct pins, its open/chmod/unlink loops and its check of
 * foreign pins (type, key and value size, refused on mismatch) iterate
 * this list; maps/afcd_maps.bpf.h defines the same maps for BPF, and
 * tests/netns/test_lists.py keeps the Python side (PIN_NAMES) in step.
 * Names are at most 15 characters (BPF_OBJ_NAME_LEN is 16). */
#define AFCD_PINS(FN)                                                             \
	FN(cfg,    "afcd_cfg",      BPF_MAP_TYPE_ARRAY,         __u32, struct afcd_config) \
	FN(est,    "afcd_est",      BPF_MAP_TYPE_ARRAY,         __u32, struct afcd_est)    \
	FN(queue,  "afcd_queue",    BPF_MAP_TYPE_ARRAY,         __u32, struct afcd_queue)  \
	FN(flows,  "afcd_flows",    BPF_MAP_TYPE_LRU_HASH,      __u64,                 struct afcd_flow)   \
	FN(ring,   "afcd_sb_ring",  BPF_MAP_TYPE_ARRAY,         __u32, struct afcd_sb_ring) \
	FN(count,  "afcd_sb_count", BPF_MAP_TYPE_HASH,          struct afcd_sb_key, __u32) \
	FN(global, "afcd_global",   BPF_MAP_TYPE_PERCPU_ARRAY,  __u32, __u64)              \
	FN(scan,   "afcd_scan",     BPF_MAP_TYPE_ARRAY,         __u32, struct afcd_scan)   \
	FN(timer,  "afcd_timer",    BPF_MAP_TYPE_ARRAY,         __u32, struct afcd_timer)  \
	FN(hist,   "afcd_sb_hist",  BPF_MAP_TYPE_ARRAY,         __u32, struct afcd_sb_hist) \
	FN(ifslot, "afcd_ifslot",   BPF_MAP_TYPE_ARRAY,         __u32, __u32)              \
	FN(qpcpu,  "afcd_qpcpu",    BPF_MAP_TYPE_PERCPU_ARRAY,  __u32, struct afcd_qpcpu) \
	FN(seen,   "afcd_seen",     BPF_MAP_TYPE_ARRAY,         __u32, struct afcd_seen)

/* The pinned tcx link of an interface attached with `afcd attach --attach
 * tcx` (printf format: the network namespace's cookie, then the ifindex,
 * which repeats across namespaces sharing the bpffs): it keeps the
 * program attached after the loader exits (--keep) and lets `afcd
 * detach` remove it. Not a map, so not in AFCD_PINS. */
#define AFCD_TCX_PIN_FMT AFCD_PIN_DIR "/afcd_tcx_%llu_%u"

/* The pinned struct_ops link of the qdisc backend's Qdisc_ops `afcd`
 * (bpf/afcd_qdisc.bpf.c): while it exists the qdisc kind is registered
 * with the kernel, over the maps above. The loader creates it with the
 * first `afcd attach --backend qdisc` and removes it with the pins, when
 * no interface is left; qdiscs still running then stay plain FIFOs until
 * deleted. Not a map, so not in AFCD_PINS. */
#define AFCD_QDISC_OPS_PIN AFCD_PIN_DIR "/afcd_qdisc_ops"

/* ---- Sizes and bounds -------------------------------------------------- */

/* Interfaces that may run the program at once: each configured interface
 * owns one slot (0..AFCD_MAX_IFACES-1) of the per-interface ARRAY maps
 * (config, queue, estimates, shadow-buffer ring), so that the per-packet
 * path finds its interface with array lookups only, which the verifier
 * inlines (a hash lookup by ifindex cost 30 ns a packet, as
 * much as the rest of the fairness module). The rings are preallocated:
 * 16 * 256 KiB. */
#define AFCD_MAX_IFACES      16
/* afcd_ifslot covers ifindex 1..AFCD_IFSLOT_MAX-1 directly (256 KiB); an
 * interface with a larger ifindex (a host that has created and destroyed
 * that many) is found by a scan of the AFCD_MAX_IFACES configs. */
#define AFCD_IFSLOT_MAX      65536
/* Largest shadow buffer, in samples (slots): 32,768, a ring of 256 KiB
 * (8 bytes a slot) and a histogram of 128 KiB an interface slot. A fair
 * share needs about 2 samples of the ring to be judged and about 3 for
 * the law to hold a crowd's queue (docs/LIMITS.md), so a ring of sb_size
 * slots judges crowds of up to about sb_size / 2 flows and holds the
 * queue of up to about sb_size / 3. Default 2000 (Table 3.1). */
#define AFCD_SB_SIZE_MAX     32768
#define AFCD_SB_SIZE_DEFAULT 2000
/* sb_grow: the ring grows once it has fewer than AFCD_SB_GROW_AT_MILLI
 * thousandths of a slot a flow of the crowd (afcd_in_crowd()), to
 * AFCD_SB_GROW_TO_MILLI. About two slots a flow make a crowd fair, with
 * its queue at the buffer; about three let the per-flow law hold its
 * queue far below it, and with the policer's far gate a flood beside it
 * is held (docs/PERFORMANCE.md, three slots a flow). */
#define AFCD_SB_GROW_AT_MILLI 3000
#define AFCD_SB_GROW_TO_MILLI 3300
/* Entries of afcd_sb_count, all interfaces together: twice the largest
 * ring (an entry per entity with samples; 72 bytes of kernel memory an
 * entry). Past it a sample still takes its slot but its entity's count is
 * not recorded (AFCD_A_SB_FAIL). */
#define AFCD_SB_COUNT_MAX    (2 * AFCD_SB_SIZE_MAX)
/* Per-flow state entries (all interfaces together), LRU-evicted: the
 * table's size unless `afcd attach --flow-table N` made it N, within
 * [AFCD_FLOWS_MIN, AFCD_FLOWS_LIMIT] (248 bytes of kernel memory an entry
 * on Linux 6.18, bpftool's bytes_memlock over 2^17 entries: the 176-byte
 * value, its 8-byte key, the LRU element, a bucket; sch_fq's flow is 104). */
#define AFCD_FLOWS_MAX       65536
#define AFCD_FLOWS_MIN       1024
#define AFCD_FLOWS_LIMIT     (1u << 24)
/* Is n (entries) a size the flow table takes? The loader's --flow-table
 * and the ns-3 engine's flow-table parameter check it. */
static inline __attribute__((always_inline)) int afcd_flow_table_ok(__u64 n)
{
	return n >= AFCD_FLOWS_MIN && n <= AFCD_FLOWS_LIMIT;
}
/* Largest packet length used in tx = len * 8e9 / rate (bytes); longer
 * lengths are clamped, which keeps len * 8e9 below 2^63. */
#define AFCD_LEN_MAX         (1u << 20)
/* The loader's scan period (afcd_scan), ns: the ring spans ~window (1 s). */
#define AFCD_SCAN_PERIOD_NS  50000000ULL
/* The loader's GC of idle flow state (the control program's AFCD_CTL_GC):
 * every AFCD_GC_PERIOD_NS, of flows idle for AFCD_GC_IDLE_NS (attach
 * --gc-idle), ns. */
#define AFCD_GC_PERIOD_NS    1000000000ULL
#define AFCD_GC_IDLE_NS      10000000000ULL


/* ---- Parameters: ranges enforced by the loader ------------------------ */
#define AFCD_RATE_MIN_BPS     1000ULL                 /* 1 kbit/s */
#define AFCD_RATE_MAX_BPS     1000000000000ULL        /* 1 Tbit/s */
#define AFCD_TIME_MAX_NS      (1ULL << 34)            /* ~17.2 s: keeps target * Q16 ratios in u64 */
#define AFCD_INTERVAL_MAX_NS  10000000000ULL          /* 10 s */
#define AFCD_EXPONENT_MAX     4
#define AFCD_SAMPLE_BYTES_MAX (1ULL << 30)            /* keeps rand * sample_bytes in u64 */
#define AFCD_UPDATE_PERIOD_MIN_NS 100000ULL           /* 100 us: the refresh's BPF timer */
#define AFCD_UPDATE_PERIOD_MAX_NS 10000000000ULL      /* 10 s */
#define AFCD_MTU_MIN_BYTES    68                      /* IPv4's minimum MTU (RFC 791) */
#define AFCD_MTU_MAX_BYTES    65536
#define AFCD_MILLI_MAX        1000000                 /* alpha, beta: at most 1000 */

/* Defaults (ALGORITHM.md sec. 3-5; Table 3.1 and 4.1). */
/* (target, interval and update_period: per algo, in AFCD_ALGOS) */
#define AFCD_DEF_HORIZON_NS       100000000ULL  /* 100 % BDP at 100 ms */
#define AFCD_DEF_RTT_NS           1000000ULL    /* 1 ms (FaLL, Table 4.1 setting) */
#define AFCD_DEF_WINDOW_NS        1000000000ULL /* shadow buffer covers 1 s */
#define AFCD_DEF_STALE_AFTER_NS   1000000000ULL /* 1 s */
#define AFCD_DEF_EXPONENT         3             /* eq. 3.14 / 4.16 */
#define AFCD_DEF_MTU_BYTES        1514
#define AFCD_DEF_ALPHA_MILLI      1700          /* AFD alpha = 1.7 */
#define AFCD_DEF_BETA_MILLI       1800          /* AFD beta  = 1.8 */
#define AFCD_DEF_BURST_NS         3000000ULL    /* pacing credit 3 ms: the testbed's HTB bucket */
#define AFCD_BURST_MAX_NS         1000000000ULL /* 1 s */

/* ---- Enums -------------------------------------------------------------- */

/* The drop law that decides a packet (bpf/afcd_decide.h: afcd_law(), one
 * switch). */
enum afcd_law {
	AFCD_LAW_NONE = 0,  /* EDT and the horizon only */
	AFCD_LAW_CODEL,     /* one CoDel (RFC 8289) on the whole virtual queue */
	AFCD_LAW_AFD,       /* AFD's coin: drop with probability (1 - m_fair/m_i)+ */
	AFCD_LAW_TARGET_I,  /* per-flow CoDel with target_i = target (m_fair/m_i)^k */
};

/* What an algo takes from the rest of the datapath (the datapath and the
 * refresh step test these, not algo names). */
enum afcd_trait {
	AFCD_T_FAIR    = 1u << 0, /* the fairness module's estimates: m_fair, the water
				   * level (dissertation sec. 3.3.1, 4.4.1; ALGORITHM.md 3a) */
	AFCD_T_POLICE  = 1u << 1, /* the fair-rate policer applies (with police on) */
	AFCD_T_GTARGET = 1u << 2, /* FaLL's global target RTT/sqrt(N) gates the law and is
				   * its queue target (eq. 4.5-4.6) */
	AFCD_T_GCODEL  = 1u << 3, /* codel_state global and queue apply */
	AFCD_T_LIFT    = 1u << 4, /* the AFD controller lifts m_fair up to 3/4 above the
				   * water level, not 1/8 (afcd_afd_m_fair(): algo afd) */
};

/* Drop laws, once: FN(ENUM, name, law, traits, default target, interval
 * and update_period in ns, what it does) (ALGORITHM.md sec. 6; Table 3.1
 * for the 5 ms / 100 ms of CoDel and AFCD, Table 4.1 for FaLL's 1 ms / 5 ms
 * and its 1 ms refresh). All share the EDT virtual queue. The name is the
 * `algo` parameter's value and what every output prints; the loader's
 * defaults, `afcd params`, the manual pages and the bench's list come from
 * these rows. Adding a law: one row here, one case in afcd_law(). */
#define AFCD_ALGOS(FN)                                                                     \
	FN(DROPTAIL, "droptail", AFCD_LAW_NONE, 0,                                         \
	   5000000ULL, 100000000ULL, 10000000ULL, "EDT + horizon only")                    \
	FN(CODEL, "codel", AFCD_LAW_CODEL, 0,                                              \
	   5000000ULL, 100000000ULL, 10000000ULL, "one CoDel (RFC 8289) on the virtual queue") \
	FN(AFD, "afd", AFCD_LAW_AFD, AFCD_T_FAIR | AFCD_T_LIFT,                            \
	   5000000ULL, 100000000ULL, 10000000ULL, "drop with probability (1 - m_fair/m_i)+") \
	FN(AFCD, "afcd", AFCD_LAW_TARGET_I, AFCD_T_FAIR | AFCD_T_POLICE | AFCD_T_GCODEL,    \
	   5000000ULL, 100000000ULL, 10000000ULL, "per-flow target_i = target (m_fair/m_i)^k") \
	FN(FALL, "fall", AFCD_LAW_TARGET_I,                                                \
	   AFCD_T_FAIR | AFCD_T_POLICE | AFCD_T_GCODEL | AFCD_T_GTARGET,                   \
	   1000000ULL, 5000000ULL, 1000000ULL, "AFCD law under global_target = RTT/sqrt(N)")

#define AFCD_ENUM_ALGO_(E, name, law, traits, t, i, u, doc) AFCD_ALGO_##E,
enum afcd_algo {
	AFCD_ALGOS(AFCD_ENUM_ALGO_)
	AFCD_ALGO__MAX,
};
#define AFCD_ALGO_DEFAULT AFCD_ALGO_AFCD   /* when the operator names none */

/* An algo's row: its law, traits and defaults (afcd_algo_row()). */
struct afcd_algo_row {
	__u32 law;                /* enum afcd_law */
	__u32 traits;             /* enum afcd_trait */
	__u64 target_ns, interval_ns, update_period_ns;
};

/* The name of algo ("?" for an unknown one). */
static inline __attribute__((always_inline)) const char *afcd_algo_name(__u32 algo)
{
	switch (algo) {
#define AFCD_ALGO_NAME_CASE_(E, name, law, traits, t, i, u, doc) case AFCD_ALGO_##E: return name;
	AFCD_ALGOS(AFCD_ALGO_NAME_CASE_)
#undef AFCD_ALGO_NAME_CASE_
	default:
		return "?";
	}
}

/* The row of algo (an unknown algo: droptail's, which does nothing but
 * EDT). A switch the compiler folds, usable in BPF and on the host. */
static inline __attribute__((always_inline)) struct afcd_algo_row afcd_algo_row(__u32 algo)
{
	switch (algo) {
#define AFCD_ALGO_CASE_(E, name, law, traits, t, i, u, doc) \
	case AFCD_ALGO_##E: return (struct afcd_algo_row){ law, traits, t, i, u };
	AFCD_ALGOS(AFCD_ALGO_CASE_)
#undef AFCD_ALGO_CASE_
	default:
		return (struct afcd_algo_row){ AFCD_LAW_NONE, 0, 5000000ULL, 100000000ULL,
					       10000000ULL };
	}
}

/* struct afcd_config.flags */
enum afcd_cfg_flags {
	/* CE-mark ECT(0)/ECT(1) packets instead of AQM-dropping them. */
	AFCD_F_ECN          = 1u << 0,
	/* codel_state (afcd, fall; at most one of the two bits; neither:
	 * per-flow: each flow's own CoDel state, as eq. 3.14 gives it).
	 * CODEL_GLOBAL = global: one dropping/count/drop_next for the whole
	 * queue, per-flow target_i and first_above_time only (the reference
	 * sch_afcodel behaviour: every packet's own window enters and leaves
	 * the dropping state). CODEL_QUEUE = queue: one state for the whole
	 * queue, entered and left on the queue's sojourn against the law's
	 * target (target; FaLL's global target) as one CoDel would, each drop
	 * it makes due taken by the next packet whose flow has been above
	 * its target_i for an interval (afcd_codel_run_queue()); the default
	 * (afcd_config_defaults()). */
	AFCD_F_CODEL_GLOBAL = 1u << 1,
	AFCD_F_CODEL_QUEUE  = 1u << 6,
	AFCD_F_CODEL_STATE  = AFCD_F_CODEL_GLOBAL | AFCD_F_CODEL_QUEUE,
	/* police (afcd, fall; default on): the fairness module's enforcement.
	 * Each flow above the fair share is held to the fair rate on its own
	 * virtual clock (struct afcd_flow.vt_ns, advanced by len * 8e9 /
	 * fair_rate_bps per admitted packet): a packet that would put the
	 * flow more than min(interval, horizon / 4) ahead of that clock is dropped
	 * (AFCD_S_POLICE_DROP), never CE-marked. Flows with at most one
	 * sample in the shadow buffer ("mice") share one aggregate clock
	 * (struct afcd_queue.mice_vt_ns), so a sender that rotates ports or
	 * spoofs sources is held like one flow, at no less than an eighth of
	 * the link (afcd_mice_floor_bps(): the link's short flows). The CoDel
	 * law alone raises a flow's drop rate as sqrt(count)/interval and
	 * cannot hold a non-responsive flow (docs/ALGORITHM.md sec. 3a, the
	 * fairness module). */
	AFCD_F_POLICE       = 1u << 2,
	/* high_drop (afcd, fall; default on): the buffer's high-water mark
	 * as a drop. A packet that cannot carry a CE mark (not ECT, or ecn
	 * off), whose flow is not below its share (afcd_below_share()) and
	 * that would wait more than half the horizon, is dropped
	 * (AFCD_S_HIGH_DROP), at most once an interval for its flow
	 * (afcd_police_signal_due()). The horizon drops by arrival, and the
	 * sender learns of it a full horizon of queue later; in a slow start
	 * that overflows the buffer (the window doubles a round trip) that
	 * wait multiplies the loss until a timeout. This drop reaches the
	 * sender half a horizon sooner, the timing of fq_codel's drop from
	 * the head of the fattest queue (docs/ALGORITHM.md sec. 6). */
	AFCD_F_HIGH_DROP    = 1u << 7,
	/* isolate (ALGORITHM.md sec. 3): the key the fair share is computed
	 * on. Neither bit: the 5-tuple (flows, the dissertation's default).
	 * ISOLATE_SRC: the source address only (every flow of a host shares
	 * one share, one CoDel state, one policer clock), as CAKE's srchost;
	 * ISOLATE_DST: the destination address only (dsthost). At most one. */
	AFCD_F_ISOLATE_SRC  = 1u << 3,
	AFCD_F_ISOLATE_DST  = 1u << 4,
	/* backend qdisc: the interface's root qdisc is the BPF qdisc `afcd`
	 * (bpf/afcd_qdisc.bpf.c, Linux >= 6.16 with CONFIG_NET_SCH_BPF),
	 * which queues the packets in a FIFO and runs the drop law at
	 * dequeue on their true sojourn; the EDT classifier, if attached,
	 * passes them untouched (counted as AFCD_G_UNCONFIGURED). rate_bps
	 * is then optional: 0 = work-conserving at the device's own rate (the
	 * estimates use the rate measured at dequeue, afcd_queue.link_bps,
	 * afcd_rate_of()), else the qdisc paces its output at rate_bps.
	 * Without the flag: the EDT backend (afcd.bpf.c over sch_fq). */
	AFCD_F_QDISC        = 1u << 5,
	/* Loader bookkeeping, ignored by the datapath: the loader installed
	 * the root fq (`--install-fq`), so its detach removes it */
	AFCD_F_FQ_INSTALLED = 1u << 8,
	/* Loader bookkeeping: sample_bytes was not given and rate_bps is 0
	 * (backend qdisc, work-conserving), so the loader sets sample_bytes
	 * from the link rate the qdisc measures (afcd_default_sample_bytes()
	 * at afcd_queue.link_bps) whenever it moves by more than 2x */
	AFCD_F_SAMPLE_AUTO  = 1u << 9,
	/* sb_grow (afcd, fall; default on). Loader bookkeeping, ignored by
	 * the datapath: the loader's scan grows sb_size in place to
	 * AFCD_SB_GROW_TO_MILLI slots a flow of the crowd (the GC's count of
	 * flows of their own that sent within a window, afcd_in_crowd()) once
	 * it has had fewer than AFCD_SB_GROW_AT_MILLI for a window (with
	 * fewer the per-flow law leaves the crowd's queue at the buffer, and
	 * below about two slots a flow it stops telling flows apart,
	 * LIMITS.md), up to
	 * AFCD_SB_SIZE_MAX and to a ring that covers at most two windows of
	 * the link (sample_bytes is at least an MTU). Never shrinks it
	 * (afcd_sb_grow(), afcd_config.h) */
	AFCD_F_SB_GROW      = 1u << 10,
	/* How the interface is attached, not parameters: `afcd set` keeps
	 * them as they are */
	AFCD_F_ATTACH_FLAGS = AFCD_F_QDISC | AFCD_F_FQ_INSTALLED,
};

/* codel_state's values: FN(name, the flag bits of AFCD_F_CODEL_STATE),
 * the parameter's names in the loader and the tools, in this order. */
#define AFCD_CODEL_STATES(FN)                                                     \
	FN("per-flow", 0) FN("global", AFCD_F_CODEL_GLOBAL) FN("queue", AFCD_F_CODEL_QUEUE)

/* ---- Counters: one list each ------------------------------------------
 * FN(ENUM, key, prometheus family, prometheus label, help). The key is the
 * counter's name in `afcd stats -j` and tools/afcd-top; the family (after
 * "afcd_"; NULL: not exported) and the label (another label than dev, or
 * "") are its Prometheus metric; the help is the HELP line of the family's
 * first entry and documents the counter here. Packets unless the key or
 * the family says bytes. The loader's text, JSON and Prometheus renderers
 * iterate these lists. Order is the ABI (the index into the arrays).
 */

/* Per-interface counters, struct afcd_queue.stats[]. */
#define AFCD_STATS(FN)                                                                   \
	FN(PASSED, "passed", "packets_total", "",                                        \
	   "Packets admitted to the virtual queue (CE-marked ones included).")           \
	FN(PASSED_BYTES, "passed_bytes", "bytes_total", "",                              \
	   "Wire bytes admitted to the virtual queue.")                                  \
	FN(AQM_DROP, "aqm_drop", "drops_total", "reason=\"aqm\"",                        \
	   "Packets dropped, by reason: aqm is the drop law (the fair-rate policer "      \
	   "included), overlimit a predicted sojourn above the horizon.")                \
	FN(POLICE_DROP, "police_drop", "police_drops_total", "",                         \
	   "Packets dropped by the fair-rate policer (also in drops_total{reason=\"aqm\"}).") \
	FN(HIGH_DROP, "high_drop", "high_water_drops_total", "",                         \
	   "Packets dropped because they would wait more than half the horizon, one "   \
	   "an interval of a flow not below its share (high_drop on; also in "          \
	   "drops_total{reason=\"aqm\"}).")                                             \
	FN(OVERLIMIT_DROP, "overlimit_drop", "drops_total", "reason=\"overlimit\"",      \
	   "Packets dropped because their predicted sojourn exceeds the horizon.")       \
	FN(ECN_MARK, "ecn_mark", "ecn_marks_total", "reason=\"aqm\"",                    \
	   "Packets CE-marked, by reason: aqm is the drop law marking instead of "       \
	   "dropping, police the fair-rate policer marking an ECN-capable packet "       \
	   "within one lead past its drop point, high_water a sojourn above half the "   \
	   "horizon, ce_threshold a sojourn above ce_threshold.")                        \
	FN(POLICE_MARK, "police_mark", "ecn_marks_total", "reason=\"police\"",           \
	   "ECN-capable packets CE-marked by the fair-rate policer instead of dropped.") \
	FN(HIGH_MARK, "high_mark", "ecn_marks_total", "reason=\"high_water\"",           \
	   "ECN-capable packets CE-marked because they would wait more than half the "   \
	   "horizon (ecn on), whatever the drop law says: the buffer nears its end.")   \
	FN(CE_THRESHOLD_MARK, "ce_threshold_mark", "ecn_marks_total",                    \
	   "reason=\"ce_threshold\"", "Packets CE-marked by ce_threshold.")              \
	FN(NON_IP, "non_ip", "unclassified_packets_total", "kind=\"non_ip\"",            \
	   "Frames the parser could not classify into a flow, by kind: non_ip (not "     \
	   "IPv4/IPv6 after two VLAN tags: ARP, a third tag, ...), parse_error "         \
	   "(truncated or malformed IP, more IPv6 extension headers than followed). "    \
	   "They are the unclassified aggregate: one flow of the fairness module.")      \
	FN(PARSE_ERR, "parse_err", "unclassified_packets_total", "kind=\"parse_error\"", \
	   "Truncated or malformed IP packets (the unclassified aggregate).")            \
	FN(FRAGMENT, "fragment", "fragments_total", "",                                  \
	   "IP fragments (their ports taken as 0).")                                     \
	FN(STALE_FALLBACK, "stale_fallback", "fallback_packets_total", "",               \
	   "Packets decided on the datapath's own estimates (loader heartbeat stale).")  \
	FN(IDLE_NS, "idle_ns", NULL, "",                                                 \
	   "Nanoseconds the virtual queue stood empty (EDT backend): the sum of the "   \
	   "gaps between its clock and the arrivals that found it idle, less the "       \
	   "pacing credit (3 ms) each gap gets back, from its first packet on; over an " \
	   "interval, the share of rate the queue left unused "                          \
	   "(Prometheus: afcd_queue_idle_seconds_total).")

/* Per-interface counters updated atomically outside the decision,
 * struct afcd_queue.astats[]. */
#define AFCD_ASTATS(FN)                                                                  \
	FN(SAMPLED, "sampled", "samples_total", "",                                      \
	   "Packets written into the shadow buffer.")                                    \
	FN(FLOW_NEW, "flow_new", "flows_created_total", "",                              \
	   "Flow-state entries created.")                                                \
	FN(FLOW_FAIL, "flow_fail", "flow_failures_total", "",                            \
	   "Flow-state inserts that failed: the packet went to the overflow aggregate.") \
	FN(SB_FAIL, "sb_fail", "sample_failures_total", "",                              \
	   "Shadow-buffer count inserts that failed.")                                   \
	FN(SAMPLED_BYTES, "sampled_bytes", "sampled_bytes_total", "",                    \
	   "Bytes the samples stand for, max(len, sample_bytes) each: an unbiased "      \
	   "count of the offered bytes (the refresh step's offered load).")             \
	FN(FLOW_COLLIDE, "flow_collide", "flow_id_collisions_total", "",                 \
	   "Packets whose 64-bit flow id was held by another flow's entry: they went to " \
	   "the overflow aggregate (expected ~0: the id is SipHash-1-3 under a per-slot " \
	   "secret key).")                                                               \
	FN(DEFERRED_MARK, "deferred_mark", "deferred_marks_total", "",                   \
	   "Backend qdisc: CE marks set by afcd_egress, before the qdisc, on a flow's "   \
	   "next ECT packet for a mark the qdisc decided on a packet it cannot write "   \
	   "(also counted, when decided, in ecn_marks_total).")

/* Global per-CPU counters, map afcd_global (index = enum value), not per
 * interface (no Prometheus family: they carry no dev). */
#define AFCD_GSTATS(FN)                                                                  \
	FN(UNCONFIGURED, "unconfigured", NULL, "",                                       \
	   "Packets on an interface without a valid config (passed untouched).")         \
	FN(BAD_SLOT, "bad_slot", NULL, "",                                               \
	   "Packets whose config's slot is not initialised for this ifindex.")          \
	FN(FOREIGN_NETNS, "foreign_netns", NULL, "",                                     \
	   "EDT program: packets on a device whose ifindex has a config written from "   \
	   "another network namespace (passed untouched, that interface's state left "   \
	   "alone).")

#define AFCD_ENUM_S_(E, key, fam, lbl, help) AFCD_S_##E,
#define AFCD_ENUM_A_(E, key, fam, lbl, help) AFCD_A_##E,
#define AFCD_ENUM_G_(E, key, fam, lbl, help) AFCD_G_##E,
enum afcd_stat { AFCD_STATS(AFCD_ENUM_S_) AFCD_S__MAX };
enum afcd_astat { AFCD_ASTATS(AFCD_ENUM_A_) AFCD_A__MAX };
enum afcd_gstat { AFCD_GSTATS(AFCD_ENUM_G_) AFCD_G__MAX };

/* Drop reasons reported per flow and to the tracer. */
enum afcd_verdict {
	AFCD_V_PASS = 0,
	AFCD_V_MARK,       /* passed with CE set by the drop law */
	AFCD_V_DROP_AQM,
	AFCD_V_DROP_OVERLIMIT,
	AFCD_V_DROP_POLICE,  /* the fair-rate policer (counted in AQM drops too) */
	AFCD_V_DROP_HIGH,    /* the high-water mark's drop, AFCD_F_HIGH_DROP (counted in
			      * AQM drops too) */
};

/* ---- Config: maps afcd_cfg and afcd_ifslot ----------------------------
 * afcd_cfg: BPF_MAP_TYPE_ARRAY indexed by slot (0..AFCD_MAX_IFACES-1),
 * value struct afcd_config; ifindex 0 marks a free slot. afcd_ifslot:
 * BPF_MAP_TYPE_ARRAY indexed by ifindex (< AFCD_IFSLOT_MAX), value
 * slot + 1 (0 = not configured). Written by the loader or `afcd set`
 * (which also initialise afcd_queue[slot]) in this order: the config,
 * then afcd_ifslot; deleted the other way round. Read-only for the
 * datapath, which takes a config only when its ifindex is the packet's
 * (a slot being reassigned is never read as another interface's). An
 * interface without a valid entry passes packets untouched
 * (AFCD_G_UNCONFIGURED).
 */
struct afcd_config {
	__u32 abi;              /* AFCD_ABI_VERSION, else the entry is ignored */
	__u32 algo;             /* enum afcd_algo */
	__u32 flags;            /* enum afcd_cfg_flags */
	__u32 exponent;         /* k in target_i = target (m_fair/m_i)^k, 1..4, default 3 */
	__u64 rate_bps;         /* virtual queue drain rate, bits/s, [1e3, 1e12]; backend
				 * qdisc: its pacing rate, or 0 (unpaced, AFCD_F_QDISC) */
	__u64 target_ns;        /* CoDel/AFCD target delay; FaLL: unused (global_target) */
	__u64 interval_ns;      /* CoDel interval, > target_ns, <= 10 s */
	__u64 horizon_ns;       /* buffer size in time: sojourn above it is dropped, >= target */
	__u64 rtt_ns;           /* FaLL base (propagation) RTT for RTT/sqrt(N) */
	__u64 ce_threshold_ns;  /* mark ECT packets with sojourn above it; 0 = off */
	__u64 sample_bytes;     /* one sample per sample_bytes on average, >= 1 */
	__u64 stale_after_ns;   /* loader heartbeat age beyond which the datapath falls back */
	__u64 update_period_ns; /* refresh period of m_fair/global target, read by the
				 * refresh timer at each firing (live changes apply) */
	__u64 window_ns;        /* time the shadow buffer covers (derives sample_bytes) */
	__u32 sb_size;          /* shadow buffer slots in use, 1..AFCD_SB_SIZE_MAX */
	__u32 mtu_bytes;        /* largest packet, bytes: FaLL lower clamp 2*tx(MTU) */
	__u32 alpha_milli;      /* AFD controller alpha * 1000 (refresh step) */
	__u32 beta_milli;       /* AFD controller beta * 1000 (refresh step) */
	__u32 slot;             /* this entry's index, repeated for readers of a dump */
	__u32 ifindex;          /* the interface (0: free slot) */
	__u64 netns_cookie;     /* network namespace of the interface (SO_NETNS_COOKIE of
				 * the writer), 0 = unknown. The pins are shared by every
				 * namespace that mounts this bpffs and ifindexes repeat
				 * across namespaces: the loader refuses to touch an entry
				 * written from another namespace, and the datapath takes
				 * it only for a device of this namespace (so none for 0) */
	__u64 burst_ns;         /* pacing credit, ns, [0, AFCD_BURST_MAX_NS]: an empty
				 * queue's clock restarts up to this far behind an
				 * arrival, which then leaves at once for what the link
				 * missed (a burst of up to burst_ns of rate_bps at the
				 * device's speed; a policed flow takes its fair share of
				 * it); 0: from the arrival. EDT clock and qdisc pacing
				 * (ALGORITHM.md sec. 2) */
};
_Static_assert(sizeof(struct afcd_config) == 136, "afcd_config ABI");

/* ---- Estimates: map afcd_est -------------------------------------------
 * BPF_MAP_TYPE_ARRAY indexed by slot, value struct afcd_est. Written every
 * update_period by the refresh step (bpf/afcd_ctl.h: afcd_refresh()),
 * which runs in the kernel from a BPF timer the loader arms (refresher
 * AFCD_REFRESHER_KERNEL), or in the loader process on kernels without
 * BPF timers (AFCD_REFRESHER_LOADER). One writer at a time. The datapath
 * uses m_fair and global_target_ns while now - heartbeat_ns <=
 * stale_after_ns, and computes its own fallback (sb_size / N,
 * RTT / sqrt(N)) otherwise (ALGORITHM.md sec. 3).
 */
enum afcd_refresher {
	AFCD_REFRESHER_NONE   = 0, /* nothing refreshes this slot */
	AFCD_REFRESHER_KERNEL = 1, /* BPF timer armed by the loader (afcd_ctl) */
	AFCD_REFRESHER_LOADER = 2, /* the loader process, every update_period */
};

struct afcd_est {
	__u64 heartbeat_ns;     /* CLOCK_MONOTONIC time of the last refresh, 0 = stopped */
	__u64 global_target_ns; /* FaLL eq. 4.5-4.6, clamped [2 tx(MTU), interval] */
	__u32 m_fair;           /* fair share, samples, [1, sb_size] (eq. 3.4-3.5) */
	__u32 n_flows;          /* N of the datapath (flows with samples) at the refresh */
	__s64 ctrl_milli;       /* AFD controller correction c, samples * 1000 */
	__s64 q_old_milli;      /* previous queue length, samples * 1000 */
	__u64 refreshes;        /* number of refreshes written */
	__u32 n_long;           /* FaLL's N: entities (flows, aggregates) with >= 2 samples */
	__u32 waterline;        /* anchor: max-min fair share of the shadow buffer for the
				 * samples the link can carry, samples (0: nothing sampled) */
	__u64 arrival_bps;      /* offered load, bits/s: EWMA of sampled bytes, tau window/2
				 * (the load's age while it is younger, load_age_ms) */
	__u64 fair_rate_bps;    /* policer rate: fair_level_bps * drain_milli / 1000,
				 * bits/s; 0 = no flow above the fair share (nobody policed) */
	__u32 mice_samples;     /* the mice aggregate's samples at the refresh
				 * (afcd_queue.agg[AFCD_AGG_MICE].m_i) */
	__u32 refresher;        /* enum afcd_refresher of the last refresh */
	/* the refresh step's memory between refreshes */
	__u64 prev_t_ns;        /* time of the previous refresh */
	__u64 prev_sampled;     /* queue astats[AFCD_A_SAMPLED_BYTES] then, bytes */
	__u64 prev_passed;      /* queue stats[AFCD_S_PASSED] then, packets */
	__u64 prev_sojourn_sum_ns; /* queue sojourn_sum_ns then */
	__u64 busy_ns;          /* time spent in the kernel refresh step (timer), ns */
	__u32 drain_milli;      /* the policer's drain factor * 1000, [250, 1000]: below
				 * 1000 while the mean sojourn exceeds min(target, horizon/4) */
	__u32 load_age_ms;      /* ms the offered load has been above 1/64 of the link
				 * rate (0: idle), at most 2^30: the load's average takes
				 * min(window/2, this) as its time constant */
	__u64 fair_level_bps;   /* the water level's rate, falling at once and rising
				 * with time constant window: fair_rate before the drain */
	__u64 crowd_gate_ns;    /* the policer's gate for entities within twice the water
				 * level, ns, [target/4, target] (of the smaller of target
				 * and the law's): raised while the link idles as the
				 * policer drops (afcd_gate_step()) */
	__u64 prev_idle_ns;     /* queue stats[AFCD_S_IDLE_NS] at the previous refresh */
	__u64 prev_police_drop; /* queue stats[AFCD_S_POLICE_DROP] then */
};
_Static_assert(sizeof(struct afcd_est) == 160, "afcd_est ABI");

/* ---- Shadow-buffer scan: map afcd_scan -----------------------------------
 * BPF_MAP_TYPE_ARRAY indexed by slot, value struct afcd_scan. Written by
 * the loader process every AFCD_SCAN_PERIOD_NS: the max-min water level
 * of the shadow buffer for the samples the link can carry (the AFD
 * controller's anchor) and the flow counts, from the histogram of
 * per-flow sample counts the datapath keeps (afcd_sb_hist: one 16 KiB
 * read, no ring read, no sort). Read by the refresh step. The kernel
 * refresh stops (and zeroes afcd_est.heartbeat_ns, so that the datapath
 * falls back) when heartbeat_ns is older than stale_after_ns: a killed
 * loader leaves no refresher behind.
 */
struct afcd_scan {
	__u64 heartbeat_ns;     /* CLOCK_MONOTONIC time of the loader's last scan, 0 = none */
	__u64 scans;            /* scans written */
	__u64 gc_deleted;       /* idle flow-state entries deleted by the loader's GC */
	__u32 waterline;        /* max-min fair share of the ring, samples; 0 = no samples */
	__u32 max_count;        /* largest entity's samples (a flow or an aggregate) */
	__u32 n_long;           /* entities with >= 2 samples (FaLL's N) */
	__u32 waterline_milli;  /* the water level exactly, thousandths of a sample,
				 * [1, sb_size * 1000] (below 1000 where one sample an
				 * entity is more than the link carries), 0 with
				 * waterline 0: the fair rate's (afcd_water.level_milli) */
	__u32 loader_pid;       /* pid of the loader scanning this slot, 0 = none */
	__u32 samples;          /* samples in the ring: sb_size once it is full, fewer
				 * while a fresh slot fills (0: unknown, read as sb_size) */
	__u64 owner;            /* the scanning loader's random token (getrandom(2) at
				 * attach), unique where PIDs of two PID namespaces are
				 * not: a loader whose token this is not has been taken
				 * over; 0 = none */
};
_Static_assert(sizeof(struct afcd_scan) == 56, "afcd_scan ABI");

/* ---- Refresh timer: map afcd_timer ----------------------------------------
 * BPF_MAP_TYPE_ARRAY indexed by slot, value struct afcd_timer: the BPF
 * timer (kernel >= 5.15) whose callback runs the refresh step of the
 * slot every update_period. Armed and disarmed by the loader through the
 * control program; the callback stops by itself when the config, the slot
 * or the loader's scan goes away. The timer field is opaque: reads from
 * user space see it zeroed.
 */
struct afcd_timer {
	struct bpf_timer timer;
	__u32 ifindex;          /* interface refreshed, 0 = disarmed or stopped */
	__u32 slot;             /* its slot (== the array index) */
};
_Static_assert(sizeof(struct afcd_timer) == 24, "afcd_timer ABI");

/* ---- Control program: afcd_ctl.bpf.o ---------------------------------------
 * Run by the loader with BPF_PROG_TEST_RUN on a struct afcd_ctl_frame (the
 * data, read and written back). It acts only on frames with the control EtherType
 * and magic (so that attaching it somewhere by mistake does nothing) and
 * answers in ret, 0 or a negative errno:
 *   ARM      arm the refresh timer of (ifindex, slot), first firing now:
 *            -ENOENT no config for ifindex, -EINVAL slot mismatch,
 *            other: from bpf_timer_init/start (-EOPNOTSUPP, ...)
 *   DISARM   stop it (no error when it was not armed)
 *   GC       delete the interface's flow-state entries idle for more than
 *            idle_ns with no sample in the shadow buffer; deleted = count;
 *            crowd = the flows of its crowd (afcd_in_crowd())
 *   REFRESH  run one refresh step now (tests); same errors as ARM
 *   other op: -EINVAL; a frame that is not a control frame: -EBADMSG
 * now_ns: the clock of GC and REFRESH, 0 = bpf_ktime_get_ns() (tests
 * inject it; the timer always uses the real clock).
 */
#define AFCD_CTL_ETH_P 0x88B5          /* IEEE 802 local experimental EtherType 1 */
#define AFCD_CTL_MAGIC 0xafcdc7e1u

enum afcd_ctl_op {
	AFCD_CTL_ARM = 1,
	AFCD_CTL_DISARM,
	AFCD_CTL_GC,
	AFCD_CTL_REFRESH,
};

struct afcd_ctl_args {
	__u32 magic;            /* AFCD_CTL_MAGIC */
	__u32 op;               /* enum afcd_ctl_op */
	__u32 ifindex;
	__u32 slot;
	__s32 ret;              /* out: 0 or -errno */
	__u32 crowd;            /* GC out: the interface's flows of its own that sent
				 * within its window (afcd_in_crowd()); 0 without
				 * a config */
	__u64 idle_ns;          /* GC: idle time beyond which flow state is deleted */
	__u64 now_ns;           /* GC, REFRESH: clock, 0 = bpf_ktime_get_ns() */
	__u64 deleted;          /* GC out: entries deleted */
};
_Static_assert(sizeof(struct afcd_ctl_args) == 48, "afcd_ctl_args ABI");

/* The frame: an Ethernet header (zero addresses, EtherType AFCD_CTL_ETH_P,
 * network order), two bytes of padding, the arguments. */
struct afcd_ctl_frame {
	__u8  eth_dst[6], eth_src[6];
	__u16 eth_proto;        /* htons(AFCD_CTL_ETH_P) */
	__u16 pad;
	struct afcd_ctl_args a;
};
_Static_assert(sizeof(struct afcd_ctl_frame) == 64, "afcd_ctl_frame ABI");
#define AFCD_CTL_ARGS_OFF 16    /* offsetof(struct afcd_ctl_frame, a) */

/* ---- CoDel state (RFC 8289 sec. 4; include/net/codel.h) ---------------- */
struct afcd_codel_vars {
	__u64 drop_next_ns;   /* time of the next drop while dropping (t_dep clock) */
	__u32 count;          /* drops since entering the dropping state */
	__u32 lastcount;      /* count when the last dropping state ended */
	__u16 rec_inv_sqrt;   /* 1/sqrt(count), Q0.16 (0xffff ~ 1.0) */
	__u8  dropping;       /* 1 while in the dropping state */
	__u8  pad[5];
};
_Static_assert(sizeof(struct afcd_codel_vars) == 24, "afcd_codel_vars ABI");

/* The datapath's last FaLL fallback global target (ALGORITHM.md sec. 3a:
 * RTT / sqrt(N) while no fresh estimate), reused by the packets that
 * follow while N is the same and it is younger than update_period:
 * computing it cost 30 ns a packet. Written and read by any
 * CPU without a lock: the value is one word, and a time torn from it
 * only makes it live up to one more update_period. A config change
 * (rtt, rate, mtu, interval) reaches it within one update_period. */
struct afcd_gt_cache {
	__u64 v;                 /* N << 34 | global target, ns (< 2^34); 0 = empty */
	__u64 at_ns;             /* when it was computed */
};

/* ---- Flow key ------------------------------------------------------------
 * The 5-tuple after at most two VLAN tags, plus the interface. IPv4
 * addresses are stored as IPv4-mapped IPv6 (::ffff:a.b.c.d). ICMP, other
 * protocols and IP fragments have ports 0. Network byte order throughout.
 * family keeps an IPv6 packet whose addresses are IPv4-mapped (invalid on
 * the wire, RFC 4291 sec. 2.5.5.2, but a raw socket can send one) from
 * spelling an IPv4 flow's key. agg is 0 in every key the parser builds;
 * 1 + enum afcd_agg in the key of an aggregate (all its other fields 0 but
 * ifindex), so that no packet can spell an aggregate's key.
 */
struct afcd_flow_key {
	__u32 ifindex;   /* egress interface */
	__u8  proto;     /* IPPROTO_* (L4 protocol after extension headers) */
	__u8  agg;       /* 0: a flow; 1 + enum afcd_agg: that aggregate */
	__u8  family;    /* 4 or 6 (the IP header's version); 0 in an aggregate's key */
	__u8  pad;
	__u16 sport;     /* network byte order */
	__u16 dport;     /* network byte order */
	__u32 saddr[4];  /* IPv6 or IPv4-mapped */
	__u32 daddr[4];
};
_Static_assert(sizeof(struct afcd_flow_key) == 44, "afcd_flow_key ABI");

/* ---- Aggregates ----------------------------------------------------------
 * Traffic that cannot have a flow of its own is not let through without
 * the fairness module: it is sampled, estimated, policed and dropped as
 * one flow per kind, whose state lives in the interface's queue (struct
 * afcd_queue.agg[], always there: no insert can fail). The mice
 * aggregate takes the samples of mice, which keep their own entries for
 * everything else (docs/ALGORITHM.md sec. 3a). Each
 * aggregate shares one fair share among its packets and counts as one
 * entity in N and the water level, so a flood of them cannot shift the
 * estimates of the classified flows. FN(ENUM, name, what goes there).
 */
#define AFCD_AGGS(FN)                                                                   \
	FN(UNCLASSIFIED, "unclassified",                                                 \
	   "frames the parser cannot classify: not IP after two VLAN tags, malformed or " \
	   "truncated IP, more IPv6 extension headers than it follows")                 \
	FN(OVERFLOW, "overflow",                                                         \
	   "IP packets whose flow cannot have its own entry: a flow-id collision or a "  \
	   "failed insert into afcd_flows")                                              \
	FN(MICE, "mice",                                                                 \
	   "the samples of mice: flows whose young entry holds at most one sample and "  \
	   "has carried fewer than 4 samples' bytes (afcd_is_mouse()), so that a sender " \
	   "that rotates ports or spoofs sources is one entity")

#define AFCD_ENUM_AGG_(E, name, doc) AFCD_AGG_##E,
enum afcd_agg { AFCD_AGGS(AFCD_ENUM_AGG_) AFCD_AGG__MAX };

/* ---- Per-flow state: map afcd_flows -------------------------------------
 * BPF_MAP_TYPE_LRU_HASH, key __u64 flow id (afcd_flow_id(): SipHash-1-3 of
 * the flow key under its slot's afcd_queue.flow_id_key), value struct
 * afcd_flow, which holds the full key: an entry belongs to a packet only
 * if its key is the packet's (afcd_flow_key_eq()), so two flows whose ids
 * collide are never merged; the second one goes to the overflow aggregate
 * and is counted (AFCD_A_FLOW_COLLIDE). An 8-byte key instead of the
 * 44-byte one made the kernel's hash and compare 10-20 ns cheaper a
 * packet. AFCD_FLOWS_MAX entries. No lock: counters and m_i are updated
 * with atomics; the CoDel and policer fields by plain writes of the CPU
 * that handles the flow's packet (two CPUs sending one flow at once may
 * lose an update: docs/LIMITS.md). Evictions = AFCD_A_FLOW_NEW - live entries
 * - entries deleted by the loader's garbage collection. The same struct
 * is the state of each aggregate (struct afcd_queue.agg[]).
 */
struct afcd_flow {
	struct afcd_flow_key key; /* the flow (its id is the map key); written once */
	__u32 m_i;             /* samples in the shadow buffer (atomic) */
	struct afcd_codel_vars cv; /* per-flow dropping state */
	__u64 first_above_ns;  /* per-flow first_above_time (0 = below target_i) */
	union {
		__u64 t_last_ns;   /* EDT backend: departure of this flow's last
				    * admitted packet */
		__u64 last_seq;    /* qdisc backend: the sequence number in its FIFO
				    * of its last queued packet (the flow is empty
				    * once the FIFO has dequeued that one) */
	};
	__u64 last_seen_ns;    /* arrival of this flow's last packet (GC) */
	__u64 bytes;           /* admitted, wire bytes */
	__u64 packets;         /* admitted */
	__u64 drops;           /* AQM + overlimit drops */
	__u64 marks;           /* CE marks (drop law and ce_threshold) */
	__u64 last_sojourn_ns; /* sojourn of its last packet (EDT: predicted at arrival;
				  * qdisc: measured at dequeue) */
	__u64 target_ns;       /* last target_i (U64_MAX: never dropped, m_i < m_fair) */
	__u64 vt_ns;           /* policer clock: departure at the fair rate of its last
				  * admitted packet (AFCD_F_POLICE; unused while a mouse) */
	__u64 rng;             /* the flow's splitmix64 state (afcd_rng_next()): its
				  * sampling and AFD coins, seeded by bpf_get_prandom_u32()
				  * when the entry is created (an aggregate's: at its first
				  * packet); a helper call a packet cost 20 ns */
	__u64 police_signal_ns; /* arrival of the packet the policer last CE-marked or
				  * dropped, or the high-water mark last signalled
				  * (a mark below its share, a drop) (0: none): each
				  * signals a flow at most once an interval
				  * (afcd_police_signal_due()) */
	__u32 ce_owed;         /* qdisc backend: CE marks its drop law, policer or
				  * ce_threshold decided on packets it could not write,
				  * which afcd_egress sets on the flow's next ECT packets
				  * (0..AFCD_CE_OWED_MAX; atomic: the qdisc adds, the
				  * classifier takes, afcd_decide.h) */
	__u32 born;            /* when the entry was made: the datapath's clock in units
				  * of 2^20 ns (about 1.05 ms), | 1, modulo 2^32 (52 days;
				  * afcd_flow_born()); 0 for an aggregate, which is never
				  * young (afcd_is_mouse()) */
};
_Static_assert(sizeof(struct afcd_flow) == 176, "afcd_flow ABI");

/* ---- Queue: map afcd_queue ---------------------------------------------
 * BPF_MAP_TYPE_ARRAY indexed by slot, value struct afcd_queue. The
 * configuring tool zeroes the slot and writes its ifindex, its slot and a
 * random flow_id_key; the datapath ignores a slot whose ifindex or slot
 * is not the packet's (AFCD_G_BAD_SLOT). No lock: the datapath updates it
 * with atomics, and the whole queue's CoDel vars (gcv) under the try-lock
 * gcv_busy (bpf/afcd_decide.h). Its counters stats[] and sojourn_sum_ns
 * are the shared part of each counter: see afcd_qpcpu below.
 */
struct afcd_queue {
	__u32 gcv_busy;          /* 1 while a CPU updates gcv (cmpxchg try-lock), else 0 */
	__u32 sb_head;           /* shadow buffer: next slot (mod sb_size), atomic */
	__u64 t_last_ns;         /* EDT: departure time of the last admitted packet
				  * (the virtual queue's clock); qdisc: unused */
	__u64 last_sojourn_ns;   /* sojourn of the last packet (EDT: predicted; qdisc:
				  * measured at dequeue) */
	__u64 max_sojourn_ns;    /* largest sojourn of a packet sent, as last_sojourn_ns */
	__u64 q_first_above_ns;  /* first_above_time of the whole queue (codel, FaLL gate 1) */
	__u64 high_since_ns;     /* arrival at which the queue's sojourn last rose past
				  * half the horizon, 0 once it fell below a quarter of it:
				  * the high-water drop's climb (afcd_high_climb()); a
				  * single-word write on a crossing, its races benign */
	struct afcd_codel_vars gcv; /* whole-queue dropping state (codel, codel_state=global) */
	__u32 maxpacket_bytes;   /* CoDel's maxpacket: the largest wire length seen, at
				  * most mtu_bytes (an aggregate counts as a segment) */
	__s32 n_active;          /* N: flows with samples in the shadow buffer, atomic */
	__u32 ifindex;           /* owner of this slot, written by the configuring tool */
	__u32 slot;              /* this slot's index (its afcd_qpcpu entry), written by
				  * the configuring tool with ifindex */
	__u64 link_bps;          /* backend qdisc: the rate the device drains the queue at,
				  * bits/s: EWMA of the dequeue gaps while backlogged (0 =
				  * not measured yet), summed over the interface's instances
				  * (the leaves of mq: each adds its change, atomically);
				  * what the estimates use when rate_bps is 0 (afcd_rate_of()) */
	__u64 flow_id_key[2];    /* the 128-bit SipHash key of afcd_flow_id() for this slot,
				  * from getrandom(2), written by the configuring tool with
				  * the slot and kept for its life (a new key orphans every
				  * flow entry of the slot); never leaves the kernel but
				  * through the pinned map (mode 0600) */
	__u64 sojourn_sum_ns;    /* sum of the sojourn of the packets sent (as last_sojourn_ns)
				  * (with stats[AFCD_S_PASSED]: the refresh step's mean queue);
				  * shared part, as stats[] */
	__u64 mice_vt_ns;        /* policer clock of the mice aggregate (AFCD_F_POLICE) */
	struct afcd_gt_cache fb_gt; /* FaLL's fallback global target, last computed */
	__u64 stats[AFCD_S__MAX];   /* enum afcd_stat: the shared part (atomic), 0 where
				     * the datapath has per-CPU counters */
	__u64 astats[AFCD_A__MAX];  /* enum afcd_astat, atomic */
	struct afcd_flow agg[AFCD_AGG__MAX]; /* the aggregates' state (enum afcd_agg):
					      * key.agg = 1 + index once used */
};
_Static_assert(sizeof(struct afcd_queue) == 144 + 8 * AFCD_S__MAX + 8 * AFCD_A__MAX +
	       sizeof(struct afcd_flow) * AFCD_AGG__MAX, "afcd_queue ABI");

/* ---- Per-CPU counters: map afcd_qpcpu ----------------------------------
 * BPF_MAP_TYPE_PERCPU_ARRAY indexed by slot: each CPU's own words of the
 * queue's counters (enum afcd_stat, and the sojourn sum), which the
 * datapath adds to without atomics, so that a packet sent below target
 * writes no cache line another CPU writes but the EDT clock's (the queue's
 * t_last_ns). A counter's value is its word in struct afcd_queue plus its
 * words here summed over the possible CPUs (afcd_qpcpu_fold()); the
 * datapath counts in the queue's word only where it finds no entry here
 * (and the host build of the decision code, which has none, always).
 * Readers that take the queue's counters fold first: the refresh step,
 * `afcd stats`, /metrics, the tests.
 */
struct afcd_qpcpu {
	__u64 stats[AFCD_S__MAX];   /* enum afcd_stat: this CPU's part */
	__u64 sojourn_sum_ns;       /* this CPU's part of afcd_queue.sojourn_sum_ns */
};
_Static_assert(sizeof(struct afcd_qpcpu) == 8 + 8 * AFCD_S__MAX, "afcd_qpcpu ABI");

/* q's counters with ncpu CPUs' parts pc[0..ncpu-1] added: what a reader
 * of the queue takes for each counter. */
static inline void afcd_qpcpu_fold(struct afcd_queue *q, const struct afcd_qpcpu *pc,
				   unsigned ncpu)
{
	unsigned c, i;

	for (c = 0; c < ncpu; c++) {
		for (i = 0; i < AFCD_S__MAX; i++)
			q->stats[i] += pc[c].stats[i];
		q->sojourn_sum_ns += pc[c].sojourn_sum_ns;
	}
}

/* ---- Shadow buffer: maps afcd_sb_ring and afcd_sb_count -----------------
 * A sample names its entity by its sample id (afcd_sample_id()): a flow
 * with its own entry by its flow id (afcd_flow_id(), keyed per slot; ids
 * 0..AFCD_AGG__MAX are never a flow's own: such a flow is the overflow
 * aggregate's), aggregate kind by 1 + kind; 0 is an empty slot.
 * afcd_sb_ring: BPF_MAP_TYPE_ARRAY indexed by slot, value the ring of
 * sample ids (entry i written by the (head mod sb_size)-th sample).
 * afcd_sb_count: BPF_MAP_TYPE_HASH, key struct afcd_sb_key, value __u32
 * samples of that entity in its interface's ring; entries exist only while
 * non-zero, so an interface's population is N (AFD's flow table).
 */
struct afcd_sb_ring {
	__u64 slot[AFCD_SB_SIZE_MAX];
};
_Static_assert(sizeof(struct afcd_sb_ring) == 8 * AFCD_SB_SIZE_MAX, "afcd_sb_ring ABI");

/* The key of afcd_sb_count: an entity of one interface's shadow buffer. */
struct afcd_sb_key {
	__u64 sid;       /* sample id, 1..2^64-1 (afcd_sample_id()) */
	__u32 slot;      /* the interface's slot, 0..AFCD_MAX_IFACES-1 */
	__u32 pad;       /* 0 */
};
_Static_assert(sizeof(struct afcd_sb_key) == 16, "afcd_sb_key ABI");

/* afcd_sb_hist: BPF_MAP_TYPE_ARRAY indexed by slot, value struct
 * afcd_sb_hist: n[c] = number of flows holding exactly c samples of the
 * interface's ring (c = 1..AFCD_SB_SIZE_MAX; n[0] unused). The datapath
 * keeps it in step with afcd_sb_count at every sample (atomically, from
 * the old count each change returns); the loader's scan computes the
 * max-min water level from it without reading the ring or sorting:
 * sum_c n[c] = N, each aggregate (the mice one too) one entity.
 */
struct afcd_sb_hist {
	__u32 n[AFCD_SB_SIZE_MAX + 1];
};
_Static_assert(sizeof(struct afcd_sb_hist) == 4 * (AFCD_SB_SIZE_MAX + 1), "afcd_sb_hist ABI");

/* ---- Flow memory: map afcd_seen -----------------------------------------
 * BPF_MAP_TYPE_ARRAY of AFCD_SEEN_SLOTS struct afcd_seen (all interfaces
 * together), indexed by the low bits of the flow id (afcd_flow_id(), keyed
 * per slot, so nobody can aim at a slot), direct-mapped: a flow's first
 * sight outlives its entry in afcd_flows. Written when an entry is made
 * (afcd_seen_born(), bpf/afcd_decide.h) and at a flow's first own sample
 * (afcd_seen_own()), never per packet. A flow whose entry the LRU evicted
 * keeps its first sight as its birth stamp when it comes back within a
 * window and one retransmission timeout (AFCD_SEEN_BACK_NS) or has been a
 * flow of its own (no mouse, or known once before), so past the table's
 * bound a long-lived flow is a mouse (afcd_is_mouse()) only in its first
 * window, as it is inside the bound. A flow whose slot another flow took
 * since is new again, as every flow past the table's bound was without
 * the memory: the memory can only lose flows, and a sender that makes new
 * flows at a high rate only makes it forget (docs/ALGORITHM.md sec. 3a).
 * The slot index is derived from the keyed id, never from a packet's
 * fields directly, and the memory only sets an entry's birth stamp: every
 * flow is still judged by the fairness module. Plain stores: two CPUs making
 * entries in one slot at once may leave one flow's tag with the other's
 * stamps (a flow young a window too long or too short). 16 bytes a slot,
 * 4 MiB in all.
 */
#define AFCD_SEEN_SLOTS (1u << 18)
struct afcd_seen {
	__u32 tag;   /* the flow id's high 32 bits | 1 (afcd_seen_tag()); 0: empty */
	__u32 born;  /* the flow's first sight, afcd_flow_born() units (2^20 ns) */
	__u32 made;  /* when its entry was last made, same units */
	__u32 own;   /* 1: since the slot became its, the flow has taken samples of
		      * its own, as no mouse (afcd_seen_own()), or had its entry
		      * made again while known (afcd_seen_born()); 0 otherwise */
};
_Static_assert(sizeof(struct afcd_seen) == 16, "afcd_seen ABI");

#endif /* AFCD_MAPS_H */
