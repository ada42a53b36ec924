# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenarios (the seeds' experiments) and their metrics.

A run = topology + bottleneck scheme + workload for a bounded time; its
result is one JSON document: per-flow goodput and series, Jain's fairness
index over the long-lived flows, link utilization, queueing-delay
percentiles (ping RTT minus the base RTT), and the drop/mark counters of
the program (afcd stats -j) and of the qdiscs (tc -s -j qdisc).
"""
import json
import os
import threading
import time

from . import bottleneck, validity, workload
from . import topo as topo_mod
from .workload import Flow


def _flows(spec, rate_mbit):
    return [Flow(**f) if isinstance(f, dict) else f for f in spec(rate_mbit)]


def _udp_vs_cubic(k, n=1):
    """1 CUBIC flow against n UDP flows at k x the bottleneck each."""
    return lambda r: [Flow("cubic", 0, cc="cubic")] + [
        Flow("udp" if n == 1 else "udp%d" % i, 1, proto="udp", rate_mbit=k * r)
        for i in range(n)]


LARGE_BDP = {"duration_s": 30.0, "warmup_s": 8.0}

# name -> (topology kind, description, flows(rate_mbit), defaults). The
# defaults (rtt_ms, duration_s, warmup_s) apply unless given on the
# command line: CUBIC's unfairness to Reno needs a large BDP (base RTT
# >= 60 ms at 100 Mbit/s), and takes longer to show.
SCENARIOS = {
    "cubic-reno": ("dumbbell", "1 CUBIC + 1 Reno flow (dissertation 3.4.1)",
                   lambda r: [Flow("cubic", 0, cc="cubic"), Flow("reno", 1, cc="reno")], {}),
    "cubic-reno-60": ("dumbbell", "1 CUBIC + 1 Reno flow, 60 ms base RTT (3.4.1, large BDP)",
                      lambda r: [Flow("cubic", 0, cc="cubic"), Flow("reno", 1, cc="reno")],
                      dict(LARGE_BDP, rtt_ms=60.0)),
    "cubic-reno-120": ("dumbbell", "1 CUBIC + 1 Reno flow, 120 ms base RTT (3.4.1, large BDP)",
                       lambda r: [Flow("cubic", 0, cc="cubic"), Flow("reno", 1, cc="reno")],
                       dict(LARGE_BDP, rtt_ms=120.0)),
    "cubic-udp1": ("dumbbell", "1 CUBIC flow + 1 UDP flow at 1.0x the bottleneck (3.4.2)",
                   _udp_vs_cubic(1.0), {}),
    "cubic-udp": ("dumbbell", "1 CUBIC flow + 1 UDP flow at 1.5x the bottleneck (3.4.2)",
                  _udp_vs_cubic(1.5), {}),
    "cubic-udp3": ("dumbbell", "1 CUBIC flow + 1 UDP flow at 3x the bottleneck",
                   _udp_vs_cubic(3.0), {}),
    "cubic-4udp": ("dumbbell", "1 CUBIC flow + 4 UDP flows at 0.5x the bottleneck each",
                   _udp_vs_cubic(0.5, 4), {}),
    "mix9": ("dumbbell", "3 CUBIC + 3 Reno + 3 BBR flows from 3 senders",
             lambda r: [Flow("%s%d" % (cc, k), s, cc=cc) for s, cc in
                        enumerate(["cubic", "reno", "bbr"]) for k in range(3)], {}),
    "cubic-hstcp-reno": ("dumbbell", "CUBIC, HighSpeed TCP and Reno (3.4.3)",
                         lambda r: [Flow("cubic", 0, cc="cubic"),
                                    Flow("hstcp", 1, cc="highspeed"),
                                    Flow("reno", 2, cc="reno")], {}),
    "many": ("dumbbell", "4 CUBIC + 4 HighSpeed + 4 Reno flows from 3 senders (3.4.4)",
             lambda r: [Flow("%s%d" % (cc, k), s, cc=cc) for s, cc in
                        enumerate(["cubic", "highspeed", "reno"]) for k in range(4)], {}),
    "outcast": ("yshape", "6 flows from s1 and 1 flow from s2 into one port (4.5.2)",
                lambda r: [Flow("s1-%d" % k, 0, cc="cubic") for k in range(6)] +
                [Flow("s2-0", 1, cc="cubic")], {}),
    "tree": ("tree", "9 senders, one CUBIC flow each, into one receiver (4.5.3)",
             lambda r: [Flow("s%d" % (k + 1), k, cc="cubic") for k in range(9)], {}),
    "staggered": ("dumbbell", "3 CUBIC flows starting 4 s apart (4.5.3 (4))",
                  lambda r: [Flow("f%d" % k, k, cc="cubic", start_s=4.0 * k) for k in range(3)],
                  {}),
}


def defaults(name):
    """The scenario's own rtt_ms / duration_s / warmup_s, if any."""
    return SCENARIOS[name][3]


def jain(xs):
    xs = [x for x in xs if x is not None]
    if not xs or sum(x * x for x in xs) == 0:
        return None
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def percentile(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    k = (len(xs) - 1) * p / 100.0
    f = int(k)
    c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f)


def goodput_mbps(flow, t_from, t_to):
    """Mean received rate over [t_from, t_to] from the server's intervals."""
    num = den = 0.0
    for a, b, bps in flow["series"]:
        lo, hi = max(a, t_from), min(b, t_to)
        if hi > lo:
            num += bps * (hi - lo)
            den += hi - lo
    return num / den / 1e6 if den else 0.0


def summarize(raw, rate_mbit, duration_s, warmup_s):
    flows = []
    for f in raw["flows"]:
        start = max(warmup_s, f["start_s"] + 1.0)
        flows.append(dict(f, goodput_mbps=goodput_mbps(f, start, duration_s)))
    # every flow here is long-lived (bulk for the whole run, or from its start)
    long_lived = [f["goodput_mbps"] for f in flows]
    rtts = raw["ping_rtt_ms"]
    base = min((r for _, r in rtts), default=None)
    qd = [r - base for t, r in rtts if t >= warmup_s] if base is not None else []
    total = sum(f["goodput_mbps"] for f in flows)
    return {
        "flows": flows,
        "jain": jain(long_lived),
        "utilization": total / rate_mbit if rate_mbit else None,
        "goodput_total_mbps": total,
        "base_rtt_ms": base,
        "ping_samples": len(rtts),
        "queue_delay_ms": {"p50": percentile(qd, 50), "p95": percentile(qd, 95),
                           "p99": percentile(qd, 99), "max": max(qd) if qd else None},
        "queue_delay_samples_ms": qd,
    }


def run(name, scheme, rate_mbit=100.0, rtt_ms=20.0, duration_s=15.0, warmup_s=3.0,
        buffer_bdp=1.0, target_ms=5.0, interval_ms=100.0, ecn=False, out_dir=None, log=print,
        repeat=None):
    """One run; its result JSON goes to out_dir as SCENARIO-SCHEME.json (or
    SCENARIO-SCHEME-rK.json for repeat K)."""
    kind, desc, spec, _ = SCENARIOS[name]
    flows = _flows(spec, rate_mbit)
    t_start = time.time()
    with topo_mod.Topology(kind, senders=max(f.sender for f in flows) + 1,
                           rtt_ms=rtt_ms) as t:
        need = {f.cc for f in flows if f.proto == "tcp"}
        have = set(workload.available_cc(t.senders[0]))
        missing = sorted(need - have)
        if missing:
            raise RuntimeError("congestion control %s not available on this kernel (have %s)"
                               % (", ".join(missing), " ".join(sorted(have))))
        loader_log = os.path.join(out_dir, "%s-%s.loader.log" % (name, scheme)) if out_dir \
            else None
        b = bottleneck.Bottleneck(t.router, topo_mod.BOTTLENECK_DEV, scheme, rate_mbit, rtt_ms,
                                  buffer_bdp=buffer_bdp, target_ms=target_ms,
                                  interval_ms=interval_ms, ecn=ecn, log=loader_log)
        b.install()
        series, stop = [], threading.Event()

        def sample():  # the program's estimates over time (ours only)
            t0 = time.time()
            while not stop.wait(0.5):
                st = b.afcd_stats(flows=False)
                if st:
                    e, q = st["estimates"], st["queue"]
                    series.append({"t": round(time.time() - t0, 2), "m_fair": e["m_fair"],
                                   "waterline": e.get("waterline"), "n": e["n_flows"],
                                   "n_long": e.get("n_long"), "ctrl": e["ctrl_milli"] / 1000,
                                   "arrival_mbps": e.get("arrival_bps", 0) / 1e6,
                                   "global_target_ms": e["global_target_ns"] / 1e6,
                                   "delay_ms": q["delay_now_ns"] / 1e6,
                                   "aqm_drop": q["aqm_drop"],
                                   "police_drop": q.get("police_drop"),
                                   "fair_rate_mbps": e.get("fair_rate_bps", 0) / 1e6,
                                   "drain": e.get("drain_milli", 1000) / 1e3,
                                   "overlimit_drop": q["overlimit_drop"]})
        th = threading.Thread(target=sample, daemon=True)
        if scheme in bottleneck.OURS:
            th.start()
        meter = validity.Meter(b.loader.pid if b.loader is not None else None).start()
        try:
            raw = workload.run(t, flows, duration_s)
            measured = meter.stop()
            stop.set()
            afcd_stats = b.afcd_stats()
            qdisc = b.qdisc_stats()
        finally:
            stop.set()
            b.remove()
    res = {"scenario": name, "description": desc, "scheme": scheme,
           "label": bottleneck.LABELS[scheme], "topology": kind, "rate_mbit": rate_mbit,
           "rtt_ms": rtt_ms, "duration_s": duration_s, "warmup_s": warmup_s,
           "buffer_bdp": buffer_bdp, "target_ms": target_ms, "interval_ms": interval_ms,
           "ecn": ecn, "kernel": os.uname().release, "date": time.strftime("%Y-%m-%d %H:%M"),
           "wall_s": None}
    res.update(summarize(raw, rate_mbit, duration_s, warmup_s))
    res["afcd_stats"] = afcd_stats
    res["afcd_series"] = series
    res["qdisc_stats"] = qdisc
    res.update(measured)
    res["overlimit_share_after_warmup"] = _overlimit_share(series, warmup_s)
    res["valid"], res["invalid_reasons"] = validity.judge(res)
    res["repeat"] = repeat
    res["wall_s"] = round(time.time() - t_start, 1)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "%s-%s%s.json" % (
                name, scheme, "" if repeat is None else "-r%d" % repeat)), "w") as fh:
            json.dump(res, fh, indent=1)
    return res


def _overlimit_share(series, warmup_s):
    """Horizon drops as a share of all drops after the warm-up (ours only;
    None without drops): the fairness module should keep the queue off the
    horizon, where drops hit every flow alike."""
    after = [s for s in series if s["t"] >= warmup_s]
    if len(after) < 2:
        return None
    ovl = after[-1]["overlimit_drop"] - after[0]["overlimit_drop"]
    aqm = after[-1]["aqm_drop"] - after[0]["aqm_drop"]
    return ovl / (ovl + aqm) if ovl + aqm else None


def one_line(res):
    fl = "  ".join("%s %.1f" % (f["name"], f["goodput_mbps"]) for f in res["flows"])
    q = res["queue_delay_ms"]
    cpu = res.get("cpu", {})
    line = ("%-10s %-9s | %s Mbit/s | Jain %.3f util %.0f%% | qdelay p50 %.1f p99 %.1f ms"
            " | guest %.0f%% busy" %
            (res["scenario"], res["label"], fl, res["jain"] or 0,
             100 * (res["utilization"] or 0), q["p50"] or 0, q["p99"] or 0,
             100 * (cpu.get("guest_busy") or 0)))
    if cpu.get("loader_busy") is not None:
        line += ", loader %.1f%%" % (100 * cpu["loader_busy"])
    if not res.get("valid", True):
        line += " | INVALID: " + "; ".join(res["invalid_reasons"])
    return line
