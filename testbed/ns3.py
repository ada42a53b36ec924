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
import json
import os
import random
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
# per simulated second, each scheme's mean over its 3 repeats (120-s runs
# in chapter 3, 60-s in chapter 4, two at a time on 2 cores), from the
# runs in docs/reproduction/ns3/default on PROBE_REF_S's machine
# (2026-12-06; figs. 4.7 and 4.8 on 2026-12-07). Fig. 4.3's AQMs are its
# 2-BDP remedy's runs (the same simulations); fig. 4.5 ran on
# 2026-12-02's machine, its values there x 0.378 (4.3-b1's AFCD run that
# day against 4.3-b2's, the same simulation). MEASURED charges a
# figure's every scheme its dearest: fig. 3.6 cost 0.34 of its estimate
# (drop-tail's 3.5 s a simulated second in 60-s runs; the others took
# 1.0-1.2, drop-tail 2.3 over 120 s), fig. 4.6 1.32 (its short flows'
# sockets accumulate over the longer runs). Figs. 3.3, 3.5 and 3.8
# shared the cores with other work (3.3 with CI): high. Fig. 4.7's first
# four runs (pfifo's three, RED's first) shared them with a VM and took
# 6.1-10.9 s a simulated second, against 3.2-4.1 for the others: RED is
# its last two, pfifo the dearest scheme's (CoDel's). Fig. 3.9 also runs
# drop-tail through the datapath (droptail). A figure not here falls
# back to MEASURED. docs/NS3.md
_DEFAULT_ORDER = ("pfifo", "red", "kcodel", "afd", "afcd-paper", "afcd", "fall", "fq_codel",
                  "fall-paper", "dctcp")
MEASURED_DEFAULT = {(f, s, 1000.0): c for f, row in (
    ("3.3", (3.20, 2.13, 1.01, 1.10, 1.23, 1.30, 1.64, 1.16)),
    ("3.5", (0.14, 0.13, 0.13, 0.52, 0.57, 1.75, 1.95, 0.46)),
    ("3.6", (2.26, 1.15, 0.99, 0.98, 1.00, 1.02, 1.17, 1.05)),
    ("3.7", (1.06, 0.84, 0.85, 1.21, 1.00, 0.98, 1.00, 0.93)),
    ("3.8", (1.95, 1.74, 1.26, 0.94, 2.04, 2.07, 2.01, 1.87)),
    ("3.9", (1.63, 0.94, 0.93, 1.17, 1.30, 1.19, 1.05, 1.03)),
    ("4.3", (0.53, 0.64, 0.43, None, 0.47, 0.48, 0.51, 0.46, 0.48, 0.47)),
    ("4.5", (0.53, 0.54, 0.53, None, 0.59, 0.60, 0.64, 0.54, 0.59, 0.57)),
    ("4.6", (3.18, 3.22, 3.07, None, 3.21, 3.04, 2.94, 2.77, 3.20, 3.34)),
    ("4.7", (3.88, 3.78, 3.88, None, 3.39, 3.62, 3.25, 3.47, 3.30, 3.69)),
    ("4.8", (3.02, 2.94, 3.27, None, 3.42, 3.50, 3.70, 3.95, 3.57, 2.97)))
    for s, c in zip(_DEFAULT_ORDER, row) if c is not None}
MEASURED_DEFAULT[("3.9", "droptail", 1000.0)] = 1.22


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
    rate with mtu-byte frames in mode (MEASURED_DEFAULT's where the
    default mode has run fig, else MEASURED's; the nearest measured rate,
    scaled by the packet rate's ratio: the rates' and the frames' against
    the measured 9014 bytes); a remedy not measured itself costs what the
    figure it remedies does. The frames' ratio bounds it from above: with
    1514-byte frames figs. 4.5-4.6 at 8 Mbit/s cost 3x what 9014-byte ones
    did, not 6x (2026-12-02)."""
    from . import figures
    cell = figures.BY_ID[fig].cell
    if not any(f == fig for f, _, _ in MEASURED) and figures.BY_ID[fig].remedy_of:
        fig = figures.BY_ID[fig].remedy_of
    table = MEASURED_DEFAULT if mode == "default" and measured_in_default(fig) else MEASURED
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
    """True when MEASURED_DEFAULT holds the default mode's own runs of fig
    (a remedy: of the figure it remedies)."""
    from . import figures
    fig = figures.BY_ID[fig].remedy_of or fig
    return any(f == fig for f, _, _ in MEASURED_DEFAULT)


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
