// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Reading an interface's state; see snapshot.h. */
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "afcd_decide.h"
#include "snapshot.h"
#include "sys.h"

int snapshot_read(struct pins *p, __u32 ifindex, struct snapshot *s)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *v = calloc(ncpu > 0 ? ncpu : 1, sizeof(__u64));
	__u32 k;
	int i;

	memset(s, 0, sizeof(*s));
	if (!v || cfg_lookup(p, ifindex, &s->c)) {
		free(v);
		return -1;
	}
	if (queue_read(p, s->c.slot, &s->q) ||
	    bpf_map_lookup_elem(p->est, &s->c.slot, &s->e) ||
	    bpf_map_lookup_elem(p->scan, &s->c.slot, &s->s)) {
		free(v);
		return -1;
	}
	for (k = 0; k < AFCD_G__MAX; k++) {
		if (bpf_map_lookup_elem(p->global, &k, v))
			continue;
		for (i = 0; i < ncpu; i++)
			s->global[k] += v[i];
	}
	free(v);
	s->t_ns = now_ns();
	/* the estimate the datapath judges a packet against now, by its own
	 * rule (afcd_fair_now()) */
	if (afcd_algo_row(s->c.algo).traits & AFCD_T_FAIR) {
		afcd_fair_now(&s->c, &s->e, afcd_rate_of(&s->c, &s->q), s->q.n_active,
			      s->q.agg[AFCD_AGG_MICE].m_i,
			      s->t_ns, NULL, &s->fair);
		if (!(afcd_algo_row(s->c.algo).traits & AFCD_T_GTARGET))
			s->fair.gt_ns = 0; /* the refresh step's value, unused */
	}
	return 0;
}

double delay_now_ns(const struct snapshot *s)
{
	return s->q.t_last_ns > s->t_ns ? (double)(s->q.t_last_ns - s->t_ns) : 0.0;
}

bool est_fresh(const struct snapshot *s)
{
	return s->e.heartbeat_ns && s->t_ns - s->e.heartbeat_ns <= s->c.stale_after_ns;
}

/* Who refreshes the estimates: "kernel" (the loader's BPF timer),
 * "loader" (the loader process), "none" (stale: datapath fallback). */
const char *refresher_name(const struct snapshot *s)
{
	if (!est_fresh(s))
		return "none";
	return s->e.refresher == AFCD_REFRESHER_KERNEL ? "kernel" :
	       s->e.refresher == AFCD_REFRESHER_LOADER ? "loader" : "none";
}

struct rows_arg {
	struct flow_row *rows;
	size_t n, cap;
};

static void row_add(int fd, __u64 id, struct afcd_flow *f, void *arg)
{
	struct rows_arg *a = arg;

	(void)fd;
	(void)id;
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 256;
		struct flow_row *r = realloc(a->rows, cap * sizeof(*r));

		if (!r)
			return;
		a->rows = r;
		a->cap = cap;
	}
	a->rows[a->n].f = *f;
	a->rows[a->n].rate_bps = 0;
	a->n++;
}

/* All flow-state entries of ifindex and the aggregates that have seen a
 * packet (a copy); *n set to the count. */
struct flow_row *flows_read(struct pins *p, __u32 ifindex, size_t *n)
{
	struct rows_arg a = {0};
	struct afcd_config c;
	struct afcd_queue q;
	unsigned i;

	flows_each(p, ifindex, row_add, &a);
	if (!cfg_lookup(p, ifindex, &c) && !bpf_map_lookup_elem(p->queue, &c.slot, &q) &&
	    q.ifindex == ifindex)
		for (i = 0; i < AFCD_AGG__MAX; i++)
			if (q.agg[i].key.agg)
				row_add(-1, 0, &q.agg[i], &a);
	*n = a.n;
	return a.rows;
}

static int row_by_rate(const void *a, const void *b)
{
	const struct flow_row *x = a, *y = b;

	if (x->rate_bps != y->rate_bps)
		return x->rate_bps < y->rate_bps ? 1 : -1;
	return x->f.bytes < y->f.bytes ? 1 : x->f.bytes > y->f.bytes ? -1 : 0;
}

static void flow_none(int fd, __u64 id, struct afcd_flow *f, void *arg)
{
	(void)fd;
	(void)id;
	(void)f;
	(void)arg;
}

unsigned long long count_iface_flows(struct pins *p, __u32 ifindex)
{
	long n = flows_each(p, ifindex, flow_none, NULL);

	return n > 0 ? (unsigned long long)n : 0;
}


static int row_by_key(const void *a, const void *b)
{
	return memcmp(&((const struct flow_row *)a)->f.key, &((const struct flow_row *)b)->f.key,
		      sizeof(struct afcd_flow_key));
}

/* r0 is sorted by key here (it is the earlier reading, read only to join
 * on): n log n in all, where a loop over both readings took 8 s at 65,536
 * flows. */
void flows_rate(struct flow_row *r1, size_t n1, struct flow_row *r0, size_t n0, double dt_s)
{
	size_t i;

	if (n0)
		qsort(r0, n0, sizeof(*r0), row_by_key);
	for (i = 0; i < n1 && dt_s > 0 && n0; i++) {
		const struct flow_row *m = bsearch(&r1[i], r0, n0, sizeof(*r0), row_by_key);

		if (m)
			r1[i].rate_bps = (double)(r1[i].f.bytes - m->f.bytes) * 8 / dt_s;
	}
	if (n1)
		qsort(r1, n1, sizeof(*r1), row_by_rate);
}
