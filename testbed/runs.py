# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Runs of scenarios under schemes, one after the other, resumable, and
the calibration that picks their rate: the highest at which this machine
runs the heaviest workloads validly (testbed/validity.py) with a margin."""
import json
import os
import time

from . import scenario, validity

# calibration: the heaviest workloads of the runs asked for (the most UDP
# relative to the rate, and the most UDP senders; cubic-udp by default)
# under AFCD (its loader included), short runs, rates tried from the top
# down. A rate counts only when every probe at it is valid with a margin
# below the validity limits (CAL_BUSY_MAX), because the real runs last
# longer and some schemes cost more.
CAL_SCENARIO, CAL_SCHEME, CAL_DURATION_S, CAL_WARMUP_S = "cubic-udp", "afcd", 8.0, 2.0
CAL_RATES = [150.0, 100.0, 70.0, 50.0, 35.0, 25.0, 18.0, 12.0, 8.0, 5.0]
CAL_BUSY_MAX = 0.75
GLOBAL_DEFAULTS = {"rtt_ms": 20.0, "duration_s": 15.0, "warmup_s": 3.0}


def say(*a):
    print(*a, flush=True)


def run_params(args, name, overrides=None):
    """rtt/duration/warmup of a scenario: the command line, else overrides
    (name -> dict: the quick demo's shorter runs), else the scenario's own
    defaults, else the global ones; ecn when --ecn is given or the scenario
    is an ECN one."""
    d = dict(GLOBAL_DEFAULTS, **scenario.defaults(name))
    d.update((overrides or {}).get(name, {}))
    return {"rtt_ms": args.rtt if args.rtt is not None else d["rtt_ms"],
            "duration_s": args.duration if args.duration is not None else d["duration_s"],
            "warmup_s": args.warmup if args.warmup is not None else d["warmup_s"],
            "ecn": bool(args.ecn or d.get("ecn"))}


def previous(out_dir, name, scheme, repeat, rate):
    """The result JSON an earlier, interrupted invocation left for this run
    at this rate (--resume), or None: a missing, unreadable or other-rate
    file means the run is done again."""
    path = os.path.join(out_dir, "%s-%s%s.json" % (name, scheme,
                                                   "" if repeat is None else "-r%d" % repeat))
    try:
        with open(path) as fh:
            res = json.load(fh)
    except (OSError, ValueError):
        return None
    return res if res.get("rate_mbit") == rate else None


def run_many(runs, args, out_dir, rate, overrides=None, topos=None):
    """Every (name, scheme) of runs, args.repeat times, at rate Mbit/s;
    the results of the runs that finished. topos: a topo.Pool the runs take
    their topologies from (consecutive runs of one workload share one)."""
    results = []
    total = len(runs) * args.repeat
    i = 0
    for k in range(args.repeat):
        for name, scheme in runs:
            i += 1
            t0 = time.time()
            done = previous(out_dir, name, scheme, k + 1 if args.repeat > 1 else None, rate) \
                if args.resume else None
            if done is not None:
                say("[%d/%d] %s under %s%s: kept from an earlier run" % (
                    i, total, name, scheme, " (repeat %d)" % (k + 1) if args.repeat > 1 else ""))
                results.append(done)
                continue
            say("[%d/%d] %s under %s%s ..." % (i, total, name, scheme,
                                              " (repeat %d)" % (k + 1) if args.repeat > 1 else ""))
            try:
                for attempt in (1, 2):
                    res = scenario.run(name, scheme, rate_mbit=rate, buffer_bdp=args.buffer,
                                       target_ms=args.target, interval_ms=args.interval,
                                       out_dir=out_dir,
                                       repeat=k + 1 if args.repeat > 1 else None,
                                       topos=topos, **run_params(args, name, overrides))
                    if attempt == 2 or not validity.sender_failed(res):
                        break
                    say("    a sender reported nothing (%s): running it once more" %
                        "; ".join(res["invalid_reasons"]))
            except Exception as e:  # report and go on with the next run
                say("    failed: %s" % e)
                continue
            say("    %s  (%.0f s)" % (scenario.one_line(res), time.time() - t0))
            results.append(res)
    return results


def heaviest(names):
    """The workloads the calibration probes among the scenarios names: the
    one with the most UDP load relative to the rate and the one with the
    most UDP senders (each sender is a process of its own in the guest:
    4 flows at 0.5x cost more CPU than one at 3x), once each, in that
    order; [cubic-udp] if none has UDP."""
    udp = {n: [f for f in scenario._flows(scenario.SCENARIOS[n][2], 1.0) if f.proto == "udp"]
           for n in names}
    udp = {n: fl for n, fl in udp.items() if fl}
    if not udp:
        return [CAL_SCENARIO]
    def load(n):
        return sum(f.rate_mbit for f in udp[n])
    by_load = max(sorted(udp), key=load)
    by_senders = max(sorted(udp), key=lambda n: (len(udp[n]), load(n)))
    return [by_load] + ([by_senders] if by_senders != by_load else [])


def _probe_rate(rate, probes, records):
    """Every probe at rate, until one fails: True when all ran validly with
    CAL_BUSY_MAX of margin; each run's record appended to records."""
    for tag, what, run in probes:
        say("calibrate: %s at %g Mbit/s ..." % (what, rate))
        try:
            r = run(rate)
        except Exception as e:         # noqa: BLE001 (report, try the next rate)
            say("    failed: %s" % e)
            return False
        good = r["valid"] and r["cpu"]["guest_busy"] <= CAL_BUSY_MAX
        records.append(dict(tag, rate_mbit=rate, valid=r["valid"],
                            invalid_reasons=r["invalid_reasons"], cpu=r["cpu"],
                            timer_late_ms=r["timer_late_ms"],
                            senders={f["name"]: (f.get("client") or {}).get("sent_mbps")
                                     for f in r["flows"]}))
        say("    %s (guest %.0f %% busy)" % (
            ("valid" if good else "valid, but without margin (guest > %.0f %% busy)" %
             (100 * CAL_BUSY_MAX)) if r["valid"] else
            "invalid: " + "; ".join(r["invalid_reasons"]), 100 * r["cpu"]["guest_busy"]))
        if not good:
            return False
    return True


def highest_valid_rate(rates, probes, bisect=False):
    """The first of rates (highest first) at which every probe runs validly
    with CAL_BUSY_MAX of margin on the guest's CPU, or None if none does;
    and the record of every probe run, in order. A rate's remaining probes
    are skipped once one fails. probes: (tag, what, run) triples: tag a
    dict naming the probe in its record ({"workload": NAME}), what its
    name in the log, run(rate) one probe at rate Mbit/s returning
    testbed.scenario.run()'s result (an exception counts as invalid).
    bisect: take validity as falling with the rate and halve the rates
    left at each probe (3-4 probed rates of 10 instead of up to 10, for
    the 15-minute demo); else from the top down."""
    records = []
    if not bisect:
        for rate in rates:
            if _probe_rate(rate, probes, records):
                return rate, records
        return None, records
    lo, hi, best = 0, len(rates) - 1, None      # indices: rates[lo] is the highest left
    while lo <= hi:
        mid = (lo + hi) // 2
        if _probe_rate(rates[mid], probes, records):
            best, hi = rates[mid], mid - 1
        else:
            lo = mid + 1
    return best, records


def calibrate(out_dir, workloads=(CAL_SCENARIO,), bisect=False, topos=None):
    """The highest bottleneck rate (Mbit/s) at which this machine runs
    every one of workloads validly, with CAL_BUSY_MAX of margin on the
    guest's CPU (bisect: highest_valid_rate()'s); writes
    out_dir/calibration.json. topos: as run_many()'s."""
    def probe(workload):
        return lambda rate: scenario.run(workload, CAL_SCHEME, rate_mbit=rate, rtt_ms=20.0,
                                         duration_s=CAL_DURATION_S, warmup_s=CAL_WARMUP_S,
                                         topos=topos)
    best, probes = highest_valid_rate(
        CAL_RATES, [({"workload": w}, "%s under %s" % (w, CAL_SCHEME), probe(w))
                    for w in workloads], bisect=bisect)
    if best is None:
        best = CAL_RATES[-1]
        say("calibrate: no rate ran validly; using the lowest, %g Mbit/s" % best)
    cal = {"rate_mbit": best, "kernel": os.uname().release, "date": time.strftime("%Y-%m-%d %H:%M"),
           "workload": "%s under %s, %g s" % (", ".join(workloads), CAL_SCHEME, CAL_DURATION_S),
           "guest_busy_max": CAL_BUSY_MAX,
           "probes": probes}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "calibration.json"), "w") as fh:
        json.dump(cal, fh, indent=1)
    say("calibrate: this machine runs the workload validly at %g Mbit/s" % best)
    return best
