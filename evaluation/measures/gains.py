"""Graded-gain measures: ``ndcg``, ``ndcg_cut_k``, ``rbp``, ``rbp_resid``.

Gains follow trec_eval (``gain_init.c``): a judged document's gain is its
relevance level, unless ``-m ndcg.level=gain,...`` overrides some levels;
documents outside the qrels or judged negative gain 0. ``ndcg_cut`` always
uses the raw levels (trec_eval ignores gain parameters and ``-l`` there).
The discount of rank r is ``log2(r + 1)``, the C library's (:func:`log2_of`). The
ideal ranking puts the positive gains in decreasing order; ndcg is 0 when the
ideal DCG is 0. Running sums add one term at a time, as trec_eval's loops do
(:func:`~evaluation.measures.experimental._group_cumsum`), so the doubles are
trec_eval's, not just the printed digits. trec_eval's experimental gain measures (G,
ndcg_rel, Rndcg) are in :mod:`evaluation.measures.experimental`.
"""

from __future__ import annotations

import math

import numpy as np

from evaluation.measures.ranking import NONPOOL, UNJUDGED, Ranking, within_group_position


def _gain_table(r: Ranking, pairs: list[tuple[str, float]]) -> np.ndarray:
    """Gain per non-negative level (columns of ``rel_levels``), parameters applied."""
    levels = r.rel_levels.shape[1]
    overrides = {}
    for key, value in pairs:
        try:
            overrides[int(key)] = float(value)
        except ValueError:
            continue  # trec_eval skips non-integer names (e.g. rbp's p=)
    top = max([levels - 1, *[k for k in overrides if k >= 0]])
    table = np.arange(top + 1, dtype=np.float64)
    for level, gain in overrides.items():
        if level >= 0:
            table[level] = gain
    return table


def _row_gains(r: Ranking, table: np.ndarray) -> np.ndarray:
    """Each row's gain (0 for the unjudged and the non-pool), read-only: kept on the
    ranking per gain table, so ndcg, G, Rndcg and ndcg_rel with the default gains make
    it once (a 7M-row gather, ~0.03 s each). One lookup in the table with the two
    negative codes put in front."""
    kept = r.__dict__.setdefault("_row_gains", {})
    key = table.tobytes()
    if key not in kept:
        lookup = np.concatenate((np.zeros(-min(NONPOOL, UNJUDGED)), table))
        gains = lookup[r.rel - min(NONPOOL, UNJUDGED)]
        gains.setflags(write=False)
        kept[key] = gains
    return kept[key]


def _glibc_msort(items: list, compare) -> list:
    """glibc 2.36's qsort for small arrays: top-down merge sort, left half n // 2,
    ties taken from the left. Needed because trec_eval sorts gains with
    ``(int)(g1 - g2)``, which calls gains less than 1 apart equal."""
    if len(items) <= 1:
        return list(items)
    half = len(items) // 2
    left, right = _glibc_msort(items[:half], compare), _glibc_msort(items[half:], compare)
    out = []
    while left and right:
        out.append(left.pop(0) if compare(left[0], right[0]) <= 0 else right.pop(0))
    return out + left + right


def _setup_gains(num_levels: int, pairs: list[tuple[str, float]]) -> list[tuple[int, float, bool]]:
    """trec_eval's gains array (gain_init.c) for a need with levels 0 .. num_levels - 1:
    (level, gain, holds the level's count) in trec_eval's sorted order, lowest first."""
    entries: list[tuple[int, float, bool]] = []
    named: set[int] = set()
    for key, value in pairs:
        try:
            level = int(key)
        except ValueError:
            continue  # not a level (e.g. rbp's p=)
        entries.append((level, float(value), level not in named))
        named.add(level)
    entries += [(i, float(i), True) for i in range(num_levels) if i not in named]
    return _glibc_msort(entries, lambda a, b: int(a[1] - b[1]))


def _ideal(
    r: Ranking, table: np.ndarray, pairs: list[tuple[str, float]] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The ideal gain vector of every need, flattened: (need of each entry, gain).

    As trec_eval builds it: walk the sorted gains array from its top, each
    level repeated by its number of judged documents, stopping at the first
    level with documents and a gain <= 0 (or at once if the top gain is <= 0).
    With default gains that is simply the positive levels, best first.
    """
    levels = r.rel_levels.shape[1]
    if not pairs:
        gain = table[:levels]
        order = np.argsort(-gain, kind="stable")
        order = order[gain[order] > 0]
        counts = r.rel_levels[:, order]  # needs x positive levels, best gain first
        need = np.repeat(np.repeat(np.arange(r.n), len(order)), counts.ravel())
        values = np.repeat(np.tile(gain[order], r.n), counts.ravel())
        return need, values
    present = r.rel_levels > 0
    num_levels = np.where(present.any(axis=1), levels - np.argmax(present[:, ::-1], axis=1), 0)
    needs_out, gains_out = [], []
    for size in np.unique(num_levels):  # one gains array per distinct number of levels
        group = np.flatnonzero(num_levels == size)
        walk = _setup_gains(int(size), pairs)[::-1]
        if not walk or walk[0][1] <= 0:
            continue
        counts = np.zeros((len(group), len(walk)), np.int64)
        for j, (level, _, holds) in enumerate(walk):
            if holds and level < size:
                counts[:, j] = r.rel_levels[group, level]
        gain = np.array([g for _, g, _ in walk])
        stops = (counts > 0) & (gain <= 0)
        alive = np.cumsum(stops, axis=1) == 0
        counts = counts * alive * (gain > 0)
        needs_out.append(np.repeat(np.repeat(group, len(walk)), counts.ravel()))
        gains_out.append(np.repeat(np.tile(gain, len(group)), counts.ravel()))
    if not needs_out:
        return np.zeros(0, np.int64), np.zeros(0)
    need, values = np.concatenate(needs_out), np.concatenate(gains_out)
    order = np.argsort(need, kind="stable")
    return need[order], values[order]


_libm_log2 = np.frompyfunc(math.log2, 1, 1)
_LOG2 = np.zeros(2)  # _LOG2[k] = the C library's log2(k), grown on demand
_LOG2_TABLE_MAX = 1 << 24  # past this, log2_of computes the distinct values only


def log2_of(k: np.ndarray) -> np.ndarray:
    """log2 of positive integers as the C library computes it (trec_eval's ``log2``).

    numpy's own vectorised log2 differs from glibc's in the last bit for a few
    integers (1621, 3242, 6484 ...), so ranks past 1,620 would shift ndcg by an
    ulp. A table of ``math.log2(k)`` up to the largest k asked for: one call per
    distinct rank, not per document.
    """
    global _LOG2
    k = np.asarray(k, dtype=np.int64)
    top = int(k.max(initial=1))
    if top > _LOG2_TABLE_MAX:  # huge gains (G with a gain of 1e16): the distinct k alone
        distinct, at = np.unique(k, return_inverse=True)
        return _libm_log2(distinct.astype(np.float64)).astype(np.float64)[at.reshape(k.shape)]
    if top >= len(_LOG2):
        size = max(top + 1, 2 * len(_LOG2), 1024)
        _LOG2 = _libm_log2(np.arange(size, dtype=np.float64)[1:]).astype(np.float64)
        _LOG2 = np.concatenate(([-np.inf], _LOG2))
    return _LOG2[k]


def _discount(rank: np.ndarray) -> np.ndarray:
    return log2_of(rank + 1)


def ndcg(r: Ranking, pairs: list[tuple[str, float]], name: str) -> dict[str, np.ndarray]:
    """ndcg = DCG / ideal DCG over the whole ranking, DCG = sum gain(d) / log2(rank + 1).

    Example: relevance 1 at rank 2 only, R = 1: (1 / log2 3) / 1 = 0.6309.
    """
    table = _gain_table(r, pairs)
    gains = _row_gains(r, table)
    nonzero = gains != 0
    dcg = r.total(gains[nonzero] / _discount(r.rank[nonzero]), r.need[nonzero])
    ideal_need, ideal_gain = _ideal(r, table, pairs)
    position = within_group_position(ideal_need) + 1
    idcg = r.total(ideal_gain / _discount(position), ideal_need)
    if name.startswith("ideal_dcg"):
        return {name: idcg}
    if name.startswith("dcg"):
        return {name: dcg}
    out = np.zeros(r.n)
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return {name: out}


def ndcg_cut(r: Ranking, cutoffs: list[int]) -> dict[str, np.ndarray]:
    """ndcg_cut_k = DCG@k / ideal DCG@k with gain = relevance level (raw, no parameters)."""
    positive = np.flatnonzero(r.rel > 0)
    need, rank = r.need[positive], r.rank[positive]
    terms = r.rel[positive] / _discount(rank)
    table = np.arange(r.rel_levels.shape[1], dtype=np.float64)
    ideal_need, ideal_gain = _ideal(r, table)
    position = within_group_position(ideal_need) + 1
    ideal_terms = ideal_gain / _discount(position)
    out = {}
    for k in cutoffs:
        dcg = r.total(terms[rank <= k], need[rank <= k])
        idcg = r.total(ideal_terms[position <= k], ideal_need[position <= k])
        value = dcg.copy()
        np.divide(dcg, idcg, out=value, where=idcg > 0)
        out[f"ndcg_cut_{k}"] = value
    return out


def _persistence(pairs: list[tuple[str, float]]) -> float:
    p = 0.9
    for key, value in pairs:
        if key == "p":
            p = float(value)
    return p


def _powers(p: float, upto: int) -> np.ndarray:
    """p**0, p**1, ... by repeated multiplication, bit-identical to trec_eval's loop."""
    factors = np.full(upto + 1, p)
    factors[0] = 1.0
    return np.cumprod(factors)


def rbp(r: Ranking, pairs: list[tuple[str, float]], name: str) -> dict[str, np.ndarray]:
    """Rank-biased precision (Moffat & Zobel): (1 - p) sum gain(d) p**(rank - 1), p = 0.9.

    Gains are scaled into [0, 1] per need when some gain is above 1,
    ``(g - min) / (max - min)`` over the need's levels (and 0), as trec_eval.
    """
    p = _persistence(pairs)
    base = _gain_table(r, pairs)
    present = r.rel_levels > 0
    levels = r.rel_levels.shape[1]
    num_levels = np.where(present.any(axis=1), levels - np.argmax(present[:, ::-1], axis=1), 0)
    # trec_eval scales the gains into [0, 1] over the need's gains array; its min and
    # max start uninitialised, which on the builds we compare with behaves as 0
    low, high = np.zeros(r.n), np.zeros(r.n)
    for size in np.unique(num_levels):
        values = [g for _, g, _ in _setup_gains(int(size), pairs)]
        low[num_levels == size] = min([0.0, *values])
        high[num_levels == size] = max([0.0, *values])
    gains = np.zeros(len(r.rel))
    judged = r.rel >= 0
    raw = base[r.rel[judged]]
    lo, hi = low[r.need[judged]], high[r.need[judged]]
    scale = (lo < 0) | (hi > 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        gains[judged] = np.where(scale, (raw - lo) / (hi - lo), raw)
    powers = _powers(p, int(r.rank.max()) if len(r.rank) else 0)
    nonzero = gains != 0
    total = r.total(gains[nonzero] * powers[r.rank[nonzero] - 1], r.need[nonzero])
    return {name: (1.0 - p) * total}


def rbp_resid(r: Ranking, pairs: list[tuple[str, float]], name: str) -> dict[str, np.ndarray]:
    """RBP residual: p**num_ret + (1 - p) sum over unjudged retrieved of p**(rank - 1); 0 if none."""
    p = _persistence(pairs)
    powers = _powers(p, int(max(r.num_ret.max(initial=0), 1)))
    unjudged = r.rel < 0
    total = r.total(powers[r.rank[unjudged] - 1], r.need[unjudged])
    any_unjudged = r.count(unjudged) > 0
    value = powers[r.num_ret] + (1 - p) * total
    return {name: np.where(any_unjudged, value, 0.0)}
