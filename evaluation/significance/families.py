"""Families of pairs: many runs paired over one set of needs, and their corrections.

:func:`paired_matrix` builds the needs x runs matrix (a need a run did not answer
scores 0, as ``trec_eval -c``); :func:`compare_all_pairs` tests every pair of it and
:func:`compare_one_against_many` only a new run against the others (the incremental
path for an upload). Each pair's numbers are those of
:func:`evaluation.significance.paired.compare_pair` with the same seed, whichever
path computed them (see that module's docstring for the tests themselves).

Raw p-values are what the platform stores per pair; corrections for multiple
comparisons (``adjust_p``: Holm by default, Benjamini-Hochberg on request) are applied
over the family a page asks about, since that family grows with every new run. Note
that with B permutations a randomization p cannot go below 1/(B + 1): Holm over m pairs
can then find nothing once m / (B + 1) > alpha (8,256 TREC-8 pairs, B = 10,000).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from evaluation.significance.corrections import CORRECTIONS, adjust_p
from evaluation.significance.paired import P_COLUMNS, compare_blocks, paired_differences

__all__ = [
    "adjust_frame",
    "compare_all_pairs",
    "compare_one_against_many",
    "paired_matrix",
]


def paired_matrix(per_need: Mapping[str, pd.Series], needs: Sequence[str]) -> pd.DataFrame:
    """Pair the per-need scores of several runs over one set of needs.

    ``per_need`` maps a run name to its per-need scores (a Series indexed by need id);
    ``needs`` is the benchmark's set (the qrels needs with a relevant document). Returns
    a needs x runs DataFrame: rows ``needs`` in the order given, columns the runs in
    mapping order. A need a run did not answer is 0.0 (trec_eval -c); needs outside
    ``needs`` are ignored. Need ids are compared as strings. A NaN score or a need
    listed twice for one run is an error.
    """
    index = pd.Index([str(need) for need in needs], name="need_id")
    if index.has_duplicates:
        raise ValueError("needs contain duplicates")
    columns = {}
    for name, series in per_need.items():
        series = series.set_axis(series.index.astype(str))  # 401 and "401" are one need
        if series.index.has_duplicates:
            raise ValueError(f"run {name!r} has a need listed twice")
        if series.isna().any():
            raise ValueError(f"run {name!r} has a NaN score")
        columns[name] = series.astype(np.float64).reindex(index, fill_value=0.0)
    return pd.DataFrame(columns, index=index, columns=list(per_need))


def _as_values(scores: pd.DataFrame) -> np.ndarray:
    x = scores.to_numpy(dtype=np.float64)
    if np.isnan(x).any():
        raise ValueError("scores contain NaN; build the matrix with paired_matrix")
    return x


def adjust_frame(pairs: pd.DataFrame, correction: str = "holm") -> pd.DataFrame:
    """Add ``*_p_adjusted`` next to each raw p column, over the rows given as one family."""
    out = pairs.copy()
    for key in P_COLUMNS:
        out[f"{key}_adjusted"] = adjust_p(out[key].to_numpy(), correction)
    return out


def compare_all_pairs(
    scores: pd.DataFrame,
    *,
    permutations: int = 10_000,
    seed: int = 0,
    correction: str = "holm",
) -> pd.DataFrame:
    """Compare every pair of runs of a needs x runs matrix (see ``paired_matrix``).

    One row per pair (a, b), a before b in column order, with ``a``, ``b``, the keys of
    ``PAIR_KEYS``, and ``t_p_adjusted``, ``wilcoxon_p_adjusted``,
    ``randomization_p_adjusted``: each test corrected (``"holm"``, ``"bh"`` or
    ``"none"``) over the family of all k(k-1)/2 pairs. Per-pair numbers do not depend on
    the other runs; the adjusted ones do.
    """
    if correction not in CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}")
    x = _as_values(scores)
    left, right = np.triu_indices(x.shape[1], 1)
    out = compare_blocks(
        lambda cols: paired_differences(x[:, left[cols]], x[:, right[cols]]),
        left.size,
        x.shape[0],
        permutations,
        seed,
    )
    names = scores.columns
    frame = pd.DataFrame({"a": names[left], "b": names[right], **out})
    return adjust_frame(frame, correction)


def compare_one_against_many(
    new: pd.Series | np.ndarray,
    others: pd.DataFrame,
    *,
    name: str = "new",
    permutations: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Compare one new run against each run of ``others`` (needs x runs), only those pairs.

    The incremental path for an upload: old pairs are not recomputed. A Series is
    aligned to ``others.index`` (every need must be present); an array must be in the
    row order of ``others``. One row per other run, a = ``name``, b = that run,
    d = new - other, raw p-values only (correct them with ``adjust_frame`` over the
    family a page asks about). Each row equals what ``compare_pair`` and
    ``compare_all_pairs`` give for that pair with the same seed.
    """
    x = _as_values(others)
    if isinstance(new, pd.Series):
        missing = others.index.difference(new.index)
        if len(missing):
            raise ValueError(f"new run lacks needs {list(missing[:5])}; use paired_matrix")
        new = new.reindex(others.index)
    y = np.asarray(new, dtype=np.float64)
    if y.shape != (x.shape[0],):
        raise ValueError("new must have one score per row of others")
    if np.isnan(y).any():
        raise ValueError("new contains NaN")
    out = compare_blocks(
        lambda cols: paired_differences(y[:, None], x[:, cols]),
        x.shape[1],
        x.shape[0],
        permutations,
        seed,
    )
    return pd.DataFrame({"a": name, "b": others.columns, **out})
