// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The refresh loop's tick, scan and GC; see scan.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "afcd_config.h"
#include "afcd_ctl.h"
#include "afcd_decide.h"
#include "ctl.h"
#include "log.h"
#include "scan.h"
#include "sys.h"
#include "tc.h"

struct gc_arg {
	__u64 now_ns, idle_ns, window_ns;
	unsigned long long deleted;
	__u32 crowd;
};

static void gc_one(int fd, __u64 id, struct afcd_flow *f, void *arg)
{
	struct gc_arg *g = arg;

	if (afcd_gc_idle(f, g->now_ns, g->idle_ns)) {
		if (!bpf_map_delete_elem(fd, &id))
			g->deleted++;
	} else if (g->window_ns && afcd_in_crowd(f, g->now_ns, g->window_ns)) {
		g->crowd++;
	}
}

unsigned long long gc_flows(struct pins *p, struct afcd_ctl_bpf *ctl, __u32 ifindex,
			    __u64 idle_ns, __u32 *crowd)
{
	struct gc_arg g = { .now_ns = now_ns(), .idle_ns = idle_ns };
	unsigned long long n = 0;
	struct afcd_config c;

	if (ctl && !ctl_gc(ctl, ifindex, idle_ns, &n, crowd))
		return n;
	if (!cfg_lookup(p, ifindex, &c))
		g.window_ns = c.window_ns;
	flows_each(p, ifindex, gc_one, &g);
	*crowd = g.crowd;
	return g.deleted;
}

/* The water level of the interface's shadow buffer for `capacity`
 * samples, from its histogram of per-flow counts, into sc. */
static void scan_hist(struct pins *p, const struct afcd_config *c, __u64 capacity,
		      struct afcd_scan *sc)
{
	static struct afcd_sb_hist h;

	if (!bpf_map_lookup_elem(p->hist, &c->slot, &h))
		afcd_scan_of_hist(h.n, c->sb_size, capacity, sc);
}

/* Is a full watch due: the pin directory changed, or WATCH_PERIOD_NS
 * passed? (One stat(2) a scan.) */
static bool watch_due(struct loop_state *ls, __u64 now)
{
	struct stat st;
	__u64 m, c;

	if (stat(AFCD_PIN_DIR, &st))
		return true;
	m = (__u64)st.st_mtim.tv_sec * 1000000000ULL + (__u64)st.st_mtim.tv_nsec;
	c = (__u64)st.st_ctim.tv_sec * 1000000000ULL + (__u64)st.st_ctim.tv_nsec;
	if (ls->pin_dir.dev == st.st_dev && ls->pin_dir.ino == st.st_ino &&
	    ls->pin_dir.mtime_ns == m && ls->pin_dir.ctime_ns == c &&
	    now - ls->last_check_ns < WATCH_PERIOD_NS)
		return false;
	ls->pin_dir.dev = st.st_dev;
	ls->pin_dir.ino = st.st_ino;
	ls->pin_dir.mtime_ns = m;
	ls->pin_dir.ctime_ns = c;
	return true;
}

/* Are the pins the loader's maps and afcd_egress attached (backend qdisc:
 * the root qdisc afcd too, afcd_egress setting the CE marks it owes)?
 * true, or false with ls->lost set (or not, when a detach removed the
 * config too: the caller's next look finds no config). */
static bool watch(struct pins *p, __u32 ifindex, struct loop_state *ls, __u64 now)
{
	struct afcd_config c;
	bool qdisc, root = true, prog;

	ls->last_check_ns = now;
	if (pins_check(p, ls->lost, sizeof(ls->lost)))
		return false;
	qdisc = !cfg_lookup(p, ifindex, &c) && (c.flags & AFCD_F_QDISC);
	if (qdisc)
		root = afcd_qdisc_is_root(ifindex);
	prog = tcx_find_afcd(ifindex) || tc_find_afcd_filter(ifindex, NULL);
	if (!root || !prog) {
		/* an `afcd detach` removes the program, then the config,
		 * under the pins' lock: wait for it, and tell the two apart */
		int lock = pins_lock(), gone = cfg_lookup(p, ifindex, &c);

		pins_unlock(lock);
		if (!gone)
			snprintf(ls->lost, sizeof(ls->lost), "%s", !root ?
				 "the root qdisc is no longer afcd (replaced or deleted with tc?)" :
				 "afcd_egress is no longer attached to its egress (a tc filter or "
				 "tcx link removed by hand?)");
		return false;
	}
	return true;
}

/* AFCD_F_SAMPLE_AUTO (backend qdisc without a rate): sample_bytes for the
 * link rate the qdisc measured, written when it is off by more than 2x,
 * so that the shadow buffer keeps covering `window` of the link's traffic
 * (ALGORITHM.md sec. 3) whatever the device's rate. Re-read under the
 * pins' lock: an `afcd set` in between wins. */
static void sample_auto(struct pins *p, __u32 ifindex, const struct afcd_config *c,
			const struct afcd_queue *q)
{
	struct afcd_config t;
	__u64 want;
	int lock;

	if (c->rate_bps || !(c->flags & AFCD_F_SAMPLE_AUTO) || !q->link_bps)
		return;
	t = *c;
	t.rate_bps = q->link_bps;
	want = afcd_default_sample_bytes(&t);
	if (want <= 2 * c->sample_bytes && 2 * want >= c->sample_bytes)
		return;
	lock = pins_lock();
	if (lock < 0)
		return;
	if (!cfg_lookup(p, ifindex, &t) && !t.rate_bps && (t.flags & AFCD_F_SAMPLE_AUTO) &&
	    t.sample_bytes == c->sample_bytes) {
		t.sample_bytes = want;
		if (!config_write_locked(p, ifindex, &t))
			pr_info("sample_bytes %llu for the link's measured %.1f Mbit/s",
				(unsigned long long)want, q->link_bps / 1e6);
	}
	pins_unlock(lock);
}

/* AFCD_F_SB_GROW: grow the ring in place by afcd_sb_grow()'s rule, for the
 * GC's last count of the crowd (ls->crowd); written only if the config
 * under the pins' lock is still the one decided on (an `afcd set` in
 * between wins). */
static void sb_grow(struct pins *p, __u32 ifindex, const struct afcd_config *c,
		    const struct afcd_queue *q, struct loop_state *ls, __u64 now)
{
	struct afcd_config t = *c, cur;
	__u32 from = c->sb_size;
	int lock;

	if (!afcd_sb_grow(&t, &ls->sb_grow, ls->crowd, afcd_rate_of(c, q), now))
		return;
	lock = pins_lock();
	if (lock < 0)
		return;
	if (!cfg_lookup(p, ifindex, &cur) && !memcmp(&cur, c, sizeof(cur)) &&
	    !config_write_locked(p, ifindex, &t)) {
		pr_info("shadow buffer %u -> %u slots (%u flows sent within the window), "
			"sample_bytes %llu", from, t.sb_size, ls->crowd,
			(unsigned long long)t.sample_bytes);
	}
	pins_unlock(lock);
}

void scan_claim_locked(struct pins *p, __u32 slot, struct loop_state *ls)
{
	if (bpf_map_lookup_elem(p->scan, &slot, &ls->sc))
		memset(&ls->sc, 0, sizeof(ls->sc));
	if (getrandom(&ls->sc.owner, sizeof(ls->sc.owner), 0) != sizeof(ls->sc.owner) ||
	    !ls->sc.owner)
		ls->sc.owner = now_ns() ^ ((__u64)getpid() << 32) ^ 1;
	ls->sc.loader_pid = (__u32)getpid();
	ls->sc.heartbeat_ns = now_ns();
	bpf_map_update_elem(p->scan, &slot, &ls->sc, BPF_ANY);
}

/* One tick of the loop at time now: the refresh step (user mode), the
 * scan when due, the timer's watchdog (kernel mode). Returns the time to
 * the next tick, ns, or 0 when the interface lost its config. */
__u64 loop_tick(struct pins *p, __u32 ifindex, struct loop_state *ls, __u64 now)
{
	struct afcd_config c;
	struct afcd_queue q;
	__u64 period;

	if (cfg_lookup(p, ifindex, &c) || queue_read(p, c.slot, &q))
		return 0;              /* detached under us */
	period = c.update_period_ns;
	if (now - ls->last_scan_ns >= AFCD_SCAN_PERIOD_NS || !ls->last_scan_ns) {
		struct afcd_est e;
		const struct afcd_est *ep = &ls->e;
		struct afcd_scan cur;

		/* another loader took the interface over (attach --takeover;
		 * from another namespace, while this one looked stopped) */
		if (ls->last_scan_ns && !bpf_map_lookup_elem(p->scan, &c.slot, &cur) &&
		    cur.owner && cur.owner != ls->sc.owner) {
			ls->taken_over = cur.loader_pid;
			ls->taken_netns = c.netns_cookie != netns_cookie() ? c.netns_cookie : 0;
			return 0;
		}
		if (watch_due(ls, now) && !watch(p, ifindex, ls, now))
			return 0;
		if (ls->kernel && !bpf_map_lookup_elem(p->est, &c.slot, &e))
			ep = &e;
		/* the link's rate unknown yet (a qdisc without a rate that has
		 * not been backlogged): the whole ring, nobody above the level */
		scan_hist(p, &c, afcd_rate_of(&c, &q) ?
			  afcd_sb_capacity(c.sb_size, afcd_rate_of(&c, &q), ep->arrival_bps) :
			  c.sb_size, &ls->sc);
		sample_auto(p, ifindex, &c, &q);
		sb_grow(p, ifindex, &c, &q, ls, now);
		ls->sc.heartbeat_ns = now;
		ls->sc.scans++;
		ls->sc.loader_pid = (__u32)getpid();
		bpf_map_update_elem(p->scan, &c.slot, &ls->sc, BPF_ANY);
		ls->last_scan_ns = now;
		if (ls->kernel) {
			/* watchdog: a timer that stopped while we live (this
			 * process stalled beyond stale_after, e.g. SIGSTOP, or
			 * someone disarmed it) is armed again */
			__u64 late = 4 * period + 2 * AFCD_SCAN_PERIOD_NS;

			if ((ep->refresher != AFCD_REFRESHER_KERNEL || !ep->heartbeat_ns ||
			     now - ep->heartbeat_ns > late) && now - ls->last_arm_ns > late) {
				ctl_arm(ls->ctl, ifindex, c.slot);
				ls->last_arm_ns = now;
				ls->rearms++;
			}
		}
	}
	if (!ls->kernel) {
		afcd_refresh(&c, &q, NULL, &ls->sc, &ls->e, now);
		ls->e.refresher = AFCD_REFRESHER_LOADER;
		bpf_map_update_elem(p->est, &c.slot, &ls->e, BPF_ANY);
		return period;
	}
	return AFCD_SCAN_PERIOD_NS;
}

void loop_report_stop(const struct loop_state *ls, const char *dev)
{
	if (ls->lost[0])
		pr_warn("%s: %s: stopping", dev, ls->lost);
	else if (ls->taken_over && ls->taken_netns)
		pr_warn("%s's slot was claimed from another network namespace (netns cookie %llu) "
			"by the loader with PID %u while this one looked stopped: %s has no AQM "
			"now; stopping", dev, (unsigned long long)ls->taken_netns, ls->taken_over,
			dev);
	else if (ls->taken_over)
		pr_warn("%s was taken over by the loader with PID %u: stopping and leaving "
			"everything to it", dev, ls->taken_over);
	else
		pr_warn("%s lost its afcd config (detached by someone else?): stopping", dev);
}
