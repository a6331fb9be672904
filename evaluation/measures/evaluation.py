"""Score a run against qrels with trec_eval's measures, all needs at once.

:func:`evaluate` is the entry point; measure names, parameters, output order,
averaging and the ``-c`` / ``-l`` / ``-M`` semantics are trec_eval's (10.0,
except ``iprec_at_recall``/``11pt_avg``, see :mod:`evaluation.measures.interpolation`,
unless ``interpolation`` asks for a trec_eval version's rules).
Measure requests use trec_eval's ``-m`` syntax: ``"map"``, ``"P.5,7,3"``,
``"ndcg.1=3,2=9"``, ``"iprec_at_recall..10,.20"``, the sets ``"official"``
and ``"all_trec"``, or catalog names (``"nDCG@10"``, ``"RR@10"``); the
measures and their names are in :mod:`evaluation.measures.catalog`, the
syntax in :mod:`evaluation.measures.request`. :class:`Evaluation` holds the
scores and writes them as trec_eval does (or as JSON or CSV).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from evaluation.measures.interpolation import STANDARD_LEVELS, check_mode
from evaluation.measures.interpolation import interpolated_curve as _curve
from evaluation.measures.ranking import Ranking, RunLines, rank_run
from evaluation.measures.request import parse_requests
from evaluation.measures.scoring import (
    Layout,
    need_warnings,
    score_ranking,
    summarise,
    trec_eval_text,
)
from evaluation.trec.arrays import codes_present
from evaluation.trec.columnar import Qrels, Run, needs_present
from evaluation.trec.inputs import as_qrels, as_run, is_frame

if TYPE_CHECKING:  # imported where a frame is built: scoring files needs no pandas
    import pandas as pd

__all__ = [
    "Evaluation",
    "NeedWithoutRun",
    "evaluate",
    "interpolated_curve",
    "num_relevant",
    "relevant_ranks",
    "summarise_needs",
]


@dataclass
class Evaluation:
    """The scores of one run.

    ``need_ids``: the needs scored, in trec_eval's strcmp order; ``columns``: one float64
    array per measure, a value per need in that order, named as trec_eval prints it
    (``map``, ``P_10``, ``iprec_at_recall_0.00``, ``num_ret`` ...); summary-only measures
    (``num_q``, ``gm_map``, ``gm_bpref``) have none. :attr:`per_need` is the same values
    as a DataFrame (index need_id), built when first asked for.
    ``summary``: trec_eval's ``all`` values: means (geometric for gm_*),
    sums for ``num_*``, ``num_q`` the number of needs averaged over.
    ``strings``: per-need text measures (``relstring``), need_id -> text.
    ``interpolation``: the rules followed (:data:`~evaluation.measures.interpolation.MODES`).
    ``unprinted``: needs scored and averaged in whose lines the text output
    leaves out (trec_eval 9.0.8 with ``-c`` prints none for needs without run lines).
    """

    need_ids: list[str]
    columns: dict[str, np.ndarray]
    summary: dict[str, float]
    run_id: str
    warnings: list[str] = field(default_factory=list)
    strings: dict[str, dict[str, str]] = field(default_factory=dict)
    layout: Layout = field(default_factory=list, repr=False)
    # the ordered and judged run the scores came from (reused by relevant_ranks)
    ranking: Ranking | None = field(default=None, repr=False, compare=False)
    interpolation: str = "exact"
    unprinted: frozenset[str] = frozenset()

    @cached_property
    def per_need(self) -> pd.DataFrame:
        """One row per need (index ``need_id``, strcmp order), one column per measure."""
        import pandas as pd

        index = pd.Index(self.need_ids, name="need_id", dtype="str")
        return pd.DataFrame(self.columns, index=index)

    def only(self, needs: Sequence[str]) -> Evaluation:
        """The same evaluation restricted to ``needs`` (those of them it scored, kept in
        its order): their per-need values, and the summary averaged over them as
        trec_eval averages (:func:`~evaluation.measures.scoring.summarise`): equal, bit
        for bit, to evaluating the run against the qrels of those needs alone."""
        keep = np.isin(np.array(self.need_ids, dtype=object), np.array(list(needs), dtype=object))
        need_ids = [need for need, kept in zip(self.need_ids, keep, strict=True) if kept]
        columns = {name: values[keep] for name, values in self.columns.items()}
        counted = np.array([need not in self.unprinted for need in need_ids], dtype=bool)
        return replace(
            self,
            need_ids=need_ids,
            columns=columns,
            summary=summarise(columns, self.summary, counted),
            strings={
                name: {n: t[n] for n in need_ids if n in t} for name, t in self.strings.items()
            },
            unprinted=self.unprinted & frozenset(need_ids),
        )

    def to_trec_eval(self, per_need: bool = False, summary: bool = True) -> str:
        """trec_eval's text output (``-q`` adds the per-need lines first; ``summary``
        False leaves out the ``all`` lines, as trec_eval's ``-n``)."""
        position = {need: i for i, need in enumerate(self.need_ids)}
        columns = self.columns
        return trec_eval_text(
            [need for need in self.need_ids if need not in self.unprinted],
            lambda need: lambda column: columns[column][position[need]],
            self.layout,
            self.summary,
            self.strings,
            self.run_id,
            per_need=per_need,
            with_summary=summary,
        )

    def to_json(self) -> str:
        """``{"run_id", "summary", "per_need": {need: {measure: value}}, "warnings"}``;
        a value that is not a number (trec_eval's ``-nan``) is ``null``, which JSON has."""
        per_need = self.per_need.to_dict(orient="index").items()
        return json.dumps(
            {
                "run_id": self.run_id,
                "summary": _numbers(self.summary),
                "per_need": {str(k): _numbers(v) for k, v in per_need},
                "warnings": self.warnings,
            },
            indent=1,
            allow_nan=False,
        )

    def to_csv(self) -> str:
        """One row per need plus an ``all`` row, one column per measure."""
        return with_summary_row(self.per_need, self.summary).to_csv(index_label="need_id")


def with_summary_row(per_need, summary: dict):
    """``per_need`` and one more row, ``all``, of the summary's values of its columns:
    added, not assigned, so a need named ``all`` keeps its own row (as trec_eval
    prints both)."""
    import pandas as pd

    row = pd.DataFrame([{k: v for k, v in summary.items() if k in per_need.columns}], ["all"])
    return pd.concat([per_need, row.reindex(columns=per_need.columns)])


def _numbers(values: dict) -> dict:
    """``values`` with NaN as None (JSON's ``null``: ``NaN`` is not JSON)."""
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in values.items()}


class NeedWithoutRun(ValueError):
    """trec_eval 10.0's abort: a qrels need has no run lines and ``complete`` is off.

    Raised by :func:`evaluate` with ``interpolation="trec_eval-10"`` only (the
    other modes skip such needs, as 9.0.8 does). ``need_id``: the first such
    need in strcmp order, where 10.0 stops; ``partial``: the evaluation of the
    needs before it, whose ``-q`` lines 10.0 printed before stopping (None if
    there are none). The message is 10.0's own, misleading as it is.
    """

    def __init__(self, need_id: str, partial: Evaluation | None) -> None:
        self.need_id = need_id
        self.partial = partial
        super().__init__(f"result qid '{need_id}' not found in qrels")


def _ranked(
    qrels: pd.DataFrame | Qrels,
    run: Run | pd.DataFrame | RunLines,
    relevance_level: int,
    max_depth: int | None,
    complete: bool,
    interpolation: str = "exact",
    judged_only: bool = False,
) -> Ranking:
    """:func:`rank_run` on a run, its frame or its lines."""
    if isinstance(run, Run):
        run = RunLines.of_columns(run)
    return rank_run(
        qrels,
        run,
        relevance_level,
        max_depth,
        complete,
        interpolation=check_mode(interpolation),
        judged_only=judged_only,
    )


def _judged_needs(qrels: pd.DataFrame | Qrels) -> set[str]:
    """The need ids with judgments."""
    if isinstance(qrels, Qrels):
        return set(qrels.need.unique().to_pylist())
    import pandas as pd

    return set(map(str, pd.unique(pd.Series(qrels["need_id"]).astype(str))))


def _run_needs(frame: pd.DataFrame) -> set[str]:
    """The need ids with at least one line in the run."""
    import pandas as pd

    need_column = frame["need_id"]
    if isinstance(need_column.dtype, pd.CategoricalDtype):
        categories, codes = need_column.cat.categories, need_column.cat.codes.to_numpy()
        return set(map(str, categories[codes_present(codes, len(categories))]))
    return set(map(str, pd.unique(need_column.astype(str))))


def _lines_of(run) -> tuple[RunLines, str, list[str], set[str]]:
    """A run, a frame or anything :func:`~evaluation.trec.inputs.as_run` takes: its lines,
    tag, warnings and needs."""
    if is_frame(run) and {"need_id", "doc_id", "score"} <= set(run.columns):
        run_id = str(run["tag"].iloc[-1]) if "tag" in run.columns and len(run) else ""
        return RunLines.of(run), run_id, [], _run_needs(run)
    run = as_run(run)
    return RunLines.of_columns(run), run.tag, list(run.warnings), set(needs_present(run))


def evaluate(
    qrels: pd.DataFrame | object,
    run: Run | pd.DataFrame | object,
    measures: Sequence[str] | None = None,
    relevance_level: int = 1,
    max_depth: int | None = None,
    complete: bool = False,
    interpolation: str = "exact",
    judged_only: bool = False,
) -> Evaluation:
    """Score ``run`` against ``qrels`` with trec_eval's measures and semantics.

    ``measures``: ``-m`` strings in trec_eval's syntax or catalog names
    (default ``official``; ``all_trec`` is all of trec_eval's). ``relevance_level``:
    ``-l``, documents with relevance >= it are relevant. ``max_depth``: ``-M``,
    documents ranked below it are dropped. ``complete``: ``-c``, every qrels
    need is scored, those the run did not answer with zeros (and are averaged
    in); without it they are skipped (trec_eval 9.0.8's behaviour; 10.0-rc3
    aborts there). Run needs absent from the qrels are ignored (and warned about).
    ``judged_only``: ``-J``, after ordering and ``max_depth`` only the documents judged
    in the qrels (any relevance >= 0, non-relevant included) are kept, ranked 1..k in
    their order; ``num_ret`` and every measure see that list.

    ``interpolation``: ``"exact"`` (the seed's definition of interpolated
    precision, 64-bit scores), ``"trec_eval-9"`` or ``"trec_eval-10"``: every
    printed line as that trec_eval version prints it. ``trec_eval-9`` also
    orders 32-bit float scores, leaves 10.0's measures (``rbp``, ``rbp_resid``,
    ``unj``) out of ``all_trec``, and with ``complete`` prints no per-need
    lines for needs without run lines (they stay in ``per_need`` and count as
    0 in the means, as 9.0.8 counts them); ``trec_eval-10`` without
    ``complete`` raises :class:`NeedWithoutRun` where 10.0 aborts.

    ``qrels`` and ``run``: files (path, bytes, stream; gzip too), the engine's own
    frames, or as held in Python: a DataFrame (ir_measures', ranx's or PyTerrier's
    column names), a ``{need: {doc: value}}`` dict, a ranx ``Run``/``Qrels``, ir_measures
    ``ScoredDoc``/``Qrel`` tuples (:mod:`evaluation.trec.inputs`). A run frame with the
    engine's columns (``need_id``, ``doc_id``, ``score``, optional ``tag``) is used as
    it is; other frames go through :func:`~evaluation.trec.inputs.as_run`. A
    :class:`~evaluation.trec.Run` is scored from its columns (no frame built); when the
    caller holds it no more, its arrays are freed as the lines are ranked.

    Raises ValueError for an unknown measure
    (:class:`~evaluation.measures.catalog.UnknownMeasure`), bad parameters, or
    when no need has both run lines and judgments (without ``complete``).

    Example: the seed's system A on its four library needs gives
    ``summary["map"] == 0.4733...`` and ``per_need.loc["atwood", "map"] == 0.8333...``.
    """
    interpolation = check_mode(interpolation)
    v9 = interpolation == "trec_eval-9"
    qrels = as_qrels(qrels)
    requests = parse_requests(measures, trec_eval_9=v9)
    lines, run_id, warnings, run_needs = _lines_of(run)
    # the ranking lets each of the run's columns (~500 MB for 7M lines of 28-byte doc
    # ids) go once it has used it, when the caller does not hold the run
    del run
    ranking = _ranked(
        qrels, lines, relevance_level, max_depth, complete, interpolation, judged_only
    )
    judged = _judged_needs(qrels)
    warnings += need_warnings(run_needs, judged, ranking.rank_disagrees)
    missing = sorted(judged - run_needs, key=str.encode)
    abort_at = missing[0] if interpolation == "trec_eval-10" and not complete and missing else None
    if ranking.n == 0:
        if abort_at is not None:
            raise NeedWithoutRun(abort_at, None)
        raise ValueError("no need has both run lines and judgments")
    scores = score_ranking(ranking, requests, complete, v9)
    need_ids = ranking.need_ids.tolist()
    result = Evaluation(
        need_ids, scores.columns, scores.summary, run_id, warnings, scores.strings,
        scores.order, ranking, interpolation, frozenset(ranking.need_ids[~scores.counted]),
    )  # fmt: skip
    if abort_at is not None:
        before = [need for need in need_ids if need.encode() < abort_at.encode()]
        raise NeedWithoutRun(abort_at, result.only(before) if before else None)
    return result


def summarise_needs(
    per_need: pd.DataFrame,
    names: Iterable[str],
    interpolation: str = "exact",
    complete: bool = True,
) -> dict[str, float]:
    """trec_eval's summary (``names``: e.g. a stored summary's keys) of the needs in
    ``per_need`` (:attr:`Evaluation.per_need`, or a subset of its rows as stored), with the
    flags it was scored with: what :meth:`Evaluation.only` gives, without the evaluation.

    Under ``interpolation="trec_eval-9"`` with ``complete`` a need without run lines is
    averaged in as 0 (9.0.8's rule); ``num_ret`` of 0 tells those needs apart, so it must
    be a column then.
    """
    counted = np.ones(len(per_need), bool)
    if check_mode(interpolation) == "trec_eval-9" and complete:
        if "num_ret" not in per_need.columns:
            raise ValueError("summarise_needs: trec_eval-9 with -c needs the num_ret column")
        counted = per_need["num_ret"].to_numpy() > 0
    columns = {name: per_need[name].to_numpy(dtype=np.float64) for name in per_need.columns}
    return summarise(columns, names, counted)


def relevant_ranks(
    qrels: pd.DataFrame | Ranking,
    run: Run | pd.DataFrame | None = None,
    relevance_level: int = 1,
    max_depth: int | None = None,
    interpolation: str = "exact",
) -> pd.DataFrame:
    """The 1-based rank of every relevant retrieved document, in trec_eval's ordering.

    Columns need_id (str) and rank (int64), needs in strcmp order, ranks
    increasing. Feed one need's ranks and its R to
    :func:`precision_recall_points` for the PR curve (the seed's Figure 1).
    Accepts a :class:`Ranking` (``Evaluation.ranking``) in place of ``qrels,
    run`` to reuse the ordering an evaluation made with the same flags
    (``interpolation="trec_eval-9"`` orders 32-bit scores, as :func:`evaluate`).
    """
    if isinstance(qrels, Ranking):
        ranking = qrels
    elif run is None:
        raise TypeError("relevant_ranks needs qrels and a run (or a Ranking)")
    else:
        ranking = _ranked(qrels, run, relevance_level, max_depth, True, interpolation)
    import pandas as pd

    return pd.DataFrame(
        {
            "need_id": pd.Series(ranking.need_ids[ranking.hit_need], dtype="str"),
            "rank": ranking.hit_rank.astype(np.int64),
        }
    )


def num_relevant(qrels: pd.DataFrame, relevance_level: int = 1) -> pd.Series:
    """R per need: judged documents with relevance >= ``relevance_level``."""
    relevant = qrels[qrels["relevance"] >= max(relevance_level, 0)]
    return relevant.groupby(relevant["need_id"].astype(str)).size().rename("num_rel")


def interpolated_curve(
    qrels: pd.DataFrame | Ranking,
    run: Run | pd.DataFrame | None = None,
    relevance_level: int = 1,
    max_depth: int | None = None,
    complete: bool = False,
    levels: Sequence[str] = STANDARD_LEVELS,
    interpolation: str = "exact",
) -> tuple[pd.DataFrame, pd.Series]:
    """The interpolated precision-recall curve: per need and averaged over needs.

    Returns (DataFrame indexed by need_id with one column per recall level as
    a float, Series of the means). The means equal ``evaluate(...).summary``'s
    ``iprec_at_recall_*`` for the same flags (``interpolation`` included). Accepts
    a :class:`Ranking` in place of ``qrels, run`` to reuse an ordering (and its
    interpolation rule). Example: the seed's system A,
    need cs-foundations, gives 1.0 at recall 0.0, 4/7 at 0.2 and 0.0 at 0.9.
    """
    if isinstance(qrels, Ranking):
        ranking = qrels
    else:
        if run is None:
            raise TypeError("interpolated_curve needs qrels and a run (or a Ranking)")
        ranking = _ranked(qrels, run, relevance_level, max_depth, complete, interpolation)
    return _curve(ranking, tuple(levels))
