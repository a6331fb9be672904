"""Graded-gain measures: ``ndcg``, ``ndcg_cut_k``, ``rbp``, ``rbp_resid``.

Gains follow trec_eval (``gain_init.c``): a judged document's gain is its
relevance level, unless ``-m ndcg.level=gain,...`` overrides some levels;
documents outside the qrels or judged negative gain 0. ``ndcg_cut`` always
uses the raw levels (trec_eval ignores gain parameters and ``-l`` there).
The discount of rank r is ``log2(r + 1)``. The ideal ranking puts the
positive gains in decreasing order; ndcg is 0 when the ideal DCG is 0.
"""

from __future__ import annotations

import numpy as np

from evaluation.ranking import Ranking


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
    gains = np.zeros(len(r.rel))
    judged = r.rel >= 0
    gains[judged] = table[r.rel[judged]]
    return gains


def _ideal(
    r: Ranking, table: np.ndarray, positions: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The ideal gain vector of every need, flattened: (need of each entry, gain)."""
    levels = r.rel_levels.shape[1]
    gain = table[:levels]
    order = np.argsort(-gain, kind="stable")
    order = order[gain[order] > 0]
    counts = r.rel_levels[:, order]  # needs x positive levels, best gain first
    need = np.repeat(np.repeat(np.arange(r.n), len(order)), counts.ravel())
    values = np.repeat(np.tile(gain[order], r.n), counts.ravel())
    return need, values


def _discount(rank: np.ndarray) -> np.ndarray:
    return np.log2((rank + 1).astype(np.float64))


def ndcg(r: Ranking, pairs: list[tuple[str, float]], name: str) -> dict[str, np.ndarray]:
    """ndcg = DCG / ideal DCG over the whole ranking, DCG = sum gain(d) / log2(rank + 1).

    Example: relevance 1 at rank 2 only, R = 1: (1 / log2 3) / 1 = 0.6309.
    """
    from evaluation.ranking import within_group_position

    table = _gain_table(r, pairs)
    gains = _row_gains(r, table)
    nonzero = gains != 0
    dcg = r.total(gains[nonzero] / _discount(r.rank[nonzero]), r.need[nonzero])
    ideal_need, ideal_gain = _ideal(r, table)
    position = within_group_position(ideal_need) + 1
    idcg = r.total(ideal_gain / _discount(position), ideal_need)
    out = np.zeros(r.n)
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return {name: out}


def ndcg_cut(r: Ranking, cutoffs: list[int]) -> dict[str, np.ndarray]:
    """ndcg_cut_k = DCG@k / ideal DCG@k with gain = relevance level (raw, no parameters)."""
    from evaluation.ranking import within_group_position

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
    top_level = np.where(r.rel_levels > 0, np.arange(r.rel_levels.shape[1]), -1).max(axis=1)
    gains = np.zeros(len(r.rel))
    judged = r.rel >= 0
    raw = base[r.rel[judged]]
    # trec_eval normalises over the gains of levels 0 .. the need's highest level
    need_levels = top_level[r.need[judged]]
    low = np.zeros(r.n)
    high = np.zeros(r.n)
    for level in range(len(base)):
        present = top_level >= level
        low = np.where(present, np.minimum(low, base[level]), low)
        high = np.where(present, np.maximum(high, base[level]), high)
    lo, hi = low[r.need[judged]], high[r.need[judged]]
    scale = (lo < 0) | (hi > 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        gains[judged] = np.where(scale & (need_levels >= 0), (raw - lo) / (hi - lo), raw)
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
