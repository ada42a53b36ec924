# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The engines' comparison (testbed/agree.py): the offered load each
engine's record shows, and ns-3's UDP flows scaled to replay a load."""
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
