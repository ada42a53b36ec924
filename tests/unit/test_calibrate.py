# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""What the rate calibration probes, and its rule: a rate counts only when
every probe at it is valid with margin (the demo once calibrated on the
flood at 3x alone and ran its four-sender workload with the guest 88-96 %
busy, every run of it invalid)."""
from testbed import report, runs


def test_heaviest_probes_the_most_load_and_the_most_senders():
    assert runs.heaviest(report.DEMO_SCENARIOS) == ["cubic-udp3", "cubic-4udp"]
    assert runs.heaviest(["cubic-udp", "cubic-udp3"]) == ["cubic-udp3"]
    assert runs.heaviest(["cubic-4udp"]) == ["cubic-4udp"]
    assert runs.heaviest(["cubic-reno-60"]) == [runs.CAL_SCENARIO]


def _probe(busy):
    """scenario.run() of a probe: valid, the guest busy[workload][rate]."""
    def run(workload, scheme, rate_mbit, **kw):
        return {"valid": True, "invalid_reasons": [], "timer_late_ms": {}, "flows": [],
                "cpu": {"guest_busy": busy[workload].get(rate_mbit, 0.5)}}
    return run


def test_a_rate_counts_only_when_every_workload_has_margin(monkeypatch, tmp_path):
    busy = {"cubic-udp3": {150.0: 0.9, 100.0: 0.7, 70.0: 0.6},
            "cubic-4udp": {100.0: 0.9, 70.0: 0.8}}
    calls = []
    run = _probe(busy)
    monkeypatch.setattr(runs.scenario, "run",
                        lambda w, s, rate_mbit, **kw: calls.append((w, rate_mbit)) or
                        run(w, s, rate_mbit, **kw))
    assert runs.calibrate(str(tmp_path), ["cubic-udp3", "cubic-4udp"]) == 50.0
    # the second workload is probed only at rates the first passed
    assert calls == [("cubic-udp3", 150.0), ("cubic-udp3", 100.0), ("cubic-4udp", 100.0),
                     ("cubic-udp3", 70.0), ("cubic-4udp", 70.0),
                     ("cubic-udp3", 50.0), ("cubic-4udp", 50.0)]
    cal = (tmp_path / "calibration.json").read_text()
    assert '"rate_mbit": 50.0' in cal and "cubic-udp3, cubic-4udp" in cal


def test_a_reproduction_cell_calibrates_by_the_same_rule(monkeypatch, tmp_path):
    """reproduce's cells share the rule: the dcn cell starts at its cap and
    keeps its probes' figures; resume reuses the rate without probing."""
    from testbed import reproduce
    busy = {"cal-4.7": {50.0: 0.8, 35.0: 0.7}}
    calls = []
    run = _probe(busy)
    monkeypatch.setattr(reproduce.scenario, "run",
                        lambda w, s, rate_mbit, **kw: calls.append((w, rate_mbit)) or
                        run(w, s, rate_mbit, **kw))
    assert reproduce.calibrate_cell("dcn", str(tmp_path), "quick", resume=False) == 35.0
    assert calls == [("cal-4.7", 50.0), ("cal-4.7", 35.0)]
    cal = (tmp_path / "calibration-dcn.json").read_text()
    assert '"figure": "4.7"' in cal and '"rate_mbit": 35.0' in cal
    calls.clear()
    assert reproduce.calibrate_cell("dcn", str(tmp_path), "quick", resume=True) == 35.0
    assert calls == []


def test_the_demo_bisects_the_rates(monkeypatch, tmp_path):
    """Expected result: with bisect, the calibration probes the middle of
    the rates left (35 of 150..5), then halves toward the highest valid
    one, and finds what the top-down search finds in 3-4 probed rates;
    none valid gives the lowest rate."""
    busy = {"cubic-udp": {r: (0.9 if r > 25.0 else 0.6) for r in runs.CAL_RATES}}
    calls = []
    run = _probe(busy)
    monkeypatch.setattr(runs.scenario, "run",
                        lambda w, s, rate_mbit, **kw: calls.append(rate_mbit) or
                        run(w, s, rate_mbit, **kw))
    assert runs.calibrate(str(tmp_path), ["cubic-udp"], bisect=True) == 25.0
    assert calls[0] == 35.0 and len(calls) <= 4 and calls[-1] in (25.0, 18.0)
    calls.clear()
    busy["cubic-udp"] = {r: 0.9 for r in runs.CAL_RATES}
    assert runs.calibrate(str(tmp_path), ["cubic-udp"], bisect=True) == runs.CAL_RATES[-1]
    assert len(calls) <= 4
    calls.clear()
    busy["cubic-udp"] = {r: 0.5 for r in runs.CAL_RATES}
    assert runs.calibrate(str(tmp_path), ["cubic-udp"], bisect=True) == 150.0
    assert len(calls) <= 4
