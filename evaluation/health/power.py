"""How small a difference a benchmark can detect: power of the paired t-test.

The variance of the per-need difference between two runs is estimated once for the
whole benchmark, as Webber, Moffat and Zobel (CIKM 2008) and Sakai ("Topic set size
design", IRJ 2016) do: from the two-way ANOVA without replication over the needs x runs
matrix of one measure, sigma_d^2 = 2 V_E, where

    V_E = sum_ij (x_ij - xbar_i. - xbar_.j + xbar_..)^2 / ((n - 1)(m - 1))

is the residual mean square (n needs, m runs). Everything else is the two-sided paired
t-test at level alpha on n needs (df = n - 1): a true difference delta gives the
noncentral t statistic with noncentrality lambda = sqrt(n) delta / sigma_d, so

    power(delta) = P(T' >= t_{1-alpha/2}) + P(T' <= -t_{1-alpha/2}),  T' ~ nct(n - 1, lambda)

(``scipy.stats.nct``; both tails, as in Sakai's Excel tools). The minimum detectable
difference (MDD) is the delta whose power is exactly 1 - beta, solved on that
distribution (not the normal approximation); the topic set size is the smallest n whose
power for a given delta reaches 1 - beta, with sigma_d held fixed.

Edge cases: fewer than 2 needs or 2 runs leave V_E undefined (NaN, and so the MDD);
sigma_d = 0 (every run differs from every other by a constant) detects any
difference > 0 (MDD 0, power 1).

Example: n = 50, sigma_d = 0.1, alpha = 0.05, power 0.8 gives an MDD of 0.0404 (to 4 decimals).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import optimize, stats

__all__ = [
    "minimum_detectable_difference",
    "residual_variance",
    "t_test_power",
    "topic_set_size",
]

#: The largest number of needs ``topic_set_size`` searches before answering None.
MAX_NEEDS = 1_000_000


def residual_variance(scores: pd.DataFrame | ArrayLike) -> float:
    """V_E, the residual mean square of the two-way ANOVA without replication.

    ``scores`` is the needs x runs matrix (rows needs, columns runs, no NaN). Returns
    NaN for fewer than 2 needs or 2 runs. Example: ``[[1, 2], [3, 5]]`` gives 0.25.
    """
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError("scores must be a needs x runs matrix")
    if np.isnan(x).any():
        raise ValueError("scores contain NaN")
    n, m = x.shape
    if n < 2 or m < 2:
        return math.nan
    residual = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + x.mean()
    return float(np.einsum("ij,ij->", residual, residual) / ((n - 1) * (m - 1)))


def _check(alpha: float, power: float | None = None) -> None:
    if not 0 < alpha < 1:
        raise ValueError("alpha must lie in (0, 1)")
    if power is not None and not 0 < power < 1:
        raise ValueError("power must lie in (0, 1)")


def t_test_power(delta: ArrayLike, n: ArrayLike, sigma_d: float, alpha: float = 0.05) -> np.ndarray:
    """Power of the two-sided paired t-test on ``n`` needs to detect a true difference ``delta``.

    Broadcasts over ``delta`` and ``n``. Both tails of ``nct(n - 1, sqrt(n) |delta| / sigma_d)``
    beyond +-t_{1-alpha/2, n-1}. ``n < 2`` gives NaN; ``sigma_d = 0`` gives 1 for delta != 0.
    """
    _check(alpha)
    delta, n = np.broadcast_arrays(np.abs(np.asarray(delta, dtype=np.float64)), np.asarray(n))
    n = n.astype(np.float64)
    out = np.full(delta.shape, np.nan)
    ok = n >= 2
    if sigma_d == 0:
        out[ok] = np.where(delta[ok] > 0, 1.0, alpha)
        return out
    df = n[ok] - 1
    critical = stats.t.isf(alpha / 2, df)
    noncentrality = np.sqrt(n[ok]) * delta[ok] / sigma_d
    upper = stats.nct.sf(critical, df, noncentrality)
    lower = stats.nct.cdf(-critical, df, noncentrality)
    # scipy's noncentral t can return NaN far in a tail (df = 3, lambda = 40): there the
    # lower tail is below 1e-30 and the upper one is 1.
    lower = np.where(np.isnan(lower), 0.0, lower)
    upper = np.where(np.isnan(upper) & (noncentrality > critical), 1.0, upper)
    out[ok] = np.minimum(upper + lower, 1.0)
    return out


def minimum_detectable_difference(
    n: int, sigma_d: float, alpha: float = 0.05, power: float = 0.8
) -> float:
    """The smallest true difference the paired t-test on ``n`` needs detects with ``power``.

    Solved exactly: the root in delta of ``t_test_power(delta, n) = power`` (Brent's
    method; power increases with delta). NaN when n < 2 or sigma_d is NaN; 0 when
    sigma_d = 0.
    """
    _check(alpha, power)
    if n < 2 or not math.isfinite(sigma_d):
        return math.nan
    if sigma_d == 0:
        return 0.0
    if power <= alpha:
        return 0.0

    def gap(delta: float) -> float:
        return float(t_test_power(delta, n, sigma_d, alpha)) - power

    high = sigma_d
    while gap(high) < 0:
        high *= 2
    return float(optimize.brentq(gap, 0.0, high, xtol=1e-12, rtol=1e-12))


def topic_set_size(
    delta: float, sigma_d: float, alpha: float = 0.05, power: float = 0.8
) -> int | None:
    """The smallest number of needs n >= 2 whose paired t-test detects ``delta`` with ``power``.

    sigma_d is held fixed (Sakai's topic set size design). Power increases with n, so
    the answer is found by doubling then bisection. None when delta = 0 or more than
    ``MAX_NEEDS`` needs would be required; 2 when sigma_d = 0.
    """
    _check(alpha, power)
    if not math.isfinite(sigma_d):
        return None
    if sigma_d == 0:
        return 2 if delta else None
    if delta == 0:
        return None

    def enough(n: int) -> bool:
        return bool(t_test_power(delta, n, sigma_d, alpha) >= power)

    low, high = 1, 2  # enough(low) is False by convention (n = 1 has no test)
    while not enough(high):
        low, high = high, high * 2
        if high > MAX_NEEDS:
            return None
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return high
