# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The ns-3 engine: one run of a figure's workload in ns-3 3.44
(build/afcd-sim, sim/afcd_sim.cc), the bottleneck the datapath's own
program (afcd_egress on the simulation's clock, as the loader configures
it: bottleneck.Bottleneck.loader_params()) or ns-3's queue disc set as
the VM sets the kernel's (the same buffer, thresholds and targets). Its
result has the VM runner's shape (scenario.run()), with engine "ns3",
the seed and the simulated and wall seconds, so that one judge reads
both engines.

  run(name, scheme, rate_mbit, rtt_ms, duration_s, warmup_s, wl, ...)
  SCHEMES         the schemes this engine runs; others (sfb, cake,
                  dctcp-k: no ns-3 queue disc) are NOT-RUN here
"""
import gzip
import json
import os
import random
import re
import subprocess
import time

from . import abi, bottleneck, scenario, shortflows
from .stats import jain
from .netns import BUILD

SIM = os.path.join(BUILD, "afcd-sim")
NS3_VERSION = "3.44"
NS3_DIR = os.environ.get("NS3_DIR", "/usr/local/lib/afcd-ns3/ns3")
# The dissertation's frames: 'We also set MTU to 9000 Bytes' (sec. 3.4),
# on CRON's 10 Gb/s links; six times fewer packets than 1500-byte ones
# also keeps ns-3's TCP (its send buffer a linked list walked per
# retransmission: 86 % of the time at 1500 bytes, fig. 3.5 at 120 ms)
# within budget. The VM's frames (MTU_VM: its veths' 1500-byte MTU and
# the Ethernet header) for comparing the engines on one workload
# (testbed/agree.py, reproduce --frames vm).
MTU_TEXT = 9014
MTU_VM = 1514
FRAMES = {"text": MTU_TEXT, "vm": MTU_VM}
SACK = os.environ.get("AFCD_NS3_SACK", "1") != "0"
# CoDel's pass for a short queue. Linux's codel_should_drop()
# (include/net/codel_impl.h) drops nothing while the backlog it is handed,
# the packet being sent taken out, is at most one frame of the device's MTU
# (`*backlog <= params->mtu`); ns-3 3.44's CoDelQueueDisc while its queue
# holds fewer than MinBytes bytes of IP packets (1500 by default). For
# kcodel, whose backlog is its own, MinBytes = the IP MTU + 1 is Linux's
# rule. sch_fq_codel hands the rule the whole qdisc's backlog
# (`&sch->qstats.backlog`), so a flow's only packet above target is
# dropped while other flows queue; ns-3's FqCoDelQueueDisc runs a
# CoDelQueueDisc per flow on the flow's own backlog, which passes a flow's
# only packet for any MinBytes of 1 or more (and with 0 ns-3 3.44 reads the
# missing next packet after such a drop and aborts). That difference is
# ns-3's and stays (docs/NS3.md, "Do the engines agree?").
ETH_HLEN = 14
# ns-3's queue discs for the kernel's schemes (testbed/bottleneck.py sets
# the same numbers on the kernel's): name -> (TypeId, attributes(b))
NS3_QDISCS = {
    "pfifo": ("ns3::FifoQueueDisc", lambda b: [("MaxSize", "%dp" % b.limit_pkts)]),
    "kcodel": ("ns3::CoDelQueueDisc", lambda b: [
        ("MaxSize", "%dp" % b.limit_pkts), ("Target", "%gms" % b.target_ms),
        ("Interval", "%gms" % b.interval_ms), ("UseEcn", str(b.ecn).lower()),
        ("MinBytes", "%d" % (b.mtu - ETH_HLEN + 1))]),
    "fq_codel": ("ns3::FqCoDelQueueDisc", lambda b: [
        ("MaxSize", "%dp" % b.limit_pkts), ("Target", "%gms" % b.target_ms),
        ("Interval", "%gms" % b.interval_ms), ("UseEcn", str(b.ecn).lower())]),
    "pie": ("ns3::PieQueueDisc", lambda b: [
        ("MaxSize", "%dp" % b.limit_pkts), ("QueueDelayReference", "%gms" % b.target_ms),
        ("UseEcn", str(b.ecn).lower())]),
    "fq_pie": ("ns3::FqPieQueueDisc", lambda b: [
        ("MaxSize", "%dp" % b.limit_pkts), ("QueueDelayReference", "%gms" % b.target_ms),
        ("UseEcn", str(b.ecn).lower())]),
    # Table 3.1 / 4.1: thresholds at 0.2 and 0.8 of the buffer, max_p 0.02
    "red": ("ns3::RedQueueDisc", lambda b: [
        ("MaxSize", "%dB" % b.red_bytes[0]), ("MinTh", "%d" % b.red_bytes[1]),
        ("MaxTh", "%d" % b.red_bytes[2]), ("MeanPktSize", "%d" % b.mtu),
        ("LInterm", "50"), ("LinkBandwidth", "%gMbps" % b.rate_mbit),
        ("LinkDelay", "%gms" % (b.rtt_ms / 2)), ("UseEcn", str(b.ecn).lower())]),
}
NS3_KIND = {"FifoQueueDisc": "pfifo", "CoDelQueueDisc": "codel", "FqCoDelQueueDisc": "fq_codel",
            "PieQueueDisc": "pie", "FqPieQueueDisc": "fq_pie", "RedQueueDisc": "red"}
SCHEMES = sorted(set(bottleneck.OURS) - bottleneck.QDISC_BACKEND) + sorted(NS3_QDISCS)


# The engine's default rate per cell (reproduce --engine ns3 without
# --rate), and what a simulated second costs at it: wall seconds of one
# core per simulated second on the machine PROBE_REF_S was taken on,
# measured per figure (MEASURED below; reproduce --list's estimate, scaled
# by the probe; a figure not measured takes the cell's worst). The cost
# grows with the packet rate and, far more, with loss episodes under
# large windows (ns-3's send buffer is a list walked per retransmission),
# so it is measured, not modelled.
DEFAULT_RATE_MBIT = {"wan": 1000.0, "dcn": 1000.0}
# Measured 2026-11-28/29 (2 cores, one simulation a core, MTU 9000): fig.
# 3.5 over its quick mode's 60-s runs (the start-up's loss costs most:
# fig. 3.5 under AFCD cost 10.9 over its first 10 s, 3.0 over 60 s; fig.
# 3.7 under AFCD 8.6 over 5 s, 3.2 over 60 s); chapter 4 over its quick
# mode's 30-s runs at fdb6da5, the most any scheme took (figs. 4.6-4.8
# carry 1,235 short flows a second; ns-3's endpoint list is most of it);
# figs. 3.3 and 3.6-3.9 over their quick mode's 60-s runs at 13d9dab, the
# most any scheme took (drop-tail's 3.3 and 3.6: its loss episodes under
# SACK). Each group is given here on PROBE_REF_S's machine of 2026-12-06:
# its values on the day times a quick-mode run of the group repeated
# there, taken over the same run on the day: fig. 3.5 under pfifo, 12.2 s
# against 33.0 (x 0.370; the same simulation); fig. 4.5 under pfifo, 20.2
# against 72.0 (x 0.281; the same simulation); fig. 3.7 under pfifo, 89.2
# against 192.4 (x 0.464; afcd-sim has changed since 13d9dab, so about).
# The two same-simulation ratios differ by 1.3x: how much faster a
# machine is depends on the workload. docs/NS3.md
_DAY = {"3.5": 0.370, "ch4": 0.281, "ch3": 0.464}
MEASURED = {(f, s, 1000.0): round(c * _DAY["3.5"], 3)
            for (f, s), c in ((("3.5", "afcd"), 3.0), (("3.5", "fq_codel"), 1.5),
                              (("3.5", "pfifo"), 0.55), (("3.5", "kcodel"), 0.48),
                              (("3.5", "red"), 0.54), (("3.5", "afd"), 1.44),
                              (("3.5", "afcd-paper"), 1.03))}
# a figure measured as a whole: the most any scheme took, for every scheme
MEASURED.update({(f, s, 1000.0): round(c * _DAY[g], 3)
                 for g, f, c in (("ch3", "3.3", 6.6), ("ch3", "3.6", 7.6), ("ch3", "3.7", 3.6),
                                 ("ch3", "3.8", 3.1), ("ch3", "3.9", 3.4), ("ch4", "4.3", 2.2),
                                 ("ch4", "4.5", 2.4), ("ch4", "4.6", 8.4), ("ch4", "4.7", 12.0),
                                 ("ch4", "4.8", 10.6))
                 for s in SCHEMES})


# The default mode's own cost, where it has run: wall seconds of one core
# per simulated second (a run's wall_s over its sim_s), each scheme's mean
# over its repeats, read by measured_default() from the runs committed in
# DEFAULT_RUNS (reproduce --engine ns3 --mode default, two at a time on 2
# cores; its context.json gives each figure's rate and the day its batch
# ran). Two kinds of run there do not measure PROBE_REF_S's machine, and
# are given as data:
# - DEFAULT_DAY: days whose runs were taken on another machine, and the
#   factor to PROBE_REF_S's (2026-12-02: x 0.378, 4.3-b1's AFCD run that
#   day against 4.3-b2's on PROBE_REF_S's machine, the same simulation:
#   AFCD's queue reaches neither buffer).
# - DEFAULT_DISTURBED: runs that shared the cores with a VM (fig. 4.7's
#   first four: 6.1-10.9 s a simulated second against 3.2-4.1 for the
#   others). A scheme left without runs takes the figure's dearest.
# Figs. 3.3, 3.5 and 3.8 shared the cores with lighter work (3.3 with
# CI) and are kept: high. A remedy with runs of its own is costed by
# them, one without by the figure it remedies; a figure with none falls
# back to MEASURED. docs/NS3.md
DEFAULT_RUNS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "docs", "reproduction", "ns3", "default")
DEFAULT_DAY = {"2026-12-02": 0.378}
DEFAULT_DISTURBED = {"4.7": ("pfifo-r1", "pfifo-r2", "pfifo-r3", "red-r1")}
_RUN_FILE = re.compile(r"fig(?P<fig>[0-9.]+(?:-b[0-9]+)?)-(?P<scheme>.+)-r(?P<rep>[0-9]+)"
                       r"\.json\.gz$")


def measured_default(runs=None):
    """{(figure, scheme, rate Mbit/s): wall s per simulated s} from the
    default mode's runs under runs (DEFAULT_RUNS), each a mean rounded to
    0.01, with DEFAULT_DAY's factors and without DEFAULT_DISTURBED's runs;
    {} when the directory or its context.json is absent (an installed
    package). Reads each run's first 4 KB only (sim_s and wall_s lead its
    JSON): tens of ms a call, once a process. Raises ValueError on a run
    without them or a figure no batch of context.json ran."""
    runs = runs or DEFAULT_RUNS
    if runs in _MEASURED_DEFAULT:
        return _MEASURED_DEFAULT[runs]
    try:
        with open(os.path.join(runs, "context.json")) as f:
            ctx = json.load(f)
    except FileNotFoundError:
        return {}
    day = {fig: b["started"].split()[0] for b in ctx["batches"] for fig in b["figures"].split(",")}
    per = {}
    for d in sorted(os.listdir(runs)):
        for name in sorted(os.listdir(os.path.join(runs, d))) if d.startswith("fig") else ():
            m = _RUN_FILE.match(name)
            if not m:
                continue
            fig, scheme = m["fig"], m["scheme"]
            with gzip.open(os.path.join(runs, d, name), "rt") as f:
                head = f.read(4096)
            v = [re.search(r'"%s": ([0-9.]+)' % k, head) for k in ("sim_s", "wall_s")]
            if not all(v) or fig not in day:
                raise ValueError("%s: no sim_s or wall_s in its first 4 KB, or no batch ran it"
                                 % name)
            rate = float(ctx["rate%s" % fig[0]])
            c = per.setdefault((fig, scheme, rate), [])
            if "%s-r%s" % (scheme, m["rep"]) not in DEFAULT_DISTURBED.get(fig, ()):
                c.append(float(v[1][1]) / float(v[0][1]) * DEFAULT_DAY.get(day[fig], 1.0))
    out = {k: round(sum(c) / len(c), 2) for k, c in per.items() if c}
    for fig, scheme, rate in [k for k, c in per.items() if not c]:   # the figure's dearest
        out[(fig, scheme, rate)] = max(c for (f, _, r), c in out.items() if f == fig and r == rate)
    _MEASURED_DEFAULT[runs] = out
    return out


_MEASURED_DEFAULT = {}


# The machine's speed, for reproduce --list: a fixed run (PROBE: fig. 4.5's
# tree under AFCD at 1 Gb/s, 3 s simulated, seed 1) timed on the machine
# at hand against PROBE_REF_S, afcd-sim's seconds for it on the machine
# MEASURED is given for (2026-12-06, 2c7f2b7: 2.31-2.50 s in four runs,
# the machine quiet; their mean). Machines of this kind differ 2.7x.
PROBE = ("4.5", "afcd", 1000.0, 3.0)
PROBE_REF_S = 2.41


def probe_s():
    """afcd-sim's wall seconds for PROBE on this machine, or None when
    the engine cannot run here (available()) or the run fails."""
    if available():
        return None
    from . import figures
    fig, scheme, rate, dur = PROBE
    f = figures.BY_ID[fig]
    try:
        r = run("probe", scheme, rate, f.rtt_ms(rate), dur, 1.0, f.workload(rate, "quick"),
                buffer_bdp=f.buffer_bdp, target_ms=f.target_ms(rate),
                interval_ms=f.interval_ms(rate))
    except (RuntimeError, OSError, ValueError):
        return None
    return r.get("sim_wall_s")


def speed_factor(probe):
    """How much longer a simulation takes here than on MEASURED's machine:
    probe (probe_s()) over PROBE_REF_S; 1.0 without a probe."""
    return probe / PROBE_REF_S if probe else 1.0


def wall_per_sim_s(fig, scheme, rate, mtu=MTU_TEXT, mode="quick"):
    """The measured cost of a simulated second of fig under scheme at
    rate with mtu-byte frames in mode (measured_default()'s where the
    default mode has run fig or the figure it remedies, else MEASURED's;
    the nearest measured rate, scaled by the packet rate's ratio: the
    rates' and the frames' against the measured 9014 bytes); a remedy not
    measured itself costs what the figure it remedies does. The frames'
    ratio bounds it from above: with 1514-byte frames figs. 4.5-4.6 at 8
    Mbit/s cost 3x what 9014-byte ones did, not 6x (2026-12-02)."""
    from . import figures
    cell = figures.BY_ID[fig].cell
    table = measured_default() if mode == "default" and measured_in_default(fig) else MEASURED
    if not any(f == fig for f, _, _ in table) and figures.BY_ID[fig].remedy_of:
        fig = figures.BY_ID[fig].remedy_of
    near = [(abs(r - rate), -c, r) for (f, sc, r), c in table.items()
            if f == fig and sc == scheme]
    if not near:   # the worst of the cell's measured figures at the nearest rate
        near = [(abs(r - rate), -c, r) for (f, sc, r), c in table.items()
                if figures.BY_ID[f].cell == cell]
    frames = float(MTU_TEXT) / mtu
    if not near:
        return 10.0 * rate / 1000.0 * frames
    _, c, r = min(near)
    return -c * rate / r * frames


def measured_in_default(fig):
    """True when the default mode's runs (measured_default()) hold fig or
    the figure it remedies."""
    from . import figures
    own = {f for f, _, _ in measured_default()}
    return fig in own or figures.BY_ID[fig].remedy_of in own


def available():
    """Why this engine cannot run here ("" when it can)."""
    if not os.path.exists(SIM):
        return "no %s (make sim; tools/deps.sh --ns3 installs ns-3 %s)" % (SIM, NS3_VERSION)
    if os.geteuid() != 0:
        return "needs root (the datapath's BPF programs)"
    return ""


def start_jitter_s(seed, rtt_ms):
    """How far, at most, a figure run's flows start after their schedule,
    seconds: 0 for seed 1 (the registry's schedule exactly, the quick
    mode's one run), one base RTT for seed 2 and later. ns-3 is
    deterministic: a queue disc with no random element (pfifo, CoDel,
    FqCoDel) under the same schedule gives the same run for every seed,
    and the repeats of a figure would show no spread that the VM's
    (processes started a scheduler's whim apart) or a testbed's show."""
    return 0.0 if seed <= 1 else rtt_ms / 1e3


def spec_text(scheme, rate_mbit, rtt_ms, duration_s, warmup_s, flows, short, wl, buffer_bdp,
              target_ms, interval_ms, ecn, seed, tcp_series, mtu=MTU_TEXT, sack=SACK,
              jitter_s=0.0):
    """The run's description for afcd-sim (its stdin); mtu: the largest
    Ethernet frame, bytes; jitter_s > 0: each long flow (each stream of a
    group) starts U[0, jitter_s) seconds after its schedule, drawn from
    random.Random(seed)."""
    cc = bottleneck.SENDER_CC.get(scheme)
    b = bottleneck.Bottleneck(None, None, scheme, rate_mbit, rtt_ms, buffer_bdp=buffer_bdp,
                              target_ms=target_ms, interval_ms=interval_ms, ecn=ecn,
                              n_flows=len(flows), update_period_ms=None, mtu=mtu)
    senders = max([f.sender for f in flows] + ([short.sender] if short else [])) + 1
    rto = scenario._at(wl.rto_min_ms, rate_mbit) if wl else None
    lines = ["seed %d" % seed, "topology %s" % (wl.kind if wl else "dumbbell"),
             "senders %d" % senders, "rate_mbit %g" % rate_mbit, "rtt_ms %g" % rtt_ms,
             "duration_s %g" % duration_s, "warmup_s %g" % warmup_s,
             "access_mbit %g" % (rate_mbit if wl and wl.access_rate else 0),
             "rto_min_ms %g" % (rto or 200), "ecn %d" % (1 if ecn or cc == "dctcp" else 0),
             "tcp_series %d" % (1 if tcp_series else 0), "mtu %d" % (mtu - ETH_HLEN),
             "sack %d" % (1 if sack else 0)]
    if scheme in bottleneck.OURS:
        p = b.loader_params()
        lines.append("bottleneck bpf")
        lines += ["param %s %s" % (p[i], p[i + 1]) for i in range(0, len(p), 2)]
    elif scheme in NS3_QDISCS:
        tid, attrs = NS3_QDISCS[scheme]
        lines.append("bottleneck ns3 %s" % tid)
        lines += ["attr %s %s" % kv for kv in attrs(b)]
    else:
        raise ValueError("scheme %s has no ns-3 counterpart (ns-3 runs: %s)" %
                         (scheme, ", ".join(SCHEMES)))
    rng = random.Random(seed)
    for f in flows:
        for i in range(f.streams if f.proto == "tcp" else 1):
            name = f.name if f.streams <= 1 else "%s.%d" % (f.name, i)
            # a group's streams start as iperf3 -P starts them in the VM:
            # one connection after the other, a handshake (one base RTT) apart
            lines.append("flow %s %s %d %s %s %g %g" % (
                name, f.name, f.sender, cc or f.cc if f.proto == "tcp" else "-", f.proto,
                f.rate_mbit or 0, f.start_s + i * rtt_ms / 1e3 +
                (rng.uniform(0.0, jitter_s) if jitter_s > 0 else 0.0)))
    # the VM's schedule (its seed, not the run's: one schedule for both engines)
    for t, size, d in shortflows.arrivals(short.rate_per_s, short.alpha, short.scale_bytes,
                                          short.max_bytes, duration_s, short.seed,
                                          short.dirs) if short else []:
        lines.append("short %.6f %d %s %d" % (t, max(size, 1), d, short.sender))
    return "\n".join(lines) + "\n"


def run(name, scheme, rate_mbit, rtt_ms, duration_s, warmup_s, wl, buffer_bdp=1.0,
        target_ms=5.0, interval_ms=100.0, ecn=False, seed=1, out_dir=None, repeat=None,
        tag=None, tcp_series=True, mtu=MTU_TEXT):
    """One run in ns-3; its result (the VM runner's shape) written to
    out_dir as TAG-rK.json like scenario.run()'s, and returned."""
    flows = scenario._flows(wl.flows, rate_mbit)
    short = scenario._at(wl.short, rate_mbit)
    jitter = start_jitter_s(seed, rtt_ms)
    text = spec_text(scheme, rate_mbit, rtt_ms, duration_s, warmup_s, flows, short, wl,
                     buffer_bdp, target_ms, interval_ms, ecn, seed, tcp_series, mtu,
                     jitter_s=jitter)
    t0 = time.time()
    p = subprocess.run([SIM], input=text, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError("afcd-sim failed (%d): %s" % (p.returncode, p.stderr.strip()[-500:]))
    res = json.loads(p.stdout)
    res.update({"scenario": name, "description": wl.description, "scheme": scheme,
                "label": bottleneck.LABELS[scheme], "topology": wl.kind,
                "rate_mbit": rate_mbit, "rtt_ms": rtt_ms, "duration_s": duration_s,
                "warmup_s": warmup_s, "buffer_bdp": buffer_bdp, "target_ms": target_ms,
                "interval_ms": interval_ms, "ecn": ecn, "kernel": "ns-3 %s" % NS3_VERSION,
                "date": time.strftime("%Y-%m-%d %H:%M"), "code": scenario.code_version(),
                "abi": abi.ABI, "short_spec": short.spec() if short else None,
                "rto_min_ms": scenario._at(wl.rto_min_ms, rate_mbit),
                "access_rate": wl.access_rate, "repeat": repeat, "valid": True, "mtu": mtu,
                "start_jitter_s": jitter,
                "invalid_reasons": [], "wall_s": round(time.time() - t0, 1),
                "sim_wall_s": res.get("wall_s"),
                "short": scenario.fct_summary(
                    {"flows": res["short_flows"], "duration_s": duration_s, "skipped": 0}
                    if res.get("short_flows") else None, warmup_s)})
    a, b = warmup_s, duration_s
    gp = [scenario.goodput_mbps(f, max(a, f["start_s"] + 1.0), b) for f in res["flows"]]
    for f, g in zip(res["flows"], gp):
        f["goodput_mbps"] = g
    res["jain"] = jain(gp) if gp else None
    # the kernel's names for ns-3's queue discs, as the VM's runs record
    # them (the judge's baseline checks read them)
    for q in res.get("qdisc_stats") or []:
        q["ns3_kind"], q["kind"] = q["kind"], NS3_KIND.get(q["kind"], q["kind"])
    res["utilization"] = scenario.utilization(res["flows"], a, b, rate_mbit)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        base = tag or "%s-%s" % (name, scheme)
        path = os.path.join(out_dir, "%s%s.json" % (base, "-r%d" % repeat if repeat else ""))
        with open(path, "w") as fh:
            json.dump(res, fh)
    return res
