#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Run the bcc tracer against a loaded dumbbell (inside the VM, or on a
host whose kernel has sch_fq and netem): 2 CUBIC flows through AFCD at
the router; tools/afcd-trace measures each flow's real sojourn in sch_fq
and where packets die. Writes OUT/trace.json and OUT/trace-afcd.json.

  trace_check.py OUT_DIR
"""
import json
import os
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "testbed"))

import bottleneck  # noqa: E402
import nslib  # noqa: E402
import topo  # noqa: E402
import workload  # noqa: E402


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    nslib.ensure_bpffs()
    if not os.path.isdir("/sys/kernel/tracing/events"):
        subprocess.run(["mount", "-t", "tracefs", "tracefs", "/sys/kernel/tracing"])
    flows = [workload.Flow("cubic1", 0, cc="cubic"), workload.Flow("cubic2", 1, cc="cubic")]
    with topo.Topology("dumbbell", senders=2, rtt_ms=20) as t:
        b = bottleneck.Bottleneck(t.router, topo.BOTTLENECK_DEV, "afcd", 50, 20)
        b.install()
        try:
            res = {}
            th = threading.Thread(target=lambda: res.update(workload.run(t, flows, 14)))
            th.start()
            tr = subprocess.run(nslib.ns_cmd(t.router, [
                "/usr/bin/python3", os.path.join(ROOT, "tools", "afcd-trace"),
                topo.BOTTLENECK_DEV, "-d", "6", "--json"]), capture_output=True, text=True,
                timeout=120, env=dict(os.environ, PYTHONWARNINGS="ignore"))
            th.join()
            stats = b.afcd_stats()
        finally:
            b.remove()
    if tr.returncode:
        print(tr.stderr, file=sys.stderr)
        return 1
    with open(os.path.join(out, "trace.json"), "w") as fh:
        fh.write(tr.stdout)
    with open(os.path.join(out, "trace-afcd.json"), "w") as fh:
        json.dump(stats, fh)
    print(tr.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
