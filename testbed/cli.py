# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""afcd-testbed (python3 -m testbed) - the command line of the testbed:
the dissertation's experiments in network namespaces.

  afcd-testbed list
  afcd-testbed check                          can this kernel run them, or is a VM needed?
  afcd-testbed calibrate [SCENARIO] [--out DIR]   the highest rate this machine runs validly
  afcd-testbed run SCENARIO --scheme S[,S..] [--rate MBIT|auto] [--rtt MS] [--duration S]
                   [--repeat K] [--out DIR]
  afcd-testbed run SCEN:SCHEME[,SCEN:SCHEME..] ...   an explicit list of runs
  afcd-testbed script FILE.py [--out DIR] [--wire MBIT]
                                              run FILE.py OUT_DIR (in the VM if needed;
                                              --wire: with a NIC of MBIT that pushes back)
  afcd-testbed demo [--full] [--out DIR] [--repeat K] [--resume]
                                              the story in ~15 min (--full: every workload,
                                              three repeats, ~2.5 h)
  afcd-testbed plot DIR                       PNGs from the JSON results in DIR
  afcd-testbed reproduce FIG[,FIG..]|ch3|ch4|all [--mode smoke|quick|default|faithful]
                   [--schemes paper|default|all|LIST] [--rate auto|MBIT] [--repeat K]
                   [--out DIR] [--resume]     the dissertation's figures, run and judged
  afcd-testbed reproduce ... --engine ns3 [--jobs N]   the same figures in ns-3 (make sim)
  afcd-testbed reproduce --list [FIGS] [--engine ns3]  figures, runs, estimated VM or wall time
  afcd-testbed reproduce --judge DIR [FIGS]   judge and plot again from the JSONs (host;
                                              without FIGS, the figures DIR holds)

Every run records the guest's CPU, the loader's CPU, timer lateness and
whether each sender reached its configured rate, and is marked invalid
when the machine, not the scheme, was measured (testbed/validity.py).
--rate auto first calibrates: the heaviest workloads asked for (the most UDP
relative to the rate, and the most UDP senders) under AFCD at decreasing
rates until a run of each is valid with the guest at most 75 % busy.
--repeat K gives mean and standard deviation per metric.

Schemes: this project's programs over sch_fq (droptail, codel, afd, afcd,
fall), its qdisc backend (afcd-qdisc, fall-qdisc: Linux >= 6.17, --kernel
6.18) and the kernel's AQMs under HTB at the same rate (pfifo, kcodel,
fq_codel, pie, fq_pie, red, sfb) or shaping themselves (cake). The demo boots the newest kernel with BPF qdiscs
that tools/deps.sh --vm unpacked, and runs the qdisc backend there too.

When the running kernel lacks sch_fq or netem, the command re-runs itself
inside a VM booted from Debian's stock kernel with virtme-ng (TCG when KVM
is not usable; AFCD_VM_KVM=1 to allow KVM), sharing this filesystem
read-only and writing results through --rwdir. --vm never|always forces.
"""
import argparse
import json
import os
import subprocess
import sys
import time

from . import netns as nslib
from . import ns3
from . import scenario
from . import topo as topo_mod
from .figures import MODES
from .report import (DEMO_QDISC_SCHEMES, DEMO_QUICK_QDISC_SCHEMES, DEMO_QUICK_SCENARIOS,
                     DEMO_REPEAT, DEMO_SCENARIOS,
                     DEMO_SCHEMES, aggregate,
                     load_results,
                     make_plots, report)
from .runs import CAL_SCENARIO, calibrate, heaviest, run_many, say
from .vm import (hold_jump_labels, in_vm, kernel_has_bpf_qdisc, kernel_has_qdiscs, qdisc_kernel,
                 vm_exec)

ROOT = nslib.ROOT


def need_vm(args):
    if args.vm == "never" or in_vm():
        return False
    if args.vm == "always":
        return True
    return not kernel_has_qdiscs()


def parse_args():
    ap = argparse.ArgumentParser(prog="afcd-testbed",
                                 description="AFCD/FaLL testbed in network namespaces")
    ap.add_argument("cmd", choices=["list", "check", "calibrate", "run", "demo", "plot",
                                    "script", "reproduce"])
    ap.add_argument("scenario", nargs="?")
    ap.add_argument("--scheme", default="afcd", help="comma-separated schemes")
    ap.add_argument("--rate", default="100",
                    help="bottleneck, Mbit/s, or auto (calibrate first; the demo's default)")
    ap.add_argument("--rtt", type=float, default=None,
                    help="base RTT, ms (default: the scenario's, else 20)")
    ap.add_argument("--duration", type=float, default=None,
                    help="seconds per run (default: the scenario's, else 15)")
    ap.add_argument("--warmup", type=float, default=None,
                    help="seconds left out of metrics (default: the scenario's, else 3)")
    ap.add_argument("--repeat", type=int, default=None,
                    help="runs of each scenario and scheme (mean and sd; demo: 1, "
                         "demo --full: 3)")
    ap.add_argument("--full", action="store_true",
                    help="demo: every workload of the demo, three repeats (make demo-full)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the results an interrupted run left in the output directory "
                         "(same rate; with --rate auto, the rate in its calibration.json)")
    ap.add_argument("--buffer", type=float, default=1.0, help="buffer, fraction of BDP")
    ap.add_argument("--target", type=float, default=5.0, help="target delay, ms")
    ap.add_argument("--interval", type=float, default=100.0, help="interval, ms")
    ap.add_argument("--ecn", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "results"))
    ap.add_argument("--vm", choices=["auto", "always", "never"], default="auto")
    ap.add_argument("--kernel", default=None,
                    help="the VM's kernel: a Debian series in /boot (6.1, default; 6.12) or "
                         "a vmlinuz path (env AFCD_VM_KERNEL)")
    ap.add_argument("--wire", type=float, default=None, metavar="MBIT",
                    help="script: the VM gets the wire, two NICs joined by a link of MBIT "
                         "Mbit/s that pushes back as a router's NIC does (testbed/wire.py)")
    ap.add_argument("--vm-timeout", type=int, default=None,
                    help="seconds the VM may run (default 1800; demo 2400, --full 10800; reproduce: its "
                         "estimate x 1.5)")
    ap.add_argument("--mode", choices=list(MODES), default="default",
                    help="reproduce: run length, repeats and schemes (testbed/figures.py; smoke "
                         "checks the pipeline in minutes, too short to judge)")
    ap.add_argument("--schemes", default=None,
                    help="reproduce: paper, default, all or a comma-separated list "
                         "(default: the mode's)")
    ap.add_argument("--engine", choices=["vm", "ns3"], default="vm",
                    help="reproduce: where the runs happen: the VM's kernel (vm) or ns-3 on "
                         "the host, the datapath's programs on its clock (ns3; make sim)")
    ap.add_argument("--jobs", type=int, default=2,
                    help="reproduce --engine ns3: simulations at once (default 2, one a core)")
    ap.add_argument("--frames", choices=sorted(ns3.FRAMES), default=None,
                    help="reproduce --engine ns3: the text's 9014-byte frames (default) or "
                    "the VM's 1514-byte ones, to compare the engines on one workload")
    ap.add_argument("--list", action="store_true", help="reproduce: the plan, nothing run")
    ap.add_argument("--judge", metavar="DIR", default=None,
                    help="reproduce: judge and plot DIR's results again, on the host")
    return ap.parse_intermixed_args()


def check_args(args):
    """The defaults that depend on the command, and one clear exit for a
    bad combination."""
    if args.rate != "auto":
        try:
            if float(args.rate) <= 0:
                raise ValueError
        except ValueError:
            sys.exit("afcd-testbed: --rate must be a positive number of Mbit/s or auto")
    if args.repeat is None:
        args.repeat = DEMO_REPEAT["full" if args.full else "quick"] if args.cmd == "demo" else 1
    if args.repeat < 1:
        sys.exit("afcd-testbed: --repeat must be at least 1")
    if args.cmd == "demo" and "--rate" not in sys.argv:
        args.rate = "auto"
    if args.vm_timeout is None:
        args.vm_timeout = (10800 if args.full else 2400) if args.cmd == "demo" else 1800
    if args.wire is not None and (args.cmd != "script" or not args.wire > 0):
        sys.exit("afcd-testbed: --wire MBIT (above 0) goes with script")
    if args.cmd == "demo" and args.kernel is None and not in_vm():
        # the newest kernel with BPF qdiscs (tools/deps.sh --vm unpacks one),
        # so that the qdisc backend runs beside the others; else Debian 12's
        args.kernel = qdisc_kernel()


def host_command(args):
    """list, check and plot: run here, need no root. Their exit code, or
    None for the other commands."""
    if args.cmd == "list":
        for k, (kind, desc, _, _) in scenario.SCENARIOS.items():
            say("%-18s %-9s %s" % (k, kind, desc))
        return 0
    if args.cmd == "check":
        ok = kernel_has_qdiscs()
        say("this kernel (%s) %s sch_fq and netem: scenarios run %s" %
            (os.uname().release, "has" if ok else "lacks", "here" if ok else "in a VM"))
        return 0
    if args.cmd == "plot":
        d = args.scenario or args.out
        rs = load_results(d)
        if not rs:
            sys.exit("afcd-testbed: no results in %s" % d)
        report(rs)
        for p in make_plots(rs, d):
            say(p)
        return 0
    return None


def plan(args):
    """(out, runs): the output directory and the (scenario, scheme) runs
    of the command; runs None for script, [] for calibrate."""
    if args.cmd == "demo":
        out = os.path.join(args.out, "demo") if args.out == os.path.join(ROOT, "results") \
            else args.out
        # the qdisc backend beside the others where the kernel takes it
        # (in the VM: the one qdisc_kernel() chose below)
        qdisc = DEMO_QDISC_SCHEMES if args.full else DEMO_QUICK_QDISC_SCHEMES
        schemes = DEMO_SCHEMES + (qdisc if kernel_has_bpf_qdisc() else [])
        runs = [(s, k) for s in (DEMO_SCENARIOS if args.full else DEMO_QUICK_SCENARIOS)
                for k in schemes]
    elif args.cmd == "calibrate":
        out = args.out
        runs = []
    elif args.cmd == "script":
        if not args.scenario or not os.path.exists(args.scenario):
            sys.exit("afcd-testbed script: name an existing Python file")
        out = args.out
        runs = None
    elif args.scenario and ":" in args.scenario:
        out = args.out
        runs = [tuple(r.split(":", 1)) for r in args.scenario.split(",")]
    else:
        if not args.scenario:
            sys.exit("afcd-testbed run: name a scenario (afcd-testbed list)")
        out = args.out
        runs = [(args.scenario, k) for k in args.scheme.split(",")]
    return out, runs


def run_in_vm(args, out, runs):
    """The command again inside a VM (this kernel lacks sch_fq or netem,
    or --vm always, or --wire); the host plots what it measured."""
    argv = [os.path.abspath(a) if args.cmd == "script" and a == args.scenario else a
            for a in sys.argv[1:]]
    if "--out" not in argv:
        argv += ["--out", out]
    if args.cmd == "demo":
        rc = vm_exec_once_more("demo", argv, args.resume, [out], args.vm_timeout,
                               args.kernel)
    else:
        rc = vm_exec(argv, [out], args.vm_timeout, args.kernel, args.wire)
    if runs is not None and args.cmd != "calibrate":
        # plotted here: importing matplotlib takes minutes under TCG
        for p in make_plots(load_results(out), out):
            say("plot: %s" % p)
    return rc


def run_rate(args, out, runs, topos):
    """The rate of the runs (Mbit/s): --rate, the calibration's of an
    earlier run (--resume), or calibrated now; None for the calibrate
    command (done)."""
    cal = os.path.join(out, "calibration.json")
    if args.cmd == "calibrate":
        calibrate(out, [args.scenario or CAL_SCENARIO], topos=topos)
        return None
    if args.rate != "auto":
        return float(args.rate)
    if args.resume and os.path.exists(cal):
        with open(cal) as fh:
            rate = float(json.load(fh)["rate_mbit"])
        say("afcd-testbed: resuming at the rate calibrated before, %g Mbit/s" % rate)
        return rate
    # the demo bisects the calibration's rates (3-4 probes, not up to 10)
    rate = calibrate(out, heaviest(sorted({n for n, _ in runs})), bisect=args.cmd == "demo",
                     topos=topos)
    say("afcd-testbed: running at the calibrated rate, %g Mbit/s" % rate)
    return rate


def run_here(args, out, runs):
    """The runs on this kernel (calibrated first with --rate auto), the
    report and the plots. 0 when every run finished."""
    os.makedirs(out, exist_ok=True)
    nslib.ensure_bpffs()
    if runs is None:
        env = dict(os.environ, PYTHONPATH=ROOT)   # the script imports testbed.*
        return subprocess.run(["/usr/bin/python3", os.path.abspath(args.scenario), out],
                              env=env).returncode
    t0 = time.time()
    with topo_mod.Pool() as topos:       # one topology per workload, not per run
        rate = run_rate(args, out, runs, topos)
        if rate is None:
            return 0
        results = run_many(runs, args, out, rate,
                           None if args.cmd != "demo" or args.full else DEMO_QUICK_SCENARIOS,
                           topos=topos)
    if results:
        agg = aggregate(results)
        report(agg)
        if not in_vm():               # the host plots what the VM measured
            for p in make_plots(agg, out):
                say("plot: %s" % p)
    want = len(runs) * args.repeat
    say("%d of %d runs in %.0f s at %g Mbit/s; results in %s" % (len(results), want,
                                                                 time.time() - t0, rate, out))
    return 0 if len(results) == want else 1


def main():
    args = parse_args()
    if in_vm():
        hold_jump_labels()
    if args.cmd == "reproduce":
        return reproduce_main(args)
    check_args(args)
    rc = host_command(args)
    if rc is not None:
        return rc
    if os.geteuid() != 0:
        sys.exit("afcd-testbed: needs root (namespaces, tc, BPF)")
    if not os.path.exists(nslib.AFCD):
        sys.exit("afcd-testbed: build first (make)")
    out, runs = plan(args)
    if args.wire and not in_vm() and args.vm == "never":
        sys.exit("afcd-testbed: --wire is a NIC of the VM: not with --vm never")
    if need_vm(args) or (args.wire and not in_vm()):
        return run_in_vm(args, out, runs)
    return run_here(args, out, runs)


def vm_exec_once_more(cmd, argv, resume, rwdirs, timeout_s, kernel):
    """vm_exec(argv, ...) for a command that can resume (demo,
    reproduce): when the guest hung (124) or died (255; TCG: docs/LIMITS.md),
    the runs it finished are kept and the others run in a
    new VM with --resume, once. Returns the last VM's exit code."""
    rc = vm_exec(argv, rwdirs, timeout_s, kernel)
    if rc in (124, 255):
        say("afcd-testbed %s: the VM %s (exit %d); once more for the runs it did not "
            "finish (--resume)" % (cmd, "hung" if rc == 124 else "died", rc))
        rc = vm_exec(argv + ([] if resume else ["--resume"]), rwdirs, timeout_s, kernel)
    return rc


def reproduce_main(args):
    """afcd-testbed reproduce (testbed/reproduce.py)."""
    from . import figures, reproduce
    try:
        figs = figures.select(args.scenario or "all")
    except ValueError as e:
        sys.exit("afcd-testbed reproduce: %s" % e)
    which = args.schemes or figures.MODES[args.mode]["schemes"]
    if args.rate != "auto" and "--rate" not in sys.argv:
        args.rate = "auto"
    if args.frames and (args.engine != "ns3" or args.judge):
        sys.exit("afcd-testbed reproduce: --frames is for running in ns-3 (--engine ns3); "
                 "the VM's frames are its veths' (1514 bytes)")
    mtu = ns3.FRAMES[args.frames or "text"] if args.engine == "ns3" else None
    if args.list:
        reproduce.list_figures(figs, args.mode, which, args.repeat if "--repeat" in sys.argv
                               else None, engine=args.engine, rate_arg=args.rate, mtu=mtu)
        return 0
    if args.jobs < 1:
        sys.exit("afcd-testbed reproduce: --jobs must be at least 1")
    default_out = "reproduction" if args.engine == "vm" else "reproduction-ns3"
    out = args.judge or (os.path.join(args.out, default_out)
                         if args.out == os.path.join(ROOT, "results") else args.out)
    if args.judge:
        if not os.path.isdir(out):
            sys.exit("afcd-testbed reproduce --judge: no directory %s" % out)
        if not args.scenario:
            figs = reproduce.judged_here(figs, out)
            if not figs:
                sys.exit("afcd-testbed reproduce --judge: no runs of any figure in %s" % out)
        reproduce.judge_all(figs, out)
        return 0
    if os.geteuid() != 0:
        sys.exit("afcd-testbed: needs root (namespaces, tc, BPF)")
    if not os.path.exists(nslib.AFCD):
        sys.exit("afcd-testbed: build first (make)")
    repeat = args.repeat if "--repeat" in sys.argv else None
    why = reproduce.batch_conflict(out, args.mode, args.engine, mtu)
    if why:
        sys.exit("afcd-testbed reproduce: %s" % why)
    if args.engine == "ns3":
        try:
            failed = reproduce.run(figs, out, args.mode, which, args.resume, args.rate, repeat,
                                   engine="ns3", jobs=args.jobs, mtu=mtu)
        except RuntimeError as e:
            sys.exit("afcd-testbed reproduce: %s" % e)
        reproduce.judge_all(figs, out, which)
        return 1 if failed else 0
    if need_vm(args):
        argv = sys.argv[1:]
        if "--out" not in argv:
            argv += ["--out", out]
        _, est = reproduce.plan(figs, args.mode, which, repeat)
        timeout = args.vm_timeout if "--vm-timeout" in sys.argv else int(1.5 * est + 1800)
        rc = vm_exec_once_more("reproduce", argv, args.resume, [out], timeout, args.kernel)
        reproduce.judge_all(figs, out, which)
        return rc
    nslib.ensure_bpffs()
    failed = reproduce.run(figs, out, args.mode, which, args.resume, args.rate, repeat)
    if not in_vm():
        reproduce.judge_all(figs, out, which)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
