"""Order a run the way trec_eval does and join it with the judgments.

:func:`trec_order` is the only place a run is ordered; every measure reads the
:class:`Ranking` built from it. Semantics (trec_eval 10.0, ``form_res_rels.c``):

- documents are ranked by score descending, compared as 64-bit doubles
  (``0.0`` and ``-0.0`` tie), ties broken by doc_id *descending* in byte
  (``strcmp``) order; the rank column and the line order are ignored; with
  ``interpolation="trec_eval-9"`` scores are first rounded to 32-bit floats, as
  9.0.8 stores them (``float sim``), so scores equal in single precision tie;
- ``-M depth`` keeps the first ``depth`` documents of every need after ordering;
- ``-J`` (``judged_only``) then drops the documents without a non-negative judgment
  (``NONPOOL`` and ``UNJUDGED``) and ranks those left 1..k in their order, so
  ``num_ret`` is k (``comp_rank_judged``); ``-c``'s bogus document is dropped too;
- a retrieved document takes its qrels relevance; one absent from the qrels of
  its need is ``NONPOOL`` (-1); one judged with a negative relevance is
  ``UNJUDGED`` (-2): "in the pool but not judged";
- only needs in the qrels are evaluated (run needs without judgments are
  ignored); needs are kept in ``strcmp`` order of their ids.

Over 400 lines: the ordering, the qrels join and the :class:`Ranking` they build are
one concern.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evaluation.trec.arrays import (
    all_distinct,
    array_values,
    arrow_array,
    run_starts,
    take,
    to_numpy,
)
from evaluation.trec.columnar import Qrels, Run
from evaluation.trec.hashing import pair_key, string_hash
from evaluation.trec.threads import in_background, on_two_threads

if TYPE_CHECKING:  # frames are imported where one is taken: columns need no pandas
    import pandas as pd

NONPOOL = -1
UNJUDGED = -2
RANK_CHECK_SLICE = 1 << 20  # ordered lines whose file ranks are checked at once

__all__ = ["NONPOOL", "UNJUDGED", "Ranking", "RunLines", "rank_run", "trec_order"]


def _as_arrow_strings(
    values: pd.Series | np.ndarray | pa.Array | pa.ChunkedArray,
) -> pa.ChunkedArray:
    if isinstance(values, pa.ChunkedArray):
        array = values
    elif isinstance(values, pa.Array):
        array = pa.chunked_array([values])
    else:
        import pandas as pd

        series = pd.Series(values)
        if isinstance(series.dtype, pd.CategoricalDtype):
            series = series.astype(str)
        array = (
            pa.chunked_array([pa.array(series.astype("str"))]) if series.dtype != "str" else None
        )
        if array is None:
            array = pa.array(series)
            array = array if isinstance(array, pa.ChunkedArray) else pa.chunked_array([array])
    if array.type == pa.large_string():
        return array
    return array.cast(pa.large_string()) if array.type != pa.string() else array


def trec_order(need: np.ndarray, score: np.ndarray, doc: pa.ChunkedArray) -> np.ndarray:
    """Permutation putting run lines in trec_eval order.

    Lines are grouped by ``need`` (integer codes, ascending), then ordered by
    ``score`` descending (float64; ``-0.0 == 0.0``), ties broken by ``doc``
    descending in byte order. The usual run file (each need's lines together,
    scores non-increasing) costs one linear pass; otherwise one argsort on the
    score and one stable sort on the need code. Tie groups, whatever the path,
    are ordered by doc id with one Arrow sort over the tied lines only.

    >>> trec_order(np.array([0, 0, 0]), np.array([1.0, 2.0, 1.0]),
    ...            pa.chunked_array([["a", "b", "c"]])).tolist()
    [1, 2, 0]
    """
    order = _order(need, score, doc)
    return order.full()


@dataclass
class _Order:
    """A trec_eval ordering as ``base`` (a permutation, or None: the file's own
    order) with the tie groups' lines put at ``tie_at`` (ascending positions)
    from rows ``tie_rows``. Ties share need and score, so only columns that
    differ inside a tie group (doc, file rank) need the tie fix-up."""

    n: int
    base: np.ndarray | None
    tie_at: np.ndarray
    tie_rows: np.ndarray

    def full(self) -> np.ndarray:
        perm = np.arange(self.n, dtype=np.int64) if self.base is None else self.base.copy()
        perm[self.tie_at] = self.tie_rows
        return perm

    def by_base(self, values: np.ndarray) -> np.ndarray:
        """``values`` (file order) in base order: right for need and score."""
        return values if self.base is None else values[self.base]

    def apply(self, values: np.ndarray) -> np.ndarray:
        """``values`` (file order) in trec_eval order."""
        out = values.copy() if self.base is None else values[self.base]
        out[self.tie_at] = values[self.tie_rows]
        return out

    def span(self, start: int, stop: int) -> np.ndarray | slice:
        """File rows at positions ``start`` to ``stop`` of the trec_eval order: :meth:`rows`
        of a range, with the tie groups found by two bisections instead of one per
        position (the rank check slices a 7M-line run often); a ``slice`` (it
        indexes as those rows do) where the lines are where the file has them."""
        lo, hi = np.searchsorted(self.tie_at, [start, stop])
        if self.base is None and hi == lo:
            return slice(start, stop)  # the file's own rows: views, no gathers
        if self.base is None:
            rows = np.arange(start, stop, dtype=np.int64)
        else:  # a view of base unless ties are put in
            rows = self.base[start:stop] if hi == lo else self.base[start:stop].copy()
        rows[self.tie_at[lo:hi] - start] = self.tie_rows[lo:hi]
        return rows

    def rows(self, positions: np.ndarray) -> np.ndarray:
        """File rows at sorted ``positions`` of the trec_eval order."""
        rows = positions.astype(np.int64) if self.base is None else self.base[positions]
        at = np.searchsorted(self.tie_at, positions)
        inside = at < len(self.tie_at)
        inside[inside] = self.tie_at[at[inside]] == positions[inside]
        rows[inside] = self.tie_rows[at[inside]]
        return rows


def _order(
    need: np.ndarray,
    score: np.ndarray,
    doc: pa.ChunkedArray,
    doc_rows: np.ndarray | None = None,
) -> _Order:
    """:func:`trec_order` without materialising the permutation where lines stay put.
    ``doc_rows``: the row of ``doc`` of each line, when ``doc`` holds more lines."""
    n = len(need)
    none = np.zeros(0, np.int64)
    if n == 0:
        return _Order(0, None, none, none)
    starts = run_starts(need)
    boundary = np.zeros(n, bool)
    boundary[starts] = True
    block_need = need[starts]
    contiguous = all_distinct(block_need)
    presorted = contiguous and bool(np.all((score[1:] <= score[:-1]) | boundary[1:]))
    base: np.ndarray | None
    if presorted and bool(np.all(block_need[1:] > block_need[:-1])):
        base = None  # needs in order too: nothing moves
        ordered_need, ordered_score = need, score
    elif presorted:
        # already grouped and sorted: only put the blocks in need order
        lengths = np.diff(np.append(starts, n))
        block_order = np.argsort(block_need, kind="stable")
        block_start = starts[block_order]
        block_len = lengths[block_order]
        offsets = np.repeat(
            block_start - np.concatenate(([0], np.cumsum(block_len)[:-1])), block_len
        )
        base = np.arange(n, dtype=np.int64) + offsets
        ordered_need, ordered_score = need[base], score[base]
    else:
        base = _sort_blocks(score, starts, block_need, n) if contiguous else None
        in_place = base is not None and bool(np.all(block_need[1:] > block_need[:-1]))
        if base is None:
            base = np.argsort(-score)
            small = need.astype(np.int16) if need.max() < np.iinfo(np.int16).max else need
            base = base[np.argsort(small[base], kind="stable")]
        # blocks sorted where they lie, already in need order: each line keeps its need
        ordered_need, ordered_score = (need if in_place else need[base]), score[base]
    tie = (ordered_need[1:] == ordered_need[:-1]) & (ordered_score[1:] == ordered_score[:-1])
    if not tie.any():
        return _Order(n, base, none, none)
    in_tie = np.zeros(n, bool)
    in_tie[1:] |= tie
    in_tie[:-1] |= tie
    positions = np.flatnonzero(in_tie)
    group_start = np.ones(len(positions), bool)
    group_start[1:] = ~tie[positions[1:] - 1]
    group = np.cumsum(group_start)
    rows = positions if base is None else base[positions]
    at = rows if doc_rows is None else doc_rows[rows]  # the tied lines' rows of doc
    table = pa.table({"g": arrow_array(group), "d": take(doc, at)})
    within = pc.sort_indices(table, sort_keys=[("g", "ascending"), ("d", "descending")])
    return _Order(n, base, positions, rows[array_values(within)])


def _sort_blocks(
    score: np.ndarray, starts: np.ndarray, block_need: np.ndarray, n: int
) -> np.ndarray | None:
    """The lines of need blocks (each need's lines together, ``starts``) by need, then
    score descending, each block sorted on its own; None where that does not apply.

    The blocks are the rows of a (blocks x longest block) grid, padded with -inf scores
    when they differ in length, and each row is argsorted alone: cache-sized rows, about
    8x faster than one argsort of all 7M lines (a run whose scores are not in order
    within its needs). Distinct scores have one order, so the permutation differs from
    the whole-run sort only inside tie groups, which ``_order`` orders by doc id
    afterwards. Not for non-finite scores (NaN never ties and has no order; -inf would
    tie with the padding) nor when padding would more than double the grid.
    """
    lengths = np.diff(np.append(starts, n))
    width = int(lengths.max())
    blocks = len(starts)
    if blocks * width > 2 * n or not np.isfinite(score).all():
        return None
    inside = None
    if blocks * width == n:  # equal blocks: the grid is a view
        grid = np.negative(score).reshape(blocks, width)
    else:
        grid = np.full((blocks, width), np.inf)
        inside = np.arange(width) < lengths[:, None]
        grid[inside] = -score
    order = np.empty(grid.shape, np.int64)

    def sort_rows(bounds: list[tuple[int, int]], rows: np.ndarray = grid) -> None:
        for lo, hi in bounds:  # numpy's sort lets go of the GIL
            order[lo:hi] = np.argsort(rows[lo:hi], axis=1)

    step = max(1, RANK_CHECK_SLICE // width)  # grid rows sorted at a time, on two threads
    bounds = [(lo, min(lo + step, blocks)) for lo in range(0, blocks, step)]
    on_two_threads(sort_rows, bounds, [(hi - lo) * width for lo, hi in bounds])
    del grid
    order += starts[:, None]  # row positions -> file rows (padding sorts last)
    if not bool(np.all(block_need[1:] > block_need[:-1])):
        by_need = np.argsort(block_need, kind="stable")
        order = order[by_need]
        inside = None if inside is None else inside[by_need]
    return order.reshape(-1) if inside is None else order[inside]


@dataclass
class Ranking:
    """A run ordered and judged, as trec_eval's ``RES_RELS`` for all needs at once.

    Row arrays (one entry per retrieved document, grouped by need in
    ``need_ids`` order, then by rank): ``need`` (index into ``need_ids``),
    ``rank`` (1-based), ``rel`` (qrels relevance, ``NONPOOL`` or ``UNJUDGED``).
    Need arrays: ``num_ret``, ``has_run`` (False for a need only scored
    because of ``complete``: it gets trec_eval's bogus ranking, one document
    outside the qrels at rank 1), ``rel_levels`` (needs x grades: qrels documents
    per non-negative relevance grade, the grades in ``grades``, ascending: only those
    some judgment has, so a grade of 10,000,000 is one column, not ten million) and the
    relevance threshold ``level``.
    ``interpolation``: which rule :mod:`evaluation.measures.interpolation`
    follows for this ranking (``exact``, ``trec_eval-9``, ``trec_eval-10``).

    From :func:`rank_run`, the run as the qrels see it before ``-M`` cuts it (what
    :class:`evaluation.health.JudgedRanks` keeps): ``judged_line``, for each retrieved
    document the qrels list (any relevance), the index of its first qrels line, and
    ``judged_rank``, its rank, in need then rank order, those ranked past ``-M``
    included; ``lines``: each need's run lines (``need_ids`` order), before ``-M``.
    """

    need_ids: np.ndarray
    need: np.ndarray
    rank: np.ndarray
    rel: np.ndarray
    num_ret: np.ndarray
    has_run: np.ndarray
    rel_levels: np.ndarray
    grades: np.ndarray
    level: int
    qrels_positive: int
    rank_disagrees: bool = False
    interpolation: str = "exact"
    judged_line: np.ndarray | None = None
    judged_rank: np.ndarray | None = None
    lines: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.need_ids)

    def count(self, mask: np.ndarray | None = None, need: np.ndarray | None = None) -> np.ndarray:
        """Per-need count of rows (optionally masked), as int64."""
        need = self.need if need is None else need
        if mask is not None:
            need = need[mask]
        return np.bincount(need, minlength=self.n).astype(np.int64)

    def total(self, weights: np.ndarray, need: np.ndarray) -> np.ndarray:
        """Per-need sum of ``weights``, added in rank order as trec_eval does."""
        weights = np.asarray(weights, dtype=np.float64)
        return np.bincount(need, weights=weights, minlength=self.n).astype(np.float64, copy=False)

    @cached_property
    def num_rel(self) -> np.ndarray:
        """R: judged documents with relevance >= the threshold (levels >= 0 only)."""
        return self.rel_levels[:, self.grades >= self.level].sum(axis=1).astype(np.int64)

    @cached_property
    def top_grade(self) -> np.ndarray:
        """Per need, its highest grade with a judgment (-1 when it has none): trec_eval's
        ``num_rel_levels`` - 1, the last level of its gains array."""
        present = self.rel_levels > 0
        if not present.shape[1]:
            return np.full(self.n, -1, np.int64)
        top = present.shape[1] - 1 - np.argmax(present[:, ::-1], axis=1)
        return np.where(present.any(axis=1), self.grades[top], -1)

    @cached_property
    def unjudged_hits(self) -> np.ndarray:
        """Per need, the retrieved documents counted as hits (``rel >= level``) without a
        non-negative judgment: with a negative ``-l``, the non-pool and unjudged ones,
        which trec_eval's loops count as relevant (``rel >= relevance_level``) beside
        ``num_rel_ret``, which does not; 0 otherwise."""
        if self.level >= 0:
            return np.zeros(self.n, np.int64)
        return self.count(need=self.hit_need) - self.num_rel_ret

    @cached_property
    def hits(self) -> np.ndarray:
        """Row positions of relevant retrieved documents (``rel >= level``)."""
        return np.flatnonzero(self.rel >= self.level)

    @cached_property
    def hit_need(self) -> np.ndarray:
        return self.need[self.hits]

    @cached_property
    def hit_rank(self) -> np.ndarray:
        return self.rank[self.hits]

    @cached_property
    def hit_count(self) -> np.ndarray:
        """For each hit, how many hits its need has at or above it (1, 2, ...)."""
        return within_group_position(self.hit_need) + 1

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        judged_rel = (self.rel >= 0) & (self.rel >= self.level)
        return self.count(judged_rel)

    @cached_property
    def judged(self) -> np.ndarray:
        """Row positions of retrieved documents with a non-negative judgment."""
        return np.flatnonzero(self.rel >= 0)


def _slot(key: np.ndarray, bits: int) -> np.ndarray:
    """Multiplicative hash of 64-bit keys into ``2**bits`` slots (top bits)."""
    slot = key * np.uint64(0x9E3779B97F4A7C15)
    slot >>= np.uint64(64 - bits)  # in place: one 7M-entry array, not two
    return slot


def within_group_position(group: np.ndarray) -> np.ndarray:
    """0-based position of every element inside its run of equal (sorted) group values."""
    n = len(group)
    if n == 0:
        return np.zeros(0, np.int64)
    # one running sum of steps: +1 inside a group, back to 0 at each group's start (two
    # passes, no n-entry repeat of the starts: half the time of the repeat)
    starts = run_starts(group)
    step = np.ones(n, np.int64)
    step[0] = 0
    step[starts[1:]] = 1 - np.diff(starts)
    return np.cumsum(step, out=step)


def exclusive_count(flag: np.ndarray, group: np.ndarray) -> np.ndarray:
    """For each element, how many flagged elements precede it in its group."""
    flag = flag.astype(np.int64)
    cum = np.cumsum(flag) - flag
    position = within_group_position(group)
    first = np.arange(len(group)) - position
    return cum - cum[first] if len(group) else cum


@dataclass
class RunLines:
    """A run's columns as :func:`rank_run` reads them, handed over: ``rank_run`` takes
    each one out (sets it to None) and lets it go once used, so that where nothing else
    holds the run its columns are freed while it is ranked: the doc ids (~220 MB for 7M
    lines of 28-byte ids) once the few it needs (tie groups, judged candidates) are
    taken, the scores and the file's ranks once the lines are ordered. ``need``: the
    need ids (pandas Series, categorical or not); ``doc``: the doc ids (Arrow);
    ``score``, ``rank`` (the file's rank column, or None); ``doc_hash``: ``doc``'s
    :func:`~evaluation.trec.hashing.string_hash` when the caller has it."""

    need: pd.Series | np.ndarray | None
    doc: pa.ChunkedArray | None
    score: np.ndarray | None
    rank: np.ndarray | None
    doc_hash: np.ndarray | None = None
    #: when given, ``need`` holds each line's index into these need ids (int32), as
    #: :class:`~evaluation.trec.columnar.Run` has them: no pandas on the way
    need_names: list[str] | None = None

    @classmethod
    def of(cls, run: pd.DataFrame, doc_hash: np.ndarray | None = None) -> RunLines:
        """The columns of a run frame (need_id, doc_id, score and, if any, rank)."""
        rank = np.asarray(run["rank"], dtype=np.float64) if "rank" in run.columns else None
        score = np.asarray(run["score"], dtype=np.float64)
        if doc_hash is not None and len(doc_hash) != len(score):
            doc_hash = None
        return cls(run["need_id"], _as_arrow_strings(run["doc_id"]), score, rank, doc_hash)

    @classmethod
    def of_columns(cls, run: Run) -> RunLines:
        """The columns of a :class:`~evaluation.trec.columnar.Run` (not copied)."""
        return cls(run.need, run.doc, run.score, run.rank, run.doc_hash, run.needs)


def rank_run(
    qrels: pd.DataFrame | Qrels,
    run: pd.DataFrame | RunLines,
    relevance_level: int = 1,
    max_depth: int | None = None,
    complete: bool = False,
    doc_hash: np.ndarray | None = None,
    interpolation: str = "exact",
    judged_only: bool = False,
) -> Ranking:
    """Order ``run`` as trec_eval does and look every retrieved document up in ``qrels``.

    ``qrels``: a frame with columns need_id, doc_id, relevance, or the reader's
    :class:`~evaluation.trec.columnar.Qrels`. ``run``: need_id, doc_id, score (any extra
    column is ignored), or its :class:`RunLines`, which are emptied as they are used (a
    column nothing else holds is freed once used). With ``complete`` every qrels need is
    kept (those without run lines get no rows and ``has_run`` False), else
    only qrels needs with at least one run line. ``doc_hash``: the run doc
    ids' :func:`~evaluation.trec.hashing.string_hash`, row for row, when the
    caller has it; else computed here.
    ``interpolation``: kept on the ranking for the interpolated measures; with
    ``"trec_eval-9"`` the scores are ordered as 32-bit floats (9.0.8's reading).
    ``judged_only``: ``-J``, only the documents judged (relevance >= 0) are kept, ranked
    1..k in their order after ``-M``.
    """
    lines = run if isinstance(run, RunLines) else RunLines.of(run, doc_hash)
    del run, doc_hash
    q_need_ids, q_doc, q_rel = _qrels_columns(qrels)
    judged_needs, q_need = _judged_needs(q_need_ids)
    r_need = _need_codes(lines.need, lines.need_names, judged_needs)
    doc, score, file_rank, doc_hash = lines.doc, lines.score, lines.rank, lines.doc_hash
    lines.need = lines.doc = lines.score = lines.rank = lines.doc_hash = None  # ours now
    if interpolation == "trec_eval-9":
        with np.errstate(over="ignore"):  # beyond float's range: +-inf, as C converts
            score = score.astype(np.float32).astype(np.float64)
    if doc_hash is None:
        doc_hash = string_hash(doc)
    keep = None  # rows of doc (the whole run) of the lines kept
    if (r_need < 0).any():  # lines of needs without judgments are dropped
        keep = np.flatnonzero(r_need >= 0)
        r_need, score, doc_hash = r_need[keep], score[keep], doc_hash[keep]
        file_rank = file_rank[keep] if file_rank is not None else None
    # relevance of each retrieved document. A table of the judged (need, doc) hashes
    # picks the candidate lines (every judged one among them, few others), whose
    # doc ids are then matched exactly against the judged ids of their need. The
    # candidates are found in file order, and their doc ids (and the tie groups') taken
    # before the ordering goes on, so that the doc-id column can go first.
    flagged = _judged_candidates(q_need, string_hash(q_doc), r_need, doc_hash)
    del doc_hash
    order = _order(r_need, score, doc, keep)
    cand_rows = np.flatnonzero(flagged)
    c_doc = take(doc, cand_rows if keep is None else keep[cand_rows])
    del doc, keep  # the doc ids go here when nothing else holds the run

    def doc_codes() -> tuple[pa.Array, np.ndarray, np.ndarray]:
        q_dict = pc.unique(q_doc)
        q_code = to_numpy(pc.index_in(q_doc, value_set=q_dict), np.int64)
        return q_dict, q_code, to_numpy(pc.index_in(c_doc, value_set=q_dict), np.int64, fill=-1)

    # the judged and the candidate doc ids as codes of one dictionary: Arrow's work, on a
    # second thread while numpy orders the lines (Arrow lets go of the GIL: 0.07 s)
    codes = in_background(doc_codes)
    need, rank, rank_disagrees = ordered_ranks(order, r_need, score, file_rank)
    del score, file_rank
    lines = _counts(need, len(judged_needs))  # per need, before -M
    # the judged lines are looked up before -M cuts the needs, so that those past the
    # depth keep their qrels line and rank too (``judged_line``)
    candidates = np.flatnonzero(order.apply(flagged))
    del flagged
    # the candidates' rows in file order, matched to their doc ids (taken by row)
    c_at = np.searchsorted(cand_rows, order.rows(candidates))
    del order, cand_rows
    q_dict, q_code, c_code = codes()
    c_code = c_code[c_at]
    width = max(len(q_dict), 1)
    q_key = q_need.astype(np.int64) * width + q_code
    key_order = np.argsort(q_key, kind="stable")  # a (need, doc) judged twice: its first line
    q_key_sorted = q_key[key_order]
    known = c_code >= 0
    judged = candidates[known]
    judged_line = np.zeros(0, np.int64)
    if len(judged) and len(q_key_sorted):
        r_key = need[judged].astype(np.int64) * width + c_code[known]
        at = np.minimum(np.searchsorted(q_key_sorted, r_key), len(q_key_sorted) - 1)
        found = q_key_sorted[at] == r_key
        judged, judged_line = judged[found], key_order[at[found]]
    else:
        judged = judged[:0]
    judged_rank = rank[judged]
    inside = None
    if max_depth is not None and int(rank.max(initial=0)) > max_depth:  # else all are kept
        inside = np.flatnonzero(rank <= max_depth)
        need, rank = need[inside], rank[inside]
    rel = np.full(len(need), NONPOOL, np.int64)
    kept = slice(None) if inside is None else judged_rank <= max_depth
    value = q_rel[judged_line[kept]]
    at = judged[kept] if inside is None else np.searchsorted(inside, judged[kept])
    rel[at] = np.where(value < 0, UNJUDGED, value)

    ranking = finish_ranking(
        judged_needs, need, rank, rel, q_need, q_rel, r_need,
        relevance_level, max_depth, complete, rank_disagrees, interpolation, judged_only,
    )  # fmt: skip
    ranking.judged_line, ranking.judged_rank = judged_line, judged_rank
    # without complete, finish_ranking keeps the needs with run lines only
    ranking.lines = lines if len(ranking.need_ids) == len(lines) else lines[lines > 0]
    return ranking


def _qrels_columns(
    qrels: pd.DataFrame | Qrels,
) -> tuple[pd.Series | pa.ChunkedArray, pa.ChunkedArray, np.ndarray]:
    """The qrels' need ids, doc ids (Arrow) and relevances (int64)."""
    if isinstance(qrels, Qrels):
        return qrels.need, _as_arrow_strings(qrels.doc), qrels.relevance
    need, doc, relevance = qrels["need_id"], qrels["doc_id"], qrels["relevance"]
    return need, _as_arrow_strings(doc), np.asarray(relevance, dtype=np.int64)


def _need_codes(
    run_need: pd.Series | np.ndarray, names: list[str] | None, judged_needs: list[str]
) -> np.ndarray:
    """Each run line's index into the judged needs (int32; -1: a need without judgments):
    ``run_need`` holds the need ids (a Series, categorical or not), or with ``names``
    each line's index into them."""
    if names is not None:
        position = {need: i for i, need in enumerate(judged_needs)}
        by_name = np.array([position.get(name, -1) for name in names], np.int32)
        if np.array_equal(by_name, np.arange(len(by_name))):
            return run_need  # the run's needs are the judged ones in order: codes as read
        return by_name[run_need] if len(by_name) else np.zeros(len(run_need), np.int32)
    import pandas as pd

    need_index = pd.Index(judged_needs, dtype=object)
    if isinstance(run_need.dtype, pd.CategoricalDtype):
        categories = [str(c) for c in run_need.cat.categories]
        by_category = need_index.get_indexer(pd.Index(categories, dtype=object)).astype(np.int32)
        codes = run_need.cat.codes.to_numpy()
        r_need = by_category[codes]
        if (codes < 0).any():
            r_need[codes < 0] = -1
        return r_need
    r_need = need_index.get_indexer(pd.Index(run_need.astype("str").to_numpy(dtype=object)))
    return r_need.astype(np.int32)


def _judged_candidates(
    q_need: np.ndarray, q_hash: np.ndarray, r_need: np.ndarray, r_hash: np.ndarray
) -> np.ndarray:
    """Flags (file order) of the run lines whose (need, doc hash) hits a slot of a judged
    pair's: every judged line, and few others. The keys are built a slice of lines at a
    time (:data:`RANK_CHECK_SLICE`): no 7M-entry key array."""
    q_key = pair_key(q_need, q_hash)
    bits = max(16, len(q_key).bit_length() + 4)  # >= 16 slots per judged pair
    table = np.zeros(1 << bits, bool)
    table[_slot(q_key, bits)] = True
    flagged = np.empty(len(r_need), bool)

    def look_up(starts: list[int]) -> None:
        for start in starts:
            part = slice(start, start + RANK_CHECK_SLICE)
            flagged[part] = table[_slot(pair_key(r_need[part], r_hash[part]), bits)]

    starts = list(range(0, len(r_need), RANK_CHECK_SLICE))
    # the slices on both cores: the table's slots are read at random (16 MB for 700,000
    # judgments, past the cache), which waits on memory far more than it computes
    on_two_threads(look_up, starts, [min(RANK_CHECK_SLICE, len(r_need) - a) for a in starts])
    return flagged


def _judged_needs(
    need_ids: pd.Series | np.ndarray | pa.ChunkedArray,
) -> tuple[list[str], np.ndarray]:
    """The qrels' distinct need ids in ``strcmp`` order, and each qrels line's index into
    them (int64). Arrow encodes the column (no Python string per line: 0.3-0.5 s less per
    run for 700,000 judgments); only the distinct ids are sorted in Python, by their
    UTF-8 bytes."""
    column = _as_arrow_strings(need_ids)
    encoded = pc.dictionary_encode(column.combine_chunks())
    names = encoded.dictionary.to_pylist()
    by_bytes = sorted(range(len(names)), key=lambda i: names[i].encode())
    position = np.empty(len(names), np.int64)
    position[by_bytes] = np.arange(len(names))
    codes = array_values(encoded.indices)
    return [names[i] for i in by_bytes], position[codes]


def ordered_ranks(
    order: _Order,
    r_need: np.ndarray,
    score: np.ndarray,
    file_rank: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """The ordered lines' need and rank, and whether the file's rank column disagrees
    with the scores."""
    need = order.by_base(r_need)  # ties share their need: no fix-up
    rank = within_group_position(need)
    rank += 1
    rank_disagrees = False
    if file_rank is not None:
        # within a need, a strictly lower score must not come with a smaller rank
        # number (an equal one says nothing: runs that write one rank on every line);
        # tied scores may carry their ranks in any order. A slice of the order at a
        # time (slices overlap by one line): no two more 7M-entry columns at the peak.
        for start in range(0, len(need) - 1, RANK_CHECK_SLICE):
            stop = min(len(need), start + RANK_CHECK_SLICE + 1)
            rows = order.span(start, stop)
            at, by, lines = score[rows], file_rank[rows], need[start:stop]
            lower = (lines[1:] == lines[:-1]) & (at[1:] < at[:-1])
            if np.any(lower & (by[1:] < by[:-1])):
                rank_disagrees = True
                break
    return need, rank, rank_disagrees


def _counts(need: np.ndarray, n: int) -> np.ndarray:
    """How many lines each of ``n`` needs has in ``need`` (sorted): two bisections a need,
    not a pass over 7M lines (bincount: 35 ms)."""
    bounds = np.searchsorted(need, np.arange(n + 1, dtype=need.dtype))  # no 7M-line cast
    return np.diff(bounds).astype(np.int64)


DENSE_GRADES = 1 << 16  # grades below this are counted and looked up in dense tables


def grade_codes(relevance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of non-negative ``relevance`` (ascending) and each one's index
    into them. Grades are usually 0 to 4: one bincount; a grade past
    :data:`DENSE_GRADES` (any int64 is read) takes a sort instead of a table that long.

    >>> [a.tolist() for a in grade_codes(np.array([3, 0, 10_000_000, 3]))]
    [[0, 3, 10000000], [1, 0, 2, 1]]
    """
    if not len(relevance):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if int(relevance.max()) < DENSE_GRADES:
        present = np.bincount(relevance) > 0
        grades = np.flatnonzero(present)
        position = np.cumsum(present) - 1
        return grades, position[relevance]
    grades, code = np.unique(relevance, return_inverse=True)
    return grades.astype(np.int64), code.reshape(-1)


def finish_ranking(
    judged_needs: list[str],
    need: np.ndarray,
    rank: np.ndarray,
    rel: np.ndarray,
    q_need: np.ndarray,
    q_rel: np.ndarray,
    r_need: np.ndarray,
    relevance_level: int,
    max_depth: int | None,
    complete: bool,
    rank_disagrees: bool,
    interpolation: str,
    judged_only: bool = False,
) -> Ranking:
    """The :class:`Ranking` of ordered, judged lines (``need``, ``rank``, ``rel``; needs
    as indexes into ``judged_needs``) given the qrels' need indexes and relevances and
    the run lines' needs (``r_need``): per-need counts, ``-c``'s bogus rankings, and
    needs without run lines dropped without ``complete``; with ``judged_only`` the rows
    not judged dropped and the ranks renumbered."""
    n = len(judged_needs)
    num_ret = _counts(need, n)
    has_run = num_ret > 0 if max_depth is None or max_depth > 0 else np.isin(np.arange(n), r_need)
    nonneg = q_rel >= 0
    grades, code = grade_codes(q_rel[nonneg])
    rel_levels = np.bincount(
        q_need[nonneg].astype(np.int64) * len(grades) + code, minlength=n * len(grades)
    ).reshape(n, len(grades))
    if complete and not has_run.all():
        # trec_eval -c scores a need without run lines on a bogus one-document
        # ranking (a doc outside the qrels at rank 1); do the same, so every measure
        # sees what trec_eval's does (evaluate() then zeroes num_ret etc. as it does)
        missing = np.flatnonzero(~has_run)
        at = np.searchsorted(need, missing)
        need = np.insert(need, at, missing)
        rank = np.insert(rank, at, 1)
        rel = np.insert(rel, at, NONPOOL)
        num_ret = _counts(need, n)
    if judged_only and not (rel >= 0).all():
        # after has_run: a need whose lines are all unjudged is still answered (scored
        # with num_ret 0, as trec_eval's condensed list is empty), and the bogus
        # document, outside the qrels, goes as trec_eval's does
        keep = np.flatnonzero(rel >= 0)
        need, rel = need[keep], rel[keep]
        rank = within_group_position(need) + 1
        num_ret = _counts(need, n)
    if not complete and not has_run.all():
        chosen = np.flatnonzero(has_run)
        remap = np.full(n, -1, np.int32)
        remap[chosen] = np.arange(len(chosen))
        need = remap[need]
        judged_needs = [judged_needs[i] for i in chosen]
        num_ret, has_run, rel_levels = num_ret[chosen], has_run[chosen], rel_levels[chosen]
    return Ranking(
        need_ids=np.array(judged_needs, dtype=object),
        need=need,
        rank=rank,
        rel=rel,
        num_ret=num_ret,
        has_run=has_run,
        rel_levels=rel_levels,
        grades=grades,
        level=relevance_level,
        qrels_positive=int((q_rel > 0).sum()),
        rank_disagrees=rank_disagrees,
        interpolation=interpolation,
    )
