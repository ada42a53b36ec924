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

from testbed import bottleneck, topo, workload
from testbed import netns as nslib

ROOT = nslib.ROOT


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
            # the tracer compiles its BPF first (tens of seconds under TCG):
            # start the traffic once it says it is tracing; it traces past
            # the load's end, which may start seconds late on a slow guest
            tr = subprocess.Popen(nslib.ns_cmd(t.router, [
                "/usr/bin/python3", os.path.join(ROOT, "tools", "afcd-trace"),
                topo.BOTTLENECK_DEV, "-d", "14", "--json"]), stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONWARNINGS="ignore"))
            err = []
            for line in tr.stderr:
                err.append(line)
                if "tracing" in line:
                    break
            res = {}

            def load():
                try:
                    res.update(workload.run(t, flows, 10))
                except Exception as e:      # told, with the tracer's result
                    res["error"] = repr(e)
            th = threading.Thread(target=load)
            th.start()
            stdout, rest = tr.communicate(timeout=180)
            err.append(rest)
            th.join()
            stats = b.afcd_stats()
        finally:
            b.remove()
    if tr.returncode or "error" in res:
        print("".join(err), res.get("error", ""), file=sys.stderr)
        return 1
    with open(os.path.join(out, "trace.json"), "w") as fh:
        fh.write(stdout)
    with open(os.path.join(out, "trace-afcd.json"), "w") as fh:
        json.dump(stats, fh)
    print(stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
