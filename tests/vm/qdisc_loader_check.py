#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""`afcd attach DEV --backend qdisc` on a kernel with BPF qdiscs (inside
the VM booted with --kernel 6.18): the loader registers the qdisc afcd,
makes it the root qdisc and refreshes its estimates; under a CUBIC flow
against a UDP flood it holds the flood to about its share and the queue's
delay near the target, where a FIFO of its size would fill (10,240
packets: seconds), and the sojourn it measures at dequeue is the
queueing delay the pings see; a lone UDP flow above the rate is dropped
at dequeue on CoDel's schedule; a loader killed with SIGKILL leaves the qdisc running
and the next one adopts it; once registered `tc qdisc replace ... root
afcd` works on any interface (a plain FIFO without a config, also on one
of another namespace with the configured interface's ifindex); detach
removes the qdisc and, with no interface left, the registration; without
a rate on a device with two queues, the loader puts mq at the root and
afcd on each queue; without a rate at the root of a NIC that pushes back
(the wire, testbed/wire.py), it holds a CUBIC flow's share against a flood
at the NIC's own rate and runs the NIC about as busy as fq_codel does in the
same boot (testbed/wire_bench.py). Under ecn on, an ECN-capable CUBIC flow against
the flood gets its marks from afcd_egress, set on its next packets, and
the flood is still dropped.

Writes OUT/qdisc_loader.json.  qdisc_loader_check.py OUT_DIR
"""
import json
import os
import signal
import subprocess
import sys
import time

from testbed import netns as nslib
from testbed import wire_bench
from testbed.wire_bench import ping_ms
from testbed.netns import in_ns, ns_cmd, root_qdisc

RATE_MBIT = 20.0
UDP_MBIT = 40.0
SECONDS = 14           # 4 s of warm-up, then 40 pings 0.2 s apart
OPS_PIN = os.path.join(nslib.PIN_DIR, "afcd_qdisc_ops")


def struct_ops_names():
    out = subprocess.run(["bpftool", "-j", "struct_ops", "show"], capture_output=True,
                         text=True).stdout
    try:
        return sorted(m.get("name", "") for m in json.loads(out or "[]"))
    except ValueError:
        return []


def servers(d, ports):
    """One-shot iperf3 servers in d with JSON output, one per port."""
    srv = [subprocess.Popen(ns_cmd(d, ["iperf3", "-s", "-1", "-J", "-p", str(p)]),
                            stdout=subprocess.PIPE, text=True) for p in ports]
    time.sleep(0.5)
    return srv


def goodputs(srv, skip):
    """The receiver-side goodput of each server's run, Mbit/s, the mean of
    its 1 s intervals after the first skip."""
    rates = []
    for sv in srv:
        r = json.loads(sv.communicate(timeout=60)[0])
        iv = [x["sum"]["bits_per_second"] for x in r["intervals"]][skip:]
        rates.append(sum(iv) / len(iv) / 1e6 if iv else 0.0)
    return rates


def load(s, d):
    """A CUBIC flow and a UDP flood from s to d for SECONDS, with pings
    through the same queue: goodputs (receiver side) and ping RTTs."""
    srv = servers(d, (5301, 5302))
    cli = [subprocess.Popen(ns_cmd(s, ["iperf3", "-c", "198.18.0.2", "-p", "5301", "-t",
                                       str(SECONDS), "-C", "cubic"]),
                            stdout=subprocess.DEVNULL),
           subprocess.Popen(ns_cmd(s, ["iperf3", "-c", "198.18.0.2", "-p", "5302", "-t",
                                       str(SECONDS), "-u", "-b", "%gM" % UDP_MBIT,
                                       "-l", "1400"]),
                            stdout=subprocess.DEVNULL)]
    time.sleep(4)                       # past the slow start and the first drops
    q0 = nslib.afcd_stats(s, "s0", flows=False, dt=0)["queue"]
    rtts = ping_ms(s, 40, 0.2, "198.18.0.2")
    q1 = nslib.afcd_stats(s, "s0", flows=False, dt=0)["queue"]
    for c in cli:
        c.wait(timeout=SECONDS + 60)
    rates = goodputs(srv, 4)
    return {"tcp_mbps": rates[0], "udp_mbps": rates[1],
            "ping_ms_p50": rtts[len(rtts) // 2] if rtts else None,
            "ping_ms_p90": rtts[len(rtts) * 9 // 10] if rtts else None,
            "pings": len(rtts), "ping_ms_mean": sum(rtts) / len(rtts) if rtts else None,
            # the sojourn the qdisc measured at dequeue, mean over the
            # packets it sent while the pings ran
            "afcd_sojourn_ms_mean": (q1["sojourn_sum_ns"] - q0["sojourn_sum_ns"]) / 1e6 /
            max(1, q1["passed"] - q0["passed"])}


# the qdisc's rate while CoDel's schedule is measured: low enough that the
# slowest TCG guest sends twice of it
CODEL_MBIT = 4.0
# the UDP sender's socket memory then: its packets in the queue are charged
# to it, so the sender blocks at about 2 s of queue at CODEL_MBIT (the
# default 208 KiB would be 0.25 s, which a stalled sender lets drain)
CODEL_SNDBUF = 1 << 20


def codel_schedule(s, d):
    """One UDP flow at twice the rate with the policer off, alone: the queue
    stands at the sender's socket memory, seconds of it, so the CoDel state
    that decides for it (the queue's under codel_state queue or global,
    else the flow's own) stays in its dropping state and drops at dequeue
    at drop_next += interval/sqrt(count) (RFC 8289 sec. 5.3). Two polls of
    its count n1 < n2, at wall times t1 < t2: CoDel says they are
    interval * sum(1/sqrt(k), k = n1..n2-1) apart. Measured at CODEL_MBIT,
    the rate and horizon restored after."""
    cfg = nslib.afcd_stats(s, "s0", flows=False, dt=0)["config"]
    interval_s = cfg["interval_ns"] / 1e9
    nslib.afcd(s, "set", "s0", "police", "off", "horizon", "3s",
               "rate", "%gmbit" % CODEL_MBIT)
    # SO_SNDBUF is capped at wmem_max: the namespace's (Linux >= 6.8),
    # else the machine's
    for cmd in (ns_cmd(s, ["sysctl", "-qw", "net.core.wmem_max=%d" % (2 * CODEL_SNDBUF)]),
                ["sysctl", "-qw", "net.core.wmem_max=%d" % (2 * CODEL_SNDBUF)]):
        subprocess.run(cmd, stderr=subprocess.DEVNULL, check=False)
    srv = subprocess.Popen(ns_cmd(d, ["iperf3", "-s", "-1", "-p", "5303"]),
                           stdout=subprocess.DEVNULL)
    time.sleep(0.5)
    cli = subprocess.Popen(ns_cmd(s, ["iperf3", "-c", "198.18.0.2", "-p", "5303", "-t", "10",
                                      "-u", "-b", "%gM" % (2 * CODEL_MBIT), "-l", "1400",
                                      "-w", str(CODEL_SNDBUF), "-J"]),
                           stdout=subprocess.PIPE, text=True)
    polls = []
    # polled while the flow runs (a poll takes up to a second on a slow
    # guest: at least a dozen of them), from past the first interval above
    # target
    t_end = time.time() + 9.5
    time.sleep(1.5)
    while time.time() < t_end and cli.poll() is None:
        t = time.monotonic()
        st = nslib.afcd_stats(s, "s0", dt=0)
        fl = [f for f in st["flows"] if f["proto"] == 17 and f["dport"] == 5303]
        cv = st["queue"] if cfg["codel_state"] != "per-flow" else fl[0] if fl else {}
        polls.append({"t": (t + time.monotonic()) / 2,
                      "count": cv.get("codel_count", 0),
                      "dropping": cv.get("dropping", 0),
                      "drops": fl[0]["drops"] if fl else 0,
                      "flows": len(fl)})
        time.sleep(0.5)
    try:
        sent = json.loads(cli.communicate(timeout=60)[0])["end"]["sum"]
        sent_mbps = sent["bytes"] * 8 / sent["seconds"] / 1e6
    except (ValueError, KeyError, ZeroDivisionError):
        sent_mbps = None
    srv.wait(timeout=60)
    nslib.afcd(s, "set", "s0", "police", "on" if cfg["police"] else "off",
               "horizon", "%gms" % (cfg["horizon_ns"] / 1e6),
               "rate", "%dbit" % cfg["rate_bps"])
    # the longest dropping episode the polls saw: a run of polls, each in
    # the dropping state, over which every drop was counted (drops - count
    # constant, within the few drops between the two counters' reads).
    # CoDel leaves its dropping state when a sender stalled by the busy
    # guest lets the queue drain; a poll may see it out of it, or back in
    # it with the count carried over (RFC 8289 sec. 5.5) after drops the
    # count does not hold.
    runs, cur = [], []
    for p in polls:
        if p["dropping"] and (not cur or abs((p["drops"] - p["count"]) -
                                             (cur[-1]["drops"] - cur[-1]["count"])) <= 5):
            cur.append(p)
        else:
            runs.append(cur)
            cur = [p] if p["dropping"] else []
    runs.append(cur)
    ep = max([r for r in runs if r] or [polls[:1]],
             key=lambda r: r[-1]["count"] - r[0]["count"])
    a, b = ep[0], ep[-1]
    return {"polls": polls, "episode": [polls.index(a), polls.index(b)],
            "sent_mbps": sent_mbps, "rate_mbit": CODEL_MBIT,
            "interval_s": interval_s, "elapsed_s": b["t"] - a["t"],
            "codel_s": interval_s * sum(k ** -0.5 for k in range(max(1, a["count"]),
                                                                 b["count"]))}


def ecn(s, d):
    """ecn on: an ECN-capable CUBIC flow, alone for 4 s, then against the
    UDP flood for 6 s. The qdisc cannot write a packet; the marks it
    decides for the CUBIC flow (its law while it holds the link, the
    high-water mark in its slow start) are set by afcd_egress on the
    flow's next packets (deferred_mark), so the flow slows on marks, not
    drops, while the flood is still dropped. Counters over each part."""
    nslib.afcd(s, "set", "s0", "ecn", "on")
    in_ns(s, ["sysctl", "-qw", "net.ipv4.tcp_ecn=1"])

    def counters():
        st = nslib.afcd_stats(s, "s0", dt=0)
        fl = [f for f in st["flows"] if f["proto"] == 6 and f["dport"] == 5304]
        c = {k: st["queue"][k] for k in ("ecn_mark", "police_mark", "high_mark",
                                         "deferred_mark", "aqm_drop", "police_drop",
                                         "overlimit_drop")}
        c.update({"tcp_" + k: fl[0][k] if fl else 0 for k in ("drops", "marks")})
        # CE as the receiver's IP layer saw it (IpExt InCEPkts, per namespace)
        lines = [ln.split() for ln in in_ns(d, ["cat", "/proc/net/netstat"]).stdout.splitlines()
                 if ln.startswith("IpExt:")]
        c["received_ce"] = int(dict(zip(lines[0], lines[1])).get("InCEPkts", 0)) \
            if len(lines) == 2 else -1
        return c

    srv = servers(d, (5304, 5305))
    c0 = counters()
    tcp = subprocess.Popen(ns_cmd(s, ["iperf3", "-c", "198.18.0.2", "-p", "5304", "-t", "10",
                                      "-C", "cubic", "-J"]),
                           stdout=subprocess.PIPE, text=True)
    time.sleep(4)
    c1 = counters()
    udp = subprocess.Popen(ns_cmd(s, ["iperf3", "-c", "198.18.0.2", "-p", "5305", "-t", "6",
                                      "-u", "-b", "%gM" % UDP_MBIT, "-l", "1400"]),
                           stdout=subprocess.DEVNULL)
    t = json.loads(tcp.communicate(timeout=70)[0])
    udp.wait(timeout=70)
    c2 = counters()
    rates = goodputs(srv, 1)
    in_ns(s, ["sysctl", "-qw", "net.ipv4.tcp_ecn=2"])
    nslib.afcd(s, "set", "s0", "ecn", "off")
    return {"alone": {k: c1[k] - c0[k] for k in c0},
            "flood": {k: c2[k] - c1[k] for k in c0},
            "tcp_mbps": rates[0], "udp_mbps": rates[1],
            "tcp_retransmits": t["end"]["sum_sent"].get("retransmits")}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    nslib.ensure_bpffs()
    res = {"kernel": os.uname().release, "rate_mbit": RATE_MBIT, "udp_mbit": UDP_MBIT}
    nss = nslib.Namespaces("ql")
    log = os.path.join(out, "loader.log")
    try:
        s, d = nss.add("s"), nss.add("d")
        nss.link(s, "s0", d, "d0", ["198.18.0.1/24"], ["198.18.0.2/24"])
        in_ns(d, ["tc", "qdisc", "replace", "dev", "d0", "root", "netem", "delay", "10ms"])
        p = nslib.start_loader(s, "s0", "--backend", "qdisc", "rate", "%gmbit" % RATE_MBIT,
                               log=log)
        st = nslib.afcd_stats(s, "s0", flows=False, dt=0)
        res["attached"] = {"hook": st["hook"], "kind": root_qdisc(s, "s0").get("kind"),
                           "ops_pinned": os.path.exists(OPS_PIN),
                           "struct_ops": struct_ops_names()}
        # the idle RTT: the median of 20 (one ping in five or so comes
        # back ms late under TCG)
        res["idle_ping_ms"] = ping_ms(s, 20, 0.1, "198.18.0.2")
        # every packet counted once, by afcd and by tc alike: 300 pings
        c0 = nslib.afcd_stats(s, "s0", flows=False, dt=0)["queue"]["passed"]
        t0 = root_qdisc(s, "s0").get("packets", 0)
        n = len(ping_ms(s, 300, 0.01, "198.18.0.2"))
        res["count"] = {"pings": n,
                        "afcd_passed": nslib.afcd_stats(s, "s0", flows=False,
                                                        dt=0)["queue"]["passed"] - c0,
                        "tc_sent": root_qdisc(s, "s0").get("packets", 0) - t0}
        res["load"] = load(s, d)
        st = nslib.afcd_stats(s, "s0", flows=False, dt=0)
        res["load"]["queue"] = {k: st["queue"][k] for k in
                                ("passed", "aqm_drop", "police_drop", "overlimit_drop")}
        q = root_qdisc(s, "s0")
        res["load"]["qdisc"] = {k: q.get(k) for k in ("packets", "drops")}

        res["codel"] = codel_schedule(s, d)
        res["ecn"] = ecn(s, d)

        # SIGKILL: the qdisc stays, and the next loader adopts it
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        res["killed"] = {"kind": root_qdisc(s, "s0").get("kind")}
        p = nslib.start_loader(s, "s0", "--backend", "qdisc", "rate", "%gmbit" % RATE_MBIT,
                               "--install-fq", log=log + ".2")   # as the systemd unit
        # start_loader() returns at once (the config is still there):
        # wait for the new loader to say what it did
        deadline, said = time.time() + 20, ""
        while "adopted" not in said and time.time() < deadline:
            time.sleep(0.2)
            with open(log + ".2") as fh:
                said = fh.read()
        res["killed"]["adopted"] = "adopted" in said
        res["killed"]["pings"] = len(ping_ms(s, 5, 0.2, "198.18.0.2"))

        # registered: tc makes afcd the root of another interface, d0, in
        # another namespace with s0's ifindex (2 in both): a plain FIFO
        # there, neither s0's config nor its queue. The echo replies go
        # through d0 and count as unconfigured, not as s0's packets.
        add = in_ns(d, ["tc", "qdisc", "replace", "dev", "d0", "root", "afcd"], check=False)
        st0 = nslib.afcd_stats(s, "s0", flows=False, dt=0)
        n = len(ping_ms(s, 5, 0.2, "198.18.0.2"))
        st1 = nslib.afcd_stats(s, "s0", flows=False, dt=0)
        res["by_tc"] = {"rc": add.returncode, "err": add.stderr.strip(),
                        "kind": root_qdisc(d, "d0").get("kind"), "pings": n,
                        "ifindex": [json.loads(in_ns(x, ["ip", "-j", "link", "show", "dev",
                                                         dev]).stdout)[0]["ifindex"]
                                    for x, dev in ((s, "s0"), (d, "d0"))],
                        "s0_passed": st1["queue"]["passed"] - st0["queue"]["passed"],
                        "unconfigured": st1["global"]["unconfigured"] -
                        st0["global"]["unconfigured"]}
        in_ns(d, ["tc", "qdisc", "del", "dev", "d0", "root"], check=False)

        rc = nslib.stop(p)
        deadline = time.time() + 5
        while "afcd" in struct_ops_names() and time.time() < deadline:
            time.sleep(0.1)
        res["detached"] = {"rc": rc, "kind": root_qdisc(s, "s0").get("kind"),
                           "ops_pinned": os.path.exists(OPS_PIN),
                           "struct_ops": struct_ops_names(),
                           "pins": nslib.pins()}

        # without a rate, on a device with two transmit queues: mq at the
        # root and afcd on each queue, at the device's own rate
        q2 = ["numtxqueues", "2", "numrxqueues", "2"]
        nslib.sh(["ip", "link", "add", "s1"] + q2 + ["netns", s, "type", "veth", "peer",
                                                     "name", "d1"] + q2 + ["netns", d])
        for ns, dev, addr in ((s, "s1", "198.18.3.1/24"), (d, "d1", "198.18.3.2/24")):
            in_ns(ns, ["ip", "addr", "add", addr, "dev", dev])
            in_ns(ns, ["ip", "link", "set", dev, "up"])
        p = nslib.start_loader(s, "s1", "--backend", "qdisc", log=log + ".mq")
        tree = json.loads(in_ns(s, ["tc", "-j", "qdisc", "show", "dev", "s1"]).stdout)
        st = nslib.afcd_stats(s, "s1", flows=False, dt=0)
        res["mq"] = {"tree": sorted((q.get("kind"), q.get("parent") or "root") for q in tree),
                     "rate_bps": st["config"]["rate_bps"], "hook": st["hook"],
                     "pings": len(ping_ms(s, 5, 0.2, "198.18.3.2"))}
        res["mq"]["passed"] = nslib.afcd_stats(s, "s1", flows=False, dt=0)["queue"]["passed"]
        res["mq"]["rc"] = nslib.stop(p)
        res["mq"]["after"] = root_qdisc(s, "s1").get("kind")
        deadline = time.time() + 5
        while "afcd" in struct_ops_names() and time.time() < deadline:
            time.sleep(0.1)

        # afcd_egress (its marks) removed by hand: the loader stops and
        # removes the rest, as with the EDT program (systemd attaches anew)
        p = nslib.start_loader(s, "s1", "--backend", "qdisc", "rate", "%gmbit" % RATE_MBIT,
                               "--attach", "clsact", log=log + ".marks")
        hook = nslib.afcd_stats(s, "s1", flows=False, dt=0)["hook"]
        in_ns(s, ["tc", "filter", "del", "dev", "s1", "egress"])
        try:
            rc = p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            rc = None
        nslib.stop(p)
        with open(log + ".marks") as fh:
            said = fh.read()
        res["marks_removed"] = {"hook": hook, "rc": rc, "said": said[-300:],
                                "after": root_qdisc(s, "s1").get("kind"),
                                "pins": nslib.pins()}
    finally:
        nss.close()
    # without a rate, at the root of the wire's NIC, which pushes back
    # (afcd-testbed script ... --wire MBIT): wire_bench.py's fq_codel run,
    # what the wire carries in this boot, then its afcd run
    res["wire"] = wire_bench.run(out, float(os.environ["AFCD_WIRE_MBIT"]),
                                 ("fq_codel", "afcd"))
    with open(os.path.join(out, "qdisc_loader.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
