"""Measures from hand-computed fractions: short runs, no relevant documents, ties at cutoffs."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from evaluation.measures import (
    ALL_TREC,
    evaluate,
    interpolated_curve,
    precision_recall_points,
    relevant_ranks,
)
from evaluation.measures.ranking import _order, rank_run, trec_order
from evaluation.trec import read_qrels, read_run
from tests import FIXTURES

SEED = FIXTURES / "seed-library"


def qrels_of(rows):
    return pd.DataFrame(rows, columns=["need_id", "doc_id", "relevance"])


def run_of(rows):
    return pd.DataFrame(rows, columns=["need_id", "doc_id", "score"])


# one need, R = 3 (a, b, c), judged non-relevant x, y; the run ranks a x b z (z unjudged)
QRELS = qrels_of([("q", "a", 1), ("q", "b", 2), ("q", "c", 1), ("q", "x", 0), ("q", "y", 0)])
RUN = run_of([("q", "a", 4.0), ("q", "x", 3.0), ("q", "b", 2.0), ("q", "z", 1.0)])


def test_precision_divides_by_k_even_for_short_runs():
    e = evaluate(QRELS, RUN, ["P.1,2,4,10"])
    row = e.per_need.loc["q"]
    assert row["P_1"] == 1.0
    assert row["P_2"] == 1 / 2
    assert row["P_4"] == 2 / 4
    assert row["P_10"] == 2 / 10  # 4 retrieved: the rest count as misses


def test_average_precision_and_friends():
    e = evaluate(
        QRELS,
        RUN,
        ["map", "recip_rank", "Rprec", "recall.2,10", "bpref", "num_ret", "num_rel", "num_rel_ret"],
    )
    row = e.per_need.loc["q"]
    assert row["map"] == pytest.approx((1 / 1 + 2 / 3) / 3, abs=0)
    assert row["recip_rank"] == 1.0
    assert row["Rprec"] == 2 / 3  # top 3: a x b
    assert row["recall_2"] == 1 / 3
    assert row["recall_10"] == 2 / 3
    # bpref: a has no judged non-relevant above (1), b has x above: 1 - min(1,3)/min(2,3)
    assert row["bpref"] == pytest.approx((1 + (1 - 1 / 2)) / 3)
    assert (row["num_ret"], row["num_rel"], row["num_rel_ret"]) == (4, 3, 2)


def test_ndcg_by_hand():
    e = evaluate(QRELS, RUN, ["ndcg", "ndcg_cut.1,3"])
    dcg = 1 / math.log2(2) + 2 / math.log2(4)
    ideal = 2 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    assert e.per_need.loc["q", "ndcg"] == pytest.approx(dcg / ideal)
    assert e.per_need.loc["q", "ndcg_cut_1"] == pytest.approx(1 / 2)
    assert e.per_need.loc["q", "ndcg_cut_3"] == pytest.approx(
        dcg / (2 + 1 / math.log2(3) + 1 / math.log2(4))
    )


def test_need_without_relevant_documents_scores_zero():
    qrels = qrels_of([("q", "a", 0), ("r", "b", 1)])
    run = run_of([("q", "a", 1.0), ("r", "b", 1.0)])
    e = evaluate(qrels, run, ["all_trec"])
    row = e.per_need.loc["q"]
    for name in (
        "map",
        "recip_rank",
        "Rprec",
        "P_5",
        "recall_5",
        "ndcg",
        "bpref",
        "iprec_at_recall_0.00",
    ):
        assert row[name] == 0.0, name
    assert e.summary["num_q"] == 2
    assert e.summary["map"] == 0.5  # averaged in, as trec_eval does


def test_ties_straddling_a_cutoff_follow_doc_id_descending():
    # three docs tie at score 1.0 across the P_2 cutoff; docno descending puts c, b, a
    qrels = qrels_of([("q", "a", 1), ("q", "b", 0), ("q", "c", 0), ("q", "d", 1)])
    run = run_of([("q", "a", 1.0), ("q", "b", 1.0), ("q", "c", 1.0), ("q", "d", 2.0)])
    e = evaluate(qrels, run, ["P.1,2,3,4", "recip_rank"])
    row = e.per_need.loc["q"]
    assert row["P_1"] == 1.0  # d
    assert row["P_2"] == 1 / 2  # d c
    assert row["P_3"] == 1 / 3  # d c b
    assert row["P_4"] == 2 / 4  # ... a
    # the rank column is ignored entirely
    assert relevant_ranks(qrels, run)["rank"].tolist() == [1, 4]


def test_trec_order_byte_order_and_signed_zero():
    need = np.array([0, 0, 0, 0, 0, 0])
    score = np.array([0.0, -0.0, 0.0, 1.0, 1.0, 1.0])
    doc = pa_strings(["100", "80", "9", "doc", "Doc", "DOC"])
    order = trec_order(need, score, doc)
    assert [doc[int(i)].as_py() for i in order] == ["doc", "Doc", "DOC", "9", "80", "100"]


def pa_strings(values):
    import pyarrow as pa

    return pa.chunked_array([pa.array(values)])


def test_trec_order_unsorted_input_groups_by_need():
    need = np.array([1, 0, 1, 0])
    score = np.array([1.0, 5.0, 3.0, 7.0])
    order = trec_order(need, score, pa_strings(["a", "b", "c", "d"]))
    assert order.tolist() == [3, 1, 2, 0]


@pytest.mark.parametrize("layout", ["needs-in-order", "needs-shuffled", "unsorted"])
def test_trec_order_paths_agree_with_a_slow_sort(layout):
    """The three paths of trec_order (already in order: nothing moves; need
    blocks out of order; lines in any order) against Python's sort on
    (need, -score, doc bytes descending)."""
    rng = np.random.default_rng(7)
    lines = [
        (need, float(rng.integers(0, 4)), f"d{rng.integers(0, 40)}")
        for need in range(5)
        for _ in range(12)
    ]
    lines = list({(n, d): (n, s, d) for n, s, d in lines}.values())  # one doc once per need
    by_need = sorted(lines, key=lambda x: (x[0], -x[1]))  # file order: ties as they come
    if layout == "needs-shuffled":
        by_need = sorted(by_need, key=lambda x: (x[0] % 3, x[0], -x[1]))
    elif layout == "unsorted":
        by_need = [by_need[i] for i in rng.permutation(len(by_need))]
    need = np.array([n for n, _, _ in by_need], np.int32)
    score = np.array([s for _, s, _ in by_need])
    docs = pa_strings([d for _, _, d in by_need])
    order = trec_order(need, score, docs)
    expected = sorted(by_need, key=lambda x: (x[0], -x[1], [-b for b in x[2].encode()] + [1]))
    assert [by_need[i] for i in order] == expected
    # the lazy form rank_run uses: same order, column by column and row by row
    lazy = _order(need, score, docs)
    assert (lazy.base is None) == (layout == "needs-in-order") and len(lazy.tie_at) > 0
    np.testing.assert_array_equal(lazy.full(), order)
    values = rng.random(len(order))
    np.testing.assert_array_equal(lazy.apply(values), values[order])
    np.testing.assert_array_equal(lazy.by_base(need), need[order])  # ties share a need
    np.testing.assert_array_equal(lazy.by_base(score), score[order])
    positions = np.flatnonzero(rng.random(len(order)) < 0.5)
    np.testing.assert_array_equal(lazy.rows(positions), order[positions])


def test_relevance_threshold_and_negative_levels():
    qrels = qrels_of([("q", "a", 1), ("q", "b", 2), ("q", "c", -1)])
    run = run_of([("q", "c", 3.0), ("q", "a", 2.0), ("q", "b", 1.0)])
    loose = evaluate(qrels, run, ["map", "num_rel", "bpref"])
    strict = evaluate(qrels, run, ["map", "num_rel"], relevance_level=2)
    assert loose.per_need.loc["q", "num_rel"] == 2
    assert loose.per_need.loc["q", "map"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert strict.per_need.loc["q", "num_rel"] == 1
    assert strict.per_need.loc["q", "map"] == pytest.approx(1 / 3)
    # c (negative: in the pool, unjudged) is skipped by bpref
    assert loose.per_need.loc["q", "bpref"] == 1.0


def test_max_depth_truncates_after_ordering():
    e = evaluate(QRELS, RUN, ["num_ret", "P.5", "map"], max_depth=2)
    assert e.per_need.loc["q", "num_ret"] == 2
    assert e.per_need.loc["q", "P_5"] == 1 / 5
    assert e.per_need.loc["q", "map"] == pytest.approx(1 / 3)


def test_complete_scores_missing_needs_as_zero():
    qrels = qrels_of([("q", "a", 1), ("r", "b", 1), ("r", "c", 1)])
    run = run_of([("q", "a", 1.0), ("s", "z", 1.0)])
    e = evaluate(qrels, run, ["official"], complete=True)
    assert e.per_need.index.tolist() == ["q", "r"]
    assert e.per_need.loc["r", "map"] == 0 and e.per_need.loc["r", "num_rel"] == 2
    assert e.per_need.loc["r", "num_ret"] == 0
    assert e.summary["num_q"] == 2 and e.summary["map"] == 0.5
    assert e.summary["gm_map"] == pytest.approx(math.sqrt(1 * 0.00001))
    without = evaluate(qrels, run, ["official"])
    assert without.per_need.index.tolist() == ["q"] and without.summary["map"] == 1.0
    assert any("without judgments" in w for w in e.warnings)


def test_no_common_need_raises_without_complete():
    with pytest.raises(ValueError, match="no need has both"):
        evaluate(qrels_of([("q", "a", 1)]), run_of([("x", "a", 1.0)]))


def test_unknown_measures_and_bad_parameters():
    with pytest.raises(ValueError, match="illegal measure"):
        evaluate(QRELS, RUN, ["mapp"])
    with pytest.raises(ValueError, match="duplicate cutoffs"):
        evaluate(QRELS, RUN, ["P.5,5"])
    # a parameter that is no number is named with its measure (not float()'s words)
    for request, said in [
        ("ndcg.1=a", "ndcg: parameter 'a' is not a number"),
        ("utility.1,b,0,0", "utility: parameter 'b' is not a number"),
        ("rbp.p=1_0", "rbp: parameter '1_0' is not a number"),
        ("iprec_at_recall.0.5,x", "iprec_at_recall: parameter 'x' is not a number"),
    ]:
        with pytest.raises(ValueError, match=f"^{re.escape(said)}$"):
            evaluate(QRELS, RUN, [request])
    assert evaluate(QRELS, RUN, ["ndcg.1=.5,2=-2e1"]).summary["ndcg_1=.5,2=-2e1"] >= 0


def test_all_trec_columns_in_trec_eval_order():
    e = evaluate(QRELS, RUN, ["all_trec"])
    columns = list(e.per_need.columns)
    assert columns[:4] == ["num_ret", "num_rel", "num_rel_ret", "map"]
    assert columns.index("P_5") < columns.index("recall_5") < columns.index("ndcg")
    assert all(e.per_need.dtypes == "float64")
    assert "gm_map" not in columns and "gm_map" in e.summary
    assert set(ALL_TREC) >= {"map", "ndcg_cut", "success", "11pt_avg"}


def test_rank_disagreement_warning():
    run = read_run(b"q Q0 a 1 1.0 t\nq Q0 b 2 2.0 t\n")
    e = evaluate(QRELS, run, ["map"])
    assert any("rank column" in w for w in e.warnings)
    fine = read_run(b"q Q0 b 1 2.0 t\nq Q0 a 2 1.0 t\n")
    assert not evaluate(QRELS, fine, ["map"]).warnings
    # one rank on every line (trec_eval's own example writes 0) says nothing against
    # the scores: no warning
    for rank in (b"0", b"1"):
        same = read_run(b"q Q0 b %s 2.0 t\nq Q0 a %s 1.0 t\n" % (rank, rank))
        assert not evaluate(QRELS, same, ["map"]).warnings


# ----------------------------------------------------------------- seed, Figure 1


def seed(system="A"):
    return read_qrels(SEED / "qrels.txt"), read_run(SEED / f"run-{system}.txt")


def test_seed_map_and_example_values():
    qrels, run = seed("A")
    e = evaluate(qrels, run, ["map", "P.3,5,10", "Rprec"], complete=True)
    assert round(e.summary["map"], 3) == 0.473
    assert round(e.per_need.loc["cs-foundations", "map"], 3) == 0.473
    assert e.per_need.loc["cs-foundations", "Rprec"] == 7 / 15
    assert round(evaluate(*seed("B"), ["map"], complete=True).summary["map"], 3) == 0.740


def test_seed_figure_1_points():
    qrels, run = seed("A")
    ranks = relevant_ranks(qrels, run)
    cs = ranks[ranks.need_id == "cs-foundations"]["rank"].to_numpy()
    assert cs.tolist() == [1, 2, 6, 7, 9, 12, 13, 16, 18, 21, 23, 25]
    # the same from the ordering an evaluation made (what the platform stores)
    for complete in (True, False):
        reused = relevant_ranks(evaluate(qrels, run, ["map"], complete=complete).ranking)
        pd.testing.assert_frame_equal(reused, ranks)
    with pytest.raises(TypeError, match="needs qrels and a run"):
        relevant_ranks(qrels)
    recall, precision = precision_recall_points(cs, 15)
    assert np.round(recall, 3).tolist()[:3] == [0.067, 0.133, 0.2]
    assert np.round(precision, 3).tolist() == [
        1.0, 1.0, 0.5, 0.571, 0.556, 0.5, 0.538, 0.5, 0.5, 0.476, 0.478, 0.48,
    ]  # fmt: skip


def test_seed_interpolated_curve():
    qrels, run = seed("A")
    per_need, mean = interpolated_curve(qrels, run, complete=True)
    cs = per_need.loc["cs-foundations"]
    assert (cs[0.0], cs[0.9], cs[1.0]) == (1.0, 0.0, 0.0)
    assert cs[0.2] == 4 / 7
    summary = evaluate(qrels, run, ["iprec_at_recall"], complete=True).summary
    assert mean.tolist() == list(summary.values())
    # the same from an existing ordering
    again, _ = interpolated_curve(rank_run(qrels, run.frame, complete=True))
    pd.testing.assert_frame_equal(again, per_need)


def test_precision_recall_points_edge_cases():
    assert precision_recall_points(np.array([], dtype=int), 3)[0].size == 0
    assert precision_recall_points(np.array([2]), 0)[0].size == 0


def test_unjudged_warning_counts_only_categories_the_run_uses():
    qrels = qrels_of([("q", "a", 1)])
    frame = pd.DataFrame(
        {
            "need_id": pd.Categorical(["q", "s", None, "q"], categories=["unused", "q", "s", "t"]),
            "doc_id": ["a", "z", "y", "b"],
            "score": [2.0, 1.0, 1.0, 1.0],
        }
    )
    e = evaluate(qrels, frame, ["map"])
    assert [w for w in e.warnings if "without judgments" in w] == [
        "1 run need(s) without judgments, ignored: s"
    ]
    # more than 127 categories: codes are no longer int8
    many = [f"n{i:03d}" for i in range(300)]
    frame = pd.DataFrame(
        {
            "need_id": pd.Categorical(["q", "n299", "n007"], categories=["q", *many]),
            "doc_id": ["a", "b", "c"],
            "score": [1.0, 1.0, 1.0],
        }
    )
    e = evaluate(qrels, frame, ["map"])
    assert [w for w in e.warnings if "without judgments" in w] == [
        "2 run need(s) without judgments, ignored: n007, n299"
    ]


SUITE_FILES = FIXTURES / "trec_eval-suite"


def test_judged_lookup_exact_whatever_the_candidate_table_says(monkeypatch):
    """The hash table only picks candidate lines for the qrels lookup; with every
    line a candidate (all keys in one slot) every measure comes out the same."""
    import evaluation.measures.ranking as ranking

    qrels = read_qrels(SUITE_FILES / "qrels.test")
    run = read_run(SUITE_FILES / "results.test")
    normal = evaluate(qrels, run, ["all_trec"])
    monkeypatch.setattr(ranking, "_slot", lambda key, bits: np.zeros(len(key), np.int64))
    crowded = evaluate(qrels, run, ["all_trec"])
    pd.testing.assert_frame_equal(crowded.per_need, normal.per_need)
    assert crowded.summary == normal.summary and normal.summary["num_rel_ret"] > 0


def _whole_run_order(need, score, docs):
    """The ordering as it was before need blocks were sorted one by one: one argsort of
    all lines by score, one stable sort by need, then the tie groups by doc id."""
    base = np.argsort(-score)
    base = base[np.argsort(need[base], kind="stable")]
    ordered_need, ordered_score = need[base], score[base]
    tie = (ordered_need[1:] == ordered_need[:-1]) & (ordered_score[1:] == ordered_score[:-1])
    in_tie = np.zeros(len(need), bool)
    in_tie[1:] |= tie
    in_tie[:-1] |= tie
    positions = np.flatnonzero(in_tie)
    group_start = np.ones(len(positions), bool)
    group_start[1:] = ~tie[positions[1:] - 1]
    rows = base[positions]
    key = sorted(
        range(len(rows)),
        key=lambda i: (np.cumsum(group_start)[i], [-b for b in docs[rows[i]].encode()] + [1]),
    )
    base[positions] = rows[key]
    return base


@pytest.mark.parametrize("lengths", ["equal", "ragged", "one-long-need"])
@pytest.mark.parametrize("needs_in_order", [True, False])
@pytest.mark.parametrize("scores", ["finite", "infinite", "nan"])
def test_need_blocks_sorted_one_by_one_give_the_whole_run_order(lengths, needs_in_order, scores):
    """Each need's lines together but not sorted by score (the usual run has them sorted;
    a run whose rank column disagrees with its scores does not): the blocks are sorted
    one by one, and the permutation is the one the whole-run sort gives, tie groups
    (signed zeros too) by doc id descending."""
    rng = np.random.default_rng(11)
    sizes = {"equal": [30] * 8, "ragged": [30, 5, 17, 30, 1, 22, 9, 30]}.get(lengths)
    sizes = sizes or [2, 3, 200, 1, 2]
    blocks = list(range(len(sizes))) if needs_in_order else list(rng.permutation(len(sizes)))
    need = np.concatenate(
        [np.full(size, b, np.int32) for b, size in zip(blocks, sizes, strict=True)]
    )
    score = rng.integers(-5, 6, len(need)).astype(float) / 2  # many ties
    score[rng.random(len(need)) < 0.1] = -0.0
    if scores == "infinite":
        score[rng.random(len(need)) < 0.1] = np.inf
        score[rng.random(len(need)) < 0.1] = -np.inf
    elif scores == "nan":
        score[rng.integers(len(need))] = np.nan
    docs = [f"d{i}" for i in rng.permutation(len(need))]
    order = _order(need, score, pa_strings(docs))
    assert order.base is not None
    if scores != "nan":  # NaN never ties: its lines' order was never defined
        np.testing.assert_array_equal(order.full(), _whole_run_order(need, score, docs))
    ordered = order.full()
    np.testing.assert_array_equal(np.sort(ordered), np.arange(len(need)))
    assert (np.diff(need[ordered]) >= 0).all()


def _disagrees_whole(need, score, file_rank, order):
    """The rank-column check as it was, on whole ordered columns."""
    file_rank, ordered_score = order.apply(file_rank), order.by_base(score)
    ordered_need = order.by_base(need)
    lower = (ordered_need[1:] == ordered_need[:-1]) & (ordered_score[1:] < ordered_score[:-1])
    return bool(np.any(lower & (file_rank[1:] < file_rank[:-1])))


@pytest.mark.parametrize("slice_lines", [1, 2, 3, 7, 1 << 20])
def test_rank_column_check_in_slices_agrees_with_the_whole_check(monkeypatch, slice_lines):
    """ordered_ranks checks the file's rank column against the scores a slice of the
    order at a time; a disagreement anywhere (at a slice's edge too) is found, ties may
    carry their ranks in any order, and a lower score at a new need is no disagreement."""
    from evaluation.measures import ranking

    monkeypatch.setattr(ranking, "RANK_CHECK_SLICE", slice_lines)
    rng = np.random.default_rng(5)
    for trial in range(60):
        size = int(rng.integers(1, 40))
        need = np.sort(rng.integers(0, 4, size)).astype(np.int32)
        score = rng.integers(0, 5, size).astype(float)
        docs = pa_strings([f"d{i}" for i in range(size)])
        order = _order(need, score, docs)
        ranks = np.empty(size)
        ranks[order.full()] = np.arange(size)  # the file's ranks agree with the order
        if trial % 2:  # swap two lines' ranks: may disagree
            i, j = rng.integers(0, size, 2)
            ranks[[i, j]] = ranks[[j, i]]
        expected = _disagrees_whole(need, score, ranks, order)
        _, _, disagrees = ranking.ordered_ranks(order, need, score, ranks)
        assert disagrees == expected
        if trial % 2 == 0:
            assert not disagrees


@pytest.mark.parametrize("kind", ["str", "int", "categorical", "one-need", "empty"])
def test_judged_needs_in_strcmp_order_with_each_line_s_index(kind):
    """The qrels' need ids (strcmp order) and each line's index into them, as rank_run
    took them from Python strings before (a set, a sort, an index lookup)."""
    import pandas as pd

    from evaluation.measures import ranking

    rng = np.random.default_rng(3)
    names = ["b", "a", "Z", "é", "e\u0301", "10", "9", "a b", "ä", "\U0001f600", "aa"]
    picked = [names[i] for i in rng.integers(0, len(names), 300)]
    column = {
        "str": pd.Series(picked, dtype="str"),
        "int": pd.Series(rng.integers(0, 120, 300)),
        "categorical": pd.Series(picked, dtype="category"),
        "one-need": pd.Series(["q"] * 5, dtype="str"),
        "empty": pd.Series([], dtype="str"),
    }[kind]
    as_text = column.astype("str").to_numpy(dtype=object)
    expected = sorted(set(as_text), key=lambda s: s.encode())
    needs, codes = ranking._judged_needs(column)
    assert needs == expected
    assert codes.dtype == np.int64
    np.testing.assert_array_equal(codes, pd.Index(expected, dtype=object).get_indexer(as_text))


def _relstring_all_rows(r, length):
    """relstring as it was: characters for every retrieved row, then the top cut."""
    from evaluation.measures.ranking import NONPOOL, UNJUDGED

    chars = np.full(len(r.rel), "<", dtype="<U1")
    digits = (r.rel >= 0) & (r.rel <= 9)
    chars[digits] = r.rel[digits].astype(str)
    chars[r.rel > 9] = ">"
    chars[r.rel == NONPOOL] = "-"
    chars[r.rel == UNJUDGED] = "."
    top = r.rank <= length
    need, text = r.need[top], chars[top]
    bounds = np.searchsorted(need, np.arange(r.n + 1))
    return ["".join(text[bounds[i] : bounds[i + 1]]) for i in range(r.n)]


@pytest.mark.parametrize("length", [0, 1, 3, 10, 50])
def test_relstring_reads_only_the_top_rows_and_says_the_same(length):
    """relstring builds characters for the first ``length`` rows of each need only; the
    text is the one built from every row (levels 0-9, '>' above, '-' and '.')."""
    from evaluation.measures import definitions
    from evaluation.measures.ranking import rank_run

    rng = np.random.default_rng(9)
    judged = [(f"q{n}", f"d{d}", int(rng.choice([-1, 0, 1, 2, 9, 10, 12]))) for n in range(6)
              for d in range(0, 30, 2)]  # fmt: skip
    lines = [(f"q{n}", f"d{d}", float(rng.integers(0, 5))) for n in range(7) for d in range(25)]
    ranking = rank_run(qrels_of(judged), run_of(lines), complete=True)
    assert definitions.relstring(ranking, length) == _relstring_all_rows(ranking, length)


def test_rprec_mult_with_a_negative_level_counts_as_trec_eval_s_loop(tmp_path):
    """/tmp/te/trec_eval -l -1 -m Rprec_mult q r (and -l -2): the hits d9 d1 d4 d2 d8 d3 d7
    are counted down from num_rel_ret = 3 (d1, d2, d3), so none is left above rank 5."""
    (tmp_path / "q").write_text("1 0 d1 1\n1 0 d2 0\n1 0 d3 1\n1 0 d4 -1\n1 0 d5 1\n")
    (tmp_path / "r").write_text(
        "1 Q0 d9 1 9 t\n1 Q0 d1 2 8 t\n1 Q0 d4 3 7 t\n1 Q0 d2 4 6 t\n"
        "1 Q0 d8 5 5 t\n1 Q0 d3 6 4 t\n1 Q0 d7 7 3 t\n"
    )
    expected = ["0.0000"] * 5 + ["0.2000", "0.3333", "0.4286", "0.3750", "0.3750"]
    for level in (-1, -2):
        e = evaluate(tmp_path / "q", tmp_path / "r", ["Rprec_mult"], relevance_level=level)
        assert [f"{v:.4f}" for k, v in e.summary.items() if k.startswith("Rprec_mult")] == expected
    # qrels "1 0 d1 1 / 1 0 d2 0", run d9 d1 d2: /tmp/te/trec_eval -l -1 -m Rprec_mult.1 q r
    (tmp_path / "q").write_text("1 0 d1 1\n1 0 d2 0\n")
    (tmp_path / "r").write_text("1 Q0 d9 1 3 t\n1 Q0 d1 2 2 t\n1 Q0 d2 3 1 t\n")
    e = evaluate(tmp_path / "q", tmp_path / "r", ["Rprec_mult.1"], relevance_level=-1)
    assert f"{e.summary['Rprec_mult_1.00']:.4f}" == "0.5000"
