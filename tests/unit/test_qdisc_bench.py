# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""make bench-qdisc's bookkeeping on synthetic runs (no root, no VM): only
valid runs enter the table, every run is counted, and no ratio is taken
against a pfifo that has no valid run."""
from testbed import qdisc_bench as qb


def run(qdisc, flows, cpu, valid=True, goodput=100.0):
    return {"qdisc": qdisc, "flows": flows, "valid": valid, "goodput_mbps": goodput,
            "jain": 1.0, "cpu_ns_per_pkt": cpu, "bpf_ns_per_pkt": None,
            "streams_measured": flows, "window_within_transfer": valid}


def test_table_averages_valid_runs_and_counts_all(monkeypatch):
    """Expected result: an invalid run and a failed one are counted in
    `runs` but left out of the means; ratios are against pfifo's valid
    mean."""
    monkeypatch.setattr(qb, "FLOWS", (1,))
    monkeypatch.setattr(qb, "QDISCS", ["pfifo", "afcd"])
    runs = [run("pfifo", 1, 1000), run("pfifo", 1, 3000),
            run("afcd", 1, 3000), run("afcd", 1, 9e9, valid=False),
            {"qdisc": "afcd", "flows": 1, "repeat": 2, "valid": False, "error": "boom"}]
    t = {r["qdisc"]: r for r in qb.tabulate(runs, {})}
    assert (t["pfifo"]["runs"], t["pfifo"]["valid"]) == (2, 2)
    assert (t["afcd"]["runs"], t["afcd"]["valid"]) == (3, 1)
    assert t["afcd"]["cpu_ns_per_pkt"] == 3000
    assert t["afcd"]["cpu_x_pfifo"] == 1.5


def test_no_ratio_without_a_valid_pfifo(monkeypatch, capsys):
    """Expected result: with every pfifo run invalid, pfifo has no row and
    the others no ratio (never one against another qdisc); a qdisc not run
    says why."""
    monkeypatch.setattr(qb, "FLOWS", (1000,))
    monkeypatch.setattr(qb, "QDISCS", ["pfifo", "fq", "bpf-fq"])
    runs = [run("pfifo", 1000, 1000, valid=False), run("fq", 1000, 2000)]
    t = qb.tabulate(runs, {"bpf-fq": "not built"})
    assert [r["qdisc"] for r in t] == ["fq"]
    assert t[0]["cpu_x_pfifo"] is None and t[0]["goodput_x_pfifo"] is None
    out = capsys.readouterr().out
    assert "pfifo     no valid run of 1" in out and "bpf-fq    not run: not built" in out


def test_jain():
    """Expected result: 1 for equal rates, 1/n for one of n, None without rates."""
    assert qb.jain([5, 5, 5]) == 1.0
    assert abs(qb.jain([1, 0, 0, 0]) - 0.25) < 1e-12
    assert qb.jain([]) is None and qb.jain([0, 0]) is None
