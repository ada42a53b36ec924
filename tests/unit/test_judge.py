# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The reproduction's judge on synthetic results (no root, no VM): ties,
invalid runs, a premise that fails, a claim that fails, the text's variant
against the project's, and the report written from JSON alone."""
import json
import os
import subprocess

import pytest

from testbed import figures as F
from testbed import judge, reproduce

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

R = 35.0


def _flow(name, group, mbps, cc="cubic", start=0.0, dur=120.0):
    """A flow whose server saw mbps all along (0.5 s intervals)."""
    ser = [(t / 2, t / 2 + 0.5, mbps * 1e6) for t in range(int(2 * start), int(2 * dur))]
    return {"name": name, "group": group, "cc": cc, "proto": "tcp", "start_s": start,
            "series": ser, "client": {}}


def _run(fid, scheme, rep, flows, delay=(5.0, 4.0, 12.0), valid=True, why=(), dur=120.0,
         warm=20.0, **extra):
    r = {"scenario": "fig" + fid, "scheme": scheme, "repeat": rep, "rate_mbit": R,
         "rtt_ms": 120.0, "duration_s": dur, "warmup_s": warm, "flows": flows,
         "backlog_delay_ms": {"mean": delay[0], "p50": delay[1], "p99": delay[2]},
         "backlog_samples": [], "cpu": {"guest_busy": 0.5}, "valid": valid,
         "invalid_reasons": list(why), "kernel": "6.1.0-test"}
    r.update(extra)
    return r


def _cubic_sack(fid, scheme, rep, cubic, sack, **kw):
    return _run(fid, scheme, rep, [_flow("cubic", "cubic", cubic),
                                   _flow("sack", "sack", sack, "reno")], **kw)


def _fig33(ratios, delays=None, reps=3, invalid=()):
    """3.3's runs: for each scheme the CUBIC/SACK goodput ratio (sum R)."""
    runs = []
    for s, q in ratios.items():
        for k in range(1, reps + 1):
            c = R * q / (1 + q)
            d = (delays or {}).get(s, (5.0, 4.0, 12.0))
            runs.append(_cubic_sack("3.3", s, k, c, R - c, delay=d,
                                    valid=(s, k) not in invalid,
                                    why=["guest CPU saturated"] if (s, k) in invalid else ()))
    return runs


BASE33 = {"pfifo": 2.6, "red": 1.8, "sfb": 1.6, "kcodel": 1.8, "afd": 1.1, "afcd-paper": 1.2,
          "afcd": 1.1, "fall": 1.1, "fq_codel": 1.05}
DELAY33 = {"pfifo": (80, 80, 97), "red": (20, 20, 30), "sfb": (20, 20, 30), "afd": (25, 25, 40),
           "kcodel": (2, 1.5, 8), "afcd-paper": (2.5, 2, 9), "afcd": (3, 2.5, 9.5),
           "fall": (3, 2.5, 10), "fq_codel": (1, 0.8, 4)}


def _checks(v, variant=None):
    return {(c["id"], c["variant"]): c["verdict"] for c in v["checks"]
            if variant is None or c["variant"] in (variant, "both")}


def test_fig33_passes_when_the_numbers_say_so():
    """Expected result: unfair baselines (premise holds), AFQ and AFCD near
    1, SFB between DT and AFCD, DT's delay high and AFCD's near CoDel's:
    every claim PASS for both variants, one report."""
    v, _ = judge.judge_figure(F.BY_ID["3.3"], _fig33(BASE33, DELAY33), 3)
    assert v["verdict"]["text"] == "PASS" and v["verdict"]["project"] == "PASS", v
    assert all(c["verdict"] in ("PASS", "REPORT") for c in v["checks"]), v["checks"]


def test_a_failed_premise_blocks_only_the_claims_that_need_it():
    """Expected result: DT fair (ratio 1.1 < 1.5): the claims that need the
    premise (AFCD fair, AFQ fair, SFB in between) are PREMISE, not judged,
    and counted as blocked; the delay claims, which do not need it, are
    judged; the verdict comes from them (PASS), not PREMISE."""
    v, _ = judge.judge_figure(F.BY_ID["3.3"], _fig33(dict(BASE33, pfifo=1.1), DELAY33), 3)
    ch = _checks(v)
    assert ch[("unfair baselines", "both")] == "FAIL"
    assert ch[("AFCD fair", "text")] == "PREMISE" and ch[("AFQ fair", "both")] == "PREMISE"
    assert ch[("delay AFCD", "text")] == "PASS" and ch[("delay DT", "both")] == "PASS"
    assert v["verdict"]["text"] == "PASS" and v["verdict"]["project"] == "PASS"
    assert v["verdict"]["claims"]["text"] == {"pass": 1, "fail": 0, "tie": 0, "premise": 1,
                                              "undecided": 0}


def test_every_own_claim_blocked_is_premise():
    """Expected result (fig. 3.5): CUBIC not starved under DT: AFCD's
    fairness claim is blocked; with its delay claim not decided either
    (kcodel not run), the verdict is PREMISE."""
    runs = _fig35({"pfifo": 0.3, "red": 0.03, "kcodel": 0.03, "sfb": 0.45, "afd": 0.45,
                   "afcd-paper": 0.46, "afcd": 0.46, "fall": 0.46, "fq_codel": 0.48})
    runs = [r for r in runs if r["scheme"] != "kcodel"]
    v, _ = judge.judge_figure(F.BY_ID["3.5"], runs, 3)
    assert v["verdict"]["text"] == "PREMISE", v["verdict"]


def test_only_own_claims_decide():
    """Expected result (fig. 3.5): the baselines do what the text says (SFB
    and AFQ fair, DT's delay large: PASS), the text's AFCD fails both of
    its own claims (unfair, delay far above CoDel's): its verdict is FAIL,
    not PARTIAL; the baselines' PASSes are listed on their own."""
    runs = _fig35({"pfifo": 0.02, "red": 0.03, "kcodel": 0.03, "sfb": 0.45, "afd": 0.45,
                   "afcd-paper": 0.11, "afcd": 0.46, "fall": 0.46, "fq_codel": 0.48},
                  slow={"afcd-paper"})
    v, _ = judge.judge_figure(F.BY_ID["3.5"], runs, 3)
    ch = _checks(v)
    assert ch[("SFB fair", "both")] == "PASS" and ch[("AFQ fair", "both")] == "PASS"
    assert ch[("AFCD fair", "text")] == "FAIL" and ch[("delay AFCD", "text")] == "FAIL"
    assert v["verdict"]["text"] == "FAIL" and v["verdict"]["project"] == "PASS"
    md = judge.figure_markdown(F.BY_ID["3.5"], v, judge.Metrics(F.BY_ID["3.5"], runs, 3),
                               ["sfb", "afcd-paper"], {"rate_mbit": R})
    own = md[md.index("Claims about AFCD and FaLL"):md.index("Claims about the baselines")]
    assert "AFCD fair" in own and "SFB fair" not in own


def test_text_fails_project_passes():
    """Expected result: the text's AFCD as unfair as CoDel (2.0) and the
    project's fair: AFCD's claims FAIL for the text's variant and PASS for
    the project's; the summary says both."""
    v, _ = judge.judge_figure(F.BY_ID["3.3"], _fig33(dict(BASE33, **{"afcd-paper": 2.0}),
                                                     DELAY33), 3)
    assert _checks(v)[("AFCD fair", "text")] == "FAIL"
    assert _checks(v)[("AFCD fair", "project")] == "PASS"
    assert v["verdict"]["text"] == "PARTIAL" and v["verdict"]["project"] == "PASS"
    assert judge.combined(v["verdict"]) == "PARTIAL; project PASS"


def test_invalid_runs_do_not_count():
    """Expected result: 2 of AFCD's 3 runs invalid leave 1 valid run, fewer
    than the 2 a scheme needs: AFCD's claims are INCONCLUSIVE (not PASS on
    the one run, not FAIL); with 2 valid of 3 they are judged on those."""
    inv = {("afcd-paper", 1), ("afcd-paper", 2)}
    v, M = judge.judge_figure(F.BY_ID["3.3"], _fig33(BASE33, DELAY33, invalid=inv), 3)
    assert _checks(v)[("AFCD fair", "text")] == "INCONCLUSIVE"
    assert M.stat("afcd-paper", "ratio:cubic/sack")[2] == 1
    v, M = judge.judge_figure(F.BY_ID["3.3"], _fig33(BASE33, DELAY33,
                                                     invalid={("afcd-paper", 3)}), 3)
    assert _checks(v)[("AFCD fair", "text")] == "PASS"
    assert M.stat("afcd-paper", "ratio:cubic/sack")[2] == 2


def test_invalid_everywhere_is_invalid():
    """Expected result: every run invalid: no claim can be decided and the
    verdict is INVALID, not a FAIL."""
    inv = {(s, k) for s in BASE33 for k in (1, 2, 3)}
    v, _ = judge.judge_figure(F.BY_ID["3.3"], _fig33(BASE33, DELAY33, invalid=inv), 3)
    assert v["verdict"]["text"].startswith("INVALID"), v["verdict"]


def _jdu_runs(fid, jains, delays, utils, reps=3, jitter=0.0):
    """Runs of a Jain/delay/utilization figure with given means (three
    flows whose goodputs give the Jain index and the utilization)."""
    runs = []
    for s in jains:
        for k in range(1, reps + 1):
            j = jains[s] + (jitter if k == 1 else -jitter if k == 2 else 0.0)
            u = utils[s] * R
            # goodputs a, b, b with Jain j: solve for the share x of the first flow
            best = min(((abs(_j3(x) - j), x) for x in [i / 1000 for i in range(334, 1000)]))[1]
            fl = [_flow("cubic", "cubic", u * best),
                  _flow("hstcp", "hstcp", u * (1 - best) / 2, "highspeed"),
                  _flow("sack", "sack", u * (1 - best) / 2, "reno")]
            d = delays[s]
            runs.append(_run(fid, s, k, fl, delay=(d, d, 2 * d)))
    return runs


def _j3(x):
    a, b = x, (1 - x) / 2
    return (a + 2 * b) ** 2 / (3 * (a * a + 2 * b * b))


def test_a_tie_is_a_tie_not_a_pass():
    """Expected result (fig. 3.6, "AFQ and AFCD get the highest Jain's
    index"): AFCD's Jain 0.94 against SFB's 0.955, within the stated 0.02:
    TIE, not PASS; at 0.98 it leads SFB by 0.025: PASS; at 0.90, 0.055
    behind: FAIL; and runs spread by +-0.04 widen the margin (2 x the pooled
    sd) so that 0.90 is a TIE again. AFQ (0.95, SFB ahead by 0.005) is a TIE
    in the baselines' table and decides nothing."""
    S = ["pfifo", "red", "sfb", "kcodel", "afd", "afcd-paper", "afcd", "fall", "fq_codel"]
    jains = dict(zip(S, [0.70, 0.80, 0.955, 0.80, 0.95, 0.94, 0.96, 0.96, 0.99]))
    delays = dict(zip(S, [80, 20, 20, 2, 25, 3, 3, 3, 1]))
    utils = dict(zip(S, [0.95, 0.9, 0.9, 0.85, 0.9, 0.88, 0.9, 0.9, 0.95]))

    def top(j, jitter=0.0):
        v, _ = judge.judge_figure(F.BY_ID["3.6"], _jdu_runs("3.6", j, delays, utils,
                                                            jitter=jitter), 3)
        return v
    v = top(jains)
    assert _checks(v)[("AFCD top Jain", "text")] == "TIE", v["checks"]
    assert _checks(v)[("AFQ top Jain", "text")] == "TIE"
    nums = {(c["id"], c["variant"]): c["numbers"] for c in v["checks"]}
    assert "afcd-paper leads sfb by -0.01" in nums[("AFCD top Jain", "text")]
    assert "(tie margin 0.020)" in nums[("AFCD top Jain", "text")]
    assert _checks(top(dict(jains, **{"afcd-paper": 0.98})))[("AFCD top Jain", "text")] == "PASS"
    jains["afcd-paper"] = 0.90
    assert _checks(top(jains))[("AFCD top Jain", "text")] == "FAIL"
    assert _checks(top(jains, jitter=0.04))[("AFCD top Jain", "text")] == "TIE"


def _fig35(shares, slow=()):
    """3.5's runs: CUBIC's share of R per scheme, UDP the rest of 0.97 R;
    the delay of the CoDel-like schemes 2 ms (20 ms for those in slow and
    the rest)."""
    runs = []
    for s, c in shares.items():
        for k in (1, 2, 3):
            fl = [_flow("cubic", "cubic", c * R), _flow("udp", "udp", (0.97 - c) * R)]
            fl[1]["proto"], fl[1]["cc"] = "udp", None
            d = 2.0 if s in ("kcodel", "afcd-paper", "afcd", "fall", "fq_codel") and \
                s not in slow else 20.0
            runs.append(_run("3.5", s, k, fl, delay=(d, d, 2 * d)))
    return runs


def test_a_claim_that_fails():
    """Expected result (fig. 3.5): UDP keeps 90 % under the text's AFCD:
    "AFCD fair" FAILS for the text's variant, the others hold, so the
    text's verdict is PARTIAL; the metrics show CUBIC's share."""
    runs = []
    shares = {"pfifo": 0.02, "red": 0.03, "kcodel": 0.03, "sfb": 0.45, "afd": 0.45,
              "afcd-paper": 0.05, "afcd": 0.46, "fall": 0.46, "fq_codel": 0.48}
    for s, c in shares.items():
        for k in (1, 2, 3):
            fl = [_flow("cubic", "cubic", c * R), _flow("udp", "udp", (0.97 - c) * R)]
            fl[1]["proto"], fl[1]["cc"] = "udp", None
            d = 2.0 if s in ("kcodel", "afcd-paper", "afcd", "fall", "fq_codel") else 20.0
            runs.append(_run("3.5", s, k, fl, delay=(d, d, 2 * d)))
    v, M = judge.judge_figure(F.BY_ID["3.5"], runs, 3)
    assert _checks(v)[("AFCD fair", "text")] == "FAIL"
    assert _checks(v)[("AFCD fair", "project")] == "PASS"
    assert v["verdict"]["text"] == "PARTIAL" and v["verdict"]["project"] == "PASS"
    assert abs(M.mean("afcd-paper", "share:cubic") - 0.05) < 1e-6
    # the failed check's line gives the number and the bound it missed
    nums = {(c["id"], c["variant"]): c["numbers"] for c in v["checks"]}
    assert "afcd-paper CUBIC / R 0.050 (asked >= 0.400)" in nums[("AFCD fair", "text")]


def test_staggered_window_and_convergence():
    """Expected result (fig. 4.8's metrics): Jain over the second half only
    (the late flows absent from the first half do not count against it),
    and the late group's time to half its fair share."""
    dur = 60.0
    fl = [_flow("early1.%d" % i, "early1", R / 3, dur=dur) for i in range(2)]
    late = _flow("late5.0", "late5", R / 3, start=30.0, dur=dur)
    for i, iv in enumerate(late["series"]):   # ramps up over 4 s
        late["series"][i] = (iv[0], iv[1], min(1.0, (iv[0] - 30.0) / 4.0) * R / 3 * 1e6)
    res = _run("4.8", "fall", 1, fl + [late], dur=dur, warm=10.0)
    m = judge.metrics(res, F.BY_ID["4.8"])
    assert abs(m["jain"] - 1.0) < 1e-6, m["jain"]
    assert 1.0 <= m["t_half"] <= 3.0, m["t_half"]


def test_report_from_json_alone(tmp_path):
    """Expected result: --judge on a directory of run JSONs (no VM) writes
    the figure's markdown with the verdicts, its verdict.json, the top
    report with the tally; figures without runs are NOT-RUN; judging twice
    gives the same verdicts; a chapter's rate is "calibrated" or "given"
    by its own run (rate_arg3), not by the other chapter's; a page says
    how many repeats its runs hold (5: a later batch added seeds), not the
    context's first batch's (3)."""
    d = tmp_path / "fig3.3"
    d.mkdir()
    for r in _fig33(BASE33, DELAY33, reps=5):
        (d / ("fig3.3-%s-r%d.json" % (r["scheme"], r["repeat"]))).write_text(json.dumps(r))
    (tmp_path / "context.json").write_text(json.dumps({"mode": "default", "rate3": R,
                                                       "kernel": "6.1.0-test",
                                                       "schemes": "default", "repeats": 3,
                                                       "rate_arg": "8", "rate_arg3": "auto"}))
    figs = F.select("3.3,3.4,3.5")
    rows = reproduce.judge_all(figs, str(tmp_path))
    by = {r["figure"]: r["verdict"] for r in rows}
    assert by["3.3"]["text"] == "PASS" and by["3.5"]["text"] == "NOT-RUN"
    md = (tmp_path / "fig3.3" / "fig3.3.md").read_text()
    assert "Scaled reproduction, not a 10 Gb/s replication" in md
    assert "| AFCD fair: " in md and "35 Mbit/s (calibrated)" in md
    assert "5 repeat(s) of 120.0 s" in md
    top = (tmp_path / "reproduction.md").read_text()
    assert "PASS" in top and "NOT-RUN" in top and "**Tally** (the 3 figures judged here)" in top
    again = reproduce.judge_all(figs, str(tmp_path))
    assert [r["verdict"] for r in again] == [r["verdict"] for r in rows]
    assert os.path.exists(tmp_path / "fig3.3" / "verdict.json")
    # judging one figure keeps the others' last verdicts in the top report
    reproduce.judge_all(F.select("3.5"), str(tmp_path))
    top = (tmp_path / "reproduction.md").read_text()
    assert "[3.3](fig3.3/fig3.3.md)" in top and "[3.4](fig3.4/fig3.4.md)" in top, top
    tally = json.loads((tmp_path / "reproduction.json").read_text())["tally"]
    assert sum(tally["text"]["figures"].values()) == 3, tally
    assert tally["text"]["figures"]["PASS"] == 1 and tally["text"]["figures"]["NOT-RUN"] == 2
    assert tally["text"]["claims"]["pass"] == 2 and tally["text"]["claims"]["fail"] == 0
    assert "2 passed, 0 failed, 0 tied" in top


def test_judge_dir_judges_the_figures_it_holds(tmp_path):
    """Expected result: without named figures, --judge DIR judges only the
    figures DIR holds runs of (fig. 3.4 on fig. 3.3's) or a page of, so
    a directory of a few figures gets no NOT-RUN page for the others; an
    empty directory is one clear error that writes nothing."""
    d = tmp_path / "fig3.3"
    d.mkdir()
    for r in _fig33(BASE33, DELAY33):
        (d / ("fig3.3-%s-r%d.json" % (r["scheme"], r["repeat"]))).write_text(json.dumps(r))
    assert [f.id for f in reproduce.judged_here(F.select("all"), str(tmp_path))] == \
        ["3.3", "3.4"]
    (tmp_path / "fig4.5").mkdir()
    (tmp_path / "fig4.5" / "verdict.json").write_text("{}")
    assert [f.id for f in reproduce.judged_here(F.select("all"), str(tmp_path))] == \
        ["3.3", "3.4", "4.5"]
    empty = tmp_path / "empty"
    empty.mkdir()
    p = subprocess.run([os.path.join(ROOT, "tools", "afcd-testbed"), "reproduce", "--judge", str(empty)],
                       capture_output=True, text=True)
    assert p.returncode != 0 and "no runs of any figure" in p.stderr, p.stderr
    assert os.listdir(empty) == []


def test_run_dates_group_the_schemes():
    """Expected result: the report says on which days each scheme's runs
    were made and from which commit, or that the runs did not record one
    (all or some of them), schemes of
    the same together, so that runs of two datapaths side by side are
    visible, and the guest kernel of each where the runs had more than
    one; no dates, no line."""
    runs = _fig33(BASE33, DELAY33)
    for r in runs:
        r["date"] = "2026-11-26 06:10" if r["scheme"].startswith("afcd") else "2026-11-24 12:00"
        if r["scheme"] == "afcd":
            r["code"] = "ff00701aa0b1"
    runs[-1]["date"] = "2026-11-25 09:00"     # fq_codel's third run a day later
    M = judge.Metrics(F.select("3.3")[0], runs, 3)
    d = judge.run_dates(M, ["pfifo", "afcd-paper", "afcd", "fq_codel"])
    assert d == ("2026-11-24, commit not recorded (drop-tail); "
                 "2026-11-24 to 2026-11-25, commit not recorded (fq_codel); "
                 "2026-11-26, commit ff00701aa0b1 (AFCD); "
                 "2026-11-26, commit not recorded (AFCD (text))"), d
    next(r for r in runs if r["scheme"] == "afcd").pop("code")
    d = judge.run_dates(M, ["afcd"])
    assert d == "2026-11-26, commit ff00701aa0b1, 1 run with none (AFCD)", d
    next(r for r in runs if r["scheme"] == "afcd")["code"] = "ff00701aa0b1"
    for r in runs:
        r["kernel"] = "6.1.0-57-amd64" if r["scheme"] == "afcd" else "6.1.0-56-amd64"
    d = judge.run_dates(M, ["pfifo", "afcd"])
    assert d == ("2026-11-24, commit not recorded, kernel 6.1.0-56-amd64 (drop-tail); "
                 "2026-11-26, commit ff00701aa0b1, kernel 6.1.0-57-amd64 (AFCD)"), d
    assert judge.kernels_of({}, runs) == "6.1.0-56-amd64 and 6.1.0-57-amd64"
    assert judge.kernels_of({"kernel": "A", "batches": [{"kernel": "B"}, {}]}) == "A and B"
    assert judge.kernels_of({}) == "?"
    for r in runs:
        del r["date"]
    assert judge.run_dates(judge.Metrics(F.select("3.3")[0], runs, 3), ["pfifo"]) == ""


def test_no_check_that_cannot_pass():
    """Expected result (fig. 3.6): with RED at 0.98, "AFCD's Jain >= the
    best of DT, RED, CoDel + 0.03" would ask 1.01: the premise that leaves
    room for the lead fails and the claim is PREMISE, never a FAIL that no
    result could have avoided."""
    S = ["pfifo", "red", "sfb", "kcodel", "afd", "afcd-paper", "afcd", "fall", "fq_codel"]
    jains = dict(zip(S, [0.70, 0.98, 0.955, 0.80, 0.95, 0.999, 0.999, 0.999, 0.99]))
    delays = dict(zip(S, [80, 20, 20, 2, 25, 3, 3, 3, 1]))
    utils = dict(zip(S, [0.95, 0.9, 0.9, 0.85, 0.9, 0.88, 0.9, 0.9, 0.95]))
    v, _ = judge.judge_figure(F.BY_ID["3.6"], _jdu_runs("3.6", jains, delays, utils), 3)
    assert _checks(v)[("room above DT RED CoDel", "both")] == "FAIL"
    assert _checks(v)[("AFCD above DT RED CoDel", "text")] == "PREMISE"


def test_better_utilization_near_the_link_is_a_tie():
    """Expected result (fig. 4.5, "FaLL ... high link utilization better
    than other AQM schemes and similar to Drop-tail"): with every scheme at
    0.98-0.99 of the link no lead of 0.02 is possible, so FaLL at 0.99
    against CoDel's 0.98 is a TIE (a threshold of the best other + 0.02
    asked 1.00 and more, a FAIL no result could avoid); 0.05 behind the
    best other AQM it FAILs; 0.03 ahead of every other AQM and within 0.03
    of drop-tail it PASSes."""
    S = ["pfifo", "red", "dctcp", "kcodel", "afcd-paper", "fall-paper", "afcd", "fall"]
    jains = dict(zip(S, [0.99] * 8))
    delays = dict(zip(S, [8, 5, 1, 7, 9, 8, 4, 1]))

    def util_of(fall, others=0.98):
        u = dict(zip(S, [0.99, others, 0.99, others, others, fall, others, fall]))
        v, _ = judge.judge_figure(F.BY_ID["4.5"], _jdu_runs("4.5", jains, delays, u), 3)
        return _checks(v)[("FaLL utilization", "project")]
    assert util_of(0.99) == "TIE"
    assert util_of(0.93) == "FAIL"
    assert util_of(0.96, others=0.93) == "PASS"


def test_cpu_within_ten_percent_of_codels():
    """Expected result (fig. 3.10): guest CPU 0.50 against CoDel's 0.40 is
    25 % above it: FAIL (the absolute +-0.10 it was judged with passed it);
    0.43 is within 10 %: PASS."""
    from testbed.figures import near_rel

    class M:
        v = {}

        def mean(self, s, metric):
            return self.v[s]
    M.v = {"afcd": 0.50, "kcodel": 0.40}
    assert near_rel(M(), "afcd", "kcodel", "guest_cpu", 0.10)[0] is False
    M.v["afcd"] = 0.43
    assert near_rel(M(), "afcd", "kcodel", "guest_cpu", 0.10)[0] is True


def test_a_dctcp_run_without_marks_is_invalid_by_rule():
    """Expected result (fig. 4.3's Y-shape): two DCTCP runs whose bottleneck
    marked nothing are invalid by rule, listed with the rule in the report,
    and DCTCP's one run left is too few to judge it (its claim is
    INCONCLUSIVE, not PASS on drop-tail's behaviour); the baselines' lines
    say DCTCP did not mark and CoDel's law never dropped."""
    runs = []
    for s in ("pfifo", "red", "dctcp", "kcodel", "afcd-paper", "fall-paper", "afcd", "fall"):
        for k in (1, 2, 3):
            seven = R / 30 if s in ("pfifo", "red") else R / 7     # the outcast premise
            fl = [_flow("s1.%d" % i, "s1", R / 7) for i in range(6)] + [_flow("s2", "s2", seven)]
            r = _run("4.3", s, k, fl, rtt_ms=28.6)
            if s == "dctcp":
                r["afcd_stats"] = {"queue": {"ce_threshold_mark": 0 if k < 3 else 57}}
            if s == "kcodel":
                r["qdisc_stats"] = [{"kind": "htb"}, {"kind": "codel", "drops": 40,
                                                      "drop_overlimit": 40, "ecn_mark": 0}]
            runs.append(r)
    v, M = judge.judge_figure(F.BY_ID["4.3"], runs, 3)
    assert [(s, k) for s, k, _ in M.excluded] == [("dctcp", 1), ("dctcp", 2)]
    assert len(M.valid["dctcp"]) == 1
    assert _checks(v)[("DCTCP fair", "both")] == "INCONCLUSIVE"
    md = judge.figure_markdown(F.BY_ID["4.3"], v, M, ["dctcp", "kcodel"], {"rate_mbit": R})
    assert "DCTCP run 1: DCTCP marked no packet" in md
    assert "DCTCP: CE marks per run: 0, 0, 57 (did not behave as itself in 2 of 3)" in md
    assert "CoDel: drops by CoDel's law (beyond the limit's) per run: 0, 0, 0" in md


def test_premises_are_the_plans():
    """Expected result: a figure has the premises REPRODUCTION.md gives it
    and no other (3.8 and 3.9 inherited 3.7's, which the plan never gave
    them), but for 3.6's room for a 0.03 lead and 4.4's queue under
    drop-tail and RED, without which one of their claims could never pass;
    every claim that needs a premise names one of its own figure's."""
    want = {"3.3": ["unfair baselines"], "3.4": ["cwnd unfair"], "3.5": ["CUBIC starved"],
            "3.6": ["DT unfair", "room above DT RED CoDel"], "3.7": ["CUBIC ahead"], "3.8": [], "3.9": [], "3.10": [],
            "4.3": ["outcast"], "4.4": ["DT RED queue"], "4.5": ["DT unfair"], "4.6": ["DT unfair"],
            "4.7": [], "4.8": []}
    for f in F.FIGURES:
        prem = [c.id for c in f.checks if c.kind == "premise"]
        assert prem == want[f.id], (f.id, prem)
        for c in f.checks:
            assert c.needs is None or c.needs in prem, (f.id, c.id, c.needs)


def test_remedies_are_labelled_and_left_out_of_the_tally():
    """Expected result: the remedies for premises (3.7 at 480 ms, 4.3's
    drop-tail buffer at 1, 2, 4 BDP) are selected by name or as
    "remedies", never by "all"; their rows are listed apart and counted in
    no tally."""
    ids = [f.id for f in F.select("remedies")]
    assert ids == ["3.7-480", "4.3-b1", "4.3-b2", "4.3-b4"]
    assert not set(ids) & {f.id for f in F.select("all")}
    v, _ = judge.judge_figure(F.BY_ID["3.7-480"], [], 3)
    md, tally = judge.summary_markdown([v], {})
    assert "**Remedies**" in md and "| 3.7 |" in md and "| its premises |" in md
    assert sum(tally["text"]["figures"].values()) == 0


def test_a_remedy_that_sets_up_the_premise_decides_the_claims():
    """Expected result: fig. 4.3's remedy at 1 BDP, where drop-tail starves
    flow 7 but RED does not (the figure's own premise would fail on RED):
    the remedy's premise (drop-tail only, as the plan's sweep) passes and
    fig. 4.3's claims are judged there: the text's AFCD with flow 7 at
    0.3 of R/7 FAILs, the project's PASSes, and the remedy still counts in
    no tally."""
    runs = []
    for s in ("pfifo", "red", "dctcp", "kcodel", "afcd-paper", "fall-paper", "afcd", "fall"):
        seven = {"pfifo": R / 30, "afcd-paper": 0.3 * R / 7}.get(s, R / 7)
        fl = [_flow("s1.%d" % i, "s1", R / 7) for i in range(6)] + [_flow("s2", "s2", seven)]
        runs.append(_run("4.3-b1", s, 1, fl, rtt_ms=1.0))
    fig = F.BY_ID["4.3-b1"]
    assert [c.id for c in fig.checks] == ["outcast", "DCTCP fair", "AFCD fair", "FaLL fair",
                                          "CoDel unfair"]
    v, _ = judge.judge_figure(fig, runs, 1)
    ch = _checks(v)
    assert ch[("outcast", "both")] == "PASS"
    assert ch[("AFCD fair", "text")] == "FAIL" and ch[("AFCD fair", "project")] == "PASS"
    assert v["verdict"]["text"] == "PARTIAL" and v["verdict"]["project"] == "PASS", v["verdict"]
    _, tally = judge.summary_markdown([v], {})
    assert sum(tally["project"]["figures"].values()) == 0


def test_the_summary_names_its_engine():
    """Expected result: a report of ns-3 runs says ns-3 and its frames,
    never TCG or a kernel; a report of VM runs names the kernel."""
    v, _ = judge.judge_figure(F.BY_ID["4.5"], [], 1)
    md, _ = judge.summary_markdown([v], {"engine": "ns3", "emulation": "ns-3 3.44, simulated",
                                         "mtu": 9000, "kernel": "ns-3 3.44", "mode": "quick"})
    first = md.splitlines()[2]
    assert first.startswith("Scaled simulation in ns-3 3.44") and "9000-byte" in first, first
    assert "TCG" not in first and "kernel" not in first, first
    md, _ = judge.summary_markdown([v], {"kernel": "6.1.0-56-amd64", "mode": "default"})
    assert md.splitlines()[2].startswith("Scaled TCG emulation") and "kernel 6.1.0-56" in md


def test_every_figure_is_registered_with_checks():
    """Expected result: the 14 figures of ch. 3-4, each with quotes, and a
    premise or claim for every one that has runs of its own."""
    assert [f.id for f in F.FIGURES] == ["3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9",
                                         "3.10", "4.3", "4.4", "4.5", "4.6", "4.7", "4.8"]
    for f in F.FIGURES:
        assert f.quotes and any(c.kind in ("premise", "claim") for c in f.checks), f.id
    runs, est = reproduce.plan(F.FIGURES, "default", "default")
    assert 8 * 3600 < est < 11 * 3600, est / 3600
    assert {s for _, s, _ in runs} >= {"pfifo", "red", "sfb", "kcodel", "afd", "afcd-paper",
                                       "fall-paper", "dctcp", "afcd", "fall", "fq_codel"}


def test_marks_of_ours_never_read_from_the_fq_under_it():
    """Expected result: a run of ours whose final counters went unread
    (afcd stats failed at its end under TCG) takes its marks from the last
    sample of the program's series, and with no sample is unrecorded
    (None: not excluded as 'marked no packet'), never the sch_fq's 0 under
    it; the kernel's qdiscs still count theirs. A DCTCP run of fig. 4.3
    marked 6,509 packets by 39.7 s and was excluded on fq's 0."""
    fq = [{"kind": "fq", "drops": 0}, {"kind": "clsact"}]
    ours = {"scheme": "dctcp", "loader_params": ["rate", "8mbit"], "afcd_stats": None,
            "qdisc_stats": fq,
            "afcd_series": [{"t": 1.0, "ce_threshold_mark": 10, "ecn_mark": 0},
                            {"t": 39.7, "ce_threshold_mark": 6509, "ecn_mark": 0}]}
    assert judge._marks(ours) == 6509 and judge.excluded_by_rule(ours) is None
    ours["afcd_series"] = []
    assert judge._marks(ours) is None and judge.excluded_by_rule(ours) is None
    kernel = {"scheme": "dctcp-k", "loader_params": None, "afcd_series": [],
              "qdisc_stats": [{"kind": "htb"}, {"kind": "codel", "ecn_mark": 0}]}
    assert judge._marks(kernel) == 0 and judge.excluded_by_rule(kernel)


def test_a_delay_claim_against_an_empty_queue_is_blocked():
    """Expected result (fig. 4.4, "Drop-tail and RED create huge queuing
    delay, whereas ... AFCD and FaLL control delay very well"): with
    drop-tail's mean delay at 0 ms (its queue at switch1 empty), "0.6 x
    min(DT, RED)" would ask 0 ms; the claim is blocked by its premise
    (PREMISE, not FAIL) while the throughput claims are still judged. With
    drop-tail and RED at 3 and 2 base RTTs of delay the premise holds, and
    AFCD/FaLL at a quarter of RED's pass."""
    S = ["pfifo", "red", "dctcp", "kcodel", "afcd-paper", "fall-paper", "afcd", "fall"]
    jains = dict(zip(S, [0.99] * 8))
    utils = dict(zip(S, [0.99, 0.99, 0.99, 0.99, 0.93, 0.99, 0.93, 0.99]))

    def judged(dt_ms):
        # 120 ms is the synthetic runs' base RTT
        delays = dict(zip(S, [dt_ms, 240, 20, dt_ms, 60, 60, 60, 60]))
        runs = _jdu_runs("4.3", jains, delays, utils)
        v, _ = judge.judge_figure(F.BY_ID["4.4"], runs, 3)
        return _checks(v), v["verdict"]
    c, verdict = judged(0.0)
    assert c[("DT RED queue", "both")] == "FAIL", c
    assert c[("AFCD FaLL low delay", "project")] == "PREMISE", c
    assert c[("FaLL high throughput", "project")] == "PASS", c
    assert verdict["project"] == "PASS", verdict
    c, verdict = judged(360.0)
    assert c[("DT RED queue", "both")] == "PASS", c
    assert c[("AFCD FaLL low delay", "project")] == "PASS", c


def test_a_reference_not_run_leaves_a_claim_undecided_not_failed():
    """Expected result (fig. 3.3, "AFQ and AFCD ... almost the same
    throughput": CUBIC/SACK at most max(1.30, fq_codel's + 0.05)): with
    fq_codel not run (quick mode), AFCD at 1.2 passes (no fq_codel result
    could ask less than 1.30) and AFCD at 1.8 is undecided, counted as such
    in the summary, not failed and not a crash; with fq_codel at 1.9 run,
    1.8 passes."""
    def judged(afcd, fq=None):
        ratios = {k: v for k, v in BASE33.items() if k not in ("fq_codel", "sfb")}
        ratios["afcd"] = afcd
        if fq is not None:
            ratios["fq_codel"] = fq
        v, _ = judge.judge_figure(F.BY_ID["3.3"], _fig33(ratios, DELAY33), 3)
        return v
    assert _checks(judged(1.2))[("AFCD fair", "project")] == "PASS"
    v = judged(1.8)
    assert _checks(v)[("AFCD fair", "project")] == "INCONCLUSIVE", _checks(v)
    assert v["verdict"]["claims"]["project"]["undecided"] == 1
    md, _ = judge.summary_markdown([v], {})
    assert "(+1 undecided)" in md, md
    assert _checks(judged(1.8, fq=1.9))[("AFCD fair", "project")] == "PASS"


def test_a_scheme_run_beside_the_set_is_in_the_table(tmp_path):
    """Expected result: a directory run in quick mode (no fq_codel) and
    then given fig. 3.3's fq_codel by a second batch: fq_codel's row is in
    the figure's table beside the quick set, since "AFCD fair" takes its
    threshold from it (asked <= its ratio + 0.05); a scheme with no run is
    "not run"."""
    d = tmp_path / "fig3.3"
    d.mkdir()
    ratios = dict(BASE33, fq_codel=1.5)
    for r in _fig33(ratios, DELAY33, reps=1):
        (d / ("fig3.3-%s-r1.json" % r["scheme"])).write_text(json.dumps(r))
    (tmp_path / "context.json").write_text(json.dumps({"mode": "quick", "rate3": R,
                                                       "schemes": "quick", "repeats": 1}))
    reproduce.judge_all(F.select("3.3"), str(tmp_path))
    md = (tmp_path / "fig3.3" / "fig3.3.md").read_text()
    assert "| fq_codel | " in md and "(asked <= 1.550)" in md, md
    (d / "fig3.3-sfb-r1.json").unlink()
    reproduce.judge_all(F.select("3.3"), str(tmp_path))
    md = (tmp_path / "fig3.3" / "fig3.3.md").read_text()
    assert "| SFB | - |" in md and "not run" in md


def test_a_second_batch_into_a_directory_keeps_the_first_and_is_listed(tmp_path):
    """Expected result: a batch of fig. 3.3's fq_codel run after a quick
    batch of figs. 3.3-3.4 into the same directory leaves the directory's
    mode, schemes (the set the judge plans for), repeats and start as the
    first batch set them, updates what the second changed (the chapter's
    rate), and lists both batches with their schemes and figures (and the
    kernel where given), each finished. A batch of another mode or engine is refused with the
    directory's reason and writes nothing."""
    out = str(tmp_path)
    reproduce.start_batch(out, [F.BY_ID["3.3"], F.BY_ID["3.4"]], mode="quick", schemes="quick",
                          engine="ns3", repeats=1, rate3=1000.0)
    reproduce.finish_batch(out)
    reproduce.start_batch(out, [F.BY_ID["3.3"]], mode="quick", schemes="fq_codel",
                          engine="ns3", repeats=3, rate3=500.0, kernel="ns-3 3.44")
    ctx = reproduce.finish_batch(out)
    assert "kernel" not in ctx["batches"][0] and ctx["batches"][1]["kernel"] == "ns-3 3.44"
    assert (ctx["mode"], ctx["schemes"], ctx["repeats"]) == ("quick", "quick", 1), ctx
    assert ctx["rate3"] == 500.0 and ctx["started"] == ctx["batches"][0]["started"], ctx
    assert [(b["schemes"], b["figures"], b["repeats"]) for b in ctx["batches"]] == \
        [("quick", "3.3,3.4", 1), ("fq_codel", "3.3", 3)], ctx["batches"]
    assert all("finished" in b for b in ctx["batches"]), ctx["batches"]
    before = (tmp_path / "context.json").read_text()
    assert "mode quick" in reproduce.batch_conflict(out, "default", "ns3")
    assert "engine ns3" in reproduce.batch_conflict(out, "quick", "vm")
    assert reproduce.batch_conflict(out, "quick", "ns3") is None
    with pytest.raises(ValueError):
        reproduce.start_batch(out, [F.BY_ID["3.3"]], mode="default", schemes="afcd", engine="ns3")
    assert (tmp_path / "context.json").read_text() == before


def test_ns3_runs_take_the_frames_asked_and_a_directory_keeps_one_size(tmp_path, monkeypatch):
    """Expected result: reproduce --engine ns3 with the VM's frames hands
    1514 to every run and records it as the directory's frame size (the
    report's header says it); a later batch with the text's 9014-byte
    frames into that directory is refused, naming the frame size, and
    writes nothing; without a size asked, the text's is the default. The
    estimate of --list grows with the packet rate, so 1514-byte frames
    cost more than 9014-byte ones."""
    from testbed import ns3
    seen = []

    def fake_run(name, scheme, rate, rtt_ms, dur, warm, wl, **kw):
        seen.append(kw["mtu"])
        return {"wall_s": 0.0, "sim_s": dur}
    monkeypatch.setattr(ns3, "available", lambda: "")
    monkeypatch.setattr(ns3, "run", fake_run)
    monkeypatch.setattr(reproduce.scenario, "one_line", lambda res: "")
    out = str(tmp_path)
    fig = [F.BY_ID["4.5"]]
    assert reproduce.run(fig, out, "smoke", "pfifo", False, "8", engine="ns3",
                         mtu=ns3.MTU_VM) == 0
    assert seen and set(seen) == {1514}, seen
    assert reproduce._context(out)[1]["mtu"] == 1514
    before = (tmp_path / "context.json").read_text()
    assert "mtu 1514" in reproduce.batch_conflict(out, "smoke", "ns3", ns3.MTU_TEXT)
    with pytest.raises(ValueError):
        reproduce.run(fig, out, "smoke", "pfifo", False, "8", engine="ns3", mtu=ns3.MTU_TEXT)
    assert (tmp_path / "context.json").read_text() == before
    seen.clear()
    assert reproduce.run(fig, str(tmp_path / "text"), "smoke", "pfifo", False, "8",
                         engine="ns3") == 0
    assert set(seen) == {ns3.MTU_TEXT}, seen
    assert ns3.wall_per_sim_s("4.5", "afcd", 8.0, ns3.MTU_VM) > \
        ns3.wall_per_sim_s("4.5", "afcd", 8.0, ns3.MTU_TEXT)


def test_an_ns3_report_states_the_tcp_its_runs_had():
    """Expected result: a figure's ns-3 report gives the TCP settings its
    runs recorded, each with every value the runs had (DCTCP's ECN on
    beside the others' off); runs that recorded none give no settings
    (None) and the report says they were not recorded, never a default;
    a VM report says nothing of ns-3's TCP. The figure's rate notes, whose
    numbers are for the VM's 25 Mbit/s, say so in a report at another
    rate, and only there."""
    tcp = {"segment_bytes": 8962, "delack_count": 2, "delack_ms": 40, "initial_cwnd": 10,
           "buf_bytes": 16777216, "rto_min_ms": 200, "sack": 1, "ecn": 0, "msl_s": 0.5}
    runs = [{"tcp": tcp}, {"tcp": dict(tcp, ecn=1)}, {}]
    line = judge.ns3_tcp(runs)
    assert "SACK on, ECN off/on" in line and "8962 bytes" in line, line
    assert "a delayed ACK per 2 segments or after 40 ms" in line, line
    assert "minimum RTO 200 ms" in line and "16777216 bytes" in line, line
    assert "SYN timeout 3000 ms (6 retries), 6 retries of a segment" in line, line
    new = dict(tcp, syn_timeout_ms=1000, syn_retries=6, data_retries=15)
    assert "SYN timeout 1000 ms (6 retries), 15 retries of a segment" in judge.ns3_tcp([{"tcp": new}])
    assert judge.ns3_tcp([{}, {"tcp": None}]) is None
    ctx = {"engine": "ns3", "rate_mbit": 1000.0, "rtt_ms": 120.0, "tcp": line}
    assert line in judge.banner(F.BY_ID["3.5"], ctx)
    assert "not recorded" in judge.banner(F.BY_ID["3.5"], dict(ctx, tcp=None))
    vm = judge.banner(F.BY_ID["3.5"], {"rate_mbit": 25.0, "rtt_ms": 120.0})
    assert "TCP" not in vm and "written for the VM's" not in vm, vm
    # the rate notes are written for the VM's rate: said so at any other rate
    assert "written for the VM's 25 Mbit/s and 1514-byte frames; this run: 1000 Mbit/s, " \
        "9014-byte" in judge.banner(F.BY_ID["3.5"], dict(ctx, mtu=9014))
    assert "written for" not in judge.banner(F.BY_ID["4.6"], {"rate_mbit": 8.0, "rtt_ms": 12.5})


def test_short_flows_that_never_complete_and_silent_long_flows_are_shown():
    """Expected result (fig. 4.7's tree): a run whose short flows started
    10 s or more before its end include 1 of 5 that never completed shows
    20 % "not done" (a flow started 5 s before the end and still running
    is not counted); its FCT percentiles are of the completed flows, and 1
    of the 3 that completed after the warm-up took 1 s or more (33.33 %;
    a slow one in the warm-up is not counted); a long
    flow that delivered no byte is listed by name in the figure's page."""
    fl = [_flow("s%d" % i, "long", R / 8) for i in range(7)] + \
        [dict(_flow("s7", "long", 0.0), bytes=0)]
    shorts = [[21.0, 5000, "U", 0.01], [22.0, 5000, "U", 0.02], [23.0, 5000, "U", None],
              [24.0, 5000, "U", 3.01], [115.0, 5000, "U", None], [1.0, 5000, "U", 2.0]]
    run = _run("4.7", "fall", 1, fl, short_flows=shorts,
               short={"fct_ms": {"p50": 20.0, "p99": 3010.0}})
    m = judge.metrics(run, F.BY_ID["4.7"])
    assert m["short_stuck"] == 20.0 and m["fct_p99"] == 3010.0, m
    # 1 of the 3 completed short flows took 1 s or more (3.01 s)
    assert abs(m["short_slow"] - 100.0 / 3) < 1e-9, m
    assert judge.silent_flows(run) == ["s7"]
    v, M = judge.judge_figure(F.BY_ID["4.7"], [run], 1)
    md = judge.figure_markdown(F.BY_ID["4.7"], v, M, ["fall"], {"rate_mbit": R})
    assert "short flows not done in 10 s, %" in md and "| 20.00 |" in md
    assert "FCT >= 1 s, %" in md and "| 33.33 |" in md
    assert "- FaLL run 1: 1 of its long flows (s7)" in md
    # ns-3's runs say how many ports their short flows' clients passed over
    assert "ports passed over" not in md
    v, M = judge.judge_figure(F.BY_ID["4.7"], [dict(run, short_ports_passed=3)], 1)
    md = judge.figure_markdown(F.BY_ID["4.7"], v, M, ["fall"], {"rate_mbit": R})
    assert "**Short flows' ports passed over**" in md and "- FaLL run 1: 3" in md
    # a run without short flows has no ports to pass over (ns-3 records 0)
    v, M = judge.judge_figure(F.BY_ID["4.7"], [dict(run, short_ports_passed=0, short_flows=[])],
                              1)
    md = judge.figure_markdown(F.BY_ID["4.7"], v, M, ["fall"], {"rate_mbit": R})
    assert "ports passed over" not in md


def test_cpu_times_compare_only_within_one_batch():
    """Expected result (fig. 3.10, judged on fig. 3.9's runs): AFCD's BPF
    run time and guest CPU are judged against EDT drop-tail's and CoDel's
    when all runs are of one commit and started within a few hours (BPF
    cost PASS: 1,100 ns against 1.5 x 1,000; guest CPU FAIL: 0.50 against
    0.40); AFCD's runs of another commit, or of the same commit a day
    later, leave both claims undecided, naming why."""
    def runs(code, date):
        out = []
        for s, ns, cpu in (("droptail", 1000, 0.4), ("kcodel", None, 0.4),
                           ("afcd", 1100, 0.5)):
            for k in (1, 2, 3):
                extra = {"code": code if s == "afcd" else "aaaaaaa1",
                         "date": date if s == "afcd" else "2026-11-26 04:00",
                         "cpu": {"guest_busy": cpu}}
                if ns:
                    extra["bpf_cost"] = {"ns_per_pkt": ns}
                out.append(_run("3.9", s, k, [_flow("c", "cubic", R)], **extra))
        return out
    fig = F.BY_ID["3.10"]
    v, _ = judge.judge_figure(fig, runs("aaaaaaa1", "2026-11-26 05:30"), 3)
    c = _checks(v, "project")
    assert c[("BPF cost", "project")] == "PASS" and c[("guest CPU", "project")] == "FAIL", c
    for code, date in (("bbbbbbb2", "2026-11-26 05:30"), ("aaaaaaa1", "2026-11-27 05:30")):
        v, _ = judge.judge_figure(fig, runs(code, date), 3)
        c = _checks(v, "project")
        assert c[("BPF cost", "project")] == c[("guest CPU", "project")] == "INCONCLUSIVE", c
        why = [x["numbers"] for x in v["checks"] if x["variant"] == "project"
               and x["id"] in ("BPF cost", "guest CPU")]
        assert all("within one batch" in w for w in why), why


def test_spread_note_says_what_plus_minus_is():
    """Expected result: under each table a line says that ± is the sample
    standard deviation and gives the factor to the mean's 95 % confidence
    interval for each number of valid runs (t(0.975, 2) / sqrt(3) = 2.48
    at n = 3); a page of single runs says it has no spread."""
    assert judge.spread_note([3, 3, 2, 1]) == (
        "± is the sample standard deviation over a scheme's valid runs (n of them, the last "
        "column); the mean's 95 % confidence interval (Student's t) is ± 8.98 sd at n = 2, "
        "± 2.48 sd at n = 3.")
    assert judge.spread_note([1, 1, 0]) == "One run a scheme: no spread, no confidence interval."
    runs = _fig33(BASE33, DELAY33, invalid={("afcd", 3)})
    md = judge.table_markdown(F.select("3.3")[0], judge.Metrics(F.select("3.3")[0], runs, 3),
                              ["pfifo", "afcd"])
    assert md.endswith("± 8.98 sd at n = 2, ± 2.48 sd at n = 3."), md


def test_a_check_on_another_figure_without_its_runs_says_which():
    """Expected result: a check that compares with another figure's runs
    (fig. 3.8's "improved compared to 3.4.4" with fig. 3.7) is
    INCONCLUSIVE when the directory lacks them, and says which figure and
    scheme it misses; with them it reads their mean."""
    _, m33 = judge.judge_figure(F.BY_ID["3.3"], _fig33(BASE33, DELAY33), 3)
    _, M = judge.judge_figure(F.BY_ID["3.3"], _fig33(BASE33, DELAY33), 3, others={})
    with pytest.raises(judge.NoRunsOf, match="fig. 3.7 has not enough valid runs of afcd"):
        M.other("3.7", "afcd", "jain")
    M.others = {"3.3": m33}
    assert M.other("3.3", "afcd", "jain") == m33.mean("afcd", "jain") is not None
