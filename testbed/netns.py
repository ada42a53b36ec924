# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Network-namespace helpers shared by the host tests and the testbed.

Namespaces are created with iproute2 (`ip netns add`) and entered with
`nsenter --net=/run/netns/NAME`, which switches only the network namespace:
unlike `ip netns exec`, it keeps the mount namespace, so bpffs pins under
/sys/fs/bpf are the same inside and outside (tc, bpftool and afcd all see
one set of maps). Addresses come from 198.18.0.0/15 and fd00::/8 only.
"""
import functools
import json
import os
import re
import shutil
import subprocess
import time

from . import abi

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("AFCD_BUILD", os.path.join(ROOT, "build"))
AFCD = os.path.join(BUILD, "afcd")
BPF_OBJ = os.path.join(BUILD, "afcd.bpf.o")
PIN_DIR = abi.PIN_DIR
PIN_NAMES = abi.PIN_NAMES


def sh(cmd, check=True, timeout=60, **kw):
    """Run a command (list) and return CompletedProcess with text output."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s%s" % (" ".join(cmd), p.returncode,
                                                    p.stdout, p.stderr))
    return p


def ns_cmd(ns, cmd):
    """Prefix cmd with nsenter into network namespace ns (None: host)."""
    if ns is None:
        return list(cmd)
    return ["nsenter", "--net=/run/netns/%s" % ns] + list(cmd)


def in_ns(ns, cmd, **kw):
    return sh(ns_cmd(ns, cmd), **kw)


def ensure_bpffs():
    if subprocess.run(["mountpoint", "-q", "/sys/fs/bpf"]).returncode != 0:
        sh(["mount", "-t", "bpf", "bpf", "/sys/fs/bpf", "-o", "mode=0700"])


def pins(links=True):
    """Names of afcd pins present now: the maps, and the tcx links
    (afcd_tcx_IFINDEX) unless links is False."""
    try:
        return sorted(n for n in os.listdir(PIN_DIR) if n.startswith("afcd_") and
                      (links or not n.startswith("afcd_tcx_")))
    except FileNotFoundError:
        return []


def link_pins():
    """The pinned tcx links of afcd attach --attach tcx."""
    return sorted(set(pins()) - set(pins(links=False)))


def offloads_off(ns, dev):
    """GSO/TSO/GRO off: the bottleneck must see wire-size packets."""
    if shutil.which("ethtool"):
        in_ns(ns, ["ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"],
              check=False)


class Namespaces:
    """A set of namespaces with unique names, removed on close()."""

    def __init__(self, prefix="afcd"):
        self.prefix = "%s%d" % (prefix, os.getpid() % 100000)
        self.names = []

    def add(self, short):
        name = "%s-%s" % (self.prefix, short)
        sh(["ip", "netns", "add", name])
        self.names.append(name)
        in_ns(name, ["ip", "link", "set", "lo", "up"])
        in_ns(name, ["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=0"], check=False)
        return name

    def link(self, a, adev, b, bdev, a_addrs=(), b_addrs=(), offloads=False, a_index=None):
        """veth adev in a <-> bdev in b, with addresses (CIDR strings);
        adev's ifindex a_index if given (else the namespace's next free
        one: 2 for the first device of a new namespace, in every one)."""
        sh(["ip", "link", "add", adev] + (["index", str(a_index)] if a_index else []) +
           ["netns", a, "type", "veth", "peer", "name", bdev, "netns", b])
        for ns, dev, addrs in ((a, adev, a_addrs), (b, bdev, b_addrs)):
            for addr in addrs:
                in_ns(ns, ["ip", "addr", "add", addr, "dev", dev, "nodad"] if ":" in addr
                      else ["ip", "addr", "add", addr, "dev", dev])
            in_ns(ns, ["ip", "link", "set", dev, "up"])
            if not offloads:
                offloads_off(ns, dev)

    def kill_all(self):
        """SIGKILL to every process in the namespaces."""
        for n in reversed(self.names):
            pids = subprocess.run(["ip", "netns", "pids", n], capture_output=True,
                                  text=True).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), 9)
                except (ProcessLookupError, ValueError):
                    pass

    def close(self):
        self.kill_all()
        for n in reversed(self.names):
            subprocess.run(["ip", "netns", "del", n], capture_output=True)
        self.names = []


def afcd(ns, *args, check=True, timeout=60):
    return in_ns(ns, [AFCD] + [str(a) for a in args], check=check, timeout=timeout)


@functools.lru_cache(maxsize=None)
def loader_defaults(algo="afcd"):
    """name -> the loader's default of each parameter for algo, as `afcd
    params -j` gives it (the text it is given in: "3ms", "1514", "on"): the
    testbed reads the loader's defaults instead of restating them."""
    rows = json.loads(sh([AFCD, "params", "-j"]).stdout)
    return {r["name"]: r["default_per_algo"][algo] for r in rows if "default_per_algo" in r}


def seconds(text):
    """A time as the loader writes it ("3ms", "1.5s", "200us") in seconds."""
    m = re.fullmatch(r"([0-9.]+)(ns|us|ms|s)", text)
    if not m:
        raise ValueError("not a time: %r" % text)
    return float(m.group(1)) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[m.group(2)]


def bucket_bytes(rate_mbit):
    """A shaper's bucket at rate_mbit, in bytes: the loader's pacing credit
    (`burst`, the time a queue that stood empty may send at once), at least
    two frames of the loader's mtu, so that timers firing late (TCG) do
    not idle the link and every scheme gets the same burst."""
    d = loader_defaults()
    return max(int(rate_mbit * 1e6 / 8 * seconds(d["burst"])), 2 * int(d["mtu"]))


def afcd_stats(ns, dev, flows=True, dt=0.2):
    args = ["stats", dev, "-j", "--dt", str(dt)]
    if flows:
        args.append("--flows")
    return json.loads(afcd(ns, *args).stdout)


def start_loader(ns, dev, *params, log=None, wrap=()):
    """Start `afcd attach` in the background (after the command wrap, such
    as setpriv); wait until it has attached: up to 45 s, for a TCG guest
    verifying the qdisc backend's programs while the last one's
    unregistration waits out its RCU grace periods."""
    cmd = ns_cmd(ns, list(wrap) + [AFCD, "attach", dev] + [str(p) for p in params])
    out = open(log, "w") if log else subprocess.DEVNULL
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.time() + 45
    while time.time() < deadline:
        if p.poll() is not None:
            raise RuntimeError("loader exited with %d" % p.returncode)
        cfg = afcd(ns, "stats", dev, "-j", "--dt", "0", check=False)
        if cfg.returncode == 0:
            s = json.loads(cfg.stdout)
            if s["hook"] != "none" and s["estimates"]["refreshes"] > 0:
                return p
        time.sleep(0.05)
    p.kill()
    raise RuntimeError("loader did not attach in time")


def stop(p, sig=15, timeout=10):
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return p.returncode


def tcx_progs(ns, dev):
    """The programs on dev's tcx hooks, as bpftool lists them: sorted
    (kind, name) pairs such as ("tcx/egress", "afcd_egress")."""
    out = in_ns(ns, ["bpftool", "-j", "net", "show", "dev", dev], check=False).stdout
    try:
        tc = json.loads(out)[0].get("tc", [])
    except (ValueError, IndexError):
        return []
    return sorted((e["kind"], e.get("name", ""), e.get("prog_id", 0)) for e in tc
                  if e["kind"].startswith("tcx"))


def hooks(ns, dev):
    """The egress hooks running afcd_egress on dev, one entry per program: a
    sorted list of "clsact" (a filter, from tc) and "tcx" (from bpftool net
    show), so ["tcx"] when one program runs there."""
    f = in_ns(ns, ["tc", "filter", "show", "dev", dev, "egress"], check=False).stdout
    h = ["clsact"] * f.count("name afcd_egress")
    h += ["tcx" for kind, name, _ in tcx_progs(ns, dev)
          if (kind, name) == ("tcx/egress", "afcd_egress")]
    return sorted(h)


def version():
    """`afcd version` as a dict: abi, libbpf_built, libbpf_running, tcx."""
    out = sh([AFCD, "version"]).stdout
    return dict(line.split(" ", 1) for line in out.splitlines())


def default_hook():
    """Where `afcd attach --attach auto` puts the program here."""
    return "tcx" if version()["tcx"] == "yes" else "clsact"


def root_qdisc(ns, dev):
    """dev's root qdisc in ns as `tc -s -j qdisc show` gives it (its kind,
    packets, bytes, drops...; {} without one)."""
    out = in_ns(ns, ["tc", "-s", "-j", "qdisc", "show", "dev", dev]).stdout
    return next((q for q in json.loads(out) if q.get("root")), {})


def tc_state(ns, dev):
    """What tc shows on dev: qdiscs, filters and tcx programs (for 'nothing
    changed')."""
    q = in_ns(ns, ["tc", "qdisc", "show", "dev", dev], check=False).stdout
    fe = in_ns(ns, ["tc", "filter", "show", "dev", dev, "egress"], check=False).stdout
    fi = in_ns(ns, ["tc", "filter", "show", "dev", dev, "ingress"], check=False).stdout
    return (q, fe, fi, tcx_progs(ns, dev))
