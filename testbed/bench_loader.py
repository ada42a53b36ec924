# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""CPU cost of refreshing the fair-share estimates (the second half of
`make bench`).

  python3 -m testbed.bench_loader [--flows N] [--period 1ms] [--seconds S] [--refresh kernel,user]

Attaches the loader to a veth in a scratch namespace (without sch_fq:
only the control plane is measured), creates N flows with real UDP
packets (one per destination port), then measures over S seconds, for
each refresh mode:

  loader     CPU time of the loader process (/proc/PID/schedstat, the
             scheduler's exact run time; utime+stime are sampled at the tick
             and over-charge a task that wakes in step with it): the ring
             scan every 50 ms, GC every second, and in user mode the
             refresh step and its three map syscalls every period;
  step       time inside the kernel refresh step (kernel mode: the BPF
             timer callback times itself, afcd_est.busy_ns);
  machine    busy time of all CPUs (/proc/stat) during the run minus the
             same length of time just before the loader started: includes
             timer interrupts and wake-ups nobody is billed for, and the
             noise of whatever else runs on the machine (tick-sampled: a
             rough cross-check only).

Prints each as % of one core.
"""
import argparse
import os
import sys
import time

from . import netns as nslib

HZ = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    """Time the task has run on a CPU, seconds (all threads: one here)."""
    with open("/proc/%d/schedstat" % pid) as fh:
        return int(fh.read().split()[0]) / 1e9


def machine_busy_s():
    """Non-idle time of all CPUs, seconds (user..softirq, steal excluded)."""
    with open("/proc/stat") as fh:
        f = [int(x) for x in fh.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...
    return (f[0] + f[1] + f[2] + f[5] + f[6]) / HZ


def measure(x, a, mode):
    t0 = time.time()
    m0 = machine_busy_s()
    time.sleep(a.seconds)
    base = (machine_busy_s() - m0) / (time.time() - t0)
    p = nslib.start_loader(x, "v0", "rate", "10gbit", "update_period", a.period,
                           "--skip-fq-check", "--quiet", "--gc-idle", "3600s",
                           "--refresh", mode)
    try:
        time.sleep(1.0)
        s0 = nslib.afcd_stats(x, "v0", flows=False, dt=0)
        c0, m0, t0 = cpu_s(p.pid), machine_busy_s(), time.time()
        time.sleep(a.seconds)
        c1, m1, t1 = cpu_s(p.pid), machine_busy_s(), time.time()
        s1 = nslib.afcd_stats(x, "v0", flows=False, dt=0)
    finally:
        nslib.stop(p)
    wall = t1 - t0
    e0, e1 = s0["estimates"], s1["estimates"]
    refreshes = e1["refreshes"] - e0["refreshes"]
    step = (e1["refresh_busy_ns"] - e0["refresh_busy_ns"]) / 1e9
    machine = (m1 - m0) / wall - base
    print("%-6s period %s, %d live flows, %d refreshes in %.1f s (by %s): loader %.3f %%, "
          "step %.3f %% (%.2f us each), machine %+.2f %% of one core"
          % (mode, a.period, s1["queue"]["flows_live"], refreshes, wall, e1["refresher"],
             100 * (c1 - c0) / wall, 100 * step / wall,
             1e6 * step / refreshes if refreshes and step else 0.0, 100 * machine))


def main():
    ap = argparse.ArgumentParser(prog="python3 -m testbed.bench_loader")
    ap.add_argument("--flows", type=int, default=10000)
    ap.add_argument("--period", default="1ms")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--refresh", default="kernel,user",
                    help="modes to measure, comma-separated (kernel, user)")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("testbed.bench_loader: needs root")
    nslib.ensure_bpffs()
    nss = nslib.Namespaces("lb")
    try:
        x, y = nss.add("x"), nss.add("y")
        nss.link(x, "v0", y, "v1", ["198.18.0.1/24"], ["198.18.0.2/24"])
        for mode in a.refresh.split(","):
            # the loader cleans up on exit: create the flows for each run
            p = nslib.start_loader(x, "v0", "rate", "10gbit", "--skip-fq-check", "--quiet",
                                   "--keep")
            code = ("import socket\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
                    "for port in range(20000,20000+%d): s.sendto(b'x'*64,('198.18.0.2',port))\n"
                    % a.flows)
            nslib.in_ns(x, ["/usr/bin/python3", "-c", code])
            nslib.stop(p)
            measure(x, a, mode)
    finally:
        nss.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
