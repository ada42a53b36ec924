# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenarios (the seeds' experiments) and their metrics.

A run = topology + bottleneck scheme + workload for a bounded time; its
result is one JSON document: per-flow goodput and series, Jain's fairness
index over the long-lived flows, link utilization, queueing-delay
percentiles (ping RTT minus the base RTT), and the drop/mark counters of
the program (afcd stats -j) and of the qdiscs (tc -s -j qdisc).
"""
import functools
import json
import os
import subprocess
import threading
import time

from . import abi, bottleneck, qsample, validity, workload
from .stats import jain, percentile
from . import topo as topo_mod
from .workload import Flow
from .netns import ROOT


def _flows(spec, rate_mbit):
    return [Flow(**f) if isinstance(f, dict) else f for f in spec(rate_mbit)]


ESTIMATE_PERIOD_S = 1.0    # the program's estimates sampled this often (afcd stats)


def _at(v, rate_mbit):
    """A workload setting: a value, or a function of the rate."""
    return v(rate_mbit) if callable(v) else v


class Workload:
    """What a run sends: a topology kind, the long flows (a function of the
    rate returning Flows), short flows (a function of the rate returning a
    workload.ShortFlows, or None), the senders' host settings (rto_min_ms,
    sysctls, access_rate: shape the access links at the bottleneck's rate)
    and defaults for rtt_ms / duration_s / warmup_s. The named SCENARIOS
    are Workloads; the figures of testbed.figures build their own."""

    def __init__(self, name, kind, description, flows, defaults=None, short=None,
                 rto_min_ms=None, sysctls=(), access_rate=False):
        self.name, self.kind, self.description = name, kind, description
        self.flows, self.defaults, self.short = flows, dict(defaults or {}), short
        self.rto_min_ms, self.sysctls, self.access_rate = rto_min_ms, list(sysctls), access_rate


def _udp_vs_cubic(k, n=1):
    """1 CUBIC flow against n UDP flows at k x the bottleneck each."""
    return lambda r: [Flow("cubic", 0, cc="cubic")] + [
        Flow("udp" if n == 1 else "udp%d" % i, 1, proto="udp", rate_mbit=k * r)
        for i in range(n)]


def _cubics_vs_udp(m, k):
    """m CUBIC flows (cubic0, cubic1, ..) against one UDP flow at k x the
    bottleneck."""
    return lambda r: [Flow("cubic%d" % j, 0, cc="cubic") for j in range(m)] + [
        Flow("udp", 1, proto="udp", rate_mbit=k * r)]


LARGE_BDP = {"duration_s": 30.0, "warmup_s": 8.0}

# name -> (topology kind, description, flows(rate_mbit), defaults). The
# defaults (rtt_ms, duration_s, warmup_s; ecn: the scheme marks and the
# senders ask for ECN) apply unless given on the command line: CUBIC's unfairness to Reno needs a large BDP (base RTT
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
    "crowd-udp": ("dumbbell", "10 CUBIC flows (one iperf3 client, -P 10) + 1 UDP flow at "
                  "1.5x the bottleneck: a flood among many small windows",
                  lambda r: [Flow("cubic", 0, cc="cubic", streams=10),
                             Flow("udp", 1, proto="udp", rate_mbit=1.5 * r)], {}),
    "udp-alone": ("dumbbell", "1 UDP flow at 1.5x the bottleneck, alone: the rate a "
                  "scheme delivers with nothing to share, the control of the UDP workloads",
                  lambda r: [Flow("udp", 0, proto="udp", rate_mbit=1.5 * r)], {}),
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
    "ecn-cubic-udp": ("dumbbell", "2 ECN-capable CUBIC flows + 1 UDP flow at 1.5x the "
                      "bottleneck, the scheme marking (ecn on)",
                      _cubics_vs_udp(2, 1.5), {"ecn": True}),
    "cubic2-udp": ("dumbbell", "2 CUBIC flows + 1 UDP flow at 1.5x the bottleneck: "
                   "ecn-cubic-udp without ECN, its control",
                   _cubics_vs_udp(2, 1.5), {}),
    "staggered": ("dumbbell", "3 CUBIC flows starting 4 s apart (4.5.3 (4))",
                  lambda r: [Flow("f%d" % k, k, cc="cubic", start_s=4.0 * k) for k in range(3)],
                  {}),
}


def workload_of(name):
    """The named scenario as a Workload."""
    kind, desc, spec, d = SCENARIOS[name]
    return Workload(name, kind, desc, spec, d)


def defaults(name):
    """The scenario's own rtt_ms / duration_s / warmup_s, if any."""
    return SCENARIOS[name][3]


def goodput_mbps(flow, t_from, t_to):
    """Mean received rate over the part of [t_from, t_to] that the
    server's intervals cover (the flow's own active time), Mbit/s."""
    num = den = 0.0
    for a, b, bps in flow["series"]:
        lo, hi = max(a, t_from), min(b, t_to)
        if hi > lo:
            num += bps * (hi - lo)
            den += hi - lo
    return num / den / 1e6 if den else 0.0


def delivered_mbit(flow, t_from, t_to):
    """What the server received within [t_from, t_to], from its intervals,
    Mbit. The link's utilization over a window is the flows' sum of this
    over the window's length: a sum of goodput_mbps() is not, when flows
    are active over different parts of it (fig. 4.8's late group)."""
    return sum(bps * max(0.0, min(b, t_to) - max(a, t_from))
               for a, b, bps in flow["series"]) / 1e6


def utilization(flows, t_from, t_to, rate_mbit):
    """The flows' delivered bits within [t_from, t_to] over what the link
    carries in it (0..1, above only by the iperf3 intervals' own jitter);
    None without a rate or a window."""
    if not rate_mbit or t_to <= t_from:
        return None
    return sum(delivered_mbit(f, t_from, t_to) for f in flows) / (rate_mbit * (t_to - t_from))


def _mean(xs):
    return sum(xs) / len(xs) if xs else None


def dist(xs):
    """mean, p50, p95, p99, max and count of a sample (None when empty)."""
    return {"mean": sum(xs) / len(xs) if xs else None, "p50": percentile(xs, 50),
            "p95": percentile(xs, 95), "p99": percentile(xs, 99),
            "max": max(xs) if xs else None, "n": len(xs)}


def fct_summary(short, warmup_s):
    """Short flows after the warm-up: completion times (all, and by size
    under 10 KB, 10-100 KB, above), completed and offered."""
    if not short:
        return None
    fl = [f for f in short["flows"] if f[0] >= warmup_s]
    done = [f for f in fl if f[3] is not None]
    out = {"offered": len(fl), "completed": len(done), "skipped": short.get("skipped", 0),
           "offered_mbps": sum(f[1] for f in fl) * 8 / 1e6 /
           max(short["duration_s"] - warmup_s, 1e-9),
           "fct_ms": dist([1e3 * f[3] for f in done])}
    for lo, hi, key in ((0, 10000, "fct_ms_small"), (10000, 100000, "fct_ms_medium"),
                        (100000, 1 << 62, "fct_ms_large")):
        out[key] = dist([1e3 * f[3] for f in done if lo <= f[1] < hi])
    return out


def summarize(raw, rate_mbit, duration_s, warmup_s, rtt_ms=None, backlog=None):
    flows = []
    for f in raw["flows"]:
        start = max(warmup_s, workload.flow_t0(f) + 1.0)
        flows.append(dict(f, goodput_mbps=goodput_mbps(f, start, duration_s)))
    # every flow here is long-lived (bulk for the whole run, or from its start)
    long_lived = [f["goodput_mbps"] for f in flows]
    rtts = raw["ping_rtt_ms"]
    base = min((r for _, r in rtts), default=None)
    qd = [r - base for t, r in rtts if t >= warmup_s] if base is not None else []
    util = utilization(flows, warmup_s, duration_s, rate_mbit)
    groups = {}
    for f in flows:
        g = groups.setdefault(f.get("group", f["name"]), {"cc": f["cc"], "flows": 0,
                                                           "goodput_mbps": 0.0})
        g["flows"] += 1
        g["goodput_mbps"] += f["goodput_mbps"]
    # the bottleneck's backlog as a waiting time (every scheme alike), and
    # what the TCP senders saw: mean srtt above the base RTT
    t0 = raw.get("t0", 0)
    bl = qsample.delays_ms(backlog or [], rate_mbit, t0 + warmup_s)
    srtt = [f["client"].get("srtt_ms_mean") for f in flows if f["proto"] == "tcp" and
            f.get("client") and f["client"].get("srtt_ms_mean")]
    out = {
        "flows": flows,
        "groups": groups,
        "jain": jain(long_lived),
        "utilization": util,
        "goodput_total_mbps": util * rate_mbit if util is not None else None,
        "base_rtt_ms": base,
        "ping_samples": len(rtts),
        "queue_delay_ms": {"p50": percentile(qd, 50), "p95": percentile(qd, 95),
                           "p99": percentile(qd, 99), "max": max(qd) if qd else None},
        "queue_delay_samples_ms": qd,
        "backlog_delay_ms": dist(bl),
        "backlog_bytes_mean": _mean([b for t, b, _ in backlog or [] if t >= t0 + warmup_s]),
        "backlog_samples": [(round(t - t0, 2), b) for t, b, _ in backlog or []],
        "srtt_delay_ms": (sum(srtt) / len(srtt) - rtt_ms) if srtt and rtt_ms is not None
        else None,
        "short": fct_summary(raw.get("short"), warmup_s),
        "short_flows": (raw.get("short") or {}).get("flows"),
    }
    return out


def bpf_cost(ns, progs=("afcd_egress",)):
    """The run time per packet of the scheme's programs since they were
    loaded, from the kernel's BPF statistics (kernel.bpf_stats_enabled,
    set by the caller): {run_time_ns, run_cnt, ns_per_pkt}, or None. progs:
    the programs' names, the first one run once per packet (the qdisc
    backend: its enqueue, then its dequeue, whose time is added)."""
    r = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True)
    try:
        shown = json.loads(r.stdout)
    except ValueError:
        return None
    t, cnt = 0, None
    for want in progs:
        # the kernel keeps 15 characters of a program's name
        found = [p for p in shown if p.get("name") and want.startswith(p["name"]) and
                 len(p["name"]) >= min(len(want), 15)]
        if not found:
            return None
        p = max(found, key=lambda x: x.get("run_cnt", 0))
        t += p.get("run_time_ns", 0)
        cnt = p.get("run_cnt", 0) if cnt is None else cnt
    return {"run_time_ns": t, "run_cnt": cnt, "ns_per_pkt": t / cnt if cnt else None}


def map_memory():
    """Bytes of kernel memory the pinned afcd maps hold (bpftool's
    bytes_memlock), or None."""
    r = subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True, text=True)
    try:
        return sum(m.get("bytes_memlock", 0) for m in json.loads(r.stdout)
                   if m.get("name", "").startswith("afcd_")) or None
    except ValueError:
        return None


@functools.lru_cache(maxsize=None)
def code_version():
    """The commit the testbed and the programs were built from, with
    "+dirty" when the work tree differs from it; None outside a git
    checkout. Recorded in every run, so that a result names its code; asked
    once a process (a `git status` of the tree over the VM's shared
    filesystem took seconds a run under TCG)."""
    def git(*a):
        r = subprocess.run(["git", "-C", ROOT] + list(a), capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else None
    head = git("rev-parse", "--short=12", "HEAD")
    if head is None:
        return None
    return head + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def _check_cc(sender, flows):
    """RuntimeError naming the congestion controls the TCP flows need that
    the sender's kernel does not have."""
    need = {f.cc for f in flows if f.proto == "tcp"}
    have = set(workload.available_cc(sender))
    missing = sorted(need - have)
    if missing:
        raise RuntimeError("congestion control %s not available on this kernel (have %s)"
                           % (", ".join(missing), " ".join(sorted(have))))


def _judge(res, series, t0, warmup_s, duration_s):
    """The program's series on the workload's clock (t0: as the flows'
    intervals and the ping: the sampler starts before the senders and
    stops after them) into res, with the share of horizon drops, the cost
    of fairness and the run's validity."""
    for s in series:
        s["t"] = round(s["t"] - t0, 2)
    res["afcd_series"] = series
    res["overlimit_share_after_warmup"] = _overlimit_share(series, warmup_s, duration_s)
    # the qdisc backend's hook is "qdisc", or "qdisc+tcx" with its marker
    qdisc_backend = ((res.get("afcd_stats") or {}).get("hook") or "").startswith("qdisc")
    res["cost_after_warmup"] = _cost_of_fairness(series, warmup_s, duration_s,
                                                 virtual=not qdisc_backend)
    res["valid"], res["invalid_reasons"] = validity.judge(res)


def _save(res, out_dir, base, repeat):
    """res as out_dir/BASE.json, or BASE-rK.json for repeat K."""
    with open(os.path.join(out_dir, "%s%s.json" % (
            base, "" if repeat is None else "-r%d" % repeat)), "w") as fh:
        json.dump(res, fh, indent=1)


def _estimate_sampler(b, series, stop):
    """A thread that appends the program's estimates to series every
    ESTIMATE_PERIOD_S until stop is set ("t" in time.time() seconds until
    the workload's t0 rebases it); not started."""
    def sample():  # the program's estimates over time (ours only; a process
        # each: under TCG every spawn costs tens of ms of CPU), "t" in
        # time.time() seconds until the workload's t0 rebases it
        while not stop.wait(ESTIMATE_PERIOD_S):
            st = b.afcd_stats(flows=False)
            if st:
                e, q = st["estimates"], st["queue"]
                # every counter under its key in `afcd stats -j` (the
                # lists of maps/afcd_maps.h), the estimates by name
                row = {k: q.get(k) for k in st.get("stats_keys", [])}
                row.update({"t": time.time(), "m_fair": e["m_fair"],
                            "waterline": e.get("waterline"), "n": e["n_flows"],
                            "n_long": e.get("n_long"), "ctrl": e["ctrl_milli"] / 1000,
                            "arrival_mbps": e.get("arrival_bps", 0) / 1e6,
                            "global_target_ms": e["global_target_ns"] / 1e6,
                            "delay_ms": q["delay_now_ns"] / 1e6,
                            "fair_rate_mbps": e.get("fair_rate_bps", 0) / 1e6,
                            "drain": e.get("drain_milli", 1000) / 1e3,
                            "crowd_gate_ms": e.get("crowd_gate_ns", 0) / 1e6})
                series.append(row)
    return threading.Thread(target=sample, daemon=True)


def _topology_args(wl, flows, short, rtt_ms, rate_mbit, ecn, cc):
    """The Topology arguments of a run of wl (the topology pool's key)."""
    return dict(kind=wl.kind, senders=max([f.sender for f in flows] +
                                          ([short.sender] if short else [])) + 1,
                rtt_ms=rtt_ms, rto_min_ms=_at(wl.rto_min_ms, rate_mbit),
                # a marking scheme's senders ask for ECN, and so do DCTCP's:
                # iperf3 sets TCP_CONGESTION after connect(), so its SYN asks
                # for ECN only with tcp_ecn=1; without it DCTCP falls back to
                # Reno (ss: dctcp:fallback_mode) and sends no ECT packet, and
                # the bottleneck marks none
                sysctls=tuple(wl.sysctls) + (("net.ipv4.tcp_ecn=1",)
                                             if ecn or cc == "dctcp" else ()),
                access_rate_mbit=rate_mbit if wl.access_rate else None)


def _measure(t, b, flows, duration_s, short):
    """The workload on topology t through the installed bottleneck b, with
    the program's estimates and the backlog sampled beside it; b removed
    afterwards. Returns (raw, measured, sampled): the workload's output,
    the validity meter's, and {series, backlog, afcd_stats, qdisc_stats,
    bpf_cost, map_memlock_bytes, backlog_sampler_error}."""
    scheme = b.scheme
    series, stop = [], threading.Event()
    th = _estimate_sampler(b, series, stop)
    if scheme in bottleneck.OURS:
        th.start()
    sampler = qsample.BacklogSampler(t.router, topo_mod.BOTTLENECK_DEV,
                                     duration_s=duration_s + 60).start()
    meter = validity.Meter(b.loader.pid if b.loader is not None else None).start()
    try:
        raw = workload.run(t, flows, duration_s, short=short)
        measured = meter.stop()
        backlog = sampler.stop()
        stop.set()
        sampled = {"series": series, "backlog": backlog, "afcd_stats": b.afcd_stats(),
                   "qdisc_stats": b.qdisc_stats(),
                   "bpf_cost": (bpf_cost(t.router, ("afcd_qdisc_enqueue", "afcd_qdisc_dequeue"))
                                if scheme in bottleneck.QDISC_BACKEND else
                                bpf_cost(t.router) if scheme in bottleneck.OURS else None),
                   "map_memlock_bytes": map_memory() if scheme in bottleneck.OURS else None}
    finally:
        stop.set()
        sampler.stop()
        b.remove()
    if th.is_alive():
        th.join(timeout=10)
    sampled["backlog_sampler_error"] = sampler.error
    return raw, measured, sampled


def run(name, scheme, rate_mbit=100.0, rtt_ms=20.0, duration_s=15.0, warmup_s=3.0,
        buffer_bdp=1.0, target_ms=5.0, interval_ms=100.0, ecn=False, out_dir=None, log=print,
        repeat=None, wl=None, update_period_ms=10.0, tag=None, extra=(), keep_samples=True,
        topos=None):
    """One run of the named scenario (or of the Workload wl, name then being
    its name); its result JSON goes to out_dir as NAME-SCHEME.json (or
    NAME-SCHEME-rK.json for repeat K; tag, when given, replaces NAME-SCHEME).
    update_period_ms: the refresh period of ours (None: the algo's own);
    keep_samples False leaves the raw delay samples (ping, backlog) out of
    the JSON, their summaries in; topos: a topo.Pool to take the topology
    from and leave it in (None: one of the run's own, removed after it)."""
    wl = wl or workload_of(name)
    flows = _flows(wl.flows, rate_mbit)
    cc = bottleneck.SENDER_CC.get(scheme)
    for f in flows:                     # a scheme whose senders run its own CC
        if cc and f.proto == "tcp":
            f.cc = cc
    short = _at(wl.short, rate_mbit)
    t_start = time.time()
    base = tag or "%s-%s" % (name, scheme)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)     # the loader's log goes there first
    pool = topos or topo_mod.Pool()
    try:
        t = pool.get(**_topology_args(wl, flows, short, rtt_ms, rate_mbit, ecn, cc))
        _check_cc(t.senders[0], flows)
        loader_log = os.path.join(out_dir, "%s.loader.log" % base) if out_dir else None
        b = bottleneck.Bottleneck(t.router, topo_mod.BOTTLENECK_DEV, scheme, rate_mbit, rtt_ms,
                                  buffer_bdp=buffer_bdp, target_ms=target_ms,
                                  interval_ms=interval_ms, ecn=ecn, log=loader_log,
                                  n_flows=len(flows), update_period_ms=update_period_ms,
                                  extra=extra)
        b.install()
        raw, measured, sampled = _measure(t, b, flows, duration_s, short)
    except BaseException:
        pool.discard()
        raise
    finally:
        if topos is None:
            pool.close()
    res = {"scenario": name, "description": wl.description, "scheme": scheme,
           "label": bottleneck.LABELS[scheme], "topology": wl.kind, "rate_mbit": rate_mbit,
           "rtt_ms": rtt_ms, "duration_s": duration_s, "warmup_s": warmup_s,
           "buffer_bdp": buffer_bdp, "target_ms": target_ms, "interval_ms": interval_ms,
           "ecn": ecn, "kernel": os.uname().release, "date": time.strftime("%Y-%m-%d %H:%M"),
           "code": code_version(), "abi": abi.ABI, "wall_s": None, "short_spec": short.spec() if short else None,
           "rto_min_ms": _at(wl.rto_min_ms, rate_mbit), "access_rate": wl.access_rate,
           "loader_params": b.loader_params() if scheme in bottleneck.OURS else None,
           "backlog_sampler_error": sampled.pop("backlog_sampler_error")}
    series, backlog = sampled.pop("series"), sampled.pop("backlog")
    res.update(summarize(raw, rate_mbit, duration_s, warmup_s, rtt_ms, backlog))
    res.update(sampled)
    res.update(measured)
    _judge(res, series, raw["t0"], warmup_s, duration_s)
    res["repeat"] = repeat
    res["wall_s"] = round(time.time() - t_start, 1)
    res["backlog_samples_n"] = len(res["backlog_samples"])
    if not keep_samples:
        res["queue_delay_samples_ms"] = []
        res["backlog_samples"] = []
    if out_dir:
        _save(res, out_dir, base, repeat)
    return res


def _metrics_window(series, warmup_s, duration_s):
    """The samples of the series within the metrics' window, [warm-up,
    duration] on the workload's clock (the window of utilization and
    goodput): before it the flows start, after it they have stopped and
    the virtual queue idles."""
    return [s for s in series if warmup_s <= s["t"] <= duration_s]


def _overlimit_share(series, warmup_s, duration_s):
    """Horizon drops as a share of all drops after the warm-up (ours only;
    None without drops): the fairness module should keep the queue off the
    horizon, where drops hit every flow alike."""
    after = _metrics_window(series, warmup_s, duration_s)
    if len(after) < 2:
        return None
    ovl = after[-1]["overlimit_drop"] - after[0]["overlimit_drop"]
    aqm = after[-1]["aqm_drop"] - after[0]["aqm_drop"]
    return ovl / (ovl + aqm) if ovl + aqm else None


def _cost_of_fairness(series, warmup_s, duration_s, virtual=True):
    """Where the link goes under our schemes, in the metrics' window (None
    without two samples in it): the share of the time the virtual queue stood
    empty (its rate left unused; None without one, virtual False: the qdisc
    backend), and drops by reason per packet offered
    (admitted + dropped): the drop law, the fair-rate policer and the
    high-water drop (both part of the drop law's counter, not of this
    column), the horizon; and the policer's CE marks (ecn on: an
    ECN-capable packet it marks instead of dropping) per packet offered."""
    after = [s for s in _metrics_window(series, warmup_s, duration_s)
             if s.get("idle_ns") is not None]
    if len(after) < 2 or after[-1]["t"] <= after[0]["t"]:
        return None
    a, b = after[0], after[-1]

    def d(k):
        return (b.get(k) or 0) - (a.get(k) or 0)
    offered = d("passed") + d("aqm_drop") + d("overlimit_drop")
    per = (lambda n: n / offered) if offered else (lambda n: None)
    return {"vq_idle": d("idle_ns") / 1e9 / (b["t"] - a["t"]) if virtual else None,
            "aqm_drop": per(d("aqm_drop") - d("police_drop") - d("high_drop")),
            "police_drop": per(d("police_drop")),
            # None where the loader had no such counter (ABI < 23)
            "high_drop": per(d("high_drop")) if b.get("high_drop") is not None else None,
            "overlimit_drop": per(d("overlimit_drop")),
            # None where the loader had no such counter (ABI < 10)
            "police_mark": per(d("police_mark")) if b.get("police_mark") is not None else None}


def one_line(res):
    """A run in one line: goodputs, Jain, utilization, the delays, the
    machine (VM: the pinger's delay and the guest's CPU; ns-3: simulated
    and wall seconds)."""
    fl = "  ".join("%s %.1f" % (f["name"], f["goodput_mbps"]) for f in res["flows"])
    line = "%-10s %-9s | %s Mbit/s | Jain %.3f util %.0f%% |" % (
        res["scenario"], res["label"], fl, res["jain"] or 0, 100 * (res["utilization"] or 0))
    ns3 = res.get("engine") == "ns3"
    if not ns3:
        q = res["queue_delay_ms"]
        line += " qdelay p50 %.1f p99 %.1f ms" % (q["p50"] or 0, q["p99"] or 0)
    # the ping's figures are whole ms above 100 ms of RTT; the backlog's
    # are not quantised
    bl = res.get("backlog_delay_ms") or {}
    if bl.get("p50") is not None:
        line += " (backlog p50 %.1f p99 %.1f)" % (bl["p50"], bl["p99"])
    if ns3:
        line += " | ns-3, %g s simulated in %.0f s" % (res["sim_s"], res["sim_wall_s"] or 0)
    else:
        cpu = res.get("cpu", {})
        line += " | guest %.0f%% busy" % (100 * (cpu.get("guest_busy") or 0))
        if cpu.get("loader_busy") is not None:
            line += ", loader %.1f%%" % (100 * cpu["loader_busy"])
    if not res.get("valid", True):
        line += " | INVALID: " + "; ".join(res["invalid_reasons"])
    return line
