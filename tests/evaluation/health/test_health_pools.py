"""Pool bias, leave one participant out, on a generated campaign whose unique documents are known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluation.health import kendall_tau, pool_bias, pool_contributions
from evaluation.measures import evaluate

NEEDS = [str(i) for i in range(1, 7)]
DEPTH = 5


def ranked(need: str, docs: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {"need_id": need, "doc_id": docs, "score": np.arange(len(docs), 0, -1, dtype=float)}
    )


@pytest.fixture
def campaign() -> dict:
    """Per need: shared documents s0..s3 every participant finds; team A also finds a0, a1
    at ranks 1-2 (only A, within depth); B's run finds b0 at rank 5 (within depth) and a
    document A ranks 3 but B ranks 7 (beyond depth, so unique to A). C finds nothing of
    its own. All of a0, a1, x are relevant; b0 is judged not relevant."""
    runs, qrels = {}, []
    for need in NEEDS:
        shared = [f"{need}-s{i}" for i in range(4)]
        a = [f"{need}-a0", f"{need}-a1", f"{need}-x"]
        qrels += [(need, doc, 1 if i % 2 == 0 else 0) for i, doc in enumerate(shared)]
        qrels += [(need, doc, 1) for doc in a] + [(need, f"{need}-b0", 0)]
        runs.setdefault("A1", []).append(ranked(need, a + shared))
        runs.setdefault("A2", []).append(ranked(need, [a[0], *shared, a[1]]))  # a1 at 6: beyond
        runs.setdefault("B1", []).append(
            ranked(need, [*shared, f"{need}-b0", "junk1", a[2]])  # x at rank 7
        )
        runs.setdefault("C1", []).append(ranked(need, shared[::-1]))
    frames = {name: pd.concat(parts, ignore_index=True) for name, parts in runs.items()}
    return {
        "qrels": pd.DataFrame(qrels, columns=["need_id", "doc_id", "relevance"]),
        "runs": frames,
        "participants": {"A1": "A", "A2": "A", "B1": "B", "C1": "C"},
    }


def map_of(qrels: pd.DataFrame, run: pd.DataFrame) -> float:
    per_need = evaluate(qrels, run, measures=["map"], complete=True).per_need["map"]
    return float(per_need.reindex(NEEDS, fill_value=0.0).mean())


def test_unique_documents_are_those_only_one_participant_pooled(campaign) -> None:
    pool = pool_contributions(campaign["runs"], campaign["participants"], DEPTH)
    unique = pool[pool["contributors"] == 1]
    by = {
        p: set(zip(g["need_id"], g["doc_id"], strict=True))
        for p, g in unique.groupby("participant")
    }
    assert by["A"] == {(n, f"{n}-{d}") for n in NEEDS for d in ("a0", "a1", "x")}
    assert by["B"] == {(n, f"{n}-b0") for n in NEEDS}
    assert "C" not in by
    # a deeper pool sees x in B's run too (rank 7): no longer unique to A
    deep = pool_contributions(campaign["runs"], campaign["participants"], 7)
    deep_unique = deep[(deep["contributors"] == 1) & (deep["participant"] == "A")]
    assert set(deep_unique["doc_id"].str[-2:]) == {"a0", "a1"}


def test_pool_bias_leave_one_participant_out(campaign) -> None:
    qrels, runs = campaign["qrels"], campaign["runs"]
    result = pool_bias(qrels, runs, campaign["participants"], measure="map", depth=DEPTH)
    table = result["runs"].set_index("run")
    without_a = qrels[~qrels["doc_id"].str.contains("-a|-x")]
    without_b = qrels[~qrels["doc_id"].str.endswith("-b0")]
    for name in runs:
        assert table.loc[name, "score"] == pytest.approx(map_of(qrels, runs[name]))
    for name in ("A1", "A2"):
        assert table.loc[name, "loo_score"] == pytest.approx(map_of(without_a, runs[name]))
        assert table.loc[name, "drop"] > 0.1
    # B's unique judgment is not relevant: no change; C contributed nothing unique
    assert table.loc["B1", "loo_score"] == pytest.approx(map_of(without_b, runs["B1"]))
    assert table.loc["B1", "drop"] == pytest.approx(0.0)
    assert table.loc["C1", "drop"] == 0.0
    assert table.loc["A1", "rank"] == 1 and table.loc["A1", "loo_rank"] > 1
    assert table.loc["A1", "rank_change"] == table.loc["A1", "loo_rank"] - 1
    assert result["runs"]["run"].iloc[0] in ("A1", "A2")  # sorted by drop
    assert result["max_drop"] == pytest.approx(table["drop"].max())
    people = result["participants"].set_index("participant")
    assert people.loc["A", "unique_judged"] == 3 * len(NEEDS)
    assert people.loc["A", "unique_relevant"] == 3 * len(NEEDS)
    assert people.loc["B", "unique_judged"] == len(NEEDS)
    assert people.loc["B", "unique_relevant"] == 0
    assert people.loc["C", "unique_judged"] == 0 and people.loc["C", "tau"] == 1.0
    before = table.loc[list(runs), "score"].to_numpy()
    after = before.copy()
    after[:2] = table.loc[["A1", "A2"], "loo_score"].to_numpy()
    assert people.loc["A", "tau"] == pytest.approx(kendall_tau(before, after))
    assert people.loc["A", "tau"] < 1.0
    # Judged@10: C's 4 documents all judged; B1 has 'junk1' unjudged among 7
    assert table.loc["C1", "judged"] == pytest.approx(1.0)
    assert table.loc["B1", "judged"] == pytest.approx(6 / 7)


def test_pool_bias_bad_input(campaign) -> None:
    with pytest.raises(ValueError, match="no participant"):
        pool_bias(campaign["qrels"], campaign["runs"], {"A1": "A"})
    with pytest.raises(ValueError, match="depth"):
        pool_contributions(campaign["runs"], campaign["participants"], 0)
    # a summary over needs has no per-need values (it does not give "several")
    args = campaign["qrels"], campaign["runs"], campaign["participants"]
    with pytest.raises(ValueError, match="'gm_map' has no per-need values"):
        pool_bias(*args, measure="gm_map")
    with pytest.raises(ValueError, match="several values"):
        pool_bias(*args, measure="P")


def test_one_participant_pooled_everything(campaign) -> None:
    """Leaving the only participant out removes every judgment retrieved: its runs score 0."""
    runs = {"A1": campaign["runs"]["A1"], "C1": campaign["runs"]["C1"]}
    qrels = campaign["qrels"]
    pooled = qrels[qrels["doc_id"].str.contains("-a|-x|-s")]
    result = pool_bias(pooled, runs, {"A1": "A", "C1": "A"}, depth=DEPTH)
    assert (result["runs"]["loo_score"] == 0.0).all()
    assert result["max_drop"] == pytest.approx(result["runs"]["score"].max())


def test_other_measures_and_judged_cutoffs(campaign) -> None:
    qrels, runs = campaign["qrels"], campaign["runs"]
    result = pool_bias(qrels, runs, campaign["participants"], measure="RR@10", judged_k=5)
    table = result["runs"].set_index("run")
    for name, run in runs.items():
        per_need = evaluate(qrels, run, measures=["RR@10", "Judged@5"], complete=True).per_need
        per_need = per_need.reindex(NEEDS, fill_value=0.0)
        assert table.loc[name, "score"] == pytest.approx(per_need["recip_rank_cut_10"].mean())
        assert table.loc[name, "judged"] == pytest.approx(per_need["judged_5"].mean())
