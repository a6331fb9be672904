"""Discriminative power: the share of run pairs a benchmark finds significantly different.

Sakai (SIGIR 2006): for one measure, test every pair of the m runs (m(m - 1)/2 pairs)
over the benchmark's needs, correct the p-values over that family, and count the pairs
with p < alpha. The achieved significance level (ASL) curve is the pairs' p-values
sorted ascending against their rank: the further left it stays under alpha, the more
the measure discriminates.

The tests and corrections are :mod:`evaluation.significance`'s (paired t, Wilcoxon,
randomization; none, Holm, Benjamini-Hochberg), with their pairing and tie rules: the
platform passes the raw p-values it stored per pair (:func:`discriminative_power`);
from a score matrix :func:`pair_p_values` runs :func:`~evaluation.significance.
compare_all_pairs`. For the t-test on large matrices (1,000 runs x 7,000 needs is
3.5e9 differences) :func:`pairwise_t_p` gets every pair's t from the runs' Gram matrix,
var(a - b) = var(a) + var(b) - 2 cov(a, b), and recomputes with the significance
package the pairs where that subtraction loses precision (near-identical runs).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from evaluation.significance.corrections import CORRECTIONS, P_FLOOR, adjust_p
from evaluation.significance.families import compare_all_pairs
from evaluation.significance.paired import _t_block, paired_differences

__all__ = ["TESTS", "asl_curve", "discriminative_power", "pair_p_values", "pairwise_t_p"]

TESTS = ("t", "wilcoxon", "randomization")
#: Relative variance below which the Gram-matrix t is recomputed from the differences.
_CANCELLATION = 1e-6


def discriminative_power(p: ArrayLike, *, alpha: float = 0.05, correction: str = "none") -> dict:
    """Share of pairs significant at ``alpha`` after ``correction`` over all the pairs given.

    ``p``: the raw p-value of every pair (NaN: not tested, left out of the family).
    Returns ``pairs`` (tested), ``significant`` (adjusted p < alpha) and ``share``
    (significant / pairs; NaN for no pair). Example: ``[0.01, 0.04, 0.03]`` at 0.05 gives
    3/3 uncorrected, 1/3 with Holm.
    """
    if not 0 < alpha < 1:
        raise ValueError("alpha must lie in (0, 1)")
    if correction not in CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}; use one of {', '.join(CORRECTIONS)}")
    adjusted = adjust_p(np.asarray(p, dtype=np.float64), correction)
    tested = adjusted[~np.isnan(adjusted)]
    significant = int(np.count_nonzero(tested < alpha))
    pairs = int(tested.size)
    return {
        "pairs": pairs,
        "significant": significant,
        "share": significant / pairs if pairs else float("nan"),
        "alpha": alpha,
        "correction": correction,
    }


def asl_curve(p: ArrayLike, correction: str = "none", points: int | None = None) -> np.ndarray:
    """The ASL curve: adjusted p-values sorted ascending (pair rank 1, 2, ... on the x axis).

    NaN p-values are left out. ``points`` thins the curve to at most that many evenly
    spaced ranks (always keeping the first and last) for plotting; returns a 2-column
    array (rank starting at 1, p).
    """
    adjusted = adjust_p(np.asarray(p, dtype=np.float64), correction)
    values = np.sort(adjusted[~np.isnan(adjusted)])
    ranks = np.arange(1, values.size + 1)
    if points is not None and values.size > points >= 2:
        keep = np.unique(np.linspace(0, values.size - 1, points).round().astype(np.int64))
        values, ranks = values[keep], ranks[keep]
    return np.column_stack([ranks, values])


def pairwise_t_p(scores: pd.DataFrame | ArrayLike) -> np.ndarray:
    """Two-sided paired t-test p of every pair (a < b in column order, ``np.triu_indices``).

    Equal (to about 1e-9 relative) to ``compare_all_pairs(...)["t_p"]``, in the same pair
    order, at the cost of one matrix product instead of n x pairs differences.
    """
    x = np.asarray(scores, dtype=np.float64)
    n, m = x.shape
    left, right = np.triu_indices(m, 1)
    if n < 2:
        return np.full(left.size, np.nan)
    centred = x - x.mean(axis=0)
    gram = centred.T @ centred  # (n - 1) cov
    spread = np.diag(gram)
    var_sum = spread[left] + spread[right]
    ss_d = var_sum - 2 * gram[left, right]
    means = x.mean(axis=0)
    mean_d = means[left] - means[right]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean_d / np.sqrt(np.maximum(ss_d, 0) / ((n - 1) * n))
        p = 2.0 * stats.t.sf(np.abs(t), n - 1)
    # Cancellation: near-identical runs; recompute those pairs from their differences.
    fragile = np.flatnonzero(~(ss_d > _CANCELLATION * var_sum))
    for start in range(0, fragile.size, 4096):
        cols = fragile[start : start + 4096]
        d = paired_differences(x[:, left[cols]], x[:, right[cols]])
        p[cols] = _t_block(d)["t_p"]
    return np.clip(p, P_FLOOR, 1.0)


def pair_p_values(
    scores: pd.DataFrame,
    test: str = "t",
    *,
    permutations: int = 10_000,
    seed: int = 0,
) -> np.ndarray:
    """Raw p of every pair of the needs x runs matrix under ``test`` (``TESTS``).

    ``"t"`` is :func:`pairwise_t_p`; ``"wilcoxon"`` and ``"randomization"`` go through
    :func:`evaluation.significance.compare_all_pairs`, pair order as there.
    """
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}; use one of {', '.join(TESTS)}")
    if test == "t":
        return pairwise_t_p(scores)
    frame = scores if isinstance(scores, pd.DataFrame) else pd.DataFrame(np.asarray(scores))
    pairs = compare_all_pairs(
        frame, permutations=permutations if test == "randomization" else 0, seed=seed
    )
    return pairs[f"{test}_p"].to_numpy()
