"""A slow, loop-per-document reference for the engine's measures (tests only).

Written from the definitions (the seed chapter, trec_eval's m_*.c) with plain
Python and fractions, deliberately sharing no code with evaluation/.
"""

from __future__ import annotations

import math
from fractions import Fraction


def order(run: dict[str, dict[str, float]], need: str) -> list[str]:
    """Doc ids of one need: score descending, doc id descending in byte order."""
    docs = run.get(need, {})
    return [doc for doc, _ in sorted(docs.items(), key=lambda kv: (-kv[1], _Desc(kv[0].encode())))]


class _Desc:
    def __init__(self, value: bytes) -> None:
        self.value = value

    def __lt__(self, other: _Desc) -> bool:
        return self.value > other.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.value == other.value


def measures(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], need: str, level: int = 1
):
    """Reference values of one need as a dict (trec_eval names)."""
    judged = qrels[need]
    ranked = order(run, need)
    rels = [judged.get(doc) for doc in ranked]
    R = sum(1 for v in judged.values() if v >= level)
    hits = [i + 1 for i, v in enumerate(rels) if v is not None and v >= level]
    out: dict[str, float] = {"num_ret": len(ranked), "num_rel": R, "num_rel_ret": len(hits)}
    out["map"] = sum((k + 1) / r for k, r in enumerate(hits)) / R if hits else 0.0
    out["recip_rank"] = 1 / hits[0] if hits else 0.0
    out["Rprec"] = sum(1 for r in hits if r <= R) / R if R and ranked else 0.0
    for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000):
        inside = sum(1 for r in hits if r <= k)
        out[f"P_{k}"] = inside / k
        out[f"recall_{k}"] = inside / R if R else 0.0
        out[f"map_cut_{k}"] = (
            sum((i + 1) / r for i, r in enumerate(hits) if r <= k) / R if R else 0.0
        )
    for k in (1, 5, 10):
        out[f"success_{k}"] = 1.0 if any(r <= k for r in hits) else 0.0
    # bpref: judged documents only
    nonrel_total = sum(1 for v in judged.values() if 0 <= v < level)
    seen_nonrel, total = 0, 0.0
    for v in rels:
        if v is None or v < 0:
            continue
        if v < level:
            seen_nonrel += 1
        else:
            total += 1.0 - min(seen_nonrel, R) / min(nonrel_total, R) if seen_nonrel else 1.0
    out["bpref"] = total / R if R else total
    # ndcg with gain = level, discount log2(rank + 1)
    gains = [max(v, 0) if v is not None else 0 for v in rels]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains) if g)
    ideal = sorted((v for v in judged.values() if v > 0), reverse=True)
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    out["ndcg"] = dcg / idcg if idcg else 0.0
    for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000):
        dk = sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]) if g)
        ik = sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:k]))
        out[f"ndcg_cut_{k}"] = dk / ik if ik else 0.0
    for level_text, value in iprec(hits, R).items():
        out[f"iprec_at_recall_{float(level_text):3.2f}"] = value
    return out


def iprec(
    hits: list[int],
    R: int,
    levels=("0.0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0"),
):
    """The seed's interpolated precision: max precision at any rank with recall >= r."""
    out = {}
    points = [(Fraction(k + 1, R), Fraction(k + 1, r)) for k, r in enumerate(hits)] if R else []
    for text in levels:
        r = Fraction(text)
        candidates = [p for rec, p in points if rec >= r]
        out[text] = float(max(candidates)) if candidates else 0.0
    return out


def v908_cutoff(level: float, R: int) -> int:
    """trec_eval 9.0.8's number of relevant documents for a recall level (float arithmetic)."""
    return int(level * R + 0.9)


def exact_cutoff(level: str, R: int) -> int:
    return math.ceil(Fraction(level) * R)


def _graded(judged: dict[str, int], ranked: list[str]) -> tuple[list[int], list[int]]:
    """Gains down the ranking (the level; 0 unjudged or negative) and the ideal gains."""
    gains = [max(judged.get(doc, 0), 0) for doc in ranked]
    ideal = sorted((v for v in judged.values() if v > 0), reverse=True)
    return gains, ideal


def ndcg_rel(judged: dict[str, int], ranked: list[str]) -> float:
    """trec_eval's ndcg_rel (default gains), one addition at a time as its loop adds:
    at each retrieved document with a positive gain, DCG / ideal DCG down to it; each
    relevant document not retrieved adds the final DCG / ideal DCG; / positive judgments."""
    gains, ideal = _graded(judged, ranked)
    m = len(ideal)
    dcg = idcg = total = 0.0
    found = 0
    for i in range(max(len(gains), m)):
        if i < len(gains) and gains[i]:
            dcg += gains[i] / math.log2(i + 2)
        if i < m:
            idcg += ideal[i] / math.log2(i + 2)
        if i < len(gains) and gains[i] > 0:
            total += dcg / idcg
            found += 1
    if m == 0:
        return 0.0
    total += (m - found) * dcg / idcg
    return total / m if total > 0 else 0.0


def rndcg(judged: dict[str, int], ranked: list[str], level: int = 1) -> float:
    """trec_eval's Rndcg (default gains), in its order of additions: ndcg at every
    position where the ideal gain changes (from one level to the next, and to 0 after
    the last relevant), plus the whole ranking when it runs on past that point."""
    if not any(v >= level for v in judged.values()):
        return 0.0
    gains, ideal = _graded(judged, ranked)
    m, n = len(ideal), len(gains)
    dcg = idcg = total = 0.0
    count = 0
    for i in range(m + 1):
        if i >= 1 and (ideal[i] if i < m else 0) != ideal[i - 1]:
            if idcg > 0:
                total += dcg / idcg
                count += 1
        if i < n and gains[i]:
            dcg += gains[i] / math.log2(i + 2)
        if i < m:
            idcg += ideal[i] / math.log2(i + 2)
    if m + 1 < n:
        for i in range(m + 1, n):
            if gains[i]:
                dcg += gains[i] / math.log2(i + 2)
        if idcg > 0:
            total += dcg / idcg
            count += 1
    return total / count if count else math.nan
