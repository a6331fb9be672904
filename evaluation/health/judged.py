"""A run's judged documents and their ranks: all pool bias needs of a run, kept small.

Pool bias (:mod:`evaluation.health.pools`) rescores runs on judgments with some lines
taken out. Every measure of trec_eval reads a ranked document only through its rank and
its judgment, so for one qrels a run is known, for that purpose, by

- ``line``: for each retrieved document that the qrels list (any relevance, negative
  included), the index of its qrels line (which fixes need, document and relevance);
- ``rank``: its 1-based rank in trec_eval's order (:func:`evaluation.measures.trec_order`:
  score descending, doc_id descending on ties; scores as the ranking read them, 32-bit
  under ``interpolation="trec_eval-9"``), among the run's lines of its need;
- ``num_ret``: how many lines the run has for each need of the qrels.

All of the run's lines count: no ``-M`` depth cuts them.

Rows are grouped by need (in :class:`QrelsIndex` order), by rank within a need. A
document outside the qrels is at any rank between the judged ones; the few measures
that read those rows too (:data:`READS_UNJUDGED`) get them back from ``num_ret``.

:meth:`JudgedRanks.to_bytes` packs the three arrays (int32) with the qrels' line and
need counts, which :meth:`JudgedRanks.from_bytes` checks against the qrels it is used
with. Built once per run and qrels, from the :class:`~evaluation.measures.Ranking` that
scored it (:meth:`JudgedRanks.of`: its ordering and qrels join reused) or from the run
(:func:`judged_ranks`): the platform stores it when it scores the run, so pool bias
never reads a run file again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluation.measures.ranking import Ranking, RunLines, rank_run
from evaluation.trec import as_qrels, as_run
from evaluation.trec.columnar import Run

__all__ = ["READS_UNJUDGED", "JudgedRanks", "QrelsIndex", "judged_ranks"]

#: trec_eval measures (base names) that read the ranks of documents outside the qrels:
#: for them the unjudged rows are rebuilt from ``num_ret``.
READS_UNJUDGED = frozenset({"G", "ndcg_rel", "Rndcg", "rbp_resid", "relstring"})

_HEADER = 3  # int64s before the arrays: rows, needs, qrels lines


class QrelsIndex:
    """Qrels as pool bias reads them: ``frame`` (the engine's qrels frame), ``needs`` (the
    distinct need ids as str, in order of first appearance), each line's need (``need``,
    an index into ``needs``) and ``relevance`` (int64)."""

    def __init__(self, qrels: pd.DataFrame | object) -> None:
        self.frame = as_qrels(qrels)
        need_ids = self.frame["need_id"].astype(str)
        self.needs = pd.Index(pd.unique(need_ids), name="need_id")
        self.need = self.needs.get_indexer(need_ids).astype(np.int64)
        self.relevance = self.frame["relevance"].to_numpy(dtype=np.int64)
        # the same as int32, what rankings of many runs are built from (half the bytes)
        self.need32, self.relevance32 = self.need.astype(np.int32), self.relevance.astype(np.int32)

    def __len__(self) -> int:
        return len(self.relevance)


@dataclass
class JudgedRanks:
    """One run's judged documents for one qrels (see the module docstring)."""

    line: np.ndarray
    rank: np.ndarray
    num_ret: np.ndarray
    qrels_lines: int

    def to_bytes(self) -> bytes:
        header = np.array([len(self.line), len(self.num_ret), self.qrels_lines], np.int64)
        arrays = (self.line, self.rank, self.num_ret)
        return header.tobytes() + b"".join(a.astype(np.int32).tobytes() for a in arrays)

    @classmethod
    def of(cls, ranking: Ranking, qrels: QrelsIndex) -> JudgedRanks:
        """The judged ranks a :func:`~evaluation.measures.ranking.rank_run` ranking of a
        run on ``qrels`` carries (``judged_line``, ``judged_rank``, ``lines``: before
        ``-M``), put in ``qrels``' need order: work in the run's judged documents, none
        in its lines. ValueError for a ranking without them or of other qrels."""
        line, rank, lines = ranking.judged_line, ranking.judged_rank, ranking.lines
        if line is None or rank is None or lines is None:
            raise ValueError("judged ranks: the ranking does not carry its judged lines")
        at = qrels.needs.get_indexer(pd.Index(ranking.need_ids, dtype=object))
        if (at < 0).any() or int(line.max(initial=-1)) >= len(qrels):
            raise ValueError("judged ranks: the ranking is of other qrels")
        num_ret = np.zeros(len(qrels.needs), np.int32)
        num_ret[at] = lines
        need = qrels.need[line]
        if len(need) and not bool(np.all(need[1:] >= need[:-1])):
            # the ranking's needs come in strcmp order, these in the qrels' order; a
            # stable sort keeps each need's ranks in order (16-bit codes: a radix sort)
            small = need.astype(np.int16) if len(qrels.needs) <= np.iinfo(np.int16).max else need
            by = np.argsort(small, kind="stable")
            line, rank = line[by], rank[by]
        return cls(line.astype(np.int32), rank.astype(np.int32), num_ret, len(qrels))

    @classmethod
    def from_bytes(cls, blob: bytes, qrels: QrelsIndex | None = None) -> JudgedRanks:
        """Unpack :meth:`to_bytes`; with ``qrels``, ValueError unless built on qrels of its
        shape (as many lines and needs)."""
        rows, needs, lines = (int(v) for v in np.frombuffer(blob, np.int64, _HEADER))
        body = np.frombuffer(blob, np.int32, offset=8 * _HEADER)
        if len(body) != 2 * rows + needs:
            raise ValueError("judged ranks: truncated data")
        if qrels is not None and (lines != len(qrels) or needs != len(qrels.needs)):
            raise ValueError(
                f"judged ranks built on other qrels ({lines} lines, {needs} needs; "
                f"these have {len(qrels)} and {len(qrels.needs)})"
            )
        return cls(body[:rows], body[rows : 2 * rows], body[2 * rows :], lines)


def _lines(run: object) -> RunLines:
    """A run's lines for :func:`rank_run` (a reader's Run is read, not emptied)."""
    if isinstance(run, pd.DataFrame) and {"need_id", "doc_id", "score"} <= set(run.columns):
        return RunLines.of(run)
    return RunLines.of_columns(run if isinstance(run, Run) else as_run(run))


def judged_ranks(qrels: QrelsIndex, run: object) -> JudgedRanks:
    """The :class:`JudgedRanks` of ``run`` (a frame with need_id, doc_id and score, a
    reader's :class:`~evaluation.trec.columnar.Run`, read but not taken, or
    anything :func:`~evaluation.trec.as_run` reads) on ``qrels``: the run ranked by
    :func:`~evaluation.measures.ranking.rank_run` (no ``-M``, 64-bit scores), then
    :meth:`JudgedRanks.of`.

    Example: a need with lines d3 (score 3), d2 (2), d1 (1) and qrels line 0 judging d2
    gives ``line == [0]``, ``rank == [2]``, ``num_ret == [3]``.
    """
    return JudgedRanks.of(rank_run(qrels.frame, _lines(run)), qrels)
