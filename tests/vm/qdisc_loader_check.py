#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""`afcd attach DEV --backend qdisc` on a kernel with BPF qdiscs (inside
the VM booted with --kernel 6.18): the loader registers the qdisc afcd,
makes it the root qdisc and refreshes its estimates; under a CUBIC flow
against a UDP flood it holds the flood to about its share and the queue's
delay near the target, where a FIFO of its size would fill (10,240
packets: seconds); a loader killed with SIGKILL leaves the qdisc running
and the next one adopts it; once registered `tc qdisc replace ... root
afcd` works on any interface (a plain FIFO without a config); detach
removes the qdisc and, with no interface left, the registration.

Writes OUT/qdisc_loader.json.  qdisc_loader_check.py OUT_DIR
"""
import json
import os
import signal
import subprocess
import sys
import time

from testbed import netns as nslib
from testbed.netns import in_ns, ns_cmd

RATE_MBIT = 20.0
UDP_MBIT = 40.0
SECONDS = 12
OPS_PIN = os.path.join(nslib.PIN_DIR, "afcd_qdisc_ops")


def root_qdisc(ns, dev):
    out = in_ns(ns, ["tc", "-s", "-j", "qdisc", "show", "dev", dev]).stdout
    return next((q for q in json.loads(out) if q.get("root")), {})


def struct_ops_names():
    out = subprocess.run(["bpftool", "-j", "struct_ops", "show"], capture_output=True,
                         text=True).stdout
    try:
        return sorted(m.get("name", "") for m in json.loads(out or "[]"))
    except ValueError:
        return []


def ping_ms(ns, dst, count, interval):
    out = in_ns(ns, ["ping", "-c", str(count), "-i", str(interval), "-W", "5", dst],
                check=False, timeout=count * interval + 30).stdout
    rtts = sorted(float(ln.split("time=")[1].split()[0]) for ln in out.splitlines()
                  if "time=" in ln)
    return rtts


def load(s, d):
    """A CUBIC flow and a UDP flood from s to d for SECONDS, with pings
    through the same queue: goodputs (receiver side) and ping RTTs."""
    srv = [subprocess.Popen(ns_cmd(d, ["iperf3", "-s", "-1", "-J", "-p", str(p)]),
                            stdout=subprocess.PIPE, text=True) for p in (5301, 5302)]
    time.sleep(0.5)
    cli = [subprocess.Popen(ns_cmd(s, ["iperf3", "-c", "198.18.0.2", "-p", "5301", "-t",
                                       str(SECONDS), "-C", "cubic"]),
                            stdout=subprocess.DEVNULL),
           subprocess.Popen(ns_cmd(s, ["iperf3", "-c", "198.18.0.2", "-p", "5302", "-t",
                                       str(SECONDS), "-u", "-b", "%gM" % UDP_MBIT,
                                       "-l", "1400"]),
                            stdout=subprocess.DEVNULL)]
    time.sleep(4)                       # past the slow start and the first drops
    rtts = ping_ms(s, "198.18.0.2", 40, 0.2)
    for c in cli:
        c.wait(timeout=SECONDS + 60)
    rates = []
    for sv in srv:
        r = json.loads(sv.communicate(timeout=60)[0])
        iv = [x["sum"]["bits_per_second"] for x in r["intervals"]][3:]
        rates.append(sum(iv) / len(iv) / 1e6 if iv else 0.0)
    return {"tcp_mbps": rates[0], "udp_mbps": rates[1],
            "ping_ms_p50": rtts[len(rtts) // 2] if rtts else None,
            "ping_ms_p90": rtts[len(rtts) * 9 // 10] if rtts else None,
            "pings": len(rtts)}


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
        res["idle_ping_ms"] = ping_ms(s, "198.18.0.2", 5, 0.2)
        # every packet counted once, by afcd and by tc alike: 300 pings
        c0 = nslib.afcd_stats(s, "s0", flows=False, dt=0)["queue"]["passed"]
        t0 = root_qdisc(s, "s0").get("packets", 0)
        n = len(ping_ms(s, "198.18.0.2", 300, 0.01))
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

        # SIGKILL: the qdisc stays, and the next loader adopts it
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        res["killed"] = {"kind": root_qdisc(s, "s0").get("kind")}
        p = nslib.start_loader(s, "s0", "--backend", "qdisc", "rate", "%gmbit" % RATE_MBIT,
                               "--install-fq", log=log + ".2")   # as the systemd unit
        time.sleep(0.5)
        with open(log + ".2") as fh:
            res["killed"]["adopted"] = "adopted" in fh.read()
        res["killed"]["pings"] = len(ping_ms(s, "198.18.0.2", 5, 0.2))

        # registered: tc makes afcd the root of another interface (a FIFO there)
        add = in_ns(d, ["tc", "qdisc", "replace", "dev", "d0", "root", "afcd"], check=False)
        res["by_tc"] = {"rc": add.returncode, "err": add.stderr.strip(),
                        "kind": root_qdisc(d, "d0").get("kind"),
                        "pings": len(ping_ms(s, "198.18.0.2", 5, 0.2))}
        in_ns(d, ["tc", "qdisc", "del", "dev", "d0", "root"], check=False)

        rc = nslib.stop(p)
        deadline = time.time() + 5
        while "afcd" in struct_ops_names() and time.time() < deadline:
            time.sleep(0.1)
        res["detached"] = {"rc": rc, "kind": root_qdisc(s, "s0").get("kind"),
                           "ops_pinned": os.path.exists(OPS_PIN),
                           "struct_ops": struct_ops_names(),
                           "pins": nslib.pins()}
    finally:
        nss.close()
    with open(os.path.join(out, "qdisc_loader.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
