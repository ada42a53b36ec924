# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenario tests that need sch_fq and netem: run through tools/afcd-testbed,
which executes them here when the kernel has both and otherwise in a
virtme-ng VM on Debian's kernel (TCG). Bottleneck 100 Mbit/s, base RTT
20 ms, buffer 100 % BDP, target 5 ms: the dissertation's dumbbell (3.4.1,
3.4.2) scaled to what the VM carries.
"""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTBED = os.path.join(ROOT, "tools", "afcd-testbed")
RATE, RTT, TARGET = 100.0, 20.0, 5.0


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("vm-scenarios"))
    runs = "cubic-reno:afcd,cubic-reno:fall,cubic-reno:droptail,cubic-udp:afcd"
    r = subprocess.run([sys.executable, TESTBED, "run", runs, "--duration", "14",
                        "--rate", str(RATE), "--rtt", str(RTT), "--target", str(TARGET),
                        "--out", out], timeout=1500)
    res = {}
    for name in os.listdir(out):
        if name.endswith(".json"):
            with open(os.path.join(out, name)) as fh:
                d = json.load(fh)
            res[(d["scenario"], d["scheme"])] = d
    print("\n".join("%s/%s: %s" % (k[0], k[1], {f["name"]: round(f["goodput_mbps"], 1)
                                                   for f in v["flows"]} | v["queue_delay_ms"])
                    for k, v in sorted(res.items())))
    assert r.returncode == 0, "testbed failed (%d)" % r.returncode
    return res


def flow(res, name):
    return next(f for f in res["flows"] if f["name"] == name)


@pytest.mark.parametrize("scheme", ["afcd", "fall"])
def test_reno_gets_its_share_against_cubic(results, scheme):
    r = results[("cubic-reno", scheme)]
    assert flow(r, "reno")["goodput_mbps"] >= 0.35 * RATE, r["flows"]
    assert r["jain"] > 0.95
    assert r["utilization"] > 0.8


def test_afcd_keeps_the_queue_near_target(results):
    """Ping RTT minus base RTT in the TCG VM carries several ms of timer
    jitter from netem and fq (fq_codel, whose queue a ping never waits in,
    shows p99 9-16 ms there), so the tail bound is 3x target at p95 and
    4x (below the 100 % BDP horizon) at p99."""
    r = results[("cubic-reno", "afcd")]
    q = r["queue_delay_ms"]
    assert q["p50"] < 2 * TARGET, q
    assert q["p95"] < 3 * TARGET, q
    assert q["p99"] < 4 * TARGET, q


def test_fall_keeps_p99_delay_under_3x_global_target(results):
    r = results[("cubic-reno", "fall")]
    gt_ms = r["afcd_stats"]["estimates"]["global_target_ns"] / 1e6
    assert gt_ms <= RTT
    assert r["queue_delay_ms"]["p99"] < 3 * (RTT / 2 ** 0.5), r["queue_delay_ms"]


@pytest.mark.parametrize("scheme", ["afcd", "fall"])
def test_estimates_refreshed_by_the_kernel_timer(results, scheme):
    """On Debian's kernel the loader's BPF timer runs the refresh step
    every update_period (the testbed uses 10 ms for both), fresh at the
    end of the run; the loader scans the ring every 50 ms. TCG fires
    timers late, so two thirds of the nominal refreshes and half the
    nominal scans over the 14 s of traffic are required (the loader runs
    longer than that)."""
    e = results[("cubic-reno", scheme)]["afcd_stats"]["estimates"]
    assert e["loader_fresh"] and e["refresher"] == "kernel", e
    assert e["refreshes"] >= 14 * 100 * 2 / 3, e
    assert e["scans"] >= 14 * 20 / 2, e
    assert e["refresh_busy_ns"] > 0, e
    print("%s: %d refreshes, %d scans, %.1f us per refresh step (TCG)"
          % (scheme, e["refreshes"], e["scans"], e["refresh_busy_ns"] / 1e3 / e["refreshes"]))


def test_droptail_with_a_bdp_buffer_shows_the_queue(results):
    r = results[("cubic-reno", "droptail")]
    a = results[("cubic-reno", "afcd")]
    assert r["queue_delay_ms"]["p95"] > 0.75 * RTT, r["queue_delay_ms"]   # the buffer fills
    assert r["queue_delay_ms"]["p50"] > a["queue_delay_ms"]["p50"], \
        (r["queue_delay_ms"], a["queue_delay_ms"])


def test_afcd_protects_cubic_from_a_udp_flood(results):
    """Measured in the TCG VM: CUBIC keeps 10-20 % against UDP at 1.5x the
    link under AFCD (drop-tail and CoDel: about 1 %, fq_codel: 47 %). The
    policer does the work: the CoDel law alone cannot hold a
    non-responsive flow."""
    r = results[("cubic-udp", "afcd")]
    assert flow(r, "cubic")["goodput_mbps"] >= 0.08 * RATE, r["flows"]
    st = r["afcd_stats"]["queue"]
    assert st["aqm_drop"] > 0 and st["police_drop"] > 0


def test_tracer_measured_sojourn_matches_prediction(tmp_path):
    out = str(tmp_path)
    r = subprocess.run([sys.executable, TESTBED, "script",
                        os.path.join(ROOT, "tests", "vm", "trace_check.py"), "--out", out],
                       timeout=900)
    assert r.returncode == 0
    with open(os.path.join(out, "trace.json")) as fh:
        tr = json.load(fh)
    tcp = [f for f in tr["flows"] if f["flow"].startswith("tcp") and f["packets"] > 500]
    assert len(tcp) >= 2, tr["flows"]
    for f in tcp:
        # sch_fq releases each packet at its tstamp: the measured sojourn is
        # the predicted one plus timer lateness (fq's 10 us slack, and
        # 0.2-3 ms late timers under TCG), never earlier. The tail (p99) is
        # not checked: the VM stalls for ~100 ms now and then under TCG,
        # more so with the tracer's own Python consuming every event
        assert f["predicted_ms_mean"] > 0.5, f
        assert 0 <= f["error_ms_p50"] < 1.0 + 0.1 * f["predicted_ms_mean"], f
        assert f["early_ms_max"] < 0.1, f
    # packets died at tc egress (afcd's drops), not in sch_fq
    reasons = {d["reason"]: d["packets"] for d in tr["drops"]}
    assert reasons.get("QDISC_DROP", 0) == 0, reasons
    assert set(reasons) <= {"TC_EGRESS", "NOT_SPECIFIED"}, reasons
