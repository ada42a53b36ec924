// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * afcd_ctl.bpf.c - the loader's in-kernel half: a tc program that is never
 * attached, which the loader runs with BPF_PROG_TEST_RUN on a control
 * frame (struct afcd_ctl_frame, maps/afcd_maps.h), and the BPF timer it
 * arms.
 *
 * Why: FaLL refreshes m_fair and global_target every 1 ms (Table 4.1).
 * Waking a user-space process 1000 times a second costs more than the
 * refresh itself (measured: a bare 1 kHz clock_nanosleep loop takes 2.6 %
 * of a core on the 2-core test machine, the loader's three map syscalls
 * per refresh another 1.5 %). The refresh step (bpf/afcd_ctl.h) is a few
 * hundred instructions of integer arithmetic, so it runs here, from a
 * timer callback every update_period; the loader process keeps the water
 * level (two passes over the histogram of sample counts, every 50 ms,
 * into afcd_scan) and calls GC here, where walking the flow map copies
 * nothing to user space.
 *
 * The timer stops itself when the interface's config or slot goes away or
 * when the loader's scan is older than stale_after_ns (a killed loader):
 * then it zeroes the estimate's heartbeat and the datapath falls back to
 * its own m_fair = sb_size / N (ALGORITHM.md sec. 3).
 *
 * Needs kernel >= 5.19 (BPF timers, per-CPU lookups of other CPUs'
 * values); the loader falls back to refreshing from user space when
 * loading or arming fails.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define AFCD_INLINE static __always_inline
#include "afcd_maps.bpf.h"
#include "afcd_ctl.h"
#include "afcd_decide.h"

#define AFCD_CLOCK_MONOTONIC 1
#define AFCD_ENOENT 2
#define AFCD_EBUSY  16
#define AFCD_EINVAL 22
#define AFCD_EBADMSG 74
#define TC_ACT_OK   0
#define TC_ACT_SHOT 2
/* Shortest timer period: update_period is validated by the loader; this
 * only keeps a corrupted config from spinning the timer. */
#define AFCD_TIMER_MIN_NS 100000ULL

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The interface's config, queue, estimate and scan, all consistent with
 * (ifindex, slot); 0 or -errno. */
struct afcd_ctl_maps {
	struct afcd_config *c;
	struct afcd_queue *q;
	struct afcd_est *e;
	struct afcd_scan *s;
};

AFCD_INLINE int afcd_ctl_lookup(__u32 ifindex, __u32 slot, struct afcd_ctl_maps *m)
{
	__u32 cslot = 0;

	m->c = afcd_cfg_of(ifindex, &cslot);
	if (!m->c || m->c->abi != AFCD_ABI_VERSION)
		return -AFCD_ENOENT;
	if (cslot != slot)
		return -AFCD_EINVAL;
	m->q = bpf_map_lookup_elem(&afcd_queue, &slot);
	m->e = bpf_map_lookup_elem(&afcd_est, &slot);
	m->s = bpf_map_lookup_elem(&afcd_scan, &slot);
	if (!m->q || !m->e || !m->s)
		return -AFCD_ENOENT;
	if (m->q->ifindex != ifindex || m->q->slot != slot)
		return -AFCD_EINVAL;
	return 0;
}

/* The counters the refresh step reads, whole: the queue's words plus every
 * CPU's part (maps/afcd_maps.h, afcd_qpcpu). The bpf_loop() callback adds
 * CPU cpu's part and stops past the last possible CPU, where the lookup
 * finds none. */
#define AFCD_CPUS_MAX 8192	/* the kernel's NR_CPUS bound on x86 */
struct afcd_qsum {
	__u32 slot;
	struct afcd_refresh_counts n;
};

static long afcd_qsum_cpu(__u32 cpu, void *ctx)
{
	struct afcd_qsum *x = ctx;
	struct afcd_qpcpu *pc = bpf_map_lookup_percpu_elem(&afcd_qpcpu, &x->slot, cpu);

	if (!pc)
		return 1;
	x->n.passed += pc->stats[AFCD_S_PASSED];
	x->n.sojourn_sum_ns += pc->sojourn_sum_ns;
	x->n.idle_ns += pc->stats[AFCD_S_IDLE_NS];
	x->n.police_drop += pc->stats[AFCD_S_POLICE_DROP];
	return 0;
}

/* afcd_refresh() of m's interface at now, with its counters whole. */
AFCD_INLINE void afcd_ctl_refresh(struct afcd_ctl_maps *m, __u32 slot, __u64 now)
{
	struct afcd_qsum x = { .slot = slot };

	afcd_refresh_counts_of(m->q, &x.n);
	bpf_loop(AFCD_CPUS_MAX, afcd_qsum_cpu, &x, 0);
	afcd_refresh(m->c, m->q, &x.n, m->s, m->e, now);
}

/* Timer callback (softirq): one refresh, then re-arm after update_period. */
static int afcd_timer_fire(void *map, __u32 *key, struct afcd_timer *t)
{
	__u64 t0 = bpf_ktime_get_ns(), period;
	struct afcd_ctl_maps m;

	if (!t->ifindex || afcd_ctl_lookup(t->ifindex, t->slot, &m))
		goto stop;
	if (!m.s->heartbeat_ns || (__s64)(t0 - m.s->heartbeat_ns) > (__s64)m.c->stale_after_ns) {
		/* the loader stopped scanning: let the datapath fall back now */
		m.e->heartbeat_ns = 0;
		m.e->refresher = AFCD_REFRESHER_NONE;
		goto stop;
	}
	afcd_ctl_refresh(&m, t->slot, t0);
	m.e->refresher = AFCD_REFRESHER_KERNEL;
	period = m.c->update_period_ns;
	if (period < AFCD_TIMER_MIN_NS)
		period = AFCD_TIMER_MIN_NS;
	bpf_timer_start(&t->timer, period, 0);
	m.e->busy_ns += bpf_ktime_get_ns() - t0;
	return 0;
stop:
	t->ifindex = 0;
	return 0;
}

/* GC: bpf_for_each_map_elem over the flow map. */
struct afcd_gc_ctx {
	__u64 now_ns, idle_ns, deleted, window_ns;
	__u32 ifindex, crowd;
};

static long afcd_gc_one(void *map, __u64 *id, struct afcd_flow *f, struct afcd_gc_ctx *g)
{
	if (f->key.ifindex != g->ifindex)
		return 0;
	if (afcd_gc_idle(f, g->now_ns, g->idle_ns)) {
		if (!bpf_map_delete_elem(map, id))
			g->deleted++;
	} else if (g->window_ns && afcd_in_crowd(f, g->now_ns, g->window_ns)) {
		g->crowd++;
	}
	return 0;
}

/* The operation of a control frame's arguments (see afcd_maps.h). */
AFCD_INLINE int afcd_ctl_op(struct afcd_ctl_args *a)
{
	__u32 slot = a->slot, ifindex = a->ifindex;
	__u64 now = a->now_ns ? a->now_ns : bpf_ktime_get_ns();
	struct afcd_ctl_maps m;
	struct afcd_timer *t;
	int err;

	switch (a->op) {
	case AFCD_CTL_ARM:
		err = afcd_ctl_lookup(ifindex, slot, &m);
		t = bpf_map_lookup_elem(&afcd_timer, &slot);
		if (!err && !t)
			err = -AFCD_ENOENT;
		if (err)
			break;
		err = bpf_timer_init(&t->timer, &afcd_timer, AFCD_CLOCK_MONOTONIC);
		if (err && err != -AFCD_EBUSY)     /* EBUSY: initialised by a previous loader */
			break;
		t->ifindex = ifindex;
		t->slot = slot;
		err = bpf_timer_set_callback(&t->timer, afcd_timer_fire);
		if (!err)
			err = bpf_timer_start(&t->timer, 0, 0);
		if (err)
			t->ifindex = 0;
		break;
	case AFCD_CTL_DISARM:
		t = bpf_map_lookup_elem(&afcd_timer, &slot);
		err = 0;
		if (t) {
			t->ifindex = 0;
			bpf_timer_cancel(&t->timer);   /* -EINVAL when never initialised */
		}
		break;
	case AFCD_CTL_GC: {
		struct afcd_gc_ctx g = { .now_ns = now, .idle_ns = a->idle_ns, .ifindex = ifindex };
		__u32 cslot = 0;
		struct afcd_config *c = afcd_cfg_of(ifindex, &cslot);

		if (c)
			g.window_ns = c->window_ns;
		bpf_for_each_map_elem(&afcd_flows, afcd_gc_one, &g, 0);
		a->deleted = g.deleted;
		a->crowd = g.crowd;
		err = 0;
		break;
	}
	case AFCD_CTL_REFRESH:
		err = afcd_ctl_lookup(ifindex, slot, &m);
		if (!err)
			afcd_ctl_refresh(&m, slot, now);
		break;
	default:
		err = -AFCD_EINVAL;
	}
	return err;
}

SEC("tc")
int afcd_ctl(struct __sk_buff *skb)
{
	struct afcd_ctl_args a;

	if (skb->protocol != bpf_htons(AFCD_CTL_ETH_P) ||
	    bpf_skb_load_bytes(skb, AFCD_CTL_ARGS_OFF, &a, sizeof(a)))
		return TC_ACT_OK;              /* not a control frame: not ours */
	if (a.magic != AFCD_CTL_MAGIC)
		a.ret = -AFCD_EBADMSG;
	else
		a.ret = afcd_ctl_op(&a);
	bpf_skb_store_bytes(skb, AFCD_CTL_ARGS_OFF, &a, sizeof(a), 0);
	return TC_ACT_SHOT;
}
