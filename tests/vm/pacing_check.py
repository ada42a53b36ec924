#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The sender's own departure time kept (inside the VM, or on a host whose
kernel has sch_fq and netem): afcd on a sending host's egress, over the
root sch_fq that enforces the departure times, as a server runs it.

  - SO_TXTIME: 200 UDP datagrams stamped (CLOCK_MONOTONIC) 8 ms apart,
    each carrying its stamp; the receiver notes when each arrives (the
    same clock: one kernel): none may arrive before its stamp.
  - paced TCP: a CUBIC and a BBR flow with SO_MAX_PACING_RATE (iperf3
    --fq-rate) at a quarter of the rate, alone on the link: with sch_fq on
    the host TCP stamps its packets with its own EDT, and the flow's rate
    must be its pacing rate, not the virtual queue's.

Writes OUT/pacing.json.  pacing_check.py OUT_DIR
"""
import json
import os
import subprocess
import sys
import time

from testbed import netns as nslib
from testbed.netns import in_ns, ns_cmd

RATE_MBIT = 40.0
PACE_MBIT = 10.0

SENDER = r"""
import socket, struct, sys, time
SO_TXTIME, SCM_TXTIME = 61, 61
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, SO_TXTIME, struct.pack("iI", time.CLOCK_MONOTONIC, 0))
t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + 20000000
for i in range(200):
    tx = t0 + i * 8000000
    s.sendmsg([struct.pack("QQ", tx, i) + b"\0" * 984], [(socket.SOL_SOCKET, SCM_TXTIME,
                                                          struct.pack("Q", tx))],
              0, (sys.argv[1], 9999))
print(t0)
"""

RECEIVER = r"""
import socket, struct, sys, time, json
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 9999))
print("ready", flush=True)
s.settimeout(60)                # the sender's start (ARP, Python) under a slow TCG
out = []
try:
    while len(out) < 200:
        d = s.recv(2048)
        s.settimeout(5)
        now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        tx, i = struct.unpack("QQ", d[:16])
        out.append((i, tx, now))
except socket.timeout:
    pass
print(json.dumps(out))
"""


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    nslib.ensure_bpffs()
    nss = nslib.Namespaces("pc")
    res = {}
    try:
        s, d = nss.add("s"), nss.add("d")
        nss.link(s, "s0", d, "d0", ["198.18.0.1/24"], ["198.18.0.2/24"])
        in_ns(d, ["tc", "qdisc", "replace", "dev", "d0", "root", "netem", "delay", "5ms"])
        p = nslib.start_loader(s, "s0", "rate", "%gmbit" % RATE_MBIT, "horizon", "2s",
                               "--install-fq")
        try:
            rcv = subprocess.Popen(ns_cmd(d, ["/usr/bin/python3", "-c", RECEIVER]),
                                   stdout=subprocess.PIPE, text=True)
            # the sender starts once the receiver is bound (a Python start
            # under TCG can take more than a second)
            if rcv.stdout.readline().strip() != "ready":
                raise RuntimeError("the receiver did not start")
            # the neighbour resolved first: until ARP answers, the kernel
            # holds the datagrams in the neighbour's queue (212,992 bytes)
            # and drops its oldest, under TCG a dozen of them
            in_ns(s, ["ping", "-c", "1", "-W", "5", "198.18.0.2"])
            in_ns(s, ["/usr/bin/python3", "-c", SENDER, "198.18.0.2"])
            got = json.loads(rcv.communicate(timeout=60)[0])
            early = [(tx - now) / 1e6 for _, tx, now in got]
            st = nslib.afcd_stats(s, "s0", flows=False, dt=0)["queue"]
            fq = in_ns(s, ["tc", "-s", "-j", "qdisc", "show", "dev", "s0"]).stdout
            snmp = in_ns(d, ["cat", "/proc/net/snmp"]).stdout.splitlines()
            udp = [ln.split()[1:] for ln in snmp if ln.startswith("Udp:")]
            res["txtime"] = {"sent": 200, "received": len(got),
                             "early_ms_max": max(early) if early else None,
                             "late_ms_median": sorted(-e for e in early)[len(early) // 2]
                             if early else None,
                             "missing": sorted(set(range(200)) - {i for i, _, _ in got}),
                             "afcd": {k: v for k, v in st.items() if "drop" in k or k == "passed"},
                             "qdiscs": [{k: q.get(k) for k in ("kind", "drops", "packets")}
                                        for q in json.loads(fq)],
                             "udp_rx": dict(zip(*udp)) if len(udp) == 2 else None}
            for cc in ("cubic", "bbr"):
                srv = subprocess.Popen(ns_cmd(d, ["iperf3", "-s", "-1", "-J", "-p", "5301"]),
                                       stdout=subprocess.PIPE, text=True)
                time.sleep(0.5)
                in_ns(s, ["iperf3", "-c", "198.18.0.2", "-p", "5301", "-t", "7", "-C", cc,
                          "--fq-rate", "%gM" % PACE_MBIT], timeout=60)
                sd = json.loads(srv.communicate(timeout=30)[0])
                iv = [x["sum"]["bits_per_second"] for x in sd["intervals"]][2:]
                res[cc] = {"pacing_mbps": PACE_MBIT, "rate_mbit": RATE_MBIT,
                           "goodput_mbps": sum(iv) / len(iv) / 1e6 if iv else None}
            st = nslib.afcd_stats(s, "s0", flows=False, dt=0)
            res["afcd_queue"] = {k: st["queue"][k] for k in ("passed", "aqm_drop",
                                                            "overlimit_drop")}
        finally:
            nslib.stop(p)
    finally:
        nss.close()
    with open(os.path.join(out, "pacing.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
