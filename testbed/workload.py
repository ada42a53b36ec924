# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Workloads with real tools, every one bounded in time.

Long-lived flows: iperf3, one server per flow on the receiver, each client
with its own congestion control (-C) and start time. A UDP flow is an
iperf3 -u client at a fixed rate (line rate: non-responsive). Latency
under load: ping from the first sender at 100 Hz. Goodput is what each
iperf3 server received, per interval and in total.
"""
import json
import re
import subprocess
import time

from . import netns as nslib
from .netns import in_ns, ns_cmd

from .topo import RECEIVER_ADDR


class Flow:
    """proto 'tcp' (cc: cubic, reno, highspeed, bbr, dctcp) or 'udp' (rate_mbit)."""

    def __init__(self, name, sender=0, proto="tcp", cc="cubic", start_s=0.0, duration_s=None,
                 rate_mbit=None):
        self.name, self.sender, self.proto, self.cc = name, sender, proto, cc
        self.start_s, self.duration_s, self.rate_mbit = start_s, duration_s, rate_mbit


def available_cc(ns):
    path = "/proc/sys/net/ipv4/tcp_available_congestion_control"
    return in_ns(ns, ["cat", path]).stdout.split()


def _parse_server(js):
    """(total receiver bytes, seconds, [(t_start, t_end, bits/s)...]) from iperf3 -s -J."""
    try:
        d = json.loads(js)
    except ValueError:
        return 0, 0.0, []
    series = []
    for iv in d.get("intervals", []):
        s = iv.get("sum", {})
        series.append((s.get("start", 0.0), s.get("end", 0.0), s.get("bits_per_second", 0.0)))
    end = d.get("end", {})
    tot = end.get("sum_received") or end.get("sum") or {}
    return tot.get("bytes", 0), tot.get("seconds", 0.0), series


def _parse_client(js):
    """What the sender achieved, from iperf3 -c -J: sent bits/s (UDP: the
    rate it managed to send, which a slow machine can leave far below the
    configured one), and for TCP the mean smoothed RTT in ms."""
    try:
        d = json.loads(js[js.index("{"):]) if "{" in js else {}
    except ValueError:
        return {}
    end = d.get("end", {})
    sent = (end.get("sum_sent") or end.get("sum") or {}).get("bits_per_second")
    rtts = [st.get("rtt") for iv in d.get("intervals", []) for st in iv.get("streams", [])
            if st.get("rtt")]
    out = {"sent_mbps": sent / 1e6 if sent else None}
    if rtts:
        out["srtt_ms_mean"] = sum(rtts) / len(rtts) / 1e3
        # per 0.5 s interval: [t_end, snd_cwnd bytes, srtt ms, retransmits]
        out["tcp_series"] = [[round(st.get("end", 0), 2), st.get("snd_cwnd"),
                              (st.get("rtt") or 0) / 1e3, st.get("retransmits")]
                             for iv in d.get("intervals", []) for st in iv.get("streams", [])]
    return out


def run(topo, flows, duration_s, ping=True, ping_interval_s=0.01):
    """Run flows for duration_s. Returns {flows: [...], ping_rtt_ms: [(t, rtt)]}."""
    servers, clients = [], []
    for i, f in enumerate(flows):
        port = 5201 + i
        servers.append(subprocess.Popen(
            ns_cmd(topo.receiver, ["iperf3", "-s", "-1", "-J", "-p", str(port), "-i", "0.5"]),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True))
    # wait for the listeners
    deadline = time.time() + 10
    while time.time() < deadline:
        ss = in_ns(topo.receiver, ["ss", "-ltn"]).stdout
        if all(":%d " % (5201 + i) in ss for i in range(len(flows))):
            break
        time.sleep(0.05)
    t0 = time.time()
    for i, f in enumerate(flows):
        dur = f.duration_s or max(duration_s - f.start_s, 1)
        cmd = ["iperf3", "-c", RECEIVER_ADDR, "-p", str(5201 + i), "-t", "%g" % dur, "-J",
               "-i", "0.5"]
        if f.proto == "udp":
            cmd += ["-u", "-b", "%gM" % (f.rate_mbit or 1000), "-l", "1400"]
        else:
            cmd += ["-C", f.cc]
        wrapped = ["sh", "-c", "sleep %g; exec \"$@\"" % f.start_s, "sh"] + cmd
        clients.append(subprocess.Popen(ns_cmd(topo.senders[f.sender], wrapped),
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True))
    pinger = None
    if ping:
        count = int(duration_s / ping_interval_s)
        pinger = subprocess.Popen(
            ns_cmd(topo.senders[0], ["ping", "-D", "-n", "-i", "%g" % ping_interval_s,
                                     "-c", str(count), "-w", "%g" % (duration_s + 2),
                                     RECEIVER_ADDR]),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = {"flows": [], "ping_rtt_ms": [], "t0": t0}
    reports = []
    for c in clients:
        try:
            txt, _ = c.communicate(timeout=duration_s + 30)
        except subprocess.TimeoutExpired:
            c.kill()
            txt, _ = c.communicate()
        reports.append(_parse_client(txt or ""))
    for i, (f, s) in enumerate(zip(flows, servers)):
        try:
            js, _ = s.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            s.kill()
            js, _ = s.communicate()
        nbytes, secs, series = _parse_server(js)
        out["flows"].append({"name": f.name, "proto": f.proto, "cc": f.cc if f.proto == "tcp"
                             else None, "sender": f.sender, "start_s": f.start_s,
                             "bytes": nbytes, "seconds": secs,
                             "configured_mbps": f.rate_mbit if f.proto == "udp" else None,
                             "client": reports[i],
                             "series": [(a + f.start_s, b + f.start_s, bps)
                                        for a, b, bps in series]})
    if pinger:
        try:
            txt, _ = pinger.communicate(timeout=duration_s + 10)
        except subprocess.TimeoutExpired:
            pinger.kill()
            txt, _ = pinger.communicate()
        for m in re.finditer(r"^\[(\d+\.\d+)\].*time=([\d.]+) ms", txt, re.M):
            out["ping_rtt_ms"].append((float(m.group(1)) - t0, float(m.group(2))))
    return out
