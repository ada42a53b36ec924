#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The BPF qdisc `afcd` on a kernel with CONFIG_NET_SCH_BPF (inside the
VM booted with --kernel 6.18): build/afcd_qdisc.bpf.o registers as
struct_ops (the kernel's verifier accepts every program), becomes a
veth's root qdisc with tc, passes traffic (without an afcd config it is a
plain FIFO), counts it, and goes away with tc qdisc del.

Writes OUT/qdisc.json.  qdisc_check.py OUT_DIR
"""
import json
import os
import subprocess
import sys

from testbed import netns as nslib
from testbed.netns import in_ns

LINK_DIR = "/sys/fs/bpf/afcd_qdisc_check"


def root_qdisc(ns, dev):
    out = in_ns(ns, ["tc", "-s", "-j", "qdisc", "show", "dev", dev]).stdout
    return next((q for q in json.loads(out) if q.get("root")), {})


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    nslib.ensure_bpffs()
    res = {"kernel": os.uname().release}
    os.makedirs(LINK_DIR, exist_ok=True)
    reg = subprocess.run(["bpftool", "struct_ops", "register",
                          os.path.join(nslib.ROOT, "build", "afcd_qdisc.bpf.o"), LINK_DIR],
                         capture_output=True, text=True)
    res["register"] = {"rc": reg.returncode, "out": (reg.stdout + reg.stderr)[-2000:]}
    nss = nslib.Namespaces("qc")
    try:
        a, b = nss.add("a"), nss.add("b")
        nss.link(a, "a0", b, "b0", ["198.18.0.1/24"], ["198.18.0.2/24"])
        add = in_ns(a, ["tc", "qdisc", "replace", "dev", "a0", "root", "handle", "1:", "afcd"],
                    check=False)
        res["attach"] = {"rc": add.returncode, "err": add.stderr.strip()}
        res["kind"] = root_qdisc(a, "a0").get("kind")
        ping = in_ns(a, ["ping", "-c", "20", "-i", "0.05", "-W", "2", "198.18.0.2"],
                     check=False)
        res["ping_received"] = sum(1 for line in ping.stdout.splitlines() if "bytes from" in line)
        q = root_qdisc(a, "a0")
        res["counted"] = {"packets": q.get("packets"), "drops": q.get("drops"),
                          "backlog": q.get("qlen")}
        dele = in_ns(a, ["tc", "qdisc", "del", "dev", "a0", "root"], check=False)
        res["deleted"] = {"rc": dele.returncode, "kind_after": root_qdisc(a, "a0").get("kind")}
    finally:
        nss.close()
        subprocess.run(["rm", "-rf", LINK_DIR])
    with open(os.path.join(out, "qdisc.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
