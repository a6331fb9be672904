"""A run belongs to the team it was submitted under (``Submission.team``), wherever it is
shown, exported, pseudonymised, grouped or counted: alice submits in Apple, moves to
Banana and submits again; carol submits alone, then joins Apple. Each run stays under
the team it was submitted for, and carol's under her alone."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pandas as pd
import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser

from leaderboard.models import ApiToken, Profile, Submission
from leaderboard.pipeline import health
from leaderboard.reading.boards import build_leaderboard, leaderboard_rows
from leaderboard.reading.names import shown_names
from leaderboard.reading.summaries import phase_counts
from tests.leaderboard.campaign_data import BEFORE_REVEAL, REVEAL
from tests.leaderboard.pages_data import add_run, make_benchmark, store_comparisons

NEEDS = {f"n{i}": f"need {i}" for i in range(8)}
# The runs in submission order, each with its participant and the team it was submitted
# under ("" for none).
RUNS = [("a-run", "alice", "Apple"), ("b-run", "alice", "Banana"), ("c-solo", "carol", "")]


def frame(level: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    values = np.clip(level + rng.normal(0, 0.05, len(NEEDS)), 0, 1)
    return pd.DataFrame({"map": values, "num_rel": 3.0}, index=list(NEEDS))


class Moves:
    """``benchmark``, and the users: alice (Apple, then Banana), amy (Apple), bart
    (Banana), carol (alone, then Apple), eve (no team)."""

    def __init__(self, slug: str, **benchmark_fields) -> None:
        users = get_user_model().objects
        for name in ("alice", "amy", "bart", "carol", "eve"):
            setattr(self, name, users.create_user(f"{name}", password=f"pw-{name}-123"))
        apple = Profile.of(self.alice).create_team("Apple")
        Profile.of(self.amy).join_team(apple.join_code)
        banana = Profile.of(self.bart).create_team("Banana")
        self.benchmark = make_benchmark(slug, NEEDS, **benchmark_fields)
        self.runs = {}
        self.runs["a-run"] = add_run(self.benchmark, self.alice, "a-run", frame(0.6, 1))
        Profile.of(self.alice).join_team(banana.join_code)
        self.runs["b-run"] = add_run(self.benchmark, self.alice, "b-run", frame(0.5, 2))
        self.runs["c-solo"] = add_run(self.benchmark, self.carol, "c-solo", frame(0.4, 3))
        Profile.of(self.carol).join_team(apple.join_code)
        store_comparisons(self.benchmark)


@pytest.fixture
def moves(db) -> Moves:
    return Moves("moves", title="Moves")


def test_the_runs_record_the_team_they_were_submitted_under(moves):
    recorded = Submission.objects.filter(benchmark=moves.benchmark).select_related("team")
    assert {r.run_name: r.team.name if r.team else "" for r in recorded} == {
        name: team for name, _, team in RUNS
    }


def test_the_board_shows_each_run_under_its_own_team(moves):
    board = build_leaderboard(moves.benchmark, AnonymousUser())
    assert [(r.run_name, r.participant, r.team) for r in board.rows] == RUNS


def test_best_per_team_groups_runs_by_their_own_team(moves):
    """Apple's, Banana's and carol's (alone) best: three teams, not alice's two runs as
    Banana's and carol's as Apple's."""
    best = build_leaderboard(moves.benchmark, AnonymousUser(), best="team")
    assert [(r.run_name, r.team) for r in best.rows] == [(n, t) for n, _, t in RUNS]
    assert best.left_out == 0


def _row(page: str, run_name: str) -> str:
    body = page.split("<tbody>")[1].split("</tbody>")[0]
    return next(tr for tr in body.split("<tr")[1:] if f">{run_name}<" in tr)


def test_the_board_page_and_its_search(client, moves):
    page = client.get("/benchmarks/moves/").content.decode()
    assert '<td class="wide who" title="alice (Apple)">' in _row(page, "a-run")
    assert '<td class="wide who" title="alice (Banana)">' in _row(page, "b-run")
    assert '<td class="wide who" title="carol">carol</td>' in _row(page, "c-solo")
    found = client.get("/benchmarks/moves/?q=apple").content.decode()
    body = found.split("<tbody>")[1].split("</tbody>")[0]
    assert ">a-run<" in body and ">b-run<" not in body and ">c-solo<" not in body


@pytest.mark.parametrize("prefix", ["/benchmarks/moves", "/api/benchmarks/moves"])
def test_the_exports_name_each_runs_own_team(client, moves, prefix):
    data = json.loads(client.get(f"{prefix}/leaderboard.json").content)
    assert [(r["run"], r["participant"], r["team"]) for r in data["runs"]] == RUNS
    grouped = json.loads(client.get(f"{prefix}/leaderboard.json?best=team").content)
    assert [r["run"] for r in grouped["runs"]] == [name for name, _, _ in RUNS]
    text = client.get(f"{prefix}/leaderboard.csv").content.decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["run"], r["participant"], r["team"]) for r in rows] == RUNS


def test_the_run_page_names_the_runs_own_team(client, moves):
    pages = {
        name: client.get(f"/submissions/{run.pk}/").content.decode()
        for name, run in moves.runs.items()
    }
    assert 'by <span class="who">alice</span> <span class="team">(Apple)</span>' in pages["a-run"]
    assert 'by <span class="who">alice</span> <span class="team">(Banana)</span>' in pages["b-run"]
    assert 'by <span class="who">carol</span> ·' in pages["c-solo"]


def test_the_campaign_counts_each_run_for_its_own_team(moves):
    teams = {row["name"]: row["submitted"] for row in phase_counts(moves.benchmark, None)["teams"]}
    assert teams == {"Apple": 1, "Banana": 1, "carol": 1}


def shown(run: Submission, user) -> tuple[str, str]:
    return shown_names(Submission.objects.get(pk=run.pk), user)


@pytest.fixture
def hidden_names(db) -> Moves:
    return Moves("masked", reveal_at=REVEAL, anonymous=True)


def test_pseudonyms_follow_each_runs_own_team(hidden_names):
    runs = hidden_names.runs
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        assert shown(runs["a-run"], hidden_names.eve) == ("Participant 1", "Team 1")
        assert shown(runs["b-run"], hidden_names.eve) == ("Participant 1", "Team 2")
        assert shown(runs["c-solo"], hidden_names.eve) == ("Participant 2", "")
        rows = leaderboard_rows(
            hidden_names.benchmark, hidden_names.eve, hidden_names.benchmark.current_judgments_id
        )
    assert [(r.run_name, r.participant, r.team) for r in rows] == [
        ("a-run", "Participant 1", "Team 1"),
        ("b-run", "Participant 1", "Team 2"),
        ("c-solo", "Participant 2", ""),
    ]


def test_a_runs_own_team_sees_its_real_names(hidden_names):
    """The members of the team a run was submitted under (its owners, who see it) see
    the real names on it; a member of its participant's team now does not."""
    runs, amy, bart = hidden_names.runs, hidden_names.amy, hidden_names.bart
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        assert shown(runs["a-run"], amy) == ("alice", "Apple")
        assert shown(runs["b-run"], amy) == ("Participant 1", "Team 2")
        assert shown(runs["b-run"], bart) == ("alice", "Banana")
        assert shown(runs["a-run"], bart) == ("Participant 1", "Team 1")
        # carol's run was her own, not Apple's: amy, in Apple with her now, sees a pseudonym
        assert shown(runs["c-solo"], amy) == ("Participant 2", "")
        assert shown(runs["c-solo"], hidden_names.carol) == ("carol", "")


def test_the_api_names_follow_each_runs_own_team(client, hidden_names):
    _, raw = ApiToken.issue(hidden_names.amy, "test")
    amy = {"Authorization": f"Bearer {raw}"}
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        one = {
            name: client.get(f"/api/submissions/{run.pk}/", headers=amy).json()["participant"]
            for name, run in hidden_names.runs.items()
        }
        listed = client.get("/api/submissions/?benchmark=masked", headers=amy).json()
        board = client.get("/api/benchmarks/masked/", headers=amy).json()["leaderboard"]
    expected = {"a-run": "alice", "b-run": "Participant 1", "c-solo": "Participant 2"}
    assert one == expected
    assert {r["run_name"]: r["participant"] for r in listed["submissions"]} == expected
    assert {r["run_name"]: r["participant"] for r in board["runs"]} == expected


def test_a_team_change_moves_no_pseudonym(db):
    """dave's run (alone) came first, then Yew's: Yew is "Team 1", and stays so when
    dave makes a team of his own after."""
    users = get_user_model().objects
    dave, yan, eve = (users.create_user(n, password=None) for n in ("dave", "yan", "eve"))
    Profile.of(yan).create_team("Yew")
    benchmark = make_benchmark("steady", NEEDS, reveal_at=REVEAL, anonymous=True)
    add_run(benchmark, dave, "d-run", frame(0.5, 4))
    yew_run = add_run(benchmark, yan, "y-run", frame(0.4, 5))
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        before = shown(yew_run, eve)
        Profile.of(dave).create_team("Zest")
        after = shown(yew_run, eve)
    assert before == after == ("Participant 2", "Team 1")


def test_pool_bias_leaves_out_each_runs_own_team(demo):
    """The demo user's system-A was submitted in Apple and system-B in Banana: two teams
    to leave out, not one (the user's team now)."""
    user = demo.submissions.get(run_name="system-A").participant
    users = get_user_model().objects
    apple = Profile.of(user).create_team("Apple")
    Profile.of(users.create_user("amy")).join_team(apple.join_code)  # Apple outlives the move
    banana = Profile.of(users.create_user("bart")).create_team("Banana")
    Submission.objects.filter(benchmark=demo, run_name="system-A").update(team=apple)
    Profile.of(user).join_team(banana.join_code)
    Submission.objects.filter(benchmark=demo, run_name="system-B").update(team=banana)
    row = health.compute(demo.pk, demo.current_judgments_id)
    assert row.data["pool_bias"]["participants"] == 2


def test_the_api_gives_each_runs_own_team(client, moves):
    board = client.get("/api/benchmarks/moves/").json()["leaderboard"]
    assert [(r["run_name"], r["participant"], r["team"]) for r in board["runs"]] == RUNS
    one = {
        name: client.get(f"/api/submissions/{run.pk}/").json()["team"]
        for name, run in moves.runs.items()
    }
    assert one == {name: team for name, _, team in RUNS}
    listed = client.get("/api/submissions/?benchmark=moves").json()["submissions"]
    assert {r["run_name"]: r["team"] for r in listed} == one


def test_the_api_gives_each_runs_own_team_as_its_reader_sees_it(client, hidden_names):
    _, raw = ApiToken.issue(hidden_names.amy, "test")
    amy = {"Authorization": f"Bearer {raw}"}
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        masked = client.get("/api/submissions/?benchmark=masked", headers=amy).json()
        board = client.get("/api/benchmarks/masked/", headers=amy).json()["leaderboard"]
    shown = {"a-run": "Apple", "b-run": "Team 2", "c-solo": ""}
    assert {r["run_name"]: r["team"] for r in masked["submissions"]} == shown
    assert {r["run_name"]: r["team"] for r in board["runs"]} == shown


def test_the_runs_admin_lists_each_runs_own_team(client, moves, organizer):
    moves.benchmark.organizers.add(organizer)
    client.force_login(organizer)
    listing = client.get("/admin/leaderboard/submission/").content.decode()
    cells = {name: listing.split(f">{name}</a>")[1].split("</tr>")[0] for name, _, _ in RUNS}
    assert '<td class="field-team nowrap">Apple</td>' in cells["a-run"]
    assert '<td class="field-team nowrap">Banana</td>' in cells["b-run"]
    assert '<td class="field-team nowrap">-</td>' in cells["c-solo"]
    found = client.get("/admin/leaderboard/submission/", {"q": "apple"}).content.decode()
    assert ">a-run</a>" in found and ">b-run</a>" not in found and ">c-solo</a>" not in found
    page = client.get(f"/admin/leaderboard/submission/{moves.runs['a-run'].pk}/change/")
    field = page.content.decode().split('class="form-row field-team"')[1].split("</fieldset>")[0]
    assert ">Apple</a></div>" in field.split("form-row")[0]
