# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The engines' comparison (testbed/agree.py): the offered load each
engine's record shows, and ns-3's UDP flows scaled to replay a load; the
ns-3 engine's cost estimate (testbed/ns3.py)."""
from testbed import agree
from testbed.figures import BY_ID


def test_load_is_arrivals_over_departures():
    """Expected result: 1,000 packets sent and 50 dropped by the root queue
    disc are a load of 1.05 whichever engine wrote them; a record without
    the root's counters, or one that sent nothing, has no load (None), not
    a load of 1."""
    assert agree.load({"qdisc_stats": [{"packets": 1000, "drops": 50},
                                       {"packets": 7, "drops": 900}]}) == 1.05
    assert agree.load({"qdisc_stats": []}) is None
    assert agree.load({}) is None
    assert agree.load({"qdisc_stats": [{"packets": 0, "drops": 5}]}) is None
    assert agree.load({"qdisc_stats": [{"packets": 10}]}) is None


def test_load_under_the_programs_counts_their_drops():
    """Expected result: under the datapath's programs the drops are the
    program's (aqm_drop, police drops among them, and overlimit_drop), not
    the queue disc's under it: 900 passed, 90 dropped by the law, 10 at
    the limit, and 0 or 100 more dropped by the queue disc under it are a
    load of 1.111 or 1.222; without the queue disc's counters (ns-3's EDT
    queue disc) the program's alone."""
    prog = {"passed": 900, "aqm_drop": 90, "police_drop": 60, "overlimit_drop": 10}
    assert abs(agree.load({"afcd_stats": {"queue": prog},
                           "qdisc_stats": [{"packets": 900, "drops": 0}]}) - 1000 / 900) < 1e-9
    assert abs(agree.load({"afcd_stats": {"queue": prog},
                           "qdisc_stats": [{"packets": 900, "drops": 100}]}) - 1100 / 900) < 1e-9
    assert abs(agree.load({"afcd_stats": {"queue": prog}, "qdisc_stats": [{}]}) -
               1000 / 900) < 1e-9


def test_flood_scale_multiplies_only_the_udp_flows():
    """Expected result: fig. 3.5's workload at 25 Mbit/s with its UDP flow
    scaled by 1.03 sends it at 25.75 Mbit/s; the CUBIC flow and the
    figure's own workload are unchanged; a scale of 1 is the workload
    itself."""
    wl = BY_ID["3.5"].workload(25.0, "default")
    before = [(f.name, f.proto, f.rate_mbit) for f in wl.flows(25.0)]
    up = agree.scaled_floods(wl, 1.03)
    got = {f.name: (f.proto, f.rate_mbit) for f in up.flows(25.0)}
    assert got["udp"] == ("udp", 25.0 * 1.03) and got["cubic"][1] is None, got
    assert [(f.name, f.proto, f.rate_mbit) for f in wl.flows(25.0)] == before
    assert agree.scaled_floods(wl, 1.0) is wl


def test_a_runs_flood_scale_is_read_from_the_run():
    """Expected result: the scale a saved run was made with comes from its
    UDP flow's configured rate against the figure's (25.65 of fig. 3.5's
    25 Mbit/s: 1.026), whatever the command line comparing it says; a run
    without UDP is at 1; two UDP flows at different scales are an error."""
    udp = {"name": "udp", "proto": "udp", "configured_mbps": 25.65}
    run = {"rate_mbit": 25.0, "scheme": "kcodel",
           "flows": [{"name": "cubic", "proto": "tcp", "configured_mbps": None}, udp]}
    assert agree.flood_scale_of(run, "3.5") == 1.026
    assert agree.flood_scale_of(dict(run, flows=run["flows"][:1]), "3.5") == 1.0
    try:
        agree.flood_scale_of(dict(run, flows=[udp, dict(udp, configured_mbps=25.0)]), "3.5")
    except ValueError:
        pass
    else:
        raise AssertionError("two scales accepted")


def _flow(name, mbps, start=0.0, dur=60.0):
    ser = [(t / 2, t / 2 + 0.5, mbps * 1e6) for t in range(int(2 * start), int(2 * dur))]
    return {"name": name, "group": name[:4], "cc": "cubic", "proto": "tcp",
            "start_s": start, "series": ser, "client": {}}


def test_both_engines_are_measured_by_the_judges_code():
    """Expected result: a run is compared by what the judge computes from
    its flows for the figure, not by the fields its record stored (a VM run
    of fig. 4.8 stored a utilization above 1 before the utilization's
    fix): an early flow at 6 Mbit/s over 60 s and a late one at 2 from
    30 s on an 8 Mbit/s link read utilization 1.0 over fig. 4.8's window
    (the second half) and Jain over that window (6 against 2: 0.8),
    whatever "utilization" and "jain" say; the delay is the mean backlog."""
    fig = BY_ID["4.8"]
    run = {"rate_mbit": 8.0, "rtt_ms": 125.0, "duration_s": 60.0, "warmup_s": 10.0,
           "flows": [_flow("early", 6.0), _flow("late0", 2.0, start=30.0)],
           "backlog_delay_ms": {"mean": 800.0, "p50": 790.0, "p99": 990.0},
           "utilization": 1.12, "jain": 0.5}
    m = agree.metrics(run, fig)
    assert abs(m["utilization"] - 1.0) < 1e-9 and abs(m["jain"] - 0.8) < 1e-9, m
    assert m["delay_ms"] == 800.0 and m["load"] is None, m


def test_a_remedy_is_costed_as_the_figure_it_remedies():
    """Expected result: reproduce --list's ns-3 estimate for fig. 4.3's
    buffer remedies, which are not measured themselves, is fig. 4.3's
    measured cost, not the dcn cell's worst (fig. 4.7's, 5x more)."""
    from testbed import ns3
    assert ns3.wall_per_sim_s("4.3-b1", "afcd", 1000.0) == ns3.wall_per_sim_s("4.3", "afcd",
                                                                                1000.0)
    assert ns3.wall_per_sim_s("4.3-b1", "afcd", 1000.0) < ns3.wall_per_sim_s("4.7", "afcd",
                                                                               1000.0)


def test_the_default_mode_is_costed_by_its_own_runs(monkeypatch):
    """Expected result: reproduce --list's ns-3 estimate in the default
    mode takes a figure that has run in that mode from those runs
    (measured_default(): fig. 3.6 under pfifo, not the quick mode's cost,
    which its 120-s runs came to a third of), a remedy from its own runs,
    a remedy without runs from its figure's, and a figure that has not run
    (fig. 4.7, its runs taken out) from the quick mode's runs (MEASURED)."""
    from testbed import ns3
    own = ns3.measured_default()
    assert ns3.wall_per_sim_s("3.6", "pfifo", 1000.0, mode="default") == \
        own[("3.6", "pfifo", 1000.0)]
    assert ns3.wall_per_sim_s("3.6", "pfifo", 1000.0) == ns3.MEASURED[("3.6", "pfifo", 1000.0)]
    assert ns3.MEASURED[("3.6", "pfifo", 1000.0)] > 1.2 * own[("3.6", "pfifo", 1000.0)]
    assert ns3.wall_per_sim_s("4.3-b2", "red", 1000.0, mode="default") == \
        own[("4.3-b2", "red", 1000.0)]
    assert ns3.measured_in_default("4.7")
    monkeypatch.setattr(ns3, "measured_default", lambda: {k: c for k, c in own.items()
                                                          if k[0] not in ("4.7", "4.3-b1")})
    assert ns3.wall_per_sim_s("4.3-b1", "afcd", 1000.0, mode="default") == \
        own[("4.3", "afcd", 1000.0)]
    assert not ns3.measured_in_default("4.7")
    assert ns3.wall_per_sim_s("4.7", "afcd", 1000.0, mode="default") == \
        ns3.wall_per_sim_s("4.7", "afcd", 1000.0)


def test_the_default_runs_cost_what_they_record(tmp_path):
    """Expected result: measured_default() is each scheme's mean of wall_s
    over sim_s of the committed runs, times DEFAULT_DAY's factor for the
    day context.json gives the figure's batch, without DEFAULT_DISTURBED's
    runs (a scheme left with none taking the figure's dearest), at the
    chapter's rate; and a directory without context.json gives {}."""
    import gzip
    import json
    from testbed import ns3
    ctx = {"rate3": 1000.0, "rate4": 500.0, "batches": [
        {"figures": "3.6", "started": "2026-12-06 22:28"},
        {"figures": "4.3,4.7", "started": "2026-12-02 10:16"}]}
    (tmp_path / "context.json").write_text(json.dumps(ctx))
    runs = {"fig3.6-afcd-r1": (100.0, 120.0), "fig3.6-afcd-r2": (140.0, 120.0),
            "fig4.7-afcd-r1": (60.0, 30.0), "fig4.7-pfifo-r1": (600.0, 30.0),
            "fig4.7-red-r1": (900.0, 30.0), "fig4.7-red-r2": (90.0, 30.0)}
    for name, (wall, sim) in runs.items():
        d = tmp_path / ("fig" + name[3:6])
        d.mkdir(exist_ok=True)
        with gzip.open(d / (name + ".json.gz"), "wt") as f:
            json.dump({"engine": "ns3", "sim_s": sim, "wall_s": wall, "flows": []}, f)
    got = ns3.measured_default(str(tmp_path))
    assert got[("3.6", "afcd", 1000.0)] == 1.0
    assert got[("4.7", "afcd", 500.0)] == round(2.0 * ns3.DEFAULT_DAY["2026-12-02"], 2)
    assert got[("4.7", "red", 500.0)] == round(3.0 * ns3.DEFAULT_DAY["2026-12-02"], 2)
    assert got[("4.7", "pfifo", 500.0)] == got[("4.7", "red", 500.0)]
    assert len(got) == 4
    empty = tmp_path / "none"
    empty.mkdir()
    assert ns3.measured_default(str(empty)) == {}


def test_the_list_scales_by_the_machines_probe(monkeypatch, capsys):
    """Expected result: reproduce --list's ns-3 wall time is MEASURED's
    times the probe's ratio to PROBE_REF_S: a machine that takes twice
    the reference's time for the probe is told twice the hours, and one
    that cannot run the probe is told MEASURED's own, and why."""
    import re
    from testbed import figures, ns3, reproduce

    def total(probe):
        monkeypatch.setattr(ns3, "probe_s", lambda: probe)
        reproduce.list_figures_ns3([figures.BY_ID["4.3"]], "default", "all", None, "auto")
        out = capsys.readouterr().out
        return float(re.search(r"total: ([0-9.]+) h of CPU", out).group(1)), out

    base, out = total(None)
    assert "not probed" in out, out
    double, out = total(2.0 * ns3.PROBE_REF_S)
    assert "x 2.00" in out and abs(double - 2.0 * base) <= 0.1 + 0.05 * base, (base, double)
