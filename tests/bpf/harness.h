/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * harness.h - what every BPF_PROG_TEST_RUN test of afcd_egress and the
 * control program shares (tests/bpf/harness.c): a fresh private copy of
 * the program per test with the test clock (afcd_test_clock = 1, the
 * clock set by set_now()), configs and estimates written like the loader
 * does, one packet run at a time, readers of the queue and flow state,
 * and the control program on the same maps. The runner (harness.c's
 * main) moves into its own network namespace with a veth pair, so that a
 * second real ifindex exists, and runs every suite below.
 *
 *   build/test_datapath [name-filter]      (root)
 */
#ifndef AFCD_TEST_HARNESS_H
#define AFCD_TEST_HARNESS_H

#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "afcd_config.h"
#include "afcd_law.h"
#include "afcd_ctl.h"
#include "afcd_parse.h"
#include "afcd.skel.h"
#include "afcd_ctl.skel.h"
#include "check.h"
#include "pkt.h"

#define TC_ACT_OK   0
#define TC_ACT_SHOT 2
#define MS 1000000ULL
#define US 1000ULL

/* What one run of the program left: its verdict and the frame out. */
struct out {
	int verdict;
	__u64 tstamp;
	__u8 data[PKT_MAX];
	__u32 len;
};

extern const char *filter;          /* argv[1]: run only tests whose name contains it */
extern struct afcd_bpf *skel;       /* the program under test (load() .. unload()) */
extern int prog_fd;
extern int veth_ifindex;            /* the second real interface (setup_netns()) */
extern __u32 next_wire_len;         /* GSO-like wire length for the next run, 0 = len */
extern __u64 next_tstamp;           /* skb->tstamp the next run's sender set, 0 = none */
extern struct afcd_ctl_bpf *ctl;    /* the control program (load_ctl() .. unload_ctl()) */

/* A fresh private copy of afcd_egress with the test clock: 0, or -1;
 * test_netns_probe 1: its device's namespace read with
 * bpf_probe_read_kernel() (the way of kernels without the kfunc). */
extern int test_netns_probe;
/* afcd_flows' entries at the next load() (afcd attach --flow-table); 0:
 * the map's own bound, AFCD_FLOWS_MAX. */
extern __u32 test_flow_table;
int load(void);
void unload(void);
/* The flow-id key of the queues set_cfg() claims (k0 xor the ifindex). */
#define TEST_FLOW_KEY0 0x5eed0f10a7c0ffeeULL
#define TEST_FLOW_KEY1 0x0123456789abcdefULL
/* A complete config of algo at 100 Mbit/s: the loader's defaults, with
 * target 5 ms, interval 100 ms and RTT 20 ms for every algo, the policer
 * off and no sampling (tests set what they are about). */
struct afcd_config cfg_base(__u32 algo);
__u32 slot_of(__u32 ifindex);
/* Write config, estimate and clock as the loader and the test clock do;
 * a config's netns_cookie 0 is this namespace's (the loader's netns_cookie(), loader/sys.h). */
void set_cfg(__u32 ifindex, const struct afcd_config *cfg);
void put_cfg(__u32 ifindex, __u32 slot, const struct afcd_config *c);
void del_cfg(__u32 ifindex);
void set_est(__u32 ifindex, __u32 m_fair, __u64 gt_ns);
void set_now(__u64 t);
/* Run one frame on ifindex (run(): on the default one): 0, or -1. */
int run_if(const __u8 *buf, int len, __u32 ifindex, struct out *o);
int run(const struct pkt_spec *s, struct out *o);
/* Readers of the per-interface and per-flow state (get_queue(): its
 * counters' per-CPU parts folded in, as every reader takes them). */
struct afcd_queue get_queue(__u32 ifindex);
__u32 queues_in_use(void);
__u64 peek_t_last(__u32 ifindex);
struct afcd_flow_key key_of(const struct pkt_spec *s, __u32 ifindex);
/* The flow's id in afcd_flows (afcd_flow_id() under its queue's seed),
 * and its entry: 0, or -ENOENT (none, or another flow's under its id). */
__u64 flow_id_of(const struct pkt_spec *s, __u32 ifindex);
int get_flow(const struct pkt_spec *s, __u32 ifindex, struct afcd_flow *f);
/* Make the entry of s's flow on ifindex before its first packet, born
 * two default windows (AFCD_DEF_WINDOW_NS) before now_ns (the datapath's clock, set_now()): a
 * long-lived flow's, no mouse (afcd_is_mouse()), whose samples are its
 * own from its first packet. The queue must be set (set_cfg()). Returns
 * 0 or a libbpf error (-EEXIST: it has an entry). */
int old_flow(const struct pkt_spec *s, __u32 ifindex, __u64 now_ns);
__u32 map_count(struct bpf_map *m);
/* The shadow buffer's books checked (each entity's count in afcd_sb_count
 * is its slots in the ring, the histogram and N count each once): the
 * slots of flow a (0 for NULL). */
__u32 ring_books(__u32 sb_size, const struct pkt_spec *a);
/* n packets of flow a 10 us apart from *now, each one a sample. */
void fill_samples(const struct pkt_spec *a, int n, __u64 *now);
/* Move into a private network namespace with a veth pair: 0, or -1. */
int setup_netns(void);
/* The control program on the same maps, and one control frame to it. */
int load_ctl(void);
void unload_ctl(void);
int ctl_op(__u32 op, __u32 ifindex, __u32 slot, __u64 now, __u64 idle, __u64 *deleted);
/* The crowd the last ctl_op() answered (afcd_ctl_args.crowd, GC). */
extern __u32 ctl_crowd;
__u64 mono_ns(void);
/* The loader's scan, computed here, written for the refresh step. */
void scan_from_hist(const struct afcd_sb_hist *h, __u32 sb_size, __u64 capacity,
		    struct afcd_scan *sc);
void put_scan(__u32 ifindex, const struct afcd_scan *sc);
struct afcd_est get_est(__u32 ifindex);

#define SETUP() do { if (load()) { CHECK(0, "load failed"); return; } } while (0)
#define SETUP_CTL() do { SETUP(); if (load_ctl()) { CHECK(0, "ctl load failed"); \
			 unload(); return; } } while (0)

/* One suite: its tests in order, ended by { NULL }. */
struct test_case { const char *name; void (*fn)(void); };
#define TC(fn) { #fn, fn }
extern const struct test_case edt_tests[], afcd_tests[], fall_tests[], ecn_tests[],
	state_tests[], ctl_tests[], fair_tests[], loop_tests[], fuzz_tests[];

#endif /* AFCD_TEST_HARNESS_H */
