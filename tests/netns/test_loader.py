# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Loader and attachment tests in network namespaces on the host kernel.

This kernel has no sch_fq, so the loader runs with --skip-fq-check here:
these tests check attachment, counting, configuration and lifecycle, not
the pacing (that is the VM scenarios' job).
"""
import json
import os
import re
import signal
import socket
import subprocess
import time

import pytest

from testbed import netns as nslib
from testbed.netns import afcd, afcd_stats, in_ns, start_loader, stop, tc_state

RATE = "100mbit"


def hand_attach(ns, dev):
    """The by-hand attachment of docs/OPERATING.md: clsact and the object with tc."""
    in_ns(ns, ["tc", "qdisc", "add", "dev", dev, "clsact"])
    in_ns(ns, ["tc", "filter", "add", "dev", dev, "egress", "bpf", "da", "obj",
               nslib.BPF_OBJ, "sec", "tc"])


def traffic(a, b, seconds=1, udp=None):
    """A ping and a short, bounded TCP transfer from a to b (or, with udp
    a rate such as "20M", an open-loop UDP stream of that rate)."""
    in_ns(a, ["ping", "-c", "3", "-i", "0.2", "-W", "1", "198.18.0.2"])
    in_ns(a, ["ping", "-6", "-c", "2", "-i", "0.2", "-W", "1", "fd00::2"])
    srv = subprocess.Popen(nslib.ns_cmd(b, ["iperf3", "-s", "-1", "-p", "5201"]),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):
            if "5201" in in_ns(b, ["ss", "-ltn"]).stdout:
                break
            time.sleep(0.05)
        in_ns(a, ["iperf3", "-c", "198.18.0.2", "-p", "5201", "-t", str(seconds)] +
              (["-u", "-b", udp] if udp else []), timeout=seconds + 20)
    finally:
        srv.wait(timeout=10)


@pytest.mark.parametrize("hook", ["auto", "clsact"])
def test_attach_traffic_counted_and_detach_leaves_nothing(pair, tmp_path, hook):
    """--attach auto takes tcx where this build and kernel have it (issue
    14.2), clsact otherwise; either way the same datapath runs."""
    a, b = pair
    want = nslib.default_hook() if hook == "auto" else hook
    before = tc_state(a, "v0")
    p = start_loader(a, "v0", "rate", RATE, "--skip-fq-check", "--attach", hook,
                     log=tmp_path / "l.log")
    try:
        # attached with libbpf (a clsact filter at our handle, or a pinned
        # tcx link), maps and link pinned 0600
        assert nslib.hooks(a, "v0") == [want]
        assert afcd_stats(a, "v0", flows=False, dt=0)["hook"] == want
        if want == "clsact":
            assert "direct-action" in in_ns(a, ["tc", "filter", "show", "dev", "v0",
                                                "egress"]).stdout
        assert len(nslib.link_pins()) == (want == "tcx")
        for n in nslib.pins():
            st = os.stat(os.path.join(nslib.PIN_DIR, n))
            assert st.st_mode & 0o777 == 0o600, n
        traffic(a, b)
        s = afcd_stats(a, "v0")
        q = s["queue"]
        assert q["passed"] > 20 and q["passed_bytes"] > 1_000_000
        assert s["estimates"]["loader_fresh"] and s["estimates"]["loader_pid"] == p.pid
        # the loader's water level, whole and exact: once a scan and a
        # refresh (50 and 10 ms) have followed the traffic, both are the
        # same scan's, the fraction below the next whole sample (below one
        # sample only where the level is one)
        time.sleep(0.2)
        e = afcd_stats(a, "v0", flows=False)["estimates"]
        assert e["waterline"] > 0 and e["waterline_milli"] > 0, e
        assert e["waterline_milli"] < (e["waterline"] + 1) * 1000, e
        assert e["waterline_milli"] >= e["waterline"] * 1000 or e["waterline"] == 1, e
        keys = [fl["key"] for fl in s["flows"]]
        assert any(k.startswith("tcp 198.18.0.1:") and k.endswith("> 198.18.0.2:5201")
                   for k in keys), keys
        assert any(k.startswith("icmp 198.18.0.1") for k in keys), keys
        assert any(k.startswith("icmp6 [fd00::1]") for k in keys), keys
        assert s["queue"]["flows_live"] == len(s["flows"])
    finally:
        assert stop(p) == 0
    assert tc_state(a, "v0") == before          # no filter, clsact or tcx link left
    assert nslib.pins() == []                   # no pin left
    assert "lost" not in (tmp_path / "l.log").read_text()


def test_attach_tcx_explicitly(pair):
    """--attach tcx: a tcx link bpftool lists (with its link id) where the
    build and kernel have tcx; else refused with one line naming why, and
    nothing changed (a libbpf 1.1 build, or Linux < 6.6)."""
    a, b = pair
    before = tc_state(a, "v0")
    if nslib.version()["tcx"] != "yes":
        r = afcd(a, "attach", "v0", "rate", RATE, "--skip-fq-check", "--attach", "tcx",
                 check=False)
        assert r.returncode == 1 and r.stderr.startswith("afcd: --attach tcx: ")
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert tc_state(a, "v0") == before and nslib.pins() == []
        return
    p = start_loader(a, "v0", "rate", RATE, "--skip-fq-check", "--attach", "tcx")
    try:
        out = json.loads(in_ns(a, ["bpftool", "-j", "net", "show", "dev", "v0"]).stdout)
        tcx = [e for e in out[0]["tc"] if e["kind"] == "tcx/egress"]
        assert len(tcx) == 1 and tcx[0]["name"] == "afcd_egress" and tcx[0]["link_id"] > 0
        assert in_ns(a, ["tc", "filter", "show", "dev", "v0", "egress"]).stdout == ""
        assert "clsact" not in in_ns(a, ["tc", "qdisc", "show", "dev", "v0"]).stdout
        traffic(a, b)
        assert afcd_stats(a, "v0", flows=False)["queue"]["passed"] > 20
    finally:
        assert stop(p) == 0
    assert tc_state(a, "v0") == before and nslib.pins() == []


def test_live_parameter_change(pair):
    a, b = pair
    p = start_loader(a, "v0", "rate", RATE, "algo", "afcd", "--skip-fq-check")
    try:
        prog_before = tc_state(a, "v0")
        # the defaults are afcd_config_defaults()'s: codel_state queue,
        # a pacing credit of 3 ms
        c = afcd_stats(a, "v0", flows=False)["config"]
        assert (c["codel_state"], c["burst_ns"]) == ("queue", 3_000_000)
        afcd(a, "set", "v0", "target", "2ms", "ecn", "on", "algo", "fall", "rtt", "20ms",
             "interval", "40ms", "codel_state", "per-flow", "burst", "0")
        s = afcd_stats(a, "v0", flows=False)
        c = s["config"]
        assert (c["target_ns"], c["ecn"], c["algo"], c["rtt_ns"], c["interval_ns"],
                c["codel_state"], c["burst_ns"]) == (2_000_000, True, "fall", 20_000_000,
                                                     40_000_000, "per-flow", 0)
        afcd(a, "set", "v0", "codel_state", "global")
        assert afcd_stats(a, "v0", flows=False)["config"]["codel_state"] == "global"
        # a change of another parameter keeps it
        afcd(a, "set", "v0", "target", "3ms")
        assert afcd_stats(a, "v0", flows=False)["config"]["codel_state"] == "global"
        afcd(a, "set", "v0", "target", "2ms")
        assert c["rate_bps"] == 100_000_000               # untouched
        # same program, not reattached; the loader follows the new config
        assert tc_state(a, "v0") == prog_before
        time.sleep(0.2)
        s = afcd_stats(a, "v0", flows=False)
        assert s["estimates"]["loader_fresh"]
        # N = 0 -> FaLL global target = RTT
        assert s["estimates"]["global_target_ns"] == 20_000_000
        # a bad live change is refused and changes nothing
        r = afcd(a, "set", "v0", "target", "50ms", check=False)
        assert r.returncode != 0 and "target" in r.stderr and "interval" in r.stderr
        assert afcd_stats(a, "v0", flows=False)["config"]["target_ns"] == 2_000_000
        assert p.poll() is None
    finally:
        stop(p)


def test_kill9_datapath_survives_and_restart_adopts(pair):
    a, b = pair
    p = start_loader(a, "v0", "rate", RATE, "--skip-fq-check")
    traffic(a, b)
    passed = afcd_stats(a, "v0", flows=False)["queue"]["passed"]
    p.send_signal(signal.SIGKILL)
    p.wait()
    # no loader: the filter and pins stay, packets are still counted, and
    # after stale_after (1 s) the datapath uses its own estimates
    assert nslib.hooks(a, "v0") == [nslib.default_hook()]
    time.sleep(1.2)
    traffic(a, b)
    s = afcd_stats(a, "v0", flows=False)
    assert s["queue"]["passed"] > passed
    assert not s["estimates"]["loader_fresh"]
    # the kernel refresh timer stopped itself with the loader's scan
    assert s["estimates"]["refresher"] == "none" and s["estimates"]["heartbeat_age_ns"] == -1
    r = s["estimates"]["refreshes"]
    time.sleep(0.1)
    assert afcd_stats(a, "v0", flows=False, dt=0)["estimates"]["refreshes"] == r
    # a new loader adopts the program and the pinned state
    p2 = start_loader(a, "v0", "rate", RATE, "--skip-fq-check")
    try:
        s2 = afcd_stats(a, "v0", flows=False)
        assert s2["queue"]["passed"] >= s["queue"]["passed"]   # state kept
        assert s2["estimates"]["loader_pid"] == p2.pid and s2["estimates"]["loader_fresh"]
        assert s2["estimates"]["refresher"] == "kernel"     # the timer re-armed
        assert nslib.hooks(a, "v0") == [nslib.default_hook()]   # adopted, not added
    finally:
        stop(p2)
    assert nslib.pins() == []


@pytest.mark.parametrize("mode,who", [("kernel", "kernel"), ("user", "loader"),
                                      ("auto", "kernel")])
def test_refresh_modes(pair, mode, who):
    """The refresh step runs every update_period from the BPF timer
    (kernel) or from the loader process (user), and the same estimates
    come out: m_fair, FaLL's RTT/sqrt(N), heartbeat."""
    a, b = pair
    p = start_loader(a, "v0", "rate", RATE, "algo", "fall", "rtt", "20ms", "interval", "100ms",
                     "update_period", "2ms", "--skip-fq-check", "--refresh", mode)
    try:
        s0 = afcd_stats(a, "v0", flows=False, dt=0)
        time.sleep(0.5)
        s1 = afcd_stats(a, "v0", flows=False, dt=0)
        e0, e1 = s0["estimates"], s1["estimates"]
        assert e1["refresher"] == who and e1["loader_fresh"]
        n = e1["refreshes"] - e0["refreshes"]
        assert 50 <= n <= 300, n                    # 250 at 2 ms, timers run late
        assert e1["heartbeat_age_ns"] < 100_000_000
        assert e1["scans"] > e0["scans"]            # the loader scans the ring
        assert e1["global_target_ns"] == 20_000_000  # no flows: N = 1
        if who == "kernel":
            assert e1["refresh_busy_ns"] > e0["refresh_busy_ns"]
    finally:
        assert stop(p) == 0
    assert nslib.pins() == []


def test_refresh_kernel_refused_cleanly_when_bad(pair):
    """--refresh with a bad value is refused before anything changes."""
    a, _ = pair
    before = tc_state(a, "v0")
    r = afcd(a, "attach", "v0", "rate", RATE, "--skip-fq-check", "--refresh", "sometimes",
             check=False)
    assert r.returncode != 0 and "refresh" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert tc_state(a, "v0") == before and nslib.pins() == []


@pytest.mark.parametrize("hook", ["auto", "clsact"])
def test_keep_leaves_it_running(pair, hook):
    """With --keep the program stays attached after the loader exits (a
    tcx link by its pin) and `afcd detach` from another process removes
    it and every pin."""
    a, b = pair
    want = nslib.default_hook() if hook == "auto" else hook
    p = start_loader(a, "v0", "rate", RATE, "--skip-fq-check", "--keep", "--attach", hook)
    stop(p)
    assert nslib.hooks(a, "v0") == [want]
    assert nslib.pins(links=False) == sorted(nslib.PIN_NAMES)
    assert len(nslib.link_pins()) == (want == "tcx")
    traffic(a, b)
    assert afcd_stats(a, "v0", flows=False)["queue"]["passed"] > 0
    afcd(a, "detach", "v0")
    assert nslib.hooks(a, "v0") == []
    assert nslib.pins() == []


def test_hand_attached_with_tc_then_configured_and_adopted(pair):
    a, b = pair
    hand_attach(a, "v0")
    assert nslib.pins() == sorted(nslib.PIN_NAMES)
    # unconfigured: packets pass untouched
    in_ns(a, ["ping", "-c", "2", "-i", "0.2", "198.18.0.2"])
    r = afcd(a, "stats", "v0", check=False)
    assert r.returncode != 0 and "not configured" in r.stderr
    # configure without a loader
    afcd(a, "set", "v0", "rate", RATE, "algo", "codel")
    traffic(a, b)
    s = afcd_stats(a, "v0")
    assert s["queue"]["passed"] > 20 and s["config"]["algo"] == "codel"
    assert not s["estimates"]["loader_fresh"]
    assert any(fl["dport"] == 5201 for fl in s["flows"])
    # the loader adopts the hand-attached filter instead of adding one
    p = start_loader(a, "v0", "rate", RATE, "algo", "afcd", "--skip-fq-check")
    try:
        f = in_ns(a, ["tc", "filter", "show", "dev", "v0", "egress"]).stdout
        assert nslib.hooks(a, "v0") == ["clsact"] and "pref 49152" in f
        assert afcd_stats(a, "v0", flows=False)["config"]["algo"] == "afcd"
    finally:
        stop(p)
    assert in_ns(a, ["tc", "filter", "show", "dev", "v0", "egress"]).stdout == ""
    assert nslib.pins() == []


def test_prometheus_endpoint(pair):
    a, b = pair
    port = 9400 + os.getpid() % 100
    p = start_loader(a, "v0", "rate", RATE, "--skip-fq-check", "--prometheus", port)
    try:
        in_ns(a, ["ping", "-c", "2", "-i", "0.2", "198.18.0.2"])
        body = in_ns(a, ["python3", "-c",
                         "import urllib.request,sys;sys.stdout.write(urllib.request.urlopen("
                         "'http://127.0.0.1:%d/metrics',timeout=5).read().decode())" % port]).stdout
        assert '# TYPE afcd_packets_total counter' in body
        assert 'afcd_drops_total{dev="v0",reason="aqm"}' in body
        assert 'afcd_queue_delay_seconds{dev="v0"}' in body
        line = [l for l in body.splitlines() if l.startswith("afcd_packets_total")][0]
        assert int(line.split()[-1]) >= 2
        assert 'afcd_rate_bytes_per_second{dev="v0"} 12500000' in body
    finally:
        stop(p)
    # Prometheus's own linter (units in names, _total
    # counters), and one label set per family: dev, plus reason or kind
    r = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    for line in body.splitlines():
        if line.startswith("afcd_"):
            labels = line[line.index("{") + 1:line.index("}")].split(",")
            assert labels[0] == 'dev="v0"' and len(labels) <= 2, line
            assert all(l.split("=")[0] in ("dev", "reason", "kind") for l in labels), line


FLOOD = r"""
import http.client, socket, sys, threading, time
port = int(sys.argv[1])
idle = []
for _ in range(30):                        # idle connections that never send
    try:
        idle.append(socket.create_connection(("127.0.0.1", port), timeout=2))
    except OSError:
        pass
def burst():
    for _ in range(30):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=0.5)
            s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
            s.close()                      # without reading the answer
        except OSError:
            pass
ts = [threading.Thread(target=burst) for _ in range(10)]   # 300 requests
for t in ts: t.start()
for t in ts: t.join()
time.sleep(1.0)
for s in idle: s.close()
"""


def _http(ns, port, method, path):
    """(status, body) of one request from inside ns."""
    r = in_ns(ns, ["python3", "-c",
                   "import http.client,sys;c=http.client.HTTPConnection('127.0.0.1',%d,timeout=5);"
                   "c.request('%s','%s');r=c.getresponse();"
                   "sys.stdout.write('%%d\\n' %% r.status + r.read().decode())"
                   % (port, method, path)])
    status, _, body = r.stdout.partition("\n")
    return int(status), body


def test_prometheus_answers_only_metrics_and_survives_a_flood(pair):
    """Expected result: /metrics answers 200 to GET, other paths 404, other
    methods 405; while 30 idle connections and 300 unread requests from 10
    threads hit the port, the loader's scans go on at their period (at least
    half of the scans a quiet second gets) and /metrics still answers
    afterwards (served from the tick, they would stop the scans for
    15 s)."""
    a, b = pair
    port = 9500 + os.getpid() % 100
    p = start_loader(a, "v0", "rate", RATE, "--skip-fq-check", "--prometheus", port)
    try:
        assert _http(a, port, "GET", "/metrics")[0] == 200
        assert _http(a, port, "GET", "/")[0] == 404
        assert _http(a, port, "POST", "/metrics")[0] == 405
        assert _http(a, port, "DELETE", "/x")[0] == 405

        def scans():
            return afcd_stats(a, "v0", flows=False, dt=0)["estimates"]["scans"]

        s0, t0 = scans(), time.monotonic()
        time.sleep(2.0)
        quiet = (scans() - s0) / (time.monotonic() - t0)
        s0, t0 = scans(), time.monotonic()
        in_ns(a, ["python3", "-c", FLOOD, str(port)], timeout=120)
        flood = (scans() - s0) / (time.monotonic() - t0)
        assert flood >= 0.5 * quiet, (flood, quiet)
        status, body = _http(a, port, "GET", "/metrics")
        assert status == 200 and "afcd_packets_total" in body
        assert p.poll() is None
    finally:
        stop(p)


def test_bpftool_recipes_name_real_flows(pair):
    """The bpftool recipes of docs/OPERATING.md, against our pins."""
    a, b = pair
    p = start_loader(a, "v0", "rate", RATE, "--skip-fq-check")
    try:
        traffic(a, b)
        flows = json.loads(nslib.sh(["bpftool", "-j", "map", "dump", "pinned",
                                     nslib.PIN_DIR + "/afcd_flows"]).stdout)
        ports = {e["formatted"]["value"]["key"]["dport"] for e in flows if "formatted" in e}
        assert socket.htons(5201) in ports, ports
        cfg = json.loads(nslib.sh(["bpftool", "-j", "map", "dump", "pinned",
                                   nslib.PIN_DIR + "/afcd_cfg"]).stdout)
        assert cfg[0]["formatted"]["value"]["rate_bps"] == 100_000_000
        q = nslib.sh(["bpftool", "map", "dump", "pinned", nslib.PIN_DIR + "/afcd_queue"]).stdout
        assert "t_last_ns" in q and "stats" in q
        net = in_ns(a, ["bpftool", "net", "show", "dev", "v0"]).stdout
        assert "afcd_egress" in net and "tc" in net
        assert "afcd_egress" in nslib.sh(["bpftool", "prog", "show", "name", "afcd_egress"]).stdout
    finally:
        stop(p)


BAD_CASES = [
    (["attach", "v0", "rate", "0"], "rate"),
    (["attach", "v0", "rate", "100mbit", "target", "100ms", "interval", "100ms"], "interval"),
    (["attach", "v0", "rate", "100mbit", "horizon", "1ms"], "horizon"),
    (["attach", "v0", "rate", "100mbit", "sb_size", "0"], "sb_size"),
    (["attach", "v0", "rate", "100mbit", "sb_size", "40000"], "sb_size"),
    (["attach", "v0", "rate", "fast"], "rate"),
    (["attach", "v0", "rate", "100mbit", "algo", "red"], "algo"),
    (["attach", "v0", "rate", "100mbit", "exponent", "9"], "exponent"),
    (["attach", "v0", "rate", "100mbit", "bogus", "1"], "bogus"),
    (["attach", "v0", "rate", "100mbit", "alpha", "nan"], "alpha"),
    (["attach", "v0", "rate", "100mbit", "alpha", "inf"], "alpha"),
    (["attach", "v0", "rate", "100mbit", "beta", "0"], "beta"),
    (["attach", "v0", "rate", "100mbit", "alpha", "1.9"], "alpha"),      # beta 1.8 <= alpha
    (["attach", "v0", "rate", "100mbit", "stale_after", "10000000000s"], "stale_after"),
    (["attach", "v0", "rate", "100mbit", "burst", "2s"], "burst"),
    (["attach", "v0", "rate", "100mbit", "sample_bytes", "5000000000"], "sample_bytes"),
    (["attach", "v0", "rate", "100mbit", "window", "1000000000s"], "window"),
    (["attach", "v0", "rate", "100mbit", "isolate", "hosts"], "isolate"),
    (["attach", "v0", "rate", "100mbit", "codel_state", "aggregate"], "codel_state"),
    (["attach", "nosuchdev0", "rate", "100mbit"], "nosuchdev0"),
    (["attach", "v0", "rate", "100mbit"], "fq"),                 # no sch_fq under it
    (["attach", "v0", "rate", "100mbit", "--install-fq"], "sch_fq"),
    (["set", "v0", "rate", "100mbit"], "attach first"),          # nothing pinned
    (["stats", "v0"], "attach first"),
    (["detach"], "usage"),
]


@pytest.mark.parametrize("args,word", BAD_CASES, ids=[" ".join(c[0]) for c in BAD_CASES])
def test_bad_input_one_line_error_changes_nothing(pair, args, word):
    a, b = pair
    if "--install-fq" in args and \
            in_ns(a, ["tc", "qdisc", "add", "dev", "lo", "root", "fq"], check=False).returncode == 0:
        in_ns(a, ["tc", "qdisc", "del", "dev", "lo", "root"], check=False)
        pytest.skip("this kernel has sch_fq: the missing-fq message cannot be shown")
    before = (tc_state(a, "v0"), nslib.pins())
    r = afcd(a, *args, check=False)
    assert r.returncode != 0
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, r.stderr
    assert word in lines[0], lines[0]
    assert (tc_state(a, "v0"), nslib.pins()) == before


def test_no_privileges_changes_nothing(pair):
    a, b = pair
    before = (tc_state(a, "v0"), nslib.pins())
    r = in_ns(a, ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                  nslib.AFCD, "attach", "v0", "rate", RATE], check=False)
    assert r.returncode != 0
    assert "root" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert (tc_state(a, "v0"), nslib.pins()) == before


def test_missing_btf_is_refused(pair):
    a, b = pair
    before = (tc_state(a, "v0"), nslib.pins())
    r = in_ns(a, ["env", "AFCD_BTF_PATH=/nonexistent", nslib.AFCD, "attach", "v0", "rate",
                  RATE, "--skip-fq-check"], check=False)
    assert r.returncode != 0 and "BTF" in r.stderr
    assert (tc_state(a, "v0"), nslib.pins()) == before


def test_config_file_and_flags_override(pair, tmp_path):
    a, b = pair
    conf = tmp_path / "afcd.conf"
    conf.write_text("# afcd config\nalgo fall\nrate = 200mbit\nrtt 10ms\ninterval 20ms\n"
                    "ce_threshold 1ms\n")
    p = start_loader(a, "v0", "-c", conf, "rate", RATE, "--skip-fq-check")
    try:
        c = afcd_stats(a, "v0", flows=False)["config"]
        assert (c["algo"], c["rate_bps"], c["rtt_ns"], c["interval_ns"], c["ce_threshold_ns"]) \
            == ("fall", 100_000_000, 10_000_000, 20_000_000, 1_000_000)
        assert c["update_period_ns"] == 1_000_000          # FaLL default
        assert c["sample_bytes"] == 100_000_000 // 8 // 2000
    finally:
        stop(p)
    bad = tmp_path / "bad.conf"
    bad.write_text("rate 100mbit\ntarget soon\n")
    r = afcd(a, "attach", "v0", "-c", bad, "--skip-fq-check", check=False)
    assert r.returncode != 0 and "bad.conf:2" in r.stderr and "target" in r.stderr
    # trailing tokens, a NUL byte, an overlong line: one error naming the
    # line, nothing attached
    before = (tc_state(a, "v0"), nslib.pins())
    for body, line, word in ((b"rate 100mbit\ntarget 5ms 7ms\n", 2, "after the value"),
                             (b"rate 100mbit\n\x00target 1ms\n", 2, "NUL"),
                             (b"rate 100mbit\n#" + b"x" * 600 + b"\n", 2, "longer")):
        bad.write_bytes(body)
        r = afcd(a, "attach", "v0", "-c", bad, "--skip-fq-check", check=False)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert r.returncode != 0 and len(lines) == 1, r.stderr
        assert "bad.conf:%d" % line in lines[0] and word in lines[0], lines[0]
        assert (tc_state(a, "v0"), nslib.pins()) == before
    # a file that never ends (/dev/zero), one too large, one that cannot
    # be read (a directory): one error at once, nothing attached (before:
    # /dev/zero was read until memory ran out, and a read error was taken
    # for the end of the file)
    big = tmp_path / "big.conf"
    big.write_text("# padding\n" * 7000 + "rate 100mbit\n")
    for path, word in (("/dev/zero", "larger than 65536 bytes"), (big, "larger than"),
                       (tmp_path, "read error")):
        r = afcd(a, "attach", "v0", "-c", path, "--skip-fq-check", check=False, timeout=10)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert r.returncode != 0 and len(lines) == 1 and word in lines[0], r.stderr
        assert (tc_state(a, "v0"), nslib.pins()) == before


MANY_FLOWS = r"""
import socket, sys
for i in range(int(sys.argv[1])):           # one datagram from each source port
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("198.18.0.1", 10000 + i))
    s.sendto(b"x", ("198.18.0.2", 9))
    s.close()
"""


def test_stats_json_of_many_flows_streamed(pair):
    """Expected result: `stats -j --flows -k 100000` over 30,000 live
    flows prints one JSON object with every one of them and peaks below
    48 MB (the flows are written one at a time; built as one JSON tree
    they took 114 MB here, 243 MB at 65,536 flows)."""
    a, b = pair
    hand_attach(a, "v0")
    afcd(a, "set", "v0", "rate", "10gbit")
    in_ns(a, ["ping", "-c", "1", "-W", "1", "198.18.0.2"])
    in_ns(a, ["python3", "-c", MANY_FLOWS, "30000"], timeout=120)
    r = in_ns(a, ["/usr/bin/time", "-f", "%M", nslib.AFCD, "stats", "v0", "-j", "--flows", "-k",
                  "100000", "--dt", "0"], timeout=60)
    flows = json.loads(r.stdout)["flows"]
    maxrss_kb = int(r.stderr.strip().splitlines()[-1])
    print("\n    %d flows, peak %.1f MB" % (len(flows), maxrss_kb / 1024))
    assert len(flows) >= 30000
    assert maxrss_kb < 48 * 1024, maxrss_kb


def test_afcd_top_names_real_flows(pair):
    """The live view on a filter attached by hand and configured with
    `afcd set`, without a loader."""
    a, b = pair
    hand_attach(a, "v0")
    afcd(a, "set", "v0", "rate", RATE, "algo", "afcd")
    srv = subprocess.Popen(nslib.ns_cmd(b, ["iperf3", "-s", "-1", "-p", "5201"]),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        cli = subprocess.Popen(nslib.ns_cmd(a, ["iperf3", "-c", "198.18.0.2", "-p", "5201",
                                                "-t", "3"]), stdout=subprocess.DEVNULL)
        time.sleep(1.0)
        top = in_ns(a, [os.path.join(nslib.ROOT, "tools", "afcd-top"), "v0", "-n", "2",
                        "-i", "0.5", "--plain"], timeout=30).stdout
        cli.wait(timeout=20)
    finally:
        srv.wait(timeout=20)
    assert "afcd-top  dev v0  algo afcd  rate 100.00Mbit" in top
    assert "datapath fallback" in top                     # no loader running
    flows = [l for l in top.splitlines() if l.startswith("tcp 198.18.0.1:")]
    assert any("198.18.0.2:5201" in l for l in flows), top
    # the second frame measures a rate for the bulk flow
    assert any("Mbit" in l.split()[4] for l in flows if len(l.split()) > 4), top


def test_isolate_and_police_params(pair):
    """isolate and police are parameters like the others: set at attach,
    changed live, shown by stats -j and afcd params, refused when bad."""
    a, b = pair
    p = start_loader(a, "v0", "rate", RATE, "isolate", "srchost", "--skip-fq-check")
    try:
        c = afcd_stats(a, "v0", flows=False)["config"]
        assert (c["isolate"], c["police"]) == ("srchost", True)
        assert (c["alpha"], c["beta"]) == (1.7, 1.8)
        # with srchost, every flow of a host is one entry keyed by its address
        traffic(a, b)
        s = afcd_stats(a, "v0")
        assert all(f["sport"] == 0 and f["dport"] == 0 and f["dst"] in ("0.0.0.0", "::")
                   for f in s["flows"]), s["flows"]
        assert {f["src"] for f in s["flows"]} >= {"198.18.0.1", "fd00::1"}
        afcd(a, "set", "v0", "isolate", "dsthost", "police", "off")
        c = afcd_stats(a, "v0", flows=False)["config"]
        assert (c["isolate"], c["police"]) == ("dsthost", False)
        r = afcd(a, "set", "v0", "isolate", "hosts", check=False)
        assert r.returncode != 0 and "isolate" in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
        assert afcd_stats(a, "v0", flows=False)["config"]["isolate"] == "dsthost"
    finally:
        stop(p)
    out = afcd(None, "params").stdout
    assert "isolate" in out and "police" in out


def test_second_attach_refused_then_takeover(pair):
    """A second loader on the same interface is refused with the running
    loader's PID and changes nothing; with --takeover it takes the
    interface and the first stops, leaving everything in place."""
    a, b = pair
    p1 = start_loader(a, "v0", "rate", RATE, "--skip-fq-check")
    try:
        before = (tc_state(a, "v0"), nslib.pins())
        r = afcd(a, "attach", "v0", "rate", "50mbit", "--skip-fq-check", check=False)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert r.returncode != 0 and len(lines) == 1 and str(p1.pid) in lines[0], r.stderr
        assert "--takeover" in lines[0]
        assert (tc_state(a, "v0"), nslib.pins()) == before
        assert afcd_stats(a, "v0", flows=False)["config"]["rate_bps"] == 100_000_000
        assert p1.poll() is None
        p2 = start_loader(a, "v0", "rate", "50mbit", "--skip-fq-check", "--takeover")
        try:
            assert p1.wait(timeout=10) == 1           # it noticed and stepped aside
            s = afcd_stats(a, "v0", flows=False)
            assert s["config"]["rate_bps"] == 50_000_000
            assert s["estimates"]["loader_pid"] == p2.pid
            assert nslib.hooks(a, "v0") == [nslib.default_hook()]
            time.sleep(0.3)
            s = afcd_stats(a, "v0", flows=False)
            assert s["estimates"]["loader_fresh"] and s["estimates"]["refresher"] == "kernel"
        finally:
            assert stop(p2) == 0
    finally:
        stop(p1)
    assert nslib.pins() == []


def test_sb_size_change_clears_stale_samples(pair):
    """A live change to a smaller sb_size restarts the ring: no flow keeps
    samples of the old ring (those past the new size would never age out).
    A 100 ms window makes every full-size packet a sample and open-loop UDP
    does not back off, so even a slow machine's one-second stream
    overfills both rings."""
    a, b = pair
    p = start_loader(a, "v0", "rate", "10mbit", "sb_size", "200", "window", "100ms",
                     "--skip-fq-check")
    try:
        traffic(a, b, udp="20M")
        s = afcd_stats(a, "v0")
        assert sum(f["m_i"] for f in s["flows"]) > 100, s["flows"]
        afcd(a, "set", "v0", "sb_size", "100")
        s = afcd_stats(a, "v0", dt=0)
        assert all(f["m_i"] == 0 for f in s["flows"]), s["flows"]
        assert s["estimates"]["n_flows"] == 0
        traffic(a, b, udp="20M")
        s = afcd_stats(a, "v0")
        assert 50 < sum(f["m_i"] for f in s["flows"]) <= 100, s["flows"]
    finally:
        stop(p)


FLOWS_FOR = r"""
import socket, sys, time
n, secs = int(sys.argv[1]), float(sys.argv[2])
socks = []
for i in range(n):                          # n flows, round robin, ~8 Mbit/s in all
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("198.18.0.1", 20000 + i))
    socks.append(s)
end, k = time.monotonic() + secs, 0
while time.monotonic() < end:
    socks[k % n].sendto(b"x" * 1000, ("198.18.0.2", 9))
    k += 1
    if k % n == 0:
        time.sleep(n * 0.001)
"""


@pytest.mark.parametrize("refresh", ["kernel", "user"])
def test_sb_grow_grows_the_ring_in_place(pair, tmp_path, refresh):
    """Expected result: 16 flows of their own in a ring of 30 slots (1.9
    slots a flow, below 3.0) make the loader grow it once the GC has counted
    them and the ring has been short for a window, to 3.3 slots a flow
    (52), logged from the size before; sb_grow off keeps 30. Either GC
    counts the crowd: the control program's walk, or the loader's own
    (--refresh user loads no control program). A larger sb_size by hand keeps
    every sample (the counts read before and after agree, with no traffic
    between); a smaller one starts the ring over."""
    a, b = pair
    log = tmp_path / "l.log"
    p = start_loader(a, "v0", "rate", "10mbit", "sb_size", "30", "window", "100ms",
                     "sb_grow", "off", "--skip-fq-check", "--refresh", refresh, log=log)
    try:
        in_ns(a, ["python3", "-c", FLOWS_FOR, "16", "1.5"], timeout=60)
        c = afcd_stats(a, "v0", flows=False)["config"]
        assert (c["sb_size"], c["sb_grow"]) == (30, False)
        afcd(a, "set", "v0", "sb_grow", "on")
        in_ns(a, ["python3", "-c", FLOWS_FOR, "16", "3"], timeout=60)
        s = afcd_stats(a, "v0", dt=0)
        grown = [l for l in log.read_text().splitlines() if "shadow buffer" in l]
        size = 30
        for l in grown:
            m = re.search(r"shadow buffer (\d+) -> (\d+) slots", l)
            assert m and int(m.group(1)) == size and size < int(m.group(2)) <= 2 * size, grown
            size = int(m.group(2))
        assert grown and size == 52 and s["config"]["sb_size"] == size, (s["config"], grown)
        held = sum(f["m_i"] for f in s["flows"])
        assert 0 < held <= s["config"]["sb_size"], s["flows"]
        afcd(a, "set", "v0", "sb_size", "400")
        s = afcd_stats(a, "v0", dt=0)
        assert sum(f["m_i"] for f in s["flows"]) == held, s["flows"]
        afcd(a, "set", "v0", "sb_size", "100")
        s = afcd_stats(a, "v0", dt=0)
        assert all(f["m_i"] == 0 for f in s["flows"]), s["flows"]
    finally:
        stop(p)


def test_concurrent_configs_get_distinct_slots(pair):
    """Expected result: four interfaces configured at the same moment, 25
    rounds, always get four different slots and all stay configured (issue
    11.4: without the pin directory's lock two collided in 8 of 40 rounds)."""
    a, b = pair
    hand_attach(a, "v0")
    afcd(a, "set", "v0", "rate", RATE)     # keeps the pins across the detaches below
    devs = ["s1", "s2", "s3", "s4"]
    for i in (1, 3):
        in_ns(a, ["ip", "link", "add", "s%d" % i, "type", "veth", "peer", "name", "s%d" % (i + 1)])
    try:
        for _ in range(25):
            ps = [subprocess.Popen(nslib.ns_cmd(a, [nslib.AFCD, "set", d, "rate", RATE]),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                  for d in devs]
            for p in ps:
                assert p.wait(timeout=30) == 0, p.stderr.read()
            slots = [afcd_stats(a, d, flows=False, dt=0)["slot"] for d in devs]
            assert len(set(slots)) == len(devs), slots
            for d in devs:
                afcd(a, "detach", d)
    finally:
        for d in devs:
            afcd(a, "detach", d, check=False)
        for d in ("s1", "s3"):
            in_ns(a, ["ip", "link", "del", d], check=False)


def test_same_ifindex_in_another_netns_refused(pair):
    """Expected result: namespaces a and b share the bpffs and their veths
    have the same ifindex; once a configured v0, every afcd command on v1
    in b (set, stats, detach, attach) is refused with one line naming the
    other namespace, and a's configuration is unchanged."""
    a, b = pair
    idx = [json.loads(in_ns(ns, ["ip", "-j", "link", "show", d]).stdout)[0]["ifindex"]
           for ns, d in ((a, "v0"), (b, "v1"))]
    assert idx[0] == idx[1], "the test needs equal ifindexes: %s" % idx
    hand_attach(a, "v0")
    afcd(a, "set", "v0", "rate", RATE, "algo", "codel")
    before = afcd_stats(a, "v0", flows=False, dt=0)["config"]
    for args in (["set", "v1", "rate", "5mbit"], ["stats", "v1"], ["detach", "v1"],
                 ["attach", "v1", "rate", "5mbit", "--skip-fq-check"]):
        r = afcd(b, *args, check=False)
        assert r.returncode != 0 and "another network namespace" in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert afcd_stats(a, "v0", flows=False, dt=0)["config"] == before
    assert nslib.hooks(b, "v1") == []


def test_takeover_from_another_netns_only_from_a_stopped_loader(pair, tmp_path):
    """Expected result: namespaces a and b share the bpffs and an ifindex;
    a's loader runs in a PID namespace of its own (so b cannot see its
    PID). While it scans, b's `attach --takeover` is refused in one line
    naming its PID and namespace, and a's config is unchanged. Stopped
    (SIGSTOP) for longer than the scans' staleness bound (2 s), it counts as
    stopped and b claims the slot; resumed, a's loader finds the slot
    another namespace's and exits 1 saying its interface has no AQM now
    (it exited 0 before, leaving everything to the intruder)."""
    a, b = pair
    log = str(tmp_path / "a.log")
    p = start_loader(a, "v0", "rate", RATE, "--skip-fq-check", log=log,
                     wrap=["unshare", "--pid", "--fork"])
    child = int(nslib.sh(["pgrep", "-P", str(p.pid)]).stdout.split()[0])
    try:
        before = afcd_stats(a, "v0", flows=False, dt=0)["config"]
        r = afcd(b, "attach", "v1", "rate", "5mbit", "--skip-fq-check", "--takeover",
                 check=False)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert r.returncode == 1 and len(lines) == 1, r.stderr
        assert "held by the afcd loader with PID 1 " in lines[0], lines
        assert "another network namespace" in lines[0], lines
        assert afcd_stats(a, "v0", flows=False, dt=0)["config"] == before
        os.kill(child, signal.SIGSTOP)
        time.sleep(2.3)
        pb = start_loader(b, "v1", "rate", "5mbit", "--skip-fq-check", "--takeover")
        try:
            # the slot's estimate was a's: ready once b's own scan is there
            deadline = time.time() + 15
            while afcd_stats(b, "v1", flows=False, dt=0)["estimates"]["loader_pid"] != pb.pid:
                assert time.time() < deadline and pb.poll() is None
                time.sleep(0.05)
            os.kill(child, signal.SIGCONT)
            assert p.wait(timeout=10) == 1
            text = open(log).read()
            assert "claimed from another network namespace" in text, text
            assert "has no AQM now" in text, text
            assert pb.poll() is None
        finally:
            assert stop(pb) == 0
    finally:
        try:
            os.kill(child, signal.SIGCONT)
        except ProcessLookupError:
            pass
        stop(p)


UDP_BURST = r"""
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(int(sys.argv[1])):
    s.sendto(b"x" * 1000, (sys.argv[2], 9))
"""


def test_hand_attached_in_another_netns_leaves_the_slot_alone(pair):
    """Expected result: namespaces a and b share the bpffs and their veths
    have the same ifindex; a's loader configures v0, and in b the object
    is attached by hand to v1's egress (tc, so it shares the pinned maps).
    b's packets pass v1 untouched and are counted as foreign_netns; a's
    queue counts none of them (its counters, its flows). Before the
    datapath compared the device's namespace with the config's, a's
    counters went from 2 to 2,464 passed and 3,450 drops from b's
    traffic, and a's flows paid for it."""
    a, b = pair
    idx = [json.loads(in_ns(ns, ["ip", "-j", "link", "show", d]).stdout)[0]["ifindex"]
           for ns, d in ((a, "v0"), (b, "v1"))]
    assert idx[0] == idx[1], "the test needs equal ifindexes: %s" % idx
    p = start_loader(a, "v0", "rate", "1mbit", "--skip-fq-check")
    try:
        hand_attach(b, "v1")
        in_ns(b, ["ping", "-c", "1", "-W", "1", "198.18.0.1"])     # neighbours resolved
        before = afcd_stats(a, "v0", flows=True, dt=0)
        in_ns(b, ["python3", "-c", UDP_BURST, "2000", "198.18.0.1"])
        after = afcd_stats(a, "v0", flows=True, dt=0)
    finally:
        assert stop(p) == 0
    q0, q1 = before["queue"], after["queue"]
    moved = sum(q1[k] - q0[k] for k in ("passed", "aqm_drop", "overlimit_drop"))
    assert moved < 20, (q0, q1)      # a's own few packets (neighbour replies)
    assert not any(f["dport"] == 9 for f in after["flows"]), after["flows"]
    foreign = after["global"]["foreign_netns"] - before["global"]["foreign_netns"]
    assert foreign >= 2000, after["global"]


def test_ifindex_beyond_the_index_found_by_the_scan(pair):
    """Expected result: an interface whose ifindex is past afcd_ifslot
    (AFCD_IFSLOT_MAX, 65536) is configured, counts its packets and
    detaches like any other, next to one found through the index; each
    keeps its own slot and counters."""
    a, b = pair
    in_ns(a, ["ip", "link", "add", "w0", "index", "70000", "type", "veth", "peer", "name", "w1",
              "netns", b])
    in_ns(a, ["ip", "addr", "add", "198.18.1.1/24", "dev", "w0"])
    in_ns(b, ["ip", "addr", "add", "198.18.1.2/24", "dev", "w1"])
    in_ns(a, ["ip", "link", "set", "w0", "up"])
    in_ns(b, ["ip", "link", "set", "w1", "up"])
    p0 = start_loader(a, "v0", "rate", RATE, "--skip-fq-check")
    p1 = start_loader(a, "w0", "rate", "50mbit", "--skip-fq-check")
    try:
        in_ns(a, ["ping", "-c", "5", "-i", "0.2", "-W", "1", "198.18.1.2"])
        s1 = afcd_stats(a, "w0", flows=False, dt=0)
        s0 = afcd_stats(a, "v0", flows=False, dt=0)
        assert s1["ifindex"] == 70000 and s1["config"]["rate_bps"] == 50_000_000
        assert s1["queue"]["passed"] >= 5, s1["queue"]
        assert s0["slot"] != s1["slot"] and s0["ifindex"] != 70000
    finally:
        assert stop(p1) == 0
        assert stop(p0) == 0
    assert nslib.hooks(a, "w0") == []


SEND_SCRIPT = r"""
import socket, sys
# one 1514-byte frame (1472 bytes of UDP payload) per call, port given
def send(sport, n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("198.18.0.1", sport))
    for _ in range(n):
        s.sendto(b"x" * 1472, ("198.18.0.2", 9))
    s.close()
send(40001, 80)
send(40002, 60)
for i in range(40):
    send(41000 + i, 1)
send(40001, 1)
"""


def test_stats_shows_the_estimate_the_datapath_uses(pair):
    """`afcd stats` shows the fair share and global target the datapath
    judges packets against, by the datapath's own rule. FaLL on its
    fallback (no loader: the estimate is stale), every full-size frame a
    sample: two flows of 81 and 60 frames and 40 of one. The first 4
    samples of each new flow are a mouse's and go to the mice aggregate
    (afcd_is_mouse()), one entity of 48 samples; the datapath's N is 3,
    m_fair = 200/3, and FaLL's fallback global target RTT/sqrt(3); a
    restatement that counted the mice one by one would show m_fair 4.
    Expected result:
    the last flow to send (above its share) has the target_i =
    global_target (m_fair/m_i)^3 of the estimate stats shows, within
    rounding."""
    a, b = pair
    p = start_loader(a, "v0", "rate", "1gbit", "algo", "fall", "rtt", "4ms", "interval",
                     "100ms", "sb_size", "200", "sample_bytes", "1514", "stale_after", "20ms",
                     "--refresh", "user", "--keep", "--skip-fq-check")
    stop(p)
    in_ns(a, ["ping", "-c", "1", "-W", "1", "198.18.0.2"])   # neighbour resolved
    time.sleep(0.1)                                          # estimate stale
    in_ns(a, ["python3", "-c", SEND_SCRIPT])
    s = json.loads(afcd(a, "stats", "v0", "-j", "--flows", "-k", "1000", "--dt", "0").stdout)
    e = s["estimates"]
    assert not e["loader_fresh"]
    f = next(f for f in s["flows"] if f["sport"] == 40001 and f["proto"] == 17)
    assert f["m_i"] == 81 - 4 and f["target_ns"] > 0, f
    assert s["estimates"]["mice_samples"] >= 40 + 2 * 4, e
    # the mice as one entity: N is 3 (4 or 5 if the ping or a neighbour
    # message was sampled), not 42
    assert 200 // 5 <= e["m_fair"] <= 200 // 3, e
    assert 4e6 / 2 ** 0.5 * 0.99 <= e["global_target_ns"] <= 4e6 / 2 ** 0.5 * 1.01 or \
        e["global_target_ns"] == pytest.approx(4e6 / 3 ** 0.5, rel=0.01), e
    want = e["global_target_ns"] * (e["m_fair"] / f["m_i"]) ** 3
    assert f["target_ns"] == pytest.approx(want, rel=0.005), (f, e)


def flow_table():
    """(entries, kernel bytes) of the pinned flow table."""
    m = json.loads(subprocess.run(["bpftool", "-j", "map", "show", "pinned",
                                   os.path.join(nslib.PIN_DIR, "afcd_flows")],
                                  capture_output=True, text=True, check=True).stdout)
    return m["max_entries"], m.get("bytes_memlock")


def test_flow_table_sized_once_for_every_interface(pair):
    """Expected result: --flow-table N sizes the flow table every interface
    shares (the pinned map has N entries); a second interface's loader
    asking another size is refused with one line naming the pinned size and
    changes nothing, one asking none follows the pinned size; a size out of
    range is refused before anything is made; after the last detach the
    next loader sizes it anew. The kernel's bytes an entry are printed."""
    a, b = pair
    in_ns(a, ["ip", "link", "add", "s1", "type", "veth", "peer", "name", "s2"])
    for d in ("s1", "s2"):
        in_ns(a, ["ip", "link", "set", d, "up"])
    p1 = start_loader(a, "v0", "rate", RATE, "--skip-fq-check", "--flow-table", "131072")
    try:
        n, mem = flow_table()
        assert n == 131072
        print("flow table: %d entries, %s bytes of kernel memory (%.0f an entry)"
              % (n, mem, (mem or 0) / n))
        before = (tc_state(a, "s1"), nslib.pins())
        r = afcd(a, "attach", "s1", "rate", RATE, "--skip-fq-check", "--flow-table", "4096",
                 "-q", check=False)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert r.returncode != 0 and len(lines) == 1 and "131072" in lines[0], r.stderr
        assert (tc_state(a, "s1"), nslib.pins()) == before
        p2 = start_loader(a, "s1", "rate", RATE, "--skip-fq-check")
        try:
            assert afcd_stats(a, "s1", flows=False)["config"]["rate_bps"] == 100_000_000
            assert flow_table()[0] == 131072
        finally:
            assert stop(p2) == 0
    finally:
        stop(p1)
        in_ns(a, ["ip", "link", "del", "s1"], check=False)
    assert nslib.pins() == []
    for bad in ("5", "16777217"):
        r = afcd(a, "attach", "v0", "rate", RATE, "--skip-fq-check", "--flow-table", bad,
                 "-q", check=False)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert r.returncode != 0 and len(lines) == 1 and "1024" in lines[0], r.stderr
        assert nslib.pins() == [] and nslib.hooks(a, "v0") == []
    p3 = start_loader(a, "v0", "rate", RATE, "--skip-fq-check", "--flow-table", "2048")
    try:
        assert flow_table()[0] == 2048
    finally:
        assert stop(p3) == 0
