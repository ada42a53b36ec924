# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Long-lived flows under churn or in a crowd, in ns-3 (make bench-churn's
second half): N CUBIC flows (ns-3's TCP, SACK; 8 unless --cubic) beside a
churn source, 64-byte UDP frames that the datapath's own program sees as
the next of M one-datagram flows cycled (AfcdEdtQueueDisc::SetChurn: one
ns-3 sender stands for a crowd of flows that would cost a socket each),
with the flow table at its default size or sized by `param flow-table` as
`afcd attach --flow-table` does; with --flood, one UDP flow at that many
times the link's rate beside them. The closed loop of model senders
(tests/bpf/test_loop.c, test_churn_at_scale, test_crowd_at_scale) runs the
same rows with model TCP; this is the same question with ns-3's TCP. Any
of ns-3's schemes (testbed/ns3.py SCHEMES) runs the rows without churn.

  python3 -m testbed.churn_sim [--rate 1000] [--secs 20] [--out FILE]
  python3 -m testbed.churn_sim --cubic 1000 --rows 0:0 --flood 1 \
      --schemes afcd,fall,fq_codel,pfifo --rtt 100 --secs 30 --warm 10

Prints one line a run and writes every run's figures as JSON. A run is
valid when afcd-sim finished, the long-lived flows together delivered
inside the window, and the churn source (when there is one) was admitted
at all (a run without churn packets through the program did not test
anything); a long-lived flow that delivered nothing is the scheme's
result, counted as starved, not a reason to discard the run.
"""
import argparse
import concurrent.futures
import json
import subprocess
import sys
import time

from . import bottleneck, ns3, scenario
from .stats import jain
from .workload import Flow

# (churn flows, flow table entries; 0: the default 65,536)
ROWS = [(0, 0), (100000, 0), (1000000, 0), (1000000, 1 << 20)]
# The flow-queueing baselines and their flow queues ("buckets"): the
# attribute Flows of ns-3's FqCoDelQueueDisc and FqPieQueueDisc, 1,024 by
# default as Linux's fq_codel; Linux takes at most 65,536 (sch_fq_codel.c).
FQ_SCHEMES = ("fq_codel", "fq_pie")
FQ_DEFAULT_BUCKETS = 1024
FQ_MAX_BUCKETS = 65536

def crowd_sndbuf(rate_mbit, rtt_ms, n):
    """Socket buffers for a crowd of n flows, bytes: 4 fair windows
    (4 BDP / n), at least 64 KB. Linux's tcp_wmem autotuning gives a
    socket about twice its window; afcd-sim's default (4 BDP, at most
    16 MB, afcd_sim.cc) would make ns-3 hold n such buffers, each filled
    by BulkSend (12 GB at 1,000 flows, 1 Gbit/s, 100 ms)."""
    return max(64 << 10, int(4 * rate_mbit * 1e6 / 8 * rtt_ms / 1e3 / n))


def rows_arg(text):
    """--rows: comma-separated CHURN:TABLE pairs (0: none / the default)."""
    try:
        return [tuple(int(x) for x in r.split(":")) for r in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError("rows are CHURN:TABLE pairs, e.g. 0:0,100000:0")


def param_arg(text):
    """--param: NAME=VALUE, one loader parameter."""
    name, eq, value = text.partition("=")
    if not eq or not name or not value or " " in text:
        raise argparse.ArgumentTypeError("a parameter is NAME=VALUE, e.g. sb_size=4096")
    return (name, value)


def spec(scheme, rate_mbit, rtt_ms, secs, warm_s, n_cubic, churn_flows, churn_mbit, table,
         seed, flood=0.0, sndbuf=0, fq_buckets=0, stagger_s=0.0, hosts=1, params=(),
         mtu=ns3.MTU_TEXT):
    """The afcd-sim spec of one run: n_cubic CUBIC flows from t = 0 (with
    stagger_s > 0 each flow, the flood and the churn U[0, stagger_s) s
    later, drawn from random.Random(seed): ns3.spec_text's jitter) and,
    churn_flows > 0, a churn flow of churn_mbit Mbit/s of 64-byte frames
    standing for churn_flows flows; table > 0 sizes the flow table
    (entries, AFCD_FLOWS_MIN .. AFCD_FLOWS_LIMIT, refused by afcd-sim
    otherwise); flood > 0: a UDP flow at flood x rate_mbit; sndbuf > 0:
    each socket's buffers, bytes (afcd-sim's default otherwise);
    fq_buckets > 0: the flow queues of ns-3's FqCoDel/FqPie (their
    attribute Flows, Linux's fq_codel "flows"; default 1,024 in both).
    hosts > 1: the CUBIC flows spread over that many sender hosts and as
    many receiver hosts (flow i from sender i % hosts to receiver i %
    hosts), as a crowd is: ns-3 walks a node's list of endpoints for every
    packet it receives, so N sockets on one node cost O(N) a packet
    (10,000 on one: 87 % of the simulator's time in
    Ipv4EndPointDemux::Lookup); the router's interface a host costs no
    more a packet under the strong end-system model afcd-sim sets
    (afcd_sim.cc Run::SetDefaults). The bottleneck is the same link.
    params: (NAME, VALUE) pairs of the loader's parameters for the
    project's schemes (`afcd params`; afcd-sim refuses a bad one, as
    `afcd attach` does), after the ones the bottleneck sets; mtu: the
    largest Ethernet frame, bytes (ns3.MTU_TEXT, 9,014, the text's).
    Buffer 1 BDP, target 5 ms, interval 100 ms, no ECN."""
    flows = [Flow("c%d" % i, sender=i % hosts, cc="cubic", start_s=0.0)
             for i in range(n_cubic)]
    if churn_flows:
        flows.append(Flow("churn", proto="churn", cc=None, rate_mbit=churn_mbit))
    if flood:
        flows.append(Flow("flood", proto="udp", cc=None, rate_mbit=flood * rate_mbit))
    text = ns3.spec_text(scheme, rate_mbit, rtt_ms, secs, warm_s, flows, None, None, 1.0, 5.0,
                         100.0, False, seed, False, mtu=mtu, jitter_s=stagger_s)
    if scheme in bottleneck.OURS:
        text += "".join("param %s %s\n" % kv for kv in params)
    if hosts > 1:
        text += "receivers %d\n" % hosts
    if sndbuf:
        text += "sndbuf_bytes %d\n" % sndbuf
    if fq_buckets and scheme in FQ_SCHEMES:
        text += "attr Flows %d\n" % fq_buckets
    if churn_flows:
        text += "churn_flows %d\n" % churn_flows
    if table:
        text += "param flow-table %d\n" % table   # the last param: afcd_drive_open()
    return text


def one(scheme, row, a):
    """Run row (churn flows, table) under scheme with a's settings (rate,
    rtt, secs, warm, cubic, churn_mbit, flood, sndbuf, seed, param, mtu); its figures
    as a dict, with valid False and the reasons when afcd-sim failed, the
    long-lived flows delivered nothing, or the churn was never admitted.
    Mbit/s over [warm, secs]; the churn's in its 64-byte frames."""
    churn_flows, table = row
    text = spec(scheme, a.rate, a.rtt, a.secs, a.warm, a.cubic, churn_flows, a.churn_mbit,
                table, a.seed, a.flood, a.sndbuf, a.fq_buckets, a.stagger, a.hosts, a.param,
                a.mtu)
    t0 = time.time()
    p = subprocess.run([ns3.SIM], input=text, capture_output=True, text=True)
    wall = time.time() - t0
    if p.returncode:
        return {"scheme": scheme, "churn_flows": churn_flows, "table": table, "valid": False,
                "invalid_reasons": ["afcd-sim failed (%d): %s" % (p.returncode,
                                                                  p.stderr.strip()[-300:])],
                "wall_s": wall}
    res = json.loads(p.stdout)
    long_flows = [f for f in res["flows"] if f["proto"] == "tcp"]
    gp = [scenario.goodput_mbps(f, a.warm, a.secs) for f in long_flows]
    churn = [f for f in res["flows"] if f["proto"] == "churn"]
    # the sink counts payload: 22 bytes of each 64-byte frame (afcd_sim.cc)
    churn_gp = scenario.goodput_mbps(churn[0], a.warm, a.secs) * 64 / 22 if churn else 0.0
    flood = [scenario.goodput_mbps(f, a.warm, a.secs) for f in res["flows"]
             if f["proto"] == "udp"]
    flood_gp = flood[0] if flood else 0.0
    q = (res.get("afcd_stats") or {}).get("queue", {})
    est = (res.get("afcd_stats") or {}).get("estimates") or {}
    reasons = [] if sum(gp) > 0 else ["the long-lived flows delivered nothing in the window"]
    if churn_flows and churn_gp <= 0:
        reasons.append("no churn packet delivered")
    return {"scheme": scheme, "churn_flows": churn_flows,
            "table": (table or 65536) if scheme in bottleneck.OURS else None,
            "fq_buckets": (a.fq_buckets or FQ_DEFAULT_BUCKETS) if scheme in FQ_SCHEMES else None,
            "rate_mbit": a.rate, "rtt_ms": a.rtt, "secs": a.secs, "warm_s": a.warm,
            "seed": a.seed, "churn_mbit": a.churn_mbit if churn_flows else 0,
            "flood_x": a.flood, "sndbuf": a.sndbuf or None, "stagger_s": a.stagger,
            "hosts": a.hosts, "params": dict(a.param) if scheme in bottleneck.OURS else None,
            "mtu": a.mtu,
            "cubic_mbps": gp, "jain": jain(gp), "starved": sum(1 for g in gp if g <= 0),
            "cubic_start_s": [f["start_s"] for f in long_flows],
            "churn_mbps": churn_gp, "flood_mbps": flood_gp,
            # the flood's share in fair shares of the link (N long flows + it)
            "flood_shares": flood_gp / (a.rate / (len(gp) + 1)) if flood else None,
            "utilization": (scenario.utilization(long_flows, a.warm, a.secs, a.rate) +
                            (churn_gp + flood_gp) / a.rate),
            "backlog_delay_ms": res["backlog_delay_ms"],
            # entries made over the whole run (the churn's first cycle included)
            "flows_made": q.get("flow_new"), "flow_fail": q.get("flow_fail"),
            "flow_collide": q.get("flow_collide"),
            # the aggregates' packets, bytes, drops and marks over the run and
            # m_i at its end (`afcd stats -j`'s queue.aggregates): overflow,
            # mice (m_i only), unclassified
            "aggregates": q.get("aggregates"),
            # the shadow buffer's size at the end and the scans that grew
            # it (sb_grow; None for the baselines)
            "sb_size": est.get("sb_size"), "sb_grows": est.get("sb_grows"),
            "bpf_ns_per_pkt": (res.get("bpf_cost") or {}).get("ns_per_pkt"),
            "sim_wall_s": res["wall_s"],
            "wall_s": wall, "ns3_version": res["ns3_version"],
            "code": scenario.code_version(), "date": time.strftime("%Y-%m-%d %H:%M"),
            "valid": not reasons, "invalid_reasons": reasons}


def by_start(r, parts=5):
    """The long-lived flows of run r in parts groups by start time, first
    started first: each group's mean share (in fair shares of the link, the
    flood counted as a flow when there is one) and its starved flows, as a
    list of (mean_share, starved). A queue that favours flows by when they
    came (ns-3's FqCoDel breaks ties between equally fat queues by their
    creation order) shows as a slope; None without --stagger (every flow
    starts at t = 0) or without start times."""
    starts = r.get("cubic_start_s")
    if not starts or len(set(starts)) < 2 or len(starts) < parts:
        return None
    share = r["rate_mbit"] / (len(starts) + (1 if r.get("flood_x") else 0))
    order = sorted(range(len(starts)), key=lambda i: (starts[i], i))
    out = []
    for k in range(parts):
        g = [r["cubic_mbps"][i] / share
             for i in order[k * len(order) // parts:(k + 1) * len(order) // parts]]
        out.append((sum(g) / len(g), sum(1 for x in g if x <= 0)))
    return out


def line(r):
    """One printed row of a run's dict from one()."""
    if "cubic_mbps" not in r:
        return "    %-8s %-8d %-8d INVALID: %s" % (r["scheme"], r["churn_flows"], r["table"],
                                                   "; ".join(r["invalid_reasons"]))
    g = r["cubic_mbps"]
    d = r["backlog_delay_ms"] or {}
    other = ("%6.1f" % r["churn_mbps"] if r["churn_flows"] else
             "%6.2f" % r["flood_shares"] if r["flood_shares"] is not None else "%6s" % "-")
    return ("    %-8s %-8d %-8s %-6s %.3f  %6.1f/%6.1f/%6.1f %-5d %s  %.3f  %5.1f/%5.1f  %-9s "
            "%-6s %-6.0f %s" % (r["scheme"], r["churn_flows"],
                                r["table"] or "%sb" % (r.get("fq_buckets") or "-"),
                                r.get("sb_size") or "-", r["jain"], min(g),
                                sum(g) / len(g), max(g), r["starved"], other,
                                r["utilization"], d.get("p50") or 0, d.get("p99") or 0,
                                r["flows_made"] if r["flows_made"] is not None else "-",
                                "%.0f" % r["bpf_ns_per_pkt"] if r["bpf_ns_per_pkt"] else "-",
                                r["wall_s"], "valid" if r["valid"] else "INVALID: " +
                                "; ".join(r["invalid_reasons"])))


def parser():
    """churn_sim's command line (one definition of its options and
    defaults, for main() and settings())."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate", type=float, default=1000.0, help="bottleneck, Mbit/s")
    ap.add_argument("--rtt", type=float, default=20.0, help="base RTT, ms")
    ap.add_argument("--secs", type=float, default=15.0, help="simulated seconds")
    ap.add_argument("--warm", type=float, default=5.0, help="warm-up, s")
    ap.add_argument("--cubic", type=int, default=8, help="long-lived CUBIC flows")
    ap.add_argument("--churn-mbit", type=float, default=200.0,
                    help="the churn's rate, Mbit/s of 64-byte frames")
    ap.add_argument("--schemes", default="afcd,fall",
                    help="comma-separated, of: " + ", ".join(ns3.SCHEMES))
    ap.add_argument("--rows", type=rows_arg, default=ROWS,
                    help="CHURN:TABLE pairs (default %s)" %
                    ",".join("%d:%d" % r for r in ROWS))
    ap.add_argument("--flood", type=float, default=0.0,
                    help="a UDP flow at this many times the link's rate")
    ap.add_argument("--sndbuf", type=int, default=None,
                    help="socket buffers, bytes (default: afcd-sim's; crowd_sndbuf() "
                    "with --cubic over 100)")
    ap.add_argument("--fq-buckets", type=int, default=0,
                    help="flow queues of fq_codel/fq_pie, 1 .. %d (default %d)" % (
                        FQ_MAX_BUCKETS, FQ_DEFAULT_BUCKETS))
    ap.add_argument("--stagger", type=float, default=0.0,
                    help="seconds over which the flows start, U[0, S) each from the seed "
                    "(default 0: all at t = 0; below --warm)")
    ap.add_argument("--hosts", type=int, default=1,
                    help="sender hosts and receiver hosts the CUBIC flows spread over "
                    "(default 1; crowds of thousands need about N / 100: ns-3's cost is "
                    "O(sockets on a node) a packet)")
    ap.add_argument("--param", type=param_arg, action="append", default=[],
                    metavar="NAME=VALUE",
                    help="a loader parameter for afcd, fall and the other project schemes "
                    "(`afcd params`), repeatable; e.g. sb_size=4096")
    ap.add_argument("--mtu", type=int, default=ns3.MTU_TEXT,
                    help="the largest Ethernet frame, bytes (default %d)" % ns3.MTU_TEXT)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=None, help="JSON of every run")
    return ap


def settings(**kw):
    """The settings one() takes, as main() parses them with no argument,
    with kw (option names with '_' for '-') in their place; an unknown
    name is a TypeError."""
    a = parser().parse_args([])
    for k, v in kw.items():
        if not hasattr(a, k):
            raise TypeError("churn_sim has no setting %r" % k)
        setattr(a, k, v)
    return a


def main(argv=None):
    ap = parser()
    a = ap.parse_args(argv)
    if a.sndbuf is None:
        a.sndbuf = crowd_sndbuf(a.rate, a.rtt, a.cubic) if a.cubic > 100 else 0
    bad = [x for x in a.schemes.split(",") if x not in ns3.SCHEMES]
    bad = bad or ["%s with churn" % x for x in a.schemes.split(",") if x not in bottleneck.OURS
            and any(c for c, _ in a.rows)]
    if a.fq_buckets and not set(a.schemes.split(",")) & set(FQ_SCHEMES):
        bad = bad or ["--fq-buckets without %s" % " or ".join(FQ_SCHEMES)]
    if a.param and not set(a.schemes.split(",")) & set(bottleneck.OURS):
        bad = bad or ["--param without a scheme of the project's"]
    if not 1294 <= a.mtu <= ns3.MTU_TEXT:
        bad = bad or ["--mtu %d (1294 .. %d)" % (a.mtu, ns3.MTU_TEXT)]
    if bad or a.cubic < 1 or a.flood < 0 or not 0 <= a.fq_buckets <= FQ_MAX_BUCKETS or \
            not 0 <= a.stagger < a.warm or a.hosts < 1:
        ap.error("not a run: %s" % (", ".join(bad) or "--cubic >= 1, --flood >= 0, "
                                    "--fq-buckets 1 .. %d, 0 <= --stagger < --warm, "
                                    "--hosts >= 1" %
                                    FQ_MAX_BUCKETS))
    why = ns3.available()
    if why:
        print("churn_sim: %s" % why, file=sys.stderr)
        return 2
    runs = [(s, row) for s in a.schemes.split(",") for row in a.rows]
    print("    %d runs, %g Mbit/s, %g ms, %g s (%g warm-up), %d CUBIC starting over %g s "
          "from %d host(s) to %d, churn %g Mbit/s of 64-byte frames, flood %gx, socket "
          "buffers %s, frames of %d bytes, %s, ns-3 %s, %d at once" % (
              len(runs), a.rate, a.rtt, a.secs, a.warm, a.cubic, a.stagger, a.hosts, a.hosts,
              a.churn_mbit, a.flood, a.sndbuf or "afcd-sim's", a.mtu,
              " ".join("%s %s" % kv for kv in a.param) or "default parameters",
              ns3.NS3_VERSION, a.jobs))
    print("    algo     churn    table    ring   jain   cubic min/mean/max  starv churn/flood shares"
          "  util   backlog p50/p99 ms  entries   BPF ns wall s")
    out = []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for r in ex.map(lambda sr: one(sr[0], sr[1], a), runs):
            print(line(r), flush=True)
            fifths = by_start(r) if "cubic_mbps" in r else None
            if fifths:
                print("      by start, first fifth first: shares %s; starved %s" % (
                    " ".join("%.2f" % m for m, _ in fifths),
                    " ".join("%d" % n for _, n in fifths)), flush=True)
            out.append(r)
            if a.out:
                with open(a.out, "w") as fh:
                    json.dump(out, fh, indent=1)
    bad = sum(not r["valid"] for r in out)
    print("    %d of %d runs valid" % (len(out) - bad, len(out)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
