"""Pooling against a plain reference: sets per need, Python sorting, no numpy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.pooling import (
    PoolRun,
    assessor_file,
    assessor_pairs,
    build_pool,
    pooled_runs,
    top_of,
)
from evaluation.trec import read_qrels, read_run


def generated_runs(seed: int, teams: int, runs_per_team: int, needs: int) -> list[PoolRun]:
    """Runs with many score ties (scores from a few values), docs shared between runs,
    needs some runs skip, and equal priorities inside a team."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(teams):
        for r in range(runs_per_team):
            lines = []
            for n in range(needs):
                if rng.random() < 0.2:
                    continue
                count = int(rng.integers(1, 15))
                docs = rng.choice(40, size=count, replace=False)
                scores = rng.choice([0.0, -0.0, 0.5, 1.0, 1.5, 2.0], size=count)
                for rank, (doc, score) in enumerate(zip(docs, scores, strict=True), 1):
                    lines.append(f"n{n} Q0 doc{doc} {rank} {float(score)!r} r{t}_{r}")
            if not lines:
                lines.append(f"n0 Q0 doc0 1 1.0 r{t}_{r}")
            run = read_run("\n".join(lines).encode() + b"\n")
            priority = int(rng.integers(1, runs_per_team + 1))
            out.append(PoolRun(f"r{t}_{r}", f"team{t}", priority, run))
    return out


def reference_pool(runs: list[PoolRun], depth: int, m: int):
    """Sets per need, by hand: TREC's rule as written."""
    by_team: dict[str, list[PoolRun]] = {}
    for run in runs:
        by_team.setdefault(run.team, []).append(run)
    chosen = []
    for team in sorted(by_team):
        chosen += sorted(by_team[team], key=lambda r: (r.priority, r.name))[:m]
    top: dict[str, set[tuple[str, str]]] = {}
    for run in chosen:
        lines: dict[str, list[tuple[float, str]]] = {}
        for need, doc, score in zip(
            run.run.frame.need_id.astype(str),
            run.run.frame.doc_id,
            run.run.frame.score,
            strict=True,
        ):
            lines.setdefault(need, []).append((float(score), doc))
        pairs = set()
        for need, docs in lines.items():
            ordered = sorted(docs, key=lambda sd: (sd[0], sd[1].encode()), reverse=True)
            pairs |= {(need, doc) for _, doc in ordered[:depth]}
        top[run.name] = pairs
    pool = set().union(*top.values()) if top else set()
    team_pairs: dict[str, set] = {}
    for run in chosen:
        team_pairs.setdefault(run.team, set()).update(top[run.name])
    run_unique = {
        name: len(p - set().union(*(q for other, q in top.items() if other != name)))
        for name, p in top.items()
    }
    team_unique = {
        team: len(p - set().union(*(q for other, q in team_pairs.items() if other != team)))
        for team, p in team_pairs.items()
    }
    sizes: dict[str, int] = {}
    for need, _ in pool:
        sizes[need] = sizes.get(need, 0) + 1
    return chosen, top, pool, sizes, run_unique, team_pairs, team_unique


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    teams=st.integers(1, 5),
    per_team=st.integers(1, 4),
    needs=st.integers(1, 6),
    depth=st.integers(1, 12),
    m=st.integers(1, 4),
)
def test_pool_equals_the_reference(seed, teams, per_team, needs, depth, m):
    runs = generated_runs(seed, teams, per_team, needs)
    pool = build_pool(runs, depth, m)
    chosen, top, pairs, sizes, run_unique, team_pairs, team_unique = reference_pool(runs, depth, m)
    assert [r.name for r in pooled_runs(runs, m)] == [r.name for r in chosen]
    assert set(zip(pool.pairs.need_id, pool.pairs.doc_id, strict=True)) == pairs
    assert len(pool.pairs) == len(pairs)
    assert pool.sizes.to_dict() == sizes
    assert list(pool.sizes.index) == sorted(sizes, key=str.encode)
    assert dict(zip(pool.runs.run, pool.runs.unique, strict=True)) == run_unique
    assert dict(zip(pool.runs.run, pool.runs.contributed, strict=True)) == {
        name: len(p) for name, p in top.items()
    }
    assert dict(zip(pool.teams.team, pool.teams.unique, strict=True)) == team_unique
    assert dict(zip(pool.teams.team, pool.teams.contributed, strict=True)) == {
        team: len(p) for team, p in team_pairs.items()
    }
    expected_runs = {pair: sum(pair in p for p in top.values()) for pair in pairs}
    got_runs = dict(
        zip(zip(pool.pairs.need_id, pool.pairs.doc_id, strict=True), pool.pairs.runs, strict=True)
    )
    assert got_runs == expected_runs


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), depth=st.integers(1, 8))
def test_cut_runs_pool_as_the_whole_ones(seed, depth):
    runs = generated_runs(seed, teams=3, runs_per_team=2, needs=4)
    cut = [PoolRun(r.name, r.team, r.priority, top_of(r.run, depth)) for r in runs]
    whole, part = build_pool(runs, depth, 2), build_pool(cut, depth, 2)
    assert whole.pairs.equals(part.pairs) and whole.runs.equals(part.runs)
    assert all(len(c.run.frame) <= len(r.run.frame) for c, r in zip(cut, runs, strict=True))


def test_top_of_cuts_a_run_to_its_top_per_need():
    run = read_run(b"q Q0 a 1 1 x\nq Q0 b 2 3 x\nq Q0 c 3 2 x\nr Q0 a 1 1 x\n")
    assert top_of(run, 2).frame.doc_id.tolist() == ["b", "c", "a"]  # file order kept


def test_ties_break_on_doc_id_descending():
    # all four score 1.0: trec_eval keeps d4, d3 at depth 2 (doc_id descending)
    run = read_run(b"q Q0 d1 1 1.0 a\nq Q0 d3 2 1.0 a\nq Q0 d2 3 1.0 a\nq Q0 d4 4 1.0 a\n")
    pool = build_pool([PoolRun("a", "t", 1, run)], depth=2, runs_per_team=1)
    assert pool.pairs.doc_id.tolist() == ["d3", "d4"]


def test_priority_picks_the_runs():
    low = read_run(b"q Q0 only-low 1 1 low\n")
    high = read_run(b"q Q0 only-high 1 1 high\n")
    runs = [PoolRun("low", "t", 2, low), PoolRun("high", "t", 1, high)]
    pool = build_pool(runs, depth=10, runs_per_team=1)
    assert pool.pairs.doc_id.tolist() == ["only-high"]
    assert pool.runs.run.tolist() == ["high"]


def test_bad_settings_are_refused():
    run = read_run(b"q Q0 d 1 1 a\n")
    with pytest.raises(ValueError, match="depth"):
        build_pool([PoolRun("a", "t", 1, run)], depth=0, runs_per_team=1)
    with pytest.raises(ValueError, match="runs per team"):
        build_pool([PoolRun("a", "t", 1, run)], depth=1, runs_per_team=0)
    with pytest.raises(ValueError, match="share a name"):
        build_pool([PoolRun("a", "t", 1, run), PoolRun("a", "u", 1, run)], 1, 1)


def test_no_runs_make_an_empty_pool():
    pool = build_pool([], depth=10, runs_per_team=1)
    assert len(pool.pairs) == len(pool.sizes) == len(pool.runs) == len(pool.teams) == 0
    assert assessor_file(assessor_pairs(pool, None, seed=1)) == b""


def test_export_leaves_out_judged_pairs_and_is_seeded():
    runs = generated_runs(7, teams=4, runs_per_team=2, needs=5)
    pool = build_pool(runs, depth=10, runs_per_team=2)
    first = pool.pairs.iloc[::3]
    judged = pd.DataFrame(
        {
            "need_id": first.need_id,
            "doc_id": first.doc_id,
            # a negative relevance is "pooled, not judged": those stay in the export
            "relevance": np.where(np.arange(len(first)) % 2 == 0, 1, -1),
        }
    )
    done = set(zip(first.need_id[::2], first.doc_id[::2], strict=True))
    a = assessor_pairs(pool, judged, seed=11)
    b = assessor_pairs(pool, judged, seed=11)
    c = assessor_pairs(pool, judged, seed=12)
    pairs = set(zip(pool.pairs.need_id, pool.pairs.doc_id, strict=True))
    assert set(zip(a.need_id, a.doc_id, strict=True)) == pairs - done
    assert len(a) == len(pairs - done)
    assert a.equals(b)
    assert not a.equals(c)  # another seed, another order (same pairs)
    assert sorted(zip(a.need_id, a.doc_id, strict=True)) == sorted(
        zip(c.need_id, c.doc_id, strict=True)
    )
    # needs stay grouped, in byte order
    assert a.need_id.tolist() == sorted(a.need_id, key=str.encode)
    # within a need the order is not the pool's (doc_id) order for every need
    assert any(group.doc_id.tolist() != sorted(group.doc_id) for _, group in a.groupby("need_id"))
    text = assessor_file(a)
    back = read_qrels(text)
    assert back.need_id.tolist() == a.need_id.tolist()
    assert back.doc_id.tolist() == a.doc_id.tolist()
    assert set(back.relevance) == {-1}
    assert text.split(b"\n")[0].split(b" ")[1] == b"0"
