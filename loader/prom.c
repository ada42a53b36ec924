// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The /metrics page; see prom.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "prom.h"
#include "qjson.h"

struct prom_out {
	char *b;
	size_t n, o;
};

static void prom_printf(struct prom_out *p, const char *fmt, ...)
{
	va_list ap;

	if (p->o >= p->n)
		return;
	va_start(ap, fmt);
	p->o += (size_t)vsnprintf(p->b + p->o, p->n - p->o, fmt, ap);
	va_end(ap);
}

static void prom_family(struct prom_out *p, const char *name, const char *type,
			const char *help)
{
	prom_printf(p, "# HELP afcd_%s %s\n# TYPE afcd_%s %s\n", name, help, name, type);
}

/* One sample; label "" or `key="value"`. */
static void prom_sample(struct prom_out *p, const char *name, const char *dev, const char *label,
			double v)
{
	/* counters exactly (below 2^53), fractions with 9 significant digits */
	prom_printf(p, v == (double)(__u64)v && v < 9007199254740992.0 ?
		    "afcd_%s{dev=\"%s\"%s%s} %.0f\n" : "afcd_%s{dev=\"%s\"%s%s} %.9g\n",
		    name, dev, *label ? "," : "", label, v);
}

/* A counter list, flattened: family, label, help, value. */
struct prom_counter { const char *fam, *label, *help; __u64 v; };

#define PROM_S_(E, key, fam, lbl, help) { fam, lbl, help, q->stats[AFCD_S_##E] },
#define PROM_A_(E, key, fam, lbl, help) { fam, lbl, help, q->astats[AFCD_A_##E] },

/* Every family once, its HELP from its first entry, then all its samples
 * (entries of one family need not be adjacent in the list). */
static void prom_counters(struct prom_out *p, const char *dev, const struct prom_counter *c,
			  size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		bool seen = false;

		if (!c[i].fam)
			continue;
		for (j = 0; j < i && !seen; j++)
			seen = c[j].fam && !strcmp(c[j].fam, c[i].fam);
		if (seen)
			continue;
		prom_family(p, c[i].fam, "counter", c[i].help);
		for (j = i; j < n; j++)
			if (c[j].fam && !strcmp(c[j].fam, c[i].fam))
				prom_sample(p, c[j].fam, dev, c[j].label, (double)c[j].v);
	}
}

/* The aggregates (afcd_maps.h): one family per counter, labelled by kind. */
static void prom_aggregates(struct prom_out *p, const char *dev, const struct afcd_queue *q)
{
	static const struct { const char *fam, *help; size_t off; } f[] = {
		{ "aggregate_packets_total", "Packets admitted of each aggregate: kind unclassified "
		  "(frames the parser cannot classify), overflow (flows without an entry of their "
		  "own); each is one flow of the fairness module.", offsetof(struct afcd_flow, packets) },
		{ "aggregate_bytes_total", "Wire bytes admitted of each aggregate.",
		  offsetof(struct afcd_flow, bytes) },
		{ "aggregate_drops_total", "Packets of each aggregate dropped (drop law, policer, "
		  "horizon).", offsetof(struct afcd_flow, drops) },
	};
	char label[64];
	size_t i, k;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		prom_family(p, f[i].fam, "counter", f[i].help);
		for (k = 0; k < AFCD_AGG__MAX; k++) {
			snprintf(label, sizeof(label), "kind=\"%s\"", qjson_agg_names[k]);
			prom_sample(p, f[i].fam, dev, label,
				    (double)*(const __u64 *)((const char *)&q->agg[k] + f[i].off));
		}
	}
}

size_t prom_render(char *b, size_t n, const char *dev, const struct snapshot *s)
{
	const struct afcd_queue *q = &s->q;
	struct prom_out p = { .b = b, .n = n };
	const struct prom_counter counters[] = { AFCD_STATS(PROM_S_) AFCD_ASTATS(PROM_A_) };
	__u32 m_fair = s->fair.m_fair;
	__u64 gt = s->fair.gt_ns;
	size_t i;

	const struct { const char *name, *type, *help; double v; } gauges[] = {
		{ "queue_delay_seconds", "gauge", "Virtual queue delay now.",
		  delay_now_ns(s) / 1e9 },
		{ "queue_delay_max_seconds", "gauge", "Largest predicted sojourn admitted.",
		  (double)q->max_sojourn_ns / 1e9 },
		{ "active_flows", "gauge", "N, flows with samples in the shadow buffer.",
		  (double)q->n_active },
		{ "fair_share_samples", "gauge", "m_fair in shadow-buffer samples.", (double)m_fair },
		{ "shadow_buffer_slots", "gauge", "sb_size, the shadow buffer's slots now "
		  "(sb_grow grows it).", (double)s->c.sb_size },
		{ "global_target_seconds", "gauge", "FaLL global target delay RTT/sqrt(N).",
		  (double)gt / 1e9 },
		{ "rate_bytes_per_second", "gauge", "Drain rate: the rate parameter / 8, or without "
		  "one (backend qdisc) the link's rate measured at dequeue / 8.",
		  (double)afcd_rate_of(&s->c, &s->q) / 8 },
		{ "estimate_refreshes_total", "counter", "Refreshes of m_fair and the global target.",
		  (double)s->e.refreshes },
		{ "queue_idle_seconds_total", "counter", "Time the virtual queue stood empty "
		  "(the EDT backend's rate left unused).", (double)q->stats[AFCD_S_IDLE_NS] / 1e9 },
	};

	prom_counters(&p, dev, counters, sizeof(counters) / sizeof(counters[0]));
	prom_aggregates(&p, dev, q);
	for (i = 0; i < sizeof(gauges) / sizeof(gauges[0]); i++) {
		prom_family(&p, gauges[i].name, gauges[i].type, gauges[i].help);
		prom_sample(&p, gauges[i].name, dev, "", gauges[i].v);
	}
	return p.o < n ? p.o : n;
}

size_t prom_render_ctx(char *buf, size_t n, void *arg)
{
	struct prom_ctx *m = arg;
	struct snapshot s;

	if (!__atomic_load_n(&m->ready, __ATOMIC_ACQUIRE) || snapshot_read(m->p, m->ifindex, &s))
		return 0;
	return prom_render(buf, n, m->dev, &s);
}
