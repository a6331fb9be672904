"""An evaluation restricted to some needs (a benchmark's public or private needs) equals,
bit for bit, the evaluation against the qrels of those needs alone: every summary value
(means, gm_map and gm_bpref, num_q and the num_* sums) and every per-need value."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from evaluation.measures import MODES, evaluate, stored_requests, summarise_needs
from evaluation.measures.scoring import summarise, summary_kind
from evaluation.trec import read_qrels
from tests import DEMO, FIXTURES

SUITE = FIXTURES / "trec_eval-suite"
CASES = [
    (DEMO / "qrels.txt", DEMO / "run-A.txt"),
    (DEMO / "qrels.txt", DEMO / "run-B.txt"),
    (SUITE / "qrels.test", SUITE / "results.test"),
    (SUITE / "qrels.test", SUITE / "results.trunc"),  # a judged need without run lines
]


def subsets(needs: list[str]):
    """Every non-empty proper subset of the needs."""
    for size in range(1, len(needs)):
        yield from (list(chosen) for chosen in itertools.combinations(needs, size))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("qrels_path", "run_path"), CASES, ids=lambda p: p.name)
def test_a_subset_equals_the_evaluation_on_its_qrels(qrels_path, run_path, mode):
    qrels = read_qrels(qrels_path)
    requests = stored_requests(["ndcg_cut_10"])
    whole = evaluate(qrels, run_path, requests, complete=True, interpolation=mode)
    checked = 0
    for needs in subsets(whole.need_ids):
        part = whole.only(needs)
        alone = evaluate(
            qrels[qrels["need_id"].isin(needs)], run_path, requests, complete=True,
            interpolation=mode,
        )  # fmt: skip
        assert part.need_ids == alone.need_ids == needs
        assert list(part.summary) == list(alone.summary)
        for name, value in alone.summary.items():
            # bit for bit: the same doubles, not merely close ones
            assert part.summary[name] == value or (
                np.isnan(value) and np.isnan(part.summary[name])
            ), name
        for name, values in alone.columns.items():
            assert np.array_equal(part.columns[name], values, equal_nan=True), name
        assert part.to_trec_eval(per_need=True) == alone.to_trec_eval(per_need=True)
        # the same from the per-need rows alone, as the platform stores them
        rows = whole.per_need.loc[needs]
        assert summarise_needs(rows, whole.summary, mode) == alone.summary
        checked += 1
    assert checked == 2 ** len(whole.need_ids) - 2
    assert whole.only(whole.need_ids).summary == whole.summary


def test_summary_kinds_and_an_empty_subset():
    assert summary_kind("num_rel_ret") == "sum" and summary_kind("gm_map") == "gm"
    assert summary_kind("P_10") == "mean" and summary_kind("ndcg_cut_10") == "mean"
    empty = summarise({"map": np.zeros(0)}, ["num_q", "map", "gm_map"], np.zeros(0, bool))
    assert empty == {"num_q": 0.0, "map": 0.0, "gm_map": 0.0}


def test_gm_map_of_a_subset_by_hand():
    # AP 0.5 and 0 (floored at 0.00001): exp((log 0.5 + log 0.00001) / 2)
    got = summarise({"map": np.array([0.5, 0.0])}, ["gm_map"], np.ones(2, bool))
    assert got["gm_map"] == pytest.approx((0.5 * 0.00001) ** 0.5, rel=1e-15)
