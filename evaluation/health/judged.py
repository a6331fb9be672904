"""A run's judged documents and their ranks: all pool bias needs of a run, kept small.

Pool bias (:mod:`evaluation.health.pools`) rescores runs on judgments with some lines
taken out. Every measure of trec_eval reads a ranked document only through its rank and
its judgment, so for one qrels a run is known, for that purpose, by

- ``line``: for each retrieved document that the qrels list (any relevance, negative
  included), the index of its qrels line (which fixes need, document and relevance);
- ``rank``: its 1-based rank in trec_eval's order (:func:`evaluation.measures.trec_order`:
  score descending, doc_id descending on ties; 64-bit scores, or from a ranking the
  scores it ordered: 32-bit under ``interpolation="trec_eval-9"``), among the run's
  lines of its need;
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
import pyarrow as pa
import pyarrow.compute as pc

from evaluation.measures import trec_order
from evaluation.measures.ranking import Ranking
from evaluation.trec import as_qrels, as_run
from evaluation.trec.arrays import to_numpy
from evaluation.trec.columnar import Qrels, Run
from evaluation.trec.hashing import pair_key, string_hash

__all__ = ["READS_UNJUDGED", "JudgedRanks", "QrelsIndex", "judged_ranks"]

#: trec_eval measures (base names) that read the ranks of documents outside the qrels:
#: for them the unjudged rows are rebuilt from ``num_ret``.
READS_UNJUDGED = frozenset({"G", "ndcg_rel", "Rndcg", "rbp_resid", "relstring"})

_HEADER = 3  # int64s before the arrays: rows, needs, qrels lines
SLICE = 1 << 20  # run lines looked up at a time


class QrelsIndex:
    """Qrels as pool bias reads them: ``needs`` (the distinct need ids as str, in order of
    first appearance), each line's need (``need``, an index into ``needs``) and
    ``relevance`` (int64), and the lines' (need, doc id) keys to look runs up in."""

    def __init__(self, qrels: pd.DataFrame | object) -> None:
        qrels = as_qrels(qrels)
        if isinstance(qrels, Qrels):  # the reader's columns, as the worker keeps them
            need_ids, self._doc = qrels.need.combine_chunks(), qrels.doc
            self.relevance = np.asarray(qrels.relevance, dtype=np.int64)
        else:
            need_ids, self._doc = (
                _strings(qrels["need_id"]).combine_chunks(),
                _strings(qrels["doc_id"]),
            )
            self.relevance = qrels["relevance"].to_numpy(dtype=np.int64)
        # Arrow's dictionary lists the values in order of first appearance
        encoded = pc.dictionary_encode(need_ids)
        self.needs = pd.Index(encoded.dictionary.to_pylist(), dtype="str", name="need_id")
        self.need = to_numpy(encoded.indices, np.int64)
        # the same as int32, what rankings of many runs are built from (half the bytes);
        # a grade past int32 keeps the relevances as they are
        small = not len(self.relevance) or (
            np.iinfo(np.int32).min <= self.relevance.min()
            and self.relevance.max() <= np.iinfo(np.int32).max
        )
        self.need32 = self.need.astype(np.int32)
        self.relevance32 = self.relevance.astype(np.int32) if small else self.relevance
        key = pair_key(self.need, string_hash(self._doc))
        self._order = np.argsort(key, kind="stable")
        self._keys = key[self._order]
        # a bit per slot of a table 16 times larger: most unjudged lines miss it, and
        # only the others are searched for
        self._bits = max(16, len(key).bit_length() + 4)
        self._slots = np.zeros(1 << self._bits, bool)
        self._slots[self._slot(key)] = True

    def __len__(self) -> int:
        return len(self.relevance)

    def _slot(self, key: np.ndarray) -> np.ndarray:
        return (key * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - self._bits)

    def lines_of(
        self, need: np.ndarray, doc: pa.ChunkedArray, doc_hash: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The qrels line of each (need index, doc id) that has one: (row positions,
        lines). Keys pick the candidates; their doc ids are then compared exactly."""
        doc_hash = string_hash(doc) if doc_hash is None else doc_hash
        picked, keys = [], []
        for start in range(0, len(need), SLICE):  # no run-long temporaries
            part = slice(start, start + SLICE)
            key = pair_key(need[part], doc_hash[part])
            hit = np.flatnonzero(self._slots[self._slot(key)])
            picked.append(hit + start)
            keys.append(key[hit])
        candidates = np.concatenate(picked) if picked else np.zeros(0, np.int64)
        key = np.concatenate(keys) if keys else np.zeros(0, np.uint64)
        by_key = np.argsort(key)  # searched in key order: cache-friendly
        candidates, key = candidates[by_key], key[by_key]
        low = np.searchsorted(self._keys, key, "left")
        high = np.searchsorted(self._keys, key, "right")
        found = np.full(len(key), -1, np.int64)
        for step in range(int((high - low).max(initial=0))):  # 1 unless two keys collide
            at = np.flatnonzero((low + step < high) & (found < 0))
            line = self._order[low[at] + step]
            same = pc.equal(doc.take(pa.array(candidates[at])), self._doc.take(pa.array(line)))
            exact = same.to_numpy(zero_copy_only=False)
            found[at[exact]] = line[exact]
        at = np.flatnonzero(found >= 0)
        return candidates[at], found[at].astype(np.int32)


def _strings(values: pd.Series) -> pa.ChunkedArray:
    try:
        array = pa.array(values, pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # not all str (numbers, say)
        array = pa.array(values.astype(str).to_numpy(dtype=object), pa.string())
    return pa.chunked_array([array])


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

    def only(self, qrels: QrelsIndex, needs) -> JudgedRanks:
        """These ranks (on ``qrels``) as they are on the qrels of ``needs`` alone: those
        needs' rows, with lines counted among the kept qrels lines. Equal to
        :func:`judged_ranks` on ``QrelsIndex`` of the qrels lines of ``needs`` (in file
        order), without the run: a benchmark's public and private parts."""
        keep_need = np.asarray(qrels.needs.isin(list(needs)), bool)
        keep_line = keep_need[qrels.need]
        renumbered = np.cumsum(keep_line) - 1
        rows = keep_line[self.line]
        return JudgedRanks(
            renumbered[self.line[rows]].astype(np.int32),
            self.rank[rows].astype(np.int32),
            self.num_ret[keep_need].astype(np.int32),
            int(keep_line.sum()),
        )

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


def _columns(
    qrels: QrelsIndex, run: object
) -> tuple[np.ndarray, np.ndarray, pa.ChunkedArray, np.ndarray | None]:
    """Each run line's need (index into ``qrels.needs``, -1 for a need without
    judgments), score, doc id and, when the reader kept it, doc id hash."""
    if isinstance(run, Run):
        codes = qrels.needs.get_indexer(pd.Index(run.needs, dtype=object))
        need = codes[run.need] if len(codes) else np.full(len(run.need), -1)
        return need.astype(np.int64), np.asarray(run.score, np.float64), run.doc, run.doc_hash
    if not (isinstance(run, pd.DataFrame) and {"need_id", "doc_id", "score"} <= set(run.columns)):
        run = as_run(run).frame
    need = qrels.needs.get_indexer(run["need_id"].astype(str)).astype(np.int64)
    return need, run["score"].to_numpy(dtype=np.float64), _strings(run["doc_id"]), None


def judged_ranks(qrels: QrelsIndex, run: object) -> JudgedRanks:
    """The :class:`JudgedRanks` of ``run`` (a frame with need_id, doc_id and score, a
    reader's :class:`~evaluation.trec.columnar.Run`, read but not taken, or
    anything :func:`~evaluation.trec.as_run` reads) on ``qrels``.

    For a run no scoring ranked (pool bias from files, a result stored without them):
    the qrels are prepared once (:class:`QrelsIndex`) for any number of runs, where
    :func:`~evaluation.measures.ranking.rank_run`'s join works over all the qrels for
    each run.

    Example: a need with lines d3 (score 3), d2 (2), d1 (1) and qrels line 0 judging d2
    gives ``line == [0]``, ``rank == [2]``, ``num_ret == [3]``.
    """
    need, score, doc, doc_hash = _columns(qrels, run)
    if (need < 0).any():  # lines of needs without judgments go
        keep = np.flatnonzero(need >= 0)
        need, score = need[keep], score[keep]
        doc = doc.take(pa.array(keep))
        doc_hash = None if doc_hash is None else doc_hash[keep]
    num_ret = np.bincount(need, minlength=len(qrels.needs)).astype(np.int32)
    at, line = qrels.lines_of(need, doc, doc_hash)
    by_row = np.argsort(at)
    at, line = at[by_row], line[by_row]
    order = trec_order(need, score, doc)  # grouped by need, in need order
    judged = np.zeros(len(need), bool)
    judged[at] = True
    place = np.flatnonzero(judged[order])  # the judged lines' places in that order
    rows = order[place]
    first = np.cumsum(num_ret, dtype=np.int64) - num_ret  # each need's first place
    rank = place - first[need[rows]] + 1
    line = line[np.searchsorted(at, rows)]
    by = np.lexsort((rank, need[rows]))
    return JudgedRanks(line[by], rank[by].astype(np.int32), num_ret, len(qrels))
