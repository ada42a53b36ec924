/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_maps.bpf.h - BTF map definitions of the datapath (BPF side only).
 * Types, names, units and semantics are documented in afcd_maps.h; this
 * file only instantiates them. Every map is pinned by name (iproute2 and
 * the loader pin under AFCD_PIN_DIR) so that hand-attached programs, the
 * loader and the tools share one set of maps. State inside is keyed by
 * the interface's slot (config, queue, estimates, ring) or carry the
 * ifindex (flows), so interfaces never share a queue, shadow buffer or
 * flow.
 */
#ifndef AFCD_MAPS_BPF_H
#define AFCD_MAPS_BPF_H

#include "afcd_maps.h"

/* Config per interface slot. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AFCD_MAX_IFACES);
	__type(key, __u32);
	__type(value, struct afcd_config);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} afcd_cfg SEC(".maps");

/* The slot of an interface, indexed by ifindex: slot + 1, 0 = none. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AFCD_IFSLOT_MAX);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} afcd_ifslot SEC(".maps");

/* Loader estimates per interface slot (m_fair, N, global target, heartbeat). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AFCD_MAX_IFACES);
	__type(key, __u32);
	__type(value, struct afcd_est);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} afcd_est SEC(".maps");

/* Virtual queue, whole-queue CoDel state and counters per interface slot. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AFCD_MAX_IFACES);
	__type(key, __u32);
	__type(value, struct afcd_queue);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} afcd_queue SEC(".maps");

/* Flow memory: first sights past the flow table, by flow id's low bits. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AFCD_SEEN_SLOTS);
	__type(key, __u32);
	__type(value, struct afcd_seen);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} afcd_seen SEC(".maps");

/* Per-flow state, LRU-bounded, by flow id (afcd_flow_id()). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, AFCD_FLOWS_MAX);
	__type(key, __u64);
	__type(value, struct afcd_flow);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} afcd_flows SEC(".maps");

/* Shadow buffer ring per interface slot. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AFCD_MAX_IFACES);
	__type(key, __u32);
	__type(value, struct afcd_sb_ring);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} afcd_sb_ring SEC(".maps");

/* Shadow buffer counts (AFD flow table): samples per entity, non-zero only. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AFCD_SB_COUNT_MAX);
	__type(key, struct afcd_sb_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} afcd_sb_count SEC(".maps");

/* Global per-CPU counters (enum afcd_gstat). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, AFCD_G__MAX);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} afcd_global SEC(".maps");

/* Histogram of per-flow sample counts per interface slot (the water level's input). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AFCD_MAX_IFACES);
	__type(key, __u32);
	__type(value, struct afcd_sb_hist);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} afcd_sb_hist SEC(".maps");

/* The loader's heartbeat per interface slot (its pid, GC count). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AFCD_MAX_IFACES);
	__type(key, __u32);
	__type(value, struct afcd_scan);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} afcd_scan SEC(".maps");

/* Each CPU's part of the queue's counters per interface slot (afcd_maps.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, AFCD_MAX_IFACES);
	__type(key, __u32);
	__type(value, struct afcd_qpcpu);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} afcd_qpcpu SEC(".maps");

/* This CPU's part of queue q's counters (its afcd_qpcpu entry, by q->slot,
 * which the datapath has checked against the packet's slot), or NULL. A
 * per-CPU array lookup, which the verifier inlines. The counting macros of
 * bpf/afcd_decide.h take it through AFCD_QPCPU. */
static __always_inline struct afcd_qpcpu *afcd_qpcpu_of(const struct afcd_queue *q)
{
	__u32 slot = q->slot;	/* on the stack: Linux 6.1 takes no map key from a map value */

	return bpf_map_lookup_elem(&afcd_qpcpu, &slot);
}
#define AFCD_QPCPU(q) afcd_qpcpu_of(q)

/* Refresh timer per interface slot (used by afcd_ctl.bpf.c only; every
 * object declares it so that any of them can create the full set of pins). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AFCD_MAX_IFACES);
	__type(key, __u32);
	__type(value, struct afcd_timer);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} afcd_timer SEC(".maps");

/* The slot whose config is ifindex's, found by scanning the slots, or
 * -1. A global function: the verifier checks it once, and its caller
 * continues with one state (an unknown slot) instead of one per slot. */
__attribute__((noinline)) int afcd_slot_scan(__u32 ifindex)
{
	struct afcd_config *c;
	__u32 key;
	__u64 n;

	/* the counter stays in a register and the key is a copy: a counter
	 * whose address the lookup takes lives on the stack, where the
	 * verifier loses its bound */
	for (n = 0; n < AFCD_MAX_IFACES; n++) {
		key = (__u32)n;
		c = bpf_map_lookup_elem(&afcd_cfg, &key);
		if (c && c->ifindex == ifindex)
			return (int)n;
	}
	return -1;
}

/* The config of ifindex and its slot: afcd_ifslot[ifindex], or for an
 * ifindex beyond it afcd_slot_scan(); NULL when the interface has none
 * (or its slot is being reassigned). Array lookups only, which the
 * verifier inlines: no hash of the ifindex per packet. */
static __always_inline struct afcd_config *afcd_cfg_of(__u32 ifindex, __u32 *slot)
{
	struct afcd_config *c;
	__u32 *s, i;

	if (ifindex < AFCD_IFSLOT_MAX) {
		s = bpf_map_lookup_elem(&afcd_ifslot, &ifindex);
		if (!s || !*s)
			return 0;
		i = *s - 1;
	} else {
		int r = afcd_slot_scan(ifindex);

		if (r < 0)
			return 0;
		i = (__u32)r;
	}
	/* one range for i from either path, or the verifier walks the rest
	 * of the program twice */
	if (i >= AFCD_MAX_IFACES)
		return 0;
	c = bpf_map_lookup_elem(&afcd_cfg, &i);
	if (!c || c->ifindex != ifindex)
		return 0;
	*slot = i;
	return c;
}

#endif /* AFCD_MAPS_BPF_H */
