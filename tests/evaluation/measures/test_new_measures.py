"""The measures trec_eval lacks, RR@k and Judged@k: hand-worked values, and ir_measures'.

ir_measures computes ``RR@k`` with its ``msmarco`` provider and ``Judged@k`` with its
``judged`` provider; both break score ties by doc id *ascending* where trec_eval
(and the engine) break them descending, so the generated runs give every document
of a need its own score. ir_measures scores only needs with run lines (no ``-c``).
"""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation.measures import evaluate, resolve
from tests.evaluation.measures.test_properties import frames

ir_measures = pytest.importorskip("ir_measures")

QRELS = pd.DataFrame(
    [
        ("1", "a", 1), ("1", "b", 0), ("1", "c", -1), ("1", "d", 2),
        ("2", "x", 0), ("2", "y", 1),
        ("3", "a", 1),
    ],
    columns=["need_id", "doc_id", "relevance"],
)  # fmt: skip
RUN = pd.DataFrame(
    [
        # need 1: b, c, z, a, y -- first relevant (a) at rank 4
        ("1", "a", 0.5), ("1", "b", 0.9), ("1", "c", 0.8), ("1", "z", 0.7), ("1", "y", 0.1),
        # need 2: two documents only, tied: y > x by doc id descending, y relevant at rank 1
        ("2", "x", 1.0), ("2", "y", 1.0),
        # need 3: nothing judged retrieved
        ("3", "q", 3.0), ("3", "r", 2.0),
    ],
    columns=["need_id", "doc_id", "score"],
)  # fmt: skip


def test_reciprocal_rank_cut_by_hand():
    result = evaluate(QRELS, RUN, ["RR@3", "RR@4", "RR", "RR@1"])
    table = result.per_need
    assert table["recip_rank_cut_1"].tolist() == [0.0, 1.0, 0.0]
    assert table["recip_rank_cut_3"].tolist() == [0.0, 1.0, 0.0]
    assert table["recip_rank_cut_4"].tolist() == [0.25, 1.0, 0.0]
    assert table["recip_rank"].tolist() == [0.25, 1.0, 0.0]
    assert result.summary["recip_rank_cut_4"] == (0.25 + 1.0) / 3
    # -l 2: only d is relevant for need 1, and it was not retrieved
    assert evaluate(QRELS, RUN, ["RR@10"], relevance_level=2).per_need[
        "recip_rank_cut_10"
    ].tolist() == [0.0, 0.0, 0.0]


def test_judged_by_hand():
    table = evaluate(QRELS, RUN, ["Judged@1", "Judged@3", "Judged@10"]).per_need
    # need 1: b, c (judged -1: in the qrels, so judged), z, a, y
    assert table["judged_1"].tolist() == [1.0, 1.0, 0.0]
    assert table["judged_3"].tolist() == [2 / 3, 1.0, 0.0]
    # a run shorter than k is judged on what it retrieved: 3 of 5, 2 of 2, 0 of 2
    assert table["judged_10"].tolist() == [3 / 5, 1.0, 0.0]


def test_judged_and_rr_cut_with_complete_and_depth():
    qrels = pd.concat([QRELS, pd.DataFrame([("4", "m", 1)], columns=QRELS.columns)])
    table = evaluate(qrels, RUN, ["Judged@10", "RR@10"], complete=True, max_depth=3).per_need
    assert table.loc["4"].tolist() == [0.0, 0.0]  # no run lines: nothing judged, nothing found
    assert table["judged_10"].tolist() == [2 / 3, 1.0, 0.0, 0.0]  # -M 3: judged of 3


# ------------------------------------------------------------ against ir_measures

DOCS = ["1", "9", "80", "100", "a", "b", "B", "doc", "Doc", "d-1", "d_1", "x9", "z"]


@st.composite
def collections(draw):
    needs = draw(
        st.lists(st.sampled_from(["1", "2", "10", "q"]), min_size=1, max_size=4, unique=True)
    )
    qrels, run = {}, {}
    for need in needs:
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=10, unique=True))
        qrels[need] = {doc: draw(st.integers(-1, 3)) for doc in judged}
        if max(qrels[need].values()) < 0:
            qrels[need][judged[0]] = 0  # pytrec_eval (9.0.8) crashes on such needs
        retrieved = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=13, unique=True))
        scores = draw(st.permutations(range(len(retrieved))))  # no ties
        run[need] = {doc: float(s) / 4 - 1 for doc, s in zip(retrieved, scores, strict=True)}
    if draw(st.booleans()):
        run["orphan"] = {"a": 1.0}
    return qrels, run


def theirs(measures, qrels, run, provider):
    out = {}
    for metric in provider.iter_calc(measures, qrels, run):
        out[(metric.query_id, str(metric.measure))] = metric.value
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections(), st.sampled_from([1, 2]))
def test_rr_cut_against_ir_measures(data, level):
    qrels, run = data
    names = ["RR@1", "RR@3", "RR@10"]
    measures = [ir_measures.parse_measure(f"RR(rel={level})@{k}") for k in (1, 3, 10)]
    expected = theirs(measures, qrels, run, ir_measures.msmarco)
    q, r = frames(qrels, run)
    ours = evaluate(q, r, names, relevance_level=level).per_need
    assert {(need, str(m)) for need in ours.index for m in measures} <= set(expected)
    for name, measure in zip(names, measures, strict=True):
        column = f"recip_rank_cut_{name.split('@')[1]}"
        for need in ours.index:
            value = expected[(need, str(measure))]
            assert ours.loc[need, column] == pytest.approx(value, abs=1e-12), (need, name)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_judged_against_ir_measures(data):
    qrels, run = data
    measures = [ir_measures.parse_measure(f"Judged@{k}") for k in (1, 5, 10, 20)]
    expected = theirs(measures, qrels, run, ir_measures.judged)
    q, r = frames(qrels, run)
    ours = evaluate(q, r, [str(m) for m in measures]).per_need
    assert sorted(ours.index) == sorted({need for need, _ in expected})
    for measure in measures:
        column = f"judged_{measure['cutoff']}"
        for need in ours.index:
            assert ours.loc[need, column] == expected[(need, str(measure))], (need, column)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_ir_measures_names_give_ir_measures_values(data):
    """The catalog's names, computed by the engine, against ir_measures' default providers."""
    qrels, run = data
    names = ["nDCG@10", "nDCG", "P@5", "AP", "AP@10", "RR", "R@10", "Rprec", "Success@5"]
    measures = [ir_measures.parse_measure(name) for name in names]
    expected = {
        (metric.query_id, str(metric.measure)): metric.value
        for metric in ir_measures.iter_calc(measures, qrels, run)
    }
    q, r = frames(qrels, run)
    result = evaluate(q, r, names)
    assert {(need, str(m)) for need in result.per_need.index for m in measures} <= set(expected)
    for name, measure in zip(names, measures, strict=True):
        column = resolve(name).column
        for need in result.per_need.index:
            value = expected[(need, str(measure))]
            assert result.per_need.loc[need, column] == pytest.approx(value, abs=1e-12), (
                need,
                name,
            )
