"""Graded-gain measures: ``ndcg``, ``ndcg_cut_k``, ``rbp``, ``rbp_resid``.

Gains follow trec_eval (``gain_init.c``): a judged document's gain is its
relevance level, unless ``-m ndcg.level=gain,...`` overrides some levels;
documents outside the qrels (level -1) or judged negative (-2) gain 0 unless a
parameter names their level (``-m ndcg.-1=0.5``). A level named twice takes, in
the run, the gain get_gain finds first in the need's sorted gains array, and
its documents count in the ideal at the first one named. ``ndcg_cut`` always
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
import re
from dataclasses import dataclass

import numpy as np

from evaluation.measures.ranking import (
    DENSE_GRADES,
    NONPOOL,
    UNJUDGED,
    Ranking,
    within_group_position,
)

#: gains arrays up to this long are sorted exactly as trec_eval's qsort sorts them
FULL_SORT_LEVELS = 1 << 12
_INT_MIN = -(1 << 31)


def _c_int(x: float) -> int:
    """A double converted to C's ``int`` as x86-64 does it (``cvttsd2si``): truncated,
    and ``INT_MIN`` when out of range or NaN, which is what ``comp_rel_gain`` returns
    for gains 2**31 or more apart."""
    if x != x or not -(2.0**31) < x < 2.0**31:
        return _INT_MIN
    return math.trunc(x)


def _glibc_msort(items: list, compare) -> list:
    """glibc 2.36's qsort for small arrays: top-down merge sort, left half n // 2,
    ties taken from the left. Needed because trec_eval sorts gains with
    ``(int)(g1 - g2)``, which calls gains less than 1 apart equal."""
    if len(items) <= 1:
        return list(items)
    half = len(items) // 2
    left, right = _glibc_msort(items[:half], compare), _glibc_msort(items[half:], compare)
    out, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        if compare(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def _named(pairs: list[tuple[str, float]]) -> list[tuple[int, float]]:
    """The (level, gain) parameters in order; trec_eval skips names that are not
    integers (rbp's ``p=``, its ``valid_int``) and reads the others with ``atol``, which
    holds a level past 64 bits at the largest (or smallest) long."""
    named = []
    for key, value in pairs:
        if re.fullmatch(r"[-+]?[0-9]+", key):
            level = min(max(int(key), -(1 << 63)), (1 << 63) - 1)
            named.append((level, float(value)))
    return named


def _setup_gains(
    top: int, pairs: list[tuple[str, float]], grades: np.ndarray | None = None
) -> list[tuple[int, float, bool]]:
    """trec_eval's gains array (gain_init.c) for a need with levels 0 .. ``top``:
    (level, gain, holds the level's count) in trec_eval's sorted order, lowest first.
    The parameters come first, in their order (a level named twice: the first holds its
    count), then each level not named, with its own value as gain.

    ``grades``: the only levels any need has documents at. Levels without documents
    change nothing but the sort, and only when ``comp_rel_gain`` is not a consistent
    order (gains that are not whole numbers, or 2**31 apart): then the whole array is
    sorted as trec_eval sorts it, up to :data:`FULL_SORT_LEVELS` levels, and past that
    (trec_eval needs a quadratic setup there and never answers) the gains are put in
    order of value.
    """
    named = _named(pairs)
    entries: list[tuple[int, float, bool]] = []
    seen: set[int] = set()
    for level, gain in named:
        entries.append((level, gain, level not in seen))
        seen.add(level)
    values = [gain for _, gain in named]
    consistent = all(g.is_integer() for g in values) and (
        max([top, 0, *values]) - min([0.0, *values]) < 2.0**31
    )
    if grades is None or (not consistent and top < FULL_SORT_LEVELS):
        entries += [(i, float(i), True) for i in range(top + 1) if i not in seen]
        return _glibc_msort(entries, lambda a, b: _c_int(a[1] - b[1]))
    entries += [(int(i), float(i), True) for i in grades[grades <= top] if i not in seen]
    return sorted(entries, key=lambda entry: entry[1])  # stable, as the merge sort is


@dataclass
class Gains:
    """The gains of one request, as trec_eval's get_gain gives them to every need.

    ``tops``: the distinct top grades of the needs (:attr:`Ranking.top_grade`), and
    ``walks`` their sorted gains arrays (:func:`_setup_gains`); ``top_of``: each need's
    index into them.
    ``tables``: rows of gains of ``UNJUDGED``, ``NONPOOL`` and each of the ranking's
    grades (the first entry with that level, 0 where none), ``table_of``: each need's
    row. The rows differ only when a level is named twice (the sort can then pick either
    gain first), so with no parameters, or none named twice, there is one row.
    ``named``: the levels the parameters name."""

    tops: np.ndarray
    walks: list[list[tuple[int, float, bool]]]
    top_of: np.ndarray
    tables: np.ndarray
    table_of: np.ndarray
    named: set[int]
    parameters: bool


def _gains(r: Ranking, pairs: list[tuple[str, float]]) -> Gains:
    """The :class:`Gains` of ``pairs`` (trec_eval's ``-m ndcg.level=gain,...``) on ``r``."""
    tops, top_of = np.unique(r.top_grade, return_inverse=True)
    walks = [_setup_gains(int(top), pairs, r.grades) for top in tops]
    values = np.concatenate(([UNJUDGED, NONPOOL], r.grades))
    rows = np.zeros((len(tops), len(values)))
    for k, walk in enumerate(walks):
        first: dict[int, float] = {}
        for level, gain, _ in walk:
            first.setdefault(level, gain)
        rows[k] = [first.get(int(v), 0.0) for v in values]
        # a grade past this top is no document's of these needs: the largest top's gain
        rows[k, 2:][r.grades > tops[k]] = np.nan
    if len(rows):
        rows = np.where(np.isnan(rows), rows[-1], rows)
        rows[np.isnan(rows)] = 0.0  # a grade of a need without run lines only
    tables, table_of = np.unique(rows, axis=0, return_inverse=True)
    if not len(tables):
        tables = np.zeros((1, len(values)))
    return Gains(
        tops=tops,
        walks=walks,
        top_of=top_of.reshape(-1),
        tables=tables,
        table_of=table_of.reshape(-1),
        named={level for level, _ in _named(pairs)},
        parameters=bool(_named(pairs)),
    )


def _row_gains(r: Ranking, gains: Gains) -> np.ndarray:
    """Each row's gain, read-only: kept on the ranking per gain tables, so ndcg, G, Rndcg
    and ndcg_rel with the default gains make it once (a 7M-row gather, ~0.03 s each).
    Grades below :data:`~evaluation.measures.ranking.DENSE_GRADES` index a table by
    ``rel + 2`` (the two negative codes put in front); larger ones are searched for."""
    kept = r.__dict__.setdefault("_row_gains", {})
    key = gains.tables.tobytes() + gains.table_of.tobytes()
    if key not in kept:
        offset = -min(NONPOOL, UNJUDGED)
        top = int(r.grades[-1]) if len(r.grades) else -1
        if top < DENSE_GRADES:
            lookup = np.zeros((len(gains.tables), top + 1 + offset))
            lookup[:, :offset] = gains.tables[:, :offset]
            lookup[:, r.grades + offset] = gains.tables[:, offset:]
            at = r.rel + offset
        else:
            lookup = gains.tables
            values = np.concatenate(([UNJUDGED, NONPOOL], r.grades))
            at = np.searchsorted(values, r.rel)
        if len(lookup) == 1:
            row_gains = lookup[0][at]
        else:  # a level named twice: each need's own gains array
            row_gains = lookup[gains.table_of[r.need], at]
        row_gains.setflags(write=False)
        kept[key] = row_gains
    return kept[key]


def _ideal(r: Ranking, gains: Gains) -> tuple[np.ndarray, np.ndarray]:
    """The ideal gain vector of every need, flattened: (need of each entry, gain).

    As trec_eval builds it: walk the sorted gains array from its top, each
    level repeated by its number of judged documents, stopping at the first
    level with documents and a gain <= 0 (or at once if the top gain is <= 0).
    With default gains that is simply the positive grades, best first. A level
    named only by a parameter (a negative one, or one no document has) holds no
    documents.
    """
    if not gains.parameters:
        order = np.flatnonzero(r.grades > 0)[::-1]
        counts = r.rel_levels[:, order]  # needs x positive grades, best first
        need = np.repeat(np.repeat(np.arange(r.n), len(order)), counts.ravel())
        values = np.repeat(np.tile(r.grades[order].astype(np.float64), r.n), counts.ravel())
        return need, values
    needs_out, gains_out = [], []
    for k, top in enumerate(gains.tops):  # one gains array per distinct top grade
        group = np.flatnonzero(gains.top_of == k)
        walk = gains.walks[k][::-1]
        if not walk or walk[0][1] <= 0:
            continue
        level = np.array([lv for lv, _, _ in walk], np.int64)
        column = np.searchsorted(r.grades, level)
        holds = np.array([h for _, _, h in walk]) & (level >= 0) & (level <= top)
        holds &= column < len(r.grades)
        holds[holds] &= r.grades[column[holds]] == level[holds]
        counts = np.zeros((len(group), len(walk)), np.int64)
        counts[:, holds] = r.rel_levels[np.ix_(group, column[holds])]
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
    table = _gains(r, pairs)
    gains = _row_gains(r, table)
    nonzero = gains != 0
    dcg = r.total(gains[nonzero] / _discount(r.rank[nonzero]), r.need[nonzero])
    ideal_need, ideal_gain = _ideal(r, table)
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
    ideal_need, ideal_gain = _ideal(r, _gains(r, []))
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
    table = _gains(r, pairs)
    # trec_eval scales the gains into [0, 1] over the need's gains array; its min and
    # max start uninitialised, which on the builds we compare with behaves as 0. A level
    # without documents is in that array too: the largest one not named sets the max.
    low, high = np.zeros(len(table.tops)), np.zeros(len(table.tops))
    for k, top in enumerate(table.tops):
        values = [g for _, g, _ in table.walks[k]]
        unnamed = next((i for i in range(int(top), -1, -1) if i not in table.named), 0)
        low[k], high[k] = min([0.0, *values]), max([0.0, float(unnamed), *values])
    # a row whose level is in the gains array takes its scaled gain; get_gain gives
    # any other (non-pool or unjudged, not named) 0
    has = r.rel >= 0
    for level in table.named:
        if level < 0:
            has |= r.rel == level
    raw = _row_gains(r, table)[has]
    lo, hi = low[table.top_of[r.need[has]]], high[table.top_of[r.need[has]]]
    scale = (lo < 0) | (hi > 1)
    gains = np.zeros(len(r.rel))
    with np.errstate(divide="ignore", invalid="ignore"):
        gains[has] = np.where(scale, (raw - lo) / (hi - lo), raw)
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
