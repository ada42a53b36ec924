# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Summary statistics of a run's samples, one definition each for the
runs, their validity and the judge."""
import statistics


def percentile(xs, p):
    """The p-th percentile (p an integer, 1..99) of xs with linear
    interpolation between the closest ranks (numpy's default, R's type 7),
    or None for no samples."""
    xs = list(xs)
    if len(xs) < 2:
        return float(xs[0]) if xs else None
    return statistics.quantiles(xs, n=100, method="inclusive")[p - 1]


def jain(xs):
    """Jain's fairness index (sum x)^2 / (n sum x^2) of the values that
    are not None: 1/n (one takes all) .. 1 (equal), None without any."""
    xs = [x for x in xs if x is not None]
    if not xs or sum(x * x for x in xs) == 0:
        return None
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))
