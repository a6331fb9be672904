"""A benchmark at campaign scale for the board's tests: 60 scored runs from 10 teams of
two participants on 30 needs, ranked by nDCG@10 (AP, P@10 and RR shown), two baselines,
submitted over two months, every pair compared on nDCG@10 and AP as the workers store it.

Names are long, as real ones are (the board truncates them); scores are drawn from a
fixed seed, so every run of the tests sees the same board.
"""

from __future__ import annotations

import datetime as dt
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from evaluation.significance import PAIR_KEYS, FewNeedsWarning, compare_one_against_many
from leaderboard.models import Benchmark, Comparison, Phase, Profile, Result, Submission
from tests.leaderboard.pages_data import add_run, make_benchmark, store_comparisons, summarize

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


# --- Phase boards: a benchmark with a public, an "owners" and a "hidden" phase ----------

BOARD_START = dt.datetime(2026, 3, 1, 12, tzinfo=dt.UTC)
BEFORE_REVEAL = BOARD_START + timezone.timedelta(days=61)
REVEAL = BOARD_START + timezone.timedelta(days=70)
AFTER_REVEAL = BOARD_START + timezone.timedelta(days=71)
# Scores no other run or page shows, so their absence is the test.
HIDDEN_MAP = 0.8765
OWNERS_MAP = 0.6543
PUBLIC_MAP = 0.4321


@dataclass
class Boards:
    """``benchmark`` with three phases (Development public, Validation "owners", Test
    "hidden"); ``ada`` (display name "Ada Realname", no team) submitted ``own_run`` in
    Validation, ``hidden_run`` in Test and ``ada_public`` in Development; ``bob`` (team
    "Zebra Crew") ``bob_public`` in Development; ``olga`` organizes; ``eve`` is another
    participant who submitted nothing. Revealed at ``REVEAL``."""

    benchmark: Benchmark
    ada: Any
    bob: Any
    olga: Any
    eve: Any
    bob_public: Submission
    ada_public: Submission
    own_run: Submission
    hidden_run: Submission


def flat_frame(value: float) -> pd.DataFrame:
    needs = list(NEEDS)[:5]
    return pd.DataFrame(
        {"map": value, "P_10": value, "ndcg_cut_10": value, "num_rel": 5.0}, index=needs
    )


def seed_boards(slug: str = "boards", anonymous: bool = False) -> Boards:
    benchmark = make_benchmark(
        slug,
        dict(list(NEEDS.items())[:5]),
        primary="map",
        title="Boards",
        reveal_at=REVEAL,
        anonymous=anonymous,
    )
    users = get_user_model().objects
    ada = users.create_user("ada-username", password="pw-ada-12345")
    bob = users.create_user("bob-username", password="pw-bob-12345")
    olga = users.create_user("olga-organizer", password="pw-olga-12345", is_staff=True)
    eve = users.create_user("eve-username", password="pw-eve-12345")
    benchmark.organizers.add(olga)
    Profile.of(ada)
    Profile.objects.filter(user=ada).update(display_name="Ada Realname")
    Profile.of(bob).create_team("Zebra Crew")
    day = timezone.timedelta(days=1)
    phases = {
        board: Phase.objects.create(
            benchmark=benchmark,
            name=name,
            opens=BOARD_START + day * 20 * i,
            closes=BOARD_START + day * 20 * (i + 1),
            board=board,
        )
        for i, (name, board) in enumerate(
            [("Development", "public"), ("Validation", "owners"), ("Test", "hidden")]
        )
    }

    def run(user, name, board, value, hours):
        frame = flat_frame(value)
        return add_run(
            benchmark,
            user,
            name,
            frame,
            summary={"map": value, "P_10": value, "ndcg_cut_10": value, "num_rel": 25.0},
            created=phases[board].opens + timezone.timedelta(hours=hours),
            phase=phases[board],
            judgments_id=benchmark.current_judgments_id,
        )

    boards = Boards(
        benchmark,
        ada,
        bob,
        olga,
        eve,
        bob_public=run(bob, "zeta-public", "public", PUBLIC_MAP, 1),
        ada_public=run(ada, "alpha-public", "public", 0.3210, 2),
        own_run=run(ada, "alpha-owners", "owners", OWNERS_MAP, 1),
        hidden_run=run(ada, "alpha-hidden", "hidden", HIDDEN_MAP, 1),
    )
    store_comparisons(benchmark, ("map",))
    return boards


# Scores of the team's runs that nothing else shows.
TEAM_OWNERS_MAP = 0.5678
TEAM_HIDDEN_MAP = 0.7891


@dataclass
class TeamRuns:
    """On ``seed_boards``' benchmark: ``bob`` submitted ``owners_run`` (Validation) and
    ``hidden_run`` (Test) under his team "Zebra Crew", and ``solo_run`` (Validation)
    under no team; then ``tom`` joined the team. ``eve`` is in no team."""

    tom: Any
    owners_run: Submission
    hidden_run: Submission
    solo_run: Submission


def seed_team_runs(boards: Boards) -> TeamRuns:
    crew = Profile.of(boards.bob).team
    phases = {p.board: p for p in boards.benchmark.phases.all()}

    def run(name, board, value, team):
        return add_run(
            boards.benchmark,
            boards.bob,
            name,
            flat_frame(value),
            summary={"map": value, "P_10": value, "ndcg_cut_10": value, "num_rel": 25.0},
            created=phases[board].opens + timezone.timedelta(hours=3),
            phase=phases[board],
            team=team,
            judgments_id=boards.benchmark.current_judgments_id,
        )

    owners_run = run("zeta-owners", "owners", TEAM_OWNERS_MAP, crew)
    hidden_run = run("zeta-hidden", "hidden", TEAM_HIDDEN_MAP, crew)
    solo_run = run("zeta-solo", "owners", 0.1234, None)
    tom = get_user_model().objects.create_user("tom-username", password="pw-tom-12345")
    Profile.of(tom).join_team(crew.join_code)
    return TeamRuns(tom, owners_run, hidden_run, solo_run)
