// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * afcd attach DEV rate R [param value]... [options]: check everything
 * that can be checked without changing anything, load (or adopt) the
 * program and its pins, write the config, attach to the egress hook
 * (tcx where it can, clsact otherwise; --attach), then
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
#include "scan.h"
#include "sys.h"
#include "tc.h"

#define ROFF(f) offsetof(struct run_opts, f)
/* in the order of enum refresh_mode and enum tc_hook */
static const char *const refresh_names[] = { "auto", "kernel", "user", NULL };
static const char *const hook_names[] = { "auto", "tcx", "clsact", NULL };

const struct opt_def attach_opts[] = {
	{ "attach", 0, OPT_CHOICE, ROFF(hook), "HOOK",
	  "where to attach afcd_egress: tcx (Linux >= 6.6, a libbpf >= 1.3 build), clsact, "
	  "or auto (tcx where it can, default)", hook_names },
	{ "install-fq", 0, OPT_FLAG, ROFF(install_fq), NULL,
	  "install a root fq sized for the program if missing" },
	{ "skip-fq-check", 0, OPT_FLAG, ROFF(skip_fq_check), NULL,
	  "attach without sch_fq (tests; tstamps not enforced)" },
	{ "keep", 0, OPT_FLAG, ROFF(keep), NULL,
	  "on exit, leave the program, config and pins in place" },
	{ "takeover", 0, OPT_FLAG, ROFF(takeover), NULL,
	  "take the interface from a running loader, which then stops and leaves everything" },
	{ "prometheus", 0, OPT_PORT, ROFF(prom_port), "PORT", "serve /metrics on PORT (default off)" },
	{ "prometheus-addr", 0, OPT_STR, ROFF(prom_addr), "ADDR",
	  "address to listen on (default 127.0.0.1)" },
	{ "config", 'c', OPT_STR, ROFF(config_file), "FILE",
	  "read parameters from FILE (the command line overrides it)" },
	{ "duration", 0, OPT_TIME_S, ROFF(duration_s), "T", "stop (and clean up) after T" },
	{ "gc-idle", 0, OPT_TIME, ROFF(gc_idle_ns), "T", "delete flow state idle for T (default 10s)" },
	{ "refresh", 0, OPT_CHOICE, ROFF(refresh), "MODE",
	  "who runs the refresh step: kernel (a BPF timer, Linux >= 5.15), user (this "
	  "process), auto (kernel if it can, default)", refresh_names },
	{ "quiet", 'q', OPT_FLAG, ROFF(quiet), NULL, "only errors" },
	{ "verbose", 'v', OPT_VERBOSE, 0, NULL, "libbpf's messages too" },
	{ NULL }
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	stop_flag = sig;
}

int cmd_attach(int argc, char **argv)
{
	struct run_opts ro = { .prom_addr = "127.0.0.1", .gc_idle_ns = 10000000000ULL };
	struct params fp = {0}, cp = {0};
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = AFCD_PIN_DIR);
	struct afcd_bpf *skel = NULL;
	struct loop_state ls = {0};
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
	struct prom_ctx mctx = {0};
	int rc = 1, lock = -1, werr;

	if (argc < 2) {
		pr_warn("usage: afcd attach DEV rate R [param value]... [options] (see 'afcd params')");
		return 2;
	}
	dev = argv[1];
	if (check_ifname(dev, &ifindex))
		return 1;
	if (opts_parse(argc, argv, 2, attach_opts, &ro, &cp, NULL))
		return 1;
	if (ro.config_file) {
		if (params_load_file(&fp, ro.config_file, err, sizeof(err))) {
			pr_warn("%s", err);
			return 1;
		}
		params_overlay(&fp, &cp);   /* flags override the file */
	} else {
		fp = cp;
	}
	params_complete(&fp);
	if (params_validate(&fp, err, sizeof(err))) {
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
	if (check_netns(ifindex, dev, ro.takeover))
		return 1;
	if (running_loader(ifindex, &other) && !ro.takeover) {
		pr_warn("%s is already managed by the afcd loader with PID %u: stop it, or pass "
			"--takeover to hand the interface to this one", dev, other);
		return 1;
	}
	if (ro.hook != HOOK_CLSACT) {
		char why[192];

		if (tcx_available(ifindex, why, sizeof(why))) {
			ro.hook = HOOK_TCX;
		} else if (ro.hook == HOOK_TCX) {
			pr_warn("--attach tcx: %s", why);
			return 1;
		} else {
			ro.hook = HOOK_CLSACT;
			pr_debug("--attach auto: clsact, since %s", why);
		}
	}
	/* everything checked that can be checked without changing anything */
	if (ro.skip_fq_check) {
		if (!ro.quiet)
			pr_info("--skip-fq-check: not checking for sch_fq; departure times are "
				"stamped but only enforced if fq is the root qdisc");
	} else if (fq_check(ifindex, dev, &fp.c, ro.install_fq, &fq_installed)) {
		return 1;
	}
	if (ro.prom_port) {         /* before anything changes: a port in use is refused */
		mctx = (struct prom_ctx){ .dev = dev, .p = &p, .ifindex = ifindex };
		prom = metrics_http_start(ro.prom_addr, ro.prom_port, prom_render_ctx, &mctx,
					  err, sizeof(err));
		if (!prom) {
			pr_warn("%s", err);
			goto out_fq;
		}
	}
	if (ensure_bpffs(AFCD_PIN_DIR)) {
		pr_warn("cannot mount bpffs on /sys/fs/bpf: %s", strerror(errno));
		goto out_fq;
	}

	/* from loading (which creates or reuses the pins) to the config written:
	 * no detach may unlink the pins and no other attach take the same slot */
	lock = pins_lock();
	if (lock < 0)
		goto out_fq;
	if ((tc_find_afcd_filter(ifindex, NULL) || tcx_find_afcd(ifindex)) && !pins_open(&p, true)) {
		adopted = true;   /* attached by hand or by a loader run with --keep */
	} else {
		skel = afcd_bpf__open_opts(&oo);
		if (!skel) {
			pr_warn("cannot open the BPF object: %s", strerror(errno));
			goto out_fq;
		}
		if (afcd_bpf__load(skel)) {
			pr_warn("cannot load the BPF program (see libbpf's messages above); pinned "
				"maps of an incompatible version? remove them with 'afcd detach DEV'");
			goto out_skel;
		}
		pins_chmod();
		if (pins_open(&p, false))
			goto out_skel;
	}
	fp.c.flags |= fq_installed ? AFCD_F_FQ_INSTALLED : 0;
	if (adopted) {
		struct afcd_config old;

		if (!cfg_lookup(&p, ifindex, &old))
			fp.c.flags |= old.flags & AFCD_F_FQ_INSTALLED;
	}
	werr = config_write_locked(&p, ifindex, &fp.c);
	pins_unlock(lock);
	lock = -1;
	if (werr)
		goto out_pins;
	if (!adopted && (ro.hook == HOOK_TCX ?
			 tcx_attach(ifindex, dev, bpf_program__fd(skel->progs.afcd_egress)) :
			 tc_attach(ifindex, dev, bpf_program__fd(skel->progs.afcd_egress))))
		goto out_detach;
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
			pr_warn("--refresh kernel: %s", why);
			rc = 1;
			goto out_stop;
		}
		if (!ls.ctl && !ro.quiet)
			pr_info("%s: refreshing from user space", why);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	start = next = now_ns();
	cpu0 = cpu_seconds();     /* loading and verifying not counted below */
	ls.last_gc_ns = start;
	if (!loop_tick(&p, ifindex, &ls, start)) {     /* the first scan, before arming */
		pr_warn("%s lost its afcd %s while attaching", dev, ls.lost[0] ? ls.lost : "config");
		goto out_stop;
	}
	if (ls.ctl) {
		int err2 = ctl_arm(ls.ctl, ifindex, fp.c.slot);

		ls.kernel = !err2;
		ls.last_arm_ns = start;
		if (err2 && ro.refresh == REFRESH_KERNEL) {
			pr_warn("--refresh kernel: cannot arm the refresh timer: %s", strerror(-err2));
			goto out_stop;
		}
		if (err2 && !ro.quiet)
			pr_info("cannot arm the refresh timer (%s): refreshing from user space",
				strerror(-err2));
	}
	if (!ro.quiet)
		pr_info("%s %s on %s's %s egress (slot %u), algo %s, refresh every %.3f ms by %s%s",
			adopted ? "adopted the program attached" : "attached", "afcd_egress",
			dev, hook_name(ifindex), fp.c.slot, afcd_algo_name(fp.c.algo), fp.c.update_period_ns / 1e6,
			ls.kernel ? "a BPF timer" : "this process", ro.keep ? ", --keep" : "");

	rc = 0;
	__atomic_store_n(&mctx.ready, 1, __ATOMIC_RELEASE);   /* pins open, config written */
	while (!stop_flag) {
		__u64 now, period;

		if (!(period = loop_tick(&p, ifindex, &ls, now_ns()))) {
			rc = 1;
			if (ls.lost[0]) {
				/* what is left would run on maps nobody reaches, or
				 * be a config nothing runs: remove it, exit non-zero
				 * (systemd's Restart=on-failure attaches anew) */
				pr_warn("%s: %s: stopping", dev, ls.lost);
				ro.keep = false;
				break;
			}
			if (ls.taken_over)
				pr_warn("%s was taken over by the loader with PID %u: stopping and "
					"leaving everything to it", dev, ls.taken_over);
			else
				pr_warn("%s lost its afcd config (detached by someone else?): "
					"stopping", dev);
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
		if (!ls.taken_over)      /* the timer is the new loader's now */
			ctl_disarm(ls.ctl, fp.c.slot);
		ctl_destroy(ls.ctl);
	}
	if (!ro.quiet && start) {
		double wall = (double)(now_ns() - start) / 1e9;
		double cpu = cpu_seconds() - cpu0;
		struct afcd_config cnow;
		struct afcd_est e;
		double busy = -1;
		char kbuf[96] = "";

		/* the estimate's slot may have been zeroed (detached by someone
		 * else) or handed over: then the kernel's time is unknown */
		if (ls.kernel && !ls.taken_over && !cfg_lookup(&p, ifindex, &cnow) &&
		    cnow.slot == fp.c.slot && !bpf_map_lookup_elem(p.est, &fp.c.slot, &e) &&
		    e.busy_ns >= busy0)
			busy = (double)(e.busy_ns - busy0) / 1e9;
		if (busy >= 0)
			snprintf(kbuf, sizeof(kbuf), "; kernel refresh step %.3f s (%.3f%%)", busy,
				 wall > 0 ? 100 * busy / wall : 0);
		pr_info("%.2f s, %llu ticks, cpu %.3f s after attach (%.2f%% of one core)%s", wall,
			ticks, cpu, wall > 0 ? 100 * cpu / wall : 0, kbuf);
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
	if (rc && fq_installed && !start)     /* failed before running: undo our fq */
		fq_remove(ifindex);
	return rc;
}
