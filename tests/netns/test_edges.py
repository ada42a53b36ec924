# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The control plane's edges, tried as a careless operator and a hostile
local user would: pins or the program removed under a running loader,
pins the operator cannot read, /metrics under slow and pipelining clients,
numbers and config files that only look right."""
import json
import os
import socket
import subprocess
import time

import pytest

from testbed import netns as nslib
from testbed.netns import afcd, afcd_stats, in_ns, start_loader, stop, tc_state

RATE = "100mbit"


def _wait_exit(p, timeout=5.0):
    """The loader's return code once it exits by itself within timeout
    (None if it is still running)."""
    try:
        return p.wait(timeout)
    except subprocess.TimeoutExpired:
        return None


@pytest.mark.parametrize("hook", ["auto", "clsact"])
def test_removed_pins_stop_the_loader(pair, tmp_path, hook):
    """Expected result: a pin removed under a running loader (an `rm`, a
    bpffs remount) is noticed within a scan or so: the loader says which
    pin in one line, removes the program it attached (which nobody could
    reach any more) and exits non-zero, so that systemd's Restart=on-failure
    attaches anew; it writes no heartbeat after that (before: with tcx the
    program was gone at once, and the loader reported a fresh heartbeat and
    served /metrics with 0 packets)."""
    a, _ = pair
    log = tmp_path / "loader.log"
    p = start_loader(a, "v0", "rate", RATE, "--skip-fq-check", "--attach", hook, log=log)
    try:
        os.unlink(os.path.join(nslib.PIN_DIR, "afcd_est"))
        rc = _wait_exit(p)
        assert rc not in (None, 0), rc
        text = log.read_text()
        assert "afcd_est" in text and "stopping" in text, text
        assert nslib.hooks(a, "v0") == []
    finally:
        stop(p)
        for name in nslib.pins():
            os.unlink(os.path.join(nslib.PIN_DIR, name))


def test_program_detached_by_hand_stops_the_loader(pair, tmp_path):
    """Expected result: the filter removed with tc behind the loader's back:
    the loader says the program is no longer attached, removes its config
    and pins and exits non-zero."""
    a, _ = pair
    log = tmp_path / "loader.log"
    p = start_loader(a, "v0", "rate", RATE, "--skip-fq-check", "--attach", "clsact", log=log)
    try:
        in_ns(a, ["tc", "filter", "del", "dev", "v0", "egress"])
        rc = _wait_exit(p)
        assert rc not in (None, 0), rc
        assert "no longer attached" in log.read_text(), log.read_text()
        assert nslib.pins() == []
    finally:
        stop(p)


def test_detach_without_access_to_the_pins_changes_nothing(pair):
    """Expected result: `afcd detach` that cannot open the pins (mode 000,
    without CAP_DAC_OVERRIDE) fails with one line naming the pins and
    changes nothing: the program, its config and the pins stay (before: it
    removed the program, left the config and said "(it had no afcd
    config)" with exit 0)."""
    a, _ = pair
    p = start_loader(a, "v0", "rate", RATE, "--skip-fq-check", "--keep")
    assert stop(p) == 0
    before = (tc_state(a, "v0"), nslib.pins())
    cfg = os.path.join(nslib.PIN_DIR, "afcd_cfg")
    os.chmod(cfg, 0)
    try:
        r = in_ns(a, ["capsh", "--drop=cap_dac_override,cap_dac_read_search", "--",
                      "-c", "%s detach v0" % nslib.AFCD], check=False)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert r.returncode == 1 and len(lines) == 1, (r.returncode, r.stderr)
        assert "cannot read the afcd pins" in lines[0] and "nothing detached" in lines[0]
        assert (tc_state(a, "v0"), nslib.pins()) == before
    finally:
        os.chmod(cfg, 0o600)
    afcd(a, "detach", "v0")
    assert nslib.pins() == []


SLOW = r"""
import socket, sys, threading, time, urllib.request
port, nslow, dur = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
stop = time.time() + dur
def trickle():                       # a request, one byte every 0.3 s, forever
    while time.time() < stop:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            s.sendall(b"GET /metrics HTTP/1.1\r\n")
            while time.time() < stop:
                s.sendall(b"X")
                time.sleep(0.3)
        except OSError:
            time.sleep(0.05)
for _ in range(nslow):
    threading.Thread(target=trickle, daemon=True).start()
time.sleep(1.0)
ok = bad = 0
while time.time() < stop - 0.5:
    try:
        urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=2).read()
        ok += 1
    except Exception:
        bad += 1
    time.sleep(0.3)
print(ok, bad)
"""

PIPELINE = r"""
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3)
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n" * 4)
buf, t0 = b"", time.time()
try:
    while time.time() - t0 < 3 and buf.count(b"HTTP/1.1 200") < 4:
        d = s.recv(65536)
        if not d:
            break
        buf += d
except socket.timeout:
    pass
print(buf.count(b"HTTP/1.1 200"), buf.count(b"Connection: close"))
"""


@pytest.mark.parametrize("nslow", [4, 40])
def test_prometheus_slow_clients_cannot_starve_a_scrape(pair, nslow):
    """Expected result: while one local user keeps 4 (or 40) connections
    trickling a request a byte at a time, every scrape from the same
    address (127.0.0.1) is answered within its 2 s timeout: a request must
    be whole within 2 s and a new connection evicts the oldest of its
    address beyond 4 (before: 4 such connections left every scrape
    unanswered for as long as they lasted)."""
    a, _ = pair
    port = 9600 + os.getpid() % 100
    p = start_loader(a, "v0", "rate", RATE, "--skip-fq-check", "--prometheus", port)
    try:
        in_ns(a, ["ip", "link", "set", "lo", "up"])
        out = in_ns(a, ["python3", "-c", SLOW, str(port), str(nslow), "8"], timeout=60).stdout
        ok, bad = map(int, out.split())
        assert ok >= 10 and bad == 0, (ok, bad)
        assert p.poll() is None
    finally:
        stop(p)


BURST = r"""
import resource, socket, sys, time, urllib.request
port, n = int(sys.argv[1]), int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_NOFILE, (n + 256, n + 256))
held = []
for _ in range(n):                  # silent: connected, nothing sent, kept open
    s = socket.socket()
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    held.append(s)
ok = bad = 0
worst = 0.0
t_end = time.time() + 4
while time.time() < t_end:
    t0 = time.time()
    try:
        urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=2).read()
        ok += 1
        worst = max(worst, time.time() - t0)
    except Exception:
        bad += 1
    time.sleep(0.2)
print(ok, bad, "%.3f" % worst)
"""


def test_prometheus_survives_a_connect_burst(pair):
    """Expected result: right after 2,000 connections opened at once and
    held open without a byte (more than the 256 the endpoint tracks),
    every scrape in the next 4 s is answered within its 2 s timeout (the
    burst's connections wait their turn in the listen queue ahead of the
    scraper's; before, one scrape right after the burst timed out)."""
    a, _ = pair
    port = 9700 + os.getpid() % 100
    p = start_loader(a, "v0", "rate", RATE, "--skip-fq-check", "--prometheus", port)
    try:
        in_ns(a, ["ip", "link", "set", "lo", "up"])
        out = in_ns(a, ["python3", "-c", BURST, str(port), "2000"], timeout=60).stdout
        ok, bad, worst = out.split()
        print("\n    after the burst: %s scrapes answered (worst %s s), %s failed" % (ok, worst, bad))
        assert int(ok) >= 5 and int(bad) == 0, out
        assert p.poll() is None
    finally:
        stop(p)


def test_prometheus_pipelined_requests_answered(pair):
    """Expected result: four GETs pipelined on one connection get four
    answers, in order, none of them closing the connection (HTTP/1.1
    keep-alive; before: one answer with "Connection: close")."""
    a, _ = pair
    port = 9700 + os.getpid() % 100
    p = start_loader(a, "v0", "rate", RATE, "--skip-fq-check", "--prometheus", port)
    try:
        in_ns(a, ["ip", "link", "set", "lo", "up"])
        out = in_ns(a, ["python3", "-c", PIPELINE, str(port)], timeout=30).stdout
        assert out.split() == ["4", "0"], out
    finally:
        stop(p)


@pytest.mark.parametrize("value", ["0x10mbit", "inf", "nan", "+5mbit", " 5mbit", "1e", "."])
def test_numbers_that_only_look_right_are_refused(pair, value):
    """Expected result: a rate that strtod would read (hexadecimal, inf,
    nan, a sign, a blank) is refused with one line naming the parameter,
    and nothing changes (before: `rate 0x10mbit` was 16 Mbit/s)."""
    a, _ = pair
    before = (tc_state(a, "v0"), nslib.pins())
    r = afcd(a, "attach", "v0", "rate", value, "--skip-fq-check", check=False)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode != 0 and len(lines) == 1 and "rate" in lines[0], r.stderr
    assert (tc_state(a, "v0"), nslib.pins()) == before


def test_duplicate_key_in_config_file_refused(pair, tmp_path):
    """Expected result: a parameter given twice in a config file is one
    error naming the file, the line and the parameter; nothing is attached
    (before: the last one won silently)."""
    a, _ = pair
    conf = tmp_path / "dup.conf"
    conf.write_text("rate 100mbit\ntarget 5ms\nrate = 10mbit\n")
    before = (tc_state(a, "v0"), nslib.pins())
    r = afcd(a, "attach", "v0", "-c", conf, "--skip-fq-check", check=False)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode != 0 and len(lines) == 1, r.stderr
    assert "dup.conf:3" in lines[0] and "rate is given twice" in lines[0], lines[0]
    assert (tc_state(a, "v0"), nslib.pins()) == before


def test_exit_line_after_someone_elses_detach(pair, tmp_path):
    """Expected result: when another `afcd detach` removes the interface
    under a running loader, the loader's exit line gives no refresh time it
    cannot know (before: an underflowed "18446744073.706 s")."""
    a, _ = pair
    log = tmp_path / "loader.log"
    p = start_loader(a, "v0", "rate", RATE, "--skip-fq-check", log=log)
    time.sleep(0.3)
    afcd(a, "detach", "v0")
    rc = _wait_exit(p)
    assert rc == 1, rc
    text = log.read_text()
    assert "lost its afcd config" in text, text
    assert "18446744073" not in text and "kernel refresh step" not in text, text


def test_aggregates_reported(pair):
    """Expected result: frames the parser cannot classify (here IPv6 with a
    hop-by-hop header chain longer than the parser follows is hard to make
    with ping; an ARP exchange and an LLDP-like raw frame are not IP) are
    counted as the unclassified aggregate in stats -j (queue.aggregates),
    as a row "aggregate unclassified" of stats --flows and in /metrics."""
    a, b = pair
    port = 9800 + os.getpid() % 100
    p = start_loader(a, "v0", "rate", RATE, "--skip-fq-check", "--prometheus", port)
    try:
        in_ns(a, ["ip", "link", "set", "lo", "up"])
        in_ns(a, ["ip", "neigh", "flush", "dev", "v0"], check=False)
        in_ns(a, ["ping", "-c", "2", "-i", "0.2", "-W", "1", "198.18.0.2"])   # ARP first
        raw = ("import socket; s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); "
               "s.bind(('v0', 0)); [s.send(b'\\xff' * 6 + b'\\x02' + b'\\0' * 5 + "
               "b'\\x88\\xcc' + b'\\0' * 46) for _ in range(5)]")
        in_ns(a, ["python3", "-c", raw])
        s = afcd_stats(a, "v0", flows=True, dt=0)
        agg = s["queue"]["aggregates"]
        assert set(agg) == {"unclassified", "overflow", "mice"}
        assert agg["unclassified"]["packets"] >= 6, agg      # ARP request(s) + 5 raw
        assert agg["overflow"]["packets"] == 0
        assert s["queue"]["non_ip"] == agg["unclassified"]["packets"]
        rows = [f for f in s["flows"] if f["aggregate"] == "unclassified"]
        assert len(rows) == 1 and rows[0]["key"] == "aggregate unclassified", s["flows"]
        body = in_ns(a, ["python3", "-c", "import urllib.request as u; print(u.urlopen("
                     "'http://127.0.0.1:%d/metrics', timeout=5).read().decode())" % port]).stdout
        assert 'afcd_aggregate_packets_total{dev="v0",kind="unclassified"}' in body
        assert 'afcd_aggregate_drops_total{dev="v0",kind="overflow"} 0' in body
    finally:
        stop(p)


def kernel_has_bpf_qdiscs():
    """Does the running kernel's BTF have the Qdisc_ops struct_ops type?"""
    out = subprocess.run(["bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux"],
                         capture_output=True, text=True).stdout
    return "STRUCT 'bpf_struct_ops_Qdisc_ops'" in out


@pytest.mark.parametrize("extra,err", [
    ([], "no BPF qdiscs"),
    (["--attach", "tcx"], "no BPF qdiscs"),     # the hook of its marks: accepted
    (["--skip-fq-check"], "is for --backend edt"),
])
def test_qdisc_backend_refused_where_it_cannot_run(pair, extra, err):
    """Expected result: `--backend qdisc` on a kernel without BPF qdiscs
    (the hosts: CONFIG_NET_SCH_BPF off), or with an option of the EDT
    backend only, is one line of error and changes nothing: no qdisc, no
    program, no pins."""
    if err == "no BPF qdiscs" and kernel_has_bpf_qdiscs():
        pytest.skip("this kernel has BPF qdiscs (the VM test covers it)")
    a, _ = pair
    before = (tc_state(a, "v0"), nslib.pins())
    r = afcd(a, "attach", "v0", "--backend", "qdisc", "rate", RATE, *extra, check=False)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode == 1 and len(lines) == 1, r.stderr
    assert err in lines[0], lines
    assert (tc_state(a, "v0"), nslib.pins()) == before


@pytest.mark.parametrize("args,err", [
    ([], "no BPF qdiscs"),                         # no rate: accepted for the qdisc
    (["limit", "100k"], "limit: needs a rate"),
    (["rate", "0"], "no BPF qdiscs"),
])
def test_qdisc_backend_rate_is_optional(pair, args, err):
    """Expected result: `--backend qdisc` takes no rate (work-conserving at
    the device's own rate): without one, or with 0, the parameters pass
    and only the kernel is refused here; `limit` without a rate is refused
    for what it is (bytes need a rate to become a horizon); the EDT backend
    still requires a rate. Each is one line and changes nothing."""
    if kernel_has_bpf_qdiscs():
        pytest.skip("this kernel has BPF qdiscs (the VM test covers it)")
    a, _ = pair
    before = (tc_state(a, "v0"), nslib.pins())
    for argv, want in ((["--backend", "qdisc"] + args, err), (["--skip-fq-check"], "rate: must")):
        r = afcd(a, "attach", "v0", *argv, check=False)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert r.returncode == 1 and len(lines) == 1, r.stderr
        assert want in lines[0], lines
    assert (tc_state(a, "v0"), nslib.pins()) == before


def test_vm_guest_holds_its_jump_labels(pair):
    """testbed/vm.py hold_jump_labels(), which the VM's guest runs first:
    net_get_random_once()'s first calls taken by a TCP connection and a
    UDP datagram over lo for IPv4 and IPv6 (none where lo is down, and
    no error), a socket with SO_TIMESTAMP on (netstamp_needed_key held)
    kept for the process's life, and a clsact qdisc on lo (the ingress
    and egress keys); in namespace a here, where it touches nothing
    else."""
    code = ("import json, socket, subprocess\n"
            "from testbed import vm\n"
            "subprocess.run(['ip', 'link', 'set', 'lo', 'down'], check=True)\n"
            "down = vm._take_first_calls()\n"
            "subprocess.run(['ip', 'link', 'set', 'lo', 'up'], check=True)\n"
            "up = vm._take_first_calls()\n"
            "vm.hold_jump_labels()\n"
            "vm.hold_jump_labels()\n"
            "s = vm._held\n"
            "q = json.loads(subprocess.run(['tc', '-j', 'qdisc', 'show', 'dev', 'lo'],\n"
            "               capture_output=True, text=True).stdout)\n"
            "print(json.dumps({'held': len(s), 'ts': s[0].getsockopt(socket.SOL_SOCKET,\n"
            "                  vm.SO_TIMESTAMP), 'kinds': [x['kind'] for x in q],\n"
            "                  'down': down, 'up': [int(f) for f in up]}))\n")
    out = in_ns(pair[0], ["/usr/bin/python3", "-c", code],
                      env=dict(os.environ, PYTHONPATH=nslib.ROOT)).stdout
    r = json.loads(out)
    assert r["held"] == 1 and r["ts"] == 1, r
    assert "clsact" in r["kinds"], r
    assert r["down"] == [] and r["up"] == [int(socket.AF_INET), int(socket.AF_INET6)], r
