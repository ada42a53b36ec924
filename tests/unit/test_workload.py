# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Where a flow's goodput is placed in time: iperf3 times its intervals
from the test's own start, which a client started late into a full queue
reaches seconds after it was started (fig. 4.8's late group: the
receivers seemed to get 1.26x the link when the late flows' intervals
were placed at their configured start)."""
import argparse
import time

import pytest

from testbed import topo as topo_mod
from testbed import judge, scenario, workload
from testbed.figures import BY_ID

SS = """0      0      198.18.9.2:5201     198.18.1.2:40100
0      0      198.18.9.2:5201     198.18.1.2:40102
0      0      198.18.9.2:5202     198.18.5.2:40200
0      0      [fd00::9:2]:5202    [fd00::5:2]:40202
0      0      198.18.9.2:22       198.18.1.2:40300
garbage
"""


class _Out:
    stdout = SS


def test_established_connections_counted_per_port(monkeypatch):
    """Expected result: two connections on 5201, two on 5202 (one of them
    IPv6), nothing else counted; unparsable lines ignored."""
    monkeypatch.setattr(workload, "in_ns", lambda ns, cmd, check=True: _Out())
    assert workload.established_by_port("r", [5201, 5202, 5203]) == \
        {5201: 2, 5202: 2, 5203: 0}


def test_start_watch_waits_for_every_connection(monkeypatch):
    """Expected result: a test counts as begun when its control connection
    and all its streams are up (5201 needs 2 and has them; 5202 needs 3
    and has 2: not begun)."""
    monkeypatch.setattr(workload, "in_ns", lambda ns, cmd, check=True: _Out())
    t0 = time.time()
    w = workload.StartWatch("r", {5201: 2, 5202: 3}, t0, 0.5, period_s=0.05).start()
    time.sleep(0.3)
    began = w.stop()
    assert set(began) == {5201} and 0 <= began[5201] < 0.5


def test_flow_t0():
    """Expected result: the measured start, never before the configured
    one; the configured one for results without a measurement."""
    assert workload.flow_t0({"start_s": 30.0, "began_s": 37.5}) == 37.5
    assert workload.flow_t0({"start_s": 30.0, "began_s": 29.9}) == 30.0
    assert workload.flow_t0({"start_s": 30.0, "began_s": None}) == 30.0
    assert workload.flow_t0({"start_s": 0.0}) == 0.0


def _flow(name, group, start, began, series):
    return {"name": name, "group": group, "start_s": start, "began_s": began,
            "series": series, "client": {}}


def test_late_flow_measured_from_its_real_start():
    """Expected result: fig. 4.8's window is the second half from the late
    group's start + 5 s (35-60 s of 60). A late flow that began at 40 s
    (its intervals already placed there) has its goodput from 41 s, and
    the link's utilization over the window is what both delivered in it:
    1.0 (the early flow alone at 8 Mbit/s until 41 s, then 4 each), not
    more."""
    early = _flow("e", "early1", 0.0, 0.1, [(0.1, 41.0, 8e6), (41.0, 60.1, 4e6)])
    late = _flow("l", "late1", 30.0, 40.0, [(40.0, 41.0, 0.0), (41.0, 61.0, 4e6)])
    res = {"duration_s": 60.0, "warmup_s": 10.0, "rate_mbit": 8.0, "flows": [early, late],
           "rtt_ms": 125.0}
    m = judge.metrics(res, BY_ID["4.8"])
    assert abs(m["util"] - 1.0) < 1e-9, m["util"]
    assert abs(m["g:late1"] - 4.0) < 1e-9, m


def test_utilization_of_staggered_flows():
    """Expected result: an early flow at 1.0 Mbit/s over [0, 30] s and 0.5
    over [30, 60], a late flow at 0.5 over [30, 60], on a 1 Mbit/s link:
    utilization 1.0 over the whole run and over the second half. The sum
    of each flow's mean over its own active time (0.75 + 0.5) reads 1.25:
    the fault fig. 4.8 showed. A gap in a flow's intervals counts as
    nothing delivered."""
    early = {"series": [(t, t + 1, 1e6 if t < 30 else 0.5e6) for t in range(60)]}
    late = {"series": [(t, t + 1, 0.5e6) for t in range(30, 60)]}
    assert scenario.utilization([early, late], 0, 60, 1.0) == pytest.approx(1.0)
    assert scenario.utilization([early, late], 30, 60, 1.0) == pytest.approx(1.0)
    assert scenario.goodput_mbps(early, 0, 60) + scenario.goodput_mbps(late, 0, 60) == \
        pytest.approx(1.25)
    gap = {"series": [(t, t + 1, 1e6) for t in range(60) if not 20 <= t < 30]}
    assert scenario.utilization([gap], 0, 60, 1.0) == pytest.approx(50 / 60)
    assert scenario.utilization([gap], 10, 10, 1.0) is None
    assert scenario.utilization([gap], 0, 60, 0) is None


def test_out_dir_made_before_the_loader_writes_there(monkeypatch, tmp_path):
    """Expected result: scenario.run() into a directory that does not exist
    yet makes it before the topology (and the loader, whose log goes
    there) is set up: `reproduce` with a fixed rate into a fresh --out
    failed every run of ours with ENOENT on NAME.loader.log."""
    out = tmp_path / "fresh" / "fig3.7"
    seen = []

    class Topo:
        def __init__(self, *a, **kw):
            pass

        def build(self):
            seen.append(out.is_dir())
            raise RuntimeError("stop here")

        def close(self):
            pass
    monkeypatch.setattr(scenario.topo_mod, "Topology", Topo)
    with pytest.raises(RuntimeError, match="stop here"):
        scenario.run("cubic-udp", "afcd", out_dir=str(out))
    assert seen == [True]


def test_topology_pool_reuses_only_the_same_topology(monkeypatch):
    """Expected result: the pool hands a run the previous run's topology,
    reset, only when every argument is the same; other arguments close it
    and build anew; a failed run's discard() closes it, so the next run
    builds a fresh one; close() leaves nothing open. A pool that reused a
    topology across an RTT or a sysctl would run a scheme on the wrong
    premise."""
    log = []

    class Topo:
        def __init__(self, **kw):
            self.kw = kw

        def build(self):
            log.append(("build", self.kw["rtt_ms"]))
            return self

        def reset(self):
            log.append(("reset", self.kw["rtt_ms"]))
            return self

        def close(self):
            log.append(("close", self.kw["rtt_ms"]))
    monkeypatch.setattr(topo_mod, "Topology", Topo)
    with topo_mod.Pool() as pool:
        a = pool.get(kind="dumbbell", rtt_ms=20.0, sysctls=())
        assert pool.get(kind="dumbbell", rtt_ms=20.0, sysctls=()) is a
        b = pool.get(kind="dumbbell", rtt_ms=20.0, sysctls=("net.ipv4.tcp_ecn=1",))
        assert b is not a
        c = pool.get(kind="dumbbell", rtt_ms=120.0, sysctls=("net.ipv4.tcp_ecn=1",))
        pool.discard()
        assert pool.get(kind="dumbbell", rtt_ms=120.0, sysctls=("net.ipv4.tcp_ecn=1",)) is not c
    assert log == [("build", 20.0), ("reset", 20.0), ("close", 20.0), ("build", 20.0),
                   ("close", 20.0), ("build", 120.0), ("close", 120.0), ("build", 120.0),
                   ("close", 120.0)]


def test_failed_client_says_why():
    """A UDP client whose stream never started reports iperf3's error, and
    the run's invalid reason carries it; a client that ran reports none."""
    from testbed import validity
    failed = workload._parse_client('{"start": {}, "intervals": [], "end": {}, '
                                    '"error": "unable to read from stream socket: '
                                    'Resource temporarily unavailable"}')
    assert failed[0]["sent_mbps"] is None
    assert failed[0]["error"].startswith("unable to read from stream socket")
    ok = workload._parse_client('{"intervals": [], "end": {"sum": {"bits_per_second": 4e6}}}')
    assert ok[0]["sent_mbps"] == 4.0 and "error" not in ok[0]
    assert workload._parse_client("iperf3: error - unable to connect")[0]["error"] == \
        "iperf3: error - unable to connect"
    res = {"flows": [{"name": "udp0", "configured_mbps": 8.0, "client": failed[0]}]}
    valid, reasons = validity.judge(res)
    assert not valid and reasons[0].startswith("sender udp0 sent nothing of its 8.0 Mbit/s "
                                               "(iperf3: unable to read from stream socket")


def test_crowd_starts_staggered_from_the_seed():
    """Expected result: churn_sim's --stagger S starts every CUBIC flow of a
    crowd (and the flood) at U[0, S) s, the same times for the same seed
    and other times for another; without it all start at t = 0; S at or
    above the warm-up is refused (the window would open before the last
    flow started)."""
    from testbed import churn_sim

    def starts(text):
        return [float(ln.split()[-1]) for ln in text.splitlines() if ln.startswith("flow ")]

    args = ("afcd", 10000.0, 100.0, 45.0, 15.0, 50, 0, 0.0, 0)
    s1 = starts(churn_sim.spec(*args, seed=1, flood=1.0, stagger_s=5.0))
    assert len(s1) == 51 and all(0.0 <= t < 5.0 for t in s1), s1
    assert max(s1) - min(s1) > 2.5, s1
    assert s1 == starts(churn_sim.spec(*args, seed=1, flood=1.0, stagger_s=5.0))
    assert s1 != starts(churn_sim.spec(*args, seed=2, flood=1.0, stagger_s=5.0))
    assert set(starts(churn_sim.spec(*args, seed=1, flood=1.0))) == {0.0}
    with pytest.raises(SystemExit):
        churn_sim.main(["--cubic", "2", "--warm", "5", "--stagger", "5"])


def test_churn_sim_by_start_shows_a_queue_that_favours_late_flows():
    """Expected result: by_start() groups the long-lived flows by start
    time, first started first, in fair shares of the link (the flood one
    of the flows): flows listed out of start order whose goodput grows
    with their start give a rising slope with the starved flows in the
    first group; equal goodputs give a flat one; without staggered starts
    (all at t = 0) or start times it says None."""
    from testbed import churn_sim

    # 10 flows + a flood on 11 Mbit/s: a share is 1 Mbit/s; flow i starts
    # at (9 - i) / 10 s, so the last listed started first
    starts = [(9 - i) / 10 for i in range(10)]
    r = {"rate_mbit": 11.0, "flood_x": 1.0, "cubic_start_s": starts,
         "cubic_mbps": [0.0 if t < 0.2 else 2.0 * t for t in starts]}
    got = churn_sim.by_start(r)
    assert [n for _, n in got] == [2, 0, 0, 0, 0], got
    assert got[0][0] == 0.0 and got[-1][0] == pytest.approx(1.7), got
    assert all(a[0] < b[0] for a, b in zip(got, got[1:])), got
    flat = churn_sim.by_start(dict(r, cubic_mbps=[1.0] * 10))
    assert all(m == pytest.approx(1.0) and n == 0 for m, n in flat), flat
    assert churn_sim.by_start(dict(r, cubic_start_s=[0.0] * 10)) is None
    assert churn_sim.by_start({k: v for k, v in r.items() if k != "cubic_start_s"}) is None


def test_churn_sim_passes_loader_parameters_to_the_projects_schemes():
    """Expected result: churn_sim --param NAME=VALUE adds `param NAME VALUE`
    to the spec of the project's schemes after the bottleneck's own and
    before the flow table's size (afcd-sim takes flow-table last), and
    none to an ns-3 queue disc's; --mtu sets the frames; a parameter
    without '=' and --param without a project scheme are refused."""
    from testbed import churn_sim

    args = ("afcd", 100.0, 100.0, 45.0, 15.0, 4, 0, 0.0, 4096, 1)
    text = churn_sim.spec(*args, params=[("sb_size", "4096")], mtu=1514).splitlines()
    params = [ln for ln in text if ln.startswith("param ")]
    assert "param sb_size 4096" in params and params[-1] == "param flow-table 4096", params
    assert "mtu 1500" in text and "param mtu 9014" not in text, text
    fifo = churn_sim.spec("pfifo", *args[1:], params=[("sb_size", "4096")])
    assert "sb_size" not in fifo and "mtu 9000" in fifo.splitlines(), fifo
    with pytest.raises(argparse.ArgumentTypeError):
        churn_sim.param_arg("sb_size")
    for bad in (["--schemes", "pfifo", "--param", "sb_size=4096"], ["--mtu", "100"]):
        with pytest.raises(SystemExit):
            churn_sim.main(bad)


def test_churn_sim_settings_are_the_command_lines():
    """Expected result: churn_sim.settings() gives what main() parses with
    no argument (every option one() reads, --param and --mtu among them),
    with the named ones replaced; a name churn_sim has no option for is
    a TypeError, not a silent extra attribute."""
    from testbed import churn_sim, ns3

    a = churn_sim.settings(rate=100.0, hosts=2)
    assert a.rate == 100.0 and a.hosts == 2 and a.param == [] and a.mtu == ns3.MTU_TEXT
    assert vars(churn_sim.settings()).keys() == vars(churn_sim.parser().parse_args([])).keys()
    with pytest.raises(TypeError):
        churn_sim.settings(buckets=4)
