// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * afcd attach DEV rate R [param value]... [options]: check everything
 * that can be checked without changing anything, load (or adopt) the
 * program and its pins, write the config, attach to the egress hook
 * (tcx where it can, clsact otherwise; --attach) and, with --backend
 * qdisc, register the qdisc afcd (qdisc_ops.h) and make it the root
 * qdisc (afcd_egress then only sets the CE marks the qdisc owes), then
 * run the refresh loop (scan.h) in the foreground until a signal,
 * --duration, or the interface is taken over or detached. On exit it
 * removes what it put there, unless --keep. See cmds.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "afcd.skel.h"
#include "cmds.h"
#include "ctl.h"
#include "log.h"
#include "metrics_http.h"
#include "params.h"
#include "pins.h"
#include "prom.h"
#include "qdisc_ops.h"
#include "scan.h"
#include "sys.h"
#include "tc.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	stop_flag = sig;
}

/* One attach, from the checks to the teardown. */
struct attach {
	const char *dev;
	__u32 ifindex;
	struct run_opts ro;
	struct params fp;               /* the complete, validated parameters */
	struct afcd_bpf *skel;          /* NULL when adopted */
	struct pins p;
	bool pins_open;
	bool configured;                /* our config is written: detach undoes it */
	bool fq_installed, adopted;
	int mq_leaves;                  /* backend qdisc: afcd on this many leaves of mq (0: root) */
	struct loop_state ls;
	struct metrics_http *prom;
	struct prom_ctx mctx;
	__u64 start_ns;                 /* 0 until the loop starts */
	__u64 busy0_ns;                 /* the kernel refresh step's time at the start */
	double cpu0_s;
	unsigned long long ticks;
};

/* The backend and the hook this kernel and build can give (--backend,
 * --attach). 0 or 1 (one line printed). */
static int attach_check_hooks(struct attach *a)
{
	char why[192];

	if (a->ro.backend == BACKEND_QDISC) {
		/* --install-fq is the systemd unit's default: the qdisc
		 * backend installs its own root qdisc, so it adds nothing */
		if (a->ro.skip_fq_check) {
			pr_warn("--skip-fq-check is for --backend edt: the qdisc backend is the "
				"root qdisc itself");
			return 1;
		}
		if (!qdisc_ops_available(why, sizeof(why))) {
			pr_warn("--backend qdisc: %s", why);
			return 1;
		}
		a->fp.c.flags |= AFCD_F_QDISC;
	}
	if (a->ro.hook == HOOK_CLSACT)
		return 0;
	if (tcx_available(a->ifindex, why, sizeof(why))) {
		a->ro.hook = HOOK_TCX;
	} else if (a->ro.hook == HOOK_TCX) {
		pr_warn("--attach tcx: %s", why);
		return 1;
	} else {
		a->ro.hook = HOOK_CLSACT;
		pr_debug("--attach auto: clsact, since %s", why);
	}
	return 0;
}

/* Parse and check everything that can be checked without changing
 * anything: the parameters, privileges, BTF, the namespace, another
 * loader, the hook, sch_fq (installed here with --install-fq). 0, 1 or 2
 * (usage), one line printed. */
static int attach_check(struct attach *a, int argc, char **argv)
{
	struct params cp = {0};
	char err[256];
	__u32 other = 0;

	if (argc < 2) {
		pr_warn("usage: afcd attach DEV rate R [param value]... [options] (see 'afcd params')");
		return 2;
	}
	a->dev = argv[1];
	if (check_ifname(a->dev, &a->ifindex))
		return 1;
	if (opts_parse(argc, argv, 2, attach_opts, &a->ro, &cp, NULL))
		return 1;
	if (a->ro.config_file) {
		if (params_load_file(&a->fp, a->ro.config_file, err, sizeof(err))) {
			pr_warn("%s", err);
			return 1;
		}
		params_overlay(&a->fp, &cp);   /* flags override the file */
	} else {
		a->fp = cp;
	}
	if (a->ro.backend == BACKEND_QDISC)
		a->fp.c.flags |= AFCD_F_QDISC;   /* rate optional */
	params_complete(&a->fp);
	if (params_validate(&a->fp, err, sizeof(err))) {
		pr_warn("%s", err);
		return 1;
	}
	if (check_privileges())
		return 1;
	if (!have_btf()) {
		pr_warn("this kernel exposes no BTF (/sys/kernel/btf/vmlinux): CO-RE programs "
			"need CONFIG_DEBUG_INFO_BTF=y");
		return 1;
	}
	if (check_netns(a->ifindex, a->dev, a->ro.takeover))
		return 1;
	if (running_loader(a->ifindex, &other) && !a->ro.takeover) {
		pr_warn("%s is already managed by the afcd loader with PID %u: stop it, or pass "
			"--takeover to hand the interface to this one", a->dev, other);
		return 1;
	}
	if (attach_check_hooks(a))
		return 1;
	if (a->ro.backend == BACKEND_QDISC)
		return 0;
	if (a->ro.skip_fq_check) {
		pr_info("--skip-fq-check: not checking for sch_fq; departure times are "
			"stamped but only enforced if fq is the root qdisc");
		return 0;
	}
	return fq_check(a->ifindex, a->dev, &a->fp.c, a->ro.install_fq, &a->fq_installed) ? 1 : 0;
}

/* Open and load the BPF object over the pins (created or reused), then
 * open the pins. 0 or 1 (one line printed). */
static int attach_open_object(struct attach *a)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = AFCD_PIN_DIR);

	a->skel = afcd_bpf__open_opts(&oo);
	if (!a->skel) {
		pr_warn("cannot open the BPF object: %s", strerror(errno));
		return 1;
	}
	if (pins_size_flow_table(a->skel->maps.afcd_flows, (__u32)a->ro.flow_table))
		return 1;
	if (afcd_bpf__load(a->skel)) {
		pr_warn("cannot load the BPF program (see libbpf's messages above); pinned "
			"maps of an incompatible version? remove them with 'afcd detach DEV'");
		return 1;
	}
	pins_chmod();
	return pins_open(&a->p, false) ? 1 : 0;
}

/* Load the program and its pins (or adopt the ones attached by hand or
 * by a loader run with --keep), write the config, attach to the hook and
 * take over the previous loader's estimate and scan. /metrics starts
 * first, so that a port in use is refused before anything changes.
 * 0, or 1 with one line printed and what was done left for
 * attach_teardown(). */
static int attach_load(struct attach *a)
{
	char err[256];
	int lock, werr, prog_fd;
	bool attached;

	if (a->ro.prom_port) {
		a->mctx = (struct prom_ctx){ .dev = a->dev, .p = &a->p, .ifindex = a->ifindex };
		a->prom = metrics_http_start(a->ro.prom_addr, a->ro.prom_port, prom_render_ctx,
					     &a->mctx, err, sizeof(err));
		if (!a->prom) {
			pr_warn("%s", err);
			return 1;
		}
	}
	if (ensure_bpffs(AFCD_PIN_DIR)) {
		pr_warn("cannot mount bpffs on /sys/fs/bpf: %s", strerror(errno));
		return 1;
	}
	/* from loading (which creates or reuses the pins) to the config written:
	 * no detach may unlink the pins and no other attach take the same slot */
	lock = pins_lock();
	if (lock < 0)
		return 1;
	attached = tc_find_afcd_filter(a->ifindex, NULL) || tcx_find_afcd(a->ifindex);
	/* the qdisc kind is registered once per machine; an afcd root qdisc
	 * already there (a loader killed, or --keep) is adopted */
	if (a->ro.backend == BACKEND_QDISC && qdisc_ops_ensure())
		goto fail_locked;
	if (attached && !pins_open(&a->p, true)) {
		a->adopted = true;
	} else {
		attached = false;
		if (attach_open_object(a))
			goto fail_locked;
	}
	if (a->ro.backend == BACKEND_QDISC)
		a->adopted = afcd_qdisc_is_root(a->ifindex);
	a->pins_open = true;
	a->fp.c.flags |= a->fq_installed ? AFCD_F_FQ_INSTALLED : 0;
	if (a->adopted) {
		struct afcd_config old;

		if (!cfg_lookup(&a->p, a->ifindex, &old))
			a->fp.c.flags |= old.flags & AFCD_F_FQ_INSTALLED;
	}
	werr = config_write_locked(&a->p, a->ifindex, &a->fp.c);
	if (!werr)
		scan_claim_locked(&a->p, a->fp.c.slot, &a->ls);
	pins_unlock(lock);
	if (werr)
		return 1;
	a->configured = true;
	/* after the config: its first packet is judged (backend qdisc: the
	 * marks the qdisc owes set from its first packet) */
	if (!attached) {
		prog_fd = bpf_program__fd(a->skel->progs.afcd_egress);
		if (a->ro.hook == HOOK_TCX ? tcx_attach(a->ifindex, a->dev, prog_fd) :
		    tc_attach(a->ifindex, a->dev, prog_fd))
			return 1;
	}
	/* work-conserving (no rate): one FIFO per transmit queue under mq;
	 * paced at a rate: one FIFO and one clock for the device */
	if (a->ro.backend == BACKEND_QDISC && !a->adopted &&
	    afcd_qdisc_install(a->ifindex, a->dev, !a->fp.c.rate_bps, &a->mq_leaves))
		return 1;
	if (bpf_map_lookup_elem(a->p.est, &a->fp.c.slot, &a->ls.e))
		memset(&a->ls.e, 0, sizeof(a->ls.e));
	a->busy0_ns = a->ls.e.busy_ns;
	return 0;
fail_locked:
	pins_unlock(lock);
	return 1;
}

/* Arm the refresh (the kernel's BPF timer where it can, this process
 * otherwise; --refresh), then run the loop until a signal, --duration,
 * or the interface is lost, taken over or detached. Returns the exit
 * status; sets ro.keep where nothing of ours is left to remove, clears
 * it where what is left must go. */
/* Load and arm the refresh timer (--refresh), then the first scan. 0 or
 * 1 (one line printed). */
static int attach_arm(struct attach *a)
{
	struct loop_state *ls = &a->ls;
	char why[160];
	int err;

	if (a->ro.refresh != REFRESH_USER) {
		ls->ctl = ctl_load(why, sizeof(why));
		if (!ls->ctl && a->ro.refresh == REFRESH_KERNEL) {
			pr_warn("--refresh kernel: %s", why);
			return 1;
		}
		if (!ls->ctl)
			pr_info("%s: refreshing from user space", why);
	}
	a->start_ns = now_ns();
	a->cpu0_s = cpu_seconds();     /* loading and verifying not counted */
	ls->last_gc_ns = a->start_ns;
	if (!loop_tick(&a->p, a->ifindex, ls, a->start_ns)) {   /* the first scan, before arming */
		pr_warn("%s lost its afcd %s while attaching", a->dev, ls->lost[0] ? ls->lost : "config");
		return 1;
	}
	if (!ls->ctl)
		return 0;
	err = ctl_arm(ls->ctl, a->ifindex, a->fp.c.slot);
	ls->kernel = !err;
	ls->last_arm_ns = a->start_ns;
	if (err && a->ro.refresh == REFRESH_KERNEL) {
		pr_warn("--refresh kernel: cannot arm the refresh timer: %s", strerror(-err));
		return 1;
	}
	if (err)
		pr_info("cannot arm the refresh timer (%s): refreshing from user space",
			strerror(-err));
	return 0;
}

/* The line that says where afcd runs now (pr_info). */
static void attach_announce(const struct attach *a)
{
	char where[96];

	if (a->ro.backend == BACKEND_QDISC && a->mq_leaves)
		snprintf(where, sizeof(where), "the qdisc afcd on %s's %d queues (under mq) at "
			 "the link's own rate", a->dev, a->mq_leaves);
	else if (a->ro.backend == BACKEND_QDISC)
		snprintf(where, sizeof(where), "the qdisc afcd as %s's root qdisc%s, its marks "
			 "by afcd_egress on %s", a->dev,
			 a->fp.c.rate_bps ? "" : " at the link's own rate", hook_name(a->ifindex));
	else
		snprintf(where, sizeof(where), "afcd_egress on %s's %s egress", a->dev,
			 hook_name(a->ifindex));
	pr_info("%s %s (slot %u), algo %s, refresh every %.3f ms by %s%s",
		a->adopted ? "adopted" : "attached", where, a->fp.c.slot,
		afcd_algo_name(a->fp.c.algo),
		a->fp.c.update_period_ns / 1e6, a->ls.kernel ? "a BPF timer" : "this process",
		a->ro.keep ? ", --keep" : "");
}

/* The refresh loop until a signal, --duration, or the interface is lost
 * (loop_report_stop() says why; 1). 0 or 1. */
static int attach_run(struct attach *a)
{
	struct loop_state *ls = &a->ls;
	__u64 next;

	if (attach_arm(a))
		return 1;
	next = a->start_ns;
	attach_announce(a);
	__atomic_store_n(&a->mctx.ready, 1, __ATOMIC_RELEASE);   /* pins open, config written */
	while (!stop_flag) {
		__u64 now, period = loop_tick(&a->p, a->ifindex, ls, now_ns());
		struct timespec ts;

		if (!period) {
			/* pins or program lost: what is left would run on maps
			 * nobody reaches, or be a config nothing runs: remove it
			 * (systemd's Restart=on-failure attaches anew); taken
			 * over or detached: nothing of ours is left to remove */
			a->ro.keep = !ls->lost[0];
			loop_report_stop(ls, a->dev);
			return 1;
		}
		a->ticks++;
		now = now_ns();
		if (now - ls->last_gc_ns >= AFCD_GC_PERIOD_NS) {
			ls->sc.gc_deleted += gc_flows(&a->p, ls->ctl, a->ifindex, a->ro.gc_idle_ns,
						      &ls->crowd);
			ls->last_gc_ns = now;
		}
		if (a->ro.duration_s > 0 && (double)(now - a->start_ns) / 1e9 >= a->ro.duration_s)
			break;
		next += period;                /* live changes of the period apply here */
		if ((__s64)(next - now) < 0)
			next = now;                /* fell behind: do not burst */
		ts.tv_sec = (time_t)(next / 1000000000ULL);
		ts.tv_nsec = (long)(next % 1000000000ULL);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	return 0;
}

/* The loader's own cost since the loop started, one line (pr_info). */
static void attach_report_cpu(struct attach *a)
{
	double wall = (double)(now_ns() - a->start_ns) / 1e9, cpu = cpu_seconds() - a->cpu0_s;
	double busy = -1;
	struct afcd_config cnow;
	struct afcd_est e;
	char kbuf[96] = "";

	/* the estimate's slot may have been zeroed (detached by someone else)
	 * or handed over: then the kernel's time is unknown */
	if (a->ls.kernel && !a->ls.taken_over && !cfg_lookup(&a->p, a->ifindex, &cnow) &&
	    cnow.slot == a->fp.c.slot && !bpf_map_lookup_elem(a->p.est, &a->fp.c.slot, &e) &&
	    e.busy_ns >= a->busy0_ns)
		busy = (double)(e.busy_ns - a->busy0_ns) / 1e9;
	if (busy >= 0)
		snprintf(kbuf, sizeof(kbuf), "; kernel refresh step %.3f s (%.3f%%)", busy,
			 wall > 0 ? 100 * busy / wall : 0);
	pr_info("%.2f s, %llu ticks, cpu %.3f s after attach (%.2f%% of one core)%s", wall,
		a->ticks, cpu, wall > 0 ? 100 * cpu / wall : 0, kbuf);
}

/* Undo what this attach did: disarm the timer (unless another loader
 * took it over); once configured, with --keep leave the program, config
 * and pins (marked as without a loader), else detach everything from the
 * device; before that, remove the fq this attach installed. Returns rc. */
static int attach_teardown(struct attach *a, int rc)
{
	if (a->ls.ctl) {
		if (!a->ls.taken_over)      /* the timer is the new loader's now */
			ctl_disarm(a->ls.ctl, a->fp.c.slot);
		ctl_destroy(a->ls.ctl);
	}
	if (a->start_ns)
		attach_report_cpu(a);
	metrics_http_stop(a->prom);    /* its thread reads the pins: stop it first */
	if (a->configured && a->ro.keep && !a->ls.taken_over) {
		a->ls.sc.loader_pid = 0;
		a->ls.sc.owner = 0;
		bpf_map_update_elem(a->p.scan, &a->fp.c.slot, &a->ls.sc, BPF_ANY);
	}
	if (a->pins_open)
		pins_close(&a->p);
	afcd_bpf__destroy(a->skel);
	if (a->configured && !a->ro.keep)
		detach_dev(a->dev, a->ifindex);
	else if (!a->configured && a->fq_installed)
		fq_remove(a->ifindex);     /* failed before configuring: undo our fq */
	return rc;
}

int cmd_attach(int argc, char **argv)
{
	struct attach a = { .ro = { .prom_addr = "127.0.0.1", .gc_idle_ns = AFCD_GC_IDLE_NS } };
	int rc = attach_check(&a, argc, argv);

	if (rc)
		return rc;
	/* from here a signal stops the loop before its first tick, and what
	 * attach_load() did is undone by the teardown */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	if (attach_load(&a))
		return attach_teardown(&a, 1);
	return attach_teardown(&a, attach_run(&a));
}
