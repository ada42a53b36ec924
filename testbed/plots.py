# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Plots from the testbed's result JSON (matplotlib, PNG).

  scenario_figure: one PNG per scenario: goodput per flow per scheme
                   (bars), queueing-delay CDF per scheme, throughput of
                   each flow over time per scheme.
  summary_figure:  Jain's index and utilization per scheme (bars).
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _cdf(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs, [(i + 1) / n for i in range(n)]


def scenario_figure(results, path):
    """results: list of run results of one scenario (one per scheme)."""
    if not results:
        return None
    sc = results[0]
    n = len(results)
    fig = plt.figure(figsize=(14, 4 + 1.9 * ((n + 2) // 3)))
    gs = fig.add_gridspec(1 + (n + 2) // 3, 3, height_ratios=[2.2] + [1.4] * ((n + 2) // 3))
    ax = fig.add_subplot(gs[0, 0:2])
    names = [f["name"] for f in sc["flows"]]
    width = 0.8 / max(len(names), 1)
    for k, name in enumerate(names):
        fl = [next((f for f in r["flows"] if f["name"] == name), {}) for r in results]
        vals = [f.get("goodput_mbps") or 0 for f in fl]
        errs = [f.get("goodput_sd") or 0 for f in fl]
        xs = [i + (k - (len(names) - 1) / 2) * width for i in range(n)]
        bars = ax.bar(xs, vals, width=width, label=name, yerr=errs if any(errs) else None,
                      capsize=2)
        for b, r in zip(bars, results):   # invalid runs measured the machine
            if not r.get("valid", True):
                b.set_hatch("//")
                b.set_alpha(0.5)
    ax.axhline(sc["rate_mbit"] / max(len(names), 1), color="grey", ls="--", lw=1,
               label="fair share")
    ax.set_xticks(range(n))
    ax.set_xticklabels(["%s\nJain %.2f, util %.0f%%%s" % (
        r["label"], r["jain"] or 0, 100 * (r["utilization"] or 0),
        "" if r.get("valid", True) else "\nINVALID") for r in results], fontsize=8)
    ax.set_ylabel("goodput (Mbit/s)")
    reps = max(r.get("repeats", 1) for r in results)
    ax.set_title("%s: goodput per flow (%g Mbit/s, base RTT %g ms%s; hatched: invalid)" %
                 (sc["description"], sc["rate_mbit"], sc["rtt_ms"],
                  ", mean ± sd of %d runs" % reps if reps > 1 else ""), fontsize=9)
    ax.legend(fontsize=8, ncol=min(len(names) + 1, 6))
    ax2 = fig.add_subplot(gs[0, 2])
    for r in results:
        qd = r.get("queue_delay_samples_ms") or []
        if qd:
            xs, ys = _cdf(qd)
            ax2.plot(xs, ys, label=r["label"])
    ax2.set_xlabel("queueing delay (ms, ping RTT - base RTT)")
    ax2.set_ylabel("CDF")
    ax2.set_xscale("symlog", linthresh=1.0)
    ax2.set_title("queueing delay under load", fontsize=10)
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=8)
    for i, r in enumerate(results):
        a = fig.add_subplot(gs[1 + i // 3, i % 3])
        for f in r["flows"]:
            ts = [(a0 + b0) / 2 for a0, b0, _ in f["series"]]
            a.plot(ts, [bps / 1e6 for _, _, bps in f["series"]], label=f["name"], lw=1)
        a.set_title(r["label"], fontsize=9)
        a.set_ylim(0, r["rate_mbit"] * 1.6)
        a.set_xlabel("time (s)", fontsize=8)
        a.set_ylabel("Mbit/s", fontsize=8)
        a.tick_params(labelsize=7)
        a.grid(alpha=0.3)
        if i == 0:
            a.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def summary_figure(results, path, title="Jain's index and utilization per scheme"):
    """Bar chart of Jain's index and utilization, grouped by scenario."""
    scenarios = sorted({r["scenario"] for r in results})
    schemes = []
    for r in results:
        if r["label"] not in schemes:
            schemes.append(r["label"])
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    width = 0.8 / max(len(schemes), 1)
    for ax, key, lab in ((axes[0], "jain", "Jain's fairness index"),
                         (axes[1], "utilization", "link utilization")):
        for k, s in enumerate(schemes):
            rs = [next((r for r in results if r["scenario"] == sc and r["label"] == s), {})
                  for sc in scenarios]
            bars = ax.bar([i + (k - (len(schemes) - 1) / 2) * width
                           for i in range(len(scenarios))],
                          [r.get(key) or 0 for r in rs], width=width, label=s)
            for b, r in zip(bars, rs):   # invalid runs measured the machine
                if r and not r.get("valid", True):
                    b.set_hatch("//")
                    b.set_alpha(0.5)
        ax.set_xticks(range(len(scenarios)))
        ax.set_xticklabels(scenarios, fontsize=7, rotation=20)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel(lab)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(title + " (hatched: invalid runs)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
