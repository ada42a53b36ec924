# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The qdisc backend's cost against its anchors: CUBIC flows (1, then
1,000) through a veth whose root qdisc is, in turn, the kernel's pfifo,
fq, fq_codel and cake; the kernel's own BPF FQ qdisc (bpf_fq, the
selftest bpf_qdisc_fq.c of the booted kernel's release, built by
tools/bpf-fq.sh: sch_fq's scheduling in BPF); the BPF qdisc afcd without
a config (a plain FIFO in BPF: what any BPF qdisc pays for its list and
its kfuncs); and afcd and fall configured by the loader (paced at 10
Gbit/s, far above what the veth carries, so that the senders, not the
pacing, are the limit). Per qdisc and flow count: goodput and Jain's
index over the flows (their receivers' own rates), CPU time per packet
(the whole machine's, from /proc/stat: the senders are CPU-bound, so both
move together) and, for the BPF qdiscs, their programs' own run time per
packet (enqueue plus dequeue, kernel.bpf_stats_enabled), both over a
window of the transfer that starts once every stream is up (so that a
thousand handshakes are not counted as the qdisc's). A run is valid when
every stream was measured and the window lay within the transfer; the
table averages the valid runs and says how many there were. Ratios
against pfifo in the same run; the qdiscs alternate within each repeat so
that drift hits them alike. The senders share one machine's CPUs, so
Jain's index here says what the qdisc did not spoil, not what it
enforced (no bottleneck below the senders' own rate).

Needs a kernel with BPF qdiscs: `afcd-testbed script testbed/qdisc_bench.py
--kernel 6.18 --out DIR` (make bench-qdisc, which builds bpf_fq first;
without build/bpf_qdisc_fq.bpf.o its rows say why they are missing).
Writes DIR/qdisc_bench.json and prints a table.
"""
import json
import os
import subprocess
import sys
import time

from testbed import netns as nslib
from testbed.netns import in_ns, ns_cmd, root_qdisc
from testbed.scenario import bpf_cost
from testbed.workload import established_by_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BPF_FQ_OBJ = os.path.join(ROOT, "build", "bpf_qdisc_fq.bpf.o")
KERNEL_QDISCS = {"pfifo": ["pfifo", "limit", "10000"], "fq": ["fq"],
                 "fq_codel": ["fq_codel"], "cake": ["cake", "unlimited"],
                 "bpf-fq": ["bpf_fq"], "bpf-fifo": ["afcd"]}
QDISCS = ["pfifo", "fq", "fq_codel", "cake", "bpf-fq", "bpf-fifo", "afcd", "fall"]
# the programs whose run time is the BPF qdisc's (enqueue, then dequeue)
BPF_PROGS = {"bpf-fq": ("bpf_fq_enqueue", "bpf_fq_dequeue"),
             "bpf-fifo": ("afcd_qdisc_enqueue", "afcd_qdisc_dequeue"),
             "afcd": ("afcd_qdisc_enqueue", "afcd_qdisc_dequeue"),
             "fall": ("afcd_qdisc_enqueue", "afcd_qdisc_dequeue")}
FLOWS = (1, 1000)
STREAMS_MAX = 125          # streams of one iperf3 client (iperf3 allows 128)
SECONDS = 12               # each client's transfer, from its last stream's start
WINDOW = 6                 # the measured window, once every stream is up
SETUP_MAX = 60             # the longest wait for every stream to be up
REPEATS = 3
PACE = "10gbit"


def cpu_busy_s():
    """The machine's busy CPU time so far, seconds (/proc/stat)."""
    with open("/proc/stat") as fh:
        f = [int(x) for x in fh.readline().split()[1:]]
    hz = os.sysconf("SC_CLK_TCK")
    return (sum(f[:8]) - f[3] - f[4]) / hz      # all but idle and iowait


def jain(xs):
    """Jain's fairness index of the rates xs (1: equal; None: no rates)."""
    xs = [x for x in xs if x is not None]
    if not xs or not sum(xs):
        return None
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def install(s, qdisc):
    """Give s0 in namespace s its root qdisc: the kernel's (tc) or the
    loader's. The loader's process, or None."""
    if qdisc in KERNEL_QDISCS:
        in_ns(s, ["tc", "qdisc", "replace", "dev", "s0", "root"] + KERNEL_QDISCS[qdisc])
        return None
    return nslib.start_loader(s, "s0", "--backend", "qdisc", "rate", PACE, "algo", qdisc)


def traffic(s, d, flows, probe):
    """flows CUBIC streams from s to d for SECONDS, in clients of at most
    STREAMS_MAX streams, each to a server of its own, measured by probe()
    (a dict of counters) over WINDOW seconds once every stream is up: the
    rate of every stream as its receiver measured it (bits/s), probe's
    values at the window's start and end, and whether the window lay
    within the transfer (every stream up before it, every client still
    sending after it)."""
    counts = [STREAMS_MAX] * (flows // STREAMS_MAX) + ([flows % STREAMS_MAX]
                                                       if flows % STREAMS_MAX else [])
    ports = [5201 + i for i in range(len(counts))]
    srvs = [subprocess.Popen(ns_cmd(d, ["iperf3", "-s", "-1", "-J", "-p", str(p)]),
                             stdout=subprocess.PIPE, text=True) for p in ports]
    time.sleep(0.5 + 0.1 * len(ports))
    clis = [subprocess.Popen(ns_cmd(s, ["iperf3", "-c", "198.18.1.2", "-p", str(p), "-P",
                                        str(n), "-t", str(SECONDS), "-C", "cubic"]),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for p, n in zip(ports, counts)]
    # the streams and each client's control connection, at the servers
    deadline, up = time.time() + SETUP_MAX, False
    while time.time() < deadline and not up:
        up = sum(established_by_port(d, ports).values()) >= flows + len(clis)
        time.sleep(0.2)
    m0 = probe()
    time.sleep(WINDOW)
    m1 = probe()
    within = up and all(c.poll() is None for c in clis)
    for c in clis:
        try:
            c.wait(timeout=SECONDS + SETUP_MAX + 60)
        except subprocess.TimeoutExpired:
            c.kill()
    rates = []
    for srv in srvs:
        try:
            r = json.loads(srv.communicate(timeout=60)[0])
        except (ValueError, subprocess.TimeoutExpired):
            srv.kill()
            continue
        rates += [st["receiver"]["bits_per_second"] for st in r.get("end", {}).get("streams", [])
                  if "receiver" in st]
    return rates, m0, m1, within


def one(nss, qdisc, flows, idx):
    """flows streams through a fresh veth pair under qdisc: its figures.
    Valid when every stream was measured and the window lay within the
    transfer."""
    s, d = nss.add("s%d" % idx), nss.add("d%d" % idx)
    nss.link(s, "s0", d, "d0", ["198.18.1.1/24"], ["198.18.1.2/24"])
    loader = None
    names = BPF_PROGS.get(qdisc)

    def probe():
        c = bpf_cost(s, names) if names else None
        return {"packets": root_qdisc(s, "s0").get("packets", 0), "cpu_s": cpu_busy_s(),
                "bpf_ns": c["run_time_ns"] if c else None}
    try:
        loader = install(s, qdisc)
        rates, m0, m1, within = traffic(s, d, flows, probe)
        pkts = max(m1["packets"] - m0["packets"], 1)
        res = {"qdisc": qdisc, "flows": flows, "streams_measured": len(rates),
               "window_within_transfer": within,
               "valid": within and len(rates) == flows,
               "goodput_mbps": sum(rates) / 1e6, "jain": jain(rates), "packets": pkts,
               "cpu_ns_per_pkt": (m1["cpu_s"] - m0["cpu_s"]) * 1e9 / pkts}
        if m0["bpf_ns"] is not None and m1["bpf_ns"] is not None:
            res["bpf_ns_per_pkt"] = (m1["bpf_ns"] - m0["bpf_ns"]) / pkts
        return res
    finally:
        if loader is not None:
            nslib.stop(loader)
        nss.close()


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def register_bpf_fq():
    """Register the kernel's bpf_fq for the run (bpftool struct_ops): None,
    or why it cannot be had."""
    if not os.path.exists(BPF_FQ_OBJ):
        return "%s not built (tools/bpf-fq.sh)" % BPF_FQ_OBJ
    r = subprocess.run(["bpftool", "struct_ops", "register", BPF_FQ_OBJ], capture_output=True,
                       text=True)
    return None if r.returncode == 0 else "bpftool struct_ops register: %s" % (
        r.stderr.strip().splitlines() or ["failed"])[-1]


def unregister_bpf_fq():
    subprocess.run(["bpftool", "struct_ops", "unregister", "name", "fq"], capture_output=True)


def save(out, runs, missing, table=None):
    """DIR/qdisc_bench.json: the runs so far (after each run, so that an
    interrupted benchmark keeps them), then the table."""
    res = {"kernel": os.uname().release, "seconds": SECONDS, "window_s": WINDOW,
           "repeats": REPEATS, "pace": PACE, "flows": list(FLOWS), "runs": runs,
           "table": table, "not_run": missing, "complete": table is not None}
    with open(os.path.join(out, "qdisc_bench.json"), "w") as fh:
        json.dump(res, fh, indent=1)


def report(r):
    """One line for run r."""
    head = "  %-8s %5d flows, repeat %d: " % (r["qdisc"], r["flows"], r["repeat"] + 1)
    if "error" in r:
        print(head + "FAILED: %s" % r["error"], flush=True)
        return
    print(head + "%s%7.1f Mbit/s, Jain %s, %6.0f ns CPU per packet%s" % (
        "" if r["valid"] else "INVALID (%d streams measured%s) " % (
            r["streams_measured"], "" if r["window_within_transfer"]
            else ", window outside the transfer"),
        r["goodput_mbps"], "%.3f" % r["jain"] if r["jain"] is not None else "-",
        r["cpu_ns_per_pkt"], ", BPF %.0f ns" % r["bpf_ns_per_pkt"]
        if r.get("bpf_ns_per_pkt") is not None else ""), flush=True)


def run_all(keep, missing, out):
    """Every qdisc that can be had at each flow count, REPEATS times."""
    runs = []
    for flows in FLOWS:
        for rep in range(REPEATS):
            for i, q in enumerate(QDISCS):
                if q in missing:
                    continue
                try:
                    r = dict(one(keep, q, flows, rep * 10 + i), repeat=rep)
                except (RuntimeError, OSError, subprocess.SubprocessError) as e:
                    # a run that fails counts as one, and the others go on
                    r = {"qdisc": q, "flows": flows, "repeat": rep, "valid": False,
                         "error": str(e)}
                runs.append(r)
                save(out, runs, missing)
                report(r)
    return runs


def ratio(x):
    return "%.2f" % x if x is not None else "-"


def tabulate(runs, missing):
    """The mean of each qdisc's repeats at each flow count, against pfifo's."""
    table = []
    for flows in FLOWS:
        base = None
        print("\n%d flow%s\nqdisc     valid  goodput Mbit/s  x pfifo   Jain   CPU ns/pkt  x pfifo"
              "   BPF ns/pkt" % (flows, "" if flows == 1 else "s"))
        for q in QDISCS:
            if q in missing:
                print("%-9s not run: %s" % (q, missing[q]))
                continue
            every = [r for r in runs if r["qdisc"] == q and r["flows"] == flows]
            rs = [r for r in every if r["valid"]]
            t = {"qdisc": q, "flows": flows, "runs": len(every), "valid": len(rs)}
            if not rs:
                print("%-9s no valid run of %d" % (q, len(every)))
                continue
            for k in ("goodput_mbps", "jain", "cpu_ns_per_pkt", "bpf_ns_per_pkt"):
                t[k] = mean([r.get(k) for r in rs])
            if q == "pfifo":
                base = t
            t["goodput_x_pfifo"] = t["goodput_mbps"] / base["goodput_mbps"] if base else None
            t["cpu_x_pfifo"] = t["cpu_ns_per_pkt"] / base["cpu_ns_per_pkt"] if base else None
            table.append(t)
            print("%-9s %2d/%-2d %14.1f %8s %6s %12.0f %8s %12s" % (
                q, t["valid"], t["runs"], t["goodput_mbps"], ratio(t["goodput_x_pfifo"]),
                "%.3f" % t["jain"] if t["jain"] is not None else "-", t["cpu_ns_per_pkt"],
                ratio(t["cpu_x_pfifo"]), "%.0f" % t["bpf_ns_per_pkt"] if t["bpf_ns_per_pkt"] else "-"))
    return table


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    nslib.ensure_bpffs()
    subprocess.run(["sysctl", "-qw", "kernel.bpf_stats_enabled=1"], check=False)
    missing = {}
    why = register_bpf_fq()
    if why:
        missing["bpf-fq"] = why
        print("  bpf-fq not run: %s" % why, flush=True)
    # the kind registered for the whole run by a loader on an idle pair
    # (bpf-fifo uses it without a config). Its device takes an ifindex of
    # its own: the loader keeps one config per ifindex across the
    # namespaces that share the pins, and would refuse s0's (ifindex 2 in
    # its namespace, as a0's would be in its own).
    reg = nslib.Namespaces("qbr")
    keep = nslib.Namespaces("qb")
    try:
        a, b = reg.add("a"), reg.add("b")
        reg.link(a, "a0", b, "b0", ["198.18.2.1/24"], ["198.18.2.2/24"], a_index=90)
        holder = nslib.start_loader(a, "a0", "--backend", "qdisc", "rate", "1mbit")
        try:
            runs = run_all(keep, missing, out)
        finally:
            nslib.stop(holder)
    finally:
        keep.close()
        reg.close()
        if "bpf-fq" not in missing:
            unregister_bpf_fq()
    save(out, runs, missing, tabulate(runs, missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
