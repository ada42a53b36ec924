// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench.bpf.c - baselines for `make bench` (tools/afcd-bench.c), measured
 * in the same run as afcd_egress with BPF_PROG_TEST_RUN:
 *   bench_empty:   returns TC_ACT_OK, nothing else (the floor);
 *   bench_clock:   the clock alone: bpf_ktime_get_ns() into skb->tstamp
 *                  (the part of every EDT program no design avoids);
 *   bench_edt_min: a minimal EDT program: one hash lookup of the
 *                  interface's t_last, tx = len * 8e9 / rate, stamp,
 *                  store (lock-free, as EDT rate limiters usually are);
 *   bench_edt_lock: the same with the clock under a bpf_spin_lock in the
 *                  hash value (what a locked datapath pays at least).
 * Not for deployment.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define TC_ACT_OK 0

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct bench_edt {
	__u64 t_last_ns;
	__u64 rate_bps;
	struct bpf_spin_lock lock;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct bench_edt);
} bench_state SEC(".maps");

SEC("tc")
int bench_empty(struct __sk_buff *skb)
{
	return TC_ACT_OK;
}

SEC("tc")
int bench_clock(struct __sk_buff *skb)
{
	skb->tstamp = bpf_ktime_get_ns();
	return TC_ACT_OK;
}

SEC("tc")
int bench_edt_min(struct __sk_buff *skb)
{
	__u32 ifindex = skb->ifindex;
	struct bench_edt *s = bpf_map_lookup_elem(&bench_state, &ifindex);
	__u64 now, t;

	if (!s || !s->rate_bps)
		return TC_ACT_OK;
	now = bpf_ktime_get_ns();
	t = s->t_last_ns > now ? s->t_last_ns : now;
	t += (__u64)skb->len * 8000000000ULL / s->rate_bps;
	s->t_last_ns = t;
	skb->tstamp = t;
	return TC_ACT_OK;
}

SEC("tc")
int bench_edt_lock(struct __sk_buff *skb)
{
	__u32 ifindex = skb->ifindex;
	struct bench_edt *s = bpf_map_lookup_elem(&bench_state, &ifindex);
	__u64 now, t, tx;

	if (!s || !s->rate_bps)
		return TC_ACT_OK;
	now = bpf_ktime_get_ns();
	tx = (__u64)skb->len * 8000000000ULL / s->rate_bps;
	bpf_spin_lock(&s->lock);
	t = s->t_last_ns > now ? s->t_last_ns : now;
	t += tx;
	s->t_last_ns = t;
	bpf_spin_unlock(&s->lock);
	skb->tstamp = t;
	return TC_ACT_OK;
}
