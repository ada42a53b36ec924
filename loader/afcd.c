// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * afcd - attach, configure and watch the AFCD/FaLL tc-bpf datapath.
 *
 *   afcd attach DEV rate R [param value]... [options]   run in the foreground
 *   afcd set    DEV [param value]...                    change a running instance,
 *                                                       or configure a filter
 *                                                       attached by hand
 *   afcd stats  DEV [-j] [--flows] [-k N] [--dt SEC]
 *   afcd detach DEV
 *   afcd params                                         list the parameters
 *
 * The loader (ALGORITHM.md sec. 1, 3, 5) attaches afcd_egress to DEV's
 * clsact egress with libbpf, checks that sch_fq is the root qdisc, claims
 * a slot in the per-interface maps, writes the config and then refreshes
 * m_fair (AFD controller, eq. 3.4-3.5), N and FaLL's global target
 * (eq. 4.5-4.6) every update_period, with a heartbeat the datapath checks:
 * from a BPF timer it arms (afcd_ctl.bpf.o; the process itself only scans
 * the shadow buffer every 50 ms), or from the process on old kernels.
 * Everything is pinned under AFCD_PIN_DIR (mode 0600); the datapath keeps
 * working, on its own fallback estimates, while no loader runs.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <getopt.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "afcd_maps.h"
#include "params.h"
#include "sys.h"
#include "afcd_ctl.h"
#include "metrics_http.h"
#include "afcd.skel.h"
#include "afcd_ctl.skel.h"

#define AFCD_TC_HANDLE 0xafcd
#define AFCD_TC_PRIO   0xafc
#define GC_PERIOD_NS   1000000000ULL

static const char *prog = "afcd";
static volatile sig_atomic_t stop_flag;
static int verbose;

static void die_msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* CPU time (user + system) this process used so far, seconds; BPF program
 * verification during loading counts as system time. */
static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int libbpf_print(enum libbpf_print_level l, const char *f, va_list a)
{
	if (l == LIBBPF_DEBUG || (l == LIBBPF_INFO && !verbose))
		return 0;
	return vfprintf(stderr, f, a);
}

/* ---- Pinned maps ------------------------------------------------------- */

struct pins {
	int cfg, est, queue, flows, ring, count, global, scan, timer, hist;
};

static const char *const pin_names[] = {
	AFCD_MAP_CFG, AFCD_MAP_EST, AFCD_MAP_QUEUE, AFCD_MAP_FLOWS,
	AFCD_MAP_SB_RING, AFCD_MAP_SB_COUNT, AFCD_MAP_GLOBAL, AFCD_MAP_SCAN, AFCD_MAP_TIMER,
	AFCD_MAP_SB_HIST,
};
#define NPINS (sizeof(pin_names) / sizeof(pin_names[0]))

static int *pin_fd(struct pins *p, unsigned i)
{
	int *f[] = { &p->cfg, &p->est, &p->queue, &p->flows, &p->ring, &p->count, &p->global,
		     &p->scan, &p->timer, &p->hist };

	return f[i];
}

static void pins_close(struct pins *p)
{
	unsigned i;

	for (i = 0; i < NPINS; i++)
		if (*pin_fd(p, i) >= 0)
			close(*pin_fd(p, i));
}

/* Open every pinned map. Returns 0, or -1 with a message printed. */
static int pins_open(struct pins *p, bool quiet)
{
	unsigned i;

	for (i = 0; i < NPINS; i++)
		*pin_fd(p, i) = -1;
	for (i = 0; i < NPINS; i++) {
		char path[256];

		snprintf(path, sizeof(path), "%s/%s", AFCD_PIN_DIR, pin_names[i]);
		*pin_fd(p, i) = bpf_obj_get(path);
		if (*pin_fd(p, i) < 0) {
			if (!quiet)
				die_msg("no afcd maps pinned at %s (%s): attach first, with "
					"'afcd attach DEV rate R' or 'tc filter add dev DEV egress bpf da "
					"obj afcd.bpf.o sec tc'", path, strerror(errno));
			pins_close(p);
			return -1;
		}
	}
	return 0;
}

static void pins_chmod(void)
{
	unsigned i;

	for (i = 0; i < NPINS; i++) {
		char path[256];

		snprintf(path, sizeof(path), "%s/%s", AFCD_PIN_DIR, pin_names[i]);
		chmod(path, 0600);
	}
}

static void pins_unlink(void)
{
	unsigned i;

	for (i = 0; i < NPINS; i++) {
		char path[256];

		snprintf(path, sizeof(path), "%s/%s", AFCD_PIN_DIR, pin_names[i]);
		unlink(path);
	}
}

/* ---- Interface and system checks ---------------------------------------- */

static int check_ifname(const char *dev, __u32 *ifindex)
{
	const char *c;

	if (!dev || !*dev || strlen(dev) >= IFNAMSIZ) {
		die_msg("interface name missing or too long");
		return -1;
	}
	for (c = dev; *c; c++)
		if (!(isalnum((unsigned char)*c) || strchr("_.-@:", *c))) {
			die_msg("interface '%s': invalid name", dev);
			return -1;
		}
	*ifindex = if_nametoindex(dev);
	if (!*ifindex) {
		die_msg("interface '%s' does not exist (in this network namespace)", dev);
		return -1;
	}
	return 0;
}

static int check_privileges(void)
{
	if (geteuid() != 0) {
		die_msg("needs root (CAP_BPF, CAP_NET_ADMIN and CAP_SYS_ADMIN): run it with sudo");
		return -1;
	}
	return 0;
}

/* Filters named afcd_egress on DEV's egress: fills pref/handle of the
 * first one found. Returns how many there are. */
struct tcf_scan { int n; unsigned long long pref, handle; };

static void tcf_scan_one(const char *b, const char *e, void *arg)
{
	struct tcf_scan *s = arg;
	unsigned long long v;

	if (!json_has(b, e, "name", "afcd_egress"))
		return;
	if (!s->n) {
		if (!json_u64(b, e, "pref", &v))
			s->pref = v;
		if (!json_u64(b, e, "handle", &v))
			s->handle = v;
	}
	s->n++;
}

static int tc_find_afcd_filter(const char *dev, struct tcf_scan *s)
{
	static char out[65536];

	memset(s, 0, sizeof(*s));
	if (RUN(out, sizeof(out), "tc", "-j", "filter", "show", "dev", (char *)dev, "egress"))
		return 0;
	json_each_object(out, tcf_scan_one, s);
	return s->n;
}

static int tc_count_filters(const char *dev, const char *dir)
{
	static char out[65536];
	const char *p = out;
	int n = 0;

	if (RUN(out, sizeof(out), "tc", "-j", "filter", "show", "dev", (char *)dev, (char *)dir))
		return 0;
	while ((p = strstr(p, "\"kind\":")))
		n++, p++;
	return n;
}

/* ---- sch_fq under the program (ALGORITHM.md sec. 1) --------------------- */

struct fq_need { unsigned long long limit, flow_limit, horizon_us; };

static struct fq_need fq_requirements(const struct afcd_config *c)
{
	struct fq_need n;
	double pkts = (double)c->rate_bps / 8.0 * ((double)c->horizon_ns / 1e9) / 64.0;

	/* enough packets for a full horizon of 64-byte packets, at least 10k */
	n.limit = pkts < 10000 ? 10000 : (unsigned long long)pkts;
	if (n.limit > 1000000)
		n.limit = 1000000;
	n.flow_limit = n.limit;         /* one flow may hold the whole queue */
	n.horizon_us = c->horizon_ns / 1000 * 2;
	if (n.horizon_us < 10000000ULL)
		n.horizon_us = 10000000ULL; /* fq's default horizon, 10 s */
	return n;
}

struct fq_scan { int root_fq, root_mq, leaves, fq_leaves, ok_limits; char root_kind[32];
		 struct fq_need need; };

static void fq_scan_one(const char *b, const char *e, void *arg)
{
	struct fq_scan *s = arg;
	unsigned long long limit = 0, flimit = 0, hz = 0;
	bool is_fq = json_has(b, e, "kind", "fq");
	bool root = json_has(b, e, "root", "true");

	if (is_fq) {
		json_u64(b, e, "limit", &limit);
		json_u64(b, e, "flow_limit", &flimit);
		if (json_u64(b, e, "horizon", &hz))
			hz = ~0ULL; /* older iproute2: not printed */
		if (limit >= s->need.limit && flimit >= s->need.flow_limit &&
		    hz >= s->need.horizon_us / 2)
			s->ok_limits++;
	}
	if (root) {
		const char *k = strstr(b, "\"kind\":\"");

		if (k && k < e) {
			k += 8;
			snprintf(s->root_kind, sizeof(s->root_kind), "%.*s",
				 (int)(strchr(k, '"') - k), k);
		}
		s->root_fq = is_fq;
		s->root_mq = json_has(b, e, "kind", "mq");
	} else {
		s->leaves++;
		s->fq_leaves += is_fq;
	}
}

static void fq_command(const char *dev, const struct fq_need *n, char *buf, size_t len)
{
	snprintf(buf, len, "tc qdisc replace dev %s root fq limit %llu flow_limit %llu horizon %llums",
		 dev, n->limit, n->flow_limit, n->horizon_us / 1000);
}

/* Returns 0 when the qdisc is right (or was installed), -1 otherwise. */
static int check_fq(const char *dev, const struct afcd_config *c, bool install, bool *installed)
{
	static char out[65536];
	struct fq_scan s = { .need = fq_requirements(c) };
	char cmd[256];

	*installed = false;
	if (RUN(out, sizeof(out), "tc", "-j", "qdisc", "show", "dev", (char *)dev)) {
		die_msg("cannot read the qdiscs of %s with tc: %s", dev, out);
		return -1;
	}
	json_each_object(out, fq_scan_one, &s);
	fq_command(dev, &s.need, cmd, sizeof(cmd));
	if ((s.root_fq && s.ok_limits) ||
	    (s.root_mq && s.leaves && s.fq_leaves == s.leaves && s.ok_limits == s.fq_leaves))
		return 0;
	if (!install) {
		if (s.root_fq || (s.root_mq && s.fq_leaves == s.leaves && s.leaves))
			die_msg("sch_fq on %s would drop before afcd does (limit, flow_limit or "
				"horizon too small); run: %s   (or pass --install-fq)", dev, cmd);
		else
			die_msg("the root qdisc of %s is '%s', not fq: skb->tstamp would not be "
				"enforced; run: %s   (or pass --install-fq)", dev,
				s.root_kind[0] ? s.root_kind : "none", cmd);
		return -1;
	}
	{
		char lim[32], flim[32], hz[32];

		snprintf(lim, sizeof(lim), "%llu", s.need.limit);
		snprintf(flim, sizeof(flim), "%llu", s.need.flow_limit);
		snprintf(hz, sizeof(hz), "%llums", s.need.horizon_us / 1000);
		if (RUN(out, sizeof(out), "tc", "qdisc", "replace", "dev", (char *)dev, "root",
			"fq", "limit", lim, "flow_limit", flim, "horizon", hz)) {
			if (strstr(out, "nknown qdisc") || strstr(out, "kind is unknown") ||
			    strstr(out, "No such file"))
				die_msg("this kernel has no sch_fq (CONFIG_NET_SCH_FQ): the EDT "
					"timestamps cannot be enforced here; use a kernel with "
					"sch_fq (tc says: %.*s)", (int)strcspn(out, "\n"), out);
			else
				die_msg("installing fq failed: %s: %s", cmd, out);
			return -1;
		}
	}
	*installed = true;
	return 0;
}

/* ---- Slots and per-interface state -------------------------------------- */

static int cfg_lookup(struct pins *p, __u32 ifindex, struct afcd_config *c)
{
	return bpf_map_lookup_elem(p->cfg, &ifindex, c);
}

/* The cookie of this process's network namespace (SO_NETNS_COOKIE, Linux
 * >= 5.14), or 0 when the kernel cannot tell. */
static __u64 netns_cookie(void)
{
	static __u64 cookie;
	static bool done;
	socklen_t len = sizeof(cookie);
	int fd;

	if (done)
		return cookie;
	done = true;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif
	if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len))
		cookie = 0;
	if (fd >= 0)
		close(fd);
	return cookie;
}

/* Refuse (one line, -1) when ifindex's config was written from another
 * network namespace: the same ifindex there is another interface, and the
 * pins are shared (issue 11.7). 0 when there is no config, or it is ours,
 * or either side's namespace is unknown, or claim is set (attach
 * --takeover: that namespace is gone, or the operator says so). */
static int cfg_check_netns(struct pins *p, __u32 ifindex, const char *dev, bool claim)
{
	struct afcd_config c;
	__u64 mine = netns_cookie();

	if (cfg_lookup(p, ifindex, &c) || !c.netns_cookie || !mine || c.netns_cookie == mine ||
	    claim)
		return 0;
	die_msg("ifindex %u (%s here) is configured from another network namespace (netns "
		"cookie %llu, this one %llu) that shares %s: refusing to change or show it; "
		"'afcd attach %s ... --takeover' claims it if that namespace is gone", ifindex,
		dev, (unsigned long long)c.netns_cookie, (unsigned long long)mine, AFCD_PIN_DIR,
		dev);
	return -1;
}

/* Delete this interface's entries from a map keyed by afcd_flow_key. */
static unsigned long long delete_iface_keys(int fd, __u32 ifindex)
{
	struct afcd_flow_key k, next, *prev = NULL;
	unsigned long long n = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		if (k.ifindex == ifindex) {
			bpf_map_delete_elem(fd, &k);
			n++;
			/* restart: the iteration order changed under us */
			prev = NULL;
			continue;
		}
		prev = &k;
	}
	return n;
}

/* The ring restarted (sb_size changed): no flow of ifindex holds a sample
 * any more. The datapath decrements m_i only for samples it evicts from
 * the ring, so counts left from the old ring would never age out. */
static void flows_zero_samples(struct pins *p, __u32 ifindex)
{
	struct afcd_flow_key k, next, *prev = NULL;
	struct afcd_flow f;

	while (!bpf_map_get_next_key(p->flows, prev, &next)) {
		k = next;
		prev = &k;
		if (k.ifindex != ifindex || bpf_map_lookup_elem(p->flows, &k, &f) || !f.m_i)
			continue;
		f.m_i = 0;
		bpf_map_update_elem(p->flows, &k, &f, BPF_EXIST);
	}
}

/* Zero the interface's histogram of sample counts. 0 or -errno. */
static int hist_reset(struct pins *p, __u32 slot)
{
	static const struct afcd_sb_hist zero;

	return bpf_map_update_elem(p->hist, &slot, &zero, BPF_ANY) ? -errno : 0;
}

/* Zero the interface's queue, estimate, scan and ring slot and mark the queue
 * as owned by ifindex (the datapath checks ownership per packet). */
static int slot_reset(struct pins *p, __u32 slot, __u32 ifindex)
{
	struct afcd_queue q = { .ifindex = ifindex };
	struct afcd_est e = {0};
	struct afcd_scan sc = {0};
	void *ring = calloc(1, sizeof(struct afcd_sb_ring));
	int err;

	if (!ring)
		return -ENOMEM;
	err = bpf_map_update_elem(p->ring, &slot, ring, BPF_ANY);
	free(ring);
	if (!err)
		err = bpf_map_update_elem(p->est, &slot, &e, BPF_ANY);
	if (!err)
		err = bpf_map_update_elem(p->scan, &slot, &sc, BPF_ANY);
	if (!err)
		err = hist_reset(p, slot);
	if (!err)
		err = bpf_map_update_elem(p->queue, &slot, &q, BPF_ANY);
	delete_iface_keys(p->count, ifindex);
	delete_iface_keys(p->flows, ifindex);
	return err;
}

/* Serialise slot allocation and release between afcd processes (issue 11.4):
 * an exclusive flock(2) on the pin directory, held from choosing a slot to
 * writing the config, and from deleting a config to zeroing its slot. Two
 * interfaces configured at the same moment otherwise both see the same
 * lowest free slot. Returns the descriptor for pins_unlock(), or -1 with
 * the error reported. Blocks while another afcd holds it (microseconds). */
static int pins_lock(void)
{
	int fd = open(AFCD_PIN_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || flock(fd, LOCK_EX)) {
		die_msg("cannot lock %s: %s", AFCD_PIN_DIR, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void pins_unlock(int fd)
{
	if (fd >= 0)
		close(fd);        /* releases the flock */
}

/* The slot of ifindex: its existing one, or the lowest free one. Call with
 * pins_lock() held. */
static int slot_choose(struct pins *p, __u32 ifindex, __u32 *slot, bool *existing)
{
	__u32 key, next, *prev = NULL, used = 0;
	struct afcd_config c;

	if (!cfg_lookup(p, ifindex, &c) && c.slot < AFCD_MAX_IFACES) {
		*slot = c.slot;
		*existing = true;
		return 0;
	}
	*existing = false;
	while (!bpf_map_get_next_key(p->cfg, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(p->cfg, &key, &c) && c.slot < AFCD_MAX_IFACES)
			used |= 1u << c.slot;
	}
	for (key = 0; key < AFCD_MAX_IFACES; key++)
		if (!(used & (1u << key))) {
			*slot = key;
			return 0;
		}
	die_msg("all %d interface slots are in use: detach one first", AFCD_MAX_IFACES);
	return -1;
}

/* Write a complete, validated config for ifindex, claiming a slot if it
 * has none; resets the shadow buffer when its geometry changes. Call with
 * pins_lock() held. */
static int config_write_locked(struct pins *p, __u32 ifindex, struct afcd_config *c)
{
	struct afcd_config old;
	bool existing;
	__u32 slot;
	int err;

	if (slot_choose(p, ifindex, &slot, &existing))
		return -1;
	c->slot = slot;
	c->ifindex = ifindex;
	c->netns_cookie = netns_cookie();
	if (!existing) {
		err = slot_reset(p, slot, ifindex);
		if (err) {
			die_msg("cannot initialise slot %u: %s", slot, strerror(-err));
			return -1;
		}
	} else if (!cfg_lookup(p, ifindex, &old) && old.sb_size != c->sb_size) {
		/* the ring's slots are counted against sb_size: start it over */
		struct afcd_queue q;
		void *ring = calloc(1, sizeof(struct afcd_sb_ring));

		if (ring) {
			bpf_map_update_elem(p->ring, &slot, ring, BPF_ANY);
			free(ring);
		}
		delete_iface_keys(p->count, ifindex);
		hist_reset(p, slot);
		flows_zero_samples(p, ifindex);
		/* no lock since ABI 5: the datapath's updates that land between
		 * this read and write (a few packets' counters) are lost; the
		 * ring restart is rare and by hand */
		if (!bpf_map_lookup_elem(p->queue, &slot, &q)) {
			q.n_active = 0;
			q.sb_head = 0;
			bpf_map_update_elem(p->queue, &slot, &q, BPF_ANY);
		}
	}
	err = bpf_map_update_elem(p->cfg, &ifindex, c, BPF_ANY);
	if (err) {
		die_msg("cannot write the config: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* config_write_locked() under the pin directory's lock. */
static int config_write(struct pins *p, __u32 ifindex, struct afcd_config *c)
{
	int lock = pins_lock(), err;

	if (lock < 0)
		return -1;
	err = config_write_locked(p, ifindex, c);
	pins_unlock(lock);
	return err;
}

static struct params params_from_config(const struct afcd_config *c)
{
	struct params p = { .c = *c, .set = (1ULL << PARAMS_N) - 1 };

	p.set &= ~(1ULL << param_index("limit"));
	return p;
}

/* ---- Snapshot, statistics and metrics ----------------------------------- */

struct snapshot {
	__u64 t_ns;
	struct afcd_config c;
	struct afcd_queue q;
	struct afcd_est e;
	struct afcd_scan s;
	__u64 unconfigured, bad_slot;
};

static int snapshot_read(struct pins *p, __u32 ifindex, struct snapshot *s)
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
	if (bpf_map_lookup_elem(p->queue, &s->c.slot, &s->q) ||
	    bpf_map_lookup_elem(p->est, &s->c.slot, &s->e) ||
	    bpf_map_lookup_elem(p->scan, &s->c.slot, &s->s)) {
		free(v);
		return -1;
	}
	for (k = 0; k < AFCD_G__MAX; k++) {
		if (bpf_map_lookup_elem(p->global, &k, v))
			continue;
		for (i = 0; i < ncpu; i++)
			(k == AFCD_G_UNCONFIGURED ? &s->unconfigured : &s->bad_slot)[0] += v[i];
	}
	free(v);
	s->t_ns = now_ns();
	return 0;
}

static double delay_now_ns(const struct snapshot *s)
{
	return s->q.t_last_ns > s->t_ns ? (double)(s->q.t_last_ns - s->t_ns) : 0.0;
}

static bool est_fresh(const struct snapshot *s)
{
	return s->e.heartbeat_ns && s->t_ns - s->e.heartbeat_ns <= s->c.stale_after_ns;
}

/* Who refreshes the estimates: "kernel" (the loader's BPF timer),
 * "loader" (the loader process), "none" (stale: datapath fallback). */
static const char *refresher_name(const struct snapshot *s)
{
	if (!est_fresh(s))
		return "none";
	return s->e.refresher == AFCD_REFRESHER_KERNEL ? "kernel" :
	       s->e.refresher == AFCD_REFRESHER_LOADER ? "loader" : "none";
}

/* The values the datapath uses now: the loader's, or its fallback. */
static void effective_estimates(const struct snapshot *s, __u32 *m_fair, __u64 *gt)
{
	if (est_fresh(s) && s->e.m_fair) {
		*m_fair = s->e.m_fair;
		*gt = s->e.global_target_ns;
		return;
	}
	*m_fair = afcd_m_fair_fallback(s->c.sb_size, s->q.n_active);
	*gt = afcd_fall_global_target_ns(s->c.rtt_ns, s->q.n_active,
					 2 * afcd_tx_ns(s->c.mtu_bytes, s->c.rate_bps),
					 s->c.interval_ns);
}

static void fmt_rate(char *b, size_t n, double bps)
{
	if (bps >= 1e9)
		snprintf(b, n, "%.2fGbit", bps / 1e9);
	else if (bps >= 1e6)
		snprintf(b, n, "%.2fMbit", bps / 1e6);
	else if (bps >= 1e3)
		snprintf(b, n, "%.2fKbit", bps / 1e3);
	else
		snprintf(b, n, "%.0fbit", bps);
}

static void fmt_time(char *b, size_t n, double ns)
{
	if (ns >= 1.8e19)
		snprintf(b, n, "inf");
	else if (ns >= 1e9)
		snprintf(b, n, "%.3fs", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(b, n, "%.3fms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(b, n, "%.1fus", ns / 1e3);
	else
		snprintf(b, n, "%.0fns", ns);
}

struct flow_row {
	struct afcd_flow_key k;
	struct afcd_flow f;
	double rate_bps;
};

static void fmt_key(char *b, size_t n, const struct afcd_flow_key *k)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	const char *proto = k->proto == 6 ? "tcp" : k->proto == 17 ? "udp" :
			    k->proto == 1 ? "icmp" : k->proto == 58 ? "icmp6" : "ip";
	bool v4 = !k->saddr[0] && !k->saddr[1] && k->saddr[2] == htonl(0xffff);

	if (v4) {
		inet_ntop(AF_INET, &k->saddr[3], s, sizeof(s));
		inet_ntop(AF_INET, &k->daddr[3], d, sizeof(d));
		snprintf(b, n, "%s %s:%u > %s:%u", proto, s, ntohs(k->sport), d, ntohs(k->dport));
	} else {
		inet_ntop(AF_INET6, k->saddr, s, sizeof(s));
		inet_ntop(AF_INET6, k->daddr, d, sizeof(d));
		snprintf(b, n, "%s [%s]:%u > [%s]:%u", proto, s, ntohs(k->sport), d, ntohs(k->dport));
	}
	if (k->proto != 6 && k->proto != 17 && k->proto != 1 && k->proto != 58) {
		size_t l = strlen(b);

		snprintf(b + l, n - l, " proto %u", k->proto);
	}
}

/* All flow-state entries of ifindex (a copy); *n set to the count. */
static struct flow_row *flows_read(struct pins *p, __u32 ifindex, size_t *n)
{
	struct afcd_flow_key k, next, *prev = NULL;
	struct flow_row *rows = NULL;
	size_t cap = 0;

	*n = 0;
	while (!bpf_map_get_next_key(p->flows, prev, &next)) {
		k = next;
		prev = &k;
		if (k.ifindex != ifindex)
			continue;
		if (*n == cap) {
			struct flow_row *r;

			cap = cap ? cap * 2 : 256;
			r = realloc(rows, cap * sizeof(*rows));
			if (!r)
				break;
			rows = r;
		}
		if (bpf_map_lookup_elem(p->flows, &k, &rows[*n].f))
			continue;
		rows[*n].k = k;
		rows[*n].rate_bps = 0;
		(*n)++;
	}
	return rows;
}

static int row_by_rate(const void *a, const void *b)
{
	const struct flow_row *x = a, *y = b;

	if (x->rate_bps != y->rate_bps)
		return x->rate_bps < y->rate_bps ? 1 : -1;
	return x->f.bytes < y->f.bytes ? 1 : x->f.bytes > y->f.bytes ? -1 : 0;
}

static unsigned long long count_iface_flows(struct pins *p, __u32 ifindex)
{
	struct afcd_flow_key k, next, *prev = NULL;
	unsigned long long n = 0;

	while (!bpf_map_get_next_key(p->flows, prev, &next)) {
		k = next;
		prev = &k;
		n += k.ifindex == ifindex;
	}
	return n;
}

struct stats_opts { bool json, flows; int top; double dt; };

static void print_stats(const char *dev, __u32 ifindex, const struct snapshot *s0,
			const struct snapshot *s1, struct flow_row *rows, size_t nrows,
			unsigned long long live_flows, const struct stats_opts *o)
{
	const struct afcd_queue *q = &s1->q;
	double dt = (double)(s1->t_ns - s0->t_ns) / 1e9;
	double rate = dt > 0 ? (double)(q->stats[AFCD_S_PASSED_BYTES] -
					 s0->q.stats[AFCD_S_PASSED_BYTES]) * 8 / dt : 0;
	double pps = dt > 0 ? (double)(q->stats[AFCD_S_PASSED] - s0->q.stats[AFCD_S_PASSED]) / dt : 0;
	long long evicted = (long long)q->astats[AFCD_A_FLOW_NEW] - (long long)live_flows -
			    (long long)s1->s.gc_deleted;
	__u32 m_fair;
	__u64 gt;
	size_t i, shown = nrows < (size_t)o->top ? nrows : (size_t)o->top;

	effective_estimates(s1, &m_fair, &gt);
	if (evicted < 0)
		evicted = 0;
	if (o->json) {
		printf("{\"dev\":\"%s\",\"ifindex\":%u,\"slot\":%u,", dev, ifindex, s1->c.slot);
		printf("\"config\":{\"algo\":\"%s\",\"rate_bps\":%llu,\"target_ns\":%llu,"
		       "\"interval_ns\":%llu,\"horizon_ns\":%llu,\"rtt_ns\":%llu,\"ecn\":%s,"
		       "\"ce_threshold_ns\":%llu,\"sb_size\":%u,\"sample_bytes\":%llu,"
		       "\"window_ns\":%llu,\"update_period_ns\":%llu,\"stale_after_ns\":%llu,"
		       "\"exponent\":%u,\"codel_state\":\"%s\",\"police\":%s,\"isolate\":\"%s\","
		       "\"mtu_bytes\":%u,\"alpha\":%.3f,\"beta\":%.3f},",
		       algo_names[s1->c.algo < AFCD_ALGO__MAX ? s1->c.algo : 0],
		       (unsigned long long)s1->c.rate_bps, (unsigned long long)s1->c.target_ns,
		       (unsigned long long)s1->c.interval_ns, (unsigned long long)s1->c.horizon_ns,
		       (unsigned long long)s1->c.rtt_ns, (s1->c.flags & AFCD_F_ECN) ? "true" : "false",
		       (unsigned long long)s1->c.ce_threshold_ns, s1->c.sb_size,
		       (unsigned long long)s1->c.sample_bytes, (unsigned long long)s1->c.window_ns,
		       (unsigned long long)s1->c.update_period_ns,
		       (unsigned long long)s1->c.stale_after_ns, s1->c.exponent,
		       (s1->c.flags & AFCD_F_CODEL_GLOBAL) ? "global" : "per-flow",
		       (s1->c.flags & AFCD_F_POLICE) ? "true" : "false", isolate_name(s1->c.flags),
		       s1->c.mtu_bytes, s1->c.alpha_milli / 1e3, s1->c.beta_milli / 1e3);
		printf("\"queue\":{\"passed\":%llu,\"passed_bytes\":%llu,\"aqm_drop\":%llu,"
		       "\"police_drop\":%llu,"
		       "\"overlimit_drop\":%llu,\"ecn_mark\":%llu,\"ce_threshold_mark\":%llu,"
		       "\"non_ip\":%llu,\"parse_err\":%llu,\"fragment\":%llu,\"stale_fallback\":%llu,"
		       "\"sampled\":%llu,\"flow_new\":%llu,\"flow_fail\":%llu,\"flows_live\":%llu,"
		       "\"flows_evicted\":%lld,\"flows_gc\":%llu,"
		       "\"delay_now_ns\":%.0f,\"delay_max_ns\":%llu,\"last_sojourn_ns\":%llu,"
		       "\"rate_bps\":%.0f,\"pps\":%.0f,\"dt_s\":%.3f,\"dropping\":%u,\"codel_count\":%u},",
		       (unsigned long long)q->stats[AFCD_S_PASSED],
		       (unsigned long long)q->stats[AFCD_S_PASSED_BYTES],
		       (unsigned long long)q->stats[AFCD_S_AQM_DROP],
		       (unsigned long long)q->stats[AFCD_S_POLICE_DROP],
		       (unsigned long long)q->stats[AFCD_S_OVERLIMIT_DROP],
		       (unsigned long long)q->stats[AFCD_S_ECN_MARK],
		       (unsigned long long)q->stats[AFCD_S_CE_THRESHOLD_MARK],
		       (unsigned long long)q->stats[AFCD_S_NON_IP],
		       (unsigned long long)q->stats[AFCD_S_PARSE_ERR],
		       (unsigned long long)q->stats[AFCD_S_FRAGMENT],
		       (unsigned long long)q->stats[AFCD_S_STALE_FALLBACK],
		       (unsigned long long)q->astats[AFCD_A_SAMPLED],
		       (unsigned long long)q->astats[AFCD_A_FLOW_NEW],
		       (unsigned long long)q->astats[AFCD_A_FLOW_FAIL], live_flows, evicted,
		       (unsigned long long)s1->s.gc_deleted, delay_now_ns(s1),
		       (unsigned long long)q->max_sojourn_ns, (unsigned long long)q->last_sojourn_ns,
		       rate, pps, dt, q->gcv.dropping, q->gcv.count);
		printf("\"estimates\":{\"n_flows\":%d,\"m_fair\":%u,\"global_target_ns\":%llu,"
		       "\"n_long\":%u,\"waterline\":%u,\"arrival_bps\":%llu,"
		       "\"loader_fresh\":%s,\"heartbeat_age_ns\":%lld,\"loader_pid\":%u,"
		       "\"refreshes\":%llu,\"ctrl_milli\":%lld,\"refresher\":\"%s\","
		       "\"refresh_busy_ns\":%llu,\"scans\":%llu,\"fair_rate_bps\":%llu,"
		       "\"mice_samples\":%u,\"drain_milli\":%u},",
		       q->n_active, m_fair, (unsigned long long)gt, s1->e.n_long, s1->e.waterline,
		       (unsigned long long)s1->e.arrival_bps, est_fresh(s1) ? "true" : "false",
		       s1->e.heartbeat_ns ? (long long)(s1->t_ns - s1->e.heartbeat_ns) : -1LL,
		       s1->s.loader_pid, (unsigned long long)s1->e.refreshes,
		       (long long)s1->e.ctrl_milli, refresher_name(s1),
		       (unsigned long long)s1->e.busy_ns, (unsigned long long)s1->s.scans,
		       est_fresh(s1) ? (unsigned long long)s1->e.fair_rate_bps : 0ULL,
		       s1->e.mice_samples, s1->e.drain_milli);
		printf("\"global\":{\"unconfigured\":%llu,\"bad_slot\":%llu}",
		       (unsigned long long)s1->unconfigured, (unsigned long long)s1->bad_slot);
		if (o->flows) {
			printf(",\"flows\":[");
			for (i = 0; i < shown; i++) {
				const struct flow_row *r = &rows[i];
				char key[160], src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
				bool v4 = !r->k.saddr[0] && !r->k.saddr[1] &&
					  r->k.saddr[2] == htonl(0xffff);

				fmt_key(key, sizeof(key), &r->k);
				if (v4) {
					inet_ntop(AF_INET, &r->k.saddr[3], src, sizeof(src));
					inet_ntop(AF_INET, &r->k.daddr[3], dst, sizeof(dst));
				} else {
					inet_ntop(AF_INET6, r->k.saddr, src, sizeof(src));
					inet_ntop(AF_INET6, r->k.daddr, dst, sizeof(dst));
				}
				printf("%s{\"key\":\"%s\",\"proto\":%u,\"src\":\"%s\",\"sport\":%u,"
				       "\"dst\":\"%s\",\"dport\":%u,\"rate_bps\":%.0f,\"bytes\":%llu,"
				       "\"packets\":%llu,\"m_i\":%u,\"target_ns\":%.0f,"
				       "\"last_sojourn_ns\":%llu,\"drops\":%llu,\"marks\":%llu,"
				       "\"dropping\":%u,\"codel_count\":%u}",
				       i ? "," : "", key, r->k.proto, src, ntohs(r->k.sport), dst,
				       ntohs(r->k.dport), r->rate_bps, (unsigned long long)r->f.bytes,
				       (unsigned long long)r->f.packets, r->f.m_i,
				       r->f.target_ns == AFCD_TARGET_INF ? -1.0 : (double)r->f.target_ns,
				       (unsigned long long)r->f.last_sojourn_ns,
				       (unsigned long long)r->f.drops, (unsigned long long)r->f.marks,
				       r->f.cv.dropping, r->f.cv.count);
			}
			printf("]");
		}
		printf("}\n");
		return;
	}

	{
		char r1[32], r2[32], t1[32], t2[32], t3[32], t4[32], t5[32];

		fmt_rate(r1, sizeof(r1), (double)s1->c.rate_bps);
		fmt_time(t1, sizeof(t1), (double)s1->c.target_ns);
		fmt_time(t2, sizeof(t2), (double)s1->c.interval_ns);
		fmt_time(t3, sizeof(t3), (double)s1->c.horizon_ns);
		printf("afcd dev %s slot %u algo %s rate %s target %s interval %s horizon %s "
		       "ecn %s codel_state %s\n", dev, s1->c.slot,
		       algo_names[s1->c.algo < AFCD_ALGO__MAX ? s1->c.algo : 0], r1, t1, t2, t3,
		       (s1->c.flags & AFCD_F_ECN) ? "on" : "off",
		       (s1->c.flags & AFCD_F_CODEL_GLOBAL) ? "global" : "per-flow");
		printf(" Sent %llu bytes %llu pkt (dropped %llu: aqm %llu, overlimit %llu) "
		       "marked %llu (ce_threshold %llu)\n",
		       (unsigned long long)q->stats[AFCD_S_PASSED_BYTES],
		       (unsigned long long)q->stats[AFCD_S_PASSED],
		       (unsigned long long)(q->stats[AFCD_S_AQM_DROP] + q->stats[AFCD_S_OVERLIMIT_DROP]),
		       (unsigned long long)q->stats[AFCD_S_AQM_DROP],
		       (unsigned long long)q->stats[AFCD_S_OVERLIMIT_DROP],
		       (unsigned long long)q->stats[AFCD_S_ECN_MARK],
		       (unsigned long long)q->stats[AFCD_S_CE_THRESHOLD_MARK]);
		fmt_rate(r2, sizeof(r2), rate);
		fmt_time(t4, sizeof(t4), delay_now_ns(s1));
		fmt_time(t5, sizeof(t5), (double)q->max_sojourn_ns);
		printf(" rate %s %.0fpps  delay now %s max %s  %s\n", r2, pps, t4, t5,
		       q->gcv.dropping ? "dropping" : "");
		fmt_time(t1, sizeof(t1), (double)gt);
		printf(" N %d  m_fair %u/%u samples  global_target %s  sampled %llu  "
		       "estimates %s", q->n_active, m_fair, s1->c.sb_size, t1,
		       (unsigned long long)q->astats[AFCD_A_SAMPLED],
		       est_fresh(s1) ? "from loader" : "fallback (no loader)");
		if (est_fresh(s1))
			printf(" pid %u, refreshed by %s", s1->s.loader_pid, refresher_name(s1));
		printf("\n non_ip %llu parse_err %llu fragments %llu flows live %llu new %llu "
		       "evicted %lld gc %llu stale_fallback %llu\n",
		       (unsigned long long)q->stats[AFCD_S_NON_IP],
		       (unsigned long long)q->stats[AFCD_S_PARSE_ERR],
		       (unsigned long long)q->stats[AFCD_S_FRAGMENT], live_flows,
		       (unsigned long long)q->astats[AFCD_A_FLOW_NEW], evicted,
		       (unsigned long long)s1->s.gc_deleted,
		       (unsigned long long)q->stats[AFCD_S_STALE_FALLBACK]);
	}
	if (!o->flows)
		return;
	printf("\n %-52s %12s %6s %10s %10s %7s %7s\n", "flow", "rate", "m_i", "target_i",
	       "sojourn", "drops", "marks");
	for (i = 0; i < shown; i++) {
		const struct flow_row *r = &rows[i];
		char key[160], rt[32], tg[32], sj[32];

		fmt_key(key, sizeof(key), &r->k);
		fmt_rate(rt, sizeof(rt), r->rate_bps);
		fmt_time(tg, sizeof(tg), (double)r->f.target_ns);
		fmt_time(sj, sizeof(sj), (double)r->f.last_sojourn_ns);
		printf(" %-52s %12s %6u %10s %10s %7llu %7llu\n", key, rt, r->f.m_i, tg, sj,
		       (unsigned long long)r->f.drops, (unsigned long long)r->f.marks);
	}
}

static int cmd_stats(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' }, { "flows", no_argument, NULL, 'f' },
		{ "top", required_argument, NULL, 'k' }, { "dt", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 } };
	struct stats_opts o = { .top = 20, .dt = 0.5 };
	struct snapshot s0, s1;
	struct flow_row *r0 = NULL, *r1 = NULL;
	size_t n0 = 0, n1 = 0, i, j;
	struct pins p;
	__u32 ifindex;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "jfk:d:", lo, NULL)) != -1) {
		switch (opt) {
		case 'j': o.json = true; break;
		case 'f': o.flows = true; break;
		case 'k': o.top = atoi(optarg); break;
		case 'd': o.dt = atof(optarg); break;
		default: return 2;
		}
	}
	if (optind >= argc) {
		die_msg("usage: afcd stats DEV [-j] [--flows] [-k N] [--dt SEC]");
		return 2;
	}
	if (o.top < 1 || o.dt < 0 || o.dt > 60) {
		die_msg("stats: -k must be >= 1 and --dt in [0, 60] seconds");
		return 2;
	}
	if (check_ifname(argv[optind], &ifindex) || check_privileges() || pins_open(&p, false))
		return 1;
	if (cfg_check_netns(&p, ifindex, argv[optind], false)) {
		pins_close(&p);
		return 1;
	}
	if (snapshot_read(&p, ifindex, &s0)) {
		die_msg("%s is not configured (no afcd config for ifindex %u)", argv[optind], ifindex);
		pins_close(&p);
		return 1;
	}
	if (o.flows)
		r0 = flows_read(&p, ifindex, &n0);
	if (o.dt > 0)
		usleep((useconds_t)(o.dt * 1e6));
	snapshot_read(&p, ifindex, &s1);
	r1 = o.flows ? flows_read(&p, ifindex, &n1) : NULL;
	/* per-flow rate from the byte counters of the two readings */
	for (i = 0; i < n1; i++)
		for (j = 0; j < n0; j++)
			if (!memcmp(&r1[i].k, &r0[j].k, sizeof(r1[i].k))) {
				double dt = (double)(s1.t_ns - s0.t_ns) / 1e9;

				if (dt > 0)
					r1[i].rate_bps = (double)(r1[i].f.bytes - r0[j].f.bytes) * 8 / dt;
				break;
			}
	if (n1)
		qsort(r1, n1, sizeof(*r1), row_by_rate);
	print_stats(argv[optind], ifindex, &s0, &s1, r1, n1,
		    o.flows ? n1 : count_iface_flows(&p, ifindex), &o);
	free(r0);
	free(r1);
	pins_close(&p);
	return 0;
}

/* ---- The refresh loop ---------------------------------------------------- */

/*
 * Work is split by cost (ALGORITHM.md sec. 3 and 5):
 *  - the refresh step (bpf/afcd_ctl.h: offered load, the water level from
 *    the datapath's histogram of sample counts, AFD controller, fair rate,
 *    FaLL's RTT/sqrt(N), heartbeat) runs every update_period from the BPF
 *    timer of afcd_ctl.bpf.o, so that a 1 ms period costs no user-space
 *    wake-ups; on kernels without BPF timers the loader runs the same
 *    step itself (--refresh user);
 *  - the water level of the shadow buffer runs here every
 *    AFCD_SCAN_PERIOD_NS, from the datapath's histogram of per-flow
 *    sample counts (one 16 KiB read, two passes, no sort), into
 *    afcd_scan, whose heartbeat the timer needs to keep running;
 *  - GC of idle flow state runs in the kernel through the control
 *    program (no copy of the flow map) every GC_PERIOD_NS.
 */
enum refresh_mode { REFRESH_AUTO = 0, REFRESH_KERNEL, REFRESH_USER };

/* Run the control program on a control frame carrying *a (read back
 * into *a). Returns its answer, 0 or -errno. */
static int ctl_run(struct afcd_ctl_bpf *ctl, struct afcd_ctl_args *a)
{
	struct afcd_ctl_frame f = { .eth_proto = htons(AFCD_CTL_ETH_P) }, out;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &f, .data_size_in = sizeof(f),
		    .data_out = &out, .data_size_out = sizeof(out), .repeat = 1);
	int err;

	a->magic = AFCD_CTL_MAGIC;
	f.a = *a;
	err = bpf_prog_test_run_opts(bpf_program__fd(ctl->progs.afcd_ctl), &o);
	if (err)
		return errno ? -errno : err;
	if (o.retval != 2 /* TC_ACT_SHOT: handled */ || o.data_size_out < sizeof(out))
		return -EBADMSG;
	*a = out.a;
	return a->ret;
}

/* Load the control program on the pinned maps; NULL (with a reason in
 * why) when the kernel cannot run it. */
static struct afcd_ctl_bpf *ctl_load(char *why, size_t n)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = AFCD_PIN_DIR);
	struct afcd_ctl_bpf *ctl = afcd_ctl_bpf__open_opts(&oo);

	if (!ctl) {
		snprintf(why, n, "cannot open the control object: %s", strerror(errno));
		return NULL;
	}
	if (afcd_ctl_bpf__load(ctl)) {
		snprintf(why, n, "the kernel refuses the control program (BPF timers and "
			 "their use from tc programs need Linux >= 5.15)");
		afcd_ctl_bpf__destroy(ctl);
		return NULL;
	}
	return ctl;
}

/* Loader-side state of the refresh loop. */
struct loop_state {
	struct afcd_ctl_bpf *ctl;  /* control program, NULL if not loaded */
	bool kernel;               /* the BPF timer refreshes (else this process) */
	struct afcd_est e;         /* user-mode refresh: the estimate we own */
	struct afcd_scan sc;       /* what we write to afcd_scan */
	__u64 last_scan_ns, last_gc_ns, last_arm_ns;
	unsigned long long rearms;
	__u32 taken_over;          /* PID of the loader that took the interface over */
};

/* Delete this interface's flow state idle for more than idle_ns with no
 * sample left in the shadow buffer: in the kernel through the control
 * program, else from user space in batches. Returns how many. */
static unsigned long long gc_flows(struct pins *p, struct afcd_ctl_bpf *ctl, __u32 ifindex,
				   __u64 idle_ns)
{
	enum { CHUNK = 4096 };
	static struct afcd_flow_key keys[CHUNK];
	static struct afcd_flow vals[CHUNK];
	__u64 in_batch = 0, out_batch = 0, now = now_ns();
	unsigned long long n = 0;
	bool first = true;

	if (ctl) {
		struct afcd_ctl_args a = { .op = AFCD_CTL_GC, .ifindex = ifindex,
					   .idle_ns = idle_ns };

		if (!ctl_run(ctl, &a))
			return a.deleted;
	}
	for (;;) {
		LIBBPF_OPTS(bpf_map_batch_opts, bo);
		__u32 count = CHUNK, i;
		int err = bpf_map_lookup_batch(p->flows, first ? NULL : &in_batch, &out_batch,
					       keys, vals, &count, &bo);

		if (err && errno != ENOENT)
			break;
		for (i = 0; i < count; i++)
			if (keys[i].ifindex == ifindex && vals[i].m_i == 0 &&
			    now > vals[i].last_seen_ns && now - vals[i].last_seen_ns > idle_ns &&
			    !bpf_map_delete_elem(p->flows, &keys[i]))
				n++;
		if (err) /* ENOENT: that was the last batch */
			break;
		in_batch = out_batch;
		first = false;
	}
	return n;
}

/* The water level of the interface's shadow buffer for `capacity`
 * samples, from its histogram of per-flow counts, into sc. */
static void scan_hist(struct pins *p, const struct afcd_config *c, __u64 capacity,
		      struct afcd_scan *sc)
{
	static struct afcd_sb_hist h;
	struct afcd_water w;

	if (bpf_map_lookup_elem(p->hist, &c->slot, &h))
		return;
	afcd_waterfill_hist(h.n, c->sb_size, capacity, &w);
	sc->waterline = w.level;
	sc->max_count = w.max_count;
	sc->n_long = w.n_long;
	sc->mice = w.mice;
}

/* One tick of the loop at time now: the refresh step (user mode), the
 * scan when due, the timer's watchdog (kernel mode). Returns the time to
 * the next tick, ns, or 0 when the interface lost its config. */
static __u64 loop_tick(struct pins *p, __u32 ifindex, struct loop_state *ls, __u64 now)
{
	struct afcd_config c;
	struct afcd_queue q;
	__u64 period;

	if (cfg_lookup(p, ifindex, &c) || bpf_map_lookup_elem(p->queue, &c.slot, &q))
		return 0;              /* detached under us */
	period = c.update_period_ns;
	if (now - ls->last_scan_ns >= AFCD_SCAN_PERIOD_NS || !ls->last_scan_ns) {
		struct afcd_est e;
		const struct afcd_est *ep = &ls->e;
		struct afcd_scan cur;

		/* another loader took the interface over (attach --takeover) */
		if (ls->last_scan_ns && !bpf_map_lookup_elem(p->scan, &c.slot, &cur) &&
		    cur.loader_pid && cur.loader_pid != (__u32)getpid()) {
			ls->taken_over = cur.loader_pid;
			return 0;
		}
		if (ls->kernel && !bpf_map_lookup_elem(p->est, &c.slot, &e))
			ep = &e;
		scan_hist(p, &c, afcd_sb_capacity(c.sb_size, c.rate_bps, ep->arrival_bps), &ls->sc);
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
				struct afcd_ctl_args a = { .op = AFCD_CTL_ARM, .ifindex = ifindex,
							   .slot = c.slot };

				ctl_run(ls->ctl, &a);
				ls->last_arm_ns = now;
				ls->rearms++;
			}
		}
	}
	if (!ls->kernel) {
		afcd_refresh(&c, &q, &ls->sc, &ls->e, now);
		ls->e.refresher = AFCD_REFRESHER_LOADER;
		bpf_map_update_elem(p->est, &c.slot, &ls->e, BPF_ANY);
		return period;
	}
	return AFCD_SCAN_PERIOD_NS;
}

/* Prometheus text format (exposition format 0.0.4): one family per
 * metric, HELP and TYPE lines, then its samples labelled by dev and,
 * where a family has several, by one more label. */
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

static size_t render_metrics(char *b, size_t n, const char *dev, const struct snapshot *s)
{
	const struct afcd_queue *q = &s->q;
	struct prom_out p = { .b = b, .n = n };
	__u32 m_fair;
	__u64 gt;

	effective_estimates(s, &m_fair, &gt);
	/* families with one sample: name, type, help, value */
	const struct { const char *name, *type, *help; double v; } one[] = {
		{ "packets_total", "counter", "Packets admitted to the virtual queue.",
		  (double)q->stats[AFCD_S_PASSED] },
		{ "bytes_total", "counter", "Wire bytes admitted to the virtual queue.",
		  (double)q->stats[AFCD_S_PASSED_BYTES] },
		{ "samples_total", "counter", "Packets sampled into the shadow buffer.",
		  (double)q->astats[AFCD_A_SAMPLED] },
		{ "queue_delay_seconds", "gauge", "Virtual queue delay now.",
		  delay_now_ns(s) / 1e9 },
		{ "queue_delay_max_seconds", "gauge", "Largest predicted sojourn admitted.",
		  (double)q->max_sojourn_ns / 1e9 },
		{ "active_flows", "gauge", "N, flows with samples in the shadow buffer.",
		  (double)q->n_active },
		{ "fair_share_samples", "gauge", "m_fair in shadow-buffer samples.", (double)m_fair },
		{ "global_target_seconds", "gauge", "FaLL global target delay RTT/sqrt(N).",
		  (double)gt / 1e9 },
		{ "rate_bits_per_second", "gauge", "Configured drain rate.", (double)s->c.rate_bps },
		{ "estimate_refreshes_total", "counter", "Refreshes of m_fair and the global target.",
		  (double)s->e.refreshes },
	};
	/* families with a second label: name, type, help, label key, values */
	const struct {
		const char *name, *type, *help, *key, *l1, *l2;
		double v1, v2;
	} two[] = {
		{ "drops_total", "counter", "Packets dropped, by reason.", "reason",
		  "aqm", "overlimit", (double)q->stats[AFCD_S_AQM_DROP],
		  (double)q->stats[AFCD_S_OVERLIMIT_DROP] },
		{ "ecn_marks_total", "counter", "Packets CE-marked, by reason.", "reason",
		  "aqm", "ce_threshold", (double)q->stats[AFCD_S_ECN_MARK],
		  (double)q->stats[AFCD_S_CE_THRESHOLD_MARK] },
		{ "unclassified_packets_total", "counter", "Packets that took no AQM, by kind.",
		  "kind", "non_ip", "parse_error", (double)q->stats[AFCD_S_NON_IP],
		  (double)q->stats[AFCD_S_PARSE_ERR] },
	};
	char l[64];
	size_t i;

	for (i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		prom_family(&p, one[i].name, one[i].type, one[i].help);
		prom_sample(&p, one[i].name, dev, "", one[i].v);
	}
	for (i = 0; i < sizeof(two) / sizeof(two[0]); i++) {
		prom_family(&p, two[i].name, two[i].type, two[i].help);
		snprintf(l, sizeof(l), "%s=\"%s\"", two[i].key, two[i].l1);
		prom_sample(&p, two[i].name, dev, l, two[i].v1);
		snprintf(l, sizeof(l), "%s=\"%s\"", two[i].key, two[i].l2);
		prom_sample(&p, two[i].name, dev, l, two[i].v2);
	}
	return p.o < n ? p.o : n;
}

/* What the metrics server's thread reads: the pins (descriptors shared
 * with the main thread, read-only there) once ready is set. */
struct metrics_ctx {
	const char *dev;
	struct pins *p;
	__u32 ifindex;
	volatile int ready;
};

static size_t metrics_render(char *buf, size_t n, void *arg)
{
	struct metrics_ctx *m = arg;
	struct snapshot s;

	if (!__atomic_load_n(&m->ready, __ATOMIC_ACQUIRE) || snapshot_read(m->p, m->ifindex, &s))
		return 0;
	return render_metrics(buf, n, m->dev, &s);
}

static void on_signal(int sig)
{
	stop_flag = sig;
}

/* ---- detach ---------------------------------------------------------------- */

/* Is a live loader other than this process managing ifindex? Its PID in
 * *pid (the scan's loader_pid, checked with kill(pid, 0)). */
static bool running_loader(__u32 ifindex, __u32 *pid)
{
	struct afcd_config c;
	struct afcd_scan sc;
	struct pins p;
	bool live = false;

	if (pins_open(&p, true))
		return false;
	if (!cfg_lookup(&p, ifindex, &c) && c.slot < AFCD_MAX_IFACES &&
	    !bpf_map_lookup_elem(p.scan, &c.slot, &sc) && sc.loader_pid &&
	    sc.loader_pid != (__u32)getpid() && (kill((pid_t)sc.loader_pid, 0) == 0 || errno == EPERM)) {
		*pid = sc.loader_pid;
		live = true;
	}
	pins_close(&p);
	return live;
}

/* cfg_check_netns() with the pins opened here; 0 when nothing is pinned. */
static int check_netns(__u32 ifindex, const char *dev, bool claim)
{
	struct pins p;
	int err;

	if (pins_open(&p, true))
		return 0;
	err = cfg_check_netns(&p, ifindex, dev, claim);
	pins_close(&p);
	return err;
}

/* Remove everything afcd put on DEV; unpin when no interface is left. */
static int detach_dev(const char *dev, __u32 ifindex, bool quiet)
{
	static char out[4096];
	struct afcd_config c;
	struct tcf_scan s;
	struct pins p;
	bool have_pins = !pins_open(&p, true), had_cfg = false;
	int lock;

	while (tc_find_afcd_filter(dev, &s)) {
		char pref[32], handle[32];

		snprintf(pref, sizeof(pref), "%llu", s.pref);
		snprintf(handle, sizeof(handle), "0x%llx", s.handle);
		if (RUN(out, sizeof(out), "tc", "filter", "del", "dev", (char *)dev, "egress",
			"pref", pref, "handle", handle, "bpf")) {
			die_msg("cannot remove the filter: %s", out);
			break;
		}
	}
	lock = have_pins ? pins_lock() : -1;
	if (have_pins && !cfg_lookup(&p, ifindex, &c)) {
		struct afcd_queue q = {0};
		struct afcd_est e = {0};
		struct afcd_scan sc = {0};

		had_cfg = true;
		/* without its config, the slot's refresh timer stops at its next firing */
		bpf_map_delete_elem(p.cfg, &ifindex);
		if (c.slot < AFCD_MAX_IFACES) {
			bpf_map_update_elem(p.queue, &c.slot, &q, BPF_ANY);
			bpf_map_update_elem(p.est, &c.slot, &e, BPF_ANY);
			bpf_map_update_elem(p.scan, &c.slot, &sc, BPF_ANY);
		}
		delete_iface_keys(p.count, ifindex);
		delete_iface_keys(p.flows, ifindex);
		if (c.flags & AFCD_F_FQ_INSTALLED)
			RUN(out, sizeof(out), "tc", "qdisc", "del", "dev", (char *)dev, "root");
	}
	if (!tc_count_filters(dev, "egress") && !tc_count_filters(dev, "ingress"))
		RUN(out, sizeof(out), "tc", "qdisc", "del", "dev", (char *)dev, "clsact");
	if (have_pins) {
		__u32 k;

		if (bpf_map_get_next_key(p.cfg, NULL, &k))
			pins_unlink();   /* no interface left (still locked: no attach in between) */
		pins_close(&p);
	}
	pins_unlock(lock);
	if (!quiet)
		fprintf(stderr, "%s: detached from %s%s\n", prog, dev,
			had_cfg ? "" : " (it had no afcd config)");
	return 0;
}

static int cmd_detach(int argc, char **argv)
{
	__u32 ifindex;

	if (argc < 2) {
		die_msg("usage: afcd detach DEV");
		return 2;
	}
	if (check_ifname(argv[1], &ifindex) || check_privileges() ||
	    check_netns(ifindex, argv[1], false))
		return 1;
	return detach_dev(argv[1], ifindex, false);
}

/* ---- parameters from argv --------------------------------------------------- */

struct run_opts {
	bool install_fq, skip_fq_check, keep, quiet, takeover;
	int prom_port;
	const char *prom_addr;
	const char *config_file;
	double duration_s;
	__u64 gc_idle_ns;
	int refresh;            /* enum refresh_mode */
};

/* Parse "[--]name value" pairs and loader options from argv[first..]. */
static int parse_args(int argc, char **argv, int first, struct params *p, struct run_opts *ro)
{
	char err[256];
	int i;

	for (i = first; i < argc; i++) {
		const char *a = argv[i], *name = a[0] == '-' && a[1] == '-' ? a + 2 : a;
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (ro) {
			if (!strcmp(name, "install-fq")) { ro->install_fq = true; continue; }
			if (!strcmp(name, "skip-fq-check")) { ro->skip_fq_check = true; continue; }
			if (!strcmp(name, "keep")) { ro->keep = true; continue; }
			if (!strcmp(name, "takeover")) { ro->takeover = true; continue; }
			if (!strcmp(name, "quiet") || !strcmp(a, "-q")) { ro->quiet = true; continue; }
			if (!strcmp(a, "-v") || !strcmp(name, "verbose")) { verbose = 1; continue; }
			if (!strcmp(name, "prometheus") || !strcmp(name, "prometheus-addr") ||
			    !strcmp(name, "config") || !strcmp(a, "-c") || !strcmp(name, "duration") ||
			    !strcmp(name, "gc-idle") || !strcmp(name, "refresh")) {
				if (!val) {
					die_msg("%s: missing value", a);
					return -1;
				}
				i++;
				if (!strcmp(name, "prometheus")) {
					char *end;
					long port = strtol(val, &end, 10);

					if (*end || port < 1 || port > 65535) {
						die_msg("prometheus: '%s' is not a TCP port", val);
						return -1;
					}
					ro->prom_port = (int)port;
				} else if (!strcmp(name, "prometheus-addr")) {
					ro->prom_addr = val;
				} else if (!strcmp(name, "duration")) {
					__u64 d;

					if (parse_time_ns(val, &d)) {
						die_msg("duration: '%s' is not a time", val);
						return -1;
					}
					ro->duration_s = (double)d / 1e9;
				} else if (!strcmp(name, "refresh")) {
					if (!strcmp(val, "kernel"))
						ro->refresh = REFRESH_KERNEL;
					else if (!strcmp(val, "user"))
						ro->refresh = REFRESH_USER;
					else if (!strcmp(val, "auto"))
						ro->refresh = REFRESH_AUTO;
					else {
						die_msg("refresh: '%s' is not kernel, user or auto", val);
						return -1;
					}
				} else if (!strcmp(name, "gc-idle")) {
					if (parse_time_ns(val, &ro->gc_idle_ns) || !ro->gc_idle_ns) {
						die_msg("gc-idle: '%s' is not a time above 0", val);
						return -1;
					}
				} else {
					ro->config_file = val;
				}
				continue;
			}
		}
		if (param_index(name) < 0) {
			die_msg("unknown parameter or option '%s' (see 'afcd params')", a);
			return -1;
		}
		if (param_set(p, name, val, err, sizeof(err))) {
			die_msg("%s", err);
			return -1;
		}
		i++;
	}
	return 0;
}

/* ---- set -------------------------------------------------------------------- */

static int cmd_set(int argc, char **argv)
{
	struct params given = {0}, full;
	struct afcd_config cur;
	char err[256];
	struct pins p;
	__u32 ifindex;
	bool exists;

	if (argc < 2) {
		die_msg("usage: afcd set DEV [param value]...");
		return 2;
	}
	if (check_ifname(argv[1], &ifindex) || parse_args(argc, argv, 2, &given, NULL))
		return 1;
	if (check_privileges() || pins_open(&p, false))
		return 1;
	if (cfg_check_netns(&p, ifindex, argv[1], false)) {
		pins_close(&p);
		return 1;
	}
	exists = !cfg_lookup(&p, ifindex, &cur);
	if (exists) {
		full = params_from_config(&cur);
		/* a new rate without a new sample_bytes re-derives it */
		if (param_given(&given, "rate") || param_given(&given, "window") ||
		    param_given(&given, "sb_size"))
			full.set &= ~(1ULL << param_index("sample_bytes"));
		if (param_given(&given, "limit"))
			full.set &= ~(1ULL << param_index("horizon"));
		params_overlay(&full, &given);
	} else {
		full = given;
	}
	params_complete(&full);
	if (exists)
		full.c.flags = (full.c.flags & ~(AFCD_F_FQ_INSTALLED | AFCD_F_LOADER_PROG)) |
			       (cur.flags & (AFCD_F_FQ_INSTALLED | AFCD_F_LOADER_PROG));
	if (params_validate(&full, err, sizeof(err))) {
		die_msg("%s", err);
		pins_close(&p);
		return 1;
	}
	if (config_write(&p, ifindex, &full.c)) {
		pins_close(&p);
		return 1;
	}
	pins_close(&p);
	return 0;
}

/* ---- attach ------------------------------------------------------------------- */

static int cmd_attach(int argc, char **argv)
{
	struct run_opts ro = { .prom_addr = "127.0.0.1", .gc_idle_ns = 10000000000ULL };
	struct params fp = {0}, cp = {0};
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = AFCD_PIN_DIR);
	struct afcd_bpf *skel = NULL;
	struct loop_state ls = {0};
	struct tcf_scan tf;
	struct pins p;
	const char *dev;
	char err[256];
	__u32 ifindex;
	__u64 start = 0, next, busy0;
	double cpu0 = 0;
	unsigned long long ticks = 0;
	__u32 other = 0;
	bool fq_installed = false, adopted = false;
	struct metrics_http *prom = NULL;
	struct metrics_ctx mctx = {0};
	int rc = 1, lock = -1, werr;

	if (argc < 2) {
		die_msg("usage: afcd attach DEV rate R [param value]... [--install-fq] [--keep] "
			"[--prometheus PORT] [-c FILE] [--duration T]");
		return 2;
	}
	dev = argv[1];
	if (check_ifname(dev, &ifindex))
		return 1;
	if (parse_args(argc, argv, 2, &cp, &ro))
		return 1;
	if (ro.config_file) {
		if (params_load_file(&fp, ro.config_file, err, sizeof(err))) {
			die_msg("%s", err);
			return 1;
		}
		params_overlay(&fp, &cp);   /* flags override the file */
	} else {
		fp = cp;
	}
	params_complete(&fp);
	if (params_validate(&fp, err, sizeof(err))) {
		die_msg("%s", err);
		return 1;
	}
	if (check_privileges())
		return 1;
	if (!have_btf()) {
		die_msg("this kernel exposes no BTF (/sys/kernel/btf/vmlinux): CO-RE programs "
			"and spin-locked maps need CONFIG_DEBUG_INFO_BTF=y");
		return 1;
	}
	if (check_netns(ifindex, dev, ro.takeover))
		return 1;
	if (running_loader(ifindex, &other) && !ro.takeover) {
		die_msg("%s is already managed by the afcd loader with PID %u: stop it, or pass "
			"--takeover to hand the interface to this one", dev, other);
		return 1;
	}
	/* everything checked that can be checked without changing anything */
	if (ro.skip_fq_check) {
		if (!ro.quiet)
			fprintf(stderr, "%s: --skip-fq-check: not checking for sch_fq; departure "
				"times are stamped but only enforced if fq is the root qdisc\n", prog);
	} else if (check_fq(dev, &fp.c, ro.install_fq, &fq_installed)) {
		return 1;
	}
	if (ro.prom_port) {         /* before anything changes: a port in use is refused */
		mctx = (struct metrics_ctx){ .dev = dev, .p = &p, .ifindex = ifindex };
		prom = metrics_http_start(ro.prom_addr, ro.prom_port, metrics_render, &mctx,
					  err, sizeof(err));
		if (!prom) {
			die_msg("%s", err);
			goto out_fq;
		}
	}
	if (ensure_bpffs(AFCD_PIN_DIR)) {
		die_msg("cannot mount bpffs on /sys/fs/bpf: %s", strerror(errno));
		goto out_fq;
	}

	/* from loading (which creates or reuses the pins) to the config written:
	 * no detach may unlink the pins and no other attach take the same slot */
	lock = pins_lock();
	if (lock < 0)
		goto out_fq;
	if (tc_find_afcd_filter(dev, &tf) && !pins_open(&p, true)) {
		adopted = true;   /* attached by hand or by a loader run with --keep */
	} else {
		skel = afcd_bpf__open_opts(&oo);
		if (!skel) {
			die_msg("cannot open the BPF object: %s", strerror(errno));
			goto out_fq;
		}
		if (afcd_bpf__load(skel)) {
			die_msg("cannot load the BPF program (see libbpf's messages above); pinned "
				"maps of an incompatible version? remove them with 'afcd detach DEV'");
			goto out_skel;
		}
		pins_chmod();
		if (pins_open(&p, false))
			goto out_skel;
	}
	fp.c.flags |= (fq_installed ? AFCD_F_FQ_INSTALLED : 0) | (adopted ? 0 : AFCD_F_LOADER_PROG);
	if (adopted) {
		struct afcd_config old;

		if (!cfg_lookup(&p, ifindex, &old))
			fp.c.flags |= old.flags & (AFCD_F_FQ_INSTALLED | AFCD_F_LOADER_PROG);
	}
	werr = config_write_locked(&p, ifindex, &fp.c);
	pins_unlock(lock);
	lock = -1;
	if (werr)
		goto out_pins;
	if (!adopted) {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex, .attach_point = BPF_TC_EGRESS);
		LIBBPF_OPTS(bpf_tc_opts, to, .handle = AFCD_TC_HANDLE, .priority = AFCD_TC_PRIO,
			    .prog_fd = bpf_program__fd(skel->progs.afcd_egress));
		int err2 = bpf_tc_hook_create(&hook);

		if (err2 && err2 != -EEXIST) {
			die_msg("cannot create the clsact qdisc on %s: %s", dev, strerror(-err2));
			goto out_detach;
		}
		err2 = bpf_tc_attach(&hook, &to);
		if (err2) {
			die_msg("cannot attach to %s egress: %s", dev, strerror(-err2));
			goto out_detach;
		}
	}
	/* adopt the previous loader's controller state and scan, if any */
	if (bpf_map_lookup_elem(p.est, &fp.c.slot, &ls.e))
		memset(&ls.e, 0, sizeof(ls.e));
	busy0 = ls.e.busy_ns;
	if (bpf_map_lookup_elem(p.scan, &fp.c.slot, &ls.sc))
		memset(&ls.sc, 0, sizeof(ls.sc));
	if (ro.refresh != REFRESH_USER) {
		char why[160];

		ls.ctl = ctl_load(why, sizeof(why));
		if (!ls.ctl && ro.refresh == REFRESH_KERNEL) {
			die_msg("--refresh kernel: %s", why);
			rc = 1;
			goto out_stop;
		}
		if (!ls.ctl && !ro.quiet)
			fprintf(stderr, "%s: %s: refreshing from user space\n", prog, why);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	start = next = now_ns();
	cpu0 = cpu_seconds();     /* loading and verifying not counted below */
	ls.last_gc_ns = start;
	if (!loop_tick(&p, ifindex, &ls, start)) {     /* the first scan, before arming */
		die_msg("%s lost its afcd config while attaching", dev);
		goto out_stop;
	}
	if (ls.ctl) {
		struct afcd_ctl_args a = { .op = AFCD_CTL_ARM, .ifindex = ifindex,
					   .slot = fp.c.slot };
		int err2 = ctl_run(ls.ctl, &a);

		ls.kernel = !err2;
		ls.last_arm_ns = start;
		if (err2 && ro.refresh == REFRESH_KERNEL) {
			die_msg("--refresh kernel: cannot arm the refresh timer: %s", strerror(-err2));
			goto out_stop;
		}
		if (err2 && !ro.quiet)
			fprintf(stderr, "%s: cannot arm the refresh timer (%s): refreshing from "
				"user space\n", prog, strerror(-err2));
	}
	if (!ro.quiet)
		fprintf(stderr, "%s: %s %s on %s (slot %u), algo %s, refresh every %.3f ms by %s%s\n",
			prog, adopted ? "adopted the program attached" : "attached", "afcd_egress",
			dev, fp.c.slot, algo_names[fp.c.algo], fp.c.update_period_ns / 1e6,
			ls.kernel ? "a BPF timer" : "this process", ro.keep ? ", --keep" : "");

	rc = 0;
	__atomic_store_n(&mctx.ready, 1, __ATOMIC_RELEASE);   /* pins open, config written */
	while (!stop_flag) {
		__u64 now, period;

		if (!(period = loop_tick(&p, ifindex, &ls, now_ns()))) {
			if (ls.taken_over)
				die_msg("%s was taken over by the loader with PID %u: stopping and "
					"leaving everything to it", dev, ls.taken_over);
			else
				die_msg("%s lost its afcd config (detached by someone else?): "
					"stopping", dev);
			rc = 1;
			ro.keep = true;  /* nothing of ours left to remove */
			break;
		}
		ticks++;
		now = now_ns();
		if (now - ls.last_gc_ns >= GC_PERIOD_NS) {
			ls.sc.gc_deleted += gc_flows(&p, ls.ctl, ifindex, ro.gc_idle_ns);
			ls.last_gc_ns = now;
		}
		if (ro.duration_s > 0 && (double)(now - start) / 1e9 >= ro.duration_s)
			break;
		next += period;                /* live changes of the period apply here */
		if ((__s64)(next - now) < 0)
			next = now;                /* fell behind: do not burst */
		{
			struct timespec ts = { .tv_sec = (time_t)(next / 1000000000ULL),
					       .tv_nsec = (long)(next % 1000000000ULL) };

			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
	}
out_stop:
	if (ls.ctl) {
		struct afcd_ctl_args a = { .op = AFCD_CTL_DISARM, .slot = fp.c.slot };

		if (!ls.taken_over)      /* the timer is the new loader's now */
			ctl_run(ls.ctl, &a);
		afcd_ctl_bpf__destroy(ls.ctl);
	}
	if (!ro.quiet && start) {
		double wall = (double)(now_ns() - start) / 1e9;
		double cpu = cpu_seconds() - cpu0;
		struct afcd_est e;
		double busy = 0;

		if (ls.kernel && !bpf_map_lookup_elem(p.est, &fp.c.slot, &e))
			busy = (double)(e.busy_ns - busy0) / 1e9;
		fprintf(stderr, "%s: %.2f s, %llu ticks, cpu %.3f s after attach (%.2f%% of one core)", prog, wall,
			ticks, cpu, wall > 0 ? 100 * cpu / wall : 0);
		if (ls.kernel)
			fprintf(stderr, "; kernel refresh step %.3f s (%.3f%%)", busy,
				wall > 0 ? 100 * busy / wall : 0);
		fprintf(stderr, "\n");
	}
	if (ro.keep) {
		if (!ls.taken_over) {
			ls.sc.loader_pid = 0;
			bpf_map_update_elem(p.scan, &fp.c.slot, &ls.sc, BPF_ANY);
		}
		goto out_pins;
	}
out_detach:
	metrics_http_stop(prom);    /* its thread reads the pins: stop it first */
	pins_close(&p);
	afcd_bpf__destroy(skel);
	detach_dev(dev, ifindex, ro.quiet);
	return rc;
out_pins:
	metrics_http_stop(prom);
	prom = NULL;
	pins_close(&p);
out_skel:
	afcd_bpf__destroy(skel);
out_fq:
	pins_unlock(lock);
	metrics_http_stop(prom);
	if (rc && fq_installed && !start) {   /* failed before running: undo our fq */
		static char out[1024];

		RUN(out, sizeof(out), "tc", "qdisc", "del", "dev", (char *)dev, "root");
	}
	return rc;
}

static int cmd_params(void)
{
	unsigned i;

	printf("parameters (afcd attach DEV ... / afcd set DEV ... / config file lines):\n");
	for (i = 0; i < PARAMS_N; i++)
		printf("  %-14s %s\n", params_table[i].name, params_table[i].help);
	printf("\nattach options:\n"
	       "  --install-fq          install a root fq sized for the program if missing\n"
	       "  --skip-fq-check       attach without sch_fq (tests; tstamps not enforced)\n"
	       "  --keep                on exit, leave the program, config and pins in place\n"
	       "  --takeover            take the interface from a running loader, which then\n"
	       "                        stops and leaves everything in place\n"
	       "  --prometheus PORT     serve /metrics on PORT (default off)\n"
	       "  --prometheus-addr A   address to listen on (default 127.0.0.1)\n"
	       "  -c, --config FILE     read parameters from FILE (flags override it)\n"
	       "  --duration T          stop (and clean up) after T\n"
	       "  --gc-idle T           delete flow state idle for T (default 10s)\n"
	       "  --refresh MODE        who runs the refresh step every update_period:\n"
	       "                        kernel (a BPF timer, Linux >= 5.15), user (this\n"
	       "                        process), auto (kernel if it can, default)\n"
	       "  -q, --quiet  -v, --verbose\n");
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: afcd attach DEV rate R [param value]... [options]\n"
		"       afcd set DEV [param value]...\n"
		"       afcd stats DEV [-j] [--flows] [-k N] [--dt SEC]\n"
		"       afcd detach DEV\n"
		"       afcd params\n"
		"Maps are pinned under %s; see README.md for bpftool recipes.\n", AFCD_PIN_DIR);
}

int main(int argc, char **argv)
{
	libbpf_set_print(libbpf_print);
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage();
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "attach"))
		return cmd_attach(argc - 1, argv + 1);
	if (!strcmp(argv[1], "set"))
		return cmd_set(argc - 1, argv + 1);
	if (!strcmp(argv[1], "stats"))
		return cmd_stats(argc - 1, argv + 1);
	if (!strcmp(argv[1], "detach"))
		return cmd_detach(argc - 1, argv + 1);
	if (!strcmp(argv[1], "params"))
		return cmd_params();
	die_msg("unknown command '%s'", argv[1]);
	usage();
	return 2;
}
