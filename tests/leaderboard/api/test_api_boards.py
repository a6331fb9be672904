"""Phase boards through the API, before and after the reveal: the runs list, the board,
a run's detail (no score of a hidden phase's run for its owner) and per-need values, and
pseudonyms in every JSON answer of an anonymous benchmark."""

from __future__ import annotations

import json

import pytest
import time_machine
from django.test import Client

from leaderboard.models import ApiToken
from tests.leaderboard.campaign_data import (
    AFTER_REVEAL,
    BEFORE_REVEAL,
    HIDDEN_MAP,
    TEAM_HIDDEN_MAP,
    TEAM_OWNERS_MAP,
    seed_boards,
    seed_team_runs,
)

RUNS = ("bob_public", "ada_public", "own_run", "hidden_run")
LISTED_BEFORE = {
    "anonymous": {"bob_public", "ada_public"},
    "eve": {"bob_public", "ada_public"},
    "bob": {"bob_public", "ada_public"},
    "ada": set(RUNS),  # her hidden run listed (status), without its scores
    "olga": set(RUNS),
}
SCORED_BEFORE = {**LISTED_BEFORE, "ada": {"bob_public", "ada_public", "own_run"}}


@pytest.fixture
def boards(db):
    return seed_boards()


def headers(boards, who) -> dict:
    if who == "anonymous":
        return {}
    _, raw = ApiToken.issue(getattr(boards, who), "test")
    return {"Authorization": f"Bearer {raw}"}


def names(boards, runs) -> set[str]:
    return {getattr(boards, run).run_name for run in runs}


@pytest.mark.parametrize("who", list(LISTED_BEFORE))
@pytest.mark.parametrize("moment", ["before", "after"])
def test_runs_list_board_and_details(boards, who, moment):
    client, auth = Client(), headers(boards, who)
    before = moment == "before"
    listed = LISTED_BEFORE[who] if before else set(RUNS)
    scored = SCORED_BEFORE[who] if before else set(RUNS)
    with time_machine.travel(BEFORE_REVEAL if before else AFTER_REVEAL, tick=False):
        runs = client.get("/api/submissions/?benchmark=boards", headers=auth).json()
        assert {r["run_name"] for r in runs["submissions"]} == names(boards, listed)
        with_scores = {r["run_name"] for r in runs["submissions"] if r["summary"]}
        assert with_scores == names(boards, scored)
        board = client.get("/api/benchmarks/boards/", headers=auth).json()["leaderboard"]
        assert {r["run_name"] for r in board["runs"]} == names(boards, scored)
        for run in RUNS:
            pk = getattr(boards, run).pk
            detail = client.get(f"/api/submissions/{pk}/", headers=auth)
            assert detail.status_code == (200 if run in listed else 404), run
            per_need = client.get(f"/api/submissions/{pk}/per-need/", headers=auth)
            # a run the reader sees without its scores: 403 saying until when
            expected = 200 if run in scored else 403 if run in listed else 404
            assert per_need.status_code == expected, run
            if expected == 403:
                assert per_need.json()["error"].startswith("Scores of the Test phase are shown")


def test_a_teammate_lists_the_team_runs(boards):
    """Tom joined Bob's team: the list gives him Bob's "owners" run with its score and the
    hidden-phase run without one, the board the first; Eve, in no team, gets neither.
    Seeing is not changing: Tom's PATCH is a 403."""
    team = seed_team_runs(boards)
    client = Client()
    _, raw = ApiToken.issue(team.tom, "test")
    tom = {"Authorization": f"Bearer {raw}"}
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        runs = client.get("/api/submissions/?benchmark=boards", headers=tom).json()
        summaries = {r["run_name"]: r["summary"] for r in runs["submissions"]}
        assert summaries["zeta-owners"]["map"] == TEAM_OWNERS_MAP
        assert summaries["zeta-hidden"] is None and "zeta-solo" not in summaries
        assert str(TEAM_HIDDEN_MAP) not in json.dumps(runs)
        board = client.get("/api/benchmarks/boards/", headers=tom).json()["leaderboard"]
        assert "zeta-owners" in {r["run_name"] for r in board["runs"]}
        pk = team.owners_run.pk
        assert client.get(f"/api/submissions/{pk}/per-need/", headers=tom).status_code == 200
        edit = client.patch(
            f"/api/submissions/{pk}/",
            data=json.dumps({"description": "mine now"}),
            content_type="application/json",
            headers=tom,
        )
        assert edit.status_code == 403 and "Only the participant" in edit.content.decode()
        others = client.get("/api/submissions/?benchmark=boards", headers=headers(boards, "eve"))
        assert not {"zeta-owners", "zeta-hidden"} & {
            r["run_name"] for r in others.json()["submissions"]
        }
        eve = headers(boards, "eve")
        assert client.get(f"/api/submissions/{pk}/", headers=eve).status_code == 404


def test_the_owner_gets_no_score_of_a_hidden_run(boards):
    client, auth = Client(), headers(boards, "ada")
    pk = boards.hidden_run.pk
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        detail = client.get(f"/api/submissions/{pk}/", headers=auth)
        assert detail.json()["status"] == "scored" and detail.json()["summary"] is None
        assert str(HIDDEN_MAP) not in detail.content.decode()
        mine = client.get("/api/submissions/?mine=true", headers=auth).content.decode()
        assert "alpha-hidden" in mine and str(HIDDEN_MAP) not in mine
        organizer = client.get(f"/api/submissions/{pk}/", headers=headers(boards, "olga"))
        assert organizer.json()["summary"]["map"] == HIDDEN_MAP
    with time_machine.travel(AFTER_REVEAL, tick=False):
        assert client.get(f"/api/submissions/{pk}/", headers=auth).json()["summary"]["map"] == (
            HIDDEN_MAP
        )


REAL = ("Ada Realname", "ada-username", "bob-username", "Zebra Crew")


def test_pseudonyms_in_the_api_until_the_reveal(db):
    boards = seed_boards(anonymous=True)
    client, auth = Client(), headers(boards, "eve")
    urls = [
        "/api/benchmarks/boards/",
        "/api/submissions/?benchmark=boards",
        f"/api/submissions/{boards.ada_public.pk}/",
        "/api/benchmarks/boards/leaderboard.json",
    ]
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        answers = [client.get(url, headers=auth) for url in urls]
        for url, answer in zip(urls, answers, strict=True):
            assert answer.status_code == 200, url
            text = answer.content.decode()
            assert not [name for name in REAL if name in text], url
        board = {r["run_name"]: r["participant"] for r in answers[0].json()["leaderboard"]["runs"]}
        listed = {r["run_name"]: r["participant"] for r in answers[1].json()["submissions"]}
        assert board == listed == {"zeta-public": "Participant 1", "alpha-public": "Participant 2"}
        own = client.get("/api/submissions/?mine=true", headers=headers(boards, "ada")).json()
        assert {r["participant"] for r in own["submissions"]} == {"Ada Realname"}
    with time_machine.travel(AFTER_REVEAL, tick=False):
        text = json.dumps(client.get(urls[0], headers=auth).json())
        assert "Ada Realname" in text and "bob-username" in text
