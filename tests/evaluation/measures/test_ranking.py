"""rank_run on handed-over lines: the same ranking as a slow per-line reference, and the
run's doc ids let go while it ranks when nothing else holds them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation.measures.ranking import (
    NONPOOL,
    UNJUDGED,
    RunLines,
    _order,
    rank_run,
    within_group_position,
)
from evaluation.trec.hashing import string_hash
from tests.evaluation.reference import order as reference_order


def _reference_rows(qrels, run, max_depth, judged_only=False):
    """(need index, rank, rel) of every ranked line, needs in strcmp order, the slow way;
    ``judged_only``: trec_eval's -J, the judged ones (rel >= 0) after -M, ranked anew."""
    judged: dict[str, dict[str, int]] = {}
    for need, doc, rel in qrels.itertuples(index=False):
        judged.setdefault(need, {})[doc] = rel
    by_need: dict[str, dict[str, float]] = {}
    for need, doc, score in run[["need_id", "doc_id", "score"]].itertuples(index=False):
        by_need.setdefault(str(need), {})[doc] = score
    needs = sorted((n for n in judged if n in by_need), key=str.encode)
    rows = []
    for i, need in enumerate(needs):
        rels = [judged[need].get(doc) for doc in reference_order(by_need, need)[:max_depth]]
        rels = [NONPOOL if rel is None else UNJUDGED if rel < 0 else rel for rel in rels]
        if judged_only:
            rels = [rel for rel in rels if rel >= 0]
        rows += [(i, rank, rel) for rank, rel in enumerate(rels, start=1)]
    return needs, rows


@st.composite
def _runs(draw):
    needs = draw(st.lists(st.sampled_from(["q1", "q2", "q10", "qé", "x"]), min_size=1))
    docs = [f"d{i}" for i in range(12)] + ["d1é", "D", "d"]
    lines = draw(
        st.lists(
            st.tuples(
                st.sampled_from(needs),
                st.sampled_from(docs),
                st.sampled_from([0.0, -0.0, 1.5, 2.0, -3.0]),
            ),
            min_size=1,
            max_size=60,
            unique_by=lambda line: (line[0], line[1]),
        )
    )
    judged = draw(
        st.lists(
            st.tuples(
                st.sampled_from(needs[:-1] or needs), st.sampled_from(docs), st.integers(-1, 3)
            ),
            min_size=1,
            max_size=40,
            unique_by=lambda line: (line[0], line[1]),
        )
    )
    return lines, judged, draw(st.sampled_from([None, 1, 3])), draw(st.integers(1, 4))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_runs())
def test_handed_over_lines_rank_as_the_slow_reference(case):
    """Ties (signed zeros too), lines of needs without judgments, unjudged (-1) judgments,
    -M, and doc ids in several Arrow chunks: rank_run on handed-over lines (the doc ids
    of the tie groups and candidates taken, the column let go) gives each line the need,
    rank and relevance a per-line reference gives, and empties the lines."""
    lines, judged, max_depth, pieces = case
    qrels = pd.DataFrame(judged, columns=["need_id", "doc_id", "relevance"])
    run = pd.DataFrame(lines, columns=["need_id", "doc_id", "score"])
    run["need_id"] = run["need_id"].astype("category")
    run["rank"] = np.arange(len(run), dtype=np.float64)
    ids = [str(d) for d in run["doc_id"]]
    cuts = np.linspace(0, len(ids), pieces + 1).astype(int)
    doc = pa.chunked_array(
        [pa.array(ids[a:b], pa.string()) for a, b in zip(cuts[:-1], cuts[1:], strict=True)],
        pa.string(),
    )
    handed = RunLines(
        run["need_id"], doc, run["score"].to_numpy(), run["rank"].to_numpy(), string_hash(doc)
    )
    ranking = rank_run(qrels, handed, max_depth=max_depth, complete=False)
    assert (handed.need, handed.doc, handed.score, handed.rank, handed.doc_hash) == (None,) * 5
    needs, rows = _reference_rows(qrels, run, max_depth)
    assert ranking.need_ids.tolist() == needs
    got = list(zip(ranking.need.tolist(), ranking.rank.tolist(), ranking.rel.tolist(), strict=True))
    assert got == rows
    # the frame itself gives the same ranking
    again = rank_run(qrels, run, max_depth=max_depth)
    assert again.rel.tolist() == ranking.rel.tolist()
    assert again.rank.tolist() == ranking.rank.tolist()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_runs(), st.booleans())
def test_judged_only_keeps_the_judged_lines_ranked_anew(case, complete):
    """trec_eval's -J: after ordering and -M, the lines without a judgment >= 0 (not in
    the qrels, or judged < 0) go and the rest are ranked 1..k; a need left with none
    keeps its place with num_ret 0, and -c's bogus document goes too."""
    lines, judged, max_depth, _ = case
    qrels = pd.DataFrame(judged, columns=["need_id", "doc_id", "relevance"])
    run = pd.DataFrame(lines, columns=["need_id", "doc_id", "score"])
    ranking = rank_run(qrels, run, max_depth=max_depth, complete=complete, judged_only=True)
    needs, rows = _reference_rows(qrels, run, max_depth, judged_only=True)
    if complete:
        everyone = sorted(set(qrels["need_id"]), key=str.encode)
        rows = [(everyone.index(needs[i]), rank, rel) for i, rank, rel in rows]
        needs = everyone
    assert ranking.need_ids.tolist() == needs
    got = list(zip(ranking.need.tolist(), ranking.rank.tolist(), ranking.rel.tolist(), strict=True))
    assert got == rows
    assert ranking.num_ret.tolist() == [sum(r[0] == i for r in rows) for i in range(len(needs))]
    assert ranking.has_run.tolist() == [need in set(run["need_id"]) for need in needs]


def test_the_doc_ids_go_before_the_lines_are_ranked_when_nothing_else_holds_them(monkeypatch):
    """Handed over, the run's doc-id column is freed once the tie groups' and the judged
    candidates' ids are taken, before ranks are built; held by the caller, it stays."""
    import evaluation.measures.ranking as ranking

    size = 200_000
    ids = [f"msmarco_passage_{i:012d}" for i in range(size)]  # 28 bytes: ~5.6 MB of ids
    qrels = pd.DataFrame({"need_id": ["q"] * 3, "doc_id": ids[:3], "relevance": [1, 0, 2]})
    score = np.arange(size, 0, -1, dtype=np.float64)
    score[:4] = size  # one tie group: the first four lines
    need = pd.Series(pd.Categorical(["q"] * size))
    seen = []
    real = ranking.ordered_ranks

    def spy(*args, **kwargs):
        seen.append(pa.total_allocated_bytes())
        return real(*args, **kwargs)

    monkeypatch.setattr(ranking, "ordered_ranks", spy)
    before = pa.total_allocated_bytes()
    kept = pa.chunked_array([pa.array(ids)])
    column = kept.nbytes
    held = rank_run(qrels, RunLines(need, kept, score, None))
    lines = RunLines(need, pa.chunked_array([pa.array(ids)]), score, None)
    handed = rank_run(qrels, lines)
    assert seen[0] - before >= column  # held: the caller's column is still there
    assert seen[1] - before < column + column // 4  # handed over: only the caller's copy
    assert handed.rel.tolist() == held.rel.tolist()
    assert handed.rel[:4].tolist() == [NONPOOL, 2, 0, 1]  # a tie group, doc ids descending
    del kept


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.sampled_from([0.0, 1.0, 2.5])), min_size=1,
             max_size=80),
    st.booleans(),
    st.data(),
)  # fmt: skip
def test_a_span_of_the_order_holds_the_rows_at_its_positions(lines, presorted, data):
    """``_Order.span(start, stop)`` (the rank check's slices) gives the file rows that
    ``rows`` gives for those positions: ties fixed up inside the span, whether the lines
    stay in file order (no base) or are permuted."""
    if presorted:
        lines = sorted(lines, key=lambda line: (line[0], -line[1]))
    need = np.array([n for n, _ in lines], np.int32)
    score = np.array([s for _, s in lines])
    doc = pa.chunked_array([pa.array([f"d{i % 7}" for i in range(len(lines))], pa.string())])
    order = _order(need, score, doc)
    start = data.draw(st.integers(0, len(lines)))
    stop = data.draw(st.integers(start, len(lines)))
    span = np.arange(len(lines))[order.span(start, stop)]  # rows, or a slice of them
    assert span.tolist() == order.rows(np.arange(start, stop)).tolist()
    assert span.tolist() == order.full()[start:stop].tolist()


@given(st.lists(st.integers(1, 30), max_size=20))
def test_positions_inside_groups_count_from_zero_at_each_start(lengths):
    group = np.repeat(np.arange(len(lengths)) * 2, lengths)
    expected = [i for length in lengths for i in range(length)]
    assert within_group_position(group).tolist() == expected
    assert within_group_position(group).dtype == np.int64
