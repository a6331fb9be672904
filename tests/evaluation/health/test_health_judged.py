"""The judged ranks a scoring's ranking carries (:meth:`JudgedRanks.of`) equal, array
for array, a slow reference that orders each need's lines in Python and joins them with
the qrels in pandas: tied scores, needs without judgments, judged needs without run
lines, graded and negative judgments, ``-M`` depths that cut the needs (judged ranks
are not cut), ``complete`` on and off, 32-bit scores under ``trec_eval-9``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluation.health.judged import JudgedRanks, QrelsIndex, judged_ranks
from evaluation.measures import evaluate
from evaluation.measures.ranking import rank_run
from evaluation.trec import read_qrels
from tests import DEMO


def reference(qrels: pd.DataFrame, run: pd.DataFrame, scores32: bool = False) -> JudgedRanks:
    """Each need's lines by score descending, then doc id descending in byte order; the
    lines the qrels list (their first line), grouped in the qrels' need order."""
    needs = list(dict.fromkeys(qrels["need_id"].astype(str)))
    first = {}
    for i, (need, doc) in enumerate(
        zip(qrels["need_id"].astype(str), qrels["doc_id"], strict=True)
    ):
        first.setdefault((need, doc), i)
    lines, ranks, num_ret = [], [], []
    for need in needs:
        mine = run[run["need_id"].astype(str) == need]
        score = mine["score"].to_numpy(np.float64)
        if scores32:
            score = score.astype(np.float32).astype(np.float64)
        ordered = sorted(
            zip(score, mine["doc_id"], strict=True),
            key=lambda pair: (-pair[0], _desc(pair[1].encode())),
        )
        num_ret.append(len(ordered))
        for rank, (_, doc) in enumerate(ordered, start=1):
            if (need, doc) in first:
                lines.append(first[(need, doc)])
                ranks.append(rank)
    return JudgedRanks(
        np.array(lines, np.int32), np.array(ranks, np.int32), np.array(num_ret, np.int32),
        len(qrels),
    )  # fmt: skip


def _desc(key: bytes) -> tuple[int, ...]:
    """Sorts bytes descending (a longer string after its prefix ascending: before it)."""
    return tuple(255 - b for b in key) + (256,)


def campaign(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Needs n0..n11 in a shuffled order: n0-n2 of the run have no judgments, the last
    three judged needs no run lines; few distinct scores (many ties), fractional ones
    that tie only as 32-bit floats, relevance -1 to 3."""
    rng = np.random.default_rng(seed)
    needs = [f"n{i}" for i in rng.permutation(12)]
    rows = []
    for need in needs[:9]:
        docs = rng.choice(80, int(rng.integers(1, 40)), replace=False)
        score = rng.integers(0, 6, len(docs)).astype(np.float64)
        score += np.where(rng.random(len(docs)) < 0.3, 1e-9 * rng.integers(1, 3, len(docs)), 0)
        rows += [(need, f"d{d}", s) for d, s in zip(docs, score, strict=True)]
    run = pd.DataFrame(rows, columns=["need_id", "doc_id", "score"])
    run = run.sample(frac=1, random_state=seed).reset_index(drop=True)
    judged = []
    for need in needs[3:]:
        docs = rng.choice(80, int(rng.integers(1, 30)), replace=False)
        judged += [(need, f"d{d}", int(rng.integers(-1, 4))) for d in docs]
    return pd.DataFrame(judged, columns=["need_id", "doc_id", "relevance"]), run


def assert_same(found: JudgedRanks, expected: JudgedRanks) -> None:
    assert found.line.tolist() == expected.line.tolist()
    assert found.rank.tolist() == expected.rank.tolist()
    assert found.num_ret.tolist() == expected.num_ret.tolist()
    assert found.to_bytes() == expected.to_bytes()


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("max_depth", [None, 1, 4, 0])
@pytest.mark.parametrize("complete", [True, False])
def test_the_ranking_of_a_scoring_carries_the_judged_ranks(seed, max_depth, complete) -> None:
    qrels, run = campaign(seed)
    index = QrelsIndex(qrels)
    expected = reference(qrels, run)
    assert len(expected.line) and (qrels["relevance"].to_numpy()[expected.line] < 0).any()
    assert expected.num_ret.max() > 4  # the depths cut some needs
    ranking = evaluate(qrels, run, ["map"], max_depth=max_depth, complete=complete).ranking
    assert_same(JudgedRanks.of(ranking, index), expected)
    assert_same(judged_ranks(index, run), expected)


@pytest.mark.parametrize("seed", range(4))
def test_32_bit_scores_rank_as_the_scoring_ranked_them(seed: int) -> None:
    qrels, run = campaign(seed)
    ranking = evaluate(qrels, run, ["map"], complete=True, interpolation="trec_eval-9").ranking
    expected = reference(qrels, run, scores32=True)
    assert_same(JudgedRanks.of(ranking, QrelsIndex(qrels)), expected)


def test_the_ranks_past_the_depth_are_kept_and_the_measures_see_the_cut() -> None:
    qrels = pd.DataFrame({"need_id": ["q", "q"], "doc_id": ["a", "c"], "relevance": [1, -1]})
    run = pd.DataFrame({"need_id": "q", "doc_id": ["a", "b", "c"], "score": [1.0, 3.0, 2.0]})
    ranking = rank_run(qrels, run, max_depth=1)
    assert ranking.rank.tolist() == [1] and ranking.num_ret.tolist() == [1]
    found = JudgedRanks.of(ranking, QrelsIndex(qrels))
    assert (found.line.tolist(), found.rank.tolist(), found.num_ret.tolist()) == (
        [1, 0], [2, 3], [3],
    )  # fmt: skip


def test_a_ranking_of_other_qrels_is_refused() -> None:
    qrels, run = campaign(0)
    ranking = rank_run(qrels, run)
    other = qrels[qrels["need_id"] != qrels["need_id"].iloc[0]].reset_index(drop=True)
    with pytest.raises(ValueError, match="other qrels"):
        JudgedRanks.of(ranking, QrelsIndex(other))
    ranking.judged_line = None
    with pytest.raises(ValueError, match="does not carry"):
        JudgedRanks.of(ranking, QrelsIndex(qrels))


def test_doc_ids_whose_hashes_collide_are_told_apart_by_the_ranking(monkeypatch) -> None:
    """Every doc id hashed alike: the ranking's hashes only pick candidates, the ids decide."""
    from evaluation.measures import ranking

    qrels, run = campaign(5)
    expected = reference(qrels, run)
    monkeypatch.setattr(ranking, "string_hash", lambda column: np.zeros(len(column), np.uint64))
    found = evaluate(qrels, run, ["map"], max_depth=4, complete=True).ranking
    assert_same(JudgedRanks.of(found, QrelsIndex(qrels)), expected)


@pytest.mark.parametrize("kept", [["atwood"], ["cs-foundations", "stage-plays"], []])
def test_ranks_on_some_needs_equal_the_ranks_on_their_qrels(kept):
    qrels = read_qrels(DEMO / "qrels.txt")
    whole = judged_ranks(QrelsIndex(qrels), DEMO / "run-A.txt")
    subset = qrels[qrels["need_id"].isin(kept)].reset_index(drop=True)
    alone = judged_ranks(QrelsIndex(subset), DEMO / "run-A.txt")
    got = whole.only(QrelsIndex(qrels), kept)
    assert got.to_bytes() == alone.to_bytes()
    assert got.qrels_lines == len(subset)


@pytest.mark.parametrize("seed", range(4))
def test_the_index_of_the_readers_columns_is_the_index_of_the_frame(seed: int) -> None:
    """The worker keeps judgments as the reader's columns: its index looks runs up as the
    frame's does (needs in order of first appearance, each line's need, relevances)."""
    import pyarrow as pa

    from evaluation.trec.columnar import Qrels

    qrels, run = campaign(seed)
    columns = Qrels(
        pa.chunked_array([pa.array(qrels["need_id"].astype(str).tolist(), pa.string())]),
        pa.chunked_array([pa.array(qrels["doc_id"].astype(str).tolist(), pa.string())]),
        qrels["relevance"].to_numpy(np.int64),
    )
    index, frame_index = QrelsIndex(columns), QrelsIndex(qrels)
    assert index.needs.tolist() == list(dict.fromkeys(qrels["need_id"].astype(str)))
    assert index.needs.tolist() == frame_index.needs.tolist()
    assert np.array_equal(index.need, frame_index.need)
    assert np.array_equal(index.relevance, frame_index.relevance)
    assert_same(judged_ranks(index, run), reference(qrels, run))
