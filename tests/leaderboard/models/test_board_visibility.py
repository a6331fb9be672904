"""A phase's board before and after the benchmark's reveal: which runs each reader sees
(``Submission.visible_to`` / ``is_visible_to``) and whose scores (``scores_visible_to``),
the one rule every surface reads; the queryset and the one-run method agree."""

from __future__ import annotations

import pytest
import time_machine
from django.contrib.auth.models import AnonymousUser

from leaderboard.models import Profile, Submission
from tests.leaderboard.campaign_data import (
    AFTER_REVEAL,
    BEFORE_REVEAL,
    seed_boards,
    seed_team_runs,
)

RUNS = ("bob_public", "ada_public", "own_run", "hidden_run")
# Before the reveal: (runs seen, runs whose scores are seen), per reader.
BEFORE = {
    "anonymous": ({"bob_public", "ada_public"}, {"bob_public", "ada_public"}),
    "eve": ({"bob_public", "ada_public"}, {"bob_public", "ada_public"}),
    "bob": ({"bob_public", "ada_public"}, {"bob_public", "ada_public"}),
    "ada": (set(RUNS), {"bob_public", "ada_public", "own_run"}),
    "olga": (set(RUNS), set(RUNS)),
}


@pytest.fixture
def boards(db):
    return seed_boards()


def reader(boards, who):
    return AnonymousUser() if who == "anonymous" else getattr(boards, who)


@pytest.mark.parametrize("who", list(BEFORE))
@pytest.mark.parametrize("moment", ["before", "after"])
def test_runs_and_scores_each_reader_sees(boards, who, moment):
    user = reader(boards, who)
    names = {getattr(boards, run).pk: run for run in RUNS}
    seen, scored = BEFORE[who] if moment == "before" else (set(RUNS), set(RUNS))
    with time_machine.travel(BEFORE_REVEAL if moment == "before" else AFTER_REVEAL, tick=False):
        runs = Submission.objects.for_benchmark(boards.benchmark)
        assert {names[r.pk] for r in runs.visible_to(user)} == seen
        assert {names[r.pk] for r in runs.scores_visible_to(user)} == scored
        for name in RUNS:
            run = Submission.objects.get(pk=getattr(boards, name).pk)
            assert run.is_visible_to(user) == (name in seen), name
            assert run.scores_visible_to(user) == (name in scored), name


def test_a_superuser_sees_every_run_and_score(boards, django_user_model):
    root = django_user_model.objects.create_superuser("root", password="pw-root-12345")
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        runs = Submission.objects.for_benchmark(boards.benchmark)
        assert runs.scores_visible_to(root).count() == len(RUNS)
        assert Submission.objects.get(pk=boards.hidden_run.pk).scores_visible_to(root)


def test_no_reveal_scheduled_keeps_the_boards_closed(boards):
    boards.benchmark.reveal_at = None
    boards.benchmark.save(update_fields=["reveal_at"])
    with time_machine.travel(AFTER_REVEAL, tick=False):
        runs = Submission.objects.for_benchmark(boards.benchmark)
        assert set(runs.visible_to(AnonymousUser())) == {boards.bob_public, boards.ada_public}
        hidden = Submission.objects.get(pk=boards.hidden_run.pk)
        assert hidden.scores_note(boards.ada) == (
            "Scores of the Test phase are shown from the reveal (not yet scheduled)."
        )


def test_a_hidden_run_is_still_hidden_after_the_reveal(boards):
    """The reveal opens the phases' boards, not the runs their owners hid."""
    Submission.objects.filter(pk=boards.hidden_run.pk).update(is_hidden=True)
    with time_machine.travel(AFTER_REVEAL, tick=False):
        assert not Submission.objects.get(pk=boards.hidden_run.pk).is_visible_to(boards.eve)


def test_scores_note_and_board_notes(boards):
    hidden = Submission.objects.get(pk=boards.hidden_run.pk)
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        assert hidden.scores_note(boards.ada) == (
            "Scores of the Test phase are shown from the reveal at 2026-05-10 12:00 UTC."
        )
        assert hidden.scores_note(boards.olga) == ""
        notes = [p.board_note() for p in boards.benchmark.phases.order_by("opens")]
        assert notes == [
            "",
            "Validation phase: each participant sees only their own and their team's runs "
            "until the reveal at 2026-05-10 12:00 UTC.",
            "Test phase: scores hidden until the reveal at 2026-05-10 12:00 UTC.",
        ]
    with time_machine.travel(AFTER_REVEAL, tick=False):
        assert hidden.scores_note(boards.ada) == ""
        assert [p.board_note() for p in boards.benchmark.phases.all()] == ["", "", ""]


# --- A run's owners: its participant and its team's members ----------------------------

TEAM_RUNS = ("owners_run", "hidden_run", "solo_run")
# Before the reveal: (team runs seen, team runs whose scores are seen), per reader.
TEAM_BEFORE = {
    "bob": (set(TEAM_RUNS), {"owners_run", "solo_run"}),
    "tom": ({"owners_run", "hidden_run"}, {"owners_run"}),  # not bob's run of no team
    "eve": (set(), set()),
    "ada": (set(), set()),
    "olga": (set(TEAM_RUNS), set(TEAM_RUNS)),
}


def team_readers(boards, team, who):
    return team.tom if who == "tom" else getattr(boards, who)


@pytest.mark.parametrize("who", list(TEAM_BEFORE))
def test_a_teammate_owns_the_team_runs(boards, who):
    team = seed_team_runs(boards)
    user = team_readers(boards, team, who)
    names = {getattr(team, run).pk: run for run in TEAM_RUNS}
    seen, scored = TEAM_BEFORE[who]
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        runs = Submission.objects.filter(pk__in=names)
        assert {names[r.pk] for r in runs.visible_to(user)} == seen
        assert {names[r.pk] for r in runs.scores_visible_to(user)} == scored
        for name in TEAM_RUNS:
            run = Submission.objects.get(pk=getattr(team, name).pk)
            assert run.is_visible_to(user) == (name in seen), name
            assert run.scores_visible_to(user) == (name in scored), name
            assert run.is_submitted_by(user) == (who == "bob"), name


def test_membership_is_the_team_as_it_is_now(boards):
    """A member who leaves stops seeing the team's runs; one who joins sees them."""
    team = seed_team_runs(boards)
    owners_run = Submission.objects.get(pk=team.owners_run.pk)
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        Profile.of(team.tom).leave_team()
        assert not owners_run.is_visible_to(team.tom)
        assert not Submission.objects.filter(pk=owners_run.pk).visible_to(team.tom).exists()
        Profile.of(boards.eve).join_team(owners_run.team.join_code)
        assert owners_run.scores_visible_to(boards.eve)
        assert Submission.objects.filter(pk=owners_run.pk).scores_visible_to(boards.eve).exists()
