# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Topologies in network namespaces (dissertation sec. 3.4 and 4.5).

Every topology is N sender hosts -> (optional leaf switches) -> one router
-> one receiver. The bottleneck is the router's egress toward the
receiver ("rd0" in the router namespace), where the scheme under test is
installed. The base RTT is emulated with netem on the receiver's egress
(the ACK path), a hop other than the bottleneck, so the data path has no
netem queue in it.

  dumbbell: senders s1..sN directly on the router
  yshape:   two sender hosts (two router ports) whose flows meet at the
            router's single port toward the receiver (TCP outcast, 4.5.2)
  tree:     9 senders under 3 leaf switches under the router (4.5.3)

Addresses: sender i 198.18.i.1/24 (its gateway .254), receiver side
198.19.0.2/24 (router 198.19.0.1). Offloads (TSO/GSO/GRO) are off on
every veth so the bottleneck sees wire-size packets.

Per-scenario host settings (a figure's premise may need them):
  rto_min_ms       the senders' minimum RTO, on their default route
                   (`ip route ... rto_min`; Table 4.1's min_rto)
  sysctls          "key=value" settings on every sender
  access_rate_mbit the senders' uplinks (and the leaves' in the tree)
                   shaped to this rate with tbf, so that each input port
                   delivers at line rate as a switch port does (veths are
                   otherwise infinitely fast: TCP outcast needs ports)
"""

from . import netns as nslib
from .netns import in_ns

RECEIVER_ADDR = "198.19.0.2"
BOTTLENECK_DEV = "rd0"


def shape(ns, dev, rate_mbit):
    """tbf on dev at rate_mbit: the line rate of a switch port. The bucket
    is the loader's pacing credit at the rate (nslib.bucket_bytes()), the
    queue 20 ms."""
    burst = nslib.bucket_bytes(rate_mbit)
    in_ns(ns, ["tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate", "%gmbit" % rate_mbit,
               "burst", str(burst), "latency", "20ms"])


class Topology:
    def __init__(self, kind="dumbbell", senders=2, rtt_ms=20.0, prefix="tb", rto_min_ms=None,
                 sysctls=(), access_rate_mbit=None):
        if kind not in ("dumbbell", "yshape", "tree"):
            raise ValueError("unknown topology %r" % kind)
        if kind == "tree":
            senders = 9
        if kind == "yshape":
            senders = 2
        self.kind = kind
        self.n = senders
        self.rtt_ms = rtt_ms
        self.rto_min_ms, self.sysctls = rto_min_ms, list(sysctls)
        self.access_rate_mbit = access_rate_mbit
        self.nss = nslib.Namespaces(prefix)
        self.senders = []
        self.router = self.receiver = None

    def sender_addr(self, i):
        return "198.18.%d.1" % (i + 1)

    def build(self):
        nss = self.nss
        self.router = nss.add("r")
        self.receiver = nss.add("d")
        in_ns(self.router, ["sysctl", "-qw", "net.ipv4.ip_forward=1"])
        nss.link(self.router, BOTTLENECK_DEV, self.receiver, "d0",
                 ["198.19.0.1/24"], [RECEIVER_ADDR + "/24"])
        in_ns(self.receiver, ["ip", "route", "add", "default", "via", "198.19.0.1"])
        leaves = []
        if self.kind == "tree":
            for j in range(3):
                leaf = nss.add("l%d" % j)
                in_ns(leaf, ["sysctl", "-qw", "net.ipv4.ip_forward=1"])
                nss.link(self.router, "rl%d" % j, leaf, "up0",
                         ["198.18.%d.254/24" % (100 + j)], ["198.18.%d.1/24" % (100 + j)])
                in_ns(leaf, ["ip", "route", "add", "default", "via", "198.18.%d.254" % (100 + j)])
                leaves.append(leaf)
        for i in range(self.n):
            s = nss.add("s%d" % (i + 1))
            self.senders.append(s)
            gw_ns = self.router if not leaves else leaves[i // 3]
            dev = "rs%d" % (i + 1)
            nss.link(gw_ns, dev, s, "e0", ["198.18.%d.254/24" % (i + 1)],
                     [self.sender_addr(i) + "/24"])
            in_ns(s, ["ip", "route", "add", "default", "via", "198.18.%d.254" % (i + 1)])
            if leaves:
                in_ns(self.router, ["ip", "route", "add", "198.18.%d.0/24" % (i + 1), "via",
                                    "198.18.%d.1" % (100 + i // 3)])
        # TCP buffers for large BDPs (120 ms at 100 Mbit/s needs ~3 MB in
        # flight, twice that in truesize): the defaults cap at 4-6 MB
        for ns in self.senders + [self.receiver]:
            for k in ("tcp_rmem", "tcp_wmem"):
                in_ns(ns, ["sysctl", "-qw", "net.ipv4.%s=4096 131072 33554432" % k], check=False)
        for i, s in enumerate(self.senders):
            for kv in self.sysctls:
                in_ns(s, ["sysctl", "-qw", kv])
            if self.rto_min_ms:
                in_ns(s, ["ip", "route", "change", "default", "via", "198.18.%d.254" % (i + 1),
                          "dev", "e0", "rto_min", "%gms" % self.rto_min_ms])
            if self.access_rate_mbit:
                shape(s, "e0", self.access_rate_mbit)
        if self.access_rate_mbit:
            for leaf in leaves:
                shape(leaf, "up0", self.access_rate_mbit)
        # base RTT on the ACK path (receiver egress), never at the bottleneck
        in_ns(self.receiver, ["tc", "qdisc", "replace", "dev", "d0", "root", "netem",
                              "delay", "%gms" % self.rtt_ms, "limit", "100000"])
        return self

    def reset(self):
        """The state a run leaves in the hosts that a fresh build would not
        have, gone: a process still in a namespace (a sender or listener
        that outlived its run is killed) and the TCP metrics cache
        (ssthresh, RTT and cwnd remembered per destination would start the
        next run's flows from the last one's state). The bottleneck's qdisc
        and programs are the Bottleneck's to remove."""
        self.nss.kill_all()
        for ns in self.senders + [self.receiver]:
            in_ns(ns, ["ip", "tcp_metrics", "flush", "all"], check=False)
        return self

    def close(self):
        self.nss.close()

    def __enter__(self):
        return self.build()

    def __exit__(self, *a):
        self.close()


class Pool:
    """Topologies kept between runs. get() returns the topology of the
    previous run, reset(), when its arguments are the same (the demo runs
    every scheme of a workload on one topology), else closes it and builds
    a new one: a build is about 35 ip/tc/sysctl commands, 7.5 s under TCG.
    A run that failed discard()s its topology (its state is unknown)."""

    def __init__(self):
        self.key = self.topo = None

    def get(self, **kw):
        """A built Topology(**kw)."""
        key = repr(sorted(kw.items()))
        if self.topo is not None and key == self.key:
            return self.topo.reset()
        self.close()
        t = Topology(**kw)
        try:
            t.build()
        except BaseException:
            t.close()
            raise
        self.key, self.topo = key, t
        return t

    def close(self):
        if self.topo is not None:
            self.topo.close()
        self.key = self.topo = None

    discard = close

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()
