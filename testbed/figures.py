# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The registry of the dissertation's figures (ch. 3 and 4): one Figure per
figure, with the text's words, the workload scaled to this testbed, the
schemes, the layout of its plot and its pre-registered premise and claim
checks. testbed/judge.py evaluates the checks on the runs' results;
testbed/reproduce.py runs the figures.

Scaling (design: REPRODUCTION.md sec. 1). The original ran on CRON at 10
Gb/s; a TCG VM runs at R Mbit/s (calibrated, tens of Mbit/s), k = 10000/R:
  wan (ch. 3)  keep the times, scale the rate: RTT 120 ms (60 in 3.8),
               buffer 1 BDP, target 5 ms, interval 100 ms, as Table 3.1;
               windows in packets are k times smaller.
  dcn (ch. 4)  keep the packets, stretch time by k: base RTT 100 us x k
               (the text gives none; 100 us assumed), buffer 1 MB = 8 BDP,
               min_rto, target and interval of Table 4.1 x k; DCTCP's K = 20
               frames; short flows 5 % of R. ch. 4 runs at R <= 50 Mbit/s.

Checks are written before the runs and keep their thresholds next to the
quote they test; changing a threshold after seeing results is a commit of
its own. A check returns (True / False / None, the numbers it used); None
means the data to decide are missing (a scheme not run, too few valid
runs). A tie margin is max(the stated margin, 2 x the pooled sd).
"""

import datetime

from . import scenario
from .workload import Flow, ShortFlows
from .shortflows import pareto_truncated_mean

LINE_RATE_MBIT = 10000.0   # CRON's links, the dissertation's bottleneck

# ---- scheme sets -------------------------------------------------------------
P3 = ["pfifo", "red", "sfb", "kcodel", "afd", "afcd-paper"]
P4 = ["pfifo", "red", "dctcp", "kcodel", "afcd-paper", "fall-paper"]
PROJECT = ["afcd", "fall"]
REFERENCE = ["fq_codel"]
MORE = ["pie", "cake", "fq_pie", "droptail", "afcd-ref", "dctcp-k"]


def scheme_set(chapter, which):
    """paper: the chapter's peers (P3 / P4); default: + the project's
    variants and fq_codel; quick: + the project's; all: + the rest."""
    p = P3 if chapter == 3 else P4
    if which == "paper":
        return list(p)
    if which == "quick":
        return p + PROJECT
    if which == "default":
        return p + PROJECT + REFERENCE
    if which == "all":
        return p + PROJECT + REFERENCE + MORE
    raise ValueError(which)


# The roles a check names, and the scheme playing each in the dissertation's
# own algorithm (the text's variant) and in this project's.
VARIANTS = {"text": {"AFCD": "afcd-paper", "FaLL": "fall-paper"},
            "project": {"AFCD": "afcd", "FaLL": "fall"}}

# ---- modes: run length, warm-up, repeats ---------------------------------------
# (run s, warm-up s) per cell. smoke exercises run, record and judge in a few
# minutes (tests/vm); its runs are too short for their verdicts to mean much.
MODES = {
    "smoke":    {"wan": (20.0, 5.0), "dcn": (15.0, 3.0), "repeat": 1, "schemes": "quick"},
    "quick":    {"wan": (60.0, 15.0), "dcn": (30.0, 5.0), "repeat": 1, "schemes": "quick"},
    "default":  {"wan": (120.0, 20.0), "dcn": (60.0, 10.0), "repeat": 3, "schemes": "default"},
    "faithful": {"wan": (300.0, 30.0), "dcn": (60.0, 10.0), "repeat": 5, "schemes": "default"},
}


def k_of(rate_mbit):
    """The time stretch of the dcn cell: 10 Gb/s over the testbed's rate."""
    return LINE_RATE_MBIT / rate_mbit


class Check:
    """A premise (the baseline shows the problem the figure is about), a
    claim (what the text says of it) or a report (printed, not judged).
    roles: which of AFCD / FaLL its numbers use, so it is judged once per
    variant (the text's algorithm, the project's); () once for both.
    own: the claim is about the variant's algorithm (AFCD or FaLL), and
    only such claims decide the variant's verdict; a claim about the
    baselines (DT, RED, CoDel, AFQ, SFB, DCTCP) is reported on its own line
    even where its threshold uses the variant's numbers. needs: the id of
    the premise the claim depends on (None: judged whatever the premises
    say). fn(M, V) -> (outcome, numbers): outcome True, False, TIE (within
    the tie margin) or None (its data missing); M a judge.Metrics, V the
    variant's role -> scheme map."""

    def __init__(self, kind, cid, quote, fn, roles=(), own=None, needs=None):
        self.kind, self.id, self.quote, self.fn, self.roles = kind, cid, quote, fn, tuple(roles)
        self.own = bool(roles) if own is None else own
        self.needs = needs


def premise(cid, quote, fn):
    return Check("premise", cid, quote, fn, own=False)


def claim(cid, quote, fn, roles=(), own=None, needs=None):
    """A claim; own defaults to whether it names AFCD or FaLL (roles)."""
    return Check("claim", cid, quote, fn, roles, own, needs)


def report(cid, quote, fn, roles=()):
    return Check("report", cid, quote, fn, roles, own=False)


# The rate (per chapter) and frame a figure's rate_notes are written for:
# the VM's, as calibrated on these machines (docs/reproduction).
NOTES_RATE_MBIT, NOTES_FRAME = {3: 25.0, 4: 8.0}, 1514


class Figure:
    """One figure of the dissertation and how it is reproduced here.
    workload(R, mode) -> scenario.Workload; rtt_ms(R), target_ms(R),
    interval_ms(R): the cell's scaling; runs_of: the figure whose runs this
    one judges (their workloads are one); panels: the plot's layout
    (judge.plot); needs: features that must exist to run it; rate_notes:
    which of its claims depend on the absolute rate, written for the VM's
    rate of its chapter (NOTES_RATE_MBIT, NOTES_FRAME); jain_window(duration):
    (from, to) s for Jain and goodput, None: after the warm-up;
    extra_schemes: schemes run for this figure beyond the chapter's set
    (a figure that judges its runs, runs_of, may need them)."""

    def __init__(self, fid, chapter, title, quotes, cell, workload, checks, panels,
                 rtt_ms, buffer_bdp, target_ms, interval_ms, runs_of=None, needs=(),
                 rate_notes="", jain_window=None, substitute=False, extra_schemes=(),
                 remedy_of=None):
        self.id, self.chapter, self.title, self.quotes = fid, chapter, title, quotes
        self.cell, self.workload, self.checks, self.panels = cell, workload, checks, panels
        self.rtt_ms, self.buffer_bdp = rtt_ms, buffer_bdp
        self.target_ms, self.interval_ms = target_ms, interval_ms
        self.runs_of, self.needs, self.rate_notes = runs_of, list(needs), rate_notes
        self.jain_window, self.substitute = jain_window, substitute
        self.extra_schemes = list(extra_schemes)   # run beyond the chapter's set
        # a remedy for a figure whose premise the scaled rate breaks (REPRODUCTION.md,
        # the plan's own): labelled as such, reported apart, never in the tally
        self.remedy_of = remedy_of

    @property
    def run_id(self):
        """The figure whose runs this one uses (itself unless runs_of)."""
        return self.runs_of or self.id

    def time(self, mode):
        return MODES[mode][self.cell]


# ---- workloads ----------------------------------------------------------------

def _wl(name, kind, desc, flows, short=None, **kw):
    return scenario.Workload(name, kind, desc, flows, short=short, **kw)


def harpoon_3_9(rate_mbit):
    """3.4.6: Harpoon, two-way, exponential inter-connection times with a
    1 s mean, Pareto sizes alpha 1.2 with 'shape' (scale) 1500 B, from a
    4th pair (sender index 3); truncated at 1 MB."""
    return ShortFlows(sender=3, rate_per_s=1.0, alpha=1.2, scale_bytes=1500.0,
                      max_bytes=1 << 20, dirs="UD")


def dcn_short(rate_mbit, sender=7):
    """4.5.3 (2): Pareto sizes with a 10 KB mean and shape 1.1 (scale
    909 B), truncated at 1 MB, from s8, one-way; Poisson arrivals at 5 %
    of the rate (the text gives no rate)."""
    alpha, scale, top = 1.1, 10000.0 * 0.1 / 1.1, float(1 << 20)
    mean = pareto_truncated_mean(alpha, scale, top)
    return ShortFlows(sender=sender, rate_per_s=0.05 * rate_mbit * 1e6 / 8 / mean, alpha=alpha,
                      scale_bytes=scale, max_bytes=top, dirs="U")


def rto_min_dcn(rate_mbit):
    return 1.0 * k_of(rate_mbit)       # Table 4.1: min_rto = 1 ms


def wl_cubic_sack(rate_mbit, mode):
    return _wl("cubic-sack", "dumbbell", "1 CUBIC + 1 TCP-SACK (Linux reno, SACK on)",
               lambda r: [Flow("cubic", 0, cc="cubic"), Flow("sack", 1, cc="reno")])


def wl_cubic_udp(rate_mbit, mode):
    return _wl("cubic-udp1", "dumbbell", "1 CUBIC + 1 UDP flow at 1.0x the link",
               lambda r: [Flow("cubic", 0, cc="cubic"), Flow("udp", 1, proto="udp",
                                                              rate_mbit=1.0 * r)])


def wl_three(rate_mbit, mode):
    return _wl("three", "dumbbell", "1 CUBIC + 1 HSTCP + 1 TCP-SACK",
               lambda r: [Flow("cubic", 0, cc="cubic"), Flow("hstcp", 1, cc="highspeed"),
                          Flow("sack", 2, cc="reno")])


def _thirty(r):
    return [Flow("cubic", 0, cc="cubic", streams=10), Flow("hstcp", 1, cc="highspeed", streams=10),
            Flow("sack", 2, cc="reno", streams=10)]


def wl_thirty(rate_mbit, mode):
    return _wl("thirty", "dumbbell", "10 CUBIC + 10 HSTCP + 10 TCP-SACK", _thirty)


def wl_thirty_short(rate_mbit, mode):
    return _wl("thirty-short", "dumbbell",
               "10 CUBIC + 10 HSTCP + 10 TCP-SACK + two-way short flows (Harpoon-like)",
               _thirty, short=harpoon_3_9)


def wl_outcast(rate_mbit, mode):
    return _wl("outcast", "yshape", "6 CUBIC flows from s1 + 1 from s2 into one port",
               lambda r: [Flow("s1", 0, cc="cubic", streams=6), Flow("s2", 1, cc="cubic")],
               rto_min_ms=rto_min_dcn, access_rate=True)


def wl_tree9(rate_mbit, mode):
    return _wl("tree9", "tree", "s1-s9 one CUBIC flow each",
               lambda r: [Flow("s%d" % (i + 1), i, cc="cubic") for i in range(9)],
               rto_min_ms=rto_min_dcn)


def wl_tree8_short(rate_mbit, mode):
    return _wl("tree8-short", "tree", "8 long CUBIC flows (s1-s7, s9) + short flows from s8",
               lambda r: [Flow("s%d" % (i + 1), i, cc="cubic") for i in range(9) if i != 7],
               short=dcn_short, rto_min_ms=rto_min_dcn)


def wl_tree40_short(rate_mbit, mode):
    return _wl("tree40-short", "tree", "8 senders x 5 long CUBIC flows + short flows from s8",
               lambda r: [Flow("s%d" % (i + 1), i, cc="cubic", streams=5) for i in range(9)
                          if i != 7], short=dcn_short, rto_min_ms=rto_min_dcn)


def wl_staggered(rate_mbit, mode):
    half = MODES[mode]["dcn"][0] / 2
    return _wl("staggered", "tree", "s1-s4 x 5 flows from 0, s5-s7 and s9 x 5 from half-time, "
               "short flows from s8",
               lambda r: [Flow("early%d" % (i + 1), i, cc="cubic", streams=5)
                          for i in range(4)] +
               [Flow("late%d" % (i + 1), i, cc="cubic", streams=5, start_s=half)
                for i in (4, 5, 6, 8)], short=dcn_short, rto_min_ms=rto_min_dcn)


# ---- helpers for checks ----------------------------------------------------------

def _fmt(x, f="%.3f"):
    return "-" if x is None else f % x


def ratio_le(M, s, metric, thr, what=None):
    v = M.mean(s, metric)
    if v is None:
        return None, "%s: no data" % s
    return v <= thr, "%s %s %s (asked <= %s)" % (s, what or metric, _fmt(v), _fmt(thr))


def ratio_ge(M, s, metric, thr, what=None):
    v = M.mean(s, metric)
    if v is None:
        return None, "%s: no data" % s
    return v >= thr, "%s %s %s (asked >= %s)" % (s, what or metric, _fmt(v), _fmt(thr))


# A check's outcome when its scheme is within the tie margin of another
# (REPRODUCTION.md: TIE within a printed margin, never a rounded PASS).
TIE = "tie"


def all_of(*parts):
    """Combine (outcome, text) results, a conjunction: False if any is
    False, else None if any is None, else TIE if any is TIE, else True."""
    oks = [p[0] for p in parts]
    txt = "; ".join(p[1] for p in parts)
    if any(o is False for o in oks):
        return False, txt
    if any(o is None for o in oks):
        return None, txt
    if any(o == TIE for o in oks):
        return TIE, txt
    return True, txt


def top_k(M, metric, members, schemes, k=2, tie=0.0, partners=(), higher=True):
    """Are members among the k best of schemes by metric (k: the members
    and the partners the text names beside them), each ahead of every
    other scheme by more than the tie margin, max(tie, 2 x the two's
    pooled sd)? True; False when another scheme is ahead of a member by
    more than the margin; TIE otherwise: REPRODUCTION.md's ties, "TIE
    within a printed margin, never a rounded PASS". None without a
    member's data; schemes without data are left out (named)."""
    vals = {s: M.mean(s, metric) for s in schemes}
    if any(vals.get(m) is None for m in members):
        return None, "%s: missing %s" % (metric, [m for m in members if vals.get(m) is None])
    rivals = [s for s in schemes if s not in members and s not in partners]
    known = {s: v for s, v in vals.items() if v is not None}
    order = sorted(known, key=lambda s: known[s], reverse=higher)
    outcome, closest = True, []
    for m in members:
        best = None
        for r in rivals:
            if r not in known:
                continue
            margin = max(tie, M.margin(m, r, metric))
            lead = known[m] - known[r] if higher else known[r] - known[m]
            if best is None or lead - margin < best[1] - best[2]:
                best = (r, lead, margin)
            if lead < -margin:
                outcome = False
            elif lead <= margin and outcome is True:
                outcome = TIE
        if best:
            closest.append("%s leads %s by %s (tie margin %s)" % (
                m, best[0], _fmt(best[1]), _fmt(best[2])))
    missing = [r for r in rivals if r not in known]
    return outcome, "%s by %s: %s; %s%s" % (
        "top %d" % k if higher else "lowest %d" % k, metric,
        ", ".join("%s %s" % (s, _fmt(known[s])) for s in order), "; ".join(closest),
        "; no data: %s" % ", ".join(missing) if missing else "")


# ---- the figures --------------------------------------------------------------
# ch. 3: the WAN cell. Peers of Table 3.1: DT (pfifo), RED, SFB, CoDel
# (kcodel), AFQ (afd), AFCD.

WAN = dict(cell="wan", rtt_ms=lambda r: 120.0, buffer_bdp=1.0, target_ms=lambda r: 5.0,
           interval_ms=lambda r: 100.0)
DCN = dict(cell="dcn", rtt_ms=lambda r: 0.1 * k_of(r), buffer_bdp=8.0,
           target_ms=lambda r: 1.0 * k_of(r), interval_ms=lambda r: 5.0 * k_of(r))

FIGURES = []


def _add(f):
    FIGURES.append(f)
    return f


def _ratio(M, s):
    return M.mean(s, "ratio:cubic/sack")


_add(Figure(
    "3.3", 3, "1 CUBIC + 1 TCP-SACK: (a) goodput per flow, (b) max queueing delay",
    ["DT, RED, and CoDel have serious unfairness",
     "SFB alleviates unfairness a little, but TCP-SACK still gets much less throughput",
     "AFQ and AFCD ... CUBIC and TCP-SACK have almost the same throughput",
     "DT creates extremely high queuing delay. RED, SFB, and AFQ all create a queuing delay "
     "larger than 15ms. CoDel and AFCD ... less than 1ms"],
    workload=wl_cubic_sack, panels="bars", **WAN,
    checks=[
        premise("unfair baselines", "DT, RED, and CoDel have serious unfairness",
                lambda M, V: all_of(ratio_ge(M, "pfifo", "ratio:cubic/sack", 1.5),
                                    ratio_ge(M, "red", "ratio:cubic/sack", 1.3),
                                    ratio_ge(M, "kcodel", "ratio:cubic/sack", 1.3))),
        claim("AFQ fair", "AFQ and AFCD ... almost the same throughput",
              lambda M, V: _fair_cubic_sack(M, "afd"), needs="unfair baselines"),
        claim("AFCD fair", "AFQ and AFCD ... almost the same throughput",
              lambda M, V: _fair_cubic_sack(M, V["AFCD"]), roles=["AFCD"],
              needs="unfair baselines"),
        claim("SFB in between", "SFB alleviates unfairness a little, but TCP-SACK still gets "
              "much less throughput",
              lambda M, V: all_of(
                  ratio_le(M, "sfb", "ratio:cubic/sack",
                           M.mean("pfifo", "ratio:cubic/sack") - 0.2),
                  ratio_ge(M, "sfb", "ratio:cubic/sack",
                           M.mean(V["AFCD"], "ratio:cubic/sack") + 0.1)),
              roles=["AFCD"], own=False, needs="unfair baselines"),
        claim("delay DT", "DT creates extremely high queuing delay",
              lambda M, V: ratio_ge(M, "pfifo", "delay_p99", 60.0, "delay p99 (ms)")),
        claim("delay RED SFB AFQ", "RED, SFB, and AFQ all create a queuing delay larger than 15ms",
              lambda M, V: all_of(*[ratio_ge(M, s, "delay_p99", 15.0, "delay p99 (ms)")
                                    for s in ("red", "sfb", "afd")])),
        claim("delay AFCD", "CoDel and AFCD show an extremely low queuing delay",
              lambda M, V: ratio_le(M, V["AFCD"], "delay_p99",
                                    M.mean("kcodel", "delay_p99") + 2.0,
                                    "delay p99 (ms), kcodel's + 2"), roles=["AFCD"]),
        report("below 1 ms", "CoDel and AFCD ... less than 1ms (not testable at sub-ms "
               "resolution here: timers fire 0.2-3 ms late under TCG)",
               lambda M, V: (None, "delay p50 (ms): kcodel %s, %s %s" % (
                   _fmt(M.mean("kcodel", "delay_p50"), "%.2f"), V["AFCD"],
                   _fmt(M.mean(V["AFCD"], "delay_p50"), "%.2f"))), roles=["AFCD"]),
    ],
    rate_notes="the magnitude of the unfairness (Reno recovers within a run at this rate, "
               "never in 300 s at 10 Gb/s)"))

_add(Figure(
    "3.4", 3, "cwnd (a-d) and RTT (e-h) over time under DT, CoDel, AFQ, AFCD",
    ["DT makes unfairness between CUBIC and TCP-SACK, and a very high queuing delay",
     "CoDel makes unfairness ... but CoDel keeps an extremely low queuing delay",
     "AFQ ... treats CUBIC and TCP-SACK fairly, but AFQ makes some queuing delay",
     "AFCD makes approximated fair between two different TCP flows as well as low queuing "
     "delay"],
    workload=wl_cubic_sack, panels="cwnd", runs_of="3.3", **WAN,
    checks=[
        premise("cwnd unfair", "DT makes unfairness ... CoDel makes unfairness",
                lambda M, V: all_of(ratio_ge(M, "pfifo", "cwnd_ratio", 1.5),
                                    ratio_ge(M, "kcodel", "cwnd_ratio", 1.3))),
        claim("AFQ cwnd fair", "AFQ ... treats CUBIC and TCP-SACK fairly",
              lambda M, V: ratio_le(M, "afd", "cwnd_ratio", 1.3), needs="cwnd unfair"),
        claim("AFCD cwnd fair", "AFCD makes approximated fair between two different TCP flows",
              lambda M, V: ratio_le(M, V["AFCD"], "cwnd_ratio", 1.3), roles=["AFCD"],
              needs="cwnd unfair"),
        claim("DT RTT", "DT makes ... a very high queuing delay",
              lambda M, V: ratio_ge(M, "pfifo", "srtt_p90", 60.0, "srtt - base, p90 (ms)")),
        claim("AFCD RTT", "AFCD makes ... low queuing delay",
              lambda M, V: ratio_le(M, V["AFCD"], "srtt_p90",
                                    M.mean("kcodel", "srtt_p90") + 3.0,
                                    "srtt - base, p90 (ms), kcodel's + 3"), roles=["AFCD"]),
        claim("AFQ some delay", "AFQ makes some queuing delay",
              lambda M, V: ratio_ge(M, "afd", "srtt_p90",
                                    M.mean(V["AFCD"], "srtt_p90") + 5.0,
                                    "srtt - base, p90 (ms), AFCD's + 5"), roles=["AFCD"],
              own=False),
    ],
    rate_notes="windows are 50-286x smaller than at 10 Gb/s (BDP marked in the plot)"))

_add(Figure(
    "3.5", 3, "1 CUBIC + 1 UDP at 1.0x the link: (a) goodput, (b) delay",
    ["DT, RED and CoDel all have serious unfairness. CUBIC flow barely gets any bandwidth",
     "SFB, AFQ, and AFCD make fairness between CUBIC and UDP",
     "DT, RED, SFB, and AFQ all make different degrees of large queuing delay, but CoDel and "
     "AFCD keep the queuing delay less than 1ms"],
    workload=wl_cubic_udp, panels="bars", **WAN,
    checks=[
        premise("CUBIC starved", "CUBIC flow barely gets any bandwidth",
                lambda M, V: all_of(*[ratio_le(M, s, "share:cubic", 0.05, "CUBIC / R")
                                      for s in ("pfifo", "red", "kcodel")])),
        claim("SFB fair", "SFB ... make fairness between CUBIC and UDP",
              lambda M, V: all_of(ratio_ge(M, "sfb", "share:cubic", 0.40, "CUBIC / R"),
                                  ratio_ge(M, "sfb", "share:udp", 0.40, "UDP / R")),
              needs="CUBIC starved"),
        claim("AFQ fair", "AFQ ... make fairness between CUBIC and UDP",
              lambda M, V: all_of(ratio_ge(M, "afd", "share:cubic", 0.40, "CUBIC / R"),
                                  ratio_ge(M, "afd", "share:udp", 0.40, "UDP / R")),
              needs="CUBIC starved"),
        claim("AFCD fair", "AFCD make[s] fairness between CUBIC and UDP",
              lambda M, V: all_of(ratio_ge(M, V["AFCD"], "share:cubic", 0.40, "CUBIC / R"),
                                  ratio_ge(M, V["AFCD"], "share:udp", 0.40, "UDP / R")),
              roles=["AFCD"], needs="CUBIC starved"),
        claim("delay large", "DT, RED, SFB, and AFQ all make different degrees of large "
              "queuing delay",
              lambda M, V: all_of(*[ratio_ge(M, s, "delay_p50", 15.0, "delay p50 (ms)")
                                    for s in ("pfifo", "red", "sfb", "afd")])),
        claim("delay AFCD", "CoDel and AFCD keep the queuing delay [low]",
              lambda M, V: ratio_le(M, V["AFCD"], "delay_p50",
                                    M.mean("kcodel", "delay_p50") + 2.0,
                                    "delay p50 (ms), kcodel's + 2"), roles=["AFCD"]),
    ],
    rate_notes="the speed of the drop law: the sqrt(count) law reaches a 1.0x flood's drop rate "
               "in ~30 s here, ~2.3 h at 10 Gb/s (a PASS of the text's AFCD here would not "
               "carry to 10 Gb/s; a FAIL would)"))

_add(Figure(
    "3.6", 3, "1 CUBIC + 1 HSTCP + 1 TCP-SACK: (a) Jain, (b) delay, (c) throughput",
    ["AFQ and AFCD get the highest Jain's fairness index, while DT, RED, and CoDel perform "
     "bad", "CoDel and AFCD keep the delay very low, while DT gets the highest delay",
     "AFCD performs almost the same as RED and AFQ [in throughput]"],
    workload=wl_three, panels="jdu", **WAN,
    checks=[
        premise("DT unfair", "DT ... perform[s] bad [in fairness]",
                lambda M, V: ratio_le(M, "pfifo", "jain", 0.93)),
        claim("AFCD top Jain", "AFQ and AFCD get the highest Jain's fairness index",
              lambda M, V: top_k(M, "jain", [V["AFCD"]], P3_of(V), 2, 0.02, ["afd"]),
              roles=["AFCD"], needs="DT unfair"),
        claim("AFQ top Jain", "AFQ and AFCD get the highest Jain's fairness index",
              lambda M, V: top_k(M, "jain", ["afd"], P3_of(V), 2, 0.02, [V["AFCD"]]),
              roles=["AFCD"], own=False, needs="DT unfair"),
        premise("room above DT RED CoDel", "[DT, RED and CoDel leave room for a 0.03 lead "
                "in Jain's index below 1]",
                lambda M, V: ratio_le(M, max(("pfifo", "red", "kcodel"),
                                             key=lambda b: M.mean(b, "jain")),
                                      "jain", 0.995 - 0.03, "Jain, the best of DT, RED, CoDel")),
        claim("AFCD above DT RED CoDel", "while DT, RED, and CoDel perform bad",
              lambda M, V: ratio_ge(M, V["AFCD"], "jain", max(
                  M.mean(b, "jain") for b in ("pfifo", "red", "kcodel")) + 0.03),
              roles=["AFCD"], needs="room above DT RED CoDel"),
        claim("AFQ above DT RED CoDel", "while DT, RED, and CoDel perform bad",
              lambda M, V: ratio_ge(M, "afd", "jain", max(
                  M.mean(b, "jain") for b in ("pfifo", "red", "kcodel")) + 0.03),
              needs="room above DT RED CoDel"),
        claim("AFCD lowest delay", "CoDel and AFCD keep the delay very low",
              lambda M, V: top_k(M, "delay_mean", [V["AFCD"]], P3_of(V), 2, 0.5, ["kcodel"],
                                 higher=False), roles=["AFCD"]),
        claim("CoDel lowest delay", "CoDel and AFCD keep the delay very low",
              lambda M, V: top_k(M, "delay_mean", ["kcodel"], P3_of(V), 2, 0.5, [V["AFCD"]],
                                 higher=False), roles=["AFCD"], own=False),
        claim("DT highest delay", "DT gets the highest delay",
              lambda M, V: top_k(M, "delay_mean", ["pfifo"], P3_of(V), 1, 0.5),
              roles=["AFCD"], own=False),
        claim("throughput", "AFCD performs almost the same as RED and AFQ",
              lambda M, V: all_of(*[near(M, V["AFCD"], b, "util", 0.05) for b in ("red", "afd")]),
              roles=["AFCD"]),
    ],
    rate_notes="HSTCP's a(w) is ~3 here against ~65 at 10 Gb/s: the heterogeneity is "
               "compressed"))


def P3_of(V):
    """Table 3.1's six schemes, AFCD as the variant plays it."""
    return [V["AFCD"] if s == "afcd-paper" else s for s in P3]


def P4_of(V):
    return [V.get("AFCD") if s == "afcd-paper" else V.get("FaLL") if s == "fall-paper" else s
            for s in P4]


def near(M, a, b, metric, margin):
    va, vb = M.mean(a, metric), M.mean(b, metric)
    if va is None or vb is None:
        return None, "%s vs %s: no data" % (a, b)
    m = max(margin, M.margin(a, b, metric))
    return abs(va - vb) <= m, "%s %s %s, %s's %s (asked within %s)" % (
        a, metric, _fmt(va), b, _fmt(vb), _fmt(m))


def _many_checks(premised=True):
    """3.7-3.9: the claims on 30 heterogeneous flows, the fairness ranking
    depending on the premise that DT is unfair to SACK (premised)."""
    needs = "CUBIC ahead" if premised else None
    c = [
        claim("AFCD top Jain", "AFQ and AFCD still get the highest fairness",
              lambda M, V: top_k(M, "jain", [V["AFCD"]], P3_of(V), 2, 0.02, ["afd"]),
              roles=["AFCD"], needs=needs),
        claim("AFQ top Jain", "AFQ and AFCD still get the highest fairness",
              lambda M, V: top_k(M, "jain", ["afd"], P3_of(V), 2, 0.02, [V["AFCD"]]),
              roles=["AFCD"], own=False, needs=needs),
        claim("AFCD lowest delay", "CoDel and AFCD still create the least queuing delay",
              lambda M, V: top_k(M, "delay_mean", [V["AFCD"]], P3_of(V), 2, 0.5, ["kcodel"],
                                 higher=False), roles=["AFCD"]),
        claim("CoDel lowest delay", "CoDel and AFCD still create the least queuing delay",
              lambda M, V: top_k(M, "delay_mean", ["kcodel"], P3_of(V), 2, 0.5, [V["AFCD"]],
                                 higher=False), roles=["AFCD"], own=False),
    ]
    if premised:
        c.insert(0, premise("CUBIC ahead", "[heterogeneous TCP variants are unfair under DT]",
                            lambda M, V: ratio_ge(M, "pfifo", "ratio:cubic/sack", 1.3,
                                                  "CUBIC group / SACK group")))
    return c


_add(Figure(
    "3.7", 3, "10 CUBIC + 10 HSTCP + 10 TCP-SACK at 120 ms",
    ["fairness performance is improved in all QM schemes because of the multiplexing",
     "AFQ and AFCD still get the highest fairness among all QM schemes",
     "CoDel and AFCD still create the least queuing delay",
     "AFCD has similar throughput performance to SFB and CoDel"],
    workload=wl_thirty, panels="jdu", **WAN,
    checks=_many_checks() + [
        claim("multiplexing helps AFCD", "fairness performance is improved in all QM schemes",
              lambda M, V: ratio_ge(M, V["AFCD"], "jain",
                                    M.other("3.6", V["AFCD"], "jain") - 0.01),
              roles=["AFCD"]),
        claim("multiplexing helps the others", "fairness performance is improved in all QM "
              "schemes",
              lambda M, V: all_of(*[ratio_ge(M, s, "jain",
                                             M.other("3.6", s, "jain") - 0.01)
                                    for s in P3_of(V) if s != V["AFCD"]]), roles=["AFCD"],
              own=False),
        claim("throughput", "AFCD has similar throughput performance to SFB and CoDel",
              lambda M, V: all_of(*[near(M, V["AFCD"], b, "util", 0.05)
                                    for b in ("sfb", "kcodel")]), roles=["AFCD"]),
    ],
    rate_notes="23 packets per flow: HSTCP is Reno below 38 packets and CUBIC sits in its "
               "Reno-friendly region, so all three behave as Reno (expect PREMISE)"))

_add(Figure(
    "3.8", 3, "as 3.7 at 60 ms",
    ["Because of the reduced RTT, all performances are improved compared to that of Section "
     "3.4.4", "AFQ and AFCD make more fairness than other QM schemes",
     "CoDel and AFCD have the least queuing delay", "AFCD has throughput performance as good "
     "as other AQM schemes"],
    workload=wl_thirty, panels="jdu", cell="wan", rtt_ms=lambda r: 60.0, buffer_bdp=1.0,
    target_ms=lambda r: 5.0, interval_ms=lambda r: 100.0,
    checks=_many_checks(premised=False) + [
        claim("AFCD improved", "all performances are improved compared to 3.4.4",
              lambda M, V: all_of(
                  ratio_ge(M, V["AFCD"], "jain", M.other("3.7", V["AFCD"], "jain") - 0.01),
                  ratio_ge(M, V["AFCD"], "util", M.other("3.7", V["AFCD"], "util") - 0.01)),
              roles=["AFCD"]),
        claim("the others improved", "all performances are improved compared to 3.4.4",
              lambda M, V: all_of(*[all_of(
                  ratio_ge(M, s, "jain", M.other("3.7", s, "jain") - 0.01),
                  ratio_ge(M, s, "util", M.other("3.7", s, "util") - 0.01))
                  for s in P3_of(V) if s != V["AFCD"]]), roles=["AFCD"], own=False),
        claim("throughput", "AFCD has throughput performance as good as other AQM schemes",
              lambda M, V: all_of(*[near(M, V["AFCD"], b, "util", 0.05)
                                    for b in ("red", "kcodel")]), roles=["AFCD"]),
    ],
    rate_notes="at 60 ms CUBIC loses its cubic region at this rate: the improvement comes "
               "from the congestion controls, true and uninformative about AFCD"))

_add(Figure(
    "3.9", 3, "3.7 with short-lived TCP flows",
    ["AFQ and AFCD still perform better in terms of fairness",
     "CoDel and AFCD still maintain very low queuing delay",
     "AFCD has similar throughput performance to other QM schemes in the presence of "
     "short-lived TCP flows"],
    workload=wl_thirty_short, panels="jdu", extra_schemes=["droptail"], **WAN,
    checks=_many_checks(premised=False) + [
        claim("AFCD as in 3.7", "[the long flows' metrics as in 3.7]",
              lambda M, V: near_other(M, V["AFCD"], "jain", "3.7", 0.03), roles=["AFCD"]),
        claim("AFQ as in 3.7", "[the long flows' metrics as in 3.7]",
              lambda M, V: near_other(M, "afd", "jain", "3.7", 0.03)),
        claim("throughput", "AFCD has similar throughput performance to other QM schemes in "
              "the presence of short-lived TCP flows",
              lambda M, V: all_of(*[near(M, V["AFCD"], b, "util", 0.05)
                                    for b in ("red", "kcodel")]), roles=["AFCD"]),
        report("FCT", "[flow completion times of the short flows; the text makes no claim]",
               lambda M, V: (None, ", ".join("%s p50 %s p99 %s ms" % (
                   s, _fmt(M.mean(s, "fct_p50"), "%.0f"), _fmt(M.mean(s, "fct_p99"), "%.0f"))
                   for s in P3_of(V))), roles=["AFCD"]),
    ],
    rate_notes="the short flows add ~0.1 Mbit/s: 0.2 % of R here, 0.0007 % at 10 Gb/s"))


# CPU times (BPF run time, guest CPU) depend on the machine's load and the
# code measured: two schemes' compare only when all their runs are of one
# commit and started within this many hours of each other (one batch).
ONE_BATCH_H = 6.0


def one_batch(M, schemes, check):
    """check()'s (verdict, numbers), undecided (None) with why beside its
    numbers unless the valid runs of schemes are of one commit and started
    within ONE_BATCH_H hours of each other."""
    ok, numbers = check()
    if ok is None:
        return ok, numbers
    runs = [r for s in schemes for r in M.valid.get(s, [])]
    codes = sorted({(r.get("code") or "unrecorded")[:7] for r in runs})
    dates = sorted(datetime.datetime.strptime(r["date"], "%Y-%m-%d %H:%M")
                   for r in runs if r.get("date"))
    if len(codes) > 1:
        why = "runs of %s" % ", ".join(codes)
    elif dates and (dates[-1] - dates[0]).total_seconds() > ONE_BATCH_H * 3600:
        why = "runs from %s to %s" % (dates[0].strftime("%Y-%m-%d %H:%M"),
                                      dates[-1].strftime("%Y-%m-%d %H:%M"))
    else:
        return ok, numbers
    return None, "%s; undecided: %s, and CPU times compare only within one batch" % (
        numbers, why)


def near_rel(M, a, b, metric, rel):
    """Is a's metric within rel (a fraction) of b's?"""
    va, vb = M.mean(a, metric), M.mean(b, metric)
    if va is None or vb is None:
        return None, "%s vs %s: no data" % (a, b)
    return abs(va - vb) <= rel * abs(vb), "%s %s %s, %s's %s (asked within %g %% of it)" % (
        a, metric, _fmt(va), b, _fmt(vb), 100 * rel)


def near_other(M, s, metric, fid, margin):
    a, b = M.mean(s, metric), M.other(fid, s, metric)
    if a is None or b is None:
        return None, "%s %s: no data here or in %s" % (s, metric, fid)
    return abs(a - b) <= margin, "%s %s %s, %s's %s (asked within %s)" % (
        s, metric, _fmt(a), fid, _fmt(b), _fmt(margin))


_add(Figure(
    "3.10", 3, "router (a) CPU per core, (b) memory, on the 3.9 workload",
    ["AFCD has similar CPU usage as other queue management schemes",
     "AQM schemes all get much smaller memory usage than Drop-tail queue. AFCD shows very "
     "small memory usage"],
    workload=wl_thirty_short, panels="cpu_mem", runs_of="3.9", substitute=True, **WAN,
    checks=[
        claim("BPF cost", "AFCD has similar CPU usage [substitute: BPF run time per packet "
              "<= 1.5x EDT drop-tail's on the same workload]",
              lambda M, V: one_batch(M, [V["AFCD"], "droptail"], lambda: ratio_le(
                  M, V["AFCD"], "bpf_ns", 1.5 * M.mean("droptail", "bpf_ns"),
                  "ns per packet, 1.5 x EDT drop-tail's"))
              if M.mean("droptail", "bpf_ns") else
              (None, "EDT drop-tail: no data; %s %s ns per packet" % (
                  V["AFCD"], _fmt(M.mean(V["AFCD"], "bpf_ns"), "%.0f"))), roles=["AFCD"]),
        claim("guest CPU", "AFCD has similar CPU usage [substitute: guest CPU within 10 % of "
              "CoDel's]",
              lambda M, V: one_batch(M, [V["AFCD"], "kcodel"],
                                     lambda: near_rel(M, V["AFCD"], "kcodel", "guest_cpu", 0.10)),
              roles=["AFCD"]),
        claim("memory = backlog", "AQM schemes all get much smaller memory usage than "
              "Drop-tail [substitute: mean backlog <= 0.2x drop-tail's]",
              lambda M, V: ratio_le(M, V["AFCD"], "backlog_bytes",
                                    0.2 * M.mean("pfifo", "backlog_bytes"),
                                    "mean backlog (bytes)"), roles=["AFCD"]),
        report("map memory", "AFCD shows very small memory usage [the maps' memory]",
               lambda M, V: (None, "%s: %s bytes of BPF maps" % (
                   V["AFCD"], _fmt(M.mean(V["AFCD"], "memlock"), "%.0f"))), roles=["AFCD"]),
    ],
    rate_notes="CPU under TCG: routers and hosts share 2 vCPUs; the memory claim is the "
               "queue occupancy, i.e. 3.9's delay claim"))

# ch. 4: the DCN cell. Peers of Table 4.1: DT, RED, DCTCP, CoDel, AFCD, FaLL.

_add(Figure(
    "4.3", 4, "TCP outcast: flows 1-6 from s1, flow 7 from s2 (Y-shape)",
    ["Drop-tail and RED create TCP outcast problem, where small set of flows (flow 7 in this "
     "case) have throughput starvation", "DCTCP solves TCP outcast problem",
     "Codel shows unfairness among competing flows",
     "AFCD and FaLL show a fair behavior among competing flows, thus solve the TCP outcast "
     "problem"],
    workload=wl_outcast, panels="bars", **DCN,
    checks=[
        premise("outcast", "Drop-tail and RED create TCP outcast problem",
                lambda M, V: all_of(ratio_le(M, "pfifo", "ratio:s2/s1each", 0.5,
                                             "flow 7 / mean of flows 1-6"),
                                    ratio_le(M, "red", "ratio:s2/s1each", 0.5,
                                             "flow 7 / mean of flows 1-6"))),
        claim("DCTCP fair", "DCTCP solves TCP outcast problem",
              lambda M, V: all_of(ratio_ge(M, "dctcp", "share7", 0.8, "flow 7 / (R/7)"),
                                  ratio_ge(M, "dctcp", "jain", 0.95)), needs="outcast"),
        claim("AFCD fair", "AFCD ... show[s] a fair behavior",
              lambda M, V: all_of(ratio_ge(M, V["AFCD"], "share7", 0.8, "flow 7 / (R/7)"),
                                  ratio_ge(M, V["AFCD"], "jain", 0.95)), roles=["AFCD"],
              needs="outcast"),
        claim("FaLL fair", "FaLL show[s] a fair behavior",
              lambda M, V: all_of(ratio_ge(M, V["FaLL"], "share7", 0.8, "flow 7 / (R/7)"),
                                  ratio_ge(M, V["FaLL"], "jain", 0.95)), roles=["FaLL"],
              needs="outcast"),
        claim("CoDel unfair", "Codel shows unfairness among competing flows",
              lambda M, V: ratio_le(M, "kcodel", "jain",
                                    min(M.mean(V["AFCD"], "jain"),
                                        M.mean(V["FaLL"], "jain")) - 0.02),
              roles=["AFCD", "FaLL"], own=False, needs="outcast"),
    ],
    rate_notes="port blackout needs input ports at line rate: the access links are shaped at R"))

_add(Figure(
    "4.4", 4, "Y-shape: (a) mean queueing delay at switch1, (b) total throughput",
    ["Drop-tail and RED create huge queuing delay (1600 - 1800 us), whereas DCTCP, Codel, AFCD "
     "and FaLL control delay very well and have low queuing delay as 800 - 1000 us",
     "DCTCP and FaLL both have very high throughput (up to 9.8Gbps) similar to Drop-tail and "
     "RED. Codel and AFCD have relatively low throughput"],
    workload=wl_outcast, panels="delay_tput", runs_of="4.3", **DCN,
    checks=[
        premise("DT RED queue", "Drop-tail and RED create huge queuing delay",
                lambda M, V: _dt_red_queue_44(M)),
        claim("AFCD FaLL low delay", "DCTCP, Codel, AFCD and FaLL control delay very well",
              lambda M, V: all_of(*[_low_delay_44(M, s) for s in (V["AFCD"], V["FaLL"])]),
              roles=["AFCD", "FaLL"], needs="DT RED queue"),
        claim("DCTCP CoDel low delay", "DCTCP, Codel, AFCD and FaLL control delay very well",
              lambda M, V: all_of(*[_low_delay_44(M, s) for s in ("dctcp", "kcodel")]),
              needs="DT RED queue"),
        claim("FaLL high throughput", "DCTCP and FaLL both have very high throughput ... "
              "similar to Drop-tail and RED",
              lambda M, V: ratio_ge(M, V["FaLL"], "util", M.mean("pfifo", "util") - 0.03),
              roles=["FaLL"]),
        claim("DCTCP high throughput", "DCTCP and FaLL both have very high throughput ... "
              "similar to Drop-tail and RED",
              lambda M, V: ratio_ge(M, "dctcp", "util", M.mean("pfifo", "util") - 0.03)),
        claim("AFCD lower", "Codel and AFCD have relatively low throughput",
              lambda M, V: ratio_le(M, V["AFCD"], "util",
                                    M.mean(V["FaLL"], "util") - 0.03),
              roles=["AFCD", "FaLL"]),
        claim("CoDel lower", "Codel and AFCD have relatively low throughput",
              lambda M, V: ratio_le(M, "kcodel", "util", M.mean(V["FaLL"], "util") - 0.03),
              roles=["AFCD", "FaLL"], own=False),
    ],
    rate_notes="Table 4.1's 1-ms target exceeds the 1-MB buffer's 0.8-ms drain time at any "
               "scale: CoDel can never drop on sojourn (it is drop-tail); the text's us are "
               "comparable with nothing here, only ratios are judged"))


def _dt_red_queue_44(M):
    """Fig. 4.4's premise, the first half of its delay sentence: drop-tail
    and RED each hold a queue at switch1, a mean delay of at least one base
    RTT (the text's 1600-1800 us are 16-18 of its 100-us RTTs). Without it
    "0.6 x min(DT, RED)" asks a delay of about 0 ms, a check no scheme can
    pass (ns-3's drop-tail leaves switch1 empty)."""
    if not M.rtt_ms:
        return None, "no base RTT recorded"
    return all_of(*[ratio_ge(M, s, "delay_mean", M.rtt_ms, "mean delay (ms), >= 1 base RTT")
                    for s in ("pfifo", "red")])


def _fair_cubic_sack(M, s):
    """Fig. 3.3's "almost the same throughput": s's CUBIC/SACK goodput
    ratio at most max(1.30, fq_codel's + 0.05), fq_codel being what flow
    queueing reaches on the same link. Without fq_codel's runs (quick
    mode runs none) a ratio at most 1.30 passes whatever fq_codel would
    show; above it the claim is undecided, not failed."""
    fq = M.mean("fq_codel", "ratio:cubic/sack")
    if fq is not None:
        return ratio_le(M, s, "ratio:cubic/sack", max(1.30, fq + 0.05))
    ok, nums = ratio_le(M, s, "ratio:cubic/sack", 1.30)
    if ok is False:
        return None, nums + "; fq_codel not run, whose ratio + 0.05 may ask more"
    return ok, nums


def _low_delay_44(M, s):
    return ratio_le(M, s, "delay_mean", 0.6 * min(M.mean("pfifo", "delay_mean"),
                                                  M.mean("red", "delay_mean")),
                    "mean delay (ms), 0.6 x min(DT, RED)")


def _half_dt_delay(M, s):
    return ratio_le(M, s, "delay_mean", 0.5 * M.mean("pfifo", "delay_mean"),
                    "mean delay (ms), 0.5 x DT's")


def _tree_checks():
    """4.5, 4.6: the premise, fairness (depending on it) and delay."""
    return [
        premise("DT unfair", "[DT is less fair than the best]",
                lambda M, V: ratio_le(M, "pfifo", "jain", 0.95)),
        claim("FaLL top Jain", "DCTCP and FaLL get the highest fairness",
              lambda M, V: top_k(M, "jain", [V["FaLL"]], P4_of(V), 2, 0.02, ["dctcp"]),
              roles=["FaLL"], needs="DT unfair"),
        claim("DCTCP top Jain", "DCTCP and FaLL get the highest fairness",
              lambda M, V: top_k(M, "jain", ["dctcp"], P4_of(V), 2, 0.02, [V["FaLL"]]),
              roles=["FaLL"], own=False, needs="DT unfair"),
        claim("FaLL low delay", "DCTCP, Codel, and FaLL all get very low queuing delay",
              lambda M, V: _half_dt_delay(M, V["FaLL"]), roles=["FaLL"]),
        claim("DCTCP CoDel low delay", "DCTCP, Codel, and FaLL all get very low queuing delay",
              lambda M, V: all_of(*[_half_dt_delay(M, s) for s in ("dctcp", "kcodel")])),
    ]


def _util_45(M, V, s):
    """"better than other AQM schemes": ahead of each by more than the
    plan's lead (0.02), TIE within it (all near 1, no lead is possible,
    and a threshold above the rest + 0.02 could not pass); "similar to
    Drop-tail": within 0.03 of it."""
    return all_of(ratio_ge(M, s, "util", M.mean("pfifo", "util") - 0.03),
                  top_k(M, "util", [s], [s, "kcodel", V["AFCD"], "red"], k=1, tie=0.02))


_add(Figure(
    "4.5", 4, "tree, s1-s9 one CUBIC flow each: (a) Jain, (b) mean delay, (c) utilization",
    ["DCTCP and FaLL get the highest fairness among 9 competing long-lived TCP flows",
     "DCTCP, Codell, and FaLL all get very low queuing delay",
     "DCTCP and FaLL both get high link utilization better than other AQM schemes and similar "
     "to Drop-tail"],
    workload=wl_tree9, panels="jdu", **DCN,
    checks=_tree_checks() + [
        claim("FaLL utilization", "DCTCP and FaLL both get high link utilization better than "
              "other AQM schemes and similar to Drop-tail",
              lambda M, V: _util_45(M, V, V["FaLL"]), roles=["AFCD", "FaLL"]),
        claim("DCTCP utilization", "DCTCP and FaLL both get high link utilization better than "
              "other AQM schemes and similar to Drop-tail",
              lambda M, V: _util_45(M, V, "dctcp"), roles=["AFCD", "FaLL"], own=False),
    ],
    rate_notes="nine equal-RTT CUBIC flows may already be fair under DT (then PREMISE)"))

_add(Figure(
    "4.6", 4, "tree, 8 long flows + short flows from s8",
    ["DCTCP and FaLL again get the highest fairness",
     "DCTCP, Codell, and FaLL still get very low queuing delay",
     "FaLL gets similar link utilization to other peer solutions"],
    workload=wl_tree8_short, panels="jdu", **DCN,
    checks=_tree_checks() + [
        claim("utilization", "FaLL gets similar link utilization to other peer solutions",
              lambda M, V: near_mean(M, V["FaLL"], [s for s in P4_of(V) if s != V["FaLL"]],
                                     "util", 0.03), roles=["AFCD", "FaLL"]),
        report("FCT and N_long", "[short flows' completion times; FaLL's N over time]",
               lambda M, V: (None, "%s FCT p50 %s p99 %s ms, N_long mean %s" % (
                   V["FaLL"], _fmt(M.mean(V["FaLL"], "fct_p50"), "%.0f"),
                   _fmt(M.mean(V["FaLL"], "fct_p99"), "%.0f"),
                   _fmt(M.mean(V["FaLL"], "n_long"), "%.1f"))), roles=["FaLL"]),
    ],
    rate_notes="a sample is 2.2 KB here against 625 KB at 10 Gb/s: short flows are sampled "
               "and inflate FaLL's N (N_long reported)"))


def near_mean(M, s, others, metric, margin):
    vals = [M.mean(o, metric) for o in others]
    vals = [v for v in vals if v is not None]
    v = M.mean(s, metric)
    if v is None or not vals:
        return None, "%s: no data" % s
    m = sum(vals) / len(vals)
    return abs(v - m) <= margin, "%s %s %s, the peers' mean %s (asked within %s)" % (
        s, metric, _fmt(v), _fmt(m), _fmt(margin))


_add(Figure(
    "4.7", 4, "tree, 8 senders x 5 long flows (40) + short flows from s8",
    ["DCTCP and FaLL again get the highest fairness",
     "DCTCP and FaLL both get very low queuing delay",
     "FaLL gets a high link utilization similar to Drop-tail"],
    workload=wl_tree40_short, panels="jdu", **DCN,
    checks=[
        claim("FaLL top Jain", "DCTCP and FaLL again get the highest fairness",
              lambda M, V: top_k(M, "jain", [V["FaLL"]], P4_of(V), 2, 0.02, ["dctcp"]),
              roles=["FaLL"]),
        claim("DCTCP top Jain", "DCTCP and FaLL again get the highest fairness",
              lambda M, V: top_k(M, "jain", ["dctcp"], P4_of(V), 2, 0.02, [V["FaLL"]]),
              roles=["FaLL"], own=False),
        claim("FaLL lowest delay", "DCTCP and FaLL both get very low queuing delay",
              lambda M, V: top_k(M, "delay_mean", [V["FaLL"]], P4_of(V), 2, 0.5, ["dctcp"],
                                 higher=False), roles=["FaLL"]),
        claim("DCTCP lowest delay", "DCTCP and FaLL both get very low queuing delay",
              lambda M, V: top_k(M, "delay_mean", ["dctcp"], P4_of(V), 2, 0.5, [V["FaLL"]],
                                 higher=False), roles=["FaLL"], own=False),
        claim("utilization", "FaLL gets a high link utilization similar to Drop-tail",
              lambda M, V: ratio_ge(M, V["FaLL"], "util",
                                    M.mean("pfifo", "util") - 0.03), roles=["FaLL"]),
    ],
    rate_notes="~19 packets per flow, at 10 Gb/s and stretched alike"))

_add(Figure(
    "4.8", 4, "staggered starts: 20 flows from t = 0, 20 from half-time, short flows from s8",
    ["FaLL achieves the highest fairness", "FaLL gets the lowest queuing delay",
     "FaLL gets very high link utilization similar to Drop-tail"],
    workload=wl_staggered, panels="jdu", **DCN,
    jain_window=lambda d: (d / 2 + 5.0, d),
    checks=[
        claim("highest Jain", "FaLL achieves the highest fairness",
              lambda M, V: top_k(M, "jain", [V["FaLL"]], P4_of(V), 1, 0.02), roles=["FaLL"]),
        claim("lowest delay", "FaLL gets the lowest queuing delay",
              lambda M, V: top_k(M, "delay_mean", [V["FaLL"]], P4_of(V), 1,
                                 0.1 * (M.rtt_ms or 0), higher=False), roles=["FaLL"]),
        claim("utilization", "FaLL gets very high link utilization similar to Drop-tail",
              lambda M, V: ratio_ge(M, V["FaLL"], "util",
                                    M.mean("pfifo", "util") - 0.03), roles=["FaLL"]),
        report("convergence", "[time the late group takes to reach 50 % of its fair share]",
               lambda M, V: (None, ", ".join("%s %s s" % (s, _fmt(M.mean(s, "t_half"), "%.1f"))
                                             for s in P4_of(V))), roles=["FaLL"]),
    ],
    rate_notes="Jain over the second half of the run (after the late group's start + 5 s)"))

BY_ID_37 = next(f for f in FIGURES if f.id == "3.7")
BY_ID_43 = next(f for f in FIGURES if f.id == "4.3")


# ---- remedies: the plan's own, where the scaled rate breaks a premise -------------
REMEDIES = [
    Figure("3.7-480", 3, "remedy for 3.7: 10 CUBIC + 10 HSTCP + 10 TCP-SACK at 480 ms",
           ["(REPRODUCTION.md, fig. 3.7: 'a labelled variant restores per-flow windows near "
            "100 packets: RTT 480 ms')"] + BY_ID_37.quotes,
           workload=wl_thirty, panels="jdu", cell="wan", rtt_ms=lambda r: 480.0,
           buffer_bdp=1.0, target_ms=lambda r: 5.0, interval_ms=lambda r: 100.0,
           checks=_many_checks() + [c for c in BY_ID_37.checks if c.id == "throughput"],
           rate_notes="a 4x RTT gives each flow 4x the window of 3.7 at the same rate",
           remedy_of="3.7"),
] + [
    Figure("4.3-b%d" % b, 4, "remedy for 4.3: drop-tail's buffer at %d BDP" % b,
           ["(REPRODUCTION.md, fig. 4.3: 'if not, sweep pfifo's buffer once over {1, 2, 4, 8} "
            "BDP')"] + BY_ID_43.quotes, workload=wl_outcast, panels="bars",
           checks=[premise("outcast", "Drop-tail creates the TCP outcast problem",
                           lambda M, V: ratio_le(M, "pfifo", "ratio:s2/s1each", 0.5,
                                                 "flow 7 / mean of flows 1-6"))] +
           [c for c in BY_ID_43.checks if c.needs == "outcast"],
           cell="dcn", rtt_ms=lambda r: 0.1 * k_of(r), buffer_bdp=float(b),
           target_ms=lambda r: 1.0 * k_of(r), interval_ms=lambda r: 5.0 * k_of(r),
           remedy_of="4.3")
    for b in (1, 2, 4)]
ALL = FIGURES + REMEDIES
BY_ID = {f.id: f for f in ALL}
CH3 = [f.id for f in FIGURES if f.chapter == 3]
CH4 = [f.id for f in FIGURES if f.chapter == 4]


def select(spec):
    """FIG[,FIG..] | ch3 | ch4 | all | remedies -> [Figure] (unknown ids:
    ValueError); all is the 14 figures, without the remedies."""
    out = []
    for part in spec.split(","):
        part = part.strip().lower().replace("fig", "")
        ids = CH3 if part == "ch3" else CH4 if part == "ch4" else \
            CH3 + CH4 if part == "all" else \
            [f.id for f in REMEDIES] if part == "remedies" else [part]
        for i in ids:
            if i not in BY_ID:
                raise ValueError("no figure %r (figures: %s)" % (i, ", ".join(BY_ID)))
            if BY_ID[i] not in out:
                out.append(BY_ID[i])
    return out
