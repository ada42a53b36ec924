# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The scheme under test at the bottleneck (the router's egress).

This project's programs, every algo and the variants below, over sch_fq
(EDT, drained at the rate by the virtual queue), or the kernel's queue
disciplines under HTB shaping at the same rate (cake shapes itself).
Buffers are given as a fraction of the BDP (rate x base RTT): a time
horizon for ours, a packet or byte limit for the kernel's.

Variants of ours (the loader's algo and parameters):
  afcd-paper, fall-paper  the dissertation's algorithms as its text gives
                          them: the drop law alone on each flow's own
                          CoDel state, no fair-rate policer (`police off
                          codel_state per-flow`; docs/ALGORITHM.md sec. 3a)
  afcd-ref                the authors' Linux 3.6 code: no policer, one
                          CoDel dropping state for the queue, exponent 4
  dctcp                   DCTCP's switch (Alizadeh et al., SIGCOMM 2010;
                          Table 4.1): EDT drop-tail marking CE on every ECT
                          packet queued behind more than K = 20 frames
                          (`ce_threshold` = 20 tx(MTU)); its senders run
                          DCTCP (SENDER_CC)
  dctcp-k                 the same marking by the kernel (CoDel's
                          ce_threshold under HTB, CoDel itself held off),
                          to check ours against
  afcd-g, fall-g          afcd and fall with one CoDel dropping state for
                          the queue (`codel_state global`; each flow's
                          target_i still decides which flows may be
                          dropped): the schedule of the authors' code with
                          the project's policer and exponent
  afcd-q, fall-q          afcd and fall with one CoDel state for the queue
                          driven by the queue's own sojourn against the
                          target (`codel_state queue`, their default): one
                          CoDel's drop schedule, each drop taken by a flow
                          above its target_i
  afcd-pf, fall-pf        afcd and fall with a CoDel state per flow
                          (`codel_state per-flow`, their default up to ABI
                          12 and in the reproduction's runs of ABI 11-12)
  afcd-qdisc, fall-qdisc  afcd and fall as the BPF qdisc (`afcd attach
                          --backend qdisc`, paced at the rate; Linux >= 6.16
                          with CONFIG_NET_SCH_BPF: --kernel 6.18): the drop
                          law at dequeue on the measured sojourn
RED and SFB take Table 3.1's settings (and 4.1's: the same for RED):
thresholds at 0.2 and 0.8 of the buffer, max_p 0.02; SFB's target 1.5/N
of the buffer (N: the figure's long flows), max 1.2 x target,
increment/decrement 0.0005/0.00005.
"""
import json

from . import netns as nslib
from .netns import in_ns

# ours: scheme -> (the loader's algo, its extra parameters)
VARIANTS = {
    "droptail": ("droptail", []), "codel": ("codel", []), "afd": ("afd", []),
    "afcd": ("afcd", []), "fall": ("fall", []),
    "afcd-paper": ("afcd", ["police", "off", "high_drop", "off", "sb_grow", "off", "codel_state", "per-flow"]),
    "fall-paper": ("fall", ["police", "off", "high_drop", "off", "sb_grow", "off", "codel_state", "per-flow"]),
    "afcd-ref": ("afcd", ["police", "off", "high_drop", "off", "sb_grow", "off", "codel_state", "global",
                          "exponent", "4"]),
    "dctcp": ("droptail", ["ecn", "on"]),
    "afcd-g": ("afcd", ["codel_state", "global"]), "fall-g": ("fall", ["codel_state", "global"]),
    "afcd-q": ("afcd", ["codel_state", "queue"]), "fall-q": ("fall", ["codel_state", "queue"]),
    "afcd-pf": ("afcd", ["codel_state", "per-flow"]),
    "fall-pf": ("fall", ["codel_state", "per-flow"]),
    "afcd-qdisc": ("afcd", []), "fall-qdisc": ("fall", []),
}
# ours as the BPF qdisc rather than the EDT program over sch_fq
QDISC_BACKEND = {"afcd-qdisc", "fall-qdisc"}
OURS = list(VARIANTS)
KERNEL = ["pfifo", "kcodel", "fq_codel", "pie", "red", "sfb", "cake", "fq_pie", "dctcp-k"]
LABELS = {"droptail": "EDT drop-tail", "codel": "EDT CoDel", "afd": "AFD", "afcd": "AFCD",
          "fall": "FaLL", "afcd-paper": "AFCD (text)", "fall-paper": "FaLL (text)",
          "afcd-ref": "AFCD (ref. code)", "dctcp": "DCTCP", "pfifo": "drop-tail",
          "kcodel": "CoDel", "fq_codel": "fq_codel", "pie": "PIE", "red": "RED", "sfb": "SFB",
          "cake": "CAKE", "fq_pie": "fq_pie", "dctcp-k": "DCTCP (kernel marking)",
          "afcd-g": "AFCD (global state)", "fall-g": "FaLL (global state)",
          "afcd-q": "AFCD (queue state)", "fall-q": "FaLL (queue state)",
          "afcd-pf": "AFCD (per-flow states)", "fall-pf": "FaLL (per-flow states)",
          "afcd-qdisc": "AFCD (qdisc)", "fall-qdisc": "FaLL (qdisc)"}
# the congestion control a scheme's senders run instead of the figure's
SENDER_CC = {"dctcp": "dctcp", "dctcp-k": "dctcp"}
# kernel modules a scheme needs beyond the testbed's own (testbed.cli)
MODULES = {"cake": "sch_cake", "fq_pie": "sch_fq_pie"}
DCTCP_K_FRAMES = 20     # Table 4.1: K = 20 packets, instantaneous queue
MTU = 1514


class Bottleneck:
    """Install a scheme on dev in namespace ns; stats(); remove().
    n_flows: the workload's long flows (SFB's target); update_period_ms:
    the refresh period of ours (None: the loader's default for the algo);
    extra: more loader parameters."""

    def __init__(self, ns, dev, scheme, rate_mbit, rtt_ms, buffer_bdp=1.0, target_ms=5.0,
                 interval_ms=100.0, ecn=False, extra=(), log=None, n_flows=2,
                 update_period_ms=10.0, mtu=MTU):
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
        self.n_flows = max(int(n_flows), 1)
        self.update_period_ms = update_period_ms
        self.mtu = mtu              # the largest frame, bytes (the ns-3 engine: 9014)

    @property
    def bdp_bytes(self):
        return self.rate_mbit * 1e6 / 8 * self.rtt_ms / 1e3

    @property
    def buffer_bytes(self):
        return self.buffer_bdp * self.bdp_bytes

    @property
    def limit_pkts(self):
        """The kernel schemes' packet limit: the buffer in frames, at least 4."""
        return max(int(self.buffer_bytes / self.mtu), 4)

    @property
    def red_bytes(self):
        """RED's (limit, min, max) in bytes: Table 3.1 / 4.1's thresholds at
        0.2 and 0.8 of the buffer (at least 4 frames), max_p 0.02."""
        buf = int(max(self.buffer_bytes, 4 * self.mtu))
        return buf + 2 * self.mtu, int(0.2 * buf), int(0.8 * buf)

    def dctcp_k_ms(self):
        """DCTCP's marking threshold as a sojourn: K frames at the rate."""
        return DCTCP_K_FRAMES * self.mtu * 8 / (self.rate_mbit * 1e6) * 1e3

    def loader_params(self):
        """The loader's parameters for one of ours."""
        algo, extra = VARIANTS[self.scheme]
        # the loader refuses a horizon below the target: a buffer that
        # drains faster than the target (Table 4.1) gets the target as horizon
        horizon_ms = max(self.buffer_bdp * self.rtt_ms, self.target_ms)
        p = ["rate", "%gmbit" % self.rate_mbit, "algo", algo, "horizon", "%gms" % horizon_ms,
             "target", "%gms" % self.target_ms, "interval", "%gms" % self.interval_ms,
             "rtt", "%gms" % self.rtt_ms, "ecn", "on" if self.ecn else "off"]
        if self.update_period_ms is not None:
            p += ["update_period", "%gms" % self.update_period_ms]
        if self.mtu != MTU:
            p += ["mtu", "%d" % self.mtu]
        if self.scheme == "dctcp":
            p += ["ce_threshold", "%gms" % self.dctcp_k_ms()]
        return p + extra + self.extra

    def install(self):
        if self.scheme in OURS:
            backend = (["--backend", "qdisc"] if self.scheme in QDISC_BACKEND else
                       ["--install-fq"])
            self.loader = nslib.start_loader(self.ns, self.dev, *self.loader_params(),
                                             *backend, log=self.log)
            return self
        rate = "%gmbit" % self.rate_mbit
        limit_pkts = self.limit_pkts
        if self.scheme == "cake":       # shapes itself: no HTB
            in_ns(self.ns, ["tc", "qdisc", "replace", "dev", self.dev, "root", "handle", "1:",
                            "cake", "bandwidth", rate, "besteffort", "flows", "rtt",
                            "%gms" % self.rtt_ms, "memlimit", str(int(max(self.buffer_bytes,
                                                                          64 * MTU)))] +
                  (["wash"] if not self.ecn else []))
            return self
        # HTB's bucket is the loader's pacing credit at the rate (3 ms):
        # shaping timers fire up to a few ms late in a TCG VM, and a one-MTU
        # burst then leaves the link idle
        burst = "%d" % nslib.bucket_bytes(self.rate_mbit)
        in_ns(self.ns, ["tc", "qdisc", "replace", "dev", self.dev, "root", "handle", "1:",
                        "htb", "default", "1"])
        in_ns(self.ns, ["tc", "class", "add", "dev", self.dev, "parent", "1:", "classid",
                        "1:1", "htb", "rate", rate, "ceil", rate, "burst", burst,
                        "cburst", burst])
        ecn = ["ecn"] if self.ecn else []
        red_limit, red_min, red_max = self.red_bytes
        sfb_target = max(int(1.5 / self.n_flows * limit_pkts), 1)
        leaf = {
            # every scheme gets the same buffer: buffer_bdp x BDP (Table 3.1: 100 %)
            "pfifo": ["pfifo", "limit", str(limit_pkts)],
            "kcodel": ["codel", "limit", str(limit_pkts), "target", "%gms" % self.target_ms,
                       "interval", "%gms" % self.interval_ms] + ecn,
            "fq_codel": ["fq_codel", "limit", str(limit_pkts), "target",
                         "%gms" % self.target_ms, "interval", "%gms" % self.interval_ms] +
                        (["ecn"] if self.ecn else ["noecn"]),
            "pie": ["pie", "limit", str(limit_pkts), "target", "%gms" % self.target_ms] + ecn,
            "fq_pie": ["fq_pie", "limit", str(limit_pkts), "target",
                       "%gms" % self.target_ms] + ecn,
            # Table 3.1 / 4.1: thresholds 0.2 and 0.8 of the buffer, max_p 0.02;
            # avpkt one MTU (the table's 9000 is its jumbo frames)
            "red": ["red", "limit", str(red_limit), "min", str(red_min), "max",
                    str(red_max), "avpkt", str(MTU),
                    "burst", str(int((2 * red_min + red_max) / (3 * MTU)) + 1),
                    "probability", "0.02", "bandwidth", rate] + ecn,
            # Table 3.1: target 1.5/N of the buffer, max 1.2 target, increment
            # 0.0005, decrement 0.00005 (the kernel's 8 x 16 bins, two levels)
            "sfb": ["sfb", "limit", str(limit_pkts), "target", str(sfb_target), "max",
                    str(max(int(1.2 * sfb_target), sfb_target + 1)), "increment", "0.0005",
                    "decrement", "0.00005"],
            # DCTCP's marking: CoDel's ce_threshold at K frames, its own law
            # held off (a target no queue reaches within the buffer)
            "dctcp-k": ["codel", "limit", str(limit_pkts), "target", "%gms" % max(
                10 * self.buffer_bdp * self.rtt_ms, 1000), "interval", "%gms" % max(
                100 * self.buffer_bdp * self.rtt_ms, 10000), "ce_threshold",
                "%gms" % self.dctcp_k_ms(), "ecn"],
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
