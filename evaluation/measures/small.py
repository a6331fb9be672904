"""The command line's pandas-free paths. Small files: a run and qrels read by
:mod:`evaluation.trec.small` ranked, judged and scored with numpy alone (no pandas, no
pyarrow). Large files: the general readers' columns (:mod:`evaluation.trec.columnar`)
ranked by :func:`~evaluation.measures.ranking.rank_run` and scored the same way
(:func:`score_columns`), without the frames (pandas' import alone is 0.12-0.19 s).

:func:`rank_small` builds the same :class:`~evaluation.measures.ranking.Ranking` as
:func:`~evaluation.measures.ranking.rank_run` (it shares its ordering and its tail:
:func:`~evaluation.measures.ranking.ordered_lines`,
:func:`~evaluation.measures.ranking.finish_ranking`); the qrels join matches 64-bit (need, doc hash) keys and compares
the doc ids found exactly. :func:`score_small` is :func:`~evaluation.measures.evaluate`
for these inputs, returning what the command line prints (the same
:func:`~evaluation.measures.scoring.score_ranking` and
:func:`~evaluation.measures.scoring.trec_eval_text`), or None where the general path
must answer (no need both judged and run, trec_eval 10.0's abort); so is
:func:`score_columns` for the columnar inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from evaluation.measures.interpolation import check_mode
from evaluation.measures.ranking import (
    NONPOOL,
    UNJUDGED,
    Ranking,
    RunLines,
    _slot,
    finish_ranking,
    ordered_lines,
    rank_run,
)
from evaluation.measures.request import parse_requests
from evaluation.measures.scoring import Scores, need_warnings, score_ranking, trec_eval_text
from evaluation.trec.columns import pair_key
from evaluation.trec.small import SmallQrels, SmallRun

if TYPE_CHECKING:
    from evaluation.trec.columnar import QrelsColumns, RunColumns

__all__ = [
    "PreparedQrels",
    "SmallResult",
    "prepare_qrels",
    "rank_small",
    "score_columns",
    "score_small",
]

_MAX_ID = 1000  # judged doc ids longer than this leave the qrels to the general path


@dataclass
class PreparedQrels:
    """Qrels ready to judge many runs: needs in strcmp order (``judged_needs``, with
    ``index``), each line's need index (``q_need``) and ``relevance``, and the sorted
    64-bit keys of the judged (need, doc hash) pairs (``key``, ``key_row``: their lines)."""

    qrels: SmallQrels
    judged_needs: list[str]
    index: dict[str, int]
    q_need: np.ndarray
    relevance: np.ndarray
    key: np.ndarray
    key_row: np.ndarray
    slots: np.ndarray
    bits: int


def prepare_qrels(qrels: SmallQrels) -> PreparedQrels | None:
    """Index the qrels once (the command line scores many runs against them); None when
    two judged pairs of a need share a 64-bit key (the general path then answers)."""
    judged_needs = sorted(qrels.needs)  # ASCII: str order is strcmp order
    index = {need: i for i, need in enumerate(judged_needs)}
    q_need = np.array([index[n] for n in qrels.needs], dtype=np.int64)[qrels.need]
    key = pair_key(q_need, qrels.doc_hash)
    key_row = np.argsort(key, kind="stable")
    key = key[key_row]
    if bool(np.any(key[1:] == key[:-1])) or int(qrels.rows.length[:, 2].max()) > _MAX_ID:
        return None
    bits = max(16, len(key).bit_length() + 4)  # >= 16 slots per judged pair
    slots = np.zeros(1 << bits, bool)
    slots[_slot(key, bits)] = True
    return PreparedQrels(
        qrels, judged_needs, index, q_need, qrels.relevance, key, key_row, slots, bits
    )


class _Docs:
    """Doc ids by line (bytes, which compare as strcmp), for ordering tied lines."""

    def __init__(self, run: SmallRun, rows: np.ndarray | None) -> None:
        self.fields, self.rows = run.rows, rows

    def __getitem__(self, i: int) -> bytes:
        return self.fields.span(i if self.rows is None else int(self.rows[i]), 2)


def rank_small(
    qrels: PreparedQrels,
    run: SmallRun,
    relevance_level: int = 1,
    max_depth: int | None = None,
    complete: bool = False,
    interpolation: str = "exact",
) -> Ranking:
    """:func:`~evaluation.measures.ranking.rank_run` for small inputs."""
    get = qrels.index.get
    r_need = np.array([get(need, -1) for need in run.needs], dtype=np.int32)[run.need]
    # each line's relevance in file order: the (need, doc hash) key looked up among the
    # judged ones, a found doc id compared exactly
    key = pair_key(r_need, run.doc_hash)
    rel = np.full(len(r_need), NONPOOL, np.int64)
    if len(qrels.key):
        # candidates: lines whose key hits a slot of a judged key (few besides the judged)
        candidates = np.flatnonzero(qrels.slots[_slot(key, qrels.bits)] & (r_need >= 0))
        at = np.minimum(np.searchsorted(qrels.key, key[candidates]), len(qrels.key) - 1)
        hit = qrels.key[at] == key[candidates]
        found, q_rows = candidates[hit], qrels.key_row[at[hit]]
        # the doc ids compared exactly, as rows of bytes
        length = run.rows.length[found, 2]
        same = length == qrels.qrels.rows.length[q_rows, 2]
        width = int(length[same].max()) if same.any() else 0  # <= _MAX_ID: a judged id's
        mine = run.rows.matrix(2, width, found[same])
        same[same] = np.all(mine == qrels.qrels.rows.matrix(2, width, q_rows[same]), axis=1)
        found, q_rows = found[same], q_rows[same]
        value = qrels.relevance[q_rows]
        rel[found] = np.where(value < 0, UNJUDGED, value)
    score = run.score
    if interpolation == "trec_eval-9":
        with np.errstate(over="ignore"):  # beyond float's range: +-inf, as C converts
            score = score.astype(np.float32).astype(np.float64)
    file_rank, kept = run.rank, None
    if (r_need < 0).any():  # lines of needs without judgments are dropped
        kept = np.flatnonzero(r_need >= 0)
        r_need, score, file_rank, rel = r_need[kept], score[kept], file_rank[kept], rel[kept]
    order, need, rank, rank_disagrees, inside = ordered_lines(
        r_need, score, _Docs(run, kept), file_rank, max_depth
    )
    rel = order.apply(rel)
    if inside is not None:
        rel = rel[inside]
    return finish_ranking(
        qrels.judged_needs, need, rank, rel, qrels.q_need, qrels.relevance, r_need,
        relevance_level, max_depth, complete, rank_disagrees, interpolation,
    )  # fmt: skip


@dataclass
class SmallResult:
    """One run's scores, with :class:`~evaluation.measures.Evaluation`'s text output
    (``to_trec_eval``), ``warnings`` and ``run_id``."""

    scores: Scores
    need_ids: list[str]
    run_id: str
    warnings: list[str]

    def to_trec_eval(self, per_need: bool = False) -> str:
        columns = self.scores.columns
        position = {need: i for i, need in enumerate(self.need_ids)}
        counted = self.scores.counted
        return trec_eval_text(
            [need for i, need in enumerate(self.need_ids) if counted[i]],
            lambda need: lambda column: columns[column][position[need]],
            self.scores.order,
            self.scores.summary,
            self.scores.strings,
            self.run_id,
            per_need=per_need,
        )


def score_small(
    qrels: PreparedQrels,
    run: SmallRun,
    measures: Sequence[str] | None = None,
    relevance_level: int = 1,
    max_depth: int | None = None,
    complete: bool = False,
    interpolation: str = "exact",
) -> SmallResult | None:
    """:func:`~evaluation.measures.evaluate` for small inputs (its text output and
    warnings), or None where the general path must answer (it raises, or prints 10.0's
    abort)."""
    interpolation = check_mode(interpolation)
    requests = parse_requests(measures, trec_eval_9=interpolation == "trec_eval-9")
    ranking = rank_small(qrels, run, relevance_level, max_depth, complete, interpolation)
    return _result(ranking, requests, set(run.needs), set(qrels.judged_needs), run, complete)


def score_columns(
    qrels: QrelsColumns,
    run: RunColumns,
    measures: Sequence[str] | None = None,
    relevance_level: int = 1,
    max_depth: int | None = None,
    complete: bool = False,
    interpolation: str = "exact",
) -> SmallResult | None:
    """:func:`score_small` for the columns the general readers give
    (:mod:`evaluation.trec.columnar`), ranked by
    :func:`~evaluation.measures.ranking.rank_run`: the command line's large files scored
    without pandas. ``run`` is handed over: its columns are let go as they are ranked
    (when the caller holds it no more)."""
    import pyarrow.compute as pc

    from evaluation.trec.columnar import needs_present  # pyarrow: not for a small run

    interpolation = check_mode(interpolation)
    requests = parse_requests(measures, trec_eval_9=interpolation == "trec_eval-9")
    run_needs = set(needs_present(run))
    judged = {str(need) for need in pc.unique(qrels.need).to_pylist()}
    lines = RunLines.of_columns(run)  # the columns taken: the run keeps its tag, warnings
    ranking = rank_run(qrels, lines, relevance_level, max_depth, complete, None, interpolation)
    return _result(ranking, requests, run_needs, judged, run, complete)


def _result(
    ranking: Ranking,
    requests: list,
    run_needs: set[str],
    judged: set[str],
    run: SmallRun | RunColumns,
    complete: bool,
) -> SmallResult | None:
    """The scores of a ranking as :func:`~evaluation.measures.evaluate` gives them (its
    warnings), or None where it raises or prints 10.0's abort."""
    if ranking.n == 0:
        return None
    if ranking.interpolation == "trec_eval-10" and not complete and judged - run_needs:
        return None
    warnings = list(run.warnings) + need_warnings(run_needs, judged, ranking.rank_disagrees)
    scores = score_ranking(ranking, requests, complete, ranking.interpolation == "trec_eval-9")
    return SmallResult(scores, ranking.need_ids.tolist(), run.tag, warnings)
