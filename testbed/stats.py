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


# Student's t distribution, its 0.975 quantile by degrees of freedom
# 1..10 (any table of it, e.g. the NIST/SEMATECH e-Handbook of
# Statistical Methods, sec. 1.3.6.7.2).
T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)


def ci95_sd_factor(n):
    """k such that mean +- k * sd is the two-sided 95 % confidence interval
    of the mean of n samples of a normal quantity, sd the sample standard
    deviation (n - 1 in its denominator): t(0.975, n - 1) / sqrt(n).
    n in 2..11; None outside (no interval from one sample; past the
    table)."""
    if not 2 <= n <= len(T975) + 1:
        return None
    return T975[n - 2] / n ** 0.5
