// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * afcd-bench - per-packet cost of afcd_egress for every algo, next to an
 * empty tc program and two minimal EDT programs, measured in the same run
 * with BPF_PROG_TEST_RUN (the kernel times `repeat` runs of the program
 * on one packet and reports the mean, excluding the syscall).
 *
 * Cost: for each algo, scenario and flow count the flow map is first
 * warmed with that many distinct flows, then SAMPLES packets spread over
 * those flows are each run REPEAT times: one measurement, the mean
 * ns/packet. Each program is measured ROUNDS times (afcd_egress: in as
 * many fresh loads), alternating with the minimal EDT program on the
 * same packets, and keeps its fastest measurement (interference only
 * ever adds time); the ratio of a cell is
 * taken against the baseline measured beside it, so that a machine
 * whose speed drifts during the run (a busy neighbour, a frequency step)
 * does not bend it.
 *   "idle":      rate 1 Tbit/s, the virtual queue stays empty;
 *   "congested": rate 1 Gbit/s, horizon 10 s: the queue sits far above
 *                target and the drop law is active;
 *   "stale":     no refresh step ran: the datapath's fallback estimate
 *                (ALGORITHM.md sec. 3a), computed per packet;
 *   "fresh":     a fresh estimate in afcd_est (heartbeat = now), as with a
 *                running loader.
 *
 * Stages: afcd_egress cut after each of its stages (bpf/afcd.bpf.c enum
 * afcd_stage; bpf/bench_stages.bpf.c), every prefix in the same load,
 * interleaved, the fastest of ROUNDS loads each; a stage's cost is its
 * prefix's less the one before it (the first: less the empty program),
 * printed beside each prefix's size once translated and jited.
 *
 * Scaling: each program runs on CPU 0 alone, then on CPUs 0 and 1 at
 * once (one thread per CPU, each sending its own flow on the same
 * interface, congested, fresh estimate); scaling_2cpu is the aggregate
 * packets per second on 2 CPUs divided by that on 1, the median of
 * SCALE_TRIALS paired trials, printed with its range.
 *
 * Churn: afcd and fall (idle, fresh estimate) on a cycle through N flows,
 * one packet each in turn, every packet a single run beside the minimal
 * EDT program run the same way; past the flow table's bound nearly every
 * packet creates its flow again, and the row says how many did.
 *
 *   build/afcd-bench [-r REPEAT] [-s SAMPLES] [-n ROUNDS] [-S CODEL_STATE] [-c] [-j]  (root)
 *   -c: the scaling only; -S: codel_state of every cell (per-flow, global,
 *   queue; afcd and fall take it, docs/ALGORITHM.md sec. 4)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "afcd_config.h"
#include "afcd_stage.h"
#include "afcd.skel.h"
#include "qread.h"
#include "sys.h"
#include "bench.skel.h"
#include "bench_stages.skel.h"
#include "pkt.h"

static int repeat = 20000, samples = 32, rounds = 3, json, scaling_only;
static int codel_state_bits = -1; /* -S: the config's AFCD_F_CODEL_STATE bits; -1: the default's */

static const unsigned flow_counts[] = { 1, 100, 10000, 100000 };
#define NFC (sizeof(flow_counts) / sizeof(flow_counts[0]))
#define NSC 4 /* scenarios: bit 0 congested, bit 1 fresh */
static const char *sc_name[NSC] = { "idle", "congested", "idle_fresh", "congested_fresh" };

static int libbpf_quiet(enum libbpf_print_level l, const char *f, va_list a)
{
	return l == LIBBPF_WARN ? vfprintf(stderr, f, a) : 0;
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static int build_flow_pkt(__u8 *buf, unsigned i)
{
	struct pkt_spec s = pkt_tcp4((__u16)(1024 + i), 1514);

	s.src4 = 0xC6120000u | (i >> 16);  /* 198.18.x.y */
	s.sport = (__u16)i;
	return pkt_build(buf, &s);
}

/* One BPF_PROG_TEST_RUN of prog on flow i, `runs` times; 0 or -errno. */
static int run_pkt(int prog_fd, unsigned i, int runs, __u32 *mean_ns)
{
	__u8 buf[PKT_MAX];
	struct __sk_buff ctx = { .ifindex = 1 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = runs);

	o.data_size_in = build_flow_pkt(buf, i);
	if (bpf_prog_test_run_opts(prog_fd, &o))
		return -errno;
	if (mean_ns)
		*mean_ns = o.duration;
	return 0;
}

/* One packet of each of nflows distinct flows through prog: 0, or -1. */
static int warm(int prog_fd, unsigned nflows)
{
	unsigned i;

	for (i = 0; i < nflows; i++)
		if (run_pkt(prog_fd, i, 1, NULL))
			return -1;
	return 0;
}

/* One measurement: mean ns/run of prog over `samples` packets spread over
 * nflows, each run `repeat` times; -1 on error. */
static double measure(int prog_fd, unsigned nflows)
{
	double total = 0;
	__u32 d;
	unsigned i;

	for (i = 0; i < (unsigned)samples; i++) {
		if (run_pkt(prog_fd, (unsigned)((unsigned long long)i * nflows / samples),
			    repeat, &d))
			return -1;
		total += d;
	}
	return total / samples;
}

/* The fastest of n measurements of prog and of the baseline base_fd,
 * alternating, after warming prog with nflows flows: 0, or -1. */
static int paired(int prog_fd, int base_fd, unsigned nflows, int n, double *ns,
		  double *base_ns)
{
	double a, b;
	int r;

	*ns = *base_ns = -1;
	if (warm(prog_fd, nflows))
		return -1;
	for (r = 0; r < n; r++) {
		b = measure(base_fd, nflows);
		a = measure(prog_fd, nflows);
		if (a < 0 || b < 0)
			return -1;
		if (*ns < 0 || a < *ns)
			*ns = a;
		if (*base_ns < 0 || b < *base_ns)
			*base_ns = b;
	}
	return 0;
}

/* ---- scaling: the same program on 1 and on 2 CPUs at once ------------- */

struct worker {
	pthread_t th;
	pthread_barrier_t *bar;
	int prog_fd, cpu, runs, rounds, err;
	unsigned flow;
	__u64 t0, t1;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	cpu_set_t set;
	int r;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	w->err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	run_pkt(w->prog_fd, w->flow, 1000, NULL); /* warm: flow state, caches */
	pthread_barrier_wait(w->bar);
	w->t0 = mono_ns();
	for (r = 0; r < w->rounds && !w->err; r++)
		w->err = run_pkt(w->prog_fd, w->flow, w->runs, NULL);
	w->t1 = mono_ns();
	return NULL;
}

/* Aggregate packets per second of prog on ncpu threads (CPUs 0..ncpu-1),
 * each on its own flow; -1 on error. */
static double pps_on(int prog_fd, int ncpu)
{
	struct worker w[2] = {};
	pthread_barrier_t bar;
	__u64 t0 = ~0ULL, t1 = 0;
	int i, err = 0;

	pthread_barrier_init(&bar, NULL, (unsigned)ncpu);
	for (i = 0; i < ncpu; i++) {
		w[i] = (struct worker){ .bar = &bar, .prog_fd = prog_fd, .cpu = i,
					.runs = repeat * 5, .rounds = 4, .flow = 7 + (unsigned)i };
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i]))
			return -1;
	}
	for (i = 0; i < ncpu; i++) {
		pthread_join(w[i].th, NULL);
		err |= w[i].err;
		if (w[i].t0 < t0)
			t0 = w[i].t0;
		if (w[i].t1 > t1)
			t1 = w[i].t1;
	}
	pthread_barrier_destroy(&bar);
	if (err || t1 <= t0)
		return -1;
	return (double)ncpu * w[0].runs * w[0].rounds * 1e9 / (double)(t1 - t0);
}

/* The 2-CPU scaling of one program over SCALE_TRIALS paired trials: in
 * each, the 1-CPU rate and right after it the 2-CPU rate, and their
 * ratio; the median ratio and the range. A pair measured back to back
 * sees the same machine, so a noisy neighbour moves one trial's ratio,
 * not the median. ok is 0 where a run failed or the machine has one CPU. */
#define SCALE_TRIALS 9
struct scale {
	double med, lo, hi;	/* ratio: aggregate packets/s on 2 CPUs / on 1 */
	int ok;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static struct scale scaling(int prog_fd)
{
	struct scale sc = {};
	double r[SCALE_TRIALS], one, two;
	int t;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return sc;
	for (t = 0; t < SCALE_TRIALS; t++) {
		one = pps_on(prog_fd, 1);
		two = pps_on(prog_fd, 2);
		if (one <= 0 || two <= 0)
			return sc;
		r[t] = two / one;
	}
	qsort(r, SCALE_TRIALS, sizeof(r[0]), cmp_double);
	sc.med = r[SCALE_TRIALS / 2];
	sc.lo = r[0];
	sc.hi = r[SCALE_TRIALS - 1];
	sc.ok = 1;
	return sc;
}

/* ---- the programs ----------------------------------------------------- */

/* obj's maps: none pinned (a bench touches no loader's state). */
static void unpin(struct bpf_object *obj)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj)
		bpf_map__set_pin_path(m, NULL);
}

/* The config of algo on interface 1 (slot 0) in loaded obj, as `afcd
 * attach` writes it for this namespace: at a rate the link never reaches,
 * or congested (1 Gbit/s under a queue the horizon never bounds); fresh:
 * with an estimate that stays fresh for the whole run. 0, or -1. */
static int configure(struct bpf_object *obj, int algo, int congested, int fresh)
{
	struct bpf_map *est = bpf_object__find_map_by_name(obj, "afcd_est");
	struct bpf_map *cfg = bpf_object__find_map_by_name(obj, "afcd_cfg");
	struct bpf_map *ifs = bpf_object__find_map_by_name(obj, "afcd_ifslot");
	struct bpf_map *qm = bpf_object__find_map_by_name(obj, "afcd_queue");
	struct afcd_queue q = { .ifindex = 1 };
	struct afcd_config c;
	__u32 key = 1, slot = 0;

	if (!est || !cfg || !ifs || !qm)
		return -1;
	afcd_config_defaults(&c, (__u32)algo, congested ? 1000000000ULL : AFCD_RATE_MAX_BPS);
	c.rtt_ns = 20000000;
	if (codel_state_bits >= 0)
		c.flags = (c.flags & ~AFCD_F_CODEL_STATE) | (__u32)codel_state_bits;
	if (congested)
		c.horizon_ns = 10000000000ULL;
	c.slot = slot;
	c.ifindex = key;
	/* the datapath takes a config only from the namespace that wrote it */
	c.netns_cookie = netns_cookie();
	if (fresh) {
		/* the bench writes the map directly, past the loader's bound */
		struct afcd_est e = {
			.heartbeat_ns = mono_ns(), .global_target_ns = c.target_ns,
			.m_fair = 20, .waterline = 20, .n_flows = 100, .n_long = 100,
			.fair_rate_bps = c.rate_bps / 100, .mice_samples = 1,
		};

		c.stale_after_ns = 1000000000000000ULL;
		if (bpf_map__update_elem(est, &slot, 4, &e, sizeof(e), BPF_ANY))
			return -1;
	}
	if (bpf_map__update_elem(cfg, &slot, 4, &c, sizeof(c), BPF_ANY))
		return -1;
	key = slot + 1;
	if (bpf_map__update_elem(ifs, &c.ifindex, 4, &key, 4, BPF_ANY))
		return -1;
	return bpf_map__update_elem(qm, &slot, 4, &q, sizeof(q), BPF_ANY) ? -1 : 0;
}

static struct afcd_bpf *afcd_open(int algo, int congested, int fresh)
{
	struct afcd_bpf *skel = afcd_bpf__open();

	if (!skel)
		return NULL;
	unpin(skel->obj);
	if (afcd_bpf__load(skel) || configure(skel->obj, algo, congested, fresh)) {
		afcd_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/* Did the programs of obj judge the packets they were timed on (the config
 * taken: some passed or dropped, none counted unconfigured)? 0, or -1 with
 * one line: a bench of the unconfigured early exit measures nothing. */
static int judged(struct bpf_object *obj)
{
	struct bpf_map *qm = bpf_object__find_map_by_name(obj, "afcd_queue");
	struct bpf_map *pm = bpf_object__find_map_by_name(obj, "afcd_qpcpu");
	struct bpf_map *gm = bpf_object__find_map_by_name(obj, "afcd_global");
	int ncpu = libbpf_num_possible_cpus();
	__u32 slot = 0, key = AFCD_G_UNCONFIGURED;
	__u64 *pc, sum = 0;
	struct afcd_queue q;
	int i;

	if (ncpu < 1)
		ncpu = 1;
	pc = calloc((size_t)ncpu, sizeof(__u64));   /* afcd_global: per CPU, one u64 each */
	if (!pc || !qm || !pm || !gm ||
	    queue_read_fd(bpf_map__fd(qm), bpf_map__fd(pm), slot, &q) ||
	    bpf_map__lookup_elem(gm, &key, 4, pc, (size_t)ncpu * sizeof(__u64), 0)) {
		free(pc);
		fprintf(stderr, "afcd-bench: cannot read the program's counters\n");
		return -1;
	}
	for (i = 0; i < ncpu; i++)
		sum += pc[i];
	free(pc);
	if (sum || !(q.stats[AFCD_S_PASSED] + q.stats[AFCD_S_AQM_DROP] +
		     q.stats[AFCD_S_OVERLIMIT_DROP])) {
		errno = 0;
		fprintf(stderr, "afcd-bench: the program judged no packet (%llu unconfigured): "
			"its config was not taken\n", (unsigned long long)sum);
		return -1;
	}
	return 0;
}

/* afcd_egress of algo in scenario sc on nflows flows, paired with the
 * baseline base_fd: the fastest of `rounds` fresh loads, each warmed and
 * measured once beside the baseline (the cost of one load of the same
 * object differs from another's by up to 50 ns on the machine of the
 * docs/PERFORMANCE.md, as memory placement goes; the fastest is what the code costs).
 * 0, or -1. */
static int run_afcd(int algo, unsigned nflows, int sc, int base_fd, double *ns, double *base_ns)
{
	struct afcd_bpf *skel;
	double a, b;
	int r, err = 0;

	*ns = *base_ns = -1;
	for (r = 0; r < rounds && !err; r++) {
		skel = afcd_open(algo, sc & 1, sc & 2);
		if (!skel) {
			err = -1;
			break;
		}
		err = paired(bpf_program__fd(skel->progs.afcd_egress), base_fd, nflows, 1, &a, &b);
		if (!err)
			err = judged(skel->obj);
		afcd_bpf__destroy(skel);
		if (!err && (*ns < 0 || a < *ns))
			*ns = a;
		if (!err && (*base_ns < 0 || b < *base_ns))
			*base_ns = b;
	}
	return err;
}

static struct scale scale_afcd(int algo)
{
	struct afcd_bpf *skel = afcd_open(algo, 1, 1);
	struct scale x = {};

	if (!skel)
		return x;
	x = scaling(bpf_program__fd(skel->progs.afcd_egress));
	afcd_bpf__destroy(skel);
	return x;
}

/* ---- churn: a packet of another flow every time ----------------------- */

/* Flows cycled through: within the flow table's bound (65,536), and past
 * it, where nearly every packet finds its flow evicted and creates it
 * again (evicting another). */
static const unsigned churn_flows[] = { 100, 100000, 1000000 };
#define NCH (sizeof(churn_flows) / sizeof(churn_flows[0]))

/* Mean ns a packet of prog over n single runs (repeat 1: the kernel's
 * timing of one run), packet k of flow (nflows + k) mod nflows after one
 * packet of each flow: a cycle through nflows flows. -1 on error. */
static double churn_measure(int prog_fd, unsigned nflows, unsigned n)
{
	double total = 0;
	__u32 d;
	unsigned k;

	if (warm(prog_fd, nflows))
		return -1;
	for (k = 0; k < n; k++) {
		if (run_pkt(prog_fd, k % nflows, 1, &d))
			return -1;
		total += d;
	}
	return total / n;
}

/* Churn of algo (idle, fresh estimate) over nflows: *ns a packet, *base_ns
 * the minimal EDT program's measured the same way beside it, *created
 * flow entries created a packet (AFCD_A_FLOW_NEW). 0, or -1. */
static int churn_afcd(int algo, unsigned nflows, int base_fd, double *ns, double *base_ns,
		      double *created)
{
	unsigned n = (unsigned)samples * 6250;   /* 200,000 packets with -s 32 */
	struct afcd_bpf *skel = afcd_open(algo, 0, 1);
	struct bpf_map *qm, *pm;
	struct afcd_queue q0, q1;
	int err = -1;

	if (!skel)
		return -1;
	qm = bpf_object__find_map_by_name(skel->obj, "afcd_queue");
	pm = bpf_object__find_map_by_name(skel->obj, "afcd_qpcpu");
	*base_ns = churn_measure(base_fd, nflows, n);
	if (qm && pm && *base_ns >= 0 && !warm(bpf_program__fd(skel->progs.afcd_egress), nflows) &&
	    !queue_read_fd(bpf_map__fd(qm), bpf_map__fd(pm), 0, &q0)) {
		*ns = churn_measure(bpf_program__fd(skel->progs.afcd_egress), nflows, n);
		if (*ns >= 0 && !queue_read_fd(bpf_map__fd(qm), bpf_map__fd(pm), 0, &q1) &&
		    !judged(skel->obj)) {
			/* the warm-up of churn_measure() is counted too: n + nflows packets */
			*created = (double)(q1.astats[AFCD_A_FLOW_NEW] - q0.astats[AFCD_A_FLOW_NEW]) /
				   (double)(n + nflows);
			err = 0;
		}
	}
	afcd_bpf__destroy(skel);
	return err;
}

/* ---- where the time goes: afcd_egress cut after each stage ------------ */

#define NSTAGE AFCD_STAGE__MAX
#define STAGE_NAME_(name, what) #name,
static const char *stage_name[NSTAGE] = { AFCD_STAGES(STAGE_NAME_) };
#undef STAGE_NAME_
#define STAGE_FLOWS 100	/* the steadiest column of the cells */
#define NSTAGE_SC 2
static const int stage_sc[NSTAGE_SC] = { 0, 3 }; /* idle, congested_fresh */
#define NSTAGE_ALGO 2
static const int stage_algo[NSTAGE_ALGO] = { AFCD_ALGO_AFCD, AFCD_ALGO_FALL };

/* One algo and scenario: each prefix's ns a packet and the empty and the
 * minimal EDT program's measured beside them (the fastest of `rounds`
 * loads each), the prefixes' instructions once translated and bytes once
 * jited (their subprograms included). */
struct stage_row {
	double prefix_ns[NSTAGE], empty_ns, edt_min_ns;
	__u32 xlated[NSTAGE], jited[NSTAGE];
};

/* *best = x when x is faster (or *best unset, < 0); -1 when x is an error. */
static int keep_fastest(double *best, double x)
{
	if (x < 0)
		return -1;
	if (*best < 0 || x < *best)
		*best = x;
	return 0;
}

static int prog_size(int fd, __u32 *xlated, __u32 *jited)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	*xlated = info.xlated_prog_len / 8;
	*jited = info.jited_prog_len;
	return 0;
}

/* Every prefix of afcd_egress of algo in scenario sc, in turn in one load
 * warmed with STAGE_FLOWS flows by the whole program, between the empty
 * program (empty_fd) and the minimal EDT one (min_fd), `rounds` loads: 0,
 * or -1. */
static int run_stages(int algo, int sc, int empty_fd, int min_fd, struct stage_row *row)
{
	struct bench_stages_bpf *skel;
	int fd[NSTAGE], r, k, err = 0;

	row->empty_ns = row->edt_min_ns = -1;
	for (k = 0; k < NSTAGE; k++)
		row->prefix_ns[k] = -1;
	for (r = 0; r < rounds && !err; r++) {
		skel = bench_stages_bpf__open();
		if (!skel)
			return -1;
		unpin(skel->obj);
		if (bench_stages_bpf__load(skel) || configure(skel->obj, algo, sc & 1, sc & 2)) {
			bench_stages_bpf__destroy(skel);
			return -1;
		}
		for (k = 0; k < NSTAGE; k++) {
			char name[32];

			snprintf(name, sizeof(name), "stage_%s", stage_name[k]);
			fd[k] = bpf_program__fd(bpf_object__find_program_by_name(skel->obj, name));
		}
		err = warm(fd[AFCD_STAGE_ALL], STAGE_FLOWS) ||
		      keep_fastest(&row->empty_ns, measure(empty_fd, STAGE_FLOWS));
		for (k = 0; k < NSTAGE && !err; k++) {
			err = keep_fastest(&row->prefix_ns[k], measure(fd[k], STAGE_FLOWS));
			if (!err && !r)
				err = prog_size(fd[k], &row->xlated[k], &row->jited[k]);
		}
		if (!err)
			err = keep_fastest(&row->edt_min_ns, measure(min_fd, STAGE_FLOWS));
		if (!err)
			err = judged(skel->obj);
		bench_stages_bpf__destroy(skel);
	}
	return err;
}

/* The anchors of bpf/bench.bpf.c: FN(ID, program, row label). */
#define BENCH_BASES(FN)								\
	FN(B_EMPTY,    bench_empty,    "empty tc program")			\
	FN(B_CLOCK,    bench_clock,    "the clock alone")			\
	FN(B_EDT_MIN,  bench_edt_min,  "minimal EDT (1 lookup)")		\
	FN(B_EDT_LOCK, bench_edt_lock, "minimal EDT, spin-locked")
enum {
#define BASE_ENUM_(id, prog, label) id,
	BENCH_BASES(BASE_ENUM_)
#undef BASE_ENUM_
	B__MAX
};
#define BASE_PROG_(id, prog, label) #prog,
static const char *base_prog[B__MAX] = { BENCH_BASES(BASE_PROG_) };
#undef BASE_PROG_
#define BASE_LABEL_(id, prog, label) label,
static const char *base_label[B__MAX] = { BENCH_BASES(BASE_LABEL_) };
#undef BASE_LABEL_

/* The baselines, loaded once for the whole run (state: one interface at
 * 1 Gbit/s). */
static struct bench_bpf *bench_open(int fd[B__MAX])
{
	struct bench_bpf *skel = bench_bpf__open_and_load();
	struct { __u64 t_last_ns, rate_bps, lock; } st = { 0, 1000000000ULL, 0 };
	__u32 key = 1;
	int i;

	if (!skel)
		return NULL;
	bpf_map__update_elem(skel->maps.bench_state, &key, 4, &st, sizeof(st), BPF_ANY);
	for (i = 0; i < B__MAX; i++)
		fd[i] = bpf_program__fd(bpf_object__find_program_by_name(skel->obj, base_prog[i]));
	return skel;
}

static void json_row(const char *name, const double *v, int first)
{
	unsigned f;

	printf("%s\n \"%s\": [", first ? "" : ",", name);
	for (f = 0; f < NFC; f++)
		printf("%s%.*f", f ? ", " : "", v[f] < 10 ? 3 : 1, v[f]);
	printf("]");
}

/* The fastest baseline measurement of each column, in m[f]. */
static void keep_min(double *m, unsigned f, double x)
{
	if (m[f] < 0 || x < m[f])
		m[f] = x;
}

/* Everything one `afcd-bench` measures: ns per packet of the anchors
 * (base) and of each scenario and algorithm (r, ratio to the minimal EDT
 * program measured beside it), and the 2-CPU scaling of each. */
struct bench_results {
	double base[B__MAX][NFC];
	double r[NSC][AFCD_ALGO__MAX][NFC];
	double ratio[NSC][AFCD_ALGO__MAX][NFC];
	struct scale sc_base[B__MAX], sc_afcd[2];
	struct stage_row stages[NSTAGE_ALGO][NSTAGE_SC];
	double churn[2][NCH], churn_base[2][NCH], churn_created[2][NCH]; /* afcd, fall */
};

/* The options into the globals they set: 0, or 2 after one line on stderr. */
static int parse_args(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "r:s:n:S:cjh")) != -1) {
		switch (opt) {
		case 'S': {
			int found = 0;
#define CODEL_STATE_ARG_(name, bits) \
			if (!strcmp(optarg, name)) { codel_state_bits = (int)(bits); found = 1; }
			AFCD_CODEL_STATES(CODEL_STATE_ARG_)
#undef CODEL_STATE_ARG_
			if (!found) {
				fprintf(stderr, "afcd-bench: -S %s: not a codel_state\n", optarg);
				return 2;
			}
			break;
		}
		case 'r': repeat = atoi(optarg); break;
		case 's': samples = atoi(optarg); break;
		case 'n': rounds = atoi(optarg); break;
		case 'c': scaling_only = 1; break;
		case 'j': json = 1; break;
		default:
			fprintf(stderr, "usage: %s [-r REPEAT] [-s SAMPLES] [-n ROUNDS] "
				"[-S CODEL_STATE] [-c] [-j]\n",
				argv[0]);
			return 2;
		}
	}
	if (repeat < 1 || samples < 1 || rounds < 1) {
		fprintf(stderr, "afcd-bench: -r, -s and -n must be >= 1\n");
		return 2;
	}
	return 0;
}

/* Every cell (unless scaling_only) and the scaling into *m, the anchors
 * through fd[]: 0, or -1 with errno when a test run failed. */
static int measure_all(struct bench_results *m, const int *fd)
{
	int a, sc, i;
	unsigned f;
	double b;

	for (i = 0; i < B__MAX; i++)
		for (f = 0; f < NFC; f++)
			m->base[i][f] = -1;
	for (f = 0; f < NFC && !scaling_only; f++) {
		for (i = 0; i < B__MAX; i++) { /* each beside the minimal EDT program */
			if (i == B_EDT_MIN)
				continue;
			if (paired(fd[i], fd[B_EDT_MIN], flow_counts[f], rounds, &m->base[i][f], &b))
				return -1;
			keep_min(m->base[B_EDT_MIN], f, b);
		}
		for (sc = 0; sc < NSC; sc++)
			for (a = 0; a < AFCD_ALGO__MAX; a++) {
				if (run_afcd(a, flow_counts[f], sc, fd[B_EDT_MIN], &m->r[sc][a][f], &b))
					return -1;
				keep_min(m->base[B_EDT_MIN], f, b);
				m->ratio[sc][a][f] = m->r[sc][a][f] / b;
			}
	}
	for (a = 0; a < NSTAGE_ALGO && !scaling_only; a++)
		for (sc = 0; sc < NSTAGE_SC; sc++)
			if (run_stages(stage_algo[a], stage_sc[sc], fd[B_EMPTY], fd[B_EDT_MIN],
				       &m->stages[a][sc]))
				return -1;
	for (i = B_EDT_MIN; i < B__MAX; i++)
		m->sc_base[i] = scaling(fd[i]);
	m->sc_afcd[0] = scale_afcd(AFCD_ALGO_AFCD);
	m->sc_afcd[1] = scale_afcd(AFCD_ALGO_FALL);
	for (a = 0; a < 2 && !scaling_only; a++)
		for (f = 0; f < NCH; f++)
			if (churn_afcd(a ? AFCD_ALGO_FALL : AFCD_ALGO_AFCD, churn_flows[f],
				       fd[B_EDT_MIN], &m->churn[a][f], &m->churn_base[a][f],
				       &m->churn_created[a][f]))
				return -1;
	return 0;
}

/* The churn rows: each algo's ns a packet, ratio to the minimal program
 * measured beside it, and flows created a packet, per flow count. */
static void print_churn(const struct bench_results *m)
{
	unsigned f;
	int a;

	printf("\nchurn (every packet the next of N flows, idle, fresh; flow table bound %u; "
	       "ns/packet, mean of %u single runs, ratio to the minimal EDT program beside it, "
	       "flows created a packet):\n", AFCD_FLOWS_MAX, (unsigned)samples * 6250);
	printf("  %-6s", "N");
	for (f = 0; f < NCH; f++)
		printf("%30u", churn_flows[f]);
	printf("\n");
	for (a = 0; a < 2; a++) {
		printf("  %-6s", a ? "fall" : "afcd");
		for (f = 0; f < NCH; f++)
			printf("   %7.1f ns %5.2fx %5.2f new", m->churn[a][f],
			       m->churn[a][f] / m->churn_base[a][f], m->churn_created[a][f]);
		printf("\n");
	}
}

static void print_churn_json(const struct bench_results *m)
{
	unsigned f;
	int a;

	printf("\"churn\": {\"flows\": [");
	for (f = 0; f < NCH; f++)
		printf("%s%u", f ? ", " : "", churn_flows[f]);
	printf("]");
	for (a = 0; a < 2; a++) {
		const char *name = a ? "fall" : "afcd";

		printf(", \"%s\": [", name);
		for (f = 0; f < NCH; f++)
			printf("%s%.1f", f ? ", " : "", m->churn[a][f]);
		printf("], \"%s_edt_min\": [", name);
		for (f = 0; f < NCH; f++)
			printf("%s%.1f", f ? ", " : "", m->churn_base[a][f]);
		printf("], \"%s_created_per_pkt\": [", name);
		for (f = 0; f < NCH; f++)
			printf("%s%.3f", f ? ", " : "", m->churn_created[a][f]);
		printf("]");
	}
	printf("}");
}

/* The scaling of the four programs, in the order printed. */
static const char *scale_name[4] = { "edt_min", "edt_lock", "afcd", "fall" };

static const struct scale *scale_of(const struct bench_results *m, int i)
{
	return i < 2 ? &m->sc_base[B_EDT_MIN + i] : &m->sc_afcd[i - 2];
}

/* "scaling_2cpu": each program's median ratio, and "scaling_2cpu_range":
 * its [lowest, highest] over the trials (null where not measured). */
static void print_scaling_json(const struct bench_results *m)
{
	int i;

	printf("\"scaling_2cpu_trials\": %d, \"scaling_2cpu\": {", SCALE_TRIALS);
	for (i = 0; i < 4; i++)
		printf(scale_of(m, i)->ok ? "%s\"%s\": %.2f" : "%s\"%s\": null", i ? ", " : "",
		       scale_name[i], scale_of(m, i)->med);
	printf("}, \"scaling_2cpu_range\": {");
	for (i = 0; i < 4; i++)
		if (scale_of(m, i)->ok)
			printf("%s\"%s\": [%.2f, %.2f]", i ? ", " : "", scale_name[i],
			       scale_of(m, i)->lo, scale_of(m, i)->hi);
		else
			printf("%s\"%s\": null", i ? ", " : "", scale_name[i]);
	printf("}");
}

static void print_scaling(const struct bench_results *m)
{
	int i;

	printf("\nscaling_2cpu (aggregate packets/s on 2 CPUs / on 1, congested, fresh; aim >= 1.7;\n"
	       "median of %d paired trials [lowest - highest]):\n", SCALE_TRIALS);
	for (i = 0; i < 4; i++)
		if (scale_of(m, i)->ok)
			printf("  %-9s %.2f  [%.2f - %.2f]\n", scale_name[i], scale_of(m, i)->med,
			       scale_of(m, i)->lo, scale_of(m, i)->hi);
		else
			printf("  %-9s not measured (one CPU, or a run failed)\n", scale_name[i]);
}

static void print_json(const struct bench_results *m)
{
	char name[48];
	int a, sc, i;
	unsigned f;

	printf("{\"repeat\": %d, \"samples\": %d, \"rounds\": %d, \"flows\": [",
	       repeat, samples, rounds);
	for (f = 0; f < NFC; f++)
		printf("%s%u", f ? ", " : "", flow_counts[f]);
	printf("]");
	for (i = 0; i < B__MAX; i++)
		json_row(base_prog[i] + strlen("bench_"), m->base[i], 0);
	for (sc = 0; sc < NSC; sc++)
		for (a = 0; a < AFCD_ALGO__MAX; a++) {
			snprintf(name, sizeof(name), "%s_%s", afcd_algo_name(a), sc_name[sc]);
			json_row(name, m->r[sc][a], 0);
		}
	printf(",\n \"ratio_to_edt_min\": {");
	for (sc = 0; sc < NSC; sc++)
		for (a = 0; a < AFCD_ALGO__MAX; a++) {
			snprintf(name, sizeof(name), "%s_%s", afcd_algo_name(a), sc_name[sc]);
			json_row(name, m->ratio[sc][a], !sc && !a);
		}
	printf("},\n \"stages\": {");
	for (a = 0; a < NSTAGE_ALGO; a++)
		for (sc = 0; sc < NSTAGE_SC; sc++) {
			const struct stage_row *row = &m->stages[a][sc];

			printf("%s\n  \"%s_%s\": {\"flows\": %u", a || sc ? "," : "",
			       afcd_algo_name(stage_algo[a]), sc_name[stage_sc[sc]], STAGE_FLOWS);
			for (i = 0; i < NSTAGE; i++)
				printf(", \"%s\": {\"prefix_ns\": %.1f, \"stage_ns\": %.1f, "
				       "\"xlated_insns\": %u, \"jited_bytes\": %u}", stage_name[i],
				       row->prefix_ns[i], row->prefix_ns[i] - (i ? row->prefix_ns[i - 1] :
				       row->empty_ns), row->xlated[i], row->jited[i]);
			printf(", \"empty_ns\": %.1f, \"edt_min_ns\": %.1f}", row->empty_ns,
			       row->edt_min_ns);
		}
	printf("},\n ");
	print_scaling_json(m);
	printf(",\n ");
	print_churn_json(m);
	printf("}\n");
}

/* Each stage's ns a packet (its prefix's less the one before), the prefix's
 * total, and the prefix's size translated and jited. */
static void print_stages(const struct bench_results *m)
{
	int a, sc, i;

	printf("\nwhere the time goes: afcd_egress cut after each stage, %u flows, ns/packet "
	       "of the stage (its prefix less the one before; config: less the empty program "
	       "measured beside), fastest of %d loads:\n", STAGE_FLOWS, rounds);
	printf("  %-22s", "");
	for (i = 0; i < NSTAGE; i++)
		printf("%9s", stage_name[i]);
	printf("%9s%9s%9s\n", "total", "empty", "min EDT");
	for (a = 0; a < NSTAGE_ALGO; a++)
		for (sc = 0; sc < NSTAGE_SC; sc++) {
			const struct stage_row *row = &m->stages[a][sc];

			printf("  %-5s %-16s", afcd_algo_name(stage_algo[a]), sc_name[stage_sc[sc]]);
			for (i = 0; i < NSTAGE; i++)
				printf("%9.1f", row->prefix_ns[i] - (i ? row->prefix_ns[i - 1] :
								     row->empty_ns));
			printf("%9.1f%9.1f%9.1f\n", row->prefix_ns[NSTAGE - 1], row->empty_ns,
			       row->edt_min_ns);
		}
	printf("  %-22s", "insns (xlated) / prefix");
	for (i = 0; i < NSTAGE; i++)
		printf("%9u", m->stages[0][0].xlated[i]);
	printf("\n  %-22s", "bytes (jited) / prefix");
	for (i = 0; i < NSTAGE; i++)
		printf("%9u", m->stages[0][0].jited[i]);
	printf("\n");
}

static void print_table(const struct bench_results *m)
{
	double x, worst = 0;
	char name[48];
	int a, sc, i;
	unsigned f;

	printf("ns/packet, BPF_PROG_TEST_RUN: fastest of %d measurements, each the mean of "
	       "%d runs x %d packets (flow map bound %u)\n\n", rounds, repeat, samples,
	       AFCD_FLOWS_MAX);
	printf("%-26s", "program \\ flows");
	for (f = 0; f < NFC; f++)
		printf("%10u", flow_counts[f]);
	printf("\n");
	for (i = 0; i < B__MAX; i++) {
		printf("%-26s", base_label[i]);
		for (f = 0; f < NFC; f++)
			printf("%10.1f", m->base[i][f]);
		printf("\n");
	}
	for (sc = 0; sc < NSC; sc++)
		for (a = 0; a < AFCD_ALGO__MAX; a++) {
			snprintf(name, sizeof(name), "%s/%s", afcd_algo_name(a), sc_name[sc]);
			printf("%-26s", name);
			for (f = 0; f < NFC; f++)
				printf("%10.1f", m->r[sc][a][f]);
			printf("\n");
		}
	printf("\nratio to the minimal EDT program measured beside it (aim <= 1.5x), "
	       "growth 1 -> 100k flows (aim <= 1.2x):\n");
	for (sc = 0; sc < NSC; sc++)
		for (a = 0; a < AFCD_ALGO__MAX; a++) {
			if (afcd_algo_row(a).law != AFCD_LAW_TARGET_I)
				continue; /* the aims are the dissertation's laws' */
			printf("  %-5s %-16s", afcd_algo_name(a), sc_name[sc]);
			for (f = 0; f < NFC; f++) {
				x = m->ratio[sc][a][f];
				if (x > worst)
					worst = x;
				printf("%8.2fx", x);
			}
			printf("   growth %.2fx\n", m->r[sc][a][NFC - 1] / m->r[sc][a][0]);
		}
	printf("  worst %.2fx\n", worst);
	print_stages(m);
	print_scaling(m);
	print_churn(m);
}

int main(int argc, char **argv)
{
	static struct bench_results m;
	struct bench_bpf *bskel;
	int fd[B__MAX], err;

	err = parse_args(argc, argv);
	if (err)
		return err;
	libbpf_set_print(libbpf_quiet);
	bskel = bench_open(fd);
	if (!bskel) {
		fprintf(stderr, "afcd-bench: cannot load the baselines: %s (root needed)\n",
			strerror(errno));
		return 1;
	}
	err = measure_all(&m, fd);
	bench_bpf__destroy(bskel);
	if (err) {
		if (errno)
			fprintf(stderr, "afcd-bench: BPF_PROG_TEST_RUN failed: %s (root needed)\n",
				strerror(errno));
		return 1;
	}
	if (scaling_only && json) {
		printf("{");
		print_scaling_json(&m);
		printf("}\n");
	} else if (scaling_only) {
		print_scaling(&m);
	} else if (json)
		print_json(&m);
	else
		print_table(&m);
	return 0;
}
