# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The qdisc backend's cost: one CUBIC flow through a veth whose root
qdisc is, in turn, the kernel's pfifo and fq, the BPF qdisc afcd without
a config (a plain FIFO in BPF: what any BPF qdisc pays for its list and
its kfuncs), and afcd and fall configured by the loader (paced at 10
Gbit/s, far above what the veth carries, so that the sender, not the
pacing, is the limit). Per qdisc: goodput, CPU time per packet (the whole
machine's, from /proc/stat: the flow is CPU-bound, so both move together)
and, for the BPF ones, the programs' own run time per packet (enqueue plus
dequeue, kernel.bpf_stats_enabled). Ratios against pfifo in the same run;
the qdiscs alternate within each repeat so that drift hits them alike.

Needs a kernel with BPF qdiscs: `afcd-testbed script testbed/qdisc_bench.py
--kernel 6.18 --out DIR` (make bench-qdisc). Writes DIR/qdisc_bench.json
and prints a table.
"""
import json
import os
import subprocess
import sys
import time

from testbed import netns as nslib
from testbed.netns import in_ns, ns_cmd, root_qdisc
from testbed.scenario import bpf_cost

QDISCS = ["pfifo", "fq", "bpf-fifo", "afcd", "fall"]
SECONDS = 8
REPEATS = 3
PACE = "10gbit"


def cpu_busy_s():
    """The machine's busy CPU time so far, seconds (/proc/stat)."""
    with open("/proc/stat") as fh:
        f = [int(x) for x in fh.readline().split()[1:]]
    hz = os.sysconf("SC_CLK_TCK")
    return (sum(f[:8]) - f[3] - f[4]) / hz      # all but idle and iowait


def one(nss, qdisc, idx):
    """One flow through a fresh veth pair under qdisc: its figures."""
    s, d = nss.add("s%d" % idx), nss.add("d%d" % idx)
    nss.link(s, "s0", d, "d0", ["198.18.1.1/24"], ["198.18.1.2/24"])
    loader = None
    try:
        if qdisc in ("pfifo", "fq"):
            in_ns(s, ["tc", "qdisc", "replace", "dev", "s0", "root", qdisc] +
                  (["limit", "10000"] if qdisc == "pfifo" else []))
        elif qdisc == "bpf-fifo":
            in_ns(s, ["tc", "qdisc", "replace", "dev", "s0", "root", "afcd"])
        else:
            loader = nslib.start_loader(s, "s0", "--backend", "qdisc", "rate", PACE,
                                        "algo", qdisc)
        srv = subprocess.Popen(ns_cmd(d, ["iperf3", "-s", "-1", "-J"]),
                               stdout=subprocess.PIPE, text=True)
        time.sleep(0.5)
        names = ("afcd_qdisc_enqueue", "afcd_qdisc_dequeue")
        c0 = bpf_cost(s, names) if qdisc not in ("pfifo", "fq") else None
        p0, b0 = root_qdisc(s, "s0").get("packets", 0), cpu_busy_s()
        in_ns(s, ["iperf3", "-c", "198.18.1.2", "-t", str(SECONDS), "-C", "cubic"],
              timeout=SECONDS + 60)
        b1, p1 = cpu_busy_s(), root_qdisc(s, "s0").get("packets", 0)
        c1 = bpf_cost(s, names) if qdisc not in ("pfifo", "fq") else None
        r = json.loads(srv.communicate(timeout=30)[0])
        pkts = max(p1 - p0, 1)
        res = {"qdisc": qdisc, "goodput_mbps": r["end"]["sum_received"]["bits_per_second"] / 1e6,
               "packets": pkts, "cpu_ns_per_pkt": (b1 - b0) * 1e9 / pkts}
        if c0 and c1:
            res["bpf_ns_per_pkt"] = (c1["run_time_ns"] - c0["run_time_ns"]) / pkts
        return res
    finally:
        if loader is not None:
            nslib.stop(loader)
        nss.close()


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    nslib.ensure_bpffs()
    subprocess.run(["sysctl", "-qw", "kernel.bpf_stats_enabled=1"], check=False)
    # the kind registered for the whole run by a loader on an idle pair
    # (bpf-fifo uses it without a config). Its device takes an ifindex of
    # its own: the loader keeps one config per ifindex across the
    # namespaces that share the pins, and would refuse s0's (ifindex 2 in
    # its namespace, as a0's would be in its own).
    reg = nslib.Namespaces("qbr")
    keep = nslib.Namespaces("qb")
    runs = []
    try:
        a, b = reg.add("a"), reg.add("b")
        reg.link(a, "a0", b, "b0", ["198.18.2.1/24"], ["198.18.2.2/24"], a_index=90)
        holder = nslib.start_loader(a, "a0", "--backend", "qdisc", "rate", "1mbit")
        try:
            for rep in range(REPEATS):
                for i, q in enumerate(QDISCS):
                    runs.append(dict(one(keep, q, rep * 10 + i), repeat=rep))
                    print("  %-8s repeat %d: %7.1f Mbit/s, %6.0f ns CPU per packet%s" % (
                        q, rep + 1, runs[-1]["goodput_mbps"], runs[-1]["cpu_ns_per_pkt"],
                        ", BPF %.0f ns" % runs[-1]["bpf_ns_per_pkt"]
                        if runs[-1].get("bpf_ns_per_pkt") is not None else ""), flush=True)
        finally:
            nslib.stop(holder)
    finally:
        keep.close()
        reg.close()
    table = []
    for q in QDISCS:
        rs = [r for r in runs if r["qdisc"] == q]
        table.append({"qdisc": q, "goodput_mbps": mean([r["goodput_mbps"] for r in rs]),
                      "cpu_ns_per_pkt": mean([r["cpu_ns_per_pkt"] for r in rs]),
                      "bpf_ns_per_pkt": mean([r.get("bpf_ns_per_pkt") for r in rs])})
    base = table[0]
    print("\nqdisc     goodput Mbit/s  x pfifo   CPU ns/pkt  x pfifo   BPF ns/pkt")
    for t in table:
        t["goodput_x_pfifo"] = t["goodput_mbps"] / base["goodput_mbps"]
        t["cpu_x_pfifo"] = t["cpu_ns_per_pkt"] / base["cpu_ns_per_pkt"]
        print("%-9s %14.1f %8.2f %12.0f %8.2f %12s" % (
            t["qdisc"], t["goodput_mbps"], t["goodput_x_pfifo"], t["cpu_ns_per_pkt"],
            t["cpu_x_pfifo"], "%.0f" % t["bpf_ns_per_pkt"] if t["bpf_ns_per_pkt"] else "-"))
    res = {"kernel": os.uname().release, "seconds": SECONDS, "repeats": REPEATS,
           "pace": PACE, "runs": runs, "table": table}
    with open(os.path.join(out, "qdisc_bench.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
