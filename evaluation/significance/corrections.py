"""Multiple-comparison procedures: Holm, Benjamini-Hochberg, and Tukey's HSD blocked by need.

A leaderboard asks a family of questions at once ("which pairs differ?", "which runs
differ from the leader?"). Raw p-values are computed once per pair and stored; the
family is chosen when a page or an export asks, and the correction is applied over
exactly that family (`adjust_p`). Tukey's HSD (`tukey_hsd_blocked`) is different: it is
a simultaneous procedure for all pairs of one set of runs, so its p-values are already
family-wise and depend on every run in the set.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import interpolate, optimize, special, stats

CORRECTIONS = ("holm", "bh", "none")

#: The smallest p-value ever returned: the smallest normal double, never 0.
P_FLOOR = float(np.finfo(np.float64).tiny)


def p_text(p: float, decimals: int, alpha: float = 0.05) -> str:
    """``p`` with ``decimals`` decimals, and more where rounding would carry a p below
    ``alpha`` up to it: 0.04996 is "0.04996", not "0.0500" beside a verdict of
    "significant" (a p at or above alpha cannot round below it)."""
    text = f"{p:.{decimals}f}"
    while p < alpha and float(text) >= alpha and decimals < 20:
        decimals += 1
        text = f"{p:.{decimals}f}"
    return text


def adjust_p(p: ArrayLike, method: str = "holm") -> np.ndarray:
    """Adjust p-values for multiple comparisons over the family given.

    The family is exactly the non-NaN entries of ``p``: m is their count, NaN entries
    (tests that were not run) stay NaN and do not enlarge the family. Output order is
    input order.

    - ``"holm"``: Holm's step-down (1979), controls the family-wise error rate under any
      dependence. With p sorted ascending p_(1) <= ... <= p_(m):
      adj_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)).
    - ``"bh"``: Benjamini-Hochberg (1995), controls the false discovery rate (for
      independent or positively dependent tests): adj_(i) = min_{j >= i} min(1, m p_(j) / j).
    - ``"none"``: the raw p-values, copied.

    Example: ``adjust_p([0.01, 0.04, 0.03], "holm")`` is ``[0.03, 0.06, 0.06]``;
    with ``"bh"`` it is ``[0.03, 0.04, 0.04]``.
    """
    p = np.asarray(p, dtype=np.float64)
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r}; use one of {', '.join(CORRECTIONS)}")
    ok = ~np.isnan(p)
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise ValueError("p-values must lie in [0, 1]")
    out = p.copy()
    if method == "none":
        return out
    q = p[ok]
    m = q.size
    if m == 0:
        return out
    order = np.argsort(q, kind="stable")
    ranked = q[order]
    if method == "holm":
        adjusted = np.maximum.accumulate((m - np.arange(m)) * ranked)
    else:  # bh
        adjusted = np.minimum.accumulate((m * ranked / np.arange(1, m + 1))[::-1])[::-1]
    back = np.empty(m)
    back[order] = np.minimum(adjusted, 1.0)
    out[ok] = back
    return out


def tukey_hsd_blocked(scores: pd.DataFrame, *, confidence: float = 0.95) -> pd.DataFrame:
    """Tukey's HSD for all pairs of runs, on the two-way ANOVA blocked by need.

    ``scores`` has one row per need and one column per run (build it with
    ``paired_matrix``: a need a run did not answer is 0). The model is
    x_ij = mu + need_i + run_j + e_ij (no replication), so need difficulty is removed
    from the error term, unlike ``scipy.stats.tukey_hsd``, which is one-way and treats
    the runs as independent samples although they share needs. With n needs and k runs:

        MSE = sum_ij (x_ij - xbar_i. - xbar_.j + xbar..)^2 / ((n - 1)(k - 1))
        q_ab = |xbar_.a - xbar_.b| / sqrt(MSE / n)
        p_ab = P(Q_{k, (n-1)(k-1)} >= q_ab)   (Q: the studentized range)

    and the simultaneous interval is mean_diff +- Q_{confidence} sqrt(MSE / n). These
    p-values already hold family-wise over all k(k-1)/2 pairs of this set of runs, so
    they change when a run is added; do not correct them again. With k = 2 the test is
    the paired t-test (q = sqrt(2) |t|). A difference of means within 1e-12 of zero has
    p = 1; a perfect additive fit (MSE = 0) gives p at the floor for every other pair.

    P(Q >= q) is ``scipy.stats.studentized_range.sf`` computed for all pairs at once
    (``_studentized_range_sf``; within 1e-9 relative of it where scipy is accurate, and
    right in the far tail where scipy is not), and Q_{confidence} by root finding on it.
    scipy integrates each p separately, 6-9 ms per pair: 60-70 s for all 8,256 TREC-8
    pairs, about 0.05 s here (0.01 s for 50 runs).

    Returns one row per pair (a, b) in column order, a before b: ``a, b, n, mean_diff,
    ci_low, ci_high, q_statistic, p``.
    """
    x = scores.to_numpy(dtype=np.float64)
    n, k = x.shape
    if k < 2 or n < 2:
        raise ValueError("Tukey's HSD needs at least 2 needs and 2 runs")
    if np.isnan(x).any():
        raise ValueError("scores contain NaN; build the matrix with paired_matrix")
    run_means = x.mean(axis=0)
    residual = x - x.mean(axis=1, keepdims=True) - run_means + x.mean()
    df = (n - 1) * (k - 1)
    mse = float((residual**2).sum() / df)
    if mse <= 1e-24:  # a perfect additive fit: float noise only
        mse = 0.0
    se = np.sqrt(mse / n)
    a, b = np.triu_indices(k, 1)
    diff = np.round(run_means[a] - run_means[b], 12)
    diff[np.abs(diff) <= 1e-12] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(diff == 0, 0.0, np.abs(diff) / se)
    p = np.ones_like(q)
    todo = q > 0
    p[todo] = _studentized_range_sf(q[todo], k, df)
    half = _studentized_range_isf(1 - confidence, k, df) * se
    names = scores.columns
    return pd.DataFrame(
        {
            "a": names[a],
            "b": names[b],
            "n": n,
            "mean_diff": diff,
            "ci_low": diff - half,
            "ci_high": diff + half,
            "q_statistic": q,
            "p": np.clip(p, P_FLOOR, 1.0),
        }
    )


# The studentized range distribution, vectorised over q.
#
# scipy.stats.studentized_range integrates numerically for each value separately (5-10 ms
# each, 8,256 TREC-8 pairs in about a minute); Tukey's HSD needs one p per pair, all with
# the same k and df. Here the range survival for k is tabulated once (cached per k) and
# every q is then one fixed Gauss-Legendre sum over the chi mixture.

_W_MAX = 60.0  # log P(range >= 60) < -850 for every k <= 10,000: past it p underflows anyway
_W_STEP = 0.05  # spacing of the table of log P(range >= w)
_Z_NODES = 128  # Gauss-Legendre nodes over the normal density (the range, infinite df)
_S_NODES = 96  # Gauss-Legendre nodes over log s (the chi mixture, finite df)
_LOG_TAIL = 50.0  # log s is integrated where its density is within e^-50 of its peak
_RANGE_ONE = 1e-9  # below w_one, P(range >= w) = 1 within this
_INFINITE_DF = 100_000  # like scipy: df above this uses the infinite-df formula


@lru_cache(maxsize=4)
def _gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on [-1, 1] (an eigenvalue problem: computed once)."""
    return np.polynomial.legendre.leggauss(n)


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 - e^x) for x <= 0, accurate at both ends (Maechler 2012)."""
    with np.errstate(divide="ignore"):
        return np.where(x > -np.log(2), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def _log_range_sf(w: np.ndarray, k: int, z_floor: float) -> np.ndarray:
    """log P(R >= w) for the range R of k standard normals (infinite df), each w >= 0.

    With z the largest of the k values, P(R < w) = k ∫ φ(z) (Φ(z) - Φ(z - w))^(k-1) dz, and
    k ∫ φ(z) Φ(z)^(k-1) dz = 1, so with r = Φ(z - w) / Φ(z)

        P(R >= w) = k ∫ φ(z) Φ(z)^(k-1) (1 - (1 - r)^(k-1)) dz,

    evaluated in logs (``special.log_ndtr``, ``log1p``, ``expm1``): no difference of
    nearly equal numbers, so the relative accuracy holds down to 1e-300. Gauss-Legendre
    over z in [max(w/2 - 9, z_floor), w/2 + 9]: for large w the integrand is a bump at
    w/2 of width about 1/sqrt(2); below ``z_floor`` the density of the largest value,
    k φ Φ^(k-1), is under e^-60.
    """
    x, weight = _gauss_legendre(_Z_NODES)
    low = np.maximum(w / 2 - 9.0, z_floor)
    half = (w / 2 + 9.0 - low) / 2
    z = (low + half)[:, None] + half[:, None] * x
    log_cdf = special.log_ndtr(z)
    log_r = special.log_ndtr(z - w[:, None]) - log_cdf
    # log(1 - (1 - r)^(k-1)); for tiny r it is log((k-1) r), which exp() cannot reach
    log_term = np.where(
        log_r < -40,
        np.log(k - 1) + log_r,
        _log1mexp(np.minimum((k - 1) * _log1mexp(log_r), -1e-300)),
    )
    log_f = np.log(k) - z**2 / 2 - np.log(2 * np.pi) / 2 + (k - 1) * log_cdf + log_term
    return special.logsumexp(log_f + np.log(weight * half[:, None]), axis=1)


@lru_cache(maxsize=16)
def _range_table(k: int) -> tuple[interpolate.PPoly, float]:
    """An interpolating spline of log P(R >= w) on [0, 60] for k runs, and w_one.

    Degree 7 on steps of 0.05: within 1e-10 of the quadrature (a cubic spline is off by
    up to 2e-8 near w = 0), and as fast to evaluate once converted to piecewise
    polynomials.

    ``w_one`` is the largest grid w with P(R >= w) > 1 - 1e-9: below it the range
    survival is 1 (0 for k <= 3, about 1.4 for k = 50).
    """

    def log_density_of_max(z: float) -> float:  # log k φ(z) Φ(z)^(k-1), plus 60
        return np.log(k) - z * z / 2 - np.log(2 * np.pi) / 2 + (k - 1) * special.log_ndtr(z) + 60

    z_floor = optimize.brentq(log_density_of_max, -40.0, 10.0)
    w = np.arange(0.0, _W_MAX + _W_STEP / 2, _W_STEP)
    log_sf = np.minimum(_log_range_sf(w, k, z_floor), 0.0)
    below = np.flatnonzero(log_sf < np.log1p(-_RANGE_ONE))
    w_one = float(w[max(below[0] - 1, 0)]) if below.size else 0.0
    return interpolate.PPoly.from_spline(interpolate.make_interp_spline(w, log_sf, k=7)), w_one


@lru_cache(maxsize=64)
def _log_s_window(df: float) -> tuple[float, float]:
    """Where the density of u = log s, s = sqrt(chi2_df / df), is within e^-50 of its peak.

    log density(u) - its peak (at u = 0) = df u - df (e^(2u) - 1) / 2.
    """

    def drop(u: float) -> float:
        return df * u - df * np.expm1(2 * u) / 2 + _LOG_TAIL

    return optimize.brentq(drop, -_LOG_TAIL / df - 10, 0.0), optimize.brentq(drop, 0.0, 10.0)


def _studentized_range_sf(q: np.ndarray, k: int, df: float) -> np.ndarray:
    """P(Q >= q) for the studentized range Q of k means with df error degrees of freedom.

    The same distribution as ``scipy.stats.studentized_range.sf(q, k, df)``, for all q at
    once. Q = R / s, R the range of k standard normals and s = sqrt(chi2_df / df)
    independent of it, so

        P(Q >= q) = ∫ f_df(s) P(R >= q s) ds,
        f_df(s) = 2 (df/2)^(df/2) / Γ(df/2) s^(df-1) exp(-df s^2 / 2).

    P(R >= w) (``_log_range_sf``) is tabulated once per k on w in [0, 60] (step 0.05) and
    read through a degree-7 spline of its log. The s integral is taken over u = log s.
    Below u = log(w_one / q), P(R >= q s) = 1 (within 1e-9) and that part is the
    chi-square cdf (``special.gammainc``); above u = log(60 / q) it is below e^-850. The
    rest is one 96-node Gauss-Legendre sum, in logs, over the span where the integrand is
    within e^-50 of its largest value, found first on a 97-point grid that reaches from
    the density's own e^-50 window down into its s^df tail (where a huge q puts the mass).
    For df > 100,000 (scipy's switch, too) it is the infinite-df P(R >= q). q <= 0 gives
    1, NaN gives NaN, and no p is below ``P_FLOOR`` (q = inf, or past the table); df < 1
    (never reached by Tukey's HSD, where df >= 1) is left to scipy.

    Accuracy (tests): against scipy over k in {2, 3, 5, 10, 50, 129, 200}, df from 2 to
    infinity and q up to p = 1e-12, typically 1e-8 relative and at worst 6e-6 where
    scipy's p >= 1e-6. Below that scipy is not reliable: it gives 0 for p < 2e-8 at
    df = 2, is off by 1e-4 to 3e-3 relative at p ~ 1e-8 with df >= 2,401, and by 38% at
    k = 5, df = 5, q = 275 (p = 3.80e-10; scipy 2.75e-10). There this is checked against
    exact values: for k = 2, Q = sqrt(2) |t_df| (relative error <= 1e-10 for df >= 2 and
    2e-8 at df = 1, down to p = 1e-300), and nested adaptive quadrature for larger k.

    Example: ``_studentized_range_sf(np.array([3.0]), 3, 10)`` is 0.13498 (the
    tables' 5% point at k = 3, df = 10 is 3.877).
    """
    q = np.asarray(q, dtype=np.float64)
    if df < 1:
        return np.clip(stats.studentized_range.sf(q, k, df), P_FLOOR, 1.0)
    out = np.where(np.isnan(q), np.nan, np.where(q <= 0, 1.0, 0.0))
    todo = (q > 0) & np.isfinite(q)
    spline, w_one = _range_table(k)
    if df > _INFINITE_DF:
        w = q[todo]
        out[todo] = np.exp(
            np.where(w <= _W_MAX, np.minimum(spline(np.minimum(w, _W_MAX)), 0), -np.inf)
        )
        return np.clip(out, P_FLOOR, 1.0)
    q = q[todo][:, None]
    log_q = np.log(q)
    lowest, highest = _log_s_window(df)
    with np.errstate(divide="ignore"):
        one = np.log(w_one) - log_q  # -inf when w_one = 0
    # u < one: P(R >= q e^u) = 1, so that part is P(s < e^one) = P(chi2_df < df e^(2 one))
    below = special.gammainc(df / 2, df * np.exp(2 * np.minimum(one, 300.0)) / 2)
    log_norm = np.log(2) + df / 2 * np.log(df / 2) - special.gammaln(df / 2)

    def log_mixand(u: np.ndarray) -> np.ndarray:  # log f_df(e^u) e^u P(R >= q e^u)
        w = q * np.exp(u)
        log_range = np.where(w <= _W_MAX, np.minimum(spline(np.minimum(w, _W_MAX)), 0), -np.inf)
        return log_norm + df * u - df * np.exp(2 * u) / 2 + log_range

    # First a coarse look: for a large q (a p far below 1e-12) the mass moves out of the
    # window of s alone, down to where q s is about 1 and below, as far as the s^df
    # tail of the chi density reaches. Then the Gauss-Legendre sum over the part of that
    # span where the integrand is within e^-50 of its largest value.
    high = np.minimum(highest, np.log(_W_MAX) - log_q)
    low = np.minimum(np.maximum(one, np.minimum(lowest, -log_q - _LOG_TAIL / df - 1)), high)
    t = np.linspace(0.0, 1.0, _S_NODES + 1)
    step = (high - low) / _S_NODES
    coarse = log_mixand(low + (high - low) * t)
    keep = coarse >= coarse.max(axis=1, keepdims=True) - _LOG_TAIL
    first = np.argmax(keep, axis=1)[:, None] - 1
    last = _S_NODES - np.argmax(keep[:, ::-1], axis=1)[:, None] + 1
    low, high = low + np.maximum(first, 0) * step, low + np.minimum(last, _S_NODES) * step
    x, weight = _gauss_legendre(_S_NODES)
    half = (high - low) / 2
    with np.errstate(divide="ignore"):  # half = 0 when q is past the table: no s term
        terms = log_mixand(low + half + half * x) + np.log(weight) + np.log(half)
    out[todo] = below[:, 0] + np.exp(special.logsumexp(terms, axis=1))
    return np.clip(out, P_FLOOR, 1.0)


def _studentized_range_isf(alpha: float, k: int, df: float) -> float:
    """The q with P(Q >= q) = alpha (the critical value of Tukey's HSD), by root finding."""

    def excess(q: float) -> float:
        p = _studentized_range_sf(np.array([q]), k, df)[0]
        return float(np.log(max(p, P_FLOOR)) - np.log(alpha))

    high = 8.0
    while excess(high) > 0:
        high *= 4
    return optimize.brentq(excess, 0.0, high, xtol=1e-12, rtol=1e-13)
