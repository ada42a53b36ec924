# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The testbed's report: a run marked invalid (it measured the machine,
not the scheme) is shown and counted but left out of the means that the
table, the targets and the plots use."""
from testbed import report, scenario


def _run(scheme, rep, cubic, udp, jain, valid=True, why=()):
    return {"scenario": "cubic-udp", "scheme": scheme, "label": scheme, "repeat": rep,
            "rate_mbit": 35.0, "target_ms": 5.0,
            "flows": [{"name": "cubic", "goodput_mbps": cubic},
                      {"name": "udp", "goodput_mbps": udp}],
            "jain": jain, "utilization": (cubic + udp) / 35.0,
            "overlimit_share_after_warmup": 0.0,
            "queue_delay_ms": {"p50": 3.0, "p95": 8.0, "p99": 10.0, "max": 12.0},
            "cpu": {"guest_busy": 0.9 if not valid else 0.6, "loader_busy": 0.01},
            "valid": valid, "invalid_reasons": list(why)}


def _by(agg):
    return {r["scheme"]: r for r in agg}


def test_invalid_runs_left_out_of_the_means():
    """Expected result: two valid runs (cubic 16 and 18) and one whose
    sender sent nothing (cubic 0): the mean is 17 over the two, the row
    says 2/3 and why, and the targets use 17 (a mean of 11.3 over all
    three would miss CUBIC's 90 % of its fair share of 17.5 Mbit/s); the
    p99 target takes the worst valid run."""
    rs = [_run("afcd", 1, 16.0, 17.0, 0.99), _run("afcd", 2, 18.0, 17.0, 0.999),
          _run("afcd", 3, 0.0, 17.0, 0.5, False, ["sender cubic sent nothing"])]
    rs[1]["queue_delay_ms"]["p99"] = 16.0
    rs[0]["timer_late_ms"] = {"p50": 0.3, "p95": 2.0}
    rs[1]["timer_late_ms"] = {"p50": 0.4, "p95": 5.25}
    rs[0]["backlog_delay_ms"] = {"p50": 3.0, "p99": 7.5}
    rs[1]["backlog_delay_ms"] = {"p50": 3.0, "p99": 11.25}
    rs[2]["backlog_delay_ms"] = {"p50": 3.0, "p99": 40.0}     # invalid: left out
    a = _by(report.aggregate(rs))["afcd"]
    assert (a["repeats"], a["valid_runs"], a["valid"]) == (3, 2, False)
    assert a["flows"][0]["goodput_mbps"] == 17.0
    assert abs(a["jain"] - 0.9945) < 1e-9
    assert a["cpu"]["guest_busy"] == 0.6
    assert a["queue_delay_ms"]["p99_max"] == 16.0
    assert a["p99_max_timer_late_p95_ms"] == 5.25        # the worst run's
    row = report.table([a]).splitlines()[2]
    assert "cubic 17.0" in row and row.endswith("| 2/3 (sender cubic sent nothing) |")
    tl = report.targets([a])
    assert any(line.startswith("ok ") and "CUBIC 17.0 >= 90 %" in line for line in tl), tl
    assert any(line.startswith("MISS") and "p99 queueing delay 16.0 ms" in line and
               line.endswith("(the backlog's p99: 11.2 ms; timer lateness p95 5.2 ms)")
               for line in tl), tl
    # beside the kernel's CoDel on the same workload, its worst run's p99
    kc = dict(_run("kcodel", 1, 16.0, 17.0, 0.99))
    kc["queue_delay_ms"] = dict(kc["queue_delay_ms"], p99=18.0)
    tl = report.targets([a] + report.aggregate([kc]))
    assert any("p99 queueing delay 16.0 ms" in line and
               line.endswith("kernel CoDel's worst p99 18.0 ms)") for line in tl), tl

def test_no_valid_run_averages_all_and_says_so():
    """Expected result: when every repeat is invalid the means are over all
    of them (there is nothing better to show), the row says 0/3 and that
    its means are of invalid runs, and the targets tag it."""
    rs = [_run("fall", i, 10.0 + i, 20.0, 0.9, False, ["guest CPU saturated"])
          for i in (1, 2, 3)]
    a = _by(report.aggregate(rs))["fall"]
    assert (a["repeats"], a["valid_runs"], a["valid"]) == (3, 0, False)
    assert a["flows"][0]["goodput_mbps"] == 12.0
    assert "0/3 (guest CPU saturated; none valid: means of all runs)" in report.table([a])
    assert all("(invalid runs)" in line for line in report.targets([a]))


def test_all_valid_unchanged():
    """Expected result: with every run valid, all are averaged and the row
    says 3/3 with no reasons."""
    rs = [_run("fq_codel", i, 16.0 + i, 17.0, 0.99) for i in (1, 2, 3)]
    a = _by(report.aggregate(rs))["fq_codel"]
    assert (a["repeats"], a["valid_runs"], a["valid"]) == (3, 3, True)
    assert a["flows"][0]["goodput_mbps"] == 18.0
    assert report.table([a]).splitlines()[2].endswith("| 3/3 |")


def test_cost_of_fairness_from_the_counters():
    """Expected result: over the samples in [warm-up, duration], the virtual
    queue's idle share is the idle time over the elapsed time, and each
    drop reason is a share of the packets offered (admitted + dropped),
    the policer's and the high-water drop's counted apart from the rest
    of the drop law's (the latter '-' without its counter); the table
    shows them per scheme, and is empty without them."""
    from testbed import scenario
    series = [{"t": 0.5, "idle_ns": 0, "passed": 0, "aqm_drop": 0, "police_drop": 0,
               "overlimit_drop": 0},
              {"t": 1.0, "idle_ns": 1e8, "passed": 100, "aqm_drop": 10, "police_drop": 4,
               "overlimit_drop": 0},
              {"t": 11.0, "idle_ns": 6e8, "passed": 990, "aqm_drop": 110, "police_drop": 44,
               "overlimit_drop": 10, "police_mark": 18, "high_drop": 3}]
    # after the run (t 18, past the 15-s duration) the senders have
    # stopped: the queue idles, and that is not a cost of fairness
    tail = dict(series[-1], t=18.0, idle_ns=3.6e9)
    c = scenario._cost_of_fairness(series + [tail], 1.0, 15.0)
    assert abs(c["vq_idle"] - 0.05) < 1e-9
    assert abs(c["aqm_drop"] - 0.057) < 1e-9
    assert abs(c["police_drop"] - 0.04) < 1e-9
    assert abs(c["high_drop"] - 0.003) < 1e-9
    assert abs(c["overlimit_drop"] - 0.01) < 1e-9
    assert abs(c["police_mark"] - 0.018) < 1e-9
    assert scenario._cost_of_fairness(series[:1], 0, 15.0) is None
    r = dict(_run("afcd", 1, 17.0, 17.0, 1.0), cost_after_warmup=c)
    agg = report.aggregate([r, dict(r, repeat=2)])
    assert agg[0]["cost_after_warmup"]["vq_idle"] == c["vq_idle"]
    rows = report.cost_table(agg).splitlines()
    assert rows[2].split(" | ")[3:] == ["5.0%", "5.7%", "4.0%", "0.3%", "1.0%", "1.8% |"], rows
    old = scenario._cost_of_fairness([dict(x, **{"high_drop": None}) for x in series] + [tail],
                                     1.0, 15.0)
    assert old["high_drop"] is None and abs(old["aqm_drop"] - 0.06) < 1e-9
    assert report.cost_table(report.aggregate([_run("pfifo", 1, 10, 20, 0.9)])) == ""
    # the qdisc backend has no virtual queue: no idle share, the drops kept
    cq = scenario._cost_of_fairness(series + [tail], 1.0, 15.0, virtual=False)
    assert cq["vq_idle"] is None and cq["police_drop"] == c["police_drop"]
    rq = dict(r, scheme="afcd-qdisc", label="AFCD (qdisc)", afcd_stats={"hook": "qdisc"},
              cost_after_warmup=dict(c))    # a run written before, with a 0 there
    row = report.cost_table(report.aggregate([rq])).splitlines()[2]
    assert row.split(" | ")[3:5] == ["-", "5.7%"], row


def test_ecn_target_counts_retransmits_after_the_warmup():
    """Expected result: the ECN workload's target compares the segments the
    ECN flows retransmitted after the warm-up (iperf3's intervals that end
    after it, on the flow's clock from start_s) with the segments they
    delivered in the same window: slow start's 300 before the warm-up do
    not count, 2 after it pass (of ~46,600), 80 after it miss; the line
    gives the whole run's count too."""
    def ecn_run(after):
        ser = [[0.5 * i, 20, 25.0, 300 if i == 4 else 0] for i in range(1, 60)]
        ser[40][3] = after
        fl = [{"name": n, "proto": "tcp", "start_s": 0.0, "goodput_mbps": 10.0,
               "client": {"retransmits": 300 + after, "tcp_series": ser}}
              for n in ("cubic0", "cubic1")]
        fl.append({"name": "udp", "proto": "udp", "goodput_mbps": 11.0, "client": {}})
        return dict(_run("afcd", 1, 10.0, 11.0, 0.99), scenario="ecn-cubic-udp",
                    flows=fl, duration_s=30.0, warmup_s=3.0)
    assert report.retransmits_after(ecn_run(1)["flows"][0], 3.0) == 1
    assert report.retransmits_after(ecn_run(1)["flows"][2], 3.0) is None
    for after, verdict in ((1, "ok  "), (40, "MISS")):
        line = next(x for x in report.targets(report.aggregate([ecn_run(after)]))
                    if "ECN flows" in x)
        assert line.startswith(verdict) and "(whole run: %d)" % (2 * (300 + after)) in line, line


def test_progress_line_gives_the_backlog_beside_the_ping():
    """scenario.one_line(): the ping's delay is whole ms above 100 ms of
    RTT, so the line adds the sampled backlog's, when there is one."""
    r = {"scenario": "fig3.3", "label": "AFCD", "flows": [{"name": "cubic", "goodput_mbps": 9.5}],
         "jain": 0.99, "utilization": 0.93, "queue_delay_ms": {"p50": 1.0, "p99": 5.0},
         "backlog_delay_ms": {"p50": 2.34, "p99": 9.06}, "cpu": {"guest_busy": 0.31}}
    assert "qdelay p50 1.0 p99 5.0 ms (backlog p50 2.3 p99 9.1) | guest 31% busy" in \
        scenario.one_line(r)
    r["backlog_delay_ms"] = {"p50": None, "p99": None}
    assert "backlog" not in scenario.one_line(r)


def test_the_targets_are_counted_misses_plainly():
    """Expected result: the demo's targets end with one count of ok and
    MISS, and says how many of each stand on invalid runs' means."""
    lines = ["ok   a/afcd: x", "MISS a/fall: y", "ok   b/afcd (invalid runs): z",
             "MISS b/fall (invalid runs): w", "MISS c/afcd: v"]
    assert report.targets_count(lines) == \
        "targets: 2 ok, 3 MISS (1 ok and 1 MISS on invalid runs' means)"


def test_utilization_is_judged_as_printed():
    """Expected result: utilization is compared at the 0.001 it is printed
    with: 0.94945 against fq_codel's 0.95945 - 0.01 is ok (0.949 >=
    0.949), 0.9484 is a MISS (0.948 < 0.949); no line reads equal numbers
    and MISS."""
    def line(util):
        ours, fq = _run("afcd", 1, 17.0, 17.0, 0.99), _run("fq_codel", 1, 17.0, 17.0, 0.99)
        ours["utilization"], fq["utilization"] = util, 0.95945
        return next(x for x in report.targets(report.aggregate([ours, fq]))
                    if "utilization" in x)
    assert line(0.94945).startswith("ok ") and "0.949 >= 0.949" in line(0.94945)
    assert line(0.9484).startswith("MISS") and "0.948 >= 0.949" in line(0.9484)
