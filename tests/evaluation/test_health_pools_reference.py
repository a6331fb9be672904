"""Pool bias from stored judged ranks equals, value for value, the computation that reads
every run (kept here as the reference): generated campaigns with graded and negative
judgments, tied scores, needs a run lacks, needs without judgments, teams of several
runs, and measures that read only judged documents and ones that read the others too."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import pytest

from evaluation.health import kendall_tau, pool_bias, pool_contributions
from evaluation.health.judged import JudgedRanks, QrelsIndex, judged_ranks
from evaluation.health.pools import _competition_ranks, pool_bias_of_ranks
from evaluation.measures import evaluate
from evaluation.trec import as_qrels


def _scores(
    qrels: pd.DataFrame, run: pd.DataFrame, measure: str, needs: pd.Index, **kw
) -> pd.Series:
    return _score_table(qrels, run, [measure], needs, **kw).iloc[:, 0]


def _score_table(
    qrels: pd.DataFrame, run: pd.DataFrame, measures: list[str], needs: pd.Index, **kw
) -> pd.DataFrame:
    """Per-need scores of each measure (one evaluation: the run is ordered once), over
    ``needs`` (a need the run or the qrels lack scores 0)."""
    table = evaluate(qrels, run, measures=measures, complete=True, **kw).per_need
    if table.shape[1] != len(measures):
        raise ValueError(f"measure {measures[0]!r} gives several values: name one")
    table.index = table.index.astype(str)
    return table.reindex(needs, fill_value=0.0)


def reference_pool_bias(
    qrels: pd.DataFrame | object,
    runs: Mapping[str, object],
    participants: Mapping[str, str],
    *,
    measure: str = "map",
    depth: int = 100,
    judged_k: int = 10,
    relevance_level: int = 1,
) -> dict:
    """Leave-one-participant-out pool bias (see the module docstring).

    ``runs`` maps a run name to a run (a file, a :class:`~evaluation.trec.Run`, a frame:
    whatever :func:`evaluation.measures.evaluate` reads); ``participants`` maps each run
    name to its participant. Returns ``runs``: a DataFrame, one row per run (``run``,
    ``participant``, ``score``, ``loo_score``, ``drop`` = score - loo_score, ``rank``,
    ``loo_rank``, ``rank_change`` = loo_rank - rank, ``judged``: Judged@``judged_k``),
    sorted by drop descending; ``participants``: one row per participant
    (``unique_judged``, ``unique_relevant``: the judgments only it contributed,
    ``max_drop``, ``tau``: original vs leave-this-one-out ranking of all runs);
    ``max_drop`` over all runs; ``depth`` and ``measure``.
    """
    missing = set(runs) - set(participants)
    if missing:
        raise ValueError(f"no participant given for runs {sorted(missing)[:5]}")
    qrels = as_qrels(qrels)
    qrels = qrels.assign(need_id=qrels["need_id"].astype(str), doc_id=qrels["doc_id"].astype(str))
    needs = pd.Index(pd.unique(qrels["need_id"]), name="need_id")
    frames = dict(runs)  # the frames as given
    pool = pool_contributions(frames, participants, depth)
    unique = pool[pool["contributors"] == 1].merge(qrels, on=["need_id", "doc_id"])
    kw = {"relevance_level": relevance_level}
    names = list(frames)
    score = np.empty(len(names))
    judged = np.empty(len(names))
    judged_measure = f"Judged@{judged_k}"
    both = [measure, judged_measure] if measure != judged_measure else [measure]
    for i, name in enumerate(names):
        means = _score_table(qrels, frames[name], both, needs, **kw).mean()
        judged_column = f"judged_{judged_k}"  # the engine's name; columns come in its order
        others = [c for c in means.index if c != judged_column] or [judged_column]
        score[i], judged[i] = means[others[0]], means[judged_column]
    loo = score.copy()
    by_participant = np.array([participants[name] for name in names])
    rows = []
    rank = _competition_ranks(score)
    loo_rank = np.empty(len(names), dtype=np.int64)
    for participant in pd.unique(by_participant):
        mine = np.flatnonzero(by_participant == participant)
        removed = unique[unique["participant"] == participant]
        trial = score.copy()
        if len(removed):
            key = pd.MultiIndex.from_frame(removed[["need_id", "doc_id"]])
            kept = qrels[~pd.MultiIndex.from_frame(qrels[["need_id", "doc_id"]]).isin(key)]
            for i in mine:  # nothing judged left (one participant pooled it all): zeros
                trial[i] = (
                    _scores(kept, frames[names[i]], measure, needs, **kw).mean()
                    if len(kept)
                    else 0.0
                )
        loo[mine] = trial[mine]
        loo_rank[mine] = _competition_ranks(trial)[mine]
        drops = score[mine] - trial[mine]
        rows.append(
            {
                "participant": participant,
                "runs": int(mine.size),
                "unique_judged": int(len(removed)),
                "unique_relevant": int((removed["relevance"] >= relevance_level).sum()),
                "max_drop": float(drops.max()),
                "tau": kendall_tau(score, trial),
            }
        )
    table = pd.DataFrame(
        {
            "run": names,
            "participant": by_participant,
            "score": score,
            "loo_score": loo,
            "drop": score - loo,
            "rank": rank,
            "loo_rank": loo_rank,
            "rank_change": loo_rank - rank,
            "judged": judged,
        }
    ).sort_values(["drop", "run"], ascending=[False, True], kind="stable")
    return {
        "measure": measure,
        "depth": depth,
        "judged_k": judged_k,
        "runs": table.reset_index(drop=True),
        "participants": pd.DataFrame(rows),
        "max_drop": float(table["drop"].max()) if len(table) else float("nan"),
    }


def campaign(seed: int, teams: int = 4, per_team: int = 2, needs: int = 8) -> tuple:
    """Runs over a collection of 60 documents a need, scores with ties (rounded), some
    runs short or missing needs, one need only in the runs; qrels graded 0-3 with some
    negative (judged, not assessed) lines, pooled to depth 6 from the first runs plus a
    few documents judged from elsewhere."""
    rng = np.random.default_rng(seed)
    runs, owners = {}, {}
    for t in range(teams):
        for r in range(per_team):
            parts = []
            for need in [*(f"q{i}" for i in range(needs)), "extra"]:
                if rng.random() < 0.1:
                    continue  # a need this run did not answer
                length = int(rng.integers(3, 40))
                docs = rng.choice(60, length, replace=False)
                parts.append(
                    pd.DataFrame(
                        {
                            "need_id": need,
                            "doc_id": [f"d{d}" for d in docs],
                            "score": np.round(rng.normal(size=length), 1),
                        }
                    )
                )
            runs[f"t{t}r{r}"] = pd.concat(parts, ignore_index=True)
            owners[f"t{t}r{r}"] = f"team{t}"
    pooled = pd.concat(
        [
            frame.sort_values(["need_id", "score"], ascending=[True, False])
            .groupby("need_id")
            .head(6)
            for frame in list(runs.values())[:-2]
        ]
    )
    pooled = pooled[pooled["need_id"] != "extra"][["need_id", "doc_id"]].drop_duplicates()
    elsewhere = pd.DataFrame({"need_id": [f"q{i}" for i in range(needs)], "doc_id": "elsewhere"})
    qrels = pd.concat([pooled, elsewhere], ignore_index=True)
    qrels["relevance"] = rng.choice([-1, 0, 0, 1, 2, 3], len(qrels))
    return qrels.sample(frac=1, random_state=seed).reset_index(drop=True), runs, owners


def assert_same(found: dict, expected: dict) -> None:
    """Every number exactly equal (floats to the bit), rows in the same order."""
    pd.testing.assert_frame_equal(found["runs"], expected["runs"], check_exact=True)
    pd.testing.assert_frame_equal(found["participants"], expected["participants"], check_exact=True)
    assert found["max_drop"] == expected["max_drop"]


MEASURES = [
    "map", "P_10", "recip_rank", "ndcg_cut_10", "ndcg", "bpref", "Rprec", "infAP",
    "Judged@10", "RR@5", "rbp_resid", "G",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("measure", MEASURES)
def test_from_judged_ranks_equals_reading_the_runs(seed: int, measure: str) -> None:
    qrels, runs, owners = campaign(seed)
    for depth in (1, 6):
        expected = reference_pool_bias(qrels, runs, owners, measure=measure, depth=depth)
        found = pool_bias(qrels, runs, owners, measure=measure, depth=depth)
        assert_same(found, expected)
    assert (expected["runs"]["drop"] != 0).any() or measure in ("Judged@10",)


@pytest.mark.parametrize("level", [1, 2])
def test_relevance_levels_and_one_team(level: int) -> None:
    qrels, runs, owners = campaign(11, teams=1, per_team=3)
    kw = {"measure": "map", "depth": 6, "relevance_level": level}
    assert_same(
        pool_bias(qrels, runs, owners, **kw), reference_pool_bias(qrels, runs, owners, **kw)
    )


def test_a_team_holding_every_top_grade() -> None:
    """The only grade-3 judgments are one team's own: the judgments left have fewer levels."""
    qrels, runs, owners = campaign(5)
    top = pool_contributions(runs, owners, 6)
    mine = top[(top["contributors"] == 1) & (top["participant"] == "team0")]
    key = pd.MultiIndex.from_frame(mine[["need_id", "doc_id"]])
    at = pd.MultiIndex.from_frame(qrels[["need_id", "doc_id"]]).isin(key)
    qrels["relevance"] = np.where(at, 3, np.minimum(qrels["relevance"], 2))
    for measure in ("ndcg", "ndcg_cut_10", "map"):
        kw = {"measure": measure, "depth": 6}
        expected = reference_pool_bias(qrels, runs, owners, **kw)
        assert_same(pool_bias(qrels, runs, owners, **kw), expected)


def test_judged_ranks_pack_and_check_their_qrels() -> None:
    qrels, runs, owners = campaign(3)
    index = QrelsIndex(qrels)
    stored = {name: judged_ranks(index, run).to_bytes() for name, run in runs.items()}
    back = {name: JudgedRanks.from_bytes(blob, index) for name, blob in stored.items()}
    assert_same(
        pool_bias_of_ranks(index, back, owners, depth=6),
        reference_pool_bias(qrels, runs, owners, depth=6),
    )
    with pytest.raises(ValueError, match="other qrels"):
        JudgedRanks.from_bytes(next(iter(stored.values())), QrelsIndex(qrels.iloc[:-1]))
    with pytest.raises(ValueError, match="truncated"):
        JudgedRanks.from_bytes(next(iter(stored.values()))[:-4])


def test_judged_ranks_of_a_small_run() -> None:
    index = QrelsIndex(pd.DataFrame({"need_id": ["1"], "doc_id": ["d2"], "relevance": [1]}))
    run = pd.DataFrame({"need_id": "1", "doc_id": ["d1", "d3", "d2"], "score": [1.0, 3.0, 2.0]})
    found = judged_ranks(index, run)
    assert (found.line.tolist(), found.rank.tolist(), found.num_ret.tolist()) == ([0], [2], [3])
    # ties go by doc id descending, in byte order: d9, d2, d10
    tied = pd.DataFrame({"need_id": "1", "doc_id": ["d10", "d2", "d9"], "score": [1.0, 1.0, 1.0]})
    assert judged_ranks(index, tied).rank.tolist() == [2]


def test_doc_ids_whose_keys_collide_are_still_told_apart(monkeypatch) -> None:
    """Every doc id of a need hashed alike: the keys only pick candidates, the ids decide."""
    from evaluation.health import judged

    monkeypatch.setattr(judged, "string_hash", lambda column: np.zeros(len(column), np.uint64))
    qrels, runs, owners = campaign(7)
    kw = {"measure": "map", "depth": 6}
    assert_same(
        pool_bias(qrels, runs, owners, **kw), reference_pool_bias(qrels, runs, owners, **kw)
    )


def test_no_runs_and_a_bad_depth_are_errors() -> None:
    qrels, runs, owners = campaign(1)
    with pytest.raises(ValueError, match="no runs"):
        pool_bias(qrels, {}, {})
    with pytest.raises(ValueError, match="depth"):
        pool_bias(qrels, runs, owners, depth=0)
