// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The closed loop of model senders around afcd_egress; see loop.h. */
#include "harness.h"
#include "loop.h"
#include "afcd_decide.h"

#define LOOP_FRAME    1514        /* a full-size TCP or UDP frame, bytes */
#define LOOP_PING_LEN 98          /* ping's default echo request, bytes */
#define LOOP_RING     (1u << 16)  /* packets a TCP flow may have unresolved */
#define LOOP_RING_CROWD (1u << 12) /* the same in runs of more than LOOP_FEW flows */
#define LOOP_FEW      64
#define PING_PERIOD   (10 * MS)   /* the testbed's ping: 100 Hz */
#define RTO_MIN       (200 * MS)  /* Linux's TCP_RTO_MIN */
#define RTO_INIT      (1000 * MS) /* RFC 6298 */

/* CUBIC as Linux's tcp_cubic.c has it (RFC 9438 sec. 4). */
#define CUBIC_C       0.4
#define CUBIC_BETA    0.7
#define RENO_BETA     0.5
#define HYSTART_LOW   16          /* hystart_low_window */
#define HYSTART_DELAY_MIN (4 * MS)
#define HYSTART_DELAY_MAX (16 * MS)
#define HYSTART_ACK_DELTA (2 * MS)
#define HYSTART_SAMPLES 8

enum ev_type { EV_ACK, EV_UDP, EV_RTO, EV_START, EV_PING, EV_DELACK };

struct ev {
	__u64 t;
	__u64 sent;               /* EV_ACK: when the packet was sent */
	__u32 seq;
	__u16 flow;
	__u8 type;
	__u8 ce;                  /* EV_ACK: the packet was CE-marked */
};

/* A model TCP sender's state (loop.h's model). */
struct tcp {
	double cwnd, ssthresh;    /* packets */
	__u32 nxt;                /* next sequence number (a new packet each send) */
	__u32 recover;            /* one reduction per round: none for packets below it */
	__u32 inflight;           /* sent, neither delivered nor found lost */
	__u32 *lost;              /* ring of dropped packets not yet found lost */
	__u32 lost_head, lost_tail;
	__u64 srtt, rttvar, min_rtt, rto, rto_at; /* ns */
	int rto_armed;
	/* CUBIC */
	double w_last_max, origin, k_s, w_tcp, cnt_acc;
	__u64 epoch_start, ack_cnt;
	/* HyStart */
	__u32 end_seq, samples;
	__u64 round_start, last_ack, curr_rtt;
	int found;
	/* the receiver's delayed ACK (ack_every 2): a delivered packet whose
	 * ACK waits for the next one or the delayed-ACK timer */
	__u64 pend_sent, pend_rel;
	__u32 pend_seq;
	__u8 pend, pend_ce;
	/* statistics */
	double cwnd_sum;
	__u64 cwnd_n;
};

static struct ev *heap;
static size_t heap_n, heap_cap;

static void push(struct ev e)
{
	size_t i = heap_n++;

	if (heap_n > heap_cap) {
		heap_cap = heap_cap ? 2 * heap_cap : 4096;
		heap = realloc(heap, heap_cap * sizeof(*heap));
	}
	while (i && heap[(i - 1) / 2].t > e.t) {
		heap[i] = heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	heap[i] = e;
}

static struct ev pop(void)
{
	struct ev top = heap[0], last = heap[--heap_n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < heap_n) {
		if (c + 1 < heap_n && heap[c + 1].t < heap[c].t)
			c++;
		if (heap[c].t >= last.t)
			break;
		heap[i] = heap[c];
		i = c;
	}
	heap[i] = last;
	return top;
}

static __u64 rng;

static double uniform(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return ((rng >> 11) + 1) * (1.0 / 9007199254740993.0);
}

/* The run's clock starts at T0 (the program treats 0 as "never"). */
#define T0 (1000 * MS)

struct loop_run_state {
	const struct loop_cfg *c;
	struct loop_flow *f;
	struct tcp *tcp;
	int n;
	__u32 ring;               /* each TCP flow's ring of unresolved drops, a power of 2 */
	__u64 warm, end, rtt;
	double *ping;             /* sojourns, s */
	size_t ping_n;
	__u64 ping_lost;
	__u64 fire_t;             /* the last firing of the enforcing qdisc's timer */
	__u64 police_seen;        /* the policer's drop counter at the last drop */
};

#define DELACK (40 * MS)          /* Linux's TCP_DELACK_MIN */

/* When a packet stamped dep leaves: at dep, or (late_mean_s) at the
 * firing of the timer that releases it, which fires late by an
 * exponential time and then releases every packet due (sch_fq's
 * watchdog under a slow emulator: the packets behind a late firing go
 * together). Packets come here in departure order. */
static __u64 release_at(struct loop_run_state *s, __u64 dep)
{
	if (s->c->late_mean_s <= 0)
		return dep;
	if (dep <= s->fire_t)
		return s->fire_t;
	s->fire_t = dep + (__u64)(-log(uniform()) * s->c->late_mean_s * 1e9);
	return s->fire_t;
}

/* The receiver's ACK of a packet that left at rel: now (ack_every 1, or
 * while a loss is outstanding: an out-of-order arrival is acknowledged at
 * once, as Linux does), with the one before it (every second packet), or
 * when the delayed-ACK timer fires. ACKs take the whole base RTT. */
static void receive(struct loop_run_state *s, int i, __u32 seq, __u64 sent, __u64 rel, int ce)
{
	struct tcp *t = &s->tcp[i];

	if (s->c->ack_every < 2 || t->lost_head != t->lost_tail) {
		push((struct ev){ .t = rel + s->rtt, .sent = sent, .seq = seq, .flow = (__u16)i,
				  .type = EV_ACK, .ce = (__u8)ce });
		return;
	}
	if (t->pend) {
		push((struct ev){ .t = rel + s->rtt, .sent = t->pend_sent, .seq = t->pend_seq,
				  .flow = (__u16)i, .type = EV_ACK, .ce = t->pend_ce });
		push((struct ev){ .t = rel + s->rtt, .sent = sent, .seq = seq, .flow = (__u16)i,
				  .type = EV_ACK, .ce = (__u8)ce });
		t->pend = 0;
		return;
	}
	t->pend = 1;
	t->pend_seq = seq;
	t->pend_sent = sent;
	t->pend_rel = rel;
	t->pend_ce = (__u8)ce;
	push((struct ev){ .t = rel + DELACK, .seq = seq, .flow = (__u16)i, .type = EV_DELACK });
}

/* Flow i's packets (the ping is flow n): TCP or UDP from 198.18.0.1 + i,
 * port 10000 + i. */
static struct pkt_spec spec_of(const struct loop_run_state *s, int i, int len, __u8 proto)
{
	struct pkt_spec p = pkt_tcp4((__u16)(10000 + i), len);

	p.proto = proto;
	p.src4 = 0xC6120001u + (__u32)i;
	if (i < s->n && s->f[i].ect)
		p.ecn = 2;                      /* ECT(0) */
	if (proto == 1) {                       /* echo request, type 8 code 0 */
		p.sport = 0x0800;
		p.dport = 1;
	}
	return p;
}

static void frame_of(const struct loop_run_state *s, int i, int len, __u8 proto, __u8 *buf,
		     int *blen)
{
	struct pkt_spec p = spec_of(s, i, len, proto);

	*blen = pkt_build(buf, &p);
}

/* The k-th flow of a churn source: a UDP datagram from 198.19.0.0 +
 * (k >> 16), source port k & 0xffff (2^24 flows, none of them another
 * sender's). */
static void churn_frame(__u32 k, int len, __u8 *buf, int *blen)
{
	struct pkt_spec p = pkt_tcp4((__u16)k, len);

	p.proto = 17;
	p.src4 = 0xC6130000u | (k >> 16);
	*blen = pkt_build(buf, &p);
}

/* Run one frame at now; returns its departure time (0: dropped) and
 * whether it left CE-marked. */
static __u64 send_frame(const __u8 *buf, int len, __u64 now, int *ce)
{
	struct out o;

	set_now(now);
	if (run_if(buf, len, 1, &o) != TC_ACT_OK)
		return 0;
	*ce = (o.data[15] & 3) == 3;
	return o.tstamp > now ? o.tstamp : now;
}

/* After a drop: whether the policer made it (its counter moved since the
 * last drop; nothing else changes the drop counters between sends). */
static int policed(struct loop_run_state *s)
{
	__u64 p = get_queue(1).stats[AFCD_S_POLICE_DROP];
	int moved = p != s->police_seen;

	s->police_seen = p;
	return moved;
}

static void in_window(struct loop_run_state *s, int i, __u64 t_dep, int bytes)
{
	if (t_dep >= s->warm && t_dep < s->end)
		s->f[i].goodput_bps += bytes;
}

/* ---- the TCP model ---- */

static void tcp_arm_rto(struct loop_run_state *s, int i, __u64 now)
{
	struct tcp *t = &s->tcp[i];

	t->rto_at = now + t->rto;
	if (!t->rto_armed) {
		t->rto_armed = 1;
		push((struct ev){ .t = t->rto_at, .flow = (__u16)i, .type = EV_RTO });
	}
}

static void tcp_send(struct loop_run_state *s, int i, __u64 now)
{
	struct tcp *t = &s->tcp[i];
	__u8 buf[PKT_MAX];
	int len, ce = 0;

	frame_of(s, i, LOOP_FRAME, 6, buf, &len);
	while (t->inflight < (__u32)t->cwnd && t->inflight < s->ring - 1) {
		__u64 dep = send_frame(buf, len, now, &ce);
		__u32 seq = t->nxt++;
		int late = now >= s->warm;

		s->f[i].sent += late;
		t->inflight++;
		if (dep) {
			s->f[i].admitted_all++;
			s->f[i].marked += late && ce;
			receive(s, i, seq, now, release_at(s, dep), ce);
		} else {
			s->f[i].dropped += late;
			s->f[i].policed += policed(s) && late;
			t->lost[t->lost_tail++ % s->ring] = seq;
		}
	}
	if (t->inflight && !t->rto_armed)
		tcp_arm_rto(s, i, now);
}

/* A window reduction (a loss found, or a CE mark echoed), once a round. */
static void tcp_reduce(struct loop_run_state *s, int i, __u64 now)
{
	struct tcp *t = &s->tcp[i];

	if (s->f[i].kind == LOOP_CUBIC) {
		t->epoch_start = 0;
		t->w_last_max = t->cwnd < t->w_last_max ? t->cwnd * (1.0 + CUBIC_BETA) / 2.0 :
			t->cwnd;
		t->ssthresh = t->cwnd * CUBIC_BETA;
	} else {
		t->ssthresh = t->cwnd * RENO_BETA;
	}
	if (t->ssthresh < 2)
		t->ssthresh = 2;
	t->cwnd = t->ssthresh;
	t->recover = t->nxt;
	s->f[i].reductions++;
	(void)now;
}

/* Linux's bictcp_update() in packets and seconds: cwnd grows by 1/cnt
 * per ACK toward the cubic W(t) one min RTT ahead, or the Reno-friendly
 * estimate when that is larger. */
static void cubic_ack(struct tcp *t, __u64 now)
{
	double tt, target, cnt, max_cnt;

	t->ack_cnt++;
	if (!t->epoch_start) {
		t->epoch_start = now;
		t->ack_cnt = 1;
		t->w_tcp = t->cwnd;
		if (t->w_last_max <= t->cwnd) {
			t->k_s = 0;
			t->origin = t->cwnd;
		} else {
			t->k_s = cbrt((t->w_last_max - t->cwnd) / CUBIC_C);
			t->origin = t->w_last_max;
		}
	}
	tt = (double)(now - t->epoch_start + t->min_rtt) / 1e9;
	target = t->origin + CUBIC_C * (tt - t->k_s) * (tt - t->k_s) * (tt - t->k_s);
	cnt = target > t->cwnd ? t->cwnd / (target - t->cwnd) : 100.0 * t->cwnd;
	if (t->w_last_max == 0 && cnt > 20)
		cnt = 20;
	/* the Reno-friendly estimate: 3 (1 - beta) / (1 + beta) packets a round */
	t->w_tcp += 3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA) / t->cwnd;
	if (t->w_tcp > t->cwnd) {
		max_cnt = t->cwnd / (t->w_tcp - t->cwnd);
		if (cnt > max_cnt)
			cnt = max_cnt;
	}
	if (cnt < 2)
		cnt = 2;
	t->cwnd += 1.0 / cnt;
}

/* HyStart (Ha and Rhee; Linux's hystart_update()): leave slow start when
 * a round's ACK train spans half the min RTT or its RTT rises. */
static void hystart(struct tcp *t, __u32 seq, __u64 now, __u64 rtt)
{
	__u64 thr;

	if (t->found || t->cwnd < HYSTART_LOW)
		return;
	if (seq >= t->end_seq || !t->round_start) {
		t->round_start = t->last_ack = now;
		t->end_seq = t->nxt;
		t->curr_rtt = ~0ULL;
		t->samples = 0;
	}
	if (now - t->last_ack <= HYSTART_ACK_DELTA) {
		t->last_ack = now;
		if (now - t->round_start > t->min_rtt / 2)
			t->found = 1;
	}
	if (t->samples < HYSTART_SAMPLES) {
		if (rtt < t->curr_rtt)
			t->curr_rtt = rtt;
		if (++t->samples == HYSTART_SAMPLES) {
			thr = t->min_rtt / 8;
			thr = thr < HYSTART_DELAY_MIN ? HYSTART_DELAY_MIN :
			      thr > HYSTART_DELAY_MAX ? HYSTART_DELAY_MAX : thr;
			if (t->curr_rtt > t->min_rtt + thr)
				t->found = 1;
		}
	}
	if (t->found)
		t->ssthresh = t->cwnd;
}

static void tcp_ack(struct loop_run_state *s, const struct ev *e)
{
	struct loop_flow *f = &s->f[e->flow];
	struct tcp *t = &s->tcp[e->flow];
	__u64 now = e->t, rtt = now - e->sent;

	in_window(s, e->flow, now - s->rtt, LOOP_FRAME);
	t->inflight--;
	/* RFC 6298 */
	if (!t->srtt) {
		t->srtt = rtt;
		t->rttvar = rtt / 2;
	} else {
		__u64 d = rtt > t->srtt ? rtt - t->srtt : t->srtt - rtt;

		t->rttvar = (3 * t->rttvar + d) / 4;
		t->srtt = (7 * t->srtt + rtt) / 8;
	}
	if (!t->min_rtt || rtt < t->min_rtt)
		t->min_rtt = rtt;
	t->rto = t->srtt + 4 * t->rttvar;
	if (t->rto < RTO_MIN)
		t->rto = RTO_MIN;
	/* losses: a dropped packet is found when three sent after it are
	 * delivered, or the newest one is (nothing more would come) */
	while (t->lost_head != t->lost_tail) {
		__u32 d = t->lost[t->lost_head % s->ring];

		if (!(e->seq >= d + 3 || (e->seq > d && e->seq + 1 == t->nxt)))
			break;
		t->lost_head++;
		t->inflight--;
		if (d >= t->recover)
			tcp_reduce(s, e->flow, now);
	}
	if (e->ce && f->ect && e->seq >= t->recover)
		tcp_reduce(s, e->flow, now);
	if (e->seq >= t->recover) {            /* not in recovery: grow */
		if (t->cwnd < t->ssthresh) {
			t->cwnd += 1.0;
			if (f->kind == LOOP_CUBIC)
				hystart(t, e->seq, now, rtt);
		} else if (f->kind == LOOP_CUBIC) {
			cubic_ack(t, now);
		} else {
			t->cwnd += 1.0 / t->cwnd;
		}
	}
	if (now >= s->warm) {
		t->cwnd_sum += t->cwnd;
		t->cwnd_n++;
	}
	tcp_arm_rto(s, e->flow, now);
	tcp_send(s, e->flow, now);
}

static void tcp_rto(struct loop_run_state *s, const struct ev *e)
{
	struct tcp *t = &s->tcp[e->flow];

	t->rto_armed = 0;
	if (!t->inflight)
		return;
	if (e->t < t->rto_at) {                 /* moved by an ACK since */
		t->rto_armed = 1;
		push((struct ev){ .t = t->rto_at, .flow = e->flow, .type = EV_RTO });
		return;
	}
	/* every unresolved drop is lost; the window restarts from one */
	t->inflight -= t->lost_tail - t->lost_head;
	t->lost_head = t->lost_tail;
	tcp_reduce(s, e->flow, e->t);
	s->f[e->flow].reductions--;             /* counted as a timeout */
	s->f[e->flow].timeouts++;
	t->cwnd = 1;
	t->rto = t->rto * 2 > 60000 * MS ? 60000 * MS : t->rto * 2;
	tcp_send(s, e->flow, e->t);
	if (t->inflight)
		tcp_arm_rto(s, e->flow, e->t);
}

/* ---- the refresh step and the loader's scan, as the timer and loader
 * run them ---- */
static void refresh_until(struct loop_run_state *s, __u64 t, __u64 *next, __u64 *scan_next)
{
	const struct loop_cfg *c = s->c;
	__u64 period = (__u64)(c->update_s * 1e9);
	__u32 slot = slot_of(1);

	while (*next <= t) {
		if (*scan_next <= *next) {
			static struct afcd_sb_hist h;
			struct afcd_est e = get_est(1);
			struct afcd_scan sc = {0};
			struct afcd_config cf;

			bpf_map__lookup_elem(skel->maps.afcd_cfg, &slot, 4, &cf, sizeof(cf), 0);
			bpf_map__lookup_elem(skel->maps.afcd_sb_hist, &slot, 4, &h, sizeof(h), 0);
			scan_from_hist(&h, cf.sb_size,
				       afcd_sb_capacity(cf.sb_size, cf.rate_bps, e.arrival_bps), &sc);
			put_scan(1, &sc);
			*scan_next += 50 * MS;
		}
		ctl_op(AFCD_CTL_REFRESH, 1, slot, *next, 0, NULL);
		*next += period;
	}
}

/* AFCD_LOOP_TRACE_CROWD: one line a simulated second for a crowd: the
 * estimate, the mice aggregate's and the last flow's m_i, and of the
 * long-lived flows how many hold an entry, how many of those are young
 * and mice (afcd_is_mouse()), their m_i histogram (0, 1, 2, 3+), and how
 * many CUBIC flows are in retransmission backoff (RTO above its initial). */
static void crowd_trace(const struct loop_run_state *s, __u64 t)
{
	struct afcd_est es = get_est(1);
	struct afcd_queue qq = get_queue(1);
	struct afcd_config cf;
	__u32 slot = slot_of(1), have = 0, mice = 0, hist[4] = {0}, last_m = 0, young = 0;
	__u32 backoff = 0;
	int k;

	bpf_map__lookup_elem(skel->maps.afcd_cfg, &slot, 4, &cf, sizeof(cf), 0);
	for (k = 0; k < s->n; k++) {
		struct pkt_spec ps = spec_of(s, k, LOOP_FRAME, s->f[k].kind == LOOP_UDP ? 17 : 6);
		struct afcd_flow fl = {0};

		if (s->f[k].kind == LOOP_CUBIC && s->tcp[k].rto > RTO_INIT)
			backoff++;
		if (s->f[k].kind == LOOP_CHURN || get_flow(&ps, 1, &fl))
			continue;
		if (s->f[k].kind == LOOP_UDP) {
			last_m = fl.m_i;
			continue;
		}
		have++;
		mice += afcd_is_mouse(fl.m_i, fl.bytes, cf.sample_bytes, fl.born, t, cf.window_ns);
		young += afcd_flow_young(fl.born, t, cf.window_ns);
		hist[fl.m_i < 3 ? fl.m_i : 3]++;
	}
	printf("CT %.1f m_fair %u wl %u N %u n_long %u mice_m %u udp_m %u fair %.2f Mb/s "
	       "drain %u made %llu entries %u young %u mice %u m_i 0/1/2/3+ %u/%u/%u/%u sb %u "
	       "backoff %u\n",
	       (t - T0) / 1e9, es.m_fair, es.waterline, es.n_flows, es.n_long, es.mice_samples,
	       last_m, es.fair_rate_bps / 1e6, es.drain_milli,
	       (unsigned long long)qq.astats[AFCD_A_FLOW_NEW], have, young, mice, hist[0], hist[1],
	       hist[2], hist[3], cf.sb_size, backoff);
	fflush(stdout);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int loop_run(const struct loop_cfg *c, struct loop_flow *f, int n, struct loop_res *r)
{
	struct loop_run_state s = { .c = c, .f = f, .n = n,
				    .ring = n > LOOP_FEW ? LOOP_RING_CROWD : LOOP_RING };
	struct afcd_config cf;
	struct afcd_queue q0, q1;
	__u64 next_refresh, scan_next;
	double bdp_s, total = 0, sq = 0;
	int i, rc, nlong = 0, warm_taken = 0, trace = !!getenv("AFCD_LOOP_TRACE");
	int trace_crowd = !!getenv("AFCD_LOOP_TRACE_CROWD");

	memset(r, 0, sizeof(*r));
	if (n < 1 || n > LOOP_MAXF)
		return -1;
	for (i = 0; i < n; i++)
		if (f[i].kind == LOOP_CHURN && (!f[i].churn_flows || f[i].churn_flows > 1u << 24))
			return -1;
	test_flow_table = c->flow_table;
	rc = load();
	test_flow_table = 0;
	if (rc || load_ctl())
		return -1;
	afcd_config_defaults(&cf, c->algo, (__u64)c->rate_bps);
	cf.target_ns = (__u64)(c->target_s * 1e9);
	cf.interval_ns = (__u64)(c->interval_s * 1e9);
	cf.rtt_ns = (__u64)(c->rtt_s * 1e9);
	bdp_s = c->buffer_bdp * c->rtt_s;
	cf.horizon_ns = (__u64)((bdp_s > c->target_s ? bdp_s : c->target_s) * 1e9);
	cf.update_period_ns = (__u64)(c->update_s * 1e9);
	cf.flags = c->flags;
	if (c->sb_size)
		cf.sb_size = c->sb_size;
	set_cfg(1, &cf);

	s.rtt = cf.rtt_ns;
	s.warm = T0 + (__u64)(c->warm_s * 1e9);
	s.end = T0 + (__u64)(c->secs * 1e9);
	s.tcp = calloc((size_t)n, sizeof(*s.tcp));
	s.ping = calloc((size_t)(c->secs * 1e9 / PING_PERIOD) + 2, sizeof(double));
	rng = c->seed ? c->seed : 1;
	heap_n = 0;
	for (i = 0; i < n; i++) {
		memset(&f[i].goodput_bps, 0, sizeof(*f) - offsetof(struct loop_flow, goodput_bps));
		s.tcp[i].lost = calloc(s.ring, sizeof(__u32));
		s.tcp[i].cwnd = 10;                 /* RFC 6928 */
		s.tcp[i].ssthresh = 1e9;
		s.tcp[i].rto = RTO_INIT;
		push((struct ev){ .t = T0 + (__u64)(f[i].start_s * 1e9) + (__u64)i * 100 * US,
				  .flow = (__u16)i,
				  .type = f[i].kind == LOOP_UDP || f[i].kind == LOOP_CHURN ?
					  EV_UDP : EV_START });
	}
	push((struct ev){ .t = T0 + (__u64)(uniform() * PING_PERIOD), .flow = (__u16)n,
			  .type = EV_PING });
	next_refresh = T0;
	scan_next = T0;
	s.police_seen = get_queue(1).stats[AFCD_S_POLICE_DROP];
	while (heap_n) {
		struct ev e = pop();

		if (e.t >= s.end)
			break;
		refresh_until(&s, e.t, &next_refresh, &scan_next);
		if (!warm_taken && e.t >= s.warm) {
			q0 = get_queue(1);          /* the counters at the warm-up's end */
			warm_taken = 1;
		}
		switch (e.type) {
		case EV_START:
			tcp_send(&s, e.flow, e.t);
			break;
		case EV_ACK:
			tcp_ack(&s, &e);
			break;
		case EV_RTO:
			tcp_rto(&s, &e);
			break;
		case EV_DELACK: {
			struct tcp *t = &s.tcp[e.flow];

			if (t->pend && t->pend_seq == e.seq) {
				push((struct ev){ .t = e.t + s.rtt, .sent = t->pend_sent, .seq = e.seq,
						  .flow = e.flow, .type = EV_ACK, .ce = t->pend_ce });
				t->pend = 0;
			}
			break;
		}
		case EV_UDP: {
			/* e.sent: the next datagram's own time (Poisson gaps: a
			 * strictly periodic sender phase-locks with the EDT
			 * queue, tests/bpf/test_fair.c); with a pacing timer,
			 * every datagram due by its firing goes at e.t */
			__u64 tick = (__u64)(c->udp_tick_s * 1e9);

			struct loop_flow *uf = &f[e.flow];
			int churn = uf->kind == LOOP_CHURN;
			int flen = churn ? (uf->len ? uf->len : 64) : LOOP_FRAME;

			if (!e.sent)
				e.sent = e.t;
			while (e.sent <= e.t) {
				__u8 buf[PKT_MAX];
				int len, ce = 0;
				__u64 dep;

				if (churn) {     /* tcp.nxt: the next flow of the cycle */
					churn_frame(s.tcp[e.flow].nxt, flen, buf, &len);
					s.tcp[e.flow].nxt = (s.tcp[e.flow].nxt + 1) % uf->churn_flows;
				} else {
					frame_of(&s, e.flow, flen, 17, buf, &len);
				}
				dep = send_frame(buf, len, e.t, &ce);
				uf->sent += e.t >= s.warm;
				if (dep) {
					uf->admitted_all++;
					in_window(&s, e.flow, release_at(&s, dep), flen);
				} else {
					uf->dropped += e.t >= s.warm;
					uf->policed += policed(&s) && e.t >= s.warm;
				}
				e.sent += (__u64)(-log(uniform()) * flen * 8.0 / uf->rate_bps * 1e9) + 1;
				if (!tick)
					break;
			}
			e.t = !tick ? e.sent : e.t - e.t % tick + tick +
			      (__u64)(-log(uniform()) * c->udp_late_mean_s * 1e9);
			push(e);
			break;
		}
		case EV_PING: {
			__u8 buf[PKT_MAX];
			int len, ce = 0;
			__u64 dep;

			if (trace_crowd && (e.t - T0) % (1000 * MS) < PING_PERIOD)
				crowd_trace(&s, e.t);

			frame_of(&s, n, LOOP_PING_LEN, 1, buf, &len);
			dep = send_frame(buf, len, e.t, &ce);
			if (trace && (e.t - T0) % (100 * MS) < PING_PERIOD) {
				struct afcd_est es = get_est(1);
				struct afcd_queue qq = get_queue(1);
				int k;

				printf("T %.2f q %.1f fair %.2f lvl %.2f drain %u wl %u mf %u pol %llu law %llu |",
				       (e.t - T0) / 1e9, dep ? (dep - e.t) / 1e6 : -1.0,
				       es.fair_rate_bps / 1e6, es.fair_level_bps / 1e6, es.drain_milli,
				       es.waterline, es.m_fair,
				       (unsigned long long)qq.stats[AFCD_S_POLICE_DROP],
				       (unsigned long long)(qq.stats[AFCD_S_AQM_DROP] -
							    qq.stats[AFCD_S_POLICE_DROP]));
				for (k = 0; k < n; k++) {
					struct pkt_spec ps = pkt_tcp4((__u16)(10000 + k), LOOP_FRAME);
					struct afcd_flow fl = {0};

					ps.proto = f[k].kind == LOOP_UDP ? 17 : 6;
					ps.src4 = 0xC6120001u + (__u32)k;
					get_flow(&ps, 1, &fl);
					printf(" %.0f/%llu fa%.1f d%u m%u t%.1f", s.tcp[k].cwnd,
					       (unsigned long long)f[k].dropped, fl.first_above_ns ? ((double)fl.first_above_ns - (double)e.t) / 1e6 : 0.0, fl.cv.dropping, fl.m_i,
					       fl.target_ns > 1000 * MS ? -1.0 : fl.target_ns / 1e6);
				}
				printf("\n");
			}
			if (e.t >= s.warm) {
				if (dep)
					s.ping[s.ping_n++] = (double)(dep - e.t) / 1e9;
				else
					s.ping_lost++;
			}
			e.t += PING_PERIOD;
			push(e);
			break;
		}
		}
	}
	q1 = get_queue(1);
	for (i = 0; i < n; i++) {
		struct pkt_spec ps = spec_of(&s, i, LOOP_FRAME, f[i].kind == LOOP_UDP ? 17 : 6);
		struct afcd_flow fl;

		if (f[i].kind != LOOP_CHURN && !get_flow(&ps, 1, &fl))
			f[i].entry_packets = fl.packets;
	}
	unload_ctl();

	for (i = 0; i < n; i++) {
		double g;

		f[i].goodput_bps *= 8.0 / (c->secs - c->warm_s);
		f[i].cwnd_mean = s.tcp[i].cwnd_n ? s.tcp[i].cwnd_sum / s.tcp[i].cwnd_n : 0;
		free(s.tcp[i].lost);
		g = f[i].goodput_bps;
		r->util += g / c->rate_bps;
		if (f[i].kind == LOOP_CHURN)
			continue;
		nlong++;
		total += g;
		sq += g * g;
	}
	r->jain = sq > 0 ? total * total / (nlong * sq) : 0;
	r->flows_made = q1.astats[AFCD_A_FLOW_NEW] - q0.astats[AFCD_A_FLOW_NEW];
	r->flow_fail = q1.astats[AFCD_A_FLOW_FAIL] - q0.astats[AFCD_A_FLOW_FAIL];
	if (s.ping_n) {
		double sum = 0;
		size_t k;

		qsort(s.ping, s.ping_n, sizeof(double), cmp_double);
		for (k = 0; k < s.ping_n; k++)
			sum += s.ping[k];
		r->q_mean_s = sum / s.ping_n;
		r->q_p50_s = s.ping[s.ping_n / 2];
		r->q_p99_s = s.ping[(size_t)(0.99 * (s.ping_n - 1))];
	}
	r->ping_lost = s.ping_lost;
	r->idle_frac = (double)(q1.stats[AFCD_S_IDLE_NS] - q0.stats[AFCD_S_IDLE_NS]) / 1e9 /
		       (c->secs - c->warm_s);
	r->police_drop = q1.stats[AFCD_S_POLICE_DROP] - q0.stats[AFCD_S_POLICE_DROP];
	r->aqm_drop = q1.stats[AFCD_S_AQM_DROP] - q0.stats[AFCD_S_AQM_DROP] - r->police_drop;
	r->overlimit_drop = q1.stats[AFCD_S_OVERLIMIT_DROP] - q0.stats[AFCD_S_OVERLIMIT_DROP];
	r->marks = q1.stats[AFCD_S_ECN_MARK] + q1.stats[AFCD_S_POLICE_MARK] +
		   q1.stats[AFCD_S_HIGH_MARK] -
		   (q0.stats[AFCD_S_ECN_MARK] + q0.stats[AFCD_S_POLICE_MARK] +
		    q0.stats[AFCD_S_HIGH_MARK]);
	free(s.tcp);
	free(s.ping);
	return 0;
}

void loop_print(const char *what, const struct loop_flow *f, int n, const struct loop_res *r)
{
	static const char *kinds[] = { "reno", "cubic", "udp", "churn" };
	int i;

	printf("    %-22s util %.3f jain %.3f qdelay p50 %.1f p99 %.1f mean %.1f ms, idle %.1f %%, "
	       "drops police %llu law %llu horizon %llu, marks %llu", what, r->util,
	       r->jain, r->q_p50_s * 1e3, r->q_p99_s * 1e3, r->q_mean_s * 1e3,
	       100 * r->idle_frac, (unsigned long long)r->police_drop,
	       (unsigned long long)r->aqm_drop, (unsigned long long)r->overlimit_drop,
	       (unsigned long long)r->marks);
	if (r->flows_made || r->flow_fail)
		printf(", flow entries made %llu, failed %llu", (unsigned long long)r->flows_made,
		       (unsigned long long)r->flow_fail);
	printf("\n      ");
	for (i = 0; i < n; i++) {
		if (f[i].kind == LOOP_CHURN) {
			printf("%schurn of %u flows %.2f (drop %.2f%%)", i ? ", " : "",
			       f[i].churn_flows, f[i].goodput_bps / 1e6,
			       f[i].sent ? 100.0 * f[i].dropped / f[i].sent : 0.0);
			continue;
		}
		printf("%s", i ? ", " : "");
		if (f[i].entry_packets != f[i].admitted_all)  /* its entry was made anew */
			printf("[entry counts %llu of %llu] ",
			       (unsigned long long)f[i].entry_packets,
			       (unsigned long long)f[i].admitted_all);
		printf("%s %.2f (cwnd %.0f, drop %.2f%%, policer's %llu, mark %llu, red %llu, "
		       "rto %llu)", kinds[f[i].kind], f[i].goodput_bps / 1e6,
		       f[i].cwnd_mean, f[i].sent ? 100.0 * f[i].dropped / f[i].sent : 0.0,
		       (unsigned long long)f[i].policed,
		       (unsigned long long)f[i].marked, (unsigned long long)f[i].reductions,
		       (unsigned long long)f[i].timeouts);
	}
	printf(" Mbit/s\n");
}
