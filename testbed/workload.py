# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Workloads with real tools, every one bounded in time.

Long-lived flows: iperf3, one server per Flow on the receiver, each client
with its own congestion control (-C), start time and number of parallel
streams (-P: a flow group of that many TCP connections from one process,
each reported as a flow of its own). A UDP flow is an iperf3 -u client at
a fixed rate (non-responsive). Short flows: testbed/shortflows.py (Poisson
arrivals, Pareto sizes, completion times). Latency under load: ping from
the first sender at 100 Hz. Goodput is what each iperf3 server received,
per interval, per stream, placed in time where its test really began: a
client started late into a full queue can take seconds to connect (its
SYNs and iperf3's parameter exchange wait in the queue or are lost), and
iperf3 times its intervals from the test's own start.
"""
import json
import re
import subprocess
import threading
import time

from . import netns as nslib
from .netns import in_ns, ns_cmd

from .topo import RECEIVER_ADDR


class Flow:
    """proto 'tcp' (cc: cubic, reno, highspeed, bbr, dctcp) or 'udp' (rate_mbit).
    streams > 1: that many TCP connections from one iperf3 client (-P),
    reported as flows NAME.0 .. NAME.(streams-1) of group NAME."""

    def __init__(self, name, sender=0, proto="tcp", cc="cubic", start_s=0.0, duration_s=None,
                 rate_mbit=None, streams=1):
        self.name, self.sender, self.proto, self.cc = name, sender, proto, cc
        self.start_s, self.duration_s, self.rate_mbit = start_s, duration_s, rate_mbit
        self.streams = streams


class ShortFlows:
    """Short TCP flows from a sender to the receiver (testbed/shortflows.py):
    Poisson arrivals at rate_per_s, Pareto(alpha, scale_bytes) sizes
    truncated at max_bytes, direction 'U' (through the bottleneck), 'D'
    (the reverse path) or 'UD' (two-way, each flow one at random)."""

    def __init__(self, sender, rate_per_s, alpha, scale_bytes, max_bytes=1 << 20, dirs="U",
                 seed=1):
        self.sender, self.rate_per_s, self.alpha = sender, rate_per_s, alpha
        self.scale_bytes, self.max_bytes, self.dirs, self.seed = (scale_bytes, max_bytes,
                                                                 dirs, seed)

    def spec(self):
        return {"sender": self.sender, "rate_per_s": self.rate_per_s, "alpha": self.alpha,
                "scale_bytes": self.scale_bytes, "max_bytes": self.max_bytes,
                "dirs": self.dirs}


def available_cc(ns):
    path = "/proc/sys/net/ipv4/tcp_available_congestion_control"
    return in_ns(ns, ["cat", path]).stdout.split()


def _streams_by_socket(d):
    """The sockets of an iperf3 JSON report in their order (stream 0, 1..)."""
    socks = []
    for iv in d.get("intervals", []):
        for st in iv.get("streams", []):
            if st.get("socket") not in socks:
                socks.append(st.get("socket"))
    return socks


def _parse_server(js, streams=1):
    """Per stream: (total bytes, seconds, [(t_start, t_end, bits/s)...]) from
    iperf3 -s -J; one entry (the sum) for a single stream."""
    try:
        d = json.loads(js)
    except ValueError:
        return [(0, 0.0, [])] * streams
    if streams == 1:
        series = []
        for iv in d.get("intervals", []):
            s = iv.get("sum", {})
            series.append((s.get("start", 0.0), s.get("end", 0.0),
                           s.get("bits_per_second", 0.0)))
        end = d.get("end", {})
        tot = end.get("sum_received") or end.get("sum") or {}
        return [(tot.get("bytes", 0), tot.get("seconds", 0.0), series)]
    socks = _streams_by_socket(d)
    out = []
    for k in range(streams):
        sock = socks[k] if k < len(socks) else None
        series = [(st.get("start", 0.0), st.get("end", 0.0), st.get("bits_per_second", 0.0))
                  for iv in d.get("intervals", []) for st in iv.get("streams", [])
                  if sock is not None and st.get("socket") == sock]
        nbytes = sum(int(b * (e - a) / 8) for a, e, b in series)
        out.append((nbytes, sum(e - a for a, e, _ in series), series))
    return out


def _parse_client(js, streams=1):
    """What the sender achieved, from iperf3 -c -J: sent bits/s (UDP: the
    rate it managed to send, which a slow machine can leave far below the
    configured one), and for TCP per stream the mean smoothed RTT in ms and
    its series. Returns one dict per stream (the first carries sent_mbps of
    the whole client, and error: iperf3's error text when it failed)."""
    try:
        d = json.loads(js[js.index("{"):]) if "{" in js else {}
    except ValueError:
        d = {}
    end = d.get("end", {})
    sent = (end.get("sum_sent") or end.get("sum") or {}).get("bits_per_second")
    socks = _streams_by_socket(d)
    outs = []
    for k in range(streams):
        sock = socks[k] if k < len(socks) else None
        sts = [st for iv in d.get("intervals", []) for st in iv.get("streams", [])
               if st.get("socket") == sock or (streams == 1 and sock is None)]
        rtts = [st.get("rtt") for st in sts if st.get("rtt")]
        out = {"sent_mbps": sent / 1e6 if sent else None} if k == 0 else {"sent_mbps": None}
        if k == 0 and (d.get("error") or not d):
            # why a client sent nothing: iperf3's own error, else the last
            # line it printed. A UDP client (iperf3 3.12) announces its
            # stream with one datagram through the bottleneck and waits
            # 30 s for the server's reply; lost in a full queue, the
            # client gives up without sending.
            out["error"] = d.get("error") or (js.strip().splitlines() or [""])[-1][:200]
        if rtts:
            out["srtt_ms_mean"] = sum(rtts) / len(rtts) / 1e3
            out["retransmits"] = sum(st.get("retransmits") or 0 for st in sts)
            # per 0.5 s interval: [t_end, snd_cwnd bytes, srtt ms, retransmits]
            out["tcp_series"] = [[round(st.get("end", 0), 2), st.get("snd_cwnd"),
                                  (st.get("rtt") or 0) / 1e3, st.get("retransmits")]
                                 for st in sts]
        outs.append(out)
    return outs


SHORT_PORT = 6201


def _start_short(topo, short, duration_s):
    """The short-flow server on the receiver and client on its sender."""
    srv = subprocess.Popen(ns_cmd(topo.receiver, ["/usr/bin/python3", "-m", "testbed.shortflows",
                                                  "server", str(SHORT_PORT),
                                                  "%g" % duration_s]),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           cwd=nslib.ROOT)
    deadline = time.time() + 10
    while time.time() < deadline:
        if ":%d " % SHORT_PORT in in_ns(topo.receiver, ["ss", "-ltn"]).stdout:
            break
        time.sleep(0.05)
    cli = subprocess.Popen(ns_cmd(topo.senders[short.sender], [
        "/usr/bin/python3", "-m", "testbed.shortflows", "client", RECEIVER_ADDR,
        str(SHORT_PORT), "%g" % short.rate_per_s, "%g" % short.alpha, "%g" % short.scale_bytes,
        "%g" % short.max_bytes, "%g" % duration_s, str(short.seed), short.dirs]),
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=nslib.ROOT)
    return srv, cli


def _finish_short(srv, cli, duration_s):
    txt = _output(cli, duration_s + 40)
    srv.kill()
    srv.wait()
    try:
        return json.loads(txt.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def flow_t0(flow):
    """Where a flow's iperf3 test began, s after the run's start: its
    measured start (began_s), not before its configured one (start_s);
    start_s alone for results without began_s. The server's intervals and
    the client's TCP series are timed from there."""
    b = flow.get("began_s")
    return flow["start_s"] if b is None else max(b, flow["start_s"])


def established_by_port(ns, ports):
    """{port: established TCP connections on it} at the receiver."""
    out = in_ns(ns, ["ss", "-Htn", "state", "established"], check=False).stdout
    n = dict.fromkeys(ports, 0)
    for ln in out.splitlines():
        f = ln.split()
        if len(f) >= 3:
            try:
                p = int(f[2].rsplit(":", 1)[1])
            except (IndexError, ValueError):
                continue
            if p in n:
                n[p] += 1
    return n


class StartWatch:
    """When each iperf3 test really began, in seconds after t0: the first
    poll (every 0.1 s) that finds all of its connections established at the
    receiver (iperf3's control connection and its streams; the server
    starts its test, and its intervals' clock, once they are). None for a
    test that never got them in time."""

    def __init__(self, ns, need, t0, until_s, period_s=0.1):
        self.ns, self.need, self.t0 = ns, dict(need), t0
        self.until, self.period = t0 + until_s, period_s
        self.started = {}
        self._stop = threading.Event()
        self._th = threading.Thread(target=self._poll, daemon=True)

    def start(self):
        self._th.start()
        return self

    def _poll(self):
        while not self._stop.is_set() and time.time() < self.until and \
                len(self.started) < len(self.need):
            t = time.time()
            n = established_by_port(self.ns, [p for p in self.need if p not in self.started])
            for p, k in n.items():
                if k >= self.need[p]:
                    self.started[p] = round(t - self.t0, 3)
            self._stop.wait(self.period)

    def stop(self):
        self._stop.set()
        self._th.join(timeout=5)
        return self.started


def _listen(topo, n):
    """n one-off iperf3 servers on the receiver, ports 5201.., listening
    when this returns (or after 10 s)."""
    servers = [subprocess.Popen(
        ns_cmd(topo.receiver, ["iperf3", "-s", "-1", "-J", "-p", str(5201 + i), "-i", "0.5"]),
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) for i in range(n)]
    deadline = time.time() + 10
    while time.time() < deadline:
        ss = in_ns(topo.receiver, ["ss", "-ltn"]).stdout
        if all(":%d " % (5201 + i) in ss for i in range(n)):
            break
        time.sleep(0.05)
    return servers


def _output(p, timeout_s):
    """The standard output of process p, killed if it has not ended within
    timeout_s seconds."""
    try:
        return p.communicate(timeout=timeout_s)[0]
    except subprocess.TimeoutExpired:
        p.kill()
        return p.communicate()[0]


def run(topo, flows, duration_s, ping=True, ping_interval_s=0.01, short=None):
    """Run flows (and the short flows, a ShortFlows) for duration_s. Returns
    {flows: [...], ping_rtt_ms: [(t, rtt)], short: {...} or None}."""
    servers, clients = _listen(topo, len(flows)), []
    t0 = time.time()
    watch = StartWatch(topo.receiver,
                       {5201 + i: 1 + (f.streams if f.proto == "tcp" else 0)
                        for i, f in enumerate(flows)}, t0, duration_s).start()
    for i, f in enumerate(flows):
        dur = f.duration_s or max(duration_s - f.start_s, 1)
        cmd = ["iperf3", "-c", RECEIVER_ADDR, "-p", str(5201 + i), "-t", "%g" % dur, "-J",
               "-i", "0.5"]
        if f.proto == "udp":
            cmd += ["-u", "-b", "%gM" % (f.rate_mbit or 1000), "-l", "1400"]
        else:
            cmd += ["-C", f.cc]
            if f.streams > 1:
                cmd += ["-P", str(f.streams)]
        wrapped = ["sh", "-c", "sleep %g; exec \"$@\"" % f.start_s, "sh"] + cmd
        clients.append(subprocess.Popen(ns_cmd(topo.senders[f.sender], wrapped),
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True))
    shorts = _start_short(topo, short, duration_s) if short else None
    pinger = None
    if ping:
        count = int(duration_s / ping_interval_s)
        pinger = subprocess.Popen(
            ns_cmd(topo.senders[0], ["ping", "-D", "-n", "-i", "%g" % ping_interval_s,
                                     "-c", str(count), "-w", "%g" % (duration_s + 2),
                                     RECEIVER_ADDR]),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = {"flows": [], "ping_rtt_ms": [], "t0": t0, "short": None}
    reports = [_parse_client(_output(c, duration_s + 30) or "", f.streams)
               for f, c in zip(flows, clients)]
    began = watch.stop()
    for i, (f, s) in enumerate(zip(flows, servers)):
        js = _output(s, 15)
        # the intervals from where the test began: start_s stays the
        # configured start, began_s is the measured one
        t_began = began.get(5201 + i)
        t_off = flow_t0({"start_s": f.start_s, "began_s": t_began})
        for k, (nbytes, secs, series) in enumerate(_parse_server(js, f.streams)):
            out["flows"].append({
                "name": f.name if f.streams == 1 else "%s.%d" % (f.name, k), "group": f.name,
                "proto": f.proto, "cc": f.cc if f.proto == "tcp" else None,
                "sender": f.sender, "start_s": f.start_s, "began_s": t_began,
                "bytes": nbytes, "seconds": secs,
                "configured_mbps": f.rate_mbit if f.proto == "udp" else None,
                "client": reports[i][k],
                "series": [(a + t_off, b + t_off, bps) for a, b, bps in series]})
    if shorts:
        out["short"] = _finish_short(shorts[0], shorts[1], duration_s)
    if pinger:
        txt = _output(pinger, duration_s + 10)
        for m in re.finditer(r"^\[(\d+\.\d+)\].*time=([\d.]+) ms", txt, re.M):
            out["ping_rtt_ms"].append((float(m.group(1)) - t0, float(m.group(2))))
    return out
