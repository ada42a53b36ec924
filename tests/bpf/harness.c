// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The shared harness and the runner of the BPF_PROG_TEST_RUN tests; see
 * harness.h. */
#include "harness.h"
#include "afcd_decide.h"
#include "qread.h"
#include "sys.h"

const char *filter;
struct afcd_bpf *skel;
int prog_fd;
int veth_ifindex;

static int libbpf_quiet(enum libbpf_print_level l, const char *f, va_list a)
{
	return l == LIBBPF_WARN ? vfprintf(stderr, f, a) : 0;
}

int test_netns_probe;
__u32 test_flow_table;

int load(void)
{
	struct bpf_map *m;

	skel = afcd_bpf__open();
	if (!skel)
		return -1;
	bpf_object__for_each_map(m, skel->obj)
		bpf_map__set_pin_path(m, NULL); /* private maps for tests */
	skel->rodata->afcd_test_clock = 1;
	skel->rodata->afcd_test_netns_probe = (__u8)test_netns_probe;
	if ((test_flow_table && bpf_map__set_max_entries(skel->maps.afcd_flows, test_flow_table)) ||
	    afcd_bpf__load(skel)) {
		afcd_bpf__destroy(skel);
		skel = NULL;
		return -1;
	}
	prog_fd = bpf_program__fd(skel->progs.afcd_egress);
	return 0;
}

void unload(void)
{
	afcd_bpf__destroy(skel);
	skel = NULL;
}

struct afcd_config cfg_base(__u32 algo)
{
	struct afcd_config c;

	/* the loader's defaults at 100 Mbit/s (tx(1514 B) = 121120 ns), with
	 * the same target and interval for every algo, a 20 ms RTT, the
	 * policer off and no sampling unless a test asks */
	afcd_config_defaults(&c, algo, 100000000ULL);
	c.target_ns = 5 * MS;
	c.interval_ns = 100 * MS;
	c.rtt_ns = 20 * MS;
	c.sample_bytes = ~0ULL >> 1;
	c.flags = 0;
	return c;
}

/* Interface slots as `afcd set` would assign them: lo -> 0, veth -> 1. */
__u32 slot_of(__u32 ifindex)
{
	return ifindex == 1 ? 0 : 1;
}

/* Write c into afcd_cfg[slot], then point afcd_ifslot[ifindex] at it,
 * as the loader does, without checking or completing anything. */
void put_cfg(__u32 ifindex, __u32 slot, const struct afcd_config *cfg)
{
	struct afcd_config c = *cfg;
	__u32 v = slot + 1;
	int err;

	if (!c.netns_cookie) {
		c.netns_cookie = netns_cookie();   /* the loader's */
		CHECK(c.netns_cookie, "SO_NETNS_COOKIE");
	}
	err = bpf_map__update_elem(skel->maps.afcd_cfg, &slot, 4, &c, sizeof(c), BPF_ANY);
	CHECK(!err, "cfg update: %d", err);
	err = bpf_map__update_elem(skel->maps.afcd_ifslot, &ifindex, 4, &v, 4, BPF_ANY);
	CHECK(!err, "ifslot update: %d", err);
}

/* Remove ifindex's config as the loader does: its index, then the slot. */
void del_cfg(__u32 ifindex)
{
	struct afcd_config c = {0};
	__u32 zero = 0, slot = slot_of(ifindex);

	CHECK(!bpf_map__update_elem(skel->maps.afcd_ifslot, &ifindex, 4, &zero, 4, BPF_ANY),
	      "ifslot clear");
	CHECK(!bpf_map__update_elem(skel->maps.afcd_cfg, &slot, 4, &c, sizeof(c), BPF_ANY),
	      "cfg clear");
}

/* Write the config and, like the loader, claim the slot (zeroed queue
 * owned by ifindex) unless this interface already owns it. */
void set_cfg(__u32 ifindex, const struct afcd_config *cfg)
{
	struct afcd_config c = *cfg;
	struct afcd_queue q;
	__u32 slot = slot_of(ifindex);
	int err;

	c.slot = slot;
	c.ifindex = ifindex;
	put_cfg(ifindex, slot, &c);
	if (!bpf_map__lookup_elem(skel->maps.afcd_queue, &slot, 4, &q, sizeof(q), 0) &&
	    q.ifindex == ifindex)
		return;
	memset(&q, 0, sizeof(q));
	q.ifindex = ifindex;
	q.slot = slot;
	q.flow_id_key[0] = TEST_FLOW_KEY0 ^ ifindex;
	q.flow_id_key[1] = TEST_FLOW_KEY1;
	err = qpcpu_reset_fd(bpf_map__fd(skel->maps.afcd_qpcpu), slot);
	CHECK(!err, "per-CPU counters init: %d", err);
	err = bpf_map__update_elem(skel->maps.afcd_queue, &slot, 4, &q, sizeof(q), BPF_ANY);
	CHECK(!err, "queue init: %d", err);
}

void set_est(__u32 ifindex, __u32 m_fair, __u64 gt_ns)
{
	struct afcd_est e = {
		.heartbeat_ns = skel->bss->afcd_test_now_ns,
		.global_target_ns = gt_ns,
		.m_fair = m_fair,
	};
	__u32 slot = slot_of(ifindex);
	int err = bpf_map__update_elem(skel->maps.afcd_est, &slot, sizeof(slot),
				       &e, sizeof(e), BPF_ANY);
	CHECK(!err, "est update: %d", err);
}

void set_now(__u64 t)
{
	skel->bss->afcd_test_now_ns = t;
}


__u32 next_wire_len; /* GSO-like wire length for the next run, 0 = len */
__u64 next_tstamp;    /* the sender's departure time for the next run, 0 = none */

int run_if(const __u8 *buf, int len, __u32 ifindex, struct out *o)
{
	struct __sk_buff ctx_in = { .ifindex = ifindex, .wire_len = next_wire_len,
				    .tstamp = next_tstamp }, ctx_out = {};
	static struct out scratch;
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = buf, .data_size_in = len,
		.ctx_in = &ctx_in, .ctx_size_in = sizeof(ctx_in),
		.ctx_out = &ctx_out, .ctx_size_out = sizeof(ctx_out),
		.repeat = 1);
	int err;

	if (!o)
		o = &scratch;
	opts.data_out = o->data;
	opts.data_size_out = sizeof(o->data);
	err = bpf_prog_test_run_opts(prog_fd, &opts);
	if (err) {
		CHECK(0, "test_run: %d (%s)", err, strerror(errno));
		return -1;
	}
	next_wire_len = 0;
	next_tstamp = 0;
	o->verdict = opts.retval;
	o->tstamp = ctx_out.tstamp;
	o->len = opts.data_size_out;
	return o->verdict;
}

int run(const struct pkt_spec *s, struct out *o)
{
	__u8 buf[PKT_MAX];
	int len = pkt_build(buf, s);

	return run_if(buf, len, 1, o);
}

struct afcd_queue get_queue(__u32 ifindex)
{
	struct afcd_queue q;
	__u32 slot = slot_of(ifindex);

	memset(&q, 0, sizeof(q));
	CHECK(!queue_read_fd(bpf_map__fd(skel->maps.afcd_queue), bpf_map__fd(skel->maps.afcd_qpcpu),
			     slot, &q) && q.ifindex == ifindex,
	      "queue of %u missing", ifindex);
	return q;
}

/* Slots of an ARRAY map in use (non-zero first 8 bytes after the lock
 * for queues is overkill: count queues owned by an interface). */
__u32 queues_in_use(void)
{
	struct afcd_queue q;
	__u32 slot, n = 0;

	for (slot = 0; slot < AFCD_MAX_IFACES; slot++)
		if (!queue_read_fd(bpf_map__fd(skel->maps.afcd_queue),
				   bpf_map__fd(skel->maps.afcd_qpcpu), slot, &q) &&
		    q.ifindex && q.stats[AFCD_S_PASSED])
			n++;
	return n;
}

__u64 peek_t_last(__u32 ifindex)
{
	struct afcd_queue q;
	__u32 slot = slot_of(ifindex);

	if (bpf_map__lookup_elem(skel->maps.afcd_queue, &slot, sizeof(slot), &q, sizeof(q), 0))
		return 0;
	return q.t_last_ns;
}

struct afcd_flow_key key_of(const struct pkt_spec *s, __u32 ifindex)
{
	__u8 buf[PKT_MAX];
	struct afcd_pkt p;
	int len = pkt_build(buf, s);

	afcd_parse(buf, buf + len, &p);
	p.key.ifindex = ifindex;
	return p.key;
}

__u64 flow_id_of(const struct pkt_spec *s, __u32 ifindex)
{
	struct afcd_flow_key k = key_of(s, ifindex);
	struct afcd_queue q = get_queue(ifindex);

	return afcd_flow_id(&k, q.flow_id_key);
}

int old_flow(const struct pkt_spec *s, __u32 ifindex, __u64 now_ns)
{
	__u64 id = flow_id_of(s, ifindex);
	struct afcd_flow f = { .key = key_of(s, ifindex), .rng = id,
			       .born = afcd_flow_born(now_ns - 2 * AFCD_DEF_WINDOW_NS) };

	return bpf_map__update_elem(skel->maps.afcd_flows, &id, sizeof(id), &f, sizeof(f),
				    BPF_NOEXIST);
}

int get_flow(const struct pkt_spec *s, __u32 ifindex, struct afcd_flow *f)
{
	struct afcd_flow_key k = key_of(s, ifindex);
	__u64 id = flow_id_of(s, ifindex);
	int err;

	memset(f, 0, sizeof(*f));
	err = bpf_map__lookup_elem(skel->maps.afcd_flows, &id, sizeof(id), f, sizeof(*f), 0);
	if (!err && !afcd_flow_key_eq(&f->key, &k)) {
		memset(f, 0, sizeof(*f));
		return -ENOENT;
	}
	return err;
}

__u32 map_count(struct bpf_map *m)
{
	__u8 key[64], next[64];
	__u32 n = 0;
	int fd = bpf_map__fd(m);
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, sizeof(key));
		prev = key;
		n++;
	}
	return n;
}


/* Send n packets of flow a, 10 us apart from *now: with sample_bytes 1
 * each is sampled, so the flow holds n samples of a ring of sb_size >= n. */
void fill_samples(const struct pkt_spec *a, int n, __u64 *now)
{
	int i;

	for (i = 0; i < n; i++) {
		set_now(*now += 10 * US);
		run(a, NULL);
	}
}

int setup_netns(void)
{
	FILE *f;

	if (unshare(CLONE_NEWNET)) {
		perror("unshare(CLONE_NEWNET)");
		return -1;
	}
	if (system("ip link add afcdt0 type veth peer name afcdt1 2>/dev/null"))
		return 0; /* isolation test will report */
	f = popen("ip -o link show afcdt0 | cut -d: -f1", "r");
	if (f) {
		if (fscanf(f, "%d", &veth_ifindex) != 1)
			veth_ifindex = 0;
		pclose(f);
	}
	return 0;
}

/* The shadow buffer's books, read back from the maps: every entity's
 * count in afcd_sb_count is its slot's and equals its slots in the ring,
 * the counts add up to the ring's occupied slots, the histogram counts
 * each entity once at its count, and N is the entities counted. Returns
 * the slots held by flow a (its samples, which the callers compare with
 * its entry's m_i; 0 for a NULL a). */
__u32 ring_books(__u32 sb_size, const struct pkt_spec *a)
{
	static struct afcd_sb_ring ring;
	static struct afcd_sb_hist h;
	struct afcd_sb_key k, next, *prev = NULL;
	__u32 slot = slot_of(1), i, in_ring = 0, of_a = 0, c, n = 0, hist_n = 0, counted = 0;
	__u64 sid_a = 0;

	if (a) {
		struct afcd_flow_key ka = key_of(a, 1);

		sid_a = afcd_sample_id(&ka, flow_id_of(a, 1));
	}
	CHECK(!bpf_map__lookup_elem(skel->maps.afcd_sb_ring, &slot, 4, &ring, sizeof(ring), 0),
	      "ring");
	CHECK(!bpf_map__lookup_elem(skel->maps.afcd_sb_hist, &slot, 4, &h, sizeof(h), 0), "hist");
	for (i = 0; i < sb_size; i++) {
		in_ring += ring.slot[i] != 0;
		of_a += a && ring.slot[i] == sid_a;
	}
	while (!bpf_map__get_next_key(skel->maps.afcd_sb_count, prev, &next, sizeof(next))) {
		__u32 slots = 0;

		k = next;
		prev = &k;
		CHECK(!bpf_map__lookup_elem(skel->maps.afcd_sb_count, &k, sizeof(k), &c, 4, 0),
		      "count");
		CHECK_EQ(k.slot, slot);
		for (i = 0; i < sb_size; i++)
			slots += ring.slot[i] == k.sid;
		CHECK_EQ(c, slots);
		counted += c;
		n++;
	}
	CHECK_EQ(counted, in_ring);
	for (i = 1; i <= AFCD_SB_SIZE_MAX; i++)
		hist_n += h.n[i];
	CHECK_EQ(hist_n, n);
	CHECK_EQ(get_queue(1).n_active, n);
	return of_a;
}

/* ---- Control program: refresh step, timer, GC ------------------------------ */

struct afcd_ctl_bpf *ctl;

/* Load afcd_ctl on the datapath skeleton's private maps. */
int load_ctl(void)
{
	struct bpf_map *m;

	ctl = afcd_ctl_bpf__open();
	if (!ctl)
		return -1;
	bpf_object__for_each_map(m, ctl->obj) {
		struct bpf_map *dm = bpf_object__find_map_by_name(skel->obj, bpf_map__name(m));

		bpf_map__set_pin_path(m, NULL);
		if (!dm || bpf_map__reuse_fd(m, bpf_map__fd(dm))) {
			afcd_ctl_bpf__destroy(ctl);
			ctl = NULL;
			return -1;
		}
	}
	if (afcd_ctl_bpf__load(ctl)) {
		afcd_ctl_bpf__destroy(ctl);
		ctl = NULL;
		return -1;
	}
	return 0;
}

void unload_ctl(void)
{
	afcd_ctl_bpf__destroy(ctl);
	ctl = NULL;
	unload();
}


__u32 ctl_crowd;

int ctl_op(__u32 op, __u32 ifindex, __u32 slot, __u64 now, __u64 idle,
		  __u64 *deleted)
{
	struct afcd_ctl_frame f = {
		.eth_proto = htons(AFCD_CTL_ETH_P),
		.a = { .magic = AFCD_CTL_MAGIC, .op = op, .ifindex = ifindex, .slot = slot,
		       .now_ns = now, .idle_ns = idle },
	}, out = {0};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &f, .data_size_in = sizeof(f),
		    .data_out = &out, .data_size_out = sizeof(out), .repeat = 1);
	int err = bpf_prog_test_run_opts(bpf_program__fd(ctl->progs.afcd_ctl), &o);

	CHECK(!err, "ctl test_run: %d", err);
	CHECK_EQ(o.retval, TC_ACT_SHOT);
	if (deleted)
		*deleted = out.a.deleted;
	ctl_crowd = out.a.crowd;
	return out.a.ret;
}

__u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* What the loader's scan writes for a histogram and a capacity. */
void scan_from_hist(const struct afcd_sb_hist *h, __u32 sb_size, __u64 capacity,
			   struct afcd_scan *sc)
{
	afcd_scan_of_hist(h->n, sb_size, capacity, sc);
}

void put_scan(__u32 ifindex, const struct afcd_scan *sc)
{
	__u32 slot = slot_of(ifindex);

	CHECK(!bpf_map__update_elem(skel->maps.afcd_scan, &slot, 4, sc, sizeof(*sc), BPF_ANY),
	      "scan update");
}

struct afcd_est get_est(__u32 ifindex)
{
	struct afcd_est e;
	__u32 slot = slot_of(ifindex);

	memset(&e, 0, sizeof(e));
	CHECK(!bpf_map__lookup_elem(skel->maps.afcd_est, &slot, 4, &e, sizeof(e), 0), "est");
	return e;
}


int main(int argc, char **argv)
{
	const struct test_case *const suites[] = { edt_tests, afcd_tests, fall_tests, ecn_tests,
						    state_tests, ctl_tests, fair_tests, loop_tests, fuzz_tests };
	const struct test_case *t;
	size_t i;

	filter = argc > 1 ? argv[1] : NULL;
	libbpf_set_print(libbpf_quiet);
	if (geteuid()) {
		fprintf(stderr, "test_datapath: needs root (BPF_PROG_TEST_RUN, netns)\n");
		return 1;
	}
	if (setup_netns())
		return 1;
	for (i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		for (t = suites[i]; t->name; t++)
			run_test(t->name, t->fn, filter);
	return test_summary();
}
