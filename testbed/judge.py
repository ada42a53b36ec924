# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Judge reproduced figures from their run results (pure: no root, no VM).

  metrics(res, fig)        one run's metrics as the checks name them
  Metrics                  the valid runs of every scheme of a figure,
                           aggregated (mean, sd, n), for the checks
  judge_figure(fig, runs)  every premise and claim, per variant (the text's
                           algorithm, the project's), and the verdicts
  figure_markdown, summary_markdown, plot_figure

Verdicts (REPRODUCTION.md sec. 3):
  PASS / PARTIAL / FAIL  of the claims that could be decided
  PREMISE                a premise failed: the baseline did not show the
                         problem the figure is about, its claims say nothing
  INVALID                no claim could be decided and some scheme has too
                         few valid runs (each needs min(2, repeats))
  INCONCLUSIVE           no claim could be decided: the schemes they name
                         were not run
  NOT-RUN                no runs (a feature or scheme missing: named)
  SUBSTITUTE             3.10: measured by substitutes, labelled as such
A check is PASS, FAIL or INCONCLUSIVE (its data missing); a report is
printed, not judged.
"""
import gzip
import json
import math
import os

from . import figures as F
from .scenario import goodput_mbps, utilization
from .workload import flow_t0
from .stats import ci95_sd_factor, jain, percentile

MIN_VALID = 2


def _flows_in(res):
    return [f for f in res["flows"]]


def metrics(res, fig):
    """One run's metrics, the names the checks use:
      jain, util (what the long flows delivered within the window over
      what the link carries in it, short flows' uploads added),
      g:GROUP (goodput of a flow group, Mbit/s), each:GROUP (its flows' mean),
      ratio:A/B, share:GROUP (of the rate), ratio:s2/s1each and share7 (outcast), delay_mean / _p50 /
      _p99 (the bottleneck's backlog as waiting time, ms), backlog_bytes,
      srtt_p90 (srtt - base RTT over the TCP series, ms), cwnd_ratio (time-
      mean cwnd of the cubic flow over the sack flow), guest_cpu, bpf_ns,
      memlock, fct_p50 / _p99 (ms, of the short flows that completed),
      short_stuck (the share, %, of short flows started at least STUCK_S before
      the run's end that never completed), short_slow (the share, %, of
      the short flows started after the warm-up that completed in SLOW_S
      or more), n_long (FaLL's N, ours), t_half
      (4.8)."""
    d, w = res["duration_s"], res["warmup_s"]
    a, b = fig.jain_window(d) if fig.jain_window else (w, d)
    r = res["rate_mbit"]
    m = {}
    gp, groups, counts = [], {}, {}
    for f in _flows_in(res):
        g = goodput_mbps(f, max(a, flow_t0(f) + 1.0), b)
        gp.append(g)
        key = f.get("group", f["name"])
        groups[key] = groups.get(key, 0.0) + g
        counts[key] = counts.get(key, 0) + 1
    m["jain"] = jain(gp)
    short_mbps = 0.0
    for s in res.get("short_flows") or []:
        if s[2] == "U" and s[3] is not None and a <= s[0] + s[3] <= b:
            short_mbps += s[1] * 8 / 1e6 / max(b - a, 1e-9)
    u = utilization(_flows_in(res), a, b, r)
    m["util"] = u + short_mbps / r if u is not None else None
    for k, v in groups.items():
        m["g:" + k] = v
        m["each:" + k] = v / counts[k]
        m["share:" + k] = v / r if r else None
    for x, y in (("cubic", "sack"),):
        if groups.get(x) is not None and groups.get(y):
            m["ratio:%s/%s" % (x, y)] = groups[x] / groups[y]
    if "s1" in groups and "s2" in groups:
        n1 = sum(1 for f in res["flows"] if f.get("group") == "s1") or 1
        m["ratio:s2/s1each"] = groups["s2"] / (groups["s1"] / n1) if groups["s1"] else None
        m["share7"] = groups["s2"] / (r / (n1 + 1)) if r else None
    bl = res.get("backlog_delay_ms") or {}
    m["delay_mean"], m["delay_p50"], m["delay_p99"] = bl.get("mean"), bl.get("p50"), bl.get("p99")
    m["backlog_bytes"] = res.get("backlog_bytes_mean")
    srtts, cw = [], {}
    for f in res["flows"]:
        ser = (f.get("client") or {}).get("tcp_series") or []
        pts = [x for x in ser if x[0] + flow_t0(f) >= w]
        srtts += [x[2] - res["rtt_ms"] for x in pts if x[2]]
        if pts and f.get("group") in ("cubic", "sack") and f["name"] == f.get("group"):
            cw[f["group"]] = sum(x[1] or 0 for x in pts) / len(pts)
    m["srtt_p90"] = percentile(srtts, 90)
    m["cwnd_ratio"] = cw["cubic"] / cw["sack"] if cw.get("cubic") and cw.get("sack") else None
    m["guest_cpu"] = (res.get("cpu") or {}).get("guest_busy")
    m["bpf_ns"] = (res.get("bpf_cost") or {}).get("ns_per_pkt")
    m["memlock"] = res.get("map_memlock_bytes")
    sh = res.get("short") or {}
    m["fct_p50"] = (sh.get("fct_ms") or {}).get("p50")
    m["fct_p99"] = (sh.get("fct_ms") or {}).get("p99")
    m["short_stuck"] = short_stuck(res)
    m["short_slow"] = short_slow(res)
    nl = [x.get("n_long") for x in res.get("afcd_series") or [] if w <= x["t"] <= d and
          x.get("n_long") is not None]
    m["n_long"] = sum(nl) / len(nl) if nl else None
    m["t_half"] = _t_half(res)
    return m


# A short flow not done this long after its start has lost its connection
# setup or its data more than once to timeouts (Linux's SYN timeout is 1 s,
# ns-3's 3 s, each doubling; an FCT of the slowest VM runs is at most 11 s).
STUCK_S = 10.0


def short_stuck(res):
    """The share (%, 0..100) of a run's short flows started at least
    STUCK_S before its end that never completed; None without short flows."""
    started = [s for s in res.get("short_flows") or [] if s[0] <= res["duration_s"] - STUCK_S]
    if not started:
        return None
    return 100.0 * sum(1 for s in started if s[3] is None) / len(started)


# A short flow that completed this long after its start lost its SYN to
# a timeout (Linux's first SYN timeout, and ns-3's as afcd-sim sets it),
# or waited a data timeout, unless it is large for its share: the FCT
# p99 hides such flows while they are fewer than 1 % (docs/NS3.md).
SLOW_S = 1.0


def short_slow(res):
    """The share (%, 0..100) of a run's short flows started after its
    warm-up that completed in SLOW_S or more; None without such flows."""
    done = [s for s in res.get("short_flows") or []
            if s[0] >= res["warmup_s"] and s[3] is not None]
    if not done:
        return None
    return 100.0 * sum(1 for s in done if s[3] >= SLOW_S) / len(done)


def silent_flows(res):
    """The names of a run's long TCP flows that delivered no byte."""
    return [f["name"] for f in res.get("flows") or []
            if f.get("proto") == "tcp" and not f.get("bytes") and
            not any(x[2] for x in f.get("series") or [])]


def _t_half(res):
    """The time from the late group's start until its flows' mean rate
    reaches half their fair share (rate / all long flows), s; None."""
    late = [f for f in res["flows"] if f["start_s"] > 0]
    if not late:
        return None
    t0 = min(f["start_s"] for f in late)
    fair = res["rate_mbit"] / len(res["flows"])
    ts = sorted({round(iv[1], 2) for f in late for iv in f["series"]})
    for t in ts:
        rates = [next((iv[2] / 1e6 for iv in f["series"] if abs(iv[1] - t) < 0.01), 0.0)
                 for f in late]
        if t > t0 and sum(rates) / len(rates) >= 0.5 * fair:
            return t - t0
    return None


def _mean_sd(xs):
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    if not xs:
        return None, None, 0
    mu = sum(xs) / len(xs)
    sd = (sum((x - mu) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5 if len(xs) > 1 else 0.0
    return mu, sd, len(xs)


def _marks(res):
    """CE marks the bottleneck set in a run: ours (ce_threshold and the
    law's) from the program's counters at the end of the run, or, where
    reading them then failed, from the last sample of its series (the
    marks until then); the kernel qdisc's ecn_mark / marked; None if not
    recorded (ours are never read from the sch_fq under them)."""
    keys = ("ce_threshold_mark", "ecn_mark")
    q = ((res.get("afcd_stats") or {}).get("queue")) or {}
    if q:
        return sum(q.get(k) or 0 for k in keys)
    series = [x for x in res.get("afcd_series") or [] if any(k in x for k in keys)]
    if series:
        return sum(series[-1].get(k) or 0 for k in keys)
    if res.get("loader_params"):          # ours: its counters went unread
        return None
    ks = [x for x in res.get("qdisc_stats") or [] if x.get("kind") not in ("htb", "tbf")]
    if ks:
        return sum((x.get("ecn_mark") or 0) + (x.get("marked") or 0) for x in ks)
    return None


def excluded_by_rule(res):
    """The reason a run is left out by rule, whatever its validity, or None.
    The rules are the only way a run is left out: none is removed by hand.
      a DCTCP run in which the bottleneck marked nothing: DCTCP's senders
      did not negotiate ECN or the queue never reached K, and the run
      measured drop-tail with a deep buffer, not DCTCP."""
    if res.get("scheme") in ("dctcp", "dctcp-k") and _marks(res) == 0:
        return "DCTCP marked no packet (the senders negotiated no ECN, or K was never reached)"
    return None


def baseline_sanity(M):
    """One line per baseline that ran, saying whether it behaved as itself
    in each run: DCTCP marked (its CE marks), CoDel dropped by its law
    (drops beyond the limit's), RED dropped or marked early, AFD dropped by
    its law. [(scheme, ok: True/False/None, text)]."""
    out = []
    for s, rs in sorted(M.by.items()):
        vals = []
        if s in ("dctcp", "dctcp-k"):
            what, vals = "CE marks", [_marks(r) for r in rs]
        elif s == "kcodel":
            what = "drops by CoDel's law (beyond the limit's)"
            for r in rs:
                cd = next((x for x in r.get("qdisc_stats") or [] if x.get("kind") == "codel"),
                          None)
                vals.append(None if cd is None else
                            (cd.get("drops") or 0) - (cd.get("drop_overlimit") or 0) +
                            (cd.get("ecn_mark") or 0))
        elif s == "red":
            what = "early drops and marks"
            for r in rs:
                rd = next((x for x in r.get("qdisc_stats") or [] if x.get("kind") == "red"),
                          None)
                vals.append(None if rd is None else
                            (rd.get("early") or 0) + (rd.get("marked") or 0))
        elif s == "afd":
            what = "drops and marks by AFD's law"
            vals = [(((r.get("afcd_stats") or {}).get("queue") or {}).get("aqm_drop"))
                    for r in rs]
        else:
            continue
        known = [v for v in vals if v is not None]
        ok = None if not known else all(v > 0 for v in known)
        out.append((s, ok, "%s per run: %s%s" % (what, ", ".join(
            "-" if v is None else "%d" % v for v in vals),
            "" if ok is not False else " (did not behave as itself in %d of %d)" % (
                sum(1 for v in known if v <= 0), len(known)))))
    return out


class Metrics:
    """Per scheme: the metrics of its valid runs, aggregated. need: the
    valid runs a scheme needs to be judged (min(MIN_VALID, repeats)). A run
    excluded_by_rule() counts as invalid, with the rule as its reason
    (self.excluded: (scheme, repeat, reason))."""

    def __init__(self, fig, runs, repeats, others=None):
        self.fig, self.others = fig, others or {}
        self.need = max(1, min(MIN_VALID, repeats))
        self.by = {}
        self.excluded = []
        for res in runs:
            why = excluded_by_rule(res)
            if why:
                res = dict(res, valid=False,
                           invalid_reasons=list(res.get("invalid_reasons") or []) + [why])
                self.excluded.append((res["scheme"], res.get("repeat"), why))
            self.by.setdefault(res["scheme"], []).append(res)
        self.valid = {s: [r for r in rs if r.get("valid", True)] for s, rs in self.by.items()}
        self.m = {s: [metrics(r, fig) for r in rs] for s, rs in self.valid.items()}
        first = runs[0] if runs else {}
        self.rtt_ms = first.get("rtt_ms")
        self.rate_mbit = first.get("rate_mbit")

    def stat(self, scheme, metric):
        """(mean, sd, n) over the valid runs; n < need: (None, None, n)."""
        vals = [m.get(metric) for m in self.m.get(scheme, [])]
        mu, sd, n = _mean_sd(vals)
        if n < self.need:
            return None, None, n
        return mu, sd, n

    def mean(self, scheme, metric):
        return self.stat(scheme, metric)[0]

    def margin(self, a, b, metric):
        """2 x the pooled sd of two schemes' metric (0 when unknown)."""
        sa, sb = self.stat(a, metric)[1] or 0.0, self.stat(b, metric)[1] or 0.0
        return 2.0 * math.sqrt((sa * sa + sb * sb) / 2.0)

    def other(self, fid, scheme, metric):
        """The metric of another figure's runs (3.7 against 3.6, ...);
        NoRunsOf when the directory has not enough valid runs of scheme in
        that figure."""
        o = self.others.get(fid)
        v = o.mean(scheme, metric) if o else None
        if v is None:
            raise NoRunsOf("fig. %s has not enough valid runs of %s here" % (fid, scheme))
        return v


class NoRunsOf(Exception):
    """A check compares with another figure whose runs are missing."""


OUTCOME = {True: "PASS", False: "FAIL", F.TIE: "TIE", None: "INCONCLUSIVE"}


def _verdict(words):
    """A variant's verdict from its decided own claims (PASS, FAIL, TIE):
    each the same word, that word; a mixture, PARTIAL."""
    return words[0] if len(set(words)) == 1 else "PARTIAL"


def judge_figure(fig, runs, repeats, others=None, planned=()):
    """Every check of fig on runs (result dicts); returns a dict with the
    checks (per variant where they use AFCD's or FaLL's numbers), the
    verdict of each variant, {"text": V, "project": V}, from its own claims
    only (Check.own), and their count by outcome, and the Metrics.

    A claim whose premise (Check.needs) failed is PREMISE, not judged; a
    premise that cannot be decided leaves its claims judged, marked.
    Per variant: NOT-RUN (no runs), SUBSTITUTE (3.10), else from the own
    claims decided (PASS, FAIL, TIE): all PASS: PASS; all FAIL: FAIL; all
    TIE: TIE; a mixture: PARTIAL; none decided: PREMISE when a premise
    blocked them, INVALID when a scheme has too few valid runs, NOT-RUN
    when the schemes they name were not run. planned: the schemes the
    figure was run with."""
    M = Metrics(fig, runs, repeats, others)
    out = {"figure": fig.id, "title": fig.title, "quotes": fig.quotes, "cell": fig.cell,
           "rate_notes": fig.rate_notes, "checks": [], "verdict": {}, "schemes": {},
           "remedy_of": fig.remedy_of}
    tally = {v: {"pass": 0, "fail": 0, "tie": 0, "premise": 0, "undecided": 0}
             for v in ("text", "project")}
    if not runs:
        reason = "no runs" + (" (needs %s)" % ", ".join(fig.needs) if fig.needs else "")
        out["verdict"] = {"text": "NOT-RUN", "project": "NOT-RUN", "why": reason,
                          "claims": tally}
        return out, M
    for s, rs in sorted(M.by.items()):
        out["schemes"][s] = {"runs": len(rs), "valid": len(M.valid[s]),
                             "invalid_reasons": sorted({x for r in rs
                                                        for x in r.get("invalid_reasons", [])})}
    premises = {}
    words = {"text": [], "project": []}
    for c in fig.checks:
        for v in (["text", "project"] if c.roles else [None]):
            V = F.VARIANTS[v or "text"]
            try:
                ok, nums = c.fn(M, V)
            except NoRunsOf as e:
                ok, nums = None, "cannot be evaluated: %s" % e
            except (TypeError, ZeroDivisionError, KeyError, ValueError) as e:
                # a scheme it compares with has no data (None in arithmetic)
                ok, nums = None, "cannot be evaluated (a scheme it names has no data: %s)" % e
            verdict = "REPORT" if c.kind == "report" else OUTCOME[ok]
            blocked = premises.get(c.needs) is False
            if c.kind == "claim" and blocked:
                nums = "the premise '%s' failed (would be %s): %s" % (c.needs, verdict, nums)
                verdict = "PREMISE"
            elif c.kind == "claim" and c.needs and premises.get(c.needs) is None:
                nums += " [premise '%s' undecided]" % c.needs
            if c.kind == "premise":
                premises[c.id] = ok
            out["checks"].append({"kind": c.kind, "id": c.id, "quote": c.quote,
                                  "variant": v or "both", "verdict": verdict, "numbers": nums,
                                  "own": c.own, "needs": c.needs})
            if c.kind != "claim" or not c.own:
                continue
            for vv in ([v] if v else ["text", "project"]):
                key = {"PASS": "pass", "FAIL": "fail", "TIE": "tie",
                       "PREMISE": "premise"}.get(verdict, "undecided")
                tally[vv][key] += 1
                if verdict in ("PASS", "FAIL", "TIE"):
                    words[vv].append(verdict)
    short = [s for s, rs in M.by.items() if len(M.valid[s]) < M.need]
    for v in ("text", "project"):
        if fig.substitute:
            out["verdict"][v] = "SUBSTITUTE"
        elif words[v]:
            out["verdict"][v] = _verdict(words[v])
        elif tally[v]["premise"]:
            out["verdict"][v] = "PREMISE"
        else:
            out["verdict"][v] = "INVALID" if short else "NOT-RUN"
    if short:
        out["verdict"]["too_few_valid"] = sorted(short)
    out["verdict"]["claims"] = tally
    return out, M


def combined(verdict):
    """One word for the summary: the text's verdict, with the project's
    where it differs ("FAIL; project PASS")."""
    t, p = verdict.get("text"), verdict.get("project")
    return t if t == p else "%s; project %s" % (t, p)


METRIC_COLUMNS = [("jain", "Jain", "%.3f"), ("util", "util", "%.2f"),
                  ("delay_mean", "delay mean ms", "%.1f"), ("delay_p99", "delay p99 ms", "%.1f")]


SHORT_COLUMNS = [("fct_p50", "FCT p50 ms", "%.0f"), ("fct_p99", "FCT p99 ms", "%.0f"),
                 ("short_slow", "FCT >= %g s, %%" % SLOW_S, "%.2f"),
                 ("short_stuck", "short flows not done in %g s, %%" % STUCK_S, "%.2f")]


def table_markdown(fig, M, schemes):
    """mean ± sd over the valid runs, valid/runs, per scheme, and the line
    under the table that says what ± is (spread_note())."""
    cols = list(METRIC_COLUMNS)
    extra = {"3.3": [("ratio:cubic/sack", "CUBIC/SACK", "%.2f")],
             "3.4": [("cwnd_ratio", "cwnd ratio", "%.2f"), ("srtt_p90", "srtt-base p90 ms",
                                                            "%.1f")],
             "3.5": [("share:cubic", "CUBIC/R", "%.2f"), ("share:udp", "UDP/R", "%.2f")],
             "3.7": [("ratio:cubic/sack", "CUBIC/SACK", "%.2f")],
             "3.8": [("ratio:cubic/sack", "CUBIC/SACK", "%.2f")],
             "3.9": SHORT_COLUMNS,
             "3.10": [("guest_cpu", "guest CPU", "%.2f"), ("bpf_ns", "BPF ns/pkt", "%.0f"),
                      ("backlog_bytes", "backlog B", "%.0f"), ("memlock", "maps B", "%.0f")],
             "4.3": [("ratio:s2/s1each", "flow7/mean(1-6)", "%.2f"), ("share7", "flow7/(R/7)",
                                                                      "%.2f")],
             "4.6": SHORT_COLUMNS + [("n_long", "N_long", "%.1f")],
             "4.7": SHORT_COLUMNS + [("n_long", "N_long", "%.1f")],
             "4.8": [("t_half", "late group t50% s", "%.1f")] + SHORT_COLUMNS +
                    [("n_long", "N_long", "%.1f")]}
    cols += extra.get(fig.id, [])
    lines = ["| scheme | " + " | ".join(c[1] for c in cols) + " | valid |",
             "|---|" + "---|" * (len(cols) + 1)]
    from .bottleneck import LABELS
    for s in schemes:
        if s not in M.by:
            lines.append("| %s | %s | not run |" % (LABELS.get(s, s), " | ".join("-" for _ in cols)))
            continue
        cells = []
        for key, _, fmt in cols:
            mu, sd, n = _mean_sd([m.get(key) for m in M.m.get(s, [])])
            cells.append("-" if mu is None else (fmt % mu) + (" ± " + fmt % sd if sd else ""))
        nv, nr = len(M.valid.get(s, [])), len(M.by[s])
        why = sorted({x for r in M.by[s] for x in r.get("invalid_reasons", [])})
        lines.append("| %s | %s | %d/%d%s |" % (LABELS.get(s, s), " | ".join(cells), nv, nr,
                                                " (" + "; ".join(why) + ")" if why else ""))
    return "\n".join(lines) + "\n\n" + spread_note(
        [len(M.valid.get(s, [])) for s in schemes if s in M.by])


def spread_note(ns):
    """What a table's ± means, for schemes of ns valid runs each: the
    sample standard deviation, and the factor that turns it into the
    mean's 95 % confidence interval (Student's t) for each n; or that one
    run a scheme has no spread."""
    ns = sorted({n for n in ns if n > 1})
    if not ns:
        return "One run a scheme: no spread, no confidence interval."
    ks = ["± %.2f sd at n = %d" % (k, n) for n, k in ((n, ci95_sd_factor(n)) for n in ns) if k]
    return ("± is the sample standard deviation over a scheme's valid runs (n of them, the last "
            "column)" + ("; the mean's 95 %% confidence interval (Student's t) is %s" %
                         ", ".join(ks) if ks else "") + ".")


# ns-3 3.44's TcpSocket defaults (ConnTimeout, ConnCount, DataRetries), which
# runs made before afcd-sim set and recorded them had
NS3_DEFAULT_TCP = {"syn_timeout_ms": 3000, "syn_retries": 6, "data_retries": 6}


def ns3_tcp(runs):
    """ns-3's TCP as a figure's runs set it (afcd-sim's "tcp" record), one
    phrase, each setting with every value its runs had ("ECN off/on" where
    DCTCP's runs differ); None when no run recorded it."""
    ts = [r["tcp"] for r in runs if r.get("tcp")]
    if not ts:
        return None

    def v(k, fmt="%g"):
        return "/".join(fmt % (x if x is not None else NS3_DEFAULT_TCP[k])
                        for x in sorted({t.get(k) for t in ts}, key=lambda x: (x is None, x)))

    def onoff(k):
        return "/".join("on" if x else "off" for x in sorted({t[k] for t in ts}))
    return ("SACK %s, ECN %s, initial window %s segments of %s bytes, a delayed ACK per %s "
            "segments or after %s ms, minimum RTO %s ms, socket buffers %s bytes, MSL %s s"
            % (onoff("sack"), onoff("ecn"), v("initial_cwnd"), v("segment_bytes"),
               v("delack_count"), v("delack_ms"), v("rto_min_ms"), v("buf_bytes", "%d"),
               v("msl_s")) +
            ", SYN timeout %s ms (%s retries), %s retries of a segment" % (
                v("syn_timeout_ms"), v("syn_retries"), v("data_retries")))


def banner(fig, ctx):
    """The first lines of a figure's report: what was run, where, scaled how."""
    r = ctx.get("rate_mbit")
    k = F.k_of(r) if r else None
    scale = ("WAN cell: the dissertation's times kept (RTT %g ms, buffer %g BDP, target 5 ms, "
             "interval 100 ms), the rate scaled by %.0f" % (ctx.get("rtt_ms") or 0,
                                                             fig.buffer_bdp, k or 0)
             if fig.cell == "wan" else
             "DCN cell: packets kept, time stretched by k = %.0f (base RTT %.1f ms for the "
             "assumed 100 us, buffer 8 BDP = 1 MB, min_rto, target %.0f ms and interval %.0f ms "
             "= Table 4.1's x k, DCTCP K = 20 frames)" % (k or 0, ctx.get("rtt_ms") or 0,
                                                           fig.target_ms(r) if r else 0,
                                                           fig.interval_ms(r) if r else 0))
    ns3 = ctx.get("engine") == "ns3"
    how = ("given" if ctx.get("rate_arg", "auto") != "auto" else
           "the engine's default" if ns3 else "calibrated")
    where = ("ns-3 on the host (%s), the datapath's program on the simulated clock, "
             "%s-byte frames" % (ctx.get("emulation"), ctx.get("mtu", "?")) if ns3 else
             "a VM under %s, kernel %s" % (ctx.get("emulation", "TCG"), ctx.get("kernel", "?")))
    notes = fig.rate_notes or "-"
    at = F.NOTES_RATE_MBIT[fig.chapter]
    if fig.rate_notes and (r != at or ns3):
        notes = ("(written for the VM's %g Mbit/s and %d-byte frames; this run: %g Mbit/s, "
                 "%s-byte frames) %s" % (at, F.NOTES_FRAME, r or 0,
                                         ctx.get("mtu") or F.NOTES_FRAME, fig.rate_notes))
    tcp = ("" if not ns3 else
           " ns-3's TCP: %s." % ctx["tcp"] if ctx.get("tcp") else
           " ns-3's TCP: not recorded by these runs (as docs/NS3.md of their commit sets it).")
    return ("**Scaled reproduction, not a 10 Gb/s replication.** %g Mbit/s (%s), "
            "engine: %s, %s repeat(s) of %s s (warm-up %s s), mode %s. "
            "%s. Depends on the absolute rate: %s.%s" % (
                r or 0, how, where,
                ctx.get("repeats", "?"), ctx.get("duration_s", "?"), ctx.get("warmup_s", "?"),
                ctx.get("mode", "?"), scale, notes, tcp))


def kernels_of(ctx, runs=()):
    """The guest kernels a VM reproduction ran on, "A" or "A and B": the
    runs' own records where given, else the context's and its batches'
    (a directory whose schemes were rerun on another kernel); "?" when
    none is recorded."""
    ks = {r["kernel"] for r in runs if r.get("kernel")}
    if not ks:
        ks = {b["kernel"] for b in [ctx] + list(ctx.get("batches") or []) if b.get("kernel")}
    return " and ".join(sorted(ks)) or "?"


def run_dates(M, schemes):
    """The days the schemes' runs were made and the commits and map ABI they
    ran (where recorded), schemes of the same grouped: "2026-11-24
    (drop-tail, RED); 2026-11-26, commit ebb2942e1a2b, ABI 17 (AFCD)" (a
    reader sees runs of different datapaths side by side), "commit not
    recorded" for runs made before runs recorded it, "1 run with none"
    where only some did; "" without dates. Where the runs had more than
    one guest kernel, each group names its own."""
    from .bottleneck import LABELS
    groups, order = {}, {}     # order: by first day, last day, then text
    kernels = {r["kernel"] for s in schemes for r in M.by.get(s, []) if r.get("kernel")}
    for s in schemes:
        rs = M.by.get(s, [])
        days = sorted({str(r.get("date", ""))[:10] for r in rs if r.get("date")})
        codes = sorted({r["code"] for r in rs if r.get("code")})
        abis = sorted({r["abi"] for r in rs if r.get("abi")})
        if days:
            key = " to ".join([days[0], days[-1]] if len(days) > 1 else days)
            bare = sum(1 for r in rs if not r.get("code"))
            if codes:
                key += ", commit%s %s" % ("s" if len(codes) > 1 else "", ", ".join(codes))
                if bare:
                    key += ", %d run%s with none" % (bare, "s" if bare > 1 else "")
            else:
                key += ", commit not recorded"
            if abis:
                key += ", ABI %s" % ", ".join(str(a) for a in abis)
            if len(kernels) > 1:
                key += ", kernel %s" % kernels_of({}, rs)
            groups.setdefault(key, []).append(LABELS.get(s, s))
            order[key] = (days[0], days[-1], key)
    return "; ".join("%s (%s)" % (d, ", ".join(groups[d])) for d in sorted(groups, key=order.get))


def figure_markdown(fig, verdict, M, schemes, ctx, png=None):
    from .bottleneck import LABELS
    out = ["# Fig. %s: %s" % (fig.id, fig.title), "", banner(fig, ctx), ""]
    if fig.runs_of:
        out += ["Judged on the runs of fig. %s." % fig.runs_of, ""]
    out += ["The text:", ""] + ["> %s" % q for q in fig.quotes] + [""]
    out += ["**Verdict:** the text's algorithm (%s): **%s**; the project's (%s): **%s**." % (
        "/".join(F.VARIANTS["text"].values()), verdict["verdict"].get("text"),
        "/".join(F.VARIANTS["project"].values()), verdict["verdict"].get("project")), ""]
    if verdict["verdict"].get("why"):
        out += ["Why: %s" % verdict["verdict"]["why"], ""]
    if png:
        out += ["![fig. %s](%s)" % (fig.id, os.path.basename(png)), ""]
    out += [table_markdown(fig, M, schemes), ""]
    dated = run_dates(M, schemes)
    if dated:
        out += ["Runs dated " + dated + ".", ""]
    sanity = baseline_sanity(M)
    if sanity:
        out += ["**The baselines as themselves**", ""]
        out += ["- %s: %s" % (LABELS.get(s, s), text) for s, ok, text in sanity] + [""]
    silent = [(s, r.get("repeat"), silent_flows(r)) for s in schemes for r in M.by.get(s, [])]
    silent = [x for x in silent if x[2]]
    if silent:
        out += ["**Long flows that delivered nothing** (in the whole run; each counts "
                "as 0 in its run's Jain)", ""]
        out += ["- %s run %s: %d of its long flows (%s)" % (
            LABELS.get(s, s), k, len(names), ", ".join(names)) for s, k, names in silent]
        out += [""]
    passed = [(s, r.get("repeat"), r["short_ports_passed"]) for s in schemes
              for r in M.by.get(s, [])
              if r.get("short_ports_passed") is not None and r.get("short_flows")]
    if passed:
        out += ["**Short flows' ports passed over** (ns-3: a client skips a port whose last "
                "connection's server side is still open, docs/NS3.md)", ""]
        out += ["- " + "; ".join("%s run %s: %d" % (LABELS.get(s, s), k, n)
                                 for s, k, n in passed), ""]
    if M.excluded:
        out += ["**Runs excluded by rule** (judge.excluded_by_rule(); no run is removed by "
                "hand)", ""]
        out += ["- %s run %s: %s" % (LABELS.get(s, s), k, why) for s, k, why in M.excluded]
        out += [""]
    out += checks_markdown(verdict["checks"])
    return "\n".join(out) + "\n"


def checks_markdown(checks):
    """The checks in three tables: the premises; the claims about AFCD or
    FaLL, which alone decide the verdicts; the claims about the baselines,
    reported and deciding nothing (with the reports)."""
    def table(rows):
        t = ["| check | variant | verdict | numbers |", "|---|---|---|---|"]
        for c in rows:
            t.append("| %s: \"%s\"%s | %s | %s | %s |" % (
                c["id"], c["quote"].replace("|", "/"),
                " (needs: %s)" % c["needs"] if c.get("needs") else "", c["variant"],
                c["verdict"], c["numbers"].replace("|", "/")))
        return t
    prem = [c for c in checks if c["kind"] == "premise"]
    own = [c for c in checks if c["kind"] == "claim" and c.get("own")]
    rest = [c for c in checks if c not in prem and c not in own]
    out = []
    for title, rows in (("Premises", prem),
                        ("Claims about AFCD and FaLL (these decide the verdicts)", own),
                        ("Claims about the baselines and reports (decide nothing)", rest)):
        if rows:
            out += ["**%s**" % title, ""] + table(rows) + [""]
    return out


VERDICT_ORDER = ["PASS", "PARTIAL", "TIE", "FAIL", "PREMISE", "INVALID", "SUBSTITUTE",
                 "NOT-RUN"]
CLAIM_KEYS = ("pass", "fail", "tie", "premise", "undecided")


def tally_of(rows):
    """Per variant: the figures by verdict and the own claims by outcome
    (passed, failed, tied, blocked by a premise, undecided)."""
    t = {}
    for v in ("text", "project"):
        figs = {w: 0 for w in VERDICT_ORDER}
        claims = {k: 0 for k in CLAIM_KEYS}
        for r in rows:
            if r.get("remedy_of"):
                continue
            figs[r["verdict"].get(v) or "NOT-RUN"] += 1
            for k, n in (r["verdict"].get("claims") or {}).get(v, {}).items():
                claims[k] += n
        t[v] = {"figures": figs, "claims": claims}
    return t


def _claims_cell(c):
    """Own claims passed / failed / tied, then those blocked by a premise
    and those undecided (a scheme they name has no data), where any."""
    more = ["+%d %s" % (c[k], w) for k, w in (("premise", "blocked"), ("undecided", "undecided"))
            if c.get(k)]
    return "%d / %d / %d%s" % (c.get("pass", 0), c.get("fail", 0), c.get("tie", 0),
                                " (%s)" % ", ".join(more) if more else "")


def summary_markdown(rows, ctx):
    """The top-level report: one row per figure, the verdicts of each
    variant from its own claims, and the tally with failures counted."""
    if ctx.get("engine") == "ns3":
        where = ("Scaled simulation in %s (the datapath's own program on the simulated "
                 "clock, %s-byte frames, repeat K with seed K, repeats 2 and later with each flow "
                 "started up to one base RTT after its schedule)" % (
                     ctx.get("emulation", "ns-3"), ctx.get("mtu", "?")))
        engine = ""
    else:
        where, engine = "Scaled TCG emulation", "kernel %s, " % kernels_of(ctx)
    out = ["# Reproduction of the dissertation's ch. 3 and 4", "",
           "%s: ch. 3 at %s Mbit/s, ch. 4 at %s Mbit/s (k = 10 Gb/s / R), "
           "%smode %s. The experiments of the dissertation ran on CRON, a real 10 "
           "Gb/s testbed, with Linux 3.6 qdiscs; none of this is a 10 Gb/s replication. Each "
           "verdict is given for the text's algorithm (afcd-paper, fall-paper: the drop law "
           "without the project's policer) and the project's (afcd, fall), from the claims "
           "about AFCD and FaLL only; the claims about the baselines are reported in each "
           "figure's page and decide nothing." % (
               where, ctx.get("rate3") or "-", ctx.get("rate4") or "-", engine,
               ctx.get("mode", "?")), "",
           "| figure | what | the text's algorithm | own claims pass / fail / tie | "
           "the project's | own claims pass / fail / tie |", "|---|---|---|---|---|---|"]
    for r in [r for r in rows if not r.get("remedy_of")]:
        v = r["verdict"]
        cl = v.get("claims") or {}
        out.append("| [%s](fig%s/fig%s.md) | %s | %s | %s | %s | %s |" % (
            r["figure"], r["figure"], r["figure"], r["title"], v.get("text"),
            _claims_cell(cl.get("text", {})), v.get("project"),
            _claims_cell(cl.get("project", {}))))
    remedies = [r for r in rows if r.get("remedy_of")]
    if remedies:
        out += ["", "**Remedies** for premises the scaled rate breaks, the plan's own "
                "(REPRODUCTION.md), labelled as such; not in the tally:", "",
                "| remedy | of | what | its premises | the text's algorithm | the project's |",
                "|---|---|---|---|---|---|"]
        for r in remedies:
            prem = ", ".join("%s %s" % (c["id"], c["verdict"]) for c in r.get("checks", [])
                             if c.get("kind") == "premise") or "-"
            out.append("| [%s](fig%s/fig%s.md) | %s | %s | %s | %s | %s |" % (
                r["figure"], r["figure"], r["figure"], r["remedy_of"], r["title"], prem,
                r["verdict"].get("text"), r["verdict"].get("project")))
    tally = tally_of(rows)
    n = sum(1 for r in rows if not r.get("remedy_of"))
    out += ["", "**Tally** (the %s)." % ("14 figures" if n == len(F.FIGURES) else
                                          "%d figure%s judged here" % (n, "s" * (n != 1)))]
    for k, name in (("text", "The text's algorithm"), ("project", "The project's")):
        f, c = tally[k]["figures"], tally[k]["claims"]
        out.append("- %s: figures %s; own claims: %d passed, %d failed, %d tied, %d blocked "
                   "by a premise, %d undecided." % (
                       name, ", ".join("%s %d" % (w, n) for w, n in f.items() if n),
                       c["pass"], c["fail"], c["tie"], c["premise"], c["undecided"]))
    return "\n".join(out) + "\n", tally


# ---- plots ----------------------------------------------------------------------

PANEL_SPECS = {
    # fig.panels -> (metric, title, whisker metric) per panel of bars
    "jdu": [("jain", "(a) Jain's index", None),
            ("delay_mean", "(b) mean delay, ms (whisker p99)", "delay_p99"),
            ("util", "(c) utilization", None)],
    "delay_tput": [("delay_mean", "(a) mean queueing delay, ms", "delay_p99"),
                   ("util", "(b) total throughput / R", None)],
    "cpu_mem": [("guest_cpu", "(a) guest CPU (substitute)", None),
                ("bpf_ns", "BPF ns per packet (substitute)", None),
                ("backlog_bytes", "(b) mean backlog, bytes (substitute)", None),
                ("memlock", "BPF map memory, bytes", None)],
}


def _xlabels(ax, labels):
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=7)


def _bars(ax, M, ran, labels, metric, title, whisker=None):
    """One bar a scheme of ran: metric's mean ± sd over its runs (hatched
    with fewer valid runs than M.need), a whisker up to whisker's mean."""
    mus, sds, hatch = [], [], []
    for s in ran:
        mu, sd, n = _mean_sd([m.get(metric) for m in M.m.get(s, [])])
        mus.append(mu or 0)
        sds.append(sd or 0)
        hatch.append(n < M.need)
    bs = ax.bar(range(len(ran)), mus, yerr=sds if any(sds) else None, capsize=2,
                color="#4477aa")
    if whisker:
        for i, s in enumerate(ran):
            hi = _mean_sd([m.get(whisker) for m in M.m.get(s, [])])[0]
            if hi is not None:
                ax.plot([i, i], [mus[i], hi], color="k", lw=0.8)
                ax.plot([i - 0.15, i + 0.15], [hi] * 2, color="k", lw=0.8)
    for b, h in zip(bs, hatch):
        if h:
            b.set_hatch("//")
            b.set_alpha(0.5)
    _xlabels(ax, labels)
    ax.set_title(title, fontsize=9)


def _plot_groups(plt, M, ran, labels):
    """Panels (a) goodput per flow group and (b) delay."""
    groups = sorted({k[2:] for s in ran for m in M.m.get(s, []) for k in m
                     if k.startswith("g:")})
    f, axs = plt.subplots(1, 2, figsize=(13, 4.2), gridspec_kw={"width_ratios": [2, 1]})
    width = 0.8 / max(len(groups), 1)
    for j, g in enumerate(groups):
        # a group of several flows (4.3's flows 1-6) as its flows' mean,
        # beside a single flow (flow 7)
        mus = [_mean_sd([m.get("each:" + g) for m in M.m.get(s, [])]) for s in ran]
        axs[0].bar([i + (j - (len(groups) - 1) / 2) * width for i in range(len(ran))],
                   [x[0] or 0 for x in mus], width=width,
                   yerr=[x[1] or 0 for x in mus], capsize=2, label=g)
    _xlabels(axs[0], labels)
    axs[0].set_ylabel("goodput (Mbit/s)")
    axs[0].set_title("(a) goodput per flow (a group of several: its flows' mean)", fontsize=9)
    axs[0].legend(fontsize=7)
    _bars(axs[1], M, ran, labels, "delay_mean", "(b) queueing delay, mean (whisker: p99), ms",
          whisker="delay_p99")
    return f


def _plot_cwnd(plt, M):
    """Windows (top) and smoothed RTTs (bottom) over time, one column a
    scheme: the text's (a)-(d) and (e)-(h), the project's AFCD beside."""
    from .bottleneck import LABELS
    show = [s for s in ("pfifo", "kcodel", "afd", "afcd-paper", "afcd") if s in M.by]
    f, axs = plt.subplots(2, len(show), figsize=(3.4 * len(show), 6), squeeze=False)
    for i, s in enumerate(show):
        r = (M.valid.get(s) or M.by[s])[0]
        bdp_pk = r["rate_mbit"] * 1e6 / 8 * r["rtt_ms"] / 1e3 / 1514
        for fl in r["flows"]:
            ser = (fl.get("client") or {}).get("tcp_series") or []
            if not ser:
                continue
            t = [x[0] + flow_t0(fl) for x in ser]
            axs[0][i].plot(t, [(x[1] or 0) / 1448 for x in ser], lw=0.8, label=fl["name"])
            axs[1][i].plot(t, [x[2] for x in ser], lw=0.8, label=fl["name"])
        axs[0][i].axhline(bdp_pk, color="grey", ls="--", lw=0.8, label="BDP")
        j = ("pfifo", "kcodel", "afd", "afcd-paper").index(s) if s != "afcd" else None
        la, le = ("(%s) " % "abcd"[j], "(%s) " % "efgh"[j]) if j is not None else ("", "")
        axs[0][i].set_title("%s%s: cwnd (packets)" % (la, LABELS.get(s, s)), fontsize=8)
        axs[1][i].set_title("%s%s: srtt (ms)" % (le, LABELS.get(s, s)), fontsize=8)
        axs[1][i].set_xlabel("time (s)", fontsize=8)
        axs[0][i].legend(fontsize=6)
    return f


def plot_figure(fig, M, schemes, path):
    """A PNG laid out like the dissertation's figure (fig.panels): path, or
    None when no scheme of schemes ran or the layout is unknown."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from .bottleneck import LABELS

    ran = [s for s in schemes if s in M.by]
    if not ran:
        return None
    labels = [LABELS.get(s, s) for s in ran]
    if fig.panels == "bars":
        f = _plot_groups(plt, M, ran, labels)
    elif fig.panels in PANEL_SPECS:
        spec = PANEL_SPECS[fig.panels]
        f, axs = plt.subplots(1, len(spec), figsize=(4.4 * len(spec), 4.2))
        for ax, (metric, title, wh) in zip(axs, spec):
            _bars(ax, M, ran, labels, metric, title, whisker=wh)
    elif fig.panels == "cwnd":
        f = _plot_cwnd(plt, M)
    else:
        return None
    f.suptitle("Fig. %s (scaled): %s" % (fig.id, fig.title), fontsize=10)
    f.tight_layout()
    f.savefig(path, dpi=90)
    plt.close(f)
    return path


def load_runs(d):
    """The run result JSONs of a figure's directory (figX-SCHEME-rK.json, or
    .json.gz as docs/reproduction keeps them)."""
    out = []
    if not os.path.isdir(d):
        return out
    for n in sorted(os.listdir(d)):
        if not (n.startswith("fig") and "-r" in n and n.endswith((".json", ".json.gz"))):
            continue
        opener = gzip.open if n.endswith(".gz") else open
        with opener(os.path.join(d, n), "rt") as fh:
            try:
                r = json.load(fh)
            except ValueError:
                continue
        if "scheme" in r:
            out.append(r)
    return out
