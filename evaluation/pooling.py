"""Pooling: which (need, document) pairs assessors judge, from the participants' runs.

TREC's rule (Voorhees and Harman, *TREC: Experiment and Evaluation in Information
Retrieval*, ch. 3): every team ranks its runs by priority; the top ``runs_per_team``
runs of each team (``m``) are pooled to a ``depth`` (``k``): the pool of a need is the
union of the top ``k`` documents of those runs for that need, each run ordered as
trec_eval orders it (score descending, doc_id descending on ties, the rank column
ignored: :func:`evaluation.measures.trec_order`, the engine's one ranking).

:func:`build_pool` reports the pool size per need and, for each pooled run and team,
how many pairs it contributed and how many are *unique* to it (no other pooled run,
or no other team, has them in its top ``k``): the measure of how much the judgments
depend on one participant (Zobel, SIGIR 1998). :func:`assessor_pairs` gives the pairs
still to judge in a seeded shuffled order per need, and :func:`assessor_file` writes
them for assessors.

Export format: a qrels file, ``need_id 0 doc_id -1`` per line. It is the four-column
format every TREC tool reads (``read_qrels`` here, trec_eval), and a negative relevance
is trec_eval's "in the pool but not judged": assessors replace ``-1`` with their
judgment, and a pair left at ``-1`` stays unjudged, never counted as not relevant.

Edge cases: a run with fewer than ``k`` documents for a need contributes all of them;
a need no pooled run answers has no pool (absent from ``sizes``); a team's runs of equal
priority are taken in run-name order; ``depth`` and ``runs_per_team`` must be >= 1.

All of it is vectorised: the runs' top ``k`` are cut with one ordering per run, then
every pooled pair of every run is encoded as one integer key and counted with
``np.unique``/``np.bincount`` (no Python loop over documents or needs).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evaluation.measures.ranking import trec_order, within_group_position
from evaluation.trec.readers import Run

__all__ = [
    "Pool",
    "PoolRun",
    "assessor_file",
    "assessor_pairs",
    "build_pool",
    "pooled_runs",
    "top_of",
]

UNJUDGED_RELEVANCE = -1


@dataclass(frozen=True)
class PoolRun:
    """A run offered to the pool: its ``name`` (unique), its ``team`` (a participant
    without a team is a team of one), its ``priority`` within the team (1 first) and
    the run as :func:`evaluation.trec.read_run` read it."""

    name: str
    team: str
    priority: int
    run: Run


@dataclass
class Pool:
    """A built pool.

    - ``pairs``: need_id, doc_id, ``runs`` and ``teams`` (how many pooled runs and
      teams have the pair in their top ``depth``), sorted by need_id then doc_id
      (byte order);
    - ``sizes``: pairs per need (index need_id, byte order);
    - ``runs``: one row per pooled run: run, team, priority, ``contributed`` (its
      pairs in the pool), ``unique`` (pairs no other pooled run has);
    - ``teams``: one row per team: team, ``runs`` pooled, ``contributed``, ``unique``
      (pairs no other team has).
    """

    depth: int
    runs_per_team: int
    pairs: pd.DataFrame
    sizes: pd.Series
    runs: pd.DataFrame
    teams: pd.DataFrame


def pooled_runs(runs: Iterable[PoolRun], runs_per_team: int) -> list[PoolRun]:
    """The top ``runs_per_team`` runs of each team by priority (then by name), in
    (team, priority, name) order."""
    if runs_per_team < 1:
        raise ValueError("runs per team must be at least 1")
    ordered = sorted(runs, key=lambda r: (r.team, r.priority, r.name))
    names = [r.name for r in ordered]
    if len(set(names)) != len(names):
        raise ValueError("two pooled runs share a name")
    taken: dict[str, int] = {}
    chosen = []
    for run in ordered:  # one step per run, not per document
        if taken.get(run.team, 0) < runs_per_team:
            taken[run.team] = taken.get(run.team, 0) + 1
            chosen.append(run)
    return chosen


def _columns(run: Run) -> tuple[list[str], np.ndarray, pa.ChunkedArray]:
    """A run's distinct need ids, each line's index into them (int64) and its doc ids
    (Arrow, one string type for every run)."""
    doc = run.doc
    if not pa.types.is_large_string(doc.type):
        doc = doc.cast(pa.large_string())
    return list(run.needs), np.asarray(run.need, dtype=np.int64), doc


def _top_rows(run: Run, depth: int) -> np.ndarray:
    """The rows (file order positions) of ``run``'s top ``depth`` per need, in trec_eval's
    order."""
    _, codes, doc = _columns(run)
    order = trec_order(codes, np.asarray(run.score, dtype=np.float64), doc)
    return order[within_group_position(codes[order]) < depth]


def top_of(run: Run, depth: int) -> Run:
    """``run`` cut to its top ``depth`` documents per need (file order kept): what a pool
    of that depth reads of it, so a caller pooling many large runs holds only this much
    of each (the pool of the cut runs is the pool of the whole ones)."""
    keep = np.sort(_top_rows(run, depth))
    return Run(
        needs=list(run.needs),
        need=run.need[keep],
        doc=run.doc.take(pa.array(keep)),
        doc_hash=run.doc_hash[keep],
        score=run.score[keep],
        rank=run.rank[keep],
        tag=run.tag,
        warnings=list(run.warnings),
    )


def _top(run: Run, depth: int) -> tuple[pa.Array, pa.Array]:
    """The need ids and doc ids of ``run``'s top ``depth`` per need, trec_eval's order."""
    needs, codes, doc = _columns(run)
    keep = _top_rows(run, depth)
    names = pa.array(needs, pa.large_string())
    return names.take(pa.array(codes[keep])), doc.take(pa.array(keep)).combine_chunks()


def _byte_order_codes(values: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """Each value's index into its distinct values sorted in byte order, and those values."""
    encoded = pc.dictionary_encode(values)
    dictionary = encoded.dictionary
    by_bytes = pc.sort_indices(dictionary).to_numpy()
    rank = np.empty(len(dictionary), np.int64)
    rank[by_bytes] = np.arange(len(dictionary))
    indices = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return rank[indices], dictionary.take(pa.array(by_bytes))


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending (one sort: numpy's hashing ``unique`` is slower
    on a million 64-bit keys)."""
    ordered = np.sort(values)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]] if len(ordered) else ordered


def _distinct_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values, ascending, and each value's index into them."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    first = np.r_[True, ordered[1:] != ordered[:-1]] if len(ordered) else np.zeros(0, bool)
    inverse = np.empty(len(values), np.int64)
    inverse[order] = np.cumsum(first) - 1
    return ordered[first], inverse


def build_pool(runs: Sequence[PoolRun], depth: int, runs_per_team: int) -> Pool:
    """Pool the top ``runs_per_team`` runs of each team to ``depth`` (TREC's rule).

    >>> from evaluation.trec import read_run
    >>> a = PoolRun("a", "t1", 1, read_run(b"q1 Q0 d1 1 2 a\\nq1 Q0 d2 2 1 a\\n"))
    >>> b = PoolRun("b", "t2", 1, read_run(b"q1 Q0 d3 1 2 b\\nq1 Q0 d1 2 1 b\\n"))
    >>> build_pool([a, b], depth=1, runs_per_team=1).pairs.doc_id.tolist()
    ['d1', 'd3']
    """
    if depth < 1:
        raise ValueError("pool depth must be at least 1")
    chosen = pooled_runs(runs, runs_per_team)
    team_names = sorted({r.team for r in chosen})
    team_of_run = np.array([team_names.index(r.team) for r in chosen], np.int64)
    tops = [_top(r.run, depth) for r in chosen]
    lengths = np.array([len(doc) for _, doc in tops], np.int64)
    line_run = np.repeat(np.arange(len(chosen), dtype=np.int64), lengths)
    need_col = pa.concat_arrays([n for n, _ in tops]) if tops else pa.array([], pa.large_string())
    doc_col = pa.concat_arrays([d for _, d in tops]) if tops else pa.array([], pa.large_string())
    need_code, need_names = _byte_order_codes(need_col)
    doc_code, doc_names = _byte_order_codes(doc_col)
    width = max(len(doc_names), 1)
    keys, pair_of_line = _distinct_codes(need_code * width + doc_code)
    n_pairs = len(keys)

    # (run, pair) and (team, pair) once each: a run lists a doc once per need
    run_pair = _distinct(line_run * n_pairs + pair_of_line)
    run_of, pair_of = run_pair // max(n_pairs, 1), run_pair % max(n_pairs, 1)
    runs_per_pair = np.bincount(pair_of, minlength=n_pairs)
    team_pair = _distinct(team_of_run[run_of] * n_pairs + pair_of)
    team_of, tpair_of = team_pair // max(n_pairs, 1), team_pair % max(n_pairs, 1)
    teams_per_pair = np.bincount(tpair_of, minlength=n_pairs)

    pair_need = keys // width
    pairs = pd.DataFrame(
        {
            "need_id": need_names.take(pa.array(pair_need)).to_pandas().astype(str),
            "doc_id": doc_names.take(pa.array(keys % width)).to_pandas().astype(str),
            "runs": runs_per_pair,
            "teams": teams_per_pair,
        }
    )
    counts = np.bincount(pair_need, minlength=len(need_names))
    sizes = pd.Series(counts, index=pd.Index(need_names.to_pylist(), name="need_id"), name="pool")
    n_runs, n_teams = len(chosen), len(team_names)
    run_table = pd.DataFrame(
        {
            "run": [r.name for r in chosen],
            "team": [r.team for r in chosen],
            "priority": [r.priority for r in chosen],
            "contributed": np.bincount(run_of, minlength=n_runs),
            "unique": np.bincount(run_of[runs_per_pair[pair_of] == 1], minlength=n_runs),
        }
    )
    team_table = pd.DataFrame(
        {
            "team": team_names,
            "runs": np.bincount(team_of_run, minlength=n_teams),
            "contributed": np.bincount(team_of, minlength=n_teams),
            "unique": np.bincount(team_of[teams_per_pair[tpair_of] == 1], minlength=n_teams),
        }
    )
    return Pool(depth, runs_per_team, pairs, sizes, run_table, team_table)


def assessor_pairs(pool: Pool, judged: pd.DataFrame | None, seed: int) -> pd.DataFrame:
    """The pool's pairs not yet judged, needs in byte order, each need's pairs in an
    order drawn from ``seed`` (``numpy.random.default_rng``): neither rank nor team
    shows, and the same pool and seed give the same order.

    ``judged``: qrels (need_id, doc_id, relevance); a pair with a relevance >= 0 is
    judged, a negative one ("in the pool, not judged") is still to judge."""
    pairs = pool.pairs[["need_id", "doc_id"]]
    if judged is not None and len(judged):
        done = judged[np.asarray(judged["relevance"]) >= 0]
        done_index = pd.MultiIndex.from_arrays(
            [done["need_id"].astype(str), done["doc_id"].astype(str)]
        )
        there = pd.MultiIndex.from_frame(pairs).isin(done_index)
        pairs = pairs[~there]
    # pool.pairs is sorted by (need, doc): the draw depends on the pairs and the seed only
    draw = np.random.default_rng(seed).random(len(pairs))
    need_rank = pd.Categorical(pairs["need_id"], categories=pool.sizes.index).codes
    order = np.lexsort((draw, need_rank))
    return pairs.iloc[order].reset_index(drop=True)


def assessor_file(pairs: pd.DataFrame) -> bytes:
    """``need_id 0 doc_id -1`` per pair (a qrels file of unjudged pairs), in order."""
    if not len(pairs):
        return b""
    need = pa.array(pairs["need_id"].astype(str), pa.large_string())
    doc = pa.array(pairs["doc_id"].astype(str), pa.large_string())
    text = [pa.scalar(t, pa.large_string()) for t in (" 0 ", f" {UNJUDGED_RELEVANCE}\n", "")]
    lines = pc.binary_join_element_wise(need, text[0], doc, text[1], text[2])
    # a string column's data buffer holds its values back to back: the file, in one copy
    offsets = np.frombuffer(lines.buffers()[1], np.int64)
    start, end = int(offsets[lines.offset]), int(offsets[lines.offset + len(lines)])
    return lines.buffers()[2][start:end].to_pybytes()
