# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The bottleneck's queue, sampled: one queueing-delay measure valid for
every scheme.

The root qdisc of the bottleneck device holds every queued packet whatever
the scheme: sch_fq under this project's programs (a packet waits there
until its departure time), HTB above the kernel's AQMs (its backlog counts
its leaves'), or a classless root (cake). Its backlog in bytes, read over
rtnetlink every PERIOD_MS by build/afcd-qsample (tools/afcd-qsample.c, one
native process for the run: under TCG a Python dump or a `tc` spawned ten
times a second kept a third to a half of a vCPU busy), gives the time a
packet arriving then waits: backlog * 8 / rate. Unlike ping RTT it is not
quantised at 1 ms at large RTTs (iputils prints 3 digits), and it is the
same queue for a scheduler like fq_codel, where a ping has a queue of its
own.
"""
import os
import subprocess

from . import netns as nslib

PERIOD_MS = 50          # 20 Hz
QSAMPLE = os.path.join(nslib.BUILD, "afcd-qsample")


class BacklogSampler:
    """Sample the root qdisc of dev in namespace ns for at most duration_s
    between start() and stop(); stop() returns [(t, backlog_bytes,
    qlen_packets)] with t in time.time() seconds, or [] when it could not
    run (self.error says why)."""

    def __init__(self, ns, dev, duration_s=3600.0, period_ms=PERIOD_MS):
        self.ns, self.dev = ns, dev
        self.duration_s, self.period_ms = duration_s, period_ms
        self.error = None
        self._p = None

    def start(self):
        try:
            self._p = subprocess.Popen(nslib.ns_cmd(self.ns, [
                QSAMPLE, self.dev, "%g" % self.period_ms, "%g" % self.duration_s]),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        except OSError as e:
            self.error = "afcd-qsample: %s" % e
        return self

    def stop(self):
        if self._p is None:
            return []
        if self._p.poll() is None:
            self._p.terminate()
        try:
            out, err = self._p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self._p.kill()
            out, err = self._p.communicate()
        self._p = None
        samples = []
        for line in out.splitlines():
            try:
                t, b, q = line.split()
                samples.append((int(t) / 1e9, int(b), int(q)))
            except ValueError:
                continue
        if not samples and err.strip():
            self.error = err.strip()
        return samples


def delays_ms(samples, rate_mbit, t_from):
    """The waiting time each sample taken at t >= t_from stands for, ms:
    backlog * 8 / rate."""
    return [b * 8 / (rate_mbit * 1e6) * 1e3 for t, b, _ in samples if t >= t_from]
