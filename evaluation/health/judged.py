"""A run's judged documents and their ranks: all pool bias needs of a run, kept small.

Pool bias (:mod:`evaluation.health.pools`) rescores runs on judgments with some lines
taken out. Every measure of trec_eval reads a ranked document only through its rank and
its judgment, so for one qrels a run is known, for that purpose, by

- ``line``: for each retrieved document that the qrels list (any relevance, negative
  included), the index of its qrels line (which fixes need, document and relevance);
- ``rank``: its 1-based rank in trec_eval's order (:func:`evaluation.measures.trec_order`:
  score descending, doc_id descending on ties), among the run's lines of its need;
- ``num_ret``: how many lines the run has for each need of the qrels.

Rows are grouped by need (in :class:`QrelsIndex` order), by rank within a need. A
document outside the qrels is at any rank between the judged ones; the few measures
that read those rows too (:data:`READS_UNJUDGED`) get them back from ``num_ret``.

:meth:`JudgedRanks.to_bytes` packs the three arrays (int32) with the qrels' line and
need counts, which :meth:`JudgedRanks.from_bytes` checks against the qrels it is used
with. Built once per run and qrels (:func:`judged_ranks`): the platform stores it when
it scores the run, so pool bias never reads a run file again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from evaluation.measures import trec_order
from evaluation.trec import as_qrels, as_run
from evaluation.trec.columnar import RunColumns

__all__ = ["READS_UNJUDGED", "JudgedRanks", "QrelsIndex", "judged_ranks"]

#: trec_eval measures (base names) that read the ranks of documents outside the qrels:
#: for them the unjudged rows are rebuilt from ``num_ret``.
READS_UNJUDGED = frozenset({"G", "ndcg_rel", "Rndcg", "rbp_resid", "relstring"})

_HEADER = 3  # int64s before the arrays: rows, needs, qrels lines


class QrelsIndex:
    """Qrels as pool bias reads them: ``needs`` (the distinct need ids as str, in order of
    first appearance), each line's need (``need``, an index into ``needs``) and
    ``relevance`` (int64), and the lines' (need, doc id) pairs to look runs up in."""

    def __init__(self, qrels: pd.DataFrame | object) -> None:
        frame = as_qrels(qrels)
        need_ids = frame["need_id"].astype(str)
        self.needs = pd.Index(pd.unique(need_ids), name="need_id")
        self.need = self.needs.get_indexer(need_ids).astype(np.int64)
        self.relevance = frame["relevance"].to_numpy(dtype=np.int64)
        self._table = pa.table(
            {
                "need": pa.array(self.need.astype(np.int32)),
                "doc": pa.array(frame["doc_id"].astype(str).to_numpy(dtype=object), pa.string()),
                "line": pa.array(np.arange(len(frame), dtype=np.int32)),
            }
        )

    def __len__(self) -> int:
        return len(self.relevance)

    def lines_of(self, need: np.ndarray, doc: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
        """The qrels line of each (need index, doc id) that has one: (row positions, lines)."""
        table = pa.table(
            {
                "need": pa.array(need.astype(np.int32)),
                "doc": doc.cast(pa.string()),
                "at": pa.array(np.arange(len(need), dtype=np.int64)),
            }
        )
        joined = table.join(self._table, keys=["need", "doc"], join_type="inner")
        at = joined["at"].to_numpy()
        return at, joined["line"].to_numpy().astype(np.int32)


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


def _columns(qrels: QrelsIndex, run: object) -> tuple[np.ndarray, np.ndarray, pa.ChunkedArray]:
    """Each run line's need (index into ``qrels.needs``, -1 for a need without
    judgments), score and doc id."""
    if isinstance(run, RunColumns):
        codes = qrels.needs.get_indexer(pd.Index(run.needs, dtype=object))
        need = codes[run.need] if len(codes) else np.full(len(run.need), -1)
        return need.astype(np.int64), np.asarray(run.score, np.float64), run.doc
    if not (isinstance(run, pd.DataFrame) and {"need_id", "doc_id", "score"} <= set(run.columns)):
        run = as_run(run).frame
    need = qrels.needs.get_indexer(run["need_id"].astype(str)).astype(np.int64)
    doc = pa.chunked_array([pa.array(run["doc_id"].astype(str).to_numpy(dtype=object))])
    return need, run["score"].to_numpy(dtype=np.float64), doc


def judged_ranks(qrels: QrelsIndex, run: object) -> JudgedRanks:
    """The :class:`JudgedRanks` of ``run`` (a frame with need_id, doc_id and score, a
    reader's :class:`~evaluation.trec.columnar.RunColumns`, read but not taken, or
    anything :func:`~evaluation.trec.as_run` reads) on ``qrels``.

    Example: a need with lines d3 (score 3), d2 (2), d1 (1) and qrels line 0 judging d2
    gives ``line == [0]``, ``rank == [2]``, ``num_ret == [3]``.
    """
    need, score, doc = _columns(qrels, run)
    keep = np.flatnonzero(need >= 0)
    if len(keep) < len(need):
        need, score = need[keep], score[keep]
        doc = doc.take(pa.array(keep))
    num_ret = np.bincount(need, minlength=len(qrels.needs)).astype(np.int32)
    order = trec_order(need, score, doc)
    need = need[order]
    starts = np.r_[0, np.flatnonzero(need[1:] != need[:-1]) + 1] if len(need) else need
    rank = np.arange(len(need)) - np.repeat(starts, np.diff(np.r_[starts, len(need)])) + 1
    at, line = qrels.lines_of(need, doc.take(pa.array(order)))
    by = np.lexsort((rank[at], need[at]))
    return JudgedRanks(line[by], rank[at][by].astype(np.int32), num_ret, len(qrels))
