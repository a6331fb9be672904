"""Judged@k of runs from their judged ranks (:func:`judged_of_ranks`) equals a plain-Python
reference that orders each need's lines itself, and what ``evaluate`` gives on the run:
tied scores, needs without judgments, judged needs the run left empty, negative
judgments (they count as judged), runs shorter than k; several runs at once."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluation.health import JudgedRanks, QrelsIndex, judged_of_ranks, judged_ranks
from evaluation.measures import evaluate
from tests.evaluation.health.test_health_judged import _desc, campaign

CUTOFFS = (3, 10, 100)


def reference(qrels: pd.DataFrame, run: pd.DataFrame, k: int) -> float:
    """Per judged need: the share of the run's top k (score descending, doc id
    descending) that the qrels list, over min(k, lines); 0 for no lines; the mean."""
    judged = {(str(n), str(d)) for n, d in zip(qrels["need_id"], qrels["doc_id"], strict=True)}
    values = []
    for need in dict.fromkeys(qrels["need_id"].astype(str)):
        mine = run[run["need_id"].astype(str) == need]
        ordered = sorted(
            zip(mine["score"], mine["doc_id"].astype(str), strict=True),
            key=lambda pair: (-pair[0], _desc(pair[1].encode())),
        )[:k]
        hits = sum((need, doc) in judged for _, doc in ordered)
        values.append(hits / len(ordered) if ordered else 0.0)
    return sum(values) / len(values)


@pytest.mark.parametrize("seed", range(8))
def test_judged_at_k_equals_the_reference_and_the_scoring(seed: int) -> None:
    qrels, run = campaign(seed)
    index = QrelsIndex(qrels)
    found = judged_of_ranks(index, {"a": judged_ranks(index, run)}, CUTOFFS)
    scored = evaluate(qrels, run, [f"judged.{','.join(map(str, CUTOFFS))}"], complete=True)
    for k in CUTOFFS:
        assert found.loc["a", f"judged_{k}"] == pytest.approx(reference(qrels, run, k), abs=1e-12)
        # the needs summed in the qrels' order, not trec_eval's: equal to rounding
        assert found.loc["a", f"judged_{k}"] == pytest.approx(scored.summary[f"judged_{k}"])


def test_a_hand_worked_run() -> None:
    """Need q1: 12 lines, judged at ranks 1, 2, 5 and 11 (one of them -1: still judged);
    q2: 2 lines, one judged; q3: judged, not answered. Judged@10 = (3/10 + 1/2 + 0) / 3,
    Judged@100 = (4/12 + 1/2 + 0) / 3."""
    run = pd.DataFrame(
        [("q1", f"d{i}", 100.0 - i) for i in range(1, 13)] + [("q2", "e1", 2.0), ("q2", "e2", 1.0)],
        columns=["need_id", "doc_id", "score"],
    )
    qrels = pd.DataFrame(
        [("q1", "d1", 1), ("q1", "d2", 0), ("q1", "d5", -1), ("q1", "d11", 2), ("q1", "zz", 1)]
        + [("q2", "e2", 1), ("q3", "f1", 1)],
        columns=["need_id", "doc_id", "relevance"],
    )
    index = QrelsIndex(qrels)
    ranks = judged_ranks(index, run)
    found = judged_of_ranks(index, {"run": ranks, "again": ranks})
    assert list(found.columns) == ["judged_10", "judged_100"]
    assert found.loc["run", "judged_10"] == pytest.approx((0.3 + 0.5) / 3)
    assert found.loc["run", "judged_100"] == pytest.approx((4 / 12 + 0.5) / 3)
    assert found.loc["again"].tolist() == found.loc["run"].tolist()


def test_many_runs_at_once_equal_one_at_a_time() -> None:
    qrels, _ = campaign(0)
    index = QrelsIndex(qrels)
    runs = {f"r{seed}": judged_ranks(index, campaign(seed)[1]) for seed in range(5)}
    together = judged_of_ranks(index, runs)
    for name, ranks in runs.items():
        alone = judged_of_ranks(index, {name: ranks})
        assert together.loc[name].tolist() == alone.loc[name].tolist()


def test_no_runs_and_bad_cutoffs() -> None:
    qrels, _ = campaign(1)
    index = QrelsIndex(qrels)
    assert judged_of_ranks(index, {}).empty
    empty = JudgedRanks(
        np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(len(index.needs), np.int32),
        len(index),
    )  # fmt: skip
    assert judged_of_ranks(index, {"none": empty}).loc["none"].tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="at least 1"):
        judged_of_ranks(index, {"none": empty}, (0,))
