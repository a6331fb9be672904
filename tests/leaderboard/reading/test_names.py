"""Pseudonyms until the reveal (``reading/names.py``): numbered by first run on the
benchmark, stable as runs arrive, per benchmark, real for organizers, for a person's own
runs and after the reveal; and the field of a run's results is the runs the reader may
see the scores of."""

from __future__ import annotations

import pytest
import time_machine
from django.contrib.auth.models import AnonymousUser

from leaderboard.models import Phase, Profile, Submission
from leaderboard.reading.boards import leaderboard_rows
from leaderboard.reading.names import names_for, shown_names
from leaderboard.reading.results import run_results
from tests.leaderboard.campaign_data import (
    AFTER_REVEAL,
    BEFORE_REVEAL,
    OWNERS_MAP,
    REVEAL,
    flat_frame,
    seed_boards,
)
from tests.leaderboard.pages_data import add_run, make_benchmark


@pytest.fixture
def boards(db):
    return seed_boards(anonymous=True)


def shown(run, user) -> tuple[str, str]:
    return shown_names(Submission.objects.get(pk=run.pk), user)


def test_numbered_by_first_run_and_stable_as_runs_arrive(boards, django_user_model):
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        assert shown(boards.bob_public, boards.eve) == ("Participant 1", "Team 1")
        assert shown(boards.ada_public, boards.eve) == ("Participant 2", "")
        late = django_user_model.objects.create_user("zed-username", password=None)
        add_run(boards.benchmark, late, "zed-run", flat_frame(0.1))
        assert shown(boards.bob_public, boards.eve) == ("Participant 1", "Team 1")
        assert shown(boards.ada_public, AnonymousUser()) == ("Participant 2", "")
        rows = {
            r.run_name: (r.participant, r.team)
            for r in leaderboard_rows(
                boards.benchmark, boards.eve, boards.benchmark.current_judgments_id
            )
        }
        assert rows["zed-run"] == ("Participant 3", "")
        assert rows["zeta-public"] == ("Participant 1", "Team 1")


def test_each_benchmark_numbers_its_own(boards):
    other = make_benchmark("other", {"n1": "one"}, reveal_at=REVEAL, anonymous=True)
    run = add_run(other, boards.ada, "ada-first", flat_frame(0.2))
    add_run(other, boards.bob, "bob-second", flat_frame(0.3))
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        assert shown(run, boards.eve) == ("Participant 1", "")
        assert shown(boards.ada_public, boards.eve) == ("Participant 2", "")


def test_real_names_for_organizers_the_person_and_after_the_reveal(boards):
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        assert shown(boards.bob_public, boards.olga) == ("bob-username", "Zebra Crew")
        assert shown(boards.bob_public, boards.bob) == ("bob-username", "Zebra Crew")
        assert shown(boards.ada_public, boards.ada) == ("Ada Realname", "")
        assert shown(boards.ada_public, boards.bob) == ("Participant 2", "")
        assert names_for(boards.benchmark, boards.eve).pseudonymous
    with time_machine.travel(AFTER_REVEAL, tick=False):
        assert shown(boards.bob_public, boards.eve) == ("bob-username", "Zebra Crew")
        assert not names_for(boards.benchmark, AnonymousUser()).pseudonymous


def test_a_teammate_sees_the_team_real_names(boards, django_user_model):
    """Tom, in Bob's team now, sees Bob's and the team's names; Eve, in none, does not."""
    tom = django_user_model.objects.create_user("tom-username", password=None)
    Profile.of(tom).join_team(Profile.of(boards.bob).team.join_code)
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        assert shown(boards.bob_public, tom) == ("bob-username", "Zebra Crew")
        assert shown(boards.ada_public, tom) == ("Participant 2", "")
        assert shown(boards.bob_public, boards.eve) == ("Participant 1", "Team 1")
        rows = leaderboard_rows(boards.benchmark, tom, boards.benchmark.current_judgments_id)
        assert {r.run_name: (r.participant, r.team) for r in rows}["zeta-public"] == (
            "bob-username",
            "Zebra Crew",
        )


def test_a_benchmark_without_pseudonyms_shows_real_names(db):
    boards = seed_boards(anonymous=False)
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        assert shown(boards.ada_public, AnonymousUser()) == ("Ada Realname", "")


def test_a_pseudonym_says_nothing_of_the_username(boards):
    Profile.objects.filter(user=boards.bob).update(display_name="")
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        name, team = shown(boards.bob_public, boards.eve)
    assert "bob" not in name.lower() and "zebra" not in team.lower()


def test_the_field_of_a_runs_results_is_what_the_reader_sees(db):
    boards = seed_boards()
    validation = Phase.objects.get(benchmark=boards.benchmark, name="Validation")
    add_run(boards.benchmark, boards.bob, "zeta-owners", flat_frame(0.1), phase=validation)
    own = Submission.objects.get(pk=boards.own_run.pk)
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        mine = run_results(own, own.current_result(), "map", viewer=boards.ada)
        everyone = run_results(own, own.current_result(), "map", viewer=boards.olga)
    assert [r.run_name for r in mine.field] == ["alpha-owners"]
    assert mine.table["worst"].min() == pytest.approx(OWNERS_MAP)
    assert {r.run_name for r in everyone.field} == {"alpha-owners", "zeta-owners"}
    assert everyone.table["worst"].min() == pytest.approx(0.1)
    with time_machine.travel(AFTER_REVEAL, tick=False):
        revealed = run_results(own, own.current_result(), "map", viewer=boards.ada)
    assert len(revealed.field) == 2
