"""trec_eval's experimental gain measures: ``G`` (m_G.c), ``ndcg_rel`` (m_ndcg_rel.c)
and ``Rndcg`` (m_Rndcg.c), on the gains of :mod:`evaluation.measures.gains`.

They need running sums down each need (of the gains, the costs, the discounted gains),
which :func:`_group_cumsum` adds one term at a time in rank order, as trec_eval's loops
do, so the doubles are trec_eval's.
"""

from __future__ import annotations

import numpy as np

from evaluation.measures.gains import Gains, _discount, _gains, _ideal, _row_gains, log2_of
from evaluation.measures.ranking import Ranking, within_group_position
from evaluation.trec.arrays import run_starts


def _group_cumsum(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Running sum inside each group (groups contiguous), one addition per element as
    trec_eval's loops add, so bit-identical to them.

    Not pandas' groupby cumsum: it compensates its sums (Kahan) and so misses
    trec_eval's doubles in the last bit (ndcg_rel and Rndcg did, on a quarter of
    the needs). ``np.cumsum`` adds sequentially; it runs once per position
    across all groups (or once per group, when there are fewer groups than the
    longest group has elements): min(groups, longest) numpy calls, no loop over
    documents. Groups all of one length take a single 2-D ``np.cumsum`` (the G of
    7,000 needs x 1,000 documents: a tenth of the loop's time for each of its two sums).
    Ragged groups padded to one length are no faster than the loop at 500-1,000 a need.
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


def _ideal_by_position(r: Ranking, table: Gains):
    """Ideal gains flattened (need, gain, 1-based position), and m = positive entries per need."""
    ideal_need, ideal_gain = _ideal(r, table)
    position = within_group_position(ideal_need) + 1
    m = np.bincount(ideal_need, minlength=r.n).astype(np.int64)
    return ideal_need, ideal_gain, position, m


def g_measure(r: Ranking, pairs: list[tuple[str, float]], name: str) -> dict[str, np.ndarray]:
    """G (trec_eval's experimental normalised gain, m_G.c).

    A document at rank i with gain g adds g / log2(2 + cost_i - gain_i), where
    gain_i sums the run's gains down to rank i and cost_i sums max(ideal gain
    at position j, 1) for j <= i; G divides by the sum of the ideal gains.
    """
    table = _gains(r, pairs)
    gains = _row_gains(r, table)
    ideal_need, ideal_gain, _, m = _ideal_by_position(r, table)
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
        whole = np.all((steps == np.floor(steps)) & (steps >= 1) & (steps < 2.0**53))
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
    table = _gains(r, pairs)
    gains = _row_gains(r, table)
    ideal_need, ideal_gain, position, m = _ideal_by_position(r, table)
    ideal_running = _group_cumsum(ideal_gain / _discount(position), ideal_need)
    starts = np.concatenate(([0], np.cumsum(m)[:-1]))
    ideal_total = r.total(ideal_gain / _discount(position), ideal_need)
    nonzero, need, rank, running = _dcg_running(r, gains)
    positive = gains[nonzero] > 0
    p_need, p_rank, p_dcg = need[positive], rank[positive], running[positive]
    upto = np.minimum(p_rank, m[p_need])
    # a need with no positive ideal gain (a parameter gives its non-pool documents one):
    # trec_eval divides by an ideal DCG of 0
    p_ideal = np.zeros(len(upto))
    p_ideal[upto > 0] = ideal_running[starts[p_need[upto > 0]] + upto[upto > 0] - 1]
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
    table = _gains(r, pairs)
    gains = _row_gains(r, table)
    ideal_need, ideal_gain, position, m = _ideal_by_position(r, table)
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
