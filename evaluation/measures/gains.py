"""Graded-gain measures: ``ndcg``, ``ndcg_cut_k``, ``rbp``, ``rbp_resid``.

Gains follow trec_eval (``gain_init.c``): a judged document's gain is its
relevance level, unless ``-m ndcg.level=gain,...`` overrides some levels;
documents outside the qrels or judged negative gain 0. ``ndcg_cut`` always
uses the raw levels (trec_eval ignores gain parameters and ``-l`` there).
The discount of rank r is ``log2(r + 1)``, the C library's (:func:`log2_of`). The
ideal ranking puts the positive gains in decreasing order; ndcg is 0 when the
ideal DCG is 0. Running sums add one term at a time, as trec_eval's loops do
(:func:`_group_cumsum`), so the doubles are trec_eval's, not just the printed digits.
"""

from __future__ import annotations

import math

import numpy as np

from evaluation.measures.ranking import NONPOOL, UNJUDGED, Ranking, within_group_position
from evaluation.trec.columns import run_starts


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


# --------------------------------------------------- trec_eval's experimental gain measures


def _group_cumsum(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Running sum inside each group (groups contiguous), one addition per element as
    trec_eval's loops add, so bit-identical to them.

    Not pandas' groupby cumsum: it compensates its sums (Kahan) and so misses
    trec_eval's doubles in the last bit (ndcg_rel and Rndcg did, on a quarter of
    the needs). ``np.cumsum`` adds sequentially; it runs once per position
    across all groups (or once per group, when there are fewer groups than the
    longest group has elements): min(groups, longest) numpy calls, no loop over
    documents. Groups all of one length take a single 2-D ``np.cumsum`` (the G of
    7,000 needs x 1,000 documents: ~0.5 s -> ~0.05 s for each of its two sums). Padding
    ragged groups to one length was tried: no faster than the loop at 500-1,000 a need.
    """
    out = np.array(values, dtype=np.float64)
    if len(out) == 0:
        return out
    starts = run_starts(group)
    ends = np.append(starts[1:], len(out))
    longest = int((ends - starts).max())
    if len(starts) * longest == len(out):  # a row per group; cumsum adds in order, in place
        rows = out.reshape(len(starts), longest)
        np.cumsum(rows, axis=1, out=rows)
        return out
    if len(starts) <= longest:
        for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
            out[start:end] = np.cumsum(out[start:end])
        return out
    position = within_group_position(group)
    order = np.argsort(position, kind="stable")
    bounds = np.searchsorted(position[order], np.arange(1, longest + 1))
    for p in range(1, longest):  # add each group's element p to its element p - 1's sum
        at = order[bounds[p - 1] : bounds[p]]
        out[at] += out[at - 1]
    return out


def _ideal_by_position(r: Ranking, table: np.ndarray, pairs: list[tuple[str, float]]):
    """Ideal gains flattened (need, gain, 1-based position), and m = positive entries per need."""
    ideal_need, ideal_gain = _ideal(r, table, pairs)
    position = within_group_position(ideal_need) + 1
    m = np.bincount(ideal_need, minlength=r.n).astype(np.int64)
    return ideal_need, ideal_gain, position, m


def g_measure(r: Ranking, pairs: list[tuple[str, float]], name: str) -> dict[str, np.ndarray]:
    """G (trec_eval's experimental normalised gain, m_G.c).

    A document at rank i with gain g adds g / log2(2 + cost_i - gain_i), where
    gain_i sums the run's gains down to rank i and cost_i sums max(ideal gain
    at position j, 1) for j <= i; G divides by the sum of the ideal gains.
    """
    table = _gain_table(r, pairs)
    gains = _row_gains(r, table)
    ideal_need, ideal_gain, _, m = _ideal_by_position(r, table, pairs)
    starts = np.concatenate(([0], np.cumsum(m)[:-1]))
    nonzero = gains != 0
    sums = _g_sums_at(r, gains, nonzero, ideal_need, ideal_gain, m, starts)
    if sums is None:  # costs that are not whole numbers: every row's running sum
        inside = r.rank <= m[r.need]
        ideal_here = np.zeros(len(r.rank))
        ideal_here[inside] = ideal_gain[starts[r.need[inside]] + r.rank[inside] - 1]
        cost = np.maximum(ideal_here, 1.0)
        sums = (
            _group_cumsum(cost, r.need)[nonzero],
            _group_cumsum(gains, r.need)[nonzero],
        )
    sum_cost, sum_results = sums
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = 2 + sum_cost - sum_results
        whole = np.all((steps == np.floor(steps)) & (steps >= 1))
        # integer gains give integer steps: the C library's log2 from the table
        terms = gains[nonzero] / (log2_of(steps) if whole else np.log2(steps))
    total = r.total(terms, r.need[nonzero])
    ideal_total = r.total(ideal_gain, ideal_need)
    out = np.zeros(r.n)
    np.divide(total, ideal_total, out=out, where=ideal_total > 0)
    return {name: out}


def _g_sums_at(r: Ranking, gains, nonzero, ideal_need, ideal_gain, m, starts):
    """G's two running sums (cost, results) at the rows with a non-zero gain, the same
    doubles as summing every row in rank order, without a 7M-entry pass per sum; None
    when the costs are not all whole numbers.

    The run's gains: adding a zero leaves a double as it is, so the running sum at a
    non-zero row is the running sum of the non-zero gains alone. The costs depend on
    the rank only: max(ideal gain, 1) down to the need's m ideal positions, 1 below.
    Their running sum is the ideal prefix's down to m, then one 1 added per rank, which
    is exact (the prefix plus the count) while the prefix is a whole number below
    2**52. Otherwise (gains of 0.5 ...) the caller sums every row.
    """
    prefix = _group_cumsum(np.maximum(ideal_gain, 1.0), ideal_need)
    last = np.zeros(r.n)
    has = m > 0
    last[has] = prefix[starts[has] + m[has] - 1]
    if not bool(np.all((last == np.floor(last)) & (last < 2.0**52))):
        return None
    need, rank = r.need[nonzero], r.rank[nonzero]
    depth = m[need]
    below = rank > depth  # past the ideal positions: the prefix plus one per rank
    cost = np.empty(len(rank))
    cost[below] = last[need[below]] + (rank[below] - depth[below])
    above = ~below
    cost[above] = prefix[starts[need[above]] + rank[above] - 1]
    return cost, _group_cumsum(gains[nonzero], need)


def _dcg_running(r: Ranking, gains: np.ndarray):
    """Rows with a non-zero gain and the run's DCG down to each of them (sequential sums)."""
    nonzero = np.flatnonzero(gains != 0)
    need, rank = r.need[nonzero], r.rank[nonzero]
    running = _group_cumsum(gains[nonzero] / _discount(rank), need)
    return nonzero, need, rank, running


def _dcg_at(r: Ranking, need, rank, running, at_need, cutoff) -> np.ndarray:
    """The run's DCG of need ``at_need`` down to rank ``cutoff`` (vectorised lookups)."""
    width = int(max(r.rank.max(initial=0), cutoff.max(initial=0))) + 2
    keys = need * width + rank
    where = np.searchsorted(keys, at_need * width + np.minimum(cutoff, width - 1), side="right") - 1
    found = (
        (where >= 0) & (need[np.maximum(where, 0)] == at_need)
        if len(keys)
        else np.zeros(len(at_need), bool)
    )
    out = np.zeros(len(at_need))
    out[found] = running[where[found]]
    return out


def ndcg_rel(r: Ranking, pairs: list[tuple[str, float]], name: str) -> dict[str, np.ndarray]:
    """ndcg averaged over the relevant documents (m_ndcg_rel.c): at every retrieved
    document with a positive gain, DCG / ideal DCG down to its rank (the ideal
    stops growing after its last positive gain); every relevant document not
    retrieved adds the final DCG / ideal DCG; the sum is divided by the number
    of positive-gain judged documents."""
    table = _gain_table(r, pairs)
    gains = _row_gains(r, table)
    ideal_need, ideal_gain, position, m = _ideal_by_position(r, table, pairs)
    ideal_running = _group_cumsum(ideal_gain / _discount(position), ideal_need)
    starts = np.concatenate(([0], np.cumsum(m)[:-1]))
    ideal_total = r.total(ideal_gain / _discount(position), ideal_need)
    nonzero, need, rank, running = _dcg_running(r, gains)
    positive = gains[nonzero] > 0
    p_need, p_rank, p_dcg = need[positive], rank[positive], running[positive]
    upto = np.minimum(p_rank, m[p_need])
    p_ideal = np.where(upto > 0, ideal_running[np.maximum(starts[p_need] + upto - 1, 0)], 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = r.total(p_dcg / p_ideal, p_need)
        dcg_total = r.total(gains[nonzero] / _discount(rank), need)
        found = r.count(need=p_need)
        rest = (m - found).astype(np.float64) * dcg_total / ideal_total
        value = total + rest
        out = np.where(value > 0, value / m, 0.0)
    return {name: out}


def rndcg(r: Ranking, pairs: list[tuple[str, float]], name: str) -> dict[str, np.ndarray]:
    """ndcg averaged at the R levels (m_Rndcg.c): at every position where the ideal
    gain changes (the end of each gain level, and where it drops to 0), ndcg
    down to there; plus the whole ranking when it runs past that point.
    0 when the need has no relevant document."""
    table = _gain_table(r, pairs)
    gains = _row_gains(r, table)
    ideal_need, ideal_gain, position, m = _ideal_by_position(r, table, pairs)
    ideal_running = _group_cumsum(ideal_gain / _discount(position), ideal_need)
    # a boundary b (1 <= b <= m) where the ideal gain at position b differs from b - 1's
    last = np.ones(len(ideal_need), bool)
    last[:-1] = (ideal_need[1:] != ideal_need[:-1]) | (ideal_gain[1:] != ideal_gain[:-1])
    b_need, b_pos = ideal_need[last], position[last]  # ndcg down to b = position
    b_ideal = ideal_running[last]
    nonzero, need, rank, running = _dcg_running(r, gains)
    b_dcg = _dcg_at(r, need, rank, running, b_need, np.minimum(b_pos, r.num_ret[b_need]))
    dcg_total = r.total(gains[nonzero] / _discount(rank), need)
    ideal_total = r.total(ideal_gain / _discount(position), ideal_need)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = r.total(np.where(b_ideal > 0, b_dcg / b_ideal, 0.0), b_need)
        count = r.count(b_ideal > 0, b_need).astype(np.float64)
        tail = (m + 1 < r.num_ret) & (ideal_total > 0)
        total = np.where(tail, total + dcg_total / ideal_total, total)
        count = count + tail
        # trec_eval divides 0 by 0 when no R level has a positive ideal DCG (e.g. -l 0
        # with only non-relevant judgments): it prints -nan, and so do we
        out = np.where(r.num_rel > 0, np.where(count > 0, total / count, np.nan), 0.0)
    return {name: out}
