# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""afcd-testbed reproduce: run the dissertation's figures (testbed.figures)
and judge them (testbed.judge).

  OUT/context.json           mode, rates, kernel, emulation, dates, batches
  OUT/calibration-wan.json   the rate of ch. 3 (and -dcn: ch. 4)
  OUT/figX.Y/figX.Y-SCHEME-rK.json   the runs (figures that judge another
                             figure's runs have none of their own)
  OUT/figX.Y/figX.Y.png, figX.Y.md, verdict.json
  OUT/reproduction.md, reproduction.json   one row per figure, the tally

Runs happen in the VM (the caller re-executes there), or with engine ns3
in ns-3 on the host (testbed/ns3.py), two at a time on two cores; judging
and plotting on the host, from the JSONs alone (--judge DIR does only
that).
"""
import concurrent.futures
import gzip
import json
import os
import subprocess
import time

from . import figures as F, judge, scenario
from .runs import (CAL_BUSY_MAX, CAL_DURATION_S, CAL_RATES, CAL_SCHEME, CAL_WARMUP_S,
                   highest_valid_rate, say)

RUN_OVERHEAD_S = 15.0          # topology, loader, teardown per run (measured: 11-18 s)
CAL_PROBE_S = 80.0             # one calibration probe with its overhead
CAL_RATES_DCN_MAX = 50.0       # ch. 4 at most (REPRODUCTION.md sec. 1)
# the workloads each cell calibrates on: the heaviest of its figures
CAL_FIGURES = {"wan": ["3.5", "3.9"], "dcn": ["4.7"]}


def schemes_of(fig, which):
    """The schemes a figure is run with: a named set or a list."""
    if which in ("paper", "default", "all", "quick"):
        base = F.scheme_set(fig.chapter, which)
    else:
        base = [s.strip() for s in which.split(",") if s.strip()]
    return base + [s for s in fig.extra_schemes if s not in base and which != "paper"]


def run_figures(figs):
    """The figures whose runs must happen for figs (runs_of resolved),
    each once, in registry order."""
    want = {f.run_id for f in figs}
    return [f for f in F.ALL if f.id in want]


def plan(figs, mode, which, repeat=None):
    """[(run figure, scheme, repeat)] and the estimated VM time, s."""
    k = repeat or F.MODES[mode]["repeat"]
    runs, t = [], 0.0
    for f in run_figures(figs):
        dur = f.time(mode)[0]
        for s in schemes_of(f, which):
            for r in range(1, k + 1):
                runs.append((f, s, r))
                t += dur + RUN_OVERHEAD_S
    cells = {f.cell for f in run_figures(figs)}
    t += sum(len(CAL_FIGURES[c]) * 4 * CAL_PROBE_S for c in cells) + 90.0   # boot
    return runs, t


def missing_features(fig):
    """Features a figure needs that this testbed lacks (none today), and
    kernel modules its schemes need that the VM may not load."""
    return list(fig.needs)


def list_figures(figs, mode, which, repeat=None, engine="vm", rate_arg="auto", mtu=None):
    """The plan, one figure a line, with the time it takes on this
    machine: VM time, or (engine ns3) CPU and wall time at
    ns3.wall_per_sim_s()'s measured cost per simulated second for mtu-byte
    frames (None: the text's), scaled by this machine's probe
    (ns3.probe_s(), a few seconds)."""
    if engine == "ns3":
        return list_figures_ns3(figs, mode, which, repeat, rate_arg, mtu=mtu)
    say("%-5s %-5s %-4s %6s %9s  %s" % ("fig", "cell", "ch", "runs", "VM time", "what"))
    total = 0.0
    for f in figs:
        runs, _ = plan([f], mode, which, repeat)
        own = [x for x in runs if x[0].id == f.id]
        t = sum(x[0].time(mode)[0] + RUN_OVERHEAD_S for x in own)
        total += t
        note = ("judged on fig. %s's runs" % f.runs_of) if f.runs_of else \
            ("%d schemes x %d" % (len(schemes_of(f, which)), repeat or F.MODES[mode]["repeat"]))
        miss = missing_features(f)
        say("%-5s %-5s %-4d %6d %8.0fm  %s%s" % (f.id, f.cell, f.chapter, len(own), t / 60,
                                               f.title[:60], "; NOT-RUN: " + ", ".join(miss)
                                               if miss else ""))
        say("%21s %s (%s)" % ("", note, ", ".join(schemes_of(f, which))))
    _, t = plan(figs, mode, which, repeat)
    say("total: %.1f h of VM time in mode %s (runs %.1f h, calibration and boot the rest)" %
        (t / 3600, mode, total / 3600))


def list_figures_ns3(figs, mode, which, repeat, rate_arg, jobs=2, mtu=None):
    from . import ns3
    rates = ns3_rates(rate_arg)
    mtu = mtu or ns3.MTU_TEXT
    probe = ns3.probe_s()
    speed = ns3.speed_factor(probe)
    say("%-5s %-5s %-4s %6s %9s %10s %-7s %s" % ("fig", "cell", "ch", "runs", "rate",
                                                  "CPU time", "from", "what"))
    total = 0.0
    for f in figs:
        runs, _ = plan([f], mode, which, repeat)
        own = [x for x in runs if x[0].id == f.id and x[1] in ns3.SCHEMES]
        rate = rates[f.cell]
        t = sum(ns3.wall_per_sim_s(f.id, s, rate, mtu, mode) * f.time(mode)[0] * speed
                for _, s, _ in own)
        total += t
        skip = sorted({s for _, s, _ in runs if s not in ns3.SCHEMES})
        src = "default" if mode == "default" and ns3.measured_in_default(f.id) else "quick"
        say("%-5s %-5s %-4d %6d %5g Mb/s %9.0fm %-7s %s%s" % (
            f.id, f.cell, f.chapter, len(own), rate, t / 60, src if own else "", f.title[:50],
            "; NOT-RUN in ns-3: " + ", ".join(skip) if skip else ""))
    say("total: %.1f h of CPU, %.1f h of wall time at %d simulations at once (mode %s, "
        "%d-byte frames; testbed/ns3.py's measured cost x %.2f; from: the default mode's "
        "own runs, or the quick mode's, the most any scheme took, which the default mode's "
        "runs came to 0.34-1.32x of)" % (total / 3600, total / 3600 / jobs, jobs, mode, mtu, speed))
    if probe:
        fig, scheme, _, dur = ns3.PROBE
        say("this machine: the probe (fig. %s under %s, %g s simulated) took %.1f s against "
            "%.1f where the costs were measured: x %.2f (how much faster a machine is "
            "depends on the workload: within about 1.5x either way; docs/NS3.md)" %
            (fig, scheme, dur, probe, ns3.PROBE_REF_S, speed))
    else:
        say("this machine not probed (%s): the times of the machine the costs were "
            "measured on" %
            (ns3.available() or "the probe failed"))


def _path(out, fig_id, scheme, rep):
    return os.path.join(out, "fig%s" % fig_id, "fig%s-%s-r%d.json" % (fig_id, scheme, rep))


def _done(out, fig_id, scheme, rep, rate):
    for path, opener in ((_path(out, fig_id, scheme, rep), open),
                         (_path(out, fig_id, scheme, rep) + ".gz", gzip.open)):
        try:
            with opener(path, "rt") as fh:
                r = json.load(fh)
        except (OSError, ValueError):
            continue
        return r if r.get("rate_mbit") == rate else None
    return None


def calibrate_cell(cell, out, mode, resume):
    """The cell's rate: the highest of the calibration rates at which every
    workload of CAL_FIGURES runs validly with margin (testbed.runs.calibrate()'s rule),
    kept in OUT/calibration-CELL.json (reused with resume)."""
    path = os.path.join(out, "calibration-%s.json" % cell)
    if resume and os.path.exists(path):
        with open(path) as fh:
            rate = float(json.load(fh)["rate_mbit"])
        say("reproduce: %s cell at the rate calibrated before, %g Mbit/s" % (cell, rate))
        return rate
    rates = [r for r in CAL_RATES if cell == "wan" or r <= CAL_RATES_DCN_MAX]

    def probe(f):
        return lambda rate: scenario.run(
            "cal-" + f.id, CAL_SCHEME, rate_mbit=rate, rtt_ms=f.rtt_ms(rate),
            duration_s=CAL_DURATION_S + 4, warmup_s=CAL_WARMUP_S, buffer_bdp=f.buffer_bdp,
            target_ms=f.target_ms(rate), interval_ms=f.interval_ms(rate),
            wl=f.workload(rate, mode), update_period_ms=None)
    best, probes = highest_valid_rate(
        rates, [({"figure": fid}, "%s cell, fig. %s's workload under %s" % (cell, fid, CAL_SCHEME),
                 probe(F.BY_ID[fid])) for fid in CAL_FIGURES[cell]])
    if best is None:
        best = rates[-1]
        say("calibrate %s: no rate ran validly; using the lowest, %g Mbit/s" % (cell, best))
    os.makedirs(out, exist_ok=True)
    with open(path, "w") as fh:
        json.dump({"cell": cell, "rate_mbit": best, "probes": probes,
                   "kernel": os.uname().release, "date": time.strftime("%Y-%m-%d %H:%M"),
                   "workloads": CAL_FIGURES[cell], "guest_busy_max": CAL_BUSY_MAX}, fh,
                  indent=1)
    say("calibrate %s: %g Mbit/s" % (cell, best))
    return best


def _context(out):
    """(path, the dict) of OUT/context.json; {} when there is none."""
    path = os.path.join(out, "context.json")
    if not os.path.exists(path):
        return path, {}
    with open(path) as fh:
        return path, json.load(fh)


def _write_context(path, ctx):
    """The one writer of a directory's context.json."""
    with open(path, "w") as fh:
        json.dump(ctx, fh, indent=1)


# What a directory's first batch fixes for every later one: its mode,
# engine and (ns-3) frame size (the judge reads one of each), the schemes
# the judge plans for and the repeats its header states, and when the runs
# started.
BATCH_FIXED = ("mode", "engine", "schemes", "repeats", "started", "mtu")


def batch_conflict(out, mode, engine, mtu=None):
    """Why a batch of mode on engine ("vm" or "ns3") with mtu-byte frames
    (ns3; None: not checked) cannot run into out (its context.json holds
    another mode's, engine's or frame size's runs), or None."""
    _, ctx = _context(out)
    if not ctx:
        return None
    have = {"mode": ctx.get("mode"), "engine": ctx.get("engine", "vm"), "mtu": ctx.get("mtu")}
    for k, want in (("mode", mode), ("engine", engine), ("mtu", mtu)):
        if want is not None and have[k] is not None and have[k] != want:
            return ("%s holds runs of %s %s; a batch of %s %s needs its own --out" %
                    (out, k, have[k], k, want))
    return None


def start_batch(out, figs, **kw):
    """Record in OUT/context.json a batch of runs of figs about to start
    (kw: mode, schemes, engine, repeats, rates, kernel ...). The first
    batch's BATCH_FIXED keys stay the directory's; a later batch updates
    the others (a chapter's rate under its own key) and every batch is
    listed under "batches" with its schemes, figures, repeats, start and
    kernel (the guest's, or ns-3's version).
    ValueError, with nothing written, when batch_conflict() says why not.
    Returns the context written."""
    path, ctx = _context(out)
    why = batch_conflict(out, kw.get("mode"), kw.get("engine", "vm"), kw.get("mtu"))
    if why:
        raise ValueError(why)
    now = time.strftime("%Y-%m-%d %H:%M")
    first = not ctx
    batches = ctx.get("batches", [])
    ctx.update({k: v for k, v in kw.items() if first or k not in BATCH_FIXED})
    if first:
        ctx["started"] = now
    batch = {"schemes": kw.get("schemes"), "repeats": kw.get("repeats"),
             "figures": ",".join(f.id for f in figs), "started": now}
    if kw.get("kernel"):
        batch["kernel"] = kw["kernel"]
    ctx["batches"] = batches + [batch]
    ctx.pop("finished", None)
    _write_context(path, ctx)
    return ctx


def finish_batch(out):
    """The last batch of OUT/context.json finished now (and the directory)."""
    path, ctx = _context(out)
    now = time.strftime("%Y-%m-%d %H:%M")
    ctx["finished"] = now
    if ctx.get("batches"):
        ctx["batches"][-1]["finished"] = now
    _write_context(path, ctx)
    return ctx


def run(figs, out, mode, which, resume, rate_arg, repeat=None, engine="vm", jobs=1,
        mtu=None):
    """Run every run of figs (in the VM, or engine ns3: in ns-3 on the
    host, jobs at a time, with mtu-byte frames; None: the text's).
    Returns the number that failed."""
    os.makedirs(out, exist_ok=True)
    if engine == "ns3":
        return run_ns3(figs, out, mode, which, resume, rate_arg, repeat, jobs, mtu)
    subprocess.run(["sysctl", "-qw", "kernel.bpf_stats_enabled=1"], check=False)
    runs, est = plan(figs, mode, which, repeat)
    say("reproduce: %d runs, about %.1f h of VM time" % (len(runs), est / 3600))
    rates = {}
    for cell in sorted({f.cell for f, _, _ in runs}, reverse=True):   # wan, then dcn
        if rate_arg != "auto":
            rates[cell] = min(float(rate_arg), CAL_RATES_DCN_MAX) if cell == "dcn" \
                else float(rate_arg)
        else:
            rates[cell] = calibrate_cell(cell, out, mode, resume)
    # each chapter's rate and how it was chosen, under its own keys: a
    # chapter run later into the same directory leaves the other's
    per_ch = {}
    for cell, ch in (("wan", 3), ("dcn", 4)):
        if cell in rates:
            per_ch.update({"rate%d" % ch: rates[cell], "rate_arg%d" % ch: rate_arg})
    start_batch(out, figs, mode=mode, schemes=which, kernel=os.uname().release,
                emulation="KVM" if os.environ.get("AFCD_VM_KVM") == "1" else "TCG",
                rate_arg=rate_arg, repeats=repeat or F.MODES[mode]["repeat"], **per_ch)
    failed = 0
    for i, (f, s, rep) in enumerate(runs):
        rate = rates[f.cell]
        if resume and _done(out, f.id, s, rep, rate):
            say("[%d/%d] fig. %s under %s (repeat %d): kept" % (i + 1, len(runs), f.id, s, rep))
            continue
        dur, warm = f.time(mode)
        say("[%d/%d] fig. %s under %s (repeat %d) at %g Mbit/s ..." % (i + 1, len(runs), f.id,
                                                                     s, rep, rate))
        t0 = time.time()
        try:
            res = scenario.run("fig" + f.id, s, rate_mbit=rate, rtt_ms=f.rtt_ms(rate),
                               duration_s=dur, warmup_s=warm, buffer_bdp=f.buffer_bdp,
                               target_ms=f.target_ms(rate), interval_ms=f.interval_ms(rate),
                               out_dir=os.path.join(out, "fig" + f.id), repeat=rep,
                               wl=f.workload(rate, mode), update_period_ms=None,
                               tag="fig%s-%s" % (f.id, s), keep_samples=False)
        except Exception as e:             # noqa: BLE001 (report, go on)
            say("    failed: %s" % e)
            failed += 1
            continue
        say("    %s  (%.0f s)" % (scenario.one_line(res), time.time() - t0))
    finish_batch(out)
    return failed


def ns3_rates(rate_arg):
    """The ns-3 engine's rate per cell: --rate, else ns3.DEFAULT_RATE_MBIT
    (no calibration: a simulation has no CPU budget to miss, only wall
    time)."""
    from . import ns3
    if rate_arg != "auto":
        return {"wan": float(rate_arg), "dcn": float(rate_arg)}
    return dict(ns3.DEFAULT_RATE_MBIT)


def run_ns3(figs, out, mode, which, resume, rate_arg, repeat, jobs, mtu=None):
    """run() in ns-3: every run of figs whose scheme ns-3 has (the others
    stay NOT-RUN, said here), repeat K with seed K, jobs at a time, with
    mtu-byte frames (None: the text's, ns3.MTU_TEXT)."""
    from . import ns3
    mtu = mtu or ns3.MTU_TEXT
    why = ns3.available()
    if why:
        raise RuntimeError("the ns-3 engine cannot run: %s" % why)
    runs, _ = plan(figs, mode, which, repeat)
    rates = ns3_rates(rate_arg)
    todo = []
    for f, s, rep in runs:
        if s not in ns3.SCHEMES:
            say("fig. %s under %s: NOT-RUN (no ns-3 counterpart)" % (f.id, s))
        elif resume and _done(out, f.id, s, rep, rates[f.cell]):
            say("fig. %s under %s (repeat %d): kept" % (f.id, s, rep))
        else:
            todo.append((f, s, rep))
    start_batch(out, figs, mode=mode, schemes=which, engine="ns3",
                kernel="ns-3 %s" % ns3.NS3_VERSION,
                emulation="ns-3 %s, simulated" % ns3.NS3_VERSION, rate_arg=rate_arg,
                repeats=repeat or F.MODES[mode]["repeat"], jobs=jobs,
                rate3=rates["wan"], rate4=rates["dcn"], mtu=mtu)
    say("reproduce: %d runs in ns-3, %d at a time" % (len(todo), jobs))

    def one(job):
        f, s, rep = job
        rate = rates[f.cell]
        dur, warm = f.time(mode)
        return ns3.run("fig" + f.id, s, rate, f.rtt_ms(rate), dur, warm, f.workload(rate, mode),
                       buffer_bdp=f.buffer_bdp, target_ms=f.target_ms(rate),
                       interval_ms=f.interval_ms(rate), seed=rep,
                       out_dir=os.path.join(out, "fig" + f.id), repeat=rep,
                       tag="fig%s-%s" % (f.id, s), mtu=mtu)
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        futs = {ex.submit(one, j): j for j in todo}
        for i, fu in enumerate(concurrent.futures.as_completed(futs)):
            f, s, rep = futs[fu]
            try:
                res = fu.result()
            except Exception as e:         # noqa: BLE001 (report, go on)
                say("[%d/%d] fig. %s under %s (repeat %d) failed: %s" %
                    (i + 1, len(todo), f.id, s, rep, e))
                failed += 1
                continue
            say("[%d/%d] fig. %s under %s (repeat %d): %s  (%.0f s wall for %g s)" %
                (i + 1, len(todo), f.id, s, rep, scenario.one_line(res), res["wall_s"],
                 res["sim_s"]))
    finish_batch(out)
    return failed


def judged_here(figs, out):
    """The figures of figs that out holds: runs (their own or those of the
    figure they are judged on, fig. 4.4 on 4.3's) or a page judged before.
    What `--judge DIR` judges when no figure is named, so that a directory
    of some figures gets no NOT-RUN page for the others."""
    return [f for f in figs
            if os.path.exists(os.path.join(out, "fig" + f.id, "verdict.json"))
            or judge.load_runs(os.path.join(out, "fig" + f.run_id))]


def judge_all(figs, out, which=None):
    """Judge and plot figs from the JSONs under out (host side); writes the
    per-figure reports and the top-level one. Returns the summary rows."""
    _, ctx = _context(out)
    mode = ctx.get("mode", "default")
    which = which or ctx.get("schemes", "default")
    repeats = ctx.get("repeats", F.MODES[mode]["repeat"])
    metrics_of, rows = {}, []
    for f in F.ALL:          # every figure in order: 3.7 refers to 3.6, 3.8 and 3.9 to 3.7
        runs = judge.load_runs(os.path.join(out, "fig" + f.run_id))
        # the run set's schemes, then any other scheme run into the same
        # directory (a later batch, a reference a check names): every
        # scheme whose numbers a check may use is in the table and the plot
        planned = schemes_of(f, which)
        planned += [s for s in dict.fromkeys(r["scheme"] for r in runs) if s not in planned]
        verdict, M = judge.judge_figure(f, runs, repeats, others=metrics_of, planned=planned)
        metrics_of[f.id] = M
        if f not in figs:
            # judged before and not asked now: its last verdict stays in
            # the top-level report (judging one figure must not drop the rest)
            try:
                with open(os.path.join(out, "fig" + f.id, "verdict.json")) as fh:
                    rows.append(json.load(fh))
            except (OSError, ValueError):
                pass
            continue
        d = os.path.join(out, "fig" + f.id)
        os.makedirs(d, exist_ok=True)
        fctx = dict(ctx, rate_mbit=M.rate_mbit, rtt_ms=M.rtt_ms,
                    rate_arg=ctx.get("rate_arg%d" % f.chapter, ctx.get("rate_arg", "auto")),
                    # the most repeats any scheme ran (a later batch may add
                    # repeats to one figure: seeds where a claim is close)
                    repeats=max((r.get("repeat") or 1 for r in runs),
                                default=ctx.get("repeats", "?")),
                    duration_s=(runs[0]["duration_s"] if runs else None),
                    warmup_s=(runs[0]["warmup_s"] if runs else None),
                    kernel=judge.kernels_of(ctx, runs),
                    tcp=judge.ns3_tcp(runs))
        png = None
        if runs:
            try:
                png = judge.plot_figure(f, M, planned, os.path.join(d, "fig%s.png" % f.id))
            except Exception as e:         # noqa: BLE001 (a report without its plot)
                say("fig. %s: no plot: %s" % (f.id, e))
        with open(os.path.join(d, "fig%s.md" % f.id), "w") as fh:
            fh.write(judge.figure_markdown(f, verdict, M, planned, fctx, png))
        with open(os.path.join(d, "verdict.json"), "w") as fh:
            json.dump(verdict, fh, indent=1)
        rows.append(verdict)
        say("fig. %-4s text: %-28s project: %s" % (f.id, verdict["verdict"].get("text"),
                                                   verdict["verdict"].get("project")))
    md, tally = judge.summary_markdown(rows, ctx)
    with open(os.path.join(out, "reproduction.md"), "w") as fh:
        fh.write(md)
    with open(os.path.join(out, "reproduction.json"), "w") as fh:
        json.dump({"context": ctx, "figures": rows, "tally": tally}, fh, indent=1)
    say("reproduce: %s" % os.path.join(out, "reproduction.md"))
    return rows
