# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The AFCD/FaLL testbed: network namespaces, bottleneck schemes, workloads
and scenarios (the experiments of the dissertation's ch. 3-4), run on this
kernel or in a virtme-ng VM. tools/afcd-testbed is its command line
(testbed.cli); tests/ only tests it.

  netns      namespaces, veth, nsenter, the loader's CLI (afcd, stats)
  abi        the lists of maps/afcd_maps.h (pins, algos, counters), parsed
  topo       dumbbell and other topologies
  bottleneck our programs over sch_fq, the kernel's AQMs under HTB
  workload   iperf3 flows, UDP, ping
  scenario   the scenario registry and one run -> result JSON
  validity   guest CPU, sender rates, timer lateness: was the run valid?
  plots      PNGs from results
  cli        list/check/calibrate/run/script/demo/plot
"""
