/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * loop.h - a closed loop around the real program: model senders whose
 * packets go through afcd_egress (BPF_PROG_TEST_RUN on the test clock,
 * harness.h), leave at the departure time the program stamps, and are
 * acknowledged one base RTT later, with the refresh step and the
 * loader's scan run between them as the kernel timer and the loader run
 * them. Nothing waits on a real clock, so a run gives the same numbers on
 * a fast or a loaded machine (tests/bpf/loop.c).
 *
 * The senders are models, not the kernel's TCP: Reno and CUBIC (RFC 9438,
 * as Linux's tcp_cubic.c: C = 0.4, beta 0.7, fast convergence, the
 * Reno-friendly estimate, HyStart's delay exit) with one window reduction
 * per round trip, loss found by three later deliveries or a timeout
 * (RFC 6298: 200 ms floor, as Linux), ECN (RFC 3168: a CE mark echoed one
 * RTT later reduces the window as a loss does, without a retransmission);
 * constant-rate senders with Poisson gaps (UDP), each datagram at its own
 * time or in the bursts of a late pacing timer; churn: a constant-rate
 * source whose every packet is the next of churn_flows flows, cycled (one
 * small datagram each, as a scan or a crowd of short flows keeps an
 * ISP's flow table full); and a ping at 100 Hz,
 * whose sojourns are the queueing delay the testbed's ping measures.
 * Receivers acknowledge every packet, or every second one (ack_every 2:
 * Linux's delayed ACK, 40 ms timer, at once while a loss is outstanding);
 * packets leave at their departure time, or (late_mean_s) when the
 * enforcing qdisc's timer fires late and releases all that is due, as
 * sch_fq's does under TCG. The senders' links are infinitely fast and the
 * ACK path has the whole base RTT, as the testbed's netem on the
 * receiver's egress. What the VM runs measure with the kernel's TCP
 * is the reference; this loop lets a change to the decision be judged in
 * seconds and pinned in tests.
 */
#ifndef AFCD_TEST_LOOP_H
#define AFCD_TEST_LOOP_H

#include <linux/types.h>

enum loop_kind { LOOP_RENO, LOOP_CUBIC, LOOP_UDP, LOOP_CHURN };

/* One sender. The caller sets the first block; loop_run() the results. */
struct loop_flow {
	enum loop_kind kind;
	double rate_bps;          /* UDP, churn: sending rate, bits/s of frames */
	__u32 churn_flows;        /* churn: flows cycled through, 1 .. 2^24 */
	int len;                  /* churn: frame length, bytes (0: 64) */
	double start_s;           /* when it starts, s of the run */
	int ect;                  /* ECN-capable (ECT(0)), reacts to CE */
	/* results over [warm_s, secs] */
	double goodput_bps;       /* bytes delivered (admitted by the program) */
	__u64 sent, dropped, marked; /* packets */
	__u64 policed;            /* of dropped, those the fair-rate policer dropped */
	__u64 reductions, timeouts;  /* window reductions (loss or CE), RTOs, over the
				      * whole run */
	double cwnd_mean;         /* packets, mean over ACKs after warm_s */
	__u64 admitted_all;       /* TCP, UDP: packets the program admitted, whole run */
	__u64 entry_packets;      /* TCP, UDP: the flow entry's admitted count at the end
				   * (afcd_flow.packets): less than admitted_all when the
				   * entry was evicted and made again, 0 with no entry */
};

/* One run. The program's config is the loader's defaults for algo at
 * rate_bps with the testbed's parameters (bottleneck.py): horizon =
 * buffer_bdp x rate x rtt (at least target), target, interval, rtt,
 * update_period, ecn; flags replace the defaults' (AFCD_F_POLICE ...). */
struct loop_cfg {
	__u32 algo;
	__u32 flags;
	double rate_bps;
	double rtt_s;             /* base RTT of every flow */
	double buffer_bdp;
	double target_s, interval_s, update_s;
	double secs, warm_s;
	__u32 sb_size;            /* the shadow buffer's samples; 0: the default (2000) */
	__u32 flow_table;         /* afcd_flows' entries (afcd attach --flow-table); 0: the
				   * map's own bound, AFCD_FLOWS_MAX */
	__u64 seed;               /* the UDP senders' gaps and the ping's phase */
	int ack_every;            /* the receivers' delayed ACK: 2 (Linux), or 0/1: every packet */
	double late_mean_s;       /* the enforcing qdisc's timer fires late by an exponential
				   * time of this mean and releases what is due (0: on time) */
	double udp_tick_s;        /* the UDP senders send what is due when their pacing timer
				   * fires, every udp_tick_s (iperf3's 1 ms), late by an
				   * exponential time of mean udp_late_mean_s (a guest's
				   * timers under TCG); 0: each datagram at its own time */
	double udp_late_mean_s;
};

struct loop_res {
	double util;              /* delivered bits / (rate x (secs - warm_s)) */
	double jain;              /* over the goodput of every flow but the churn sources */
	double q_p50_s, q_p99_s, q_mean_s; /* the ping's sojourns after warm_s */
	double idle_frac;         /* the virtual queue's idle time / (secs - warm_s) */
	__u64 police_drop, aqm_drop, overlimit_drop, marks; /* after warm_s */
	__u64 ping_lost;
	__u64 flows_made, flow_fail;  /* flow entries created, inserts failed, after warm_s */
};

/* The most flows a run takes (ev.flow is 16 bits, the ping is one more).
 * Past 64 flows a TCP flow's window is held below 4,095 packets. */
#define LOOP_MAXF 16384

/* Run the loop: 0, or -1 when the program could not be loaded or n is
 * not 1 .. LOOP_MAXF. */
int loop_run(const struct loop_cfg *c, struct loop_flow *f, int n, struct loop_res *r);
/* One line of r and the flows, indented, for a test's output. */
void loop_print(const char *what, const struct loop_flow *f, int n, const struct loop_res *r);

#endif /* AFCD_TEST_LOOP_H */
