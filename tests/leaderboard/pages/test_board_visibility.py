"""Phase boards on the reader's pages, before and after the reveal: for each reader
(anonymous, another participant, the owner, an organizer), which runs the board, its
export, the significance matrix, the run pages and the comparisons show; a hidden phase's
owner sees the run but no score of it; pseudonyms on an anonymous benchmark."""

from __future__ import annotations

import pytest
import time_machine
from django.test import Client

from tests.leaderboard.campaign_data import (
    AFTER_REVEAL,
    BEFORE_REVEAL,
    HIDDEN_MAP,
    OWNERS_MAP,
    TEAM_HIDDEN_MAP,
    TEAM_OWNERS_MAP,
    seed_boards,
    seed_team_runs,
)

RUNS = ("bob_public", "ada_public", "own_run", "hidden_run")
ON_BOARD_BEFORE = {
    "anonymous": {"bob_public", "ada_public"},
    "eve": {"bob_public", "ada_public"},
    "bob": {"bob_public", "ada_public"},
    "ada": {"bob_public", "ada_public", "own_run"},  # her hidden run: no score, no row
    "olga": set(RUNS),
}
PAGE_BEFORE = {**ON_BOARD_BEFORE, "ada": set(RUNS)}  # her hidden run's page, without scores


@pytest.fixture
def boards(db):
    return seed_boards()


def client_for(boards, who) -> Client:
    client = Client()
    if who != "anonymous":
        client.force_login(getattr(boards, who))
    return client


def names_in(boards, text: str) -> set[str]:
    return {run for run in RUNS if getattr(boards, run).run_name in text}


@pytest.mark.parametrize("who", list(ON_BOARD_BEFORE))
@pytest.mark.parametrize("moment", ["before", "after"])
def test_board_export_matrix_run_pages_and_comparisons(boards, who, moment):
    client = client_for(boards, who)
    before = moment == "before"
    on_board = ON_BOARD_BEFORE[who] if before else set(RUNS)
    pages = PAGE_BEFORE[who] if before else set(RUNS)
    with time_machine.travel(BEFORE_REVEAL if before else AFTER_REVEAL, tick=False):
        board = client.get("/benchmarks/boards/")
        assert board.status_code == 200
        assert names_in(boards, board.content.decode()) == on_board
        export = client.get("/benchmarks/boards/leaderboard.json").json()
        assert {r["run"] for r in export["runs"]} == {
            getattr(boards, run).run_name for run in on_board
        }
        csv = client.get("/benchmarks/boards/leaderboard.csv").content.decode()
        assert names_in(boards, csv) == on_board
        matrix = client.get("/benchmarks/boards/significance/").content.decode()
        assert names_in(boards, matrix) == on_board
        for run in RUNS:
            page = client.get(f"/submissions/{getattr(boards, run).pk}/")
            assert page.status_code == (200 if run in pages else 404), run
            pk = boards.bob_public.pk
            compared = client.get(f"/benchmarks/boards/compare/{pk}/{getattr(boards, run).pk}/")
            if run != "bob_public":
                assert compared.status_code == (200 if run in on_board else 404), run


def test_the_owner_of_a_hidden_run_sees_it_but_no_score(boards):
    client = client_for(boards, "ada")
    hidden = boards.hidden_run.pk
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        page = client.get(f"/submissions/{hidden}/").content.decode()
        assert "alpha-hidden" in page and "Scored" in page
        assert f"{HIDDEN_MAP:.4f}" not in page
        assert "Scores of the Test phase are shown from the reveal at 2026-05-10 12:00 UTC" in page
        # her scores' own pages: refused with the reason, not a run that does not exist
        refused = client.get(f"/submissions/{hidden}/per-need.csv")
        assert refused.status_code == 403
        assert "Scores of the Test phase are shown from the reveal" in refused.content.decode()
        assert client.get(f"/submissions/{hidden}/results/").status_code == 403
        assert client.get(f"/submissions/{hidden}/status/").json()["status"] == "scored"
        mine = client.get("/accounts/runs/").content.decode()
        assert "alpha-hidden" in mine and f"{HIDDEN_MAP:.4f}" not in mine
        assert f"{OWNERS_MAP:.4f}" in mine  # her "owners" run keeps its score
        organizer = client_for(boards, "olga").get(f"/submissions/{hidden}/").content.decode()
        assert f"{HIDDEN_MAP:.4f}" in organizer
    with time_machine.travel(AFTER_REVEAL, tick=False):
        page = client.get(f"/submissions/{hidden}/").content.decode()
        assert f"{HIDDEN_MAP:.4f}" in page and "shown from the reveal" not in page


def test_the_benchmark_page_states_each_phase_board(boards):
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        page = Client().get("/benchmarks/boards/").content.decode()
    assert "Test phase: scores hidden until the reveal at 2026-05-10 12:00 UTC." in page
    owners = "Validation phase: each participant sees only their own and their team&#x27;s runs"
    assert owners in page
    with time_machine.travel(AFTER_REVEAL, tick=False):
        assert "scores hidden until" not in Client().get("/benchmarks/boards/").content.decode()


def test_a_teammate_sees_the_team_runs_but_does_not_change_them(boards):
    """Tom joined Bob's team: Bob's "owners" run is on his board with its score, its page
    shows it; Bob's hidden-phase run is his to see without a score; neither is his to
    edit. Eve, in no team, sees neither."""
    team = seed_team_runs(boards)
    tom, eve = Client(), client_for(boards, "eve")
    tom.force_login(team.tom)
    owners, hidden = team.owners_run.pk, team.hidden_run.pk
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        board = tom.get("/benchmarks/boards/").content.decode()
        assert "zeta-owners" in board and f"{TEAM_OWNERS_MAP:.4f}" in board
        assert "zeta-hidden" not in board and "zeta-solo" not in board
        page = tom.get(f"/submissions/{owners}/").content.decode()
        assert f"{TEAM_OWNERS_MAP:.4f}" in page and "Edit description" not in page
        page = tom.get(f"/submissions/{hidden}/").content.decode()
        assert "zeta-hidden" in page and f"{TEAM_HIDDEN_MAP:.4f}" not in page
        assert tom.get(f"/submissions/{hidden}/per-need.csv").status_code == 403
        assert tom.get(f"/submissions/{team.solo_run.pk}/").status_code == 404
        assert tom.get(f"/submissions/{owners}/edit/").status_code == 403
        assert tom.get(f"/submissions/{owners}/withdraw/").status_code == 403
        assert tom.get(f"/submissions/{owners}/hide/").status_code == 403
        assert "zeta-owners" not in eve.get("/benchmarks/boards/").content.decode()
        assert eve.get(f"/submissions/{owners}/").status_code == 404
        assert eve.get(f"/submissions/{hidden}/").status_code == 404


# --- Pseudonyms ---------------------------------------------------------------------

REAL = ("Ada Realname", "ada-username", "bob-username", "Zebra Crew")


@pytest.fixture
def anonymous_boards(db):
    return seed_boards(anonymous=True)


@pytest.mark.parametrize("who", ["anonymous", "eve"])
def test_pseudonyms_until_the_reveal(anonymous_boards, who):
    client = client_for(anonymous_boards, who)
    surfaces = [
        "/benchmarks/boards/",
        "/benchmarks/boards/leaderboard.csv",
        "/benchmarks/boards/leaderboard.json",
        f"/submissions/{anonymous_boards.ada_public.pk}/",
        f"/submissions/{anonymous_boards.bob_public.pk}/",
    ]
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        for url in surfaces:
            text = client.get(url).content.decode()
            assert not [name for name in REAL if name in text], url
            assert "Participant 1" in text or "Participant 2" in text, url
    with time_machine.travel(AFTER_REVEAL, tick=False):
        board = client.get("/benchmarks/boards/").content.decode()
        assert all(name in board for name in ("Ada Realname", "bob-username", "Zebra Crew"))
        assert "Participant 1" not in board


def test_a_pseudonym_is_the_same_on_every_page(anonymous_boards):
    client = Client()
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        board = client.get("/benchmarks/boards/").content.decode()
        ada = client.get(f"/submissions/{anonymous_boards.ada_public.pk}/").content.decode()
        bob = client.get(f"/submissions/{anonymous_boards.bob_public.pk}/").content.decode()
        export = client.get("/benchmarks/boards/leaderboard.json").json()
        again = client.get("/benchmarks/boards/leaderboard.json").json()
    # numbered by first run on the benchmark: Bob submitted first
    assert ">Participant 2<" in ada and ">Participant 1<" in bob and "(Team 1)" in bob
    assert "Participant 1" in board and "Participant 2" in board and "Team 1" in board
    by_run = {r["run"]: (r["participant"], r["team"]) for r in export["runs"]}
    assert by_run == {
        "alpha-public": ("Participant 2", ""),
        "zeta-public": ("Participant 1", "Team 1"),
    }
    assert again["runs"] == export["runs"]


def test_organizers_and_the_person_see_real_names(anonymous_boards):
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        organizer = client_for(anonymous_boards, "olga").get("/benchmarks/boards/")
        assert "Ada Realname" in organizer.content.decode()
        assert "Zebra Crew" in organizer.content.decode()
        ada = client_for(anonymous_boards, "ada").get("/benchmarks/boards/").content.decode()
        assert "Ada Realname" in ada  # her own runs
        assert "bob-username" not in ada and "Zebra Crew" not in ada
