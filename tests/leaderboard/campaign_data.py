"""A benchmark at campaign scale for the board's tests: 60 scored runs from 10 teams of
two participants on 30 needs, ranked by nDCG@10 (AP, P@10 and RR shown), two baselines,
submitted over two months, every pair compared on nDCG@10 and AP as the workers store it.

Names are long, as real ones are (the board truncates them); scores are drawn from a
fixed seed, so every run of the tests sees the same board.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from evaluation.significance import PAIR_KEYS, FewNeedsWarning, compare_one_against_many
from leaderboard.models import Benchmark, Comparison, Profile, Result
from tests.leaderboard.pages_data import add_run, make_benchmark, summarize

NEEDS = {f"n{i:02d}": f"information need number {i}" for i in range(30)}
TEAMS = 10
RUNS_PER_TEAM = 6
SHOWN = ["map", "P_10", "recip_rank"]
TESTED = ["ndcg_cut_10", "map"]


def run_frame(rng: np.random.Generator, level: float) -> pd.DataFrame:
    """Per-need values around ``level``: nDCG@10, AP, P@10, RR and num_rel."""
    base = np.clip(level + rng.normal(0, 0.12, len(NEEDS)), 0, 1)
    return pd.DataFrame(
        {
            "ndcg_cut_10": base,
            "map": np.clip(base - 0.08 + rng.normal(0, 0.03, len(NEEDS)), 0, 1),
            "P_10": np.round(np.clip(base + rng.normal(0, 0.05, len(NEEDS)), 0, 1), 1),
            "recip_rank": np.clip(base + 0.1, 0, 1),
            "num_rel": 5.0,
        },
        index=list(NEEDS),
    )


def store_tests(benchmark: Benchmark, measures=TESTED) -> None:
    """Every pair's stored comparison (a = lower id, raw p), as ``compare_submission``
    stores them: each run against the runs after it, 200 permutations."""
    results = sorted(
        Result.objects.filter(judgments=benchmark.current_judgments), key=lambda r: r.submission_id
    )
    frames = {r.submission_id: r.per_need_frame() for r in results}
    rows = []
    for measure in measures:
        scores = pd.DataFrame({pk: frame[measure] for pk, frame in frames.items()})
        ids = list(scores.columns)
        for i, pk in enumerate(ids[:-1]):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FewNeedsWarning)
                table = compare_one_against_many(
                    scores[pk].to_numpy(), scores[ids[i + 1 :]], permutations=200
                )
            for other, stats in zip(ids[i + 1 :], table.to_dict("records"), strict=True):
                values = {key: stats[key] for key in PAIR_KEYS}
                for key in ("n", "wins", "ties", "losses"):
                    values[key] = int(values[key])
                rows.append(
                    Comparison(
                        submission_a_id=pk,
                        submission_b_id=other,
                        judgments=benchmark.current_judgments,
                        measure=measure,
                        permutations=200,
                        **values,
                    )
                )
    Comparison.objects.bulk_create(rows, batch_size=500)


def seed_campaign(slug: str = "campaign") -> Benchmark:
    benchmark = make_benchmark(
        slug,
        NEEDS,
        primary="ndcg_cut_10",
        title="Campaign",
        shown_measures=SHOWN,
        significance_measures=["map"],
    )
    rng = np.random.default_rng(31)
    users = get_user_model().objects
    start = timezone.now() - timezone.timedelta(days=60)
    number = 0
    for team_no in range(TEAMS):
        owner = users.create_user(f"team{team_no}-lead", password=None)
        mate = users.create_user(f"team{team_no}-mate", password=None)
        profile = Profile.of(owner)
        team = profile.create_team(f"Team {team_no} Retrieval Research Group")
        Profile.of(mate).join_team(team.join_code)
        Profile.objects.filter(user=owner).update(
            display_name=f"Participant {team_no} With A Rather Long Display Name"
        )
        for run_no in range(RUNS_PER_TEAM):
            level = 0.3 + 0.4 * rng.random()
            frame = run_frame(rng, level)
            # GMAP: a summary-only measure (no per-need values), as the engine stores it
            gmap = float(np.exp(np.log(np.maximum(frame["map"], 1e-5)).mean()))
            add_run(
                benchmark,
                owner if run_no % 2 == 0 else mate,
                f"team{team_no}-dense-monot5-rerank-ensemble-v{run_no}",
                frame,
                summary={**summarize(frame), "gm_map": gmap},
                created=start + timezone.timedelta(hours=24 * number),
                is_baseline=number in (0, 7),
            )
            number += 1
    store_tests(benchmark)
    return benchmark


@pytest.fixture
def campaign(db) -> Benchmark:
    return seed_campaign()
