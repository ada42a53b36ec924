# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Long-lived flows under churn, in ns-3 (make bench-churn's second half):
8 CUBIC flows (ns-3's TCP, SACK) beside a churn source, 64-byte UDP frames
that the datapath's own program sees as the next of N one-datagram flows
cycled (AfcdEdtQueueDisc::SetChurn: one ns-3 sender stands for a crowd of
flows that would cost a socket each), with the flow table at its default
size or sized by `param flow-table` as `afcd attach --flow-table` does.
The closed loop of model senders (tests/bpf/test_loop.c,
test_churn_at_scale) runs the same rows with model TCP; this is the same
question with ns-3's TCP.

  python3 -m testbed.churn_sim [--rate 1000] [--secs 20] [--out FILE]

Prints one line a run and writes every run's figures as JSON. Each run is
judged valid when its CUBIC flows all delivered inside the window and the
churn source was admitted at all (a run without churn packets through the
program did not test anything).
"""
import argparse
import concurrent.futures
import json
import subprocess
import sys
import time

from . import ns3, scenario
from .stats import jain
from .workload import Flow

# (churn flows, flow table entries; 0: the default 65,536)
ROWS = [(0, 0), (100000, 0), (1000000, 0), (1000000, 1 << 20)]


def spec(scheme, rate_mbit, rtt_ms, secs, warm_s, n_cubic, churn_flows, churn_mbit, table,
         seed):
    """The afcd-sim spec of one run: n_cubic CUBIC flows from t = 0 and,
    churn_flows > 0, a churn flow of churn_mbit Mbit/s of 64-byte frames
    standing for churn_flows flows; table > 0 sizes the flow table
    (entries, AFCD_FLOWS_MIN .. AFCD_FLOWS_LIMIT, refused by afcd-sim
    otherwise). Buffer 1 BDP, target 5 ms, interval 100 ms, no ECN."""
    flows = [Flow("c%d" % i, cc="cubic", start_s=0.0) for i in range(n_cubic)]
    if churn_flows:
        flows.append(Flow("churn", proto="churn", cc=None, rate_mbit=churn_mbit))
    text = ns3.spec_text(scheme, rate_mbit, rtt_ms, secs, warm_s, flows, None, None, 1.0, 5.0,
                         100.0, False, seed, False)
    if churn_flows:
        text += "churn_flows %d\n" % churn_flows
    if table:
        text += "param flow-table %d\n" % table   # the last param: afcd_drive_open()
    return text


def one(scheme, row, a):
    """Run row (churn flows, table) under scheme with a's settings (rate,
    rtt, secs, warm, cubic, churn_mbit, seed); its figures as a dict, with
    valid False and the reason when afcd-sim failed or a flow delivered
    nothing in the window. Mbit/s over [warm, secs]; the churn's in its
    64-byte frames."""
    churn_flows, table = row
    text = spec(scheme, a.rate, a.rtt, a.secs, a.warm, a.cubic, churn_flows, a.churn_mbit,
                table, a.seed)
    t0 = time.time()
    p = subprocess.run([ns3.SIM], input=text, capture_output=True, text=True)
    wall = time.time() - t0
    if p.returncode:
        return {"scheme": scheme, "churn_flows": churn_flows, "table": table, "valid": False,
                "invalid_reasons": ["afcd-sim failed: %s" % p.stderr.strip()[-300:]],
                "wall_s": wall}
    res = json.loads(p.stdout)
    long_flows = [f for f in res["flows"] if f["proto"] == "tcp"]
    gp = [scenario.goodput_mbps(f, a.warm, a.secs) for f in long_flows]
    churn = [f for f in res["flows"] if f["proto"] == "churn"]
    # the sink counts payload: 22 bytes of each 64-byte frame (afcd_sim.cc)
    churn_gp = scenario.goodput_mbps(churn[0], a.warm, a.secs) * 64 / 22 if churn else 0.0
    q = res["afcd_stats"]["queue"]
    reasons = ["cubic flow %d delivered nothing in the window" % i
               for i, g in enumerate(gp) if g <= 0]
    if churn_flows and churn_gp <= 0:
        reasons.append("no churn packet delivered")
    return {"scheme": scheme, "churn_flows": churn_flows, "table": table or 65536,
            "rate_mbit": a.rate, "rtt_ms": a.rtt, "secs": a.secs, "warm_s": a.warm,
            "seed": a.seed, "churn_mbit": a.churn_mbit if churn_flows else 0,
            "cubic_mbps": gp, "jain": jain(gp), "churn_mbps": churn_gp,
            "utilization": (scenario.utilization(long_flows, a.warm, a.secs, a.rate) +
                            churn_gp / a.rate),
            "backlog_delay_ms": res["backlog_delay_ms"],
            # entries made over the whole run (the churn's first cycle included)
            "flows_made": q.get("flow_new"), "flow_fail": q.get("flow_fail"),
            "bpf_ns_per_pkt": res["bpf_cost"]["ns_per_pkt"], "sim_wall_s": res["wall_s"],
            "wall_s": wall, "ns3_version": res["ns3_version"],
            "code": scenario.code_version(), "date": time.strftime("%Y-%m-%d %H:%M"),
            "valid": not reasons, "invalid_reasons": reasons}


def line(r):
    """One printed row of a run's dict from one()."""
    if "cubic_mbps" not in r:
        return "    %-5s %-8d %-8d INVALID: %s" % (r["scheme"], r["churn_flows"], r["table"],
                                                   "; ".join(r["invalid_reasons"]))
    g = r["cubic_mbps"]
    d = r["backlog_delay_ms"] or {}
    return ("    %-5s %-8d %-8d %.3f  %6.1f/%6.1f/%6.1f  %6.1f  %.3f  %5.1f/%5.1f  %-9s %-6.0f "
            "%-6.0f %s" % (r["scheme"], r["churn_flows"], r["table"], r["jain"], min(g),
                           sum(g) / len(g), max(g), r["churn_mbps"], r["utilization"],
                           d.get("p50") or 0, d.get("p99") or 0, r["flows_made"],
                           r["bpf_ns_per_pkt"], r["wall_s"],
                           "valid" if r["valid"] else "INVALID: " +
                           "; ".join(r["invalid_reasons"])))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate", type=float, default=1000.0, help="bottleneck, Mbit/s")
    ap.add_argument("--rtt", type=float, default=20.0, help="base RTT, ms")
    ap.add_argument("--secs", type=float, default=15.0, help="simulated seconds")
    ap.add_argument("--warm", type=float, default=5.0, help="warm-up, s")
    ap.add_argument("--cubic", type=int, default=8, help="long-lived CUBIC flows")
    ap.add_argument("--churn-mbit", type=float, default=200.0,
                    help="the churn's rate, Mbit/s of 64-byte frames")
    ap.add_argument("--schemes", default="afcd,fall")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=None, help="JSON of every run")
    a = ap.parse_args(argv)
    why = ns3.available()
    if why:
        print("churn_sim: %s" % why, file=sys.stderr)
        return 2
    runs = [(s, row) for s in a.schemes.split(",") for row in ROWS]
    print("    %d runs, %g Mbit/s, %g ms, %g s (%g warm-up), %d CUBIC, churn %g Mbit/s of "
          "64-byte frames, ns-3 %s, %d at once" % (len(runs), a.rate, a.rtt, a.secs, a.warm,
                                                   a.cubic, a.churn_mbit, ns3.NS3_VERSION,
                                                   a.jobs))
    print("    algo  churn    table    jain   cubic min/mean/max  churn   util   backlog "
          "p50/p99 ms  entries   BPF ns wall s")
    out = []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for r in ex.map(lambda sr: one(sr[0], sr[1], a), runs):
            print(line(r), flush=True)
            out.append(r)
            if a.out:
                with open(a.out, "w") as fh:
                    json.dump(out, fh, indent=1)
    bad = sum(not r["valid"] for r in out)
    print("    %d of %d runs valid" % (len(out) - bad, len(out)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
