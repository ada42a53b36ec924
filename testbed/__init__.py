# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The AFCD/FaLL testbed: network namespaces, bottleneck schemes, workloads
and scenarios (the experiments of the dissertation's ch. 3-4), run on this
kernel or in a virtme-ng VM. `python3 -m testbed` (tools/afcd-testbed) is
its command line; tests/ only tests it.

  cli          the command line: list/check/calibrate/run/script/demo/plot/reproduce
  vm           the Debian kernels in /boot; a command re-run in virtme-ng
  runs         runs one after the other, resumable; the calibration of the rate
  report       aggregation over repeats, the demo's table and targets, plots
  reproduce    the dissertation's figures: plan, calibrate per cell, run, judge
  figures      each figure's workload, schemes and pre-registered checks
  judge        the checks applied to a figure's runs: verdicts and report
  scenario     the scenario registry and one run -> result JSON
  topo         dumbbell and other topologies
  bottleneck   our programs over sch_fq, the kernel's AQMs under HTB
  workload     iperf3 flows, UDP, ping
  shortflows   the short-flow workloads of ch. 4 (flow completion times)
  qsample      the bottleneck's queue sampled by tools/afcd-qsample
  validity     guest CPU, sender rates, timer lateness: was the run valid?
  stats        percentile, Jain's index
  plots        PNGs from results
  netns        namespaces, veth, nsenter, the loader's CLI (afcd, stats)
  abi          the lists of maps/afcd_maps.h (pins, algos, counters), parsed
  bench_loader the loader's CPU cost (`make bench`, second half)
"""
