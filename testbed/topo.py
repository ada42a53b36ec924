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
"""

from . import netns as nslib
from .netns import in_ns

RECEIVER_ADDR = "198.19.0.2"
BOTTLENECK_DEV = "rd0"


class Topology:
    def __init__(self, kind="dumbbell", senders=2, rtt_ms=20.0, prefix="tb"):
        if kind not in ("dumbbell", "yshape", "tree"):
            raise ValueError("unknown topology %r" % kind)
        if kind == "tree":
            senders = 9
        if kind == "yshape":
            senders = 2
        self.kind = kind
        self.n = senders
        self.rtt_ms = rtt_ms
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
        # base RTT on the ACK path (receiver egress), never at the bottleneck
        in_ns(self.receiver, ["tc", "qdisc", "replace", "dev", "d0", "root", "netem",
                              "delay", "%gms" % self.rtt_ms, "limit", "100000"])
        return self

    def close(self):
        self.nss.close()

    def __enter__(self):
        return self.build()

    def __exit__(self, *a):
        self.close()
