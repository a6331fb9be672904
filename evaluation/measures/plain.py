"""The command line's numpy-free path: one small run (:data:`~evaluation.trec.plain.PLAIN_BYTES`)
read (:mod:`evaluation.trec.plain`), ranked and scored with the standard library, for
the common measures. A TREC track's run (50 needs x 1,000 documents) is done in about the
time numpy takes to import (0.08-0.11 s of the numpy path's 0.15-0.18 s on the
benchmark machine: 0.11 s in all, docs/engine.md, Tenth round).

Hand-written for that reason only, and narrow: trec_eval's measure syntax for the
``official`` set and its members plus ``recall`` (:data:`PLAIN_MEASURES`; any other
name, a catalog name such as ``nDCG@10``, or ``-c``, ``-l`` below 1, ``-M`` below 1, an
interpolation rule but ``exact`` or unusual parameters give None, and the numpy paths
answer). Each measure follows its definition in :mod:`evaluation.measures.definitions`,
the same arithmetic in the same order (sums in rank order, then over needs in need
order: :func:`_sum`), so the values are the same doubles; the tests compare the output
with the numpy paths' byte for byte (``tests/evaluation/test_plain.py``).

Ranking (:mod:`evaluation.measures.ranking`): a need's lines by score descending, ties
by doc id descending in byte order (a need whose scores fall down the file keeps the
file's order but for its ties); only needs both judged and run are scored, in byte
order of their ids.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from itertools import compress, count

from evaluation.measures.levels import STANDARD_LEVELS, exact_fraction
from evaluation.measures.text import Layout, need_warnings, trec_eval_text
from evaluation.trec.plain import PlainRun, non_increasing, strictly_increasing

__all__ = ["OFFICIAL", "PLAIN_MEASURES", "PlainResult", "plain_requests", "score_plain"]

_CUTS = ("5", "10", "15", "20", "30", "100", "200", "500", "1000")
#: the measures this path computes, in trec_eval's order (the catalog's), with their
#: kind of parameters and defaults (tests/evaluation/test_plain.py holds them to it)
PLAIN_MEASURES: dict[str, tuple[str, tuple[str, ...]]] = {
    "runid": ("plain", ()),
    "num_q": ("plain", ()),
    "num_ret": ("plain", ()),
    "num_rel": ("plain", ()),
    "num_rel_ret": ("plain", ()),
    "map": ("plain", ()),
    "gm_map": ("plain", ()),
    "Rprec": ("plain", ()),
    "bpref": ("plain", ()),
    "recip_rank": ("plain", ()),
    "iprec_at_recall": ("double_cut", STANDARD_LEVELS),
    "P": ("long_cut", _CUTS),
    "recall": ("long_cut", _CUTS),
}
#: trec_eval's official set (the catalog's ``OFFICIAL``), the default without ``-m``
OFFICIAL = tuple(m for m in PLAIN_MEASURES if m != "recall")
MIN_GEO_MEAN = 0.00001  # definitions.MIN_GEO_MEAN


def plain_requests(measures: Sequence[str] | None) -> list[tuple[str, list]] | None:
    """The ``-m`` texts as (measure, parsed parameters) in trec_eval's order, as
    :func:`~evaluation.measures.request.parse_requests` reads them (a set marks its
    members, the first parameters given win), or None for anything this path leaves
    to it: another measure or set, a catalog name, parameters it would refuse or that
    are not plain (``P.5,10`` and ``iprec_at_recall..1,.25`` are taken)."""
    marked: set[str] = set()
    given: dict[str, str] = {}
    for text in measures if measures is not None else ["official"]:
        name, dot, rest = text.partition(".")
        if name == "official" and not dot:
            marked.update(OFFICIAL)
        elif name in PLAIN_MEASURES and (rest or not dot):
            marked.add(name)
            if dot:
                given.setdefault(name, rest)
        else:
            return None
    requests = []
    for name, (kind, defaults) in PLAIN_MEASURES.items():
        if name not in marked:
            continue
        texts = given[name].split(",") if name in given else list(defaults)
        if kind == "long_cut":
            if not all(t.isascii() and t.isdigit() for t in texts):
                return None  # C's atol of something else: the catalog's parser reads it
            params = sorted(int(t) for t in texts)
            if params[0] <= 0 or len(set(params)) != len(params):
                return None  # refused there, with its message
        elif kind == "double_cut":
            if not all(t.isascii() and t.replace(".", "", 1).isdigit() for t in texts):
                return None
            params = sorted(((t, float(t)) for t in texts), key=lambda level: level[1])
            if len({value for _, value in params}) != len(params):
                return None
        else:
            params = []
        requests.append((name, params))
    return requests


def _sum(values: list[float]) -> float:
    """Added one after another from the first, as numpy's ``cumsum`` (trec_eval's loop):
    not ``sum()``, which Python 3.12 makes compensated."""
    if not values:
        return 0.0
    total = values[0]
    for value in values[1:]:
        total += value
    return total


class _Need:
    """One need's ranking as the measures read it: documents retrieved (``num_ret``),
    judged relevant (``num_rel``, R) and judged non-relevant (``num_nonrel``), the ranks
    of the relevant retrieved (``hits``) and the judged retrieved documents' relevance
    flags in rank order (``judged``: True for relevant)."""

    __slots__ = ("hits", "judged", "num_nonrel", "num_rel", "num_ret")

    def __init__(
        self, num_ret: int, num_rel: int, num_nonrel: int, hits: list[int], judged: list[bool]
    ) -> None:
        self.num_ret, self.num_rel, self.num_nonrel = num_ret, num_rel, num_nonrel
        self.hits, self.judged = hits, judged


def _rank(
    docs: list[bytes], scores: list[float], ranks: list[float] | None, max_depth: int | None
) -> tuple[list[bytes], bool]:
    """A need's doc ids in trec_eval order (cut to ``max_depth``), and whether the file's
    rank column disagrees with the scores (a strictly lower score without a larger rank
    number, tied scores in any order), as :func:`~evaluation.measures.ranking.ordered_ranks`
    checks it. ``ranks`` None: 1, 2, 3 ... down the file.

    The usual need, scores falling down the file and ranks rising, keeps the file's
    order but for its ties, put in doc id order (descending); its ranks cannot
    disagree: a lower score is further down the file, so its rank is larger."""
    rising = ranks is None or strictly_increasing(ranks)
    if rising and non_increasing(scores):
        ordered = docs
        ties = list(compress(count(), map(operator.eq, scores, scores[1:])))
        if ties:  # positions i tied with i + 1: runs of them are the tie groups
            ordered = list(docs)
            first = previous = ties[0]
            for i in [*ties[1:], -2]:
                if i != previous + 1:
                    ordered[first : previous + 2] = sorted(docs[first : previous + 2], reverse=True)
                    first = i
                previous = i
        disagrees = False
    else:
        if ranks is None:
            ranks = list(map(float, range(1, len(docs) + 1)))
        lines = sorted(zip(scores, docs, ranks, strict=True), reverse=True)
        ordered = [doc for _, doc, _ in lines]
        disagrees = any(
            b[0] < a[0] and not b[2] > a[2] for a, b in zip(lines, lines[1:], strict=False)
        )
    return (ordered if max_depth is None else ordered[:max_depth]), disagrees


def _judge(ordered: list[bytes], judged: dict[bytes, int], level: int) -> _Need:
    """The ranking of one need joined with its judgments (``level``: the relevance
    threshold, at least 1: documents outside the qrels or judged below 0 count as
    neither relevant nor judged). The retrieved documents in the qrels are picked in C
    (``compress``); only they are looked at one by one."""
    present = list(map(judged.__contains__, ordered))
    hits, flags = [], []
    ranks, docs = compress(count(1), present), compress(ordered, present)
    for rank, doc in zip(ranks, docs, strict=False):  # count(1) has no end
        relevance = judged[doc]
        if relevance >= 0:
            flags.append(relevance >= level)
            if relevance >= level:
                hits.append(rank)
    values = judged.values()
    num_rel = sum(1 for r in values if r >= level)
    num_nonrel = sum(1 for r in values if 0 <= r < level)
    return _Need(len(ordered), num_rel, num_nonrel, hits, flags)


def _average_precision(need: _Need) -> float:
    """map: (1/R) * sum of i / r_i over the relevant retrieved (definitions.average_precision)."""
    total = 0.0
    for i, rank in enumerate(need.hits, 1):
        total += i / rank
    return total / need.num_rel if need.hits else 0.0


def _bpref(need: _Need) -> float:
    """bpref: (1/R) sum over judged relevant retrieved of 1 - min(n_d, R) / min(N, R)
    (definitions.binary_preference)."""
    r, total, before = need.num_rel, 0.0, 0
    bound = min(need.num_nonrel, r)
    for relevant in need.judged:
        if not relevant:
            before += 1
        elif before > 0:
            total += 1.0 - (min(before, r) / bound if bound else 0.0)
        else:
            total += 1.0
    return total / r if r > 0 else total


def _iprec(need: _Need, fractions: list[tuple[int, int]]) -> list[float]:
    """Interpolated precision at recall levels (exact fractions), the ``exact`` rule: the
    best precision from the ceil(level * R)-th relevant retrieved document down
    (interpolation.interpolated_precision)."""
    hits = need.hits
    best, best_from = 0.0, [0.0] * len(hits)
    for k in range(len(hits) - 1, -1, -1):
        best = max(best, (k + 1) / hits[k])
        best_from[k] = best
    out = []
    for numerator, denominator in fractions:
        needed = max(-((-numerator * need.num_rel) // denominator), 0)
        ok = needed <= len(hits) and len(hits) > 0
        out.append(best_from[max(needed, 1) - 1] if ok else 0.0)
    return out


def _columns(name: str, params: list, needs: list[_Need]) -> dict[str, list[float]]:
    """One measure's printed columns, a value per need."""
    if name in ("num_ret", "num_rel"):
        return {name: [float(getattr(n, name)) for n in needs]}
    if name == "num_rel_ret":
        return {name: [float(len(n.hits)) for n in needs]}
    if name == "map":
        return {name: [_average_precision(n) for n in needs]}
    if name == "gm_map":
        return {name: [math.log(max(_average_precision(n), MIN_GEO_MEAN)) for n in needs]}
    if name == "Rprec":
        return {
            name: [
                sum(1 for r in n.hits if r <= n.num_rel) / n.num_rel
                if min(n.num_ret, n.num_rel) > 0
                else 0.0
                for n in needs
            ]
        }
    if name == "bpref":
        return {name: [_bpref(n) for n in needs]}
    if name == "recip_rank":
        return {name: [1.0 / n.hits[0] if n.hits else 0.0 for n in needs]}
    if name == "iprec_at_recall":
        fractions = [exact_fraction(text) for text, _ in params]
        rows = [_iprec(n, fractions) for n in needs]
        return {
            f"iprec_at_recall_{v:3.2f}": [row[j] for row in rows] for j, (_, v) in enumerate(params)
        }
    within = [[sum(1 for r in n.hits if r <= k) for n in needs] for k in params]
    if name == "P":
        return {f"P_{k}": [h / k for h in hits] for k, hits in zip(params, within, strict=True)}
    return {  # recall
        f"recall_{k}": [
            h / n.num_rel if n.num_rel else 0.0 for h, n in zip(hits, needs, strict=True)
        ]
        for k, hits in zip(params, within, strict=True)
    }


class PlainResult:
    """One run's scores as the command line prints them (``to_trec_eval``), with the
    run's ``warnings`` and ``run_id``: :class:`~evaluation.measures.small.SmallResult`'s
    interface."""

    def __init__(
        self,
        need_ids: list[str],
        columns: dict[str, list[float]],
        order: Layout,
        summary: dict[str, float],
        run_id: str,
        warnings: list[str],
    ) -> None:
        self.need_ids, self.columns, self.order = need_ids, columns, order
        self.summary, self.run_id, self.warnings = summary, run_id, warnings

    def to_trec_eval(self, per_need: bool = False) -> str:
        position = {need: i for i, need in enumerate(self.need_ids)}
        columns = self.columns
        return trec_eval_text(
            self.need_ids,
            lambda need: lambda column: columns[column][position[need]],
            self.order,
            self.summary,
            {},
            self.run_id,
            per_need=per_need,
        )


def score_plain(
    judged: dict[bytes, dict[bytes, int]],
    run: PlainRun,
    measures: Sequence[str] | None = None,
    relevance_level: int = 1,
    max_depth: int | None = None,
) -> PlainResult | None:
    """:func:`~evaluation.measures.evaluate` for these inputs (its text output and
    warnings), or None where the numpy paths must answer (module docstring; also no
    need both judged and run)."""
    requests = plain_requests(measures)
    if requests is None or relevance_level < 1 or (max_depth is not None and max_depth < 1):
        return None
    scored = sorted(need for need in run.needs if need in judged)
    if not scored:
        return None
    needs, disagrees = [], False
    for need in scored:
        ordered, disagree = _rank(*run.needs[need], max_depth)
        disagrees |= disagree
        needs.append(_judge(ordered, judged[need], relevance_level))
    n = len(needs)
    columns: dict[str, list[float]] = {}
    order: Layout = []
    summary: dict[str, float] = {}
    for name, params in requests:
        if name == "runid":
            order.append(("runid", "runid", False, True))
            continue
        if name == "num_q":
            order.append(("num_q", "long", False, True))
            summary["num_q"] = float(n)
            continue
        integer = name.startswith("num_")
        for column, values in _columns(name, params, needs).items():
            if integer:  # num_ret, num_rel, num_rel_ret: summed
                summary[column] = _sum(values)
            elif name == "gm_map":
                summary[column] = math.exp((_sum(values) + 0 * math.log(MIN_GEO_MEAN)) / n)
            else:
                summary[column] = _sum(values) / n
            if name != "gm_map":
                columns[column] = values
            order.append((column, "long" if integer else "double", name != "gm_map", True))
    run_needs = {need.decode() for need in run.needs}
    warnings = run.warnings + need_warnings(run_needs, {j.decode() for j in judged}, disagrees)
    need_ids = [need.decode() for need in scored]
    return PlainResult(need_ids, columns, order, summary, run.tag, warnings)
