# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""afcd-bench's report, run with few repetitions: its shape,
not its figures (those are `make bench`'s, printed with the run)."""
import json
import os
import subprocess

from testbed import abi
from testbed import netns as nslib

BENCH = os.path.join(nslib.BUILD, "afcd-bench")
SCENARIOS = ["idle", "congested", "idle_fresh", "congested_fresh"]


def test_bench_json_has_every_cell_ratio_and_scaling():
    """Expected result: `afcd-bench -j` gives, for the four flow counts,
    a positive cost for the four anchors (the clock alone among them)
    and for every algo in every scenario, the ratio of each to the
    minimal EDT program; a positive cost of each prefix of the stage
    breakdown, the clock's its own stage; and
    scaling_2cpu for edt_min, afcd and fall, each a median inside the
    range of its trials; the churn rows, where a cycle through 100 flows
    creates none and one through 10^5 or 10^6 (past the table's bound)
    creates nearly one a packet; the pins are untouched (the bench's maps
    are private)."""
    before = nslib.pins()
    r = subprocess.run([BENCH, "-j", "-r", "20", "-s", "2", "-n", "1"], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["flows"] == [1, 100, 10000, 100000]
    anchors = ["empty", "clock", "edt_min", "edt_lock"]
    rows = anchors + ["%s_%s" % (a, s) for s in SCENARIOS for a in abi.ALGOS]
    for name in rows:
        assert len(j[name]) == 4 and all(v > 0 for v in j[name]), (name, j[name])
    for name in rows[len(anchors):]:
        ratios = j["ratio_to_edt_min"][name]
        assert len(ratios) == 4 and all(v > 0 for v in ratios), (name, ratios)
    stages = ["config", "clock", "parse", "flow", "fair", "decide", "apply"]
    for row in j["stages"].values():
        assert [k for k in row if k in stages] == stages, row
        assert all(row[k]["prefix_ns"] > 0 for k in stages), row
    assert set(j["scaling_2cpu"]) >= {"edt_min", "afcd", "fall"}
    assert all(v > 0 for v in j["scaling_2cpu"].values()), j["scaling_2cpu"]
    assert j["scaling_2cpu_trials"] >= 5
    for name, med in j["scaling_2cpu"].items():
        lo, hi = j["scaling_2cpu_range"][name]
        assert 0 < lo <= med <= hi, (name, lo, med, hi)
    ch = j["churn"]
    assert ch["flows"] == [100, 100000, 1000000]
    for a in ("afcd", "fall"):
        assert all(v > 0 for v in ch[a] + ch[a + "_edt_min"]), ch
        # within the table's bound the flows keep their entries; past it
        # nearly every packet creates its flow again
        created = ch[a + "_created_per_pkt"]
        assert created[0] < 0.01 and min(created[1:]) > 0.9, (a, created)
    assert nslib.pins() == before


def test_bench_refuses_bad_options():
    """Expected result: a bad count is refused in one line, exit 2."""
    r = subprocess.run([BENCH, "-n", "0"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
