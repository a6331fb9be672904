"""Rank correlation between two rankings of the same runs: Kendall's tau and tau_AP.

Both take two score vectors over the same runs (higher ranks first), e.g. the runs'
means under two measures, or under two judgments versions after a rescore.

- :func:`kendall_tau` is ``scipy.stats.kendalltau`` (tau-b: ties in either ranking
  are accounted for), (concordant - discordant) / sqrt((P - T_x)(P - T_y)).
- :func:`tau_ap` is the AP correlation of Yilmaz, Aslam and Robertson (SIGIR 2008),
  which weighs swaps near the top more: with the runs ordered by the ranking under
  test (``estimate``), and C(i) the number of the i - 1 runs above position i that the
  ``reference`` also puts above the run at i,

      tau_AP = 2 / (N - 1) * sum_{i=2..N} C(i) / (i - 1) - 1.

  It is not symmetric: ``reference`` is the ranking taken as true. It ranges over
  [-1, 1] and equals 1 for identical orders and -1 for reversed ones. Ties (the
  definition has none) count as agreeing, whatever the order the runs are given in:
  runs tied in ``estimate`` are placed in ``reference``'s order, and a run above
  another that ``reference`` ties with it counts as correctly placed. Vectorised: one
  N x N comparison (N runs), fine for the thousands of runs a benchmark holds.

Example: reference (3, 2, 1) and estimate (3, 1, 2) give tau = 1/3 and
tau_AP = 2/2 * (1/1 + 1/2) - 1 = 0.5.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

__all__ = ["kendall_tau", "tau_ap"]


def _pair(reference: ArrayLike, estimate: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(reference, dtype=np.float64)
    y = np.asarray(estimate, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("the two rankings must score the same runs (1-d, same length)")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("a ranking contains NaN")
    return x, y


def kendall_tau(reference: ArrayLike, estimate: ArrayLike) -> float:
    """Kendall's tau-b between two score vectors (``scipy.stats.kendalltau``); NaN below 2 runs
    or when one ranking puts every run level."""
    x, y = _pair(reference, estimate)
    if x.size < 2:
        return math.nan
    return float(stats.kendalltau(x, y).statistic)


def tau_ap(reference: ArrayLike, estimate: ArrayLike) -> float:
    """AP correlation of ``estimate`` against ``reference`` (see the module docstring); NaN below 2 runs."""
    x, y = _pair(reference, estimate)
    count = x.size
    if count < 2:
        return math.nan
    # Estimate order, its ties in reference order; the reference scores in that order.
    truth = x[np.lexsort((-x, -y))]
    above = np.tril(truth[None, :] >= truth[:, None], k=-1)  # [i, j]: j above i in both
    correct = above.sum(axis=1)[1:]
    return float(2.0 / (count - 1) * np.sum(correct / np.arange(1, count)) - 1.0)
