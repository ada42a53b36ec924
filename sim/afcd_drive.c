// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The datapath's own programs on a simulated clock; see afcd_drive.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "afcd_config.h"
#include "afcd_ctl.h"
#include "afcd.skel.h"
#include "afcd_ctl.skel.h"
#include "afcd_drive.h"
#include "params.h"
#include "qjson.h"
#include "qread.h"
#include "sys.h"

#define TC_ACT_SHOT 2
#define DRIVE_IFINDEX 1        /* the loopback device: test runs' skb->dev */
#define DRIVE_FRAME_MAX 256

struct afcd_drive {
	struct afcd_bpf *skel;
	struct afcd_ctl_bpf *ctl;
	int prog_fd, ctl_fd;
	__u32 slot;
	struct afcd_config c;
	struct afcd_scan sc;
	struct afcd_sb_hist hist;  /* the scan's copy of afcd_sb_hist */
	__u64 runs, run_ns;
	struct afcd_sb_grow_state sb_grow; /* afcd_sb_grow()'s state between scans */
	__u32 crowd;               /* the GC's last count of the crowd (afcd_in_crowd()) */
};

/* The config the loader writes for these parameters (loader/params.c). */
static int config_of(const char *const *kv, int n, struct afcd_config *c, char *err,
		     size_t errlen)
{
	struct params p;
	int i;

	memset(&p, 0, sizeof(p));
	if (n % 2) {
		snprintf(err, errlen, "parameters come in name value pairs");
		return -1;
	}
	for (i = 0; i < n; i += 2)
		if (param_set(&p, kv[i], kv[i + 1], err, errlen))
			return -1;
	params_complete(&p);
	if (params_validate(&p, err, errlen))
		return -1;
	*c = p.c;
	return 0;
}

__u64 afcd_drive_scan_period_ns(void)
{
	return AFCD_SCAN_PERIOD_NS;
}

__u64 afcd_drive_gc_period_ns(void)
{
	return AFCD_GC_PERIOD_NS;
}

__u64 afcd_drive_gc_idle_ns(void)
{
	return AFCD_GC_IDLE_NS;
}

__u64 afcd_drive_update_period_ns(const struct afcd_drive *d)
{
	return d->c.update_period_ns;
}

__u64 afcd_drive_rate_bps(const struct afcd_drive *d)
{
	return d->c.rate_bps;
}

/* The control program on the egress program's maps (as the loader's
 * control program shares the pinned ones). */
static int ctl_load(struct afcd_drive *d)
{
	struct bpf_map *m;

	d->ctl = afcd_ctl_bpf__open();
	if (!d->ctl)
		return -1;
	bpf_object__for_each_map(m, d->ctl->obj) {
		struct bpf_map *dm = bpf_object__find_map_by_name(d->skel->obj, bpf_map__name(m));

		bpf_map__set_pin_path(m, NULL);
		if (!dm || bpf_map__reuse_fd(m, bpf_map__fd(dm)))
			return -1;
	}
	if (afcd_ctl_bpf__load(d->ctl))
		return -1;
	d->ctl_fd = bpf_program__fd(d->ctl->progs.afcd_ctl);
	return 0;
}

/* Write the config, the interface's index and its queue as the loader's
 * config_write does (slot 0, the flow-id key from the seed). */
static int config_write(struct afcd_drive *d, __u64 seed)
{
	struct afcd_queue q;
	__u32 ifindex = DRIVE_IFINDEX, v = d->slot + 1;

	d->c.abi = AFCD_ABI_VERSION;
	d->c.slot = d->slot;
	d->c.ifindex = ifindex;
	d->c.netns_cookie = netns_cookie();
	memset(&q, 0, sizeof(q));
	q.ifindex = ifindex;
	q.slot = d->slot;
	q.flow_id_key[0] = seed * 0x9e3779b97f4a7c15ULL + 1;
	q.flow_id_key[1] = seed ^ 0x5851f42d4c957f2dULL;
	if (bpf_map__update_elem(d->skel->maps.afcd_queue, &d->slot, 4, &q, sizeof(q), BPF_ANY) ||
	    bpf_map__update_elem(d->skel->maps.afcd_cfg, &d->slot, 4, &d->c, sizeof(d->c),
				 BPF_ANY) ||
	    bpf_map__update_elem(d->skel->maps.afcd_ifslot, &ifindex, 4, &v, 4, BPF_ANY))
		return -1;
	return 0;
}

/* The flow table's size when kv's last pair is flow-table N (afcd attach
 * --flow-table: AFCD_FLOWS_MIN .. AFCD_FLOWS_LIMIT entries), that pair
 * taken off *n;
 * 0 when there is none. -1 with the reason in err for a bad N. */
static int flow_table_of(const char *const *kv, int *n, __u32 *table, char *err,
			 size_t errlen)
{
	unsigned long v;
	char *end;

	*table = 0;
	if (*n < 2 || strcmp(kv[*n - 2], "flow-table"))
		return 0;
	errno = 0;
	v = strtoul(kv[*n - 1], &end, 10);
	if (errno || *end || !afcd_flow_table_ok(v)) {
		snprintf(err, errlen, "flow-table %s: the flow table takes %u to %u entries",
			 kv[*n - 1], AFCD_FLOWS_MIN, AFCD_FLOWS_LIMIT);
		return -1;
	}
	*table = (__u32)v;
	*n -= 2;
	return 0;
}

struct afcd_drive *afcd_drive_open(const char *const *kv, int n, __u64 seed, char *err,
				   size_t errlen)
{
	struct afcd_drive *d = calloc(1, sizeof(*d));
	struct bpf_map *m;
	__u32 table;

	if (!d) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (flow_table_of(kv, &n, &table, err, errlen) || config_of(kv, n, &d->c, err, errlen)) {
		free(d);
		return NULL;
	}
	d->skel = afcd_bpf__open();
	if (!d->skel) {
		snprintf(err, errlen, "cannot open afcd.bpf.o: %s", strerror(errno));
		goto fail;
	}
	bpf_object__for_each_map(m, d->skel->obj)
		bpf_map__set_pin_path(m, NULL);
	d->skel->rodata->afcd_test_clock = 1;
	if (table && bpf_map__set_max_entries(d->skel->maps.afcd_flows, table)) {
		snprintf(err, errlen, "cannot size the flow table: %s", strerror(errno));
		goto fail;
	}
	if (afcd_bpf__load(d->skel)) {
		snprintf(err, errlen, "cannot load afcd.bpf.o (root, BPF with BTF?): %s",
			 strerror(errno));
		goto fail;
	}
	d->skel->bss->afcd_test_rand_state = seed * 0x2545f4914f6cdd1dULL + 0x9e3779b97f4a7c15ULL;
	d->prog_fd = bpf_program__fd(d->skel->progs.afcd_egress);
	if (ctl_load(d)) {
		snprintf(err, errlen, "cannot load afcd_ctl.bpf.o: %s", strerror(errno));
		goto fail;
	}
	if (config_write(d, seed)) {
		snprintf(err, errlen, "cannot write the config: %s", strerror(errno));
		goto fail;
	}
	return d;
fail:
	afcd_drive_close(d);
	return NULL;
}

int afcd_drive_egress(struct afcd_drive *d, __u64 now_ns, void *frame, __u32 len,
		      __u32 wire_len, __u64 *t_dep_ns)
{
	struct __sk_buff ctx_in = { .ifindex = DRIVE_IFINDEX, .wire_len = wire_len }, ctx_out = {};
	__u8 out[DRIVE_FRAME_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = len,
		    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx_in,
		    .ctx_size_in = sizeof(ctx_in), .ctx_out = &ctx_out,
		    .ctx_size_out = sizeof(ctx_out), .repeat = 1);

	if (len > DRIVE_FRAME_MAX || wire_len < len) {
		errno = EINVAL;
		return -1;
	}
	d->skel->bss->afcd_test_now_ns = now_ns;
	if (bpf_prog_test_run_opts(d->prog_fd, &o))
		return -1;
	d->runs++;
	d->run_ns += o.duration;
	if (o.retval == TC_ACT_SHOT)
		return 1;
	memcpy(frame, out, len);
	*t_dep_ns = ctx_out.tstamp;
	return 0;
}

static int ctl_run(struct afcd_drive *d, __u32 op, __u64 now_ns, __u64 idle_ns)
{
	struct afcd_ctl_frame f = {
		.eth_proto = htons(AFCD_CTL_ETH_P),
		.a = { .magic = AFCD_CTL_MAGIC, .op = op, .ifindex = DRIVE_IFINDEX,
		       .slot = d->slot, .now_ns = now_ns, .idle_ns = idle_ns },
	}, out = {0};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &f, .data_size_in = sizeof(f),
		    .data_out = &out, .data_size_out = sizeof(out), .repeat = 1);

	if (bpf_prog_test_run_opts(d->ctl_fd, &o))
		return -1;
	if (op == AFCD_CTL_GC && !out.a.ret)
		d->crowd = out.a.crowd;
	return out.a.ret ? -1 : 0;
}

int afcd_drive_refresh(struct afcd_drive *d, __u64 now_ns)
{
	return ctl_run(d, AFCD_CTL_REFRESH, now_ns, 0);
}

int afcd_drive_gc(struct afcd_drive *d, __u64 now_ns, __u64 idle_ns)
{
	return ctl_run(d, AFCD_CTL_GC, now_ns, idle_ns);
}

/* The loader's scan (loader/scan.c loop_tick()): the water level for the
 * samples the link can carry, the heartbeat, then the ring's growth for
 * the last GC's count of the crowd (afcd_sb_grow(), written as the
 * loader's config_write_locked() writes a larger ring: in place). */
int afcd_drive_scan(struct afcd_drive *d, __u64 now_ns)
{
	struct afcd_sb_hist *h = &d->hist;
	struct afcd_queue q;
	struct afcd_est e;
	__u64 rate;

	if (bpf_map__lookup_elem(d->skel->maps.afcd_sb_hist, &d->slot, 4, h, sizeof(*h), 0) ||
	    bpf_map__lookup_elem(d->skel->maps.afcd_queue, &d->slot, 4, &q, sizeof(q), 0) ||
	    bpf_map__lookup_elem(d->skel->maps.afcd_est, &d->slot, 4, &e, sizeof(e), 0))
		return -1;
	rate = afcd_rate_of(&d->c, &q);
	afcd_scan_of_hist(h->n, d->c.sb_size,
			  rate ? afcd_sb_capacity(d->c.sb_size, rate, e.arrival_bps) : d->c.sb_size,
			  &d->sc);
	d->sc.heartbeat_ns = now_ns;
	d->sc.scans++;
	d->sc.loader_pid = 1;
	d->sc.owner = 1;
	if (bpf_map__update_elem(d->skel->maps.afcd_scan, &d->slot, 4, &d->sc, sizeof(d->sc),
				 BPF_ANY))
		return -1;
	if (!afcd_sb_grow(&d->c, &d->sb_grow, d->crowd, rate, now_ns))
		return 0;
	return bpf_map__update_elem(d->skel->maps.afcd_cfg, &d->slot, 4, &d->c, sizeof(d->c),
				    BPF_ANY);
}

/* The maps' memory, from /proc/self/fdinfo (memlock). */
static __u64 memlock_of(struct afcd_drive *d)
{
	struct bpf_map *m;
	__u64 sum = 0;

	bpf_object__for_each_map(m, d->skel->obj) {
		char path[64], line[128];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", bpf_map__fd(m));
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned long long v;

			if (sscanf(line, "memlock: %llu", &v) == 1)
				sum += v;
		}
		fclose(f);
	}
	return sum;
}

int afcd_drive_read(struct afcd_drive *d, struct afcd_drive_stats *s)
{
	struct afcd_queue q;
	struct afcd_est e;

	if (bpf_map__lookup_elem(d->skel->maps.afcd_queue, &d->slot, 4, &q, sizeof(q), 0) ||
	    bpf_map__lookup_elem(d->skel->maps.afcd_est, &d->slot, 4, &e, sizeof(e), 0))
		return -1;
	memset(s, 0, sizeof(*s));
	s->t_last_ns = q.t_last_ns;
	s->n_active = q.n_active > 0 ? (__u32)q.n_active : 0;
	s->n_long = e.n_long;
	s->m_fair = e.m_fair;
	s->waterline = e.waterline;
	s->global_target_ns = e.global_target_ns;
	s->fair_rate_bps = e.fair_rate_bps;
	s->arrival_bps = e.arrival_bps;
	s->runs = d->runs;
	s->run_ns = d->run_ns;
	s->memlock_bytes = memlock_of(d);
	s->sb_size = d->c.sb_size;
	s->sb_grows = d->sb_grow.grows;
	return 0;
}

char *afcd_drive_queue_json(struct afcd_drive *d)
{
	struct json_object *jq, *ja;
	struct afcd_queue q;
	char *out;

	if (queue_read_fd(bpf_map__fd(d->skel->maps.afcd_queue),
			  bpf_map__fd(d->skel->maps.afcd_qpcpu), d->slot, &q))
		return NULL;
	jq = json_object_new_object();
	if (!jq)
		return NULL;
	qjson_counters(jq, qjson_stat_keys, q.stats, AFCD_S__MAX);
	qjson_counters(jq, qjson_astat_keys, q.astats, AFCD_A__MAX);
	ja = qjson_aggregates(&q);
	if (ja && json_object_object_add(jq, "aggregates", ja)) {
		json_object_put(ja);    /* not taken on failure */
		ja = NULL;
	}
	out = ja ? strdup(json_object_to_json_string_ext(jq, JSON_C_TO_STRING_PLAIN)) : NULL;
	json_object_put(jq);
	return out;
}

void afcd_drive_close(struct afcd_drive *d)
{
	if (!d)
		return;
	afcd_ctl_bpf__destroy(d->ctl);
	afcd_bpf__destroy(d->skel);
	free(d);
}
