"""A :class:`~evaluation.measures.ranking.Ranking` scored, averaged and written as
trec_eval writes it.

:func:`score_ranking` is the core of :func:`~evaluation.measures.evaluate`, which wraps
its :class:`Scores` in an :class:`~evaluation.measures.Evaluation`;
:func:`trec_eval_text` is the one writer of trec_eval's text output and
:func:`need_warnings` the warnings of an evaluation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from evaluation.measures import definitions as d
from evaluation.measures.catalog import BOGUS_ZEROED, UnknownMeasure, measure_named, resolve
from evaluation.measures.ranking import Ranking
from evaluation.measures.request import Request, compute_request, split_params
from evaluation.trec import threads

__all__ = [
    "Layout",
    "Scores",
    "average",
    "fmt",
    "need_warnings",
    "score_ranking",
    "summarise",
    "summary_kind",
    "trec_eval_text",
]


# one entry per printed measure: (column, format, printed per need, printed in the summary)
Layout = list[tuple[str, str, bool, bool]]


def need_warnings(run_needs: set[str], judged: set[str], rank_disagrees: bool) -> list[str]:
    """The warnings of an evaluation: run needs without judgments, a rank column
    that contradicts the scores."""
    warnings = []
    unjudged = sorted(run_needs - judged, key=str.encode)
    if unjudged:
        shown = ", ".join(unjudged[:5]) + (" ..." if len(unjudged) > 5 else "")
        warnings.append(f"{len(unjudged)} run need(s) without judgments, ignored: {shown}")
    if rank_disagrees:
        warnings.append(
            "the rank column disagrees with the score order; ranks come from the scores"
        )
    return warnings


def fmt(value: float, kind: str) -> str:
    """A value as trec_eval prints it: ``%ld`` for counts, ``%6.4f`` else."""
    if kind == "long":
        return str(int(value))
    if value != value:  # NaN: C's printf shows 0.0 / 0.0 on x86 as -nan
        return "  -nan"
    return f"{value:6.4f}"


def trec_eval_text(
    needs: Iterable[str],
    value: Callable[[str], Callable[[str], float]],
    order: Layout,
    summary: dict[str, float],
    strings: dict[str, dict[str, str]],
    run_id: str,
    per_need: bool = False,
    with_summary: bool = True,
) -> str:
    """trec_eval's text output: with ``per_need`` the lines of each of ``needs`` first
    (``value(need)(column)`` gives a need's value), then the ``all`` lines."""
    lines = []
    if per_need:
        for need in needs:
            row = value(need)
            for column, kind, printed, _ in order:
                if not printed:
                    continue
                if kind == "string":
                    lines.append(f"{column:<22}\t{need}\t'{strings[column][need]}'")
                else:
                    lines.append(f"{column:<22}\t{need}\t{fmt(row(column), kind)}")
    for column, kind, _, summarised in order:
        if not summarised or not with_summary:
            continue
        if kind == "runid":
            lines.append(f"{'runid':<22}\tall\t{run_id}")
        else:
            lines.append(f"{column:<22}\tall\t{fmt(summary[column], kind)}")
    return "\n".join(lines) + "\n" if lines else ""


@dataclass
class Scores:
    """What :func:`score_ranking` computed: per-need ``columns`` (float64 arrays in
    ``ranking.need_ids`` order), the ``summary``, text measures (``strings``), the
    printing ``order`` and which needs are ``counted`` (printed) per need."""

    columns: dict[str, np.ndarray]
    summary: dict[str, float]
    strings: dict[str, dict[str, str]]
    order: Layout
    counted: np.ndarray


def _sequential_mean(values: np.ndarray, count: int) -> float:
    """Sum in need order (as trec_eval accumulates) then divide."""
    if len(values) == 0 or count == 0:
        return 0.0
    return float(np.cumsum(values)[-1] / count)


def _sequential_sum(values: np.ndarray) -> float:
    return float(np.cumsum(values)[-1]) if len(values) else 0.0


def average(kind: str, values: np.ndarray, counted: np.ndarray) -> float:
    """trec_eval's ``all`` value of one measure from its per-need ``values`` (need order).

    ``kind`` is the measure's summary (:class:`~evaluation.measures.catalog.Measure`):
    ``"gm"`` (values are log(max(v, 0.00001))) exp of their mean; ``"sum"`` and
    ``"num_rel"`` their sum; otherwise the mean. Only the ``counted`` needs are added up,
    and the mean divides by all of them (trec_eval 9.0.8 with ``-c`` counts a need without
    run lines as 0, and as log(0.00001) in a geometric mean). No need: 0.
    """
    n = len(values)
    scored = values[counted]
    if kind == "gm":
        if n == 0:
            return 0.0
        total = _sequential_sum(scored) + (n - len(scored)) * math.log(d.MIN_GEO_MEAN)
        return math.exp(total / n)
    if kind in ("sum", "num_rel"):
        return _sequential_sum(scored)
    return _sequential_mean(scored, n)


# summary-only measures and the per-need measure their per-need logs are taken of
_GEOMETRIC = {"gm_map": "map", "gm_bpref": "bpref"}


def summary_kind(column: str) -> str:
    """How ``column``'s ``all`` value is formed (``Measure.summary``): ``"gm"`` for
    ``gm_map``, ``"sum"`` for ``num_ret`` ..., ``"mean"`` for ``P_10`` and the rest."""
    try:
        measure = measure_named(resolve(column).measure)
    except UnknownMeasure:  # a column of a parameterised request (ndcg with gains)
        measure = measure_named(column) or measure_named(column.rsplit("_", 1)[0])
    return measure.summary if measure is not None else "mean"


def summarise(
    columns: dict[str, np.ndarray], names: Iterable[str], counted: np.ndarray
) -> dict[str, float]:
    """The ``all`` values of ``names`` from per-need ``columns``, as :func:`score_ranking`
    forms them: ``num_q`` the number of needs, ``gm_map``/``gm_bpref`` from the per-need
    ``map``/``bpref`` (the same logs), the others by :func:`average`. ``counted``: which
    needs are added up (all but 9.0.8's ``-c`` needs without run lines).

    The summary of a subset of needs (a benchmark's public or private needs) is thus
    the summary an evaluation against the qrels of those needs alone gives, bit for bit.
    """
    summary: dict[str, float] = {}
    for name in names:
        if name == "num_q":
            summary[name] = float(len(counted))
        elif name in _GEOMETRIC:
            summary[name] = average("gm", d.log_floored(columns[_GEOMETRIC[name]]), counted)
        elif (kind := summary_kind(name)) == "num_rel":
            # -c's num_rel counts the relevant documents of every judged need (9.0.8's
            # needs without run lines too); without -c every need is counted anyway
            summary[name] = average("sum", columns[name], np.ones(len(counted), bool))
        else:
            summary[name] = average(kind, columns[name], counted)
    return summary


_NOT_COMPUTED = ("runid", "num_q", "relstring")  # written by score_ranking itself


def _computed(requests: list[Request], ranking: Ranking) -> dict[int, dict[str, np.ndarray]]:
    """Each request's values (by ``id``). For a large ranking (:data:`THREAD_ROWS` rows or
    more, two CPUs) two requests at a time, on two threads that each take the next one
    left: numpy lets go of the GIL in its loops, and the measures only read the ranking
    (its cached properties are computed once, under ``cached_property``'s lock in 3.11).
    Each value is computed as alone, so the results are the same; the first request
    (in order) that raises raises here."""
    if len(ranking.rel) < threads.THREAD_ROWS or threads._cpus() < 2 or len(requests) < 2:
        return {id(req): compute_request(req, ranking) for req in requests}
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        values = list(pool.map(lambda req: compute_request(req, ranking), requests))
    return {id(req): value for req, value in zip(requests, values, strict=True)}


def score_ranking(
    ranking: Ranking, requests: list[Request], complete: bool, trec_eval_9: bool
) -> Scores:
    """Every requested measure per need and summarised as trec_eval does."""
    n = ranking.n
    bogus = ~ranking.has_run
    # 9.0.8 with -c scores only the needs with run lines and divides by all
    # qrels needs; a gm_* summary then adds log(0.00001) once per missing need
    counted = ranking.has_run if trec_eval_9 and complete else np.ones(n, bool)
    columns: dict[str, np.ndarray] = {}
    strings: dict[str, dict[str, str]] = {}
    order: Layout = []
    summary: dict[str, float] = {}
    computed = _computed([r for r in requests if r.measure.name not in _NOT_COMPUTED], ranking)
    for req in requests:
        m = req.measure
        if m.name == "runid":
            order.append(("runid", "runid", False, True))
            continue
        if m.name == "num_q":
            order.append(("num_q", "long", False, True))
            summary["num_q"] = float(n)
            continue
        if m.name == "relstring":
            length = int(float(split_params(req.params)[0])) if req.params else 10
            name = f"relstring_{req.params}" if req.params else "relstring"
            texts = d.relstring(ranking, max(length, 0))
            strings[name] = {
                need: ("" if b else t)
                for need, t, b in zip(ranking.need_ids, texts, bogus, strict=True)
            }
            order.append((name, "string", True, False))
            continue
        values = computed[id(req)]
        for name, value in values.items():
            value = np.asarray(value, dtype=np.float64).copy()
            if m.name in BOGUS_ZEROED:
                # a need scored only because of -c was ranked on trec_eval's bogus
                # one-document ranking; trec_eval then zeroes these measures
                value[bogus] = 0.0
            fmt = "long" if m.integer else "double"
            if m.summary == "num_rel" and complete:
                summary[name] = float(ranking.qrels_positive)
            else:
                summary[name] = average(m.summary, value, counted)
            if m.per_need:
                columns[name] = value
            order.append((name, fmt, m.per_need, True))
    return Scores(columns, summary, strings, order, counted)
