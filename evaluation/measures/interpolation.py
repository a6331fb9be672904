"""Interpolated precision: ``iprec_at_recall_*``, ``11pt_avg`` and the PR curve points.

Definition (the seed chapter's): the interpolated precision at recall level r
is the maximum precision at any rank where recall >= r. With R relevant
documents, recall reaches r when n relevant documents have been retrieved for
the smallest n with n / R >= r, i.e. ``n = ceil(r * R)``; the engine computes
that ceiling on exact fractions (``Fraction("0.1") * R``), so ``0.7 * 10`` is
7, not 7.000000000000001. That is the ``exact`` rule (:data:`MODES`, the
default). trec_eval counts n otherwise, and each of its rules is one mode:

- ``trec_eval-9`` (9.0.8, pytrec_eval, ir_measures): ``(long)(r * R + 0.9)``
  in C doubles, the ceiling except where ``r * R`` is just above an integer in
  decimal but just below in binary (R = 3 at 0.7: 2.0999... + 0.9 -> 2);
- ``trec_eval-10`` (10.0): ``lround(r * R)``, the nearest integer, halves away
  from zero (R = 474 at 0.1: 47, a recall of 0.0992).

Whatever the rule, the value at n is the best precision from the n-th relevant
retrieved document down, as trec_eval's loop finds it.

Edge cases: a level needing more relevant documents than were retrieved
scores 0; level 0 (n = 0) is the best precision anywhere in the ranking (0 if
nothing relevant was retrieved, NaN if nothing was retrieved: ``-M 0``, where
trec_eval divides 0 by 0 and prints ``-nan``); a need without relevant documents
scores 0. With a negative ``-l`` the non-pool and unjudged documents are hits but
not in ``num_rel_ret``, and trec_eval's count of the relevant found, taken down
from ``num_rel_ret`` at each hit from the bottom, is short by their number.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from evaluation.measures.ranking import Ranking

if TYPE_CHECKING:  # imported by the one function that builds a frame
    import pandas as pd

STANDARD_LEVELS = ("0.0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0")
#: the interpolation rules: the seed's exact definition, trec_eval 9.0.8's, 10.0's
MODES = ("exact", "trec_eval-9", "trec_eval-10")

__all__ = [
    "MODES",
    "STANDARD_LEVELS",
    "check_mode",
    "interpolated_curve",
    "interpolated_precision",
    "precision_recall_points",
]


def check_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`MODES`, else ValueError naming them."""
    if mode not in MODES:
        raise ValueError(f"interpolation must be one of {', '.join(MODES)}, not {mode!r}")
    return mode


def recall_cutoff(level: str, num_rel: np.ndarray, mode: str = "exact") -> np.ndarray:
    """How many relevant documents reach recall ``level`` (decimal text), per R, by ``mode``.

    ``exact``: ``ceil(level * R)`` on fractions; ``trec_eval-9``: C's
    ``(long)(atof(level) * R + 0.9)``; ``trec_eval-10``: C's
    ``lround(atof(level) * R)``. Never below 0.

    >>> [int(recall_cutoff("0.7", np.array([3]), m)[0]) for m in MODES]
    [3, 2, 2]
    """
    num_rel = np.asarray(num_rel, dtype=np.int64)
    if mode == "exact":
        fraction = Fraction(level)
        needed = -((-fraction.numerator * num_rel) // fraction.denominator)
    else:
        product = float(level) * num_rel.astype(np.float64)  # one rounding, as in C
        if mode == "trec_eval-9":
            needed = np.trunc(product + 0.9)
        else:  # lround: to nearest, halves away from zero (x - floor(x) is exact)
            size = np.abs(product)
            whole = np.floor(size)
            needed = np.copysign(whole + (size - whole >= 0.5), product)
        needed = needed.astype(np.int64)
    return np.maximum(needed, 0)


def _suffix_max(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Maximum of ``values`` from each element to the end of its group (the groups are
    contiguous: hits in need order). By doubling: after the pass with ``step``, each
    element holds the maximum of the ``2 * step`` elements from it, cut at its group's
    end; log2 of the longest group's passes over all needs at once (no loop over needs,
    no pandas groupby), exact as any maximum is."""
    out = values.copy()
    step = 1
    while step < len(out):
        same = group[step:] == group[:-step]
        if not same.any():  # no group is longer than step: all are done
            break
        np.maximum(out[:-step], np.where(same, out[step:], out[:-step]), out=out[:-step])
        step *= 2
    return out


def interpolated_precision(ranking: Ranking, levels: list[str]) -> np.ndarray:
    """Interpolated precision per need (rows) at each recall level (columns).

    ``levels`` are decimal strings ("0.1", ".25"), turned into numbers of
    relevant documents by the ranking's rule (:func:`recall_cutoff`). Example: a need with R = 15 whose relevant documents sit at
    ranks 1, 2, 6, 7, 9, 12, 13, 16, 18, 21, 23, 25 has 4/7 = 0.5714 at
    recall 0.2 (n = 3: the best precision from rank 6 on is 4/7 at rank 7)
    and 0 at recall 0.9 (n = 14 > 12 retrieved).
    """
    n_needs = ranking.n
    out = np.zeros((n_needs, len(levels)))
    hit_need, hit_rank, hit_count = ranking.hit_need, ranking.hit_rank, ranking.hit_count
    # trec_eval counts the relevant documents down from num_rel_ret, from the bottom of
    # the ranking, one less at each hit: hits beyond the judged ones (a negative -l)
    # shift the count by ``surplus``, and the first ``surplus`` hits are never reached
    surplus = ranking.unjudged_hits
    # best precision from the k-th relevant document down to the end of the ranking
    best_from = _suffix_max((hit_count - surplus[hit_need]) / hit_rank, hit_need)
    num_rel = ranking.num_rel
    num_hits = ranking.count(need=hit_need) - surplus
    first_hit = np.searchsorted(hit_need, np.arange(n_needs)) + surplus
    # nothing retrieved (-M 0): trec_eval's precision is 0 / 0, its level 0 value NaN
    empty = ranking.num_ret == 0
    for j, level in enumerate(levels):
        needed = recall_cutoff(level, num_rel, ranking.interpolation)
        ok = (needed <= num_hits) & (num_hits > 0) & ranking.has_run
        at = first_hit + np.maximum(needed, 1) - 1
        out[ok, j] = best_from[at[ok]]
        out[empty & (needed == 0), j] = np.nan
    return out


def eleven_point_average(values: np.ndarray) -> np.ndarray:
    """trec_eval's ``11pt_avg``: the iprec values added from the highest level down, / count."""
    total = np.zeros(values.shape[0])
    for j in range(values.shape[1] - 1, -1, -1):
        total = total + values[:, j]
    return total / values.shape[1] if values.shape[1] else total


def precision_recall_points(ranks: np.ndarray, num_rel: int) -> tuple[np.ndarray, np.ndarray]:
    """(recall, precision) at the rank of every relevant retrieved document.

    ``ranks``: 1-based ranks of the relevant retrieved documents (any order);
    ``num_rel``: R. The i-th relevant document at rank r_i gives
    (i / R, i / r_i). Empty arrays when nothing relevant was retrieved or R is 0.

    >>> precision_recall_points(np.array([1, 2, 6]), 15)[1].round(3).tolist()
    [1.0, 1.0, 0.5]
    """
    ranks = np.sort(np.asarray(ranks, dtype=np.int64))
    if num_rel <= 0 or len(ranks) == 0:
        return np.zeros(0), np.zeros(0)
    found = np.arange(1, len(ranks) + 1)
    return found / num_rel, found / ranks


def interpolated_curve(
    ranking: Ranking, levels: list[str] | tuple[str, ...] = STANDARD_LEVELS
) -> tuple[pd.DataFrame, pd.Series]:
    """The 11-point interpolated precision curve, per need and averaged over needs.

    Returns a DataFrame (index need_id, one column per recall level as a float)
    and the mean over needs (the summary curve trec_eval prints as
    ``iprec_at_recall_*`` for ``all``).
    """
    import pandas as pd

    values = interpolated_precision(ranking, list(levels))
    frame = pd.DataFrame(
        values,
        index=pd.Index(ranking.need_ids, name="need_id", dtype="str"),
        columns=[float(level) for level in levels],
    )
    mean = np.cumsum(values, axis=0)[-1] / len(values) if len(values) else np.zeros(len(levels))
    return frame, pd.Series(mean, index=frame.columns, name="mean")
