# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The scheme under test at the bottleneck (the router's egress).

This project's programs, every algo, over sch_fq (EDT, drained at the
rate by the virtual queue), or the kernel's AQMs under HTB shaping at the
same rate. Buffers are given as a fraction of the BDP (rate x base RTT):
a time horizon for ours, a packet or byte limit for the kernel's.
"""
import json
import subprocess
import time

from . import netns as nslib
from .netns import in_ns

OURS = ["droptail", "codel", "afd", "afcd", "fall"]
KERNEL = ["pfifo", "kcodel", "fq_codel", "pie", "red", "sfb"]
LABELS = {"droptail": "EDT drop-tail", "codel": "EDT CoDel", "afd": "AFD", "afcd": "AFCD",
          "fall": "FaLL", "pfifo": "drop-tail", "kcodel": "CoDel", "fq_codel": "fq_codel",
          "pie": "PIE", "red": "RED", "sfb": "SFB"}
MTU = 1514


class Bottleneck:
    """Install a scheme on dev in namespace ns; stats(); remove()."""

    def __init__(self, ns, dev, scheme, rate_mbit, rtt_ms, buffer_bdp=1.0, target_ms=5.0,
                 interval_ms=100.0, ecn=False, extra=(), log=None):
        if scheme not in OURS + KERNEL:
            raise ValueError("unknown scheme %r (ours: %s; kernel: %s)" %
                             (scheme, ", ".join(OURS), ", ".join(KERNEL)))
        self.ns, self.dev, self.scheme = ns, dev, scheme
        self.rate_mbit, self.rtt_ms = rate_mbit, rtt_ms
        self.buffer_bdp = buffer_bdp
        self.target_ms, self.interval_ms, self.ecn = target_ms, interval_ms, ecn
        self.extra = list(extra)
        self.loader = None
        self.log = log

    @property
    def bdp_bytes(self):
        return self.rate_mbit * 1e6 / 8 * self.rtt_ms / 1e3

    def install(self):
        if self.scheme in OURS:
            horizon_ms = max(self.buffer_bdp * self.rtt_ms, self.target_ms)
            params = ["rate", "%gmbit" % self.rate_mbit, "algo", self.scheme,
                      "horizon", "%gms" % horizon_ms, "target", "%gms" % self.target_ms,
                      "interval", "%gms" % self.interval_ms, "rtt", "%gms" % self.rtt_ms,
                      "ecn", "on" if self.ecn else "off", "update_period", "10ms"]
            self.loader = nslib.start_loader(self.ns, self.dev, *(params + self.extra),
                                             "--install-fq", log=self.log)
            return self
        rate = "%gmbit" % self.rate_mbit
        # HTB's bucket holds 3 ms at the rate: shaping timers fire up to a few
        # ms late in a TCG VM, and a one-MTU burst then leaves the link idle
        burst = "%d" % max(int(self.rate_mbit * 1e6 / 8 * 0.003), 2 * MTU)
        in_ns(self.ns, ["tc", "qdisc", "replace", "dev", self.dev, "root", "handle", "1:",
                        "htb", "default", "1"])
        in_ns(self.ns, ["tc", "class", "add", "dev", self.dev, "parent", "1:", "classid",
                        "1:1", "htb", "rate", rate, "ceil", rate, "burst", burst,
                        "cburst", burst])
        # every scheme gets the same buffer: buffer_bdp x BDP (Table 3.1: 100 %)
        limit_pkts = max(int(self.buffer_bdp * self.bdp_bytes / MTU), 4)
        ecn = ["ecn"] if self.ecn else []
        leaf = {
            "pfifo": ["pfifo", "limit", str(limit_pkts)],
            "kcodel": ["codel", "limit", str(limit_pkts), "target", "%gms" % self.target_ms,
                       "interval", "%gms" % self.interval_ms] + ecn,
            "fq_codel": ["fq_codel", "limit", str(limit_pkts), "target",
                         "%gms" % self.target_ms, "interval", "%gms" % self.interval_ms] +
                        (["ecn"] if self.ecn else ["noecn"]),
            "pie": ["pie", "limit", str(limit_pkts), "target", "%gms" % self.target_ms] + ecn,
            "red": ["red", "limit", str(int(4 * max(self.bdp_bytes, 30000))),
                    "min", str(int(0.2 * max(self.bdp_bytes, 30000))),
                    "max", str(int(0.8 * max(self.bdp_bytes, 30000))), "avpkt", "1000",
                    "burst", str(int(0.2 * max(self.bdp_bytes, 30000) / 1000) + 1),
                    "probability", "0.02", "bandwidth", rate] + ecn,
            "sfb": ["sfb", "limit", str(max(limit_pkts, 100))],
        }[self.scheme]
        in_ns(self.ns, ["tc", "qdisc", "add", "dev", self.dev, "parent", "1:1", "handle",
                        "10:"] + leaf)
        return self

    def afcd_stats(self, flows=True):
        if self.scheme not in OURS:
            return None
        r = nslib.afcd(self.ns, "stats", self.dev, "-j", "--dt", "0",
                       *(["--flows"] if flows else []), check=False)
        return json.loads(r.stdout) if r.returncode == 0 else None

    def qdisc_stats(self):
        r = in_ns(self.ns, ["tc", "-s", "-j", "qdisc", "show", "dev", self.dev], check=False)
        try:
            return json.loads(r.stdout)
        except ValueError:
            return []

    def remove(self):
        if self.loader is not None:
            nslib.stop(self.loader)
            self.loader = None
        in_ns(self.ns, ["tc", "qdisc", "del", "dev", self.dev, "root"], check=False)
