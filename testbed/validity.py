# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Is a run a measurement of the scheme, or of the machine?

Under TCG the emulator's speed differs a lot between machines of the same
kind: on a slow one the guest is saturated, an iperf3 UDP sender reaches a
fraction of its rate and timers fire late, and every figure measures the
emulator. Each run therefore records

  cpu.guest_busy   share of all CPUs busy during the traffic (/proc/stat), 0..1
  cpu.loader_busy  CPU time of the afcd loader per second of the run, as a
                   fraction of one CPU (ours only; the kernel AQMs have none)
  timer_late_ms    how late a 5 ms sleep wakes up in the runner (p50, p95, max):
                   the lateness shapers and sch_fq timers see too

and is invalid, with the reasons listed, when
  - the guest was saturated: guest_busy > BUSY_MAX;
  - a sender with a configured rate (UDP) sent less than (1 - SENDER_MISS)
    of it;
  - timers ran late: median lateness > TIMER_LATE_P50_MS (twice the 0.2-3 ms
    a TCG guest shows when it keeps up; the HTB bucket of the kernel schemes
    holds 3 ms, bottleneck.py), or p95 > TIMER_LATE_P95_MS. The probe is a
    Python thread that competes with the iperf3 processes for the vCPUs,
    so its tail overstates what the kernel's hrtimers see: measured on a
    guest 55-70 % busy, p50 0.5-0.7 ms, p95 4-5 ms, max 60-90 ms (TCG stalls).
"""
import os
import threading
import time

from .stats import percentile

BUSY_MAX = 0.85
SENDER_MISS = 0.10
TIMER_LATE_P50_MS = 1.5
TIMER_LATE_P95_MS = 10.0
PROBE_SLEEP_S = 0.005


def _cpu_times():
    """(busy, total) jiffies over all CPUs from /proc/stat."""
    with open("/proc/stat") as fh:
        f = [int(x) for x in fh.readline().split()[1:]]
    idle = f[3] + (f[4] if len(f) > 4 else 0)      # idle + iowait
    total = sum(f[:8])                              # guest time is inside user
    return total - idle, total


def _proc_seconds(pid):
    """utime + stime of a process, seconds, or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as fh:
            f = fh.read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


class Meter:
    """Measure guest CPU, the loader's CPU and timer lateness between
    start() and stop(); stop() returns the measurement dict."""

    def __init__(self, loader_pid=None):
        self.loader_pid = loader_pid
        self.late = []
        self._stop = threading.Event()
        self._th = threading.Thread(target=self._probe, daemon=True)

    def _probe(self):
        while not self._stop.is_set():
            t0 = time.monotonic()
            time.sleep(PROBE_SLEEP_S)
            self.late.append((time.monotonic() - t0 - PROBE_SLEEP_S) * 1e3)

    def start(self):
        self.t0 = time.monotonic()
        self.cpu0 = _cpu_times()
        self.loader0 = _proc_seconds(self.loader_pid) if self.loader_pid else None
        self._th.start()
        return self

    def stop(self):
        self._stop.set()
        self._th.join(timeout=2)
        wall = time.monotonic() - self.t0
        busy1, total1 = _cpu_times()
        busy = (busy1 - self.cpu0[0]) / max(total1 - self.cpu0[1], 1)
        loader = None
        if self.loader0 is not None:
            l1 = _proc_seconds(self.loader_pid)
            loader = (l1 - self.loader0) / wall if l1 is not None and wall > 0 else None
        return {"cpu": {"guest_busy": round(busy, 3),
                        "loader_busy": round(loader, 4) if loader is not None else None},
                "timer_late_ms": {"p50": percentile(self.late, 50),
                                  "p95": percentile(self.late, 95),
                                  "max": max(self.late) if self.late else None,
                                  "samples": len(self.late)}}


def judge(res):
    """(valid, reasons) for a run result with cpu, timer_late_ms and flows."""
    reasons = []
    busy = res.get("cpu", {}).get("guest_busy")
    if busy is not None and busy > BUSY_MAX:
        reasons.append("guest CPU saturated (%.0f %% busy > %.0f %%)" %
                       (100 * busy, 100 * BUSY_MAX))
    for f in res.get("flows", []):
        want = f.get("configured_mbps")
        sent = (f.get("client") or {}).get("sent_mbps")
        if want and (sent is None or sent < (1 - SENDER_MISS) * want):
            err = (f.get("client") or {}).get("error")
            reasons.append("sender %s sent %s of its %.1f Mbit/s%s" %
                           (f["name"], "%.1f" % sent if sent is not None else "nothing", want,
                            " (iperf3: %s)" % err if err and sent is None else ""))
    late = res.get("timer_late_ms", {})
    if (late.get("p50") or 0) > TIMER_LATE_P50_MS or (late.get("p95") or 0) > TIMER_LATE_P95_MS:
        reasons.append("timers late (p50 %.1f ms, p95 %.1f ms; limits %.1f, %.1f)" %
                       (late["p50"], late["p95"], TIMER_LATE_P50_MS, TIMER_LATE_P95_MS))
    return not reasons, reasons


def sender_failed(res):
    """A sender with a configured rate reported nothing at all (its client
    failed to start or to report): a glitch of the run, not a verdict on
    the machine's speed, and worth one retry."""
    return any(f.get("configured_mbps") and (f.get("client") or {}).get("sent_mbps") is None
               for f in res.get("flows", []))
