// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * afcd-bench - per-packet cost of afcd_egress for every algo, next to an
 * empty tc program and a minimal one-lookup EDT program, measured in the
 * same run with BPF_PROG_TEST_RUN (the kernel times `repeat` runs of the
 * program on one packet and reports the mean, excluding the syscall).
 *
 * For each algo and flow count the flow map is first warmed with that
 * many distinct flows, then SAMPLES packets spread over those flows are
 * each run REPEAT times; the table gives the mean ns/packet.
 *   scenario "idle":      rate 1 Tbit/s, the virtual queue stays empty;
 *   scenario "congested": rate 1 Gbit/s, horizon 10 s: the queue sits far
 *                         above target and the drop law is active.
 *
 *   build/afcd-bench [-r REPEAT] [-s SAMPLES] [-j]     (root)
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "afcd_maps.h"
#include "afcd.skel.h"
#include "bench.skel.h"
#include "pkt.h"

static int repeat = 20000, samples = 32, json;

static const char *algo_name[] = { "droptail", "codel", "afd", "afcd", "fall" };
static const unsigned flow_counts[] = { 1, 100, 10000, 100000 };
#define NFC (sizeof(flow_counts) / sizeof(flow_counts[0]))

static int libbpf_quiet(enum libbpf_print_level l, const char *f, va_list a)
{
	return l == LIBBPF_WARN ? vfprintf(stderr, f, a) : 0;
}

static int build_flow_pkt(__u8 *buf, unsigned i)
{
	struct pkt_spec s = pkt_tcp4((__u16)(1024 + i), 1514);
	int len;

	s.src4 = 0xC6120000u | (i >> 16);  /* 198.18.x.y */
	s.sport = (__u16)i;
	len = pkt_build(buf, &s);
	return len;
}

/* mean ns/run of prog over `samples` packets spread over nflows, after
 * warming the maps with nflows distinct flows. */
static double measure(int prog_fd, unsigned nflows)
{
	__u8 buf[PKT_MAX];
	struct __sk_buff ctx = { .ifindex = 1 };
	double total = 0;
	unsigned i;
	int len;

	for (i = 0; i < nflows; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = 1);

		len = build_flow_pkt(buf, i);
		o.data_size_in = len;
		if (bpf_prog_test_run_opts(prog_fd, &o))
			return -1;
	}
	for (i = 0; i < (unsigned)samples; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = repeat);

		len = build_flow_pkt(buf, (unsigned)((unsigned long long)i * nflows / samples));
		o.data_size_in = len;
		if (bpf_prog_test_run_opts(prog_fd, &o))
			return -1;
		total += o.duration;
	}
	return total / samples;
}

static double run_afcd(int algo, unsigned nflows, int congested)
{
	struct afcd_bpf *skel = afcd_bpf__open();
	struct bpf_map *m;
	struct afcd_config c = {
		.abi = AFCD_ABI_VERSION, .algo = algo, .exponent = 3,
		.rate_bps = congested ? 1000000000ULL : AFCD_RATE_MAX_BPS,
		.target_ns = AFCD_DEF_TARGET_NS, .interval_ns = AFCD_DEF_INTERVAL_NS,
		.horizon_ns = congested ? 10000000000ULL : AFCD_DEF_HORIZON_NS,
		.rtt_ns = 20000000, .stale_after_ns = AFCD_DEF_STALE_AFTER_NS,
		.sb_size = AFCD_SB_SIZE_DEFAULT, .mtu_bytes = 1514,
	};
	__u32 key = 1;
	double ns;

	if (!skel)
		return -1;
	bpf_object__for_each_map(m, skel->obj)
		bpf_map__set_pin_path(m, NULL);
	if (afcd_bpf__load(skel)) {
		afcd_bpf__destroy(skel);
		return -1;
	}
	/* sample_bytes as the loader derives it: the ring covers 1 s */
	c.sample_bytes = c.rate_bps / 8 / c.sb_size;
	c.slot = 0;
	c.ifindex = key;
	bpf_map__update_elem(skel->maps.afcd_cfg, &key, 4, &c, sizeof(c), BPF_ANY);
	{
		struct afcd_queue q = { .ifindex = key };
		__u32 slot = 0;

		bpf_map__update_elem(skel->maps.afcd_queue, &slot, 4, &q, sizeof(q), BPF_ANY);
	}
	ns = measure(bpf_program__fd(skel->progs.afcd_egress), nflows);
	afcd_bpf__destroy(skel);
	return ns;
}

static double run_baseline(int edt, unsigned nflows)
{
	struct bench_bpf *skel = bench_bpf__open_and_load();
	struct { __u64 t_last_ns, rate_bps; } st = { 0, 1000000000000ULL };
	__u32 key = 1;
	double ns;

	if (!skel)
		return -1;
	bpf_map__update_elem(skel->maps.bench_state, &key, 4, &st, sizeof(st), BPF_ANY);
	ns = measure(bpf_program__fd(edt ? skel->progs.bench_edt_min : skel->progs.bench_empty),
		     nflows);
	bench_bpf__destroy(skel);
	return ns;
}

int main(int argc, char **argv)
{
	double base_empty[NFC], base_edt[NFC], r[2][AFCD_ALGO__MAX][NFC];
	int opt, a, sc;
	unsigned f;

	while ((opt = getopt(argc, argv, "r:s:jh")) != -1) {
		switch (opt) {
		case 'r': repeat = atoi(optarg); break;
		case 's': samples = atoi(optarg); break;
		case 'j': json = 1; break;
		default:
			fprintf(stderr, "usage: %s [-r REPEAT] [-s SAMPLES] [-j]\n", argv[0]);
			return 2;
		}
	}
	if (repeat < 1 || samples < 1) {
		fprintf(stderr, "afcd-bench: -r and -s must be >= 1\n");
		return 2;
	}
	libbpf_set_print(libbpf_quiet);
	for (f = 0; f < NFC; f++) {
		base_empty[f] = run_baseline(0, flow_counts[f]);
		base_edt[f] = run_baseline(1, flow_counts[f]);
		for (sc = 0; sc < 2; sc++)
			for (a = 0; a < AFCD_ALGO__MAX; a++)
				r[sc][a][f] = run_afcd(a, flow_counts[f], sc);
		if (base_empty[f] < 0 || base_edt[f] < 0) {
			fprintf(stderr, "afcd-bench: BPF_PROG_TEST_RUN failed: %s (root needed)\n",
				strerror(errno));
			return 1;
		}
	}
	if (json) {
		printf("{\"repeat\": %d, \"samples\": %d, \"flows\": [", repeat, samples);
		for (f = 0; f < NFC; f++)
			printf("%s%u", f ? ", " : "", flow_counts[f]);
		printf("],\n \"empty\": [");
		for (f = 0; f < NFC; f++)
			printf("%s%.1f", f ? ", " : "", base_empty[f]);
		printf("],\n \"edt_min\": [");
		for (f = 0; f < NFC; f++)
			printf("%s%.1f", f ? ", " : "", base_edt[f]);
		printf("]");
		for (sc = 0; sc < 2; sc++)
			for (a = 0; a < AFCD_ALGO__MAX; a++) {
				printf(",\n \"%s_%s\": [", algo_name[a], sc ? "congested" : "idle");
				for (f = 0; f < NFC; f++)
					printf("%s%.1f", f ? ", " : "", r[sc][a][f]);
				printf("]");
			}
		printf("}\n");
		return 0;
	}
	printf("ns/packet, BPF_PROG_TEST_RUN mean of %d runs x %d packets "
	       "(flow map bound %u)\n\n", repeat, samples, AFCD_FLOWS_MAX);
	printf("%-22s", "program \\ flows");
	for (f = 0; f < NFC; f++)
		printf("%10u", flow_counts[f]);
	printf("\n%-22s", "empty tc program");
	for (f = 0; f < NFC; f++)
		printf("%10.1f", base_empty[f]);
	printf("\n%-22s", "minimal EDT (1 lookup)");
	for (f = 0; f < NFC; f++)
		printf("%10.1f", base_edt[f]);
	printf("\n");
	for (sc = 0; sc < 2; sc++)
		for (a = 0; a < AFCD_ALGO__MAX; a++) {
			char name[40];

			snprintf(name, sizeof(name), "%s/%s", algo_name[a], sc ? "congested" : "idle");
			printf("%-22s", name);
			for (f = 0; f < NFC; f++)
				printf("%10.1f", r[sc][a][f]);
			printf("\n");
		}
	printf("\nratio to minimal EDT (afcd, fall):\n");
	for (sc = 0; sc < 2; sc++)
		for (a = AFCD_ALGO_AFCD; a <= AFCD_ALGO_FALL; a++) {
			printf("  %-9s %-9s", algo_name[a], sc ? "congested" : "idle");
			for (f = 0; f < NFC; f++)
				printf("%8.2fx", r[sc][a][f] / base_edt[f]);
			printf("\n");
		}
	return 0;
}
