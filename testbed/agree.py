# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Do the engines agree? The same scaled workloads in ns-3 (testbed/ns3.py,
the VM's 1514-byte frames) and in the VM (the runs of a reproduction
directory, docs/reproduction by default): per figure and scheme, Jain's
index, utilization and the mean backlog delay, each engine's mean over
its valid runs, and whether they agree within BOUNDS. Written to
OUT/agreement.md and OUT/agreement.json; the ns-3 runs to OUT/figX.Y/.

  python3 -m testbed.agree [--vm-dir DIR] [--out DIR] [--figures 3.5,3.7]
                           [--schemes pfifo,kcodel,fq_codel,afcd] [--repeat K]
                           [--flood-scale X] [--judge]

Beside the three metrics each engine's offered load at the bottleneck
(load()): the same workload is not the same load when the engines count
a UDP flow's rate differently. --flood-scale X multiplies the ns-3 UDP
flows' rates by X, to replay a load the VM measured.
"""
import argparse
import concurrent.futures
import copy
import json
import os
import statistics
import sys
import time

from . import figures as F, judge, ns3, scenario
from .netns import ROOT

# What "agree" means, per metric: |ns-3 - VM| within the bound. Jain and
# utilization absolute; the delay as max(absolute ms, relative): the VM's
# timers fire 0.2-3 ms late (docs/LIMITS.md) and its sampler sees the backlog
# every 50-100 ms, so a few ms and a third of the value are within what
# the VM can tell apart.
BOUNDS = {"jain": 0.05, "utilization": 0.05, "delay_ms": (3.0, 0.33)}
FIGURES = ["3.5", "3.7"]
SCHEMES = ["pfifo", "kcodel", "fq_codel", "afcd"]


def load(run):
    """The bottleneck's offered load over what it sent, from a run's record,
    >= 1.0 (1.05: 5 % more arriving than leaving): under the datapath's
    programs (afcd_stats.queue) (passed + aqm_drop + overlimit_drop) /
    passed, the drops of the queue disc under them added; otherwise the
    root queue disc's (sent + dropped) / sent packets (qdisc_stats[0]: HTB
    in the VM, the queue disc in ns-3). Counters over the whole run; drops
    by an AQM and at a limit count alike, and a TCP flow's retransmissions
    arrive again. None without those counters or when nothing was sent."""
    q = (run.get("qdisc_stats") or [None])[0] or {}
    prog = (run.get("afcd_stats") or {}).get("queue")
    if prog:
        sent = prog.get("passed") or 0
        drops = (prog.get("aqm_drop") or 0) + (prog.get("overlimit_drop") or 0) + \
            (q.get("drops") or 0)
    else:
        sent, drops = q.get("packets") or 0, q.get("drops")
    if not sent or drops is None:
        return None
    return (sent + drops) / sent


def metrics(run, fig):
    """A run's compared metrics as the judge computes them for fig
    (judge.metrics(): Jain over the figure's window, utilization of what
    was delivered in it, mean backlog delay), the same code for both
    engines' records, and its load()."""
    m = judge.metrics(run, fig)
    return {"jain": m["jain"], "utilization": m["util"], "delay_ms": m["delay_mean"],
            "load": load(run)}


def mean_of(runs, fig):
    out = {}
    for k in ("jain", "utilization", "delay_ms", "load"):
        xs = [x for x in (metrics(r, fig)[k] for r in runs) if x is not None]
        out[k] = statistics.mean(xs) if xs else None
    return out


def within(k, vm, sim):
    if vm is None or sim is None:
        return None
    b = BOUNDS[k]
    if isinstance(b, tuple):
        return abs(sim - vm) <= max(b[0], b[1] * abs(vm))
    return abs(sim - vm) <= b


def scaled_floods(wl, x):
    """wl with every UDP flow's rate multiplied by x (a copy; wl unchanged)."""
    if x == 1.0:
        return wl
    out, flows = copy.copy(wl), wl.flows

    def scaled(rate):
        fl = [copy.copy(f) for f in scenario._flows(flows, rate)]
        for f in fl:
            if f.proto == "udp":
                f.rate_mbit = f.rate_mbit * x
        return fl
    out.flows = scaled
    return out


def flood_scale_of(run, fig):
    """The factor a run's UDP flows were sent at over what fig's workload
    gives them at the run's rate (1.0 for a run without UDP), from each
    flow's recorded configured_mbps, to 3 decimals; ValueError when the
    run's UDP flows had different factors."""
    want = {f.name: f.rate_mbit for f in
            scenario._flows(F.BY_ID[fig].workload(run["rate_mbit"], "default").flows,
                            run["rate_mbit"]) if f.proto == "udp"}
    got = {round(fl["configured_mbps"] / want[fl["name"]], 3) for fl in run["flows"]
           if fl.get("proto") == "udp" and fl.get("configured_mbps") and want.get(fl["name"])}
    if len(got) > 1:
        raise ValueError("%s %s: UDP flows at different scales %s" % (fig, run["scheme"], got))
    return got.pop() if got else 1.0


def run_ns3(fig, scheme, rate, dur, warm, rep, out, flood_scale=1.0):
    f = F.BY_ID[fig]
    wl = scaled_floods(f.workload(rate, "default"), flood_scale)
    return ns3.run("fig" + fig, scheme, rate, f.rtt_ms(rate), dur, warm, wl,
                   buffer_bdp=f.buffer_bdp, target_ms=f.target_ms(rate),
                   interval_ms=f.interval_ms(rate), seed=rep, mtu=ns3.MTU_VM, repeat=rep,
                   out_dir=os.path.join(out, "fig" + fig), tag="fig%s-%s" % (fig, scheme),
                   tcp_series=False)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m testbed.agree", description=__doc__.split("\n")[0])
    ap.add_argument("--vm-dir", default=os.path.join(ROOT, "docs", "reproduction"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "agreement"))
    ap.add_argument("--figures", default=",".join(FIGURES))
    ap.add_argument("--schemes", default=",".join(SCHEMES))
    ap.add_argument("--repeat", type=int, default=1, help="ns-3 runs per cell (seeds 1..K)")
    ap.add_argument("--flood-scale", type=float, default=1.0,
                    help="ns-3's UDP flows at this many times their rate (0.5 .. 2)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--judge", action="store_true",
                    help="compare the ns-3 runs already in OUT (of the figures and schemes "
                    "asked), run nothing")
    a = ap.parse_args(argv)
    if not 0.5 <= a.flood_scale <= 2.0:
        ap.error("--flood-scale %g: a factor of 0.5 .. 2" % a.flood_scale)
    why = None if a.judge else ns3.available()
    if why:
        sys.exit("testbed.agree: %s" % why)
    figs, schemes = a.figures.split(","), a.schemes.split(",")
    for fig in figs:
        if fig not in F.BY_ID:
            sys.exit("testbed.agree: no figure %s" % fig)
    for s in schemes:
        if s not in ns3.SCHEMES:
            sys.exit("testbed.agree: ns-3 has no %s (it has %s)" % (s, ", ".join(ns3.SCHEMES)))
    cells, jobs = {}, []
    for fig in figs:
        vm_runs = judge.load_runs(os.path.join(a.vm_dir, "fig" + fig))
        for s in schemes:
            vm = [r for r in vm_runs if r["scheme"] == s and r.get("valid")]
            if not vm:
                print("fig. %s %s: no valid VM run in %s, skipped" % (fig, s, a.vm_dir))
                continue
            r0 = vm[0]
            cells[(fig, s)] = {"vm": vm, "ns3": [], "rate": r0["rate_mbit"],
                               "dur": r0["duration_s"], "warm": r0["warmup_s"]}
            jobs += [(fig, s, rep) for rep in range(1, a.repeat + 1)]
    t0 = time.time()
    if a.judge:
        for (fig, s), c in cells.items():
            c["ns3"] = [r for r in judge.load_runs(os.path.join(a.out, "fig" + fig))
                        if r["scheme"] == s and r.get("engine") == "ns3"]
        jobs = []
        cells = {k: c for k, c in cells.items() if c["ns3"]}
        if not cells:
            sys.exit("testbed.agree --judge: no ns-3 run of those figures in %s" % a.out)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {ex.submit(run_ns3, fig, s, cells[(fig, s)]["rate"], cells[(fig, s)]["dur"],
                          cells[(fig, s)]["warm"], rep, a.out, a.flood_scale): (fig, s)
                for fig, s, rep in jobs}
        for fu in concurrent.futures.as_completed(futs):
            fig, s = futs[fu]
            res = fu.result()
            cells[(fig, s)]["ns3"].append(res)
            print("fig. %s %-9s ns-3: %s (%.0f s wall)" % (fig, s, scenario.one_line(res),
                                                          res["wall_s"]), flush=True)
    rows = []
    for (fig, s), c in cells.items():
        vm, sim = mean_of(c["vm"], F.BY_ID[fig]), mean_of(c["ns3"], F.BY_ID[fig])
        ok = {k: within(k, vm[k], sim[k]) for k in BOUNDS}
        rows.append({"figure": fig, "scheme": s, "rate_mbit": c["rate"], "vm": vm, "ns3": sim,
                     "agree": ok, "vm_runs": len(c["vm"]), "ns3_runs": len(c["ns3"]),
                     "vm_code": sorted({r.get("code") for r in c["vm"]}),
                     "ns3_wall_s": [r.get("wall_s") or 0 for r in c["ns3"]],
                     "sim_s": c["dur"],
                     "flood_scale": sorted({flood_scale_of(r, fig) for r in c["ns3"]})})
    write(a.out, rows, time.time() - t0)
    return 0


def fmt(x, nd):
    return "-" if x is None else "%.*f" % (nd, x)


def write(out, rows, wall_s):
    os.makedirs(out, exist_ok=True)
    scale = {x for r in rows for x in r.get("flood_scale", [1.0])}
    n = sum(1 for r in rows for v in r["agree"].values() if v)
    m = sum(1 for r in rows for v in r["agree"].values() if v is False)
    lines = ["# The engines side by side: ns-3 against the VM", "",
             "%s, commit %s; %d metrics agree, %d disagree (bounds: Jain +-%g, utilization "
             "+-%g, mean backlog delay +-max(%g ms, %d %%)). ns-3 %s, 1514-byte frames, the VM's "
             "rate, RTT, run length and buffer; the VM's runs as recorded (their commits "
             "below). %.0f s of wall time." % (
                 time.strftime("%Y-%m-%d"), scenario.code_version(), n, m, BOUNDS["jain"],
                 BOUNDS["utilization"], BOUNDS["delay_ms"][0], 100 * BOUNDS["delay_ms"][1],
                 ns3.NS3_VERSION, wall_s) +
             "".join(" ns-3's UDP flows at %g x their rate (--flood-scale)." % x
                     for x in sorted(scale) if x != 1.0) +
             " Load: the bottleneck's (sent + dropped) / sent packets (agree.load()).", "",
             "| fig | scheme | Mbit/s | Jain VM | Jain ns-3 | util VM | util ns-3 | delay VM (ms) "
             "| delay ns-3 (ms) | load VM | load ns-3 | agree (J/U/D) | ns-3 wall s | VM commits |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        a = "/".join({True: "yes", False: "NO", None: "-"}[r["agree"][k]]
                     for k in ("jain", "utilization", "delay_ms"))
        lines.append("| %s | %s | %g | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["figure"], r["scheme"], r["rate_mbit"], fmt(r["vm"]["jain"], 3),
            fmt(r["ns3"]["jain"], 3), fmt(r["vm"]["utilization"], 3),
            fmt(r["ns3"]["utilization"], 3), fmt(r["vm"]["delay_ms"], 1),
            fmt(r["ns3"]["delay_ms"], 1), fmt(r["vm"].get("load"), 3),
            fmt(r["ns3"].get("load"), 3), a, ",".join("%.0f" % w for w in r["ns3_wall_s"]),
            " ".join(c or "?" for c in r["vm_code"])))
    with open(os.path.join(out, "agreement.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "agreement.json"), "w") as fh:
        json.dump({"bounds": BOUNDS, "rows": rows, "code": scenario.code_version(),
                   "date": time.strftime("%Y-%m-%d %H:%M")}, fh, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
