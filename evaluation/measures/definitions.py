"""trec_eval's per-need measures, each one small function over a :class:`Ranking`.

Every function takes the ranking (all needs at once) and its parameters and
returns ``{column name: per-need float64 array}``. Sums run in rank order
(``np.bincount`` adds sequentially), as trec_eval's loops do, so values agree
to the last bit, not just to four decimals. Notation: R = ``num_rel``
(judged relevant, relevance >= the threshold), ``rel_ret`` = relevant
retrieved, rank r is 1-based. References are trec_eval's ``m_<name>.c``.
"""

from __future__ import annotations

import math

import numpy as np

from evaluation.measures.gains import log2_of
from evaluation.measures.interpolation import eleven_point_average, interpolated_precision
from evaluation.measures.ranking import NONPOOL, UNJUDGED, Ranking, exclusive_count

MIN_GEO_MEAN = 0.00001
INFAP_EPSILON = 0.00001


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den where den != 0, else 0 (trec_eval leaves the value at 0)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


def counts(r: Ranking) -> dict[str, np.ndarray]:
    """num_ret, num_rel, num_rel_ret: retrieved, relevant (R), relevant retrieved."""
    return {
        "num_ret": r.num_ret.astype(float),
        "num_rel": r.num_rel.astype(float),
        "num_rel_ret": r.num_rel_ret.astype(float),
    }


def average_precision(r: Ranking) -> np.ndarray:
    """AP = (1/R) * sum over relevant retrieved at rank r_i of i / r_i; 0 if none retrieved.

    Seed example: relevant at ranks 1, 3 of R = 2 gives (1/1 + 2/3) / 2 = 0.8333.
    """
    total = r.total(r.hit_count / r.hit_rank, r.hit_need)
    found = r.count(need=r.hit_need)
    return np.where(found > 0, _div(total, r.num_rel), 0.0)


def ap(r: Ranking) -> dict[str, np.ndarray]:
    return {"map": average_precision(r)}


_libm_log = np.frompyfunc(math.log, 1, 1)


def log_floored(values: np.ndarray) -> np.ndarray:
    """log(max(v, 0.00001)) per need with the C library's ``log``, as trec_eval calls it.

    Not ``np.log``: numpy's own vectorised log (AVX-512 machines) differs from
    glibc's in the last bit for about 1 value in 600, and the gm_* summaries
    then miss trec_eval's doubles by an ulp. One call per need, not per document.
    """
    floored = np.maximum(values, MIN_GEO_MEAN)
    return _libm_log(floored).astype(np.float64) if len(floored) else floored


def gm_ap(r: Ranking) -> dict[str, np.ndarray]:
    """log(max(AP, 0.00001)) per need; the summary is exp(mean) (geometric mean)."""
    return {"gm_map": log_floored(average_precision(r))}


def r_precision(r: Ranking) -> dict[str, np.ndarray]:
    """Rprec = relevant in the top R / R (R even when fewer were retrieved); 0 if R = 0."""
    top = r.count(r.hit_rank <= r.num_rel[r.hit_need], r.hit_need)
    return {"Rprec": _div(top, np.where(np.minimum(r.num_ret, r.num_rel) > 0, r.num_rel, 0))}


def _bpref_terms(r: Ranking) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    judged = r.judged
    need = r.need[judged]
    nonrel = r.rel[judged] < r.level
    nonrel_before = exclusive_count(nonrel, need)
    return judged, need, nonrel, nonrel_before


def binary_preference(r: Ranking) -> np.ndarray:
    """bpref = (1/R) sum over judged relevant retrieved d of 1 - min(n_d, R) / min(N, R).

    n_d: judged non-relevant retrieved above d; N: judged non-relevant for the
    need. Unjudged documents (absent or negative in the qrels) are skipped.
    """
    judged, need, nonrel, before = _bpref_terms(r)
    num_rel = r.num_rel[need]
    num_nonrel = r.rel_levels[:, r.grades < r.level].sum(axis=1)[need]
    term = np.where(
        before > 0,
        1.0 - _div(np.minimum(before, num_rel), np.minimum(num_nonrel, num_rel)),
        1.0,
    )
    total = r.total(np.where(nonrel, 0.0, term), need)
    return np.where(r.num_rel > 0, _div(total, r.num_rel), total)


def bpref(r: Ranking) -> dict[str, np.ndarray]:
    return {"bpref": binary_preference(r)}


def gm_bpref(r: Ranking) -> dict[str, np.ndarray]:
    return {"gm_bpref": log_floored(binary_preference(r))}


def reciprocal_rank(r: Ranking) -> dict[str, np.ndarray]:
    """recip_rank = 1 / rank of the first relevant retrieved document; 0 if none."""
    first = r.hit_count == 1
    out = np.zeros(r.n)
    out[r.hit_need[first]] = 1.0 / r.hit_rank[first]
    return {"recip_rank": out}


def reciprocal_rank_at(r: Ranking, cutoffs: list[int]) -> dict[str, np.ndarray]:
    """recip_rank_cut_k (ir_measures' ``RR@k``, MS MARCO's MRR@10): 1 / rank of the
    first relevant document if it is in the top k, else 0.

    Not a trec_eval measure; defined as ir_measures' ``RR(cutoff=k)`` (its
    ``msmarco`` provider): relevant means relevance >= the threshold (``-l``,
    ir_measures' ``rel``), ranks are trec_eval's. Example: the first relevant
    document at rank 4 gives 0.25 for k = 10 and 0 for k = 3.
    """
    first = r.hit_count == 1
    need, rank = r.hit_need[first], r.hit_rank[first]
    out = {}
    for k in cutoffs:
        value = np.zeros(r.n)
        inside = rank <= k
        value[need[inside]] = 1.0 / rank[inside]
        out[f"recip_rank_cut_{k}"] = value
    return out


def judged_at(r: Ranking, cutoffs: list[int]) -> dict[str, np.ndarray]:
    """judged_k (ir_measures' ``Judged@k``): the share of the top k that is in the qrels,
    ``judged in top k / min(k, num_ret)``; 0 when nothing was retrieved.

    Defined as ir_measures' ``Judged`` (its ``judged`` provider, after OpenNIR):
    a document counts as judged when the qrels list it for the need, whatever
    its relevance, negative included (trec_eval's ``unj_k`` counts a negative
    judgment as unjudged and divides by k: they are not complements). A run
    shorter than k is judged on what it retrieved. Example: 7 of a need's top
    10 in the qrels gives 0.7; a 4-document run with 3 judged gives 0.75.
    """
    in_qrels = r.rel != NONPOOL
    rank, need = r.rank[in_qrels], r.need[in_qrels]
    return {
        f"judged_{k}": _div(r.count(rank <= k, need), np.minimum(r.num_ret, k)) for k in cutoffs
    }


def infap(r: Ranking) -> dict[str, np.ndarray]:
    """infAP (Yilmaz & Aslam), trec_eval's formula: documents outside the pool are skipped,
    pooled-but-unjudged ones (negative qrels) counted, INFAP_EPSILON = 0.00001."""
    pooled = np.flatnonzero((r.rel >= 0) | (r.rel == UNJUDGED))
    need = r.need[pooled]
    rel = r.rel[pooled]
    judged_rel = (rel >= 0) & (rel >= r.level)
    judged_nonrel = (rel >= 0) & (rel < r.level)
    rel_before = exclusive_count(judged_rel, need)
    nonrel_before = exclusive_count(judged_nonrel, need)
    unjudged_before = exclusive_count(rel == UNJUDGED, need)
    fj = (r.rank[pooled] - 1).astype(np.float64)
    rel_so_far = rel_before + 1
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
            (rel_so_far - 1 + nonrel_before + unjudged_before) / fj
        ) * (
            (rel_so_far - 1 + INFAP_EPSILON) / (rel_so_far - 1 + nonrel_before + 2 * INFAP_EPSILON)
        )
    term = np.where(fj == 0, 1.0, term)
    total = r.total(np.where(judged_rel, term, 0.0), need)
    return {"infAP": np.where(r.num_rel > 0, _div(total, r.num_rel), total)}


def _hits_within(r: Ranking, cutoff) -> np.ndarray:
    return r.count(r.hit_rank <= cutoff, r.hit_need)


def precision_at(r: Ranking, cutoffs: list[int]) -> dict[str, np.ndarray]:
    """P_k = relevant in the top k / k (always k, even when fewer were retrieved)."""
    return {f"P_{k}": _hits_within(r, k) / k for k in cutoffs}


def recall_at(r: Ranking, cutoffs: list[int]) -> dict[str, np.ndarray]:
    """recall_k = relevant in the top k / R; 0 if R = 0."""
    return {f"recall_{k}": _div(_hits_within(r, k), r.num_rel) for k in cutoffs}


def relative_precision_at(r: Ranking, cutoffs: list[int]) -> dict[str, np.ndarray]:
    """relative_P_k = relevant in the top k / min(k, R); 0 if R = 0."""
    return {f"relative_P_{k}": _div(_hits_within(r, k), np.minimum(k, r.num_rel)) for k in cutoffs}


def success_at(r: Ranking, cutoffs: list[int]) -> dict[str, np.ndarray]:
    """success_k = 1 if a relevant document is in the top k, else 0."""
    return {f"success_{k}": (_hits_within(r, k) > 0).astype(float) for k in cutoffs}


def map_at(r: Ranking, cutoffs: list[int]) -> dict[str, np.ndarray]:
    """map_cut_k = (1/R) sum over relevant at rank r_i <= k of i / r_i; 0 if R = 0."""
    terms = r.hit_count / r.hit_rank
    out = {}
    for k in cutoffs:
        inside = r.hit_rank <= k
        out[f"map_cut_{k}"] = _div(r.total(terms[inside], r.hit_need[inside]), r.num_rel)
    return out


def unjudged_at(r: Ranking, cutoffs: list[int]) -> dict[str, np.ndarray]:
    """unj_k = retrieved documents in the top k without a judgment (absent or negative) / k."""
    judged_rank = r.rank[r.judged]
    judged_need = r.need[r.judged]
    out = {}
    for k in cutoffs:
        judged_top = r.count(judged_rank <= k, judged_need)
        out[f"unj_{k}"] = (np.minimum(r.num_ret, k) - judged_top) / k
    return out


def r_precision_multiples(r: Ranking, cutoffs: list[tuple[str, float]]) -> dict[str, np.ndarray]:
    """Rprec_mult_m = precision at rank c = (long)(m * R + 0.9), as trec_eval casts it; 0 if c = 0.

    With a negative ``-l`` trec_eval counts the relevant documents above c down from
    ``num_rel_ret`` at each hit below it, non-pool and unjudged ones included: short by
    their number (:attr:`Ranking.unjudged_hits`), and 0 once that count runs out.
    """
    out = {}
    for _, m in cutoffs:
        c = np.floor(m * r.num_rel.astype(np.float64) + 0.9).astype(np.int64)
        found = np.maximum(_hits_within(r, c[r.hit_need]) - r.unjudged_hits, 0)
        out[f"Rprec_mult_{m:3.2f}"] = _div(found, c)
    return out


def iprec_at_recall(r: Ranking, levels: list[tuple[str, float]]) -> dict[str, np.ndarray]:
    """Interpolated precision at recall levels; see :mod:`evaluation.measures.interpolation`."""
    values = interpolated_precision(r, [text for text, _ in levels])
    return {f"iprec_at_recall_{v:3.2f}": values[:, j] for j, (_, v) in enumerate(levels)}


def eleven_point(r: Ranking, levels: list[tuple[str, float]], name: str) -> dict[str, np.ndarray]:
    """11pt_avg: mean interpolated precision over the levels (default the 11 standard ones)."""
    return {name: eleven_point_average(interpolated_precision(r, [text for text, _ in levels]))}


def utility(r: Ranking, params: list[float], name: str) -> dict[str, np.ndarray]:
    """utility = p1 * rel_ret + p2 * nonrel_ret + p3 * rel_not_ret + p4 * nonrel_not_ret
    (collection size taken as 0, as trec_eval without -N). Default 1, -1, 0, 0."""
    if len(params) != 4:
        raise ValueError("utility needs exactly 4 coefficients")
    p = params
    ret, rel, rel_ret = r.num_ret, r.num_rel, r.num_rel_ret
    value = (
        p[0] * rel_ret
        + p[1] * (ret - rel_ret)
        + p[2] * (rel - rel_ret)
        + p[3] * (0 + rel_ret - ret - rel)
    )
    return {name: value.astype(float)}


def set_measures(r: Ranking, which: str, params: list[float] | None = None, name: str = "") -> dict:
    """Measures of the retrieved set as a whole (trec_eval's set_*), 0 when undefined."""
    ret, rel, rel_ret = r.num_ret, r.num_rel, r.num_rel_ret
    if which == "set_P":
        return {"set_P": _div(rel_ret, ret)}
    if which == "set_relative_P":
        return {"set_relative_P": _div(rel_ret, np.where(ret > 0, np.minimum(ret, rel), 0))}
    if which == "set_recall":
        return {"set_recall": _div(rel_ret, rel)}
    if which == "set_map":
        return {"set_map": _div(rel_ret.astype(float) * rel_ret, ret.astype(float) * rel)}
    x = (params or [1.0])[0]
    precision, recall = _div(rel_ret, ret), _div(rel_ret, rel)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (x + 1.0) * precision * recall / (x * precision + recall)
    return {name: np.where(rel_ret > 0, value, 0.0)}


def num_nonrel_judged_ret(r: Ranking) -> dict[str, np.ndarray]:
    """Judged non-relevant retrieved documents (summed, not averaged, over needs)."""
    judged = r.count(need=r.need[r.judged])
    return {"num_nonrel_judged_ret": (judged - r.num_rel_ret).astype(float)}


def binary_gain(r: Ranking) -> dict[str, np.ndarray]:
    """binG = (1/R) sum over relevant retrieved of 1 / log2(2 + non-relevant above it)."""
    term = 1.0 / log2_of(3 + (r.hit_rank - 1) - r.hit_count)
    total = r.total(term, r.hit_need)
    found = r.count(need=r.hit_need)
    return {"binG": np.where(found > 0, _div(total, r.num_rel), 0.0)}


def relstring(r: Ranking, length: int) -> list[str]:
    """The relevance of the first ``length`` retrieved documents as characters:
    0-9 the level, '>' above 9, '-' not in the qrels, '.' judged negative."""
    top = r.rank <= length  # characters for these rows only (70,000 of 7M at 10)
    rel = r.rel[top]
    chars = np.full(len(rel), "<", dtype="<U1")
    digits = (rel >= 0) & (rel <= 9)
    chars[digits] = rel[digits].astype(str)
    chars[rel > 9] = ">"
    chars[rel == NONPOOL] = "-"
    chars[rel == UNJUDGED] = "."
    out = [""] * r.n
    need, text = r.need[top], chars
    bounds = np.searchsorted(need, np.arange(r.n + 1))
    for i in range(r.n):  # one join per need, only for the text output
        out[i] = "".join(text[bounds[i] : bounds[i + 1]])
    return out
