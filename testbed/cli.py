# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""afcd-testbed (testbed.cli) - run the seeds' experiments in network namespaces.

  afcd-testbed list
  afcd-testbed check                          can this kernel run them, or is a VM needed?
  afcd-testbed calibrate [SCENARIO] [--out DIR]   the highest rate this machine runs validly
  afcd-testbed run SCENARIO --scheme S[,S..] [--rate MBIT|auto] [--rtt MS] [--duration S]
                   [--repeat K] [--out DIR]
  afcd-testbed run SCEN:SCHEME[,SCEN:SCHEME..] ...   an explicit list of runs
  afcd-testbed script FILE.py [--out DIR]     run FILE.py OUT_DIR (in the VM if needed)
  afcd-testbed demo [--out DIR] [--repeat K] [--resume]
  afcd-testbed plot DIR                       PNGs from the JSON results in DIR
  afcd-testbed reproduce FIG[,FIG..]|ch3|ch4|all [--mode quick|default|faithful]
                   [--schemes paper|default|all|LIST] [--rate auto|MBIT] [--repeat K]
                   [--out DIR] [--resume]     the dissertation's figures, run and judged
  afcd-testbed reproduce --list [FIGS]        figures, runs, estimated VM time
  afcd-testbed reproduce --judge DIR [FIGS]   judge and plot again from the JSONs (host)

Every run records the guest's CPU, the loader's CPU, timer lateness and
whether each sender reached its configured rate, and is marked invalid
when the machine, not the scheme, was measured (testbed/validity.py).
--rate auto first calibrates: the heaviest workload asked for (the most UDP
relative to the rate) under AFCD at decreasing rates until a run is valid
with the guest at most 75 % busy. --repeat K gives mean and standard
deviation per metric.

Schemes: this project's programs over sch_fq (droptail, codel, afd, afcd,
fall) and the kernel's AQMs under HTB at the same rate (pfifo, kcodel,
fq_codel, pie, red, sfb).

When the running kernel lacks sch_fq or netem, the command re-runs itself
inside a VM booted from Debian's stock kernel with virtme-ng (TCG when KVM
is not usable; AFCD_VM_KVM=1 to allow KVM), sharing this filesystem
read-only and writing results through --rwdir. --vm never|always forces.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time

from . import netns as nslib

ROOT = nslib.ROOT
TOOL = os.path.join(ROOT, "tools", "afcd-testbed")   # what the VM runs again

VM_MODULES = ["sch_fq", "sch_netem", "sch_htb", "sch_tbf", "sch_codel", "sch_fq_codel",
              "sch_pie", "sch_red", "sch_sfb", "sch_cake", "sch_fq_pie", "sch_ingress",
              "cls_bpf", "veth", "tcp_highspeed", "tcp_dctcp", "tcp_bbr"]
DEMO_SCENARIOS = ["cubic-udp1", "cubic-udp", "cubic-udp3", "cubic-4udp", "cubic-reno-60",
                  "cubic-reno-120"]
DEMO_SCHEMES = ["pfifo", "kcodel", "fq_codel", "afcd", "fall"]
DEMO_REPEAT = 3
# calibration: the heaviest workload of the runs asked for (the most UDP
# relative to the rate; cubic-udp by default) under AFCD (its loader
# included), short runs, rates tried from the top down. A probe counts only
# with a margin below the validity limits (CAL_BUSY_MAX), because the real
# runs last longer and some schemes cost more.
CAL_SCENARIO, CAL_SCHEME, CAL_DURATION_S, CAL_WARMUP_S = "cubic-udp", "afcd", 8.0, 2.0
CAL_RATES = [150.0, 100.0, 70.0, 50.0, 35.0, 25.0, 18.0, 12.0, 8.0, 5.0]
CAL_BUSY_MAX = 0.75
GLOBAL_DEFAULTS = {"rtt_ms": 20.0, "duration_s": 15.0, "warmup_s": 3.0}


def say(*a):
    print(*a, flush=True)


def kernel_has_qdiscs(kinds=("fq", "netem")):
    """Try each qdisc on lo of a scratch namespace."""
    name = "afcd-probe%d" % os.getpid()
    if subprocess.run(["ip", "netns", "add", name], capture_output=True).returncode:
        return False
    try:
        ok = True
        for k in kinds:
            r = subprocess.run(nslib.ns_cmd(name, ["tc", "qdisc", "add", "dev", "lo", "root",
                                                   k]), capture_output=True)
            ok &= r.returncode == 0
            subprocess.run(nslib.ns_cmd(name, ["tc", "qdisc", "del", "dev", "lo", "root"]),
                           capture_output=True)
        return ok
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


VM_KERNEL_DEFAULT = "6.1"   # Debian 12's own; "6.12" is bookworm's second


def vm_kernels(series=None):
    """The Debian kernels in /boot, newest first; with series ("6.1",
    "6.12") only those of it."""
    ks = sorted(glob.glob("/boot/vmlinuz-*-amd64"), reverse=True,
                key=lambda p: [int(x) if x.isdigit() else -1
                               for x in os.path.basename(p)[8:].replace("-", ".")
                               .replace("+", ".").split(".")])
    if series:
        ks = [k for k in ks if os.path.basename(k).startswith("vmlinuz-%s." % series)]
    return ks


def vm_kernel(want=None):
    """--kernel: a path to a vmlinuz, or a series ("6.1", "6.12": its newest
    kernel in /boot). None when there is no such kernel."""
    want = want or os.environ.get("AFCD_VM_KERNEL") or VM_KERNEL_DEFAULT
    if os.path.sep in want:
        return want if os.path.exists(want) else None
    ks = vm_kernels(want)
    return ks[0] if ks else None


def in_vm():
    return os.environ.get("AFCD_IN_VM") == "1"


def vm_exec(argv, rwdirs, timeout_s, want_kernel=None):
    """Re-run argv (this script's arguments) inside a virtme-ng VM booted
    from the kernel --kernel names."""
    kernel = vm_kernel(want_kernel)
    vng = shutil.which("vng")
    if not kernel or not vng:
        subprocess.run([os.path.join(ROOT, "tools", "deps.sh"), "--vm"], check=True)
        kernel, vng = vm_kernel(want_kernel), shutil.which("vng")
    if not kernel or not vng:
        sys.exit("afcd-testbed: need Debian's Linux %s in /boot and virtme-ng "
                 "(tools/deps.sh --vm)" % (want_kernel or VM_KERNEL_DEFAULT))
    inner = ("set -e; mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf; "
             "for m in %s; do modprobe -q $m 2>/dev/null || true; done; "
             "cd %s; export MPLCONFIGDIR=/tmp; AFCD_IN_VM=1 /usr/bin/python3 %s %s --vm never" %
             (" ".join(VM_MODULES), ROOT, TOOL,
              " ".join("'%s'" % a.replace("'", "'\\''") for a in argv)))
    cmd = [vng, "-r", kernel, "--cpus", "2", "--memory", "2G",
           "--append", "tsc=reliable clocksource=tsc"]
    if os.environ.get("AFCD_VM_KVM") != "1":
        cmd.insert(1, "--disable-kvm")
    for d in rwdirs:
        os.makedirs(d, exist_ok=True)
        cmd += ["--rwdir", os.path.abspath(d)]
    cmd += ["--", inner]
    say("afcd-testbed: this kernel (%s) lacks sch_fq/netem: running in a VM (%s, %s)" %
        (os.uname().release, os.path.basename(kernel),
         "KVM" if os.environ.get("AFCD_VM_KVM") == "1" else "TCG"))
    # relay the VM's console through a pipe: qemu may reopen or truncate a
    # stdout that is a file (CI logs), losing what was printed before
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, errors="replace")
    deadline = time.time() + timeout_s
    for line in p.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        if time.time() > deadline:
            p.kill()
            say("afcd-testbed: the VM did not finish within %d s" % timeout_s)
            return 124
    return p.wait()


def need_vm(args):
    if args.vm == "never" or in_vm():
        return False
    if args.vm == "always":
        return True
    return not kernel_has_qdiscs()


def run_params(args, name):
    """rtt/duration/warmup of a scenario: the command line, else the
    scenario's own defaults, else the global ones."""
    from . import scenario
    d = dict(GLOBAL_DEFAULTS, **scenario.defaults(name))
    return {"rtt_ms": args.rtt if args.rtt is not None else d["rtt_ms"],
            "duration_s": args.duration if args.duration is not None else d["duration_s"],
            "warmup_s": args.warmup if args.warmup is not None else d["warmup_s"]}


def previous(out_dir, name, scheme, repeat, rate):
    """The result JSON an earlier, interrupted invocation left for this run
    at this rate (--resume), or None: a missing, unreadable or other-rate
    file means the run is done again."""
    path = os.path.join(out_dir, "%s-%s%s.json" % (name, scheme,
                                                   "" if repeat is None else "-r%d" % repeat))
    try:
        with open(path) as fh:
            res = json.load(fh)
    except (OSError, ValueError):
        return None
    return res if res.get("rate_mbit") == rate else None


def run_many(runs, args, out_dir, rate):
    from . import scenario, validity
    results = []
    total = len(runs) * args.repeat
    i = 0
    for k in range(args.repeat):
        for name, scheme in runs:
            i += 1
            t0 = time.time()
            done = previous(out_dir, name, scheme, k + 1 if args.repeat > 1 else None, rate) \
                if args.resume else None
            if done is not None:
                say("[%d/%d] %s under %s%s: kept from an earlier run" % (
                    i, total, name, scheme, " (repeat %d)" % (k + 1) if args.repeat > 1 else ""))
                results.append(done)
                continue
            say("[%d/%d] %s under %s%s ..." % (i, total, name, scheme,
                                              " (repeat %d)" % (k + 1) if args.repeat > 1 else ""))
            try:
                for attempt in (1, 2):
                    res = scenario.run(name, scheme, rate_mbit=rate, buffer_bdp=args.buffer,
                                       target_ms=args.target, interval_ms=args.interval,
                                       ecn=args.ecn, out_dir=out_dir,
                                       repeat=k + 1 if args.repeat > 1 else None,
                                       **run_params(args, name))
                    if attempt == 2 or not validity.sender_failed(res):
                        break
                    say("    a sender reported nothing (%s): running it once more" %
                        "; ".join(res["invalid_reasons"]))
            except Exception as e:  # report and go on with the next run
                say("    failed: %s" % e)
                continue
            say("    %s  (%.0f s)" % (scenario.one_line(res), time.time() - t0))
            results.append(res)
    return results


def heaviest(names):
    """The scenario with the most UDP load relative to the rate (the one
    that needs the most of the machine), cubic-udp if none has UDP."""
    from . import scenario
    load = {n: sum(f.rate_mbit for f in scenario._flows(scenario.SCENARIOS[n][2], 1.0)
                   if f.proto == "udp") for n in names}
    best = max(load, key=lambda n: load[n]) if load else CAL_SCENARIO
    return best if load.get(best) else CAL_SCENARIO


def calibrate(out_dir, workload=CAL_SCENARIO):
    """The highest bottleneck rate (Mbit/s) at which this machine runs the
    workload validly, with CAL_BUSY_MAX of margin on the guest's CPU;
    writes out_dir/calibration.json."""
    from . import scenario
    probes, best = [], None
    for rate in CAL_RATES:
        say("calibrate: %s under %s at %g Mbit/s ..." % (workload, CAL_SCHEME, rate))
        try:
            r = scenario.run(workload, CAL_SCHEME, rate_mbit=rate, rtt_ms=20.0,
                             duration_s=CAL_DURATION_S, warmup_s=CAL_WARMUP_S)
        except Exception as e:
            say("    failed: %s" % e)
            continue
        probes.append({"rate_mbit": rate, "valid": r["valid"],
                       "invalid_reasons": r["invalid_reasons"], "cpu": r["cpu"],
                       "timer_late_ms": r["timer_late_ms"],
                       "senders": {f["name"]: (f.get("client") or {}).get("sent_mbps")
                                   for f in r["flows"]}})
        ok = r["valid"] and r["cpu"]["guest_busy"] <= CAL_BUSY_MAX
        say("    %s (guest %.0f %% busy)" % (
            ("valid" if ok else "valid, but without margin (guest > %.0f %% busy)" %
             (100 * CAL_BUSY_MAX)) if r["valid"] else
            "invalid: " + "; ".join(r["invalid_reasons"]), 100 * r["cpu"]["guest_busy"]))
        if ok:
            best = rate
            break
    if best is None:
        best = CAL_RATES[-1]
        say("calibrate: no rate ran validly; using the lowest, %g Mbit/s" % best)
    cal = {"rate_mbit": best, "kernel": os.uname().release, "date": time.strftime("%Y-%m-%d %H:%M"),
           "workload": "%s under %s, %g s" % (workload, CAL_SCHEME, CAL_DURATION_S),
           "guest_busy_max": CAL_BUSY_MAX,
           "probes": probes}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "calibration.json"), "w") as fh:
        json.dump(cal, fh, indent=1)
    say("calibrate: this machine runs the workload validly at %g Mbit/s" % best)
    return best


def _mean_sd(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None
    m = sum(xs) / len(xs)
    sd = (sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5 if len(xs) > 1 else 0.0
    return m, sd


def aggregate(results):
    """One entry per (scenario, scheme): mean and sd of every metric over
    the valid repeats (over all of them only when none is valid: an
    invalid run measured the machine, not the scheme), the repeats'
    validity, and result-like fields (flows' goodput = mean, delay samples
    pooled, time series those of the first run averaged) so that the plots
    take it too. Fields: repeats, valid_runs (the runs averaged, or all
    when 0), valid (all repeats valid), invalid_reasons, sd."""
    groups = {}
    for r in results:
        groups.setdefault((r["scenario"], r["scheme"]), []).append(r)
    out = []
    for (name, scheme), runs in groups.items():
        good = [r for r in runs if r.get("valid", True)]
        rs = good or runs
        a = dict(rs[0])
        a["repeats"] = len(runs)
        a["valid_runs"] = len(good)
        a["valid"] = len(good) == len(runs)
        a["invalid_reasons"] = sorted({x for r in runs for x in r.get("invalid_reasons", [])})
        sd = {}
        a["flows"] = []
        for f in rs[0]["flows"]:
            vals = [next((g["goodput_mbps"] for g in r["flows"] if g["name"] == f["name"]), None)
                    for r in rs]
            m, s = _mean_sd(vals)
            a["flows"].append(dict(f, goodput_mbps=m, goodput_sd=s))
        for key in ("jain", "utilization", "overlimit_share_after_warmup"):
            a[key], sd[key] = _mean_sd([r.get(key) for r in rs])
        a["queue_delay_ms"] = {}
        for p in ("p50", "p95", "p99", "max"):
            a["queue_delay_ms"][p], sd["qdelay_" + p] = _mean_sd(
                [r["queue_delay_ms"][p] for r in rs])
        a["cpu"] = {}
        for k in ("guest_busy", "loader_busy"):
            a["cpu"][k], sd[k] = _mean_sd([r.get("cpu", {}).get(k) for r in rs])
        a["sd"] = sd
        a["queue_delay_samples_ms"] = [x for r in rs for x in r.get("queue_delay_samples_ms", [])]
        out.append(a)
    return out


def table(results):
    """Markdown table of aggregated results: mean (and +- sd) over the
    valid repeats; the last column: valid/all repeats and why not."""
    def pm(m, s, fmt):
        if m is None:
            return "-"
        return (fmt % m) + (" ± " + fmt % s if s else "")
    lines = ["| scenario | scheme | goodput per flow (Mbit/s) | Jain | util | "
             "qdelay p50 | qdelay p99 | guest CPU | loader CPU | valid |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        q, sd = r["queue_delay_ms"], r.get("sd", {})
        cpu = r.get("cpu", {})
        valid = ("%d/%d" % (r.get("valid_runs", 1), r.get("repeats", 1)) +
                 ("" if r.get("valid", True) else " (" + "; ".join(
                     r["invalid_reasons"] + (["none valid: means of all runs"]
                                             if not r.get("valid_runs") else [])) + ")"))
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["scenario"], r["label"],
            ", ".join("%s %s" % (f["name"], pm(f["goodput_mbps"], f.get("goodput_sd"), "%.1f"))
                      for f in r["flows"]),
            pm(r["jain"], sd.get("jain"), "%.3f"),
            pm(100 * (r["utilization"] or 0), 100 * (sd.get("utilization") or 0), "%.0f%%"),
            pm(q["p50"], sd.get("qdelay_p50"), "%.1f ms"),
            pm(q["p99"], sd.get("qdelay_p99"), "%.1f ms"),
            pm(100 * (cpu.get("guest_busy") or 0), None, "%.0f%%"),
            pm(100 * cpu["loader_busy"], None, "%.1f%%") if cpu.get("loader_busy") is not None
            else "-", valid))
    return "\n".join(lines)


def targets(agg):
    """The demo's targets, checked on aggregated results and printed (never
    asserted: they are figures, with their validity): per scenario, AFCD's
    and FaLL's Jain at least fq_codel's - 0.02; CUBIC at least 40 % against
    one UDP flow at 1.5x; utilization at least 0.90; AFCD's median
    queueing delay at most 1.5x target; horizon drops under 1 % of all
    drops after the warm-up. Returns lines 'ok'/'MISS'."""
    by = {(r["scenario"], r["scheme"]): r for r in agg}
    lines = []

    def check(ok, what):
        lines.append("%-4s %s" % ("ok" if ok else "MISS", what))
    for (name, scheme), r in sorted(by.items()):
        if scheme not in ("afcd", "fall"):
            continue
        tag = "%s/%s%s" % (name, scheme, "" if r.get("valid", True) else " (invalid runs)")
        fq = by.get((name, "fq_codel"))
        if fq and r["jain"] is not None and fq["jain"] is not None:
            check(r["jain"] >= fq["jain"] - 0.02,
                  "%s: Jain %.3f >= fq_codel's %.3f - 0.02" % (tag, r["jain"], fq["jain"]))
        if name == "cubic-udp":
            c = next(f["goodput_mbps"] for f in r["flows"] if f["name"] == "cubic")
            check(c >= 0.40 * r["rate_mbit"], "%s: CUBIC %.1f >= 40 %% of %g Mbit/s" %
                  (tag, c, r["rate_mbit"]))
        if r["utilization"] is not None:
            check(r["utilization"] >= 0.90, "%s: utilization %.2f >= 0.90" %
                  (tag, r["utilization"]))
        if scheme == "afcd" and r["queue_delay_ms"]["p50"] is not None:
            check(r["queue_delay_ms"]["p50"] <= 1.5 * r["target_ms"],
                  "%s: median queueing delay %.1f ms <= 1.5 x target %g ms" %
                  (tag, r["queue_delay_ms"]["p50"], r["target_ms"]))
        ovl = r.get("overlimit_share_after_warmup")
        if ovl is not None:
            check(ovl < 0.01, "%s: horizon drops %.2f %% of drops after warm-up < 1 %%" %
                  (tag, 100 * ovl))
    return lines


def report(agg):
    """Print the table, the targets and the count of invalid runs of
    aggregated results (what `demo`, `run` and `plot` show)."""
    say("\n" + table(agg))
    tl = targets(agg)
    if tl:
        say("\ntargets (figures, not tests):\n" + "\n".join(tl))
    n = sum(r["repeats"] for r in agg)
    bad = n - sum(r["valid_runs"] for r in agg)
    if bad:
        say("\n%d of %d runs are INVALID (they measured the machine, not the scheme; left "
            "out of the means): %s" % (bad, n, "; ".join(sorted({x for r in agg
                                                                for x in r["invalid_reasons"]}))))


def make_plots(results, out_dir):
    from . import plots
    paths = []
    for name in sorted({r["scenario"] for r in results}):
        rs = [r for r in results if r["scenario"] == name]
        paths.append(plots.scenario_figure(rs, os.path.join(out_dir, "%s.png" % name)))
    if results:
        paths.append(plots.summary_figure(results, os.path.join(out_dir, "summary.png")))
    return paths


def load_results(out_dir):
    """The aggregated results of a results directory, in the demo's order
    of scenarios and schemes (others after them, by name)."""
    rs = []
    for p in sorted(glob.glob(os.path.join(out_dir, "*.json"))):
        if p.endswith("summary.json"):
            continue
        with open(p) as fh:
            r = json.load(fh)
        if "scenario" in r and "scheme" in r:
            rs.append(r)
    rs = aggregate(rs)
    rs.sort(key=lambda r: (DEMO_SCENARIOS.index(r["scenario"])
                           if r["scenario"] in DEMO_SCENARIOS else 99, r["scenario"],
                           DEMO_SCHEMES.index(r["scheme"])
                           if r["scheme"] in DEMO_SCHEMES else 99, r["scheme"]))
    return rs


def main():
    ap = argparse.ArgumentParser(description="AFCD/FaLL testbed in network namespaces")
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
                    help="runs of each scenario and scheme (mean and sd; demo: 3)")
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
    ap.add_argument("--vm-timeout", type=int, default=None,
                    help="seconds the VM may run (default 1800; demo 7200; reproduce: its "
                         "estimate x 1.5)")
    ap.add_argument("--mode", choices=["quick", "default", "faithful"], default="default",
                    help="reproduce: run length, repeats and schemes (testbed/figures.py)")
    ap.add_argument("--schemes", default=None,
                    help="reproduce: paper, default, all or a comma-separated list "
                         "(default: the mode's)")
    ap.add_argument("--list", action="store_true", help="reproduce: the plan, nothing run")
    ap.add_argument("--judge", metavar="DIR", default=None,
                    help="reproduce: judge and plot DIR's results again, on the host")
    args = ap.parse_args()
    if args.cmd == "reproduce":
        return reproduce_main(args)
    if args.rate != "auto":
        try:
            if float(args.rate) <= 0:
                raise ValueError
        except ValueError:
            sys.exit("afcd-testbed: --rate must be a positive number of Mbit/s or auto")
    if args.repeat is None:
        args.repeat = DEMO_REPEAT if args.cmd == "demo" else 1
    if args.repeat < 1:
        sys.exit("afcd-testbed: --repeat must be at least 1")
    if args.cmd == "demo" and "--rate" not in sys.argv:
        args.rate = "auto"
    if args.vm_timeout is None:
        args.vm_timeout = 7200 if args.cmd == "demo" else 1800

    if args.cmd == "list":
        from . import scenario
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
    if os.geteuid() != 0:
        sys.exit("afcd-testbed: needs root (namespaces, tc, BPF)")
    if not os.path.exists(nslib.AFCD):
        sys.exit("afcd-testbed: build first (make)")

    if args.cmd == "demo":
        out = os.path.join(args.out, "demo") if args.out == os.path.join(ROOT, "results") \
            else args.out
        runs = [(s, k) for s in DEMO_SCENARIOS for k in DEMO_SCHEMES]
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

    if need_vm(args):
        argv = [os.path.abspath(a) if args.cmd == "script" and a == args.scenario else a
                for a in sys.argv[1:]]
        if "--out" not in argv:
            argv += ["--out", out]
        rc = vm_exec(argv, [out], args.vm_timeout, args.kernel)
        if runs is not None and args.cmd != "calibrate":
            # plotted here: importing matplotlib takes minutes under TCG
            for p in make_plots(load_results(out), out):
                say("plot: %s" % p)
        return rc

    os.makedirs(out, exist_ok=True)
    nslib.ensure_bpffs()
    if runs is None:
        env = dict(os.environ, PYTHONPATH=ROOT)   # the script imports testbed.*
        return subprocess.run(["/usr/bin/python3", os.path.abspath(args.scenario), out],
                              env=env).returncode
    t0 = time.time()
    if args.cmd == "calibrate":
        calibrate(out, args.scenario or CAL_SCENARIO)
        return 0
    cal = os.path.join(out, "calibration.json")
    if args.rate == "auto" and args.resume and os.path.exists(cal):
        with open(cal) as fh:
            rate = float(json.load(fh)["rate_mbit"])
        say("afcd-testbed: resuming at the rate calibrated before, %g Mbit/s" % rate)
    elif args.rate == "auto":
        rate = calibrate(out, heaviest(sorted({n for n, _ in runs})))
        say("afcd-testbed: running at the calibrated rate, %g Mbit/s" % rate)
    else:
        rate = float(args.rate)
    results = run_many(runs, args, out, rate)
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
    if args.list:
        reproduce.list_figures(figs, args.mode, which, args.repeat if "--repeat" in sys.argv
                               else None)
        return 0
    out = args.judge or (os.path.join(args.out, "reproduction")
                         if args.out == os.path.join(ROOT, "results") else args.out)
    if args.judge:
        if not os.path.isdir(out):
            sys.exit("afcd-testbed reproduce --judge: no directory %s" % out)
        reproduce.judge_all(figs, out)
        return 0
    if os.geteuid() != 0:
        sys.exit("afcd-testbed: needs root (namespaces, tc, BPF)")
    if not os.path.exists(nslib.AFCD):
        sys.exit("afcd-testbed: build first (make)")
    repeat = args.repeat if "--repeat" in sys.argv else None
    if need_vm(args):
        argv = sys.argv[1:]
        if "--out" not in argv:
            argv += ["--out", out]
        _, est = reproduce.plan(figs, args.mode, which, repeat)
        timeout = args.vm_timeout if "--vm-timeout" in sys.argv else int(1.5 * est + 1800)
        rc = vm_exec(argv, [out], timeout, args.kernel)
        reproduce.judge_all(figs, out, which)
        return rc
    nslib.ensure_bpffs()
    failed = reproduce.run(figs, out, args.mode, which, args.resume, args.rate, repeat)
    if not in_vm():
        reproduce.judge_all(figs, out, which)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
