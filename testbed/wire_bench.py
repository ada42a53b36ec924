#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The qdisc backend without a rate, at the root of a NIC that pushes back
(inside the VM booted with --kernel 6.18 --wire MBIT: testbed/wire.py).

The router's egress is the wire's tx NIC, a virtio-net device drained at
the wire's rate by the host (its byte queue limit at BQL_MAX); the
receiver has the rx NIC, with 10 ms of netem on the way back. A CUBIC flow
and a UDP flood at UDP_X times the wire's rate cross it, one scheme after
the other, under the kernel's pfifo (the premise: the flood takes the
link), fq_codel (the reference), `afcd attach --backend qdisc` without a
rate (dequeued when the NIC has room; each packet's true sojourn), three
times, FaLL the same way once (rtt: the idle RTT), and AFCD paced at
PACED of the wire's rate. For each, over PING_S after WARMUP: the
goodputs at the receiver, the wire's utilisation (the rx NIC's bytes with
Ethernet's overhead, against the rate), pings through the queue, CUBIC's
retransmits, the qdisc's drops and the device's, the guest's CPU
(testbed/validity.py), and for afcd and fall the sojourn the qdisc
measured, its drops and its estimates polled every second.

Writes OUT/wire.json. make bench-wire runs it (afcd-testbed script
testbed/wire_bench.py --kernel 6.18 --wire MBIT); tests/vm's qdisc check
runs its fq_codel run beside the qdisc backend in the same boot.
"""
import json
import math
import os
import subprocess
import sys
import time

import threading

from testbed import netns as nslib
from testbed import validity, wire
from testbed.netns import in_ns, ns_cmd, root_qdisc

PING_S = 10
WARMUP = 4
# per scheme: the pings (measured from WARMUP for PING_S) end before it,
# with the reads of counters around them, which take seconds in a busy
# TCG guest (with 3 s to spare, the measurement once ran past the flows'
# end: the wire 73-79 % busy by the receiver's counters over a window in
# which iperf3 had the flows at 91 % of it)
SECONDS = WARMUP + PING_S + 6
UDP_X = 2.0            # the flood, times the wire's rate
RCV = "198.18.2.2"
SCHEMES = ("pfifo", "fq_codel", "afcd", "afcd", "afcd", "fall", "afcd-paced")
# afcd-paced: the qdisc paced at this share of the wire's rate, set below
# it as an operator sets a rate (the rate-less afcd and fall need none)
PACED = 11 / 12
# the NIC's byte queue limit, bytes: two full frames, what its driver may
# hold beyond the qdisc (BQL; left to itself, under TCG's late completions
# it grew to 110 KB, 73 ms at 12 Mbit/s, and the queue moved into the ring)
BQL_MAX = 3028


def link_stats(ns, dev):
    """dev's counters (ip -s): rx/tx bytes, packets, dropped."""
    out = in_ns(ns, ["ip", "-j", "-s", "link", "show", "dev", dev]).stdout
    return json.loads(out)[0]["stats64"]


def ping_ms(ns, count, interval, dst=RCV):
    """The RTTs (ms, sorted) of count pings from ns to dst, interval s apart."""
    out = in_ns(ns, ["ping", "-c", str(count), "-i", str(interval), "-W", "5", dst],
                check=False, timeout=count * interval + 30).stdout
    return sorted(float(ln.split("time=")[1].split()[0]) for ln in out.splitlines()
                  if "time=" in ln)


def softnet_dropped():
    """Packets the CPUs' backlogs dropped (/proc/net/softnet_stat, 2nd
    column): lost before any qdisc."""
    with open("/proc/net/softnet_stat") as fh:
        return sum(int(ln.split()[1], 16) for ln in fh)


def pct(xs, p):
    return xs[min(len(xs) - 1, int(len(xs) * p))] if xs else None


def load(snd, rcv, rtr, tx, rx, rate_mbit, afcd_dev=None):
    """CUBIC and UDP at UDP_X x the rate from snd to rcv for SECONDS, with
    pings through the same queue after WARMUP; what each got."""
    srv = [subprocess.Popen(ns_cmd(rcv, ["iperf3", "-s", "-1", "-J", "-p", str(p)]),
                            stdout=subprocess.PIPE, text=True) for p in (5301, 5302)]
    time.sleep(0.5)
    cli = [subprocess.Popen(ns_cmd(snd, ["iperf3", "-c", RCV, "-p", "5301", "-t",
                                         str(SECONDS), "-C", "cubic", "-J"]),
                            stdout=subprocess.PIPE, text=True),
           subprocess.Popen(ns_cmd(snd, ["iperf3", "-c", RCV, "-p", "5302", "-t",
                                         str(SECONDS), "-u", "-b",
                                         "%gM" % (UDP_X * rate_mbit), "-l", "1400", "-J"]),
                            stdout=subprocess.PIPE, text=True)]
    time.sleep(WARMUP)
    sd0 = softnet_dropped()
    meter = validity.Meter().start()
    polls, done = [], threading.Event()

    def poll():
        while afcd_dev and not done.wait(1.0):
            st = nslib.afcd_stats(rtr, afcd_dev, flows=False, dt=0)
            polls.append(dict({k: st["estimates"][k] for k in
                               ("arrival_bps", "fair_rate_bps", "m_fair", "waterline",
                                "n_flows", "crowd_gate_ns")},
                              link_bps=st["queue"]["link_bps"]))
    th = threading.Thread(target=poll, daemon=True)
    th.start()
    # the counters' window is the pings' alone: afcd's own readings (a
    # second or more each under TCG) outside it, so that it never runs
    # past the flows' end under one scheme and not the other
    q0 = nslib.afcd_stats(rtr, afcd_dev, flows=False, dt=0)["queue"] if afcd_dev else None
    t0, r0, d0 = time.monotonic(), link_stats(rcv, rx), link_stats(rtr, tx)
    b0 = root_qdisc(rtr, tx).get("bytes", 0)
    rtts = ping_ms(snd, int(PING_S / 0.25), 0.25)
    t1, r1, d1 = time.monotonic(), link_stats(rcv, rx), link_stats(rtr, tx)
    b1 = root_qdisc(rtr, tx).get("bytes", 0)
    bql = nslib.sh(["ip", "netns", "exec", rtr, "sh", "-c", "cd /sys/class/net/%s/queues/"
                      "tx-0/byte_queue_limits && cat limit inflight" % tx], check=False).stdout
    st1 = nslib.afcd_stats(rtr, afcd_dev, dt=0) if afcd_dev else None
    q1 = st1["queue"] if afcd_dev else None
    done.set()
    th.join(timeout=10)
    cpu = meter.stop()
    tcp_sent = json.loads(cli[0].communicate(timeout=SECONDS + 60)[0])
    udp_sent = json.loads(cli[1].communicate(timeout=SECONDS + 60)[0])
    udp_sent = [x["sum"]["bits_per_second"]
                for x in udp_sent["intervals"]][WARMUP:WARMUP + PING_S]
    got = []
    for sv in srv:
        r = json.loads(sv.communicate(timeout=60)[0])
        iv = [x["sum"]["bits_per_second"] for x in r["intervals"]][WARMUP:WARMUP + PING_S]
        got.append(sum(iv) / len(iv) / 1e6 if iv else 0.0)
    frames = r1["rx"]["packets"] - r0["rx"]["packets"]
    wire_bits = 8 * (r1["rx"]["bytes"] - r0["rx"]["bytes"] + frames * wire.ETH_OVERHEAD)
    q = root_qdisc(rtr, tx)
    res = {"tcp_mbps": got[0], "udp_mbps": got[1],
           "wire_util": wire_bits / ((t1 - t0) * rate_mbit * 1e6),
           "qdisc_sent_mbps": (b1 - b0) * 8 / (t1 - t0) / 1e6,
           "rx_mbps": (r1["rx"]["bytes"] - r0["rx"]["bytes"]) * 8 / (t1 - t0) / 1e6,
           "window_s": t1 - t0,
           "pings": len(rtts), "ping_ms_p50": pct(rtts, 0.5), "ping_ms_p90": pct(rtts, 0.9),
           "qdisc": {k: q.get(k) for k in ("kind", "packets", "drops", "requeues")},
           "device_tx_dropped": d1["tx"]["dropped"] - d0["tx"]["dropped"],
           "bql_limit_inflight": bql.split(), "cpu": cpu,
           "tcp_retransmits": tcp_sent["end"]["sum_sent"].get("retransmits"),
           "softnet_dropped": softnet_dropped() - sd0,
           "udp_sent_mbps": sum(udp_sent) / len(udp_sent) / 1e6 if udp_sent else 0.0}
    if afcd_dev:
        res["afcd"] = {"sojourn_ms_mean": (q1["sojourn_sum_ns"] - q0["sojourn_sum_ns"]) /
                       1e6 / max(1, q1["passed"] - q0["passed"]),
                       "aqm_drop": q1["aqm_drop"] - q0["aqm_drop"],
                       "police_drop": q1["police_drop"] - q0["police_drop"],
                       "queue": {k: v for k, v in q1.items() if not isinstance(v, dict)},
                       "estimates": st1["estimates"], "polls": polls,
                       "flows": [{k: f.get(k) for k in ("proto", "dport", "m_i", "drops",
                                                         "rate_bps", "target_ns")}
                                 for f in st1.get("flows", [])]}
    return res


def run(out, rate_mbit, schemes=SCHEMES):
    """The check on the wire (wire.wire_devs()) at rate_mbit, the rate the
    host gave it; its result, also written to OUT/wire.json."""
    devs = wire.wire_devs()
    if not devs:
        raise SystemExit("wire_bench: no wire in this VM (afcd-testbed script ... --wire MBIT)")
    nslib.ensure_bpffs()
    res = {"kernel": os.uname().release, "rate_mbit": rate_mbit, "udp_x": UDP_X,
           "seconds": SECONDS, "warmup": WARMUP}
    nss = nslib.Namespaces("wc")
    try:
        snd, rtr, rcv = nss.add("snd"), nss.add("rtr"), nss.add("rcv")
        tx, rx = devs["tx"], devs["rx"]
        bql = "/sys/class/net/%s/queues/tx-0/byte_queue_limits/" % tx
        if BQL_MAX:
            with open(bql + "limit_max", "w") as fh:
                fh.write(str(BQL_MAX))
        res["bql"] = {k: open(bql + k).read().strip() for k in ("limit", "limit_max",
                                                                 "inflight")}
        for ns, dev, addr in ((rtr, tx, "198.18.2.1/24"), (rcv, rx, RCV + "/24")):
            nslib.sh(["ip", "link", "set", dev, "netns", ns])
            in_ns(ns, ["ip", "addr", "add", addr, "dev", dev])
            in_ns(ns, ["ip", "link", "set", dev, "up"])
            nslib.offloads_off(ns, dev)
        nss.link(snd, "snd0", rtr, "rtr0", ["198.18.1.1/24"], ["198.18.1.254/24"])
        in_ns(snd, ["ip", "route", "add", "default", "via", "198.18.1.254"])
        in_ns(rcv, ["ip", "route", "add", "default", "via", "198.18.2.1"])
        in_ns(rtr, ["sysctl", "-qw", "net.ipv4.ip_forward=1"])
        # the base RTT: 10 ms on the way back (the ACKs)
        in_ns(rcv, ["tc", "qdisc", "replace", "dev", rx, "root", "netem", "delay", "10ms"])
        res["idle_ping_ms"] = ping_ms(snd, 20, 0.1)
        idle = res["idle_ping_ms"][len(res["idle_ping_ms"]) // 2]     # sorted
        for i, scheme in enumerate(schemes):
            key = scheme if scheme not in res else "%s #%d" % (scheme, i + 1)
            p = None
            if scheme.split("-")[0] in ("afcd", "fall"):
                # FaLL's RTT: the idle one measured (its global target is
                # RTT / sqrt(N))
                params = ["algo", scheme.split("-")[0], "rtt", "%dms" % math.ceil(idle)] + (
                    ["rate", "%dkbit" % (PACED * rate_mbit * 1000)]
                    if scheme.endswith("-paced") else [])
                p = nslib.start_loader(rtr, tx, "--backend", "qdisc", *params,
                                       log=os.path.join(out, "wire-loader.log"))
                st = nslib.afcd_stats(rtr, tx, flows=False, dt=0)
                attached = {"hook": st["hook"], "rate_bps": st["config"]["rate_bps"]}
            else:
                in_ns(rtr, ["tc", "qdisc", "replace", "dev", tx, "root", scheme] +
                      (["limit", "1000"] if scheme == "pfifo" else []))
            try:
                res[key] = load(snd, rcv, rtr, tx, rx, rate_mbit, tx if p else None)
            finally:
                if p:
                    res[key]["attached"] = attached
                    res[key]["loader_rc"] = nslib.stop(p)
                else:
                    in_ns(rtr, ["tc", "qdisc", "del", "dev", tx, "root"], check=False)
            print("wire_bench: %s %s" % (key, json.dumps(res[key])), flush=True)
    finally:
        nss.close()
    with open(os.path.join(out, "wire.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    return res


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rate = float(os.environ.get("AFCD_WIRE_MBIT", "0") or 0)
    if not rate > 0:
        raise SystemExit("wire_bench: no wire's rate (AFCD_WIRE_MBIT): run it with "
                         "afcd-testbed script ... --wire MBIT")
    res = run(out, rate)
    idle = sorted(res["idle_ping_ms"])[len(res["idle_ping_ms"]) // 2]
    print("the wire at %g Mbit/s, CUBIC against UDP at %gx, idle RTT %.1f ms, %s" %
          (rate, UDP_X, idle, res["kernel"]))
    print("%-12s %6s %6s %9s %5s %10s %11s %6s" % ("scheme", "CUBIC", "UDP", "CUBIC/UDP",
                                                  "util", "ping p50", "qdisc wait",
                                                  "guest"))
    for k, v in res.items():
        if isinstance(v, dict) and "tcp_mbps" in v:
            print("%-12s %6.2f %6.2f %9.2f %5.2f %7.1f ms %8s ms %5.0f%%" % (
                k, v["tcp_mbps"], v["udp_mbps"], v["tcp_mbps"] / max(v["udp_mbps"], 1e-9),
                v["wire_util"], v["ping_ms_p50"] or -1,
                "%.1f" % v["afcd"]["sojourn_ms_mean"] if "afcd" in v else "-",
                100 * v["cpu"]["cpu"]["guest_busy"]))


if __name__ == "__main__":
    main()
