"""Display names and teams on the reader's pages, and the best-run-per-team board."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pandas as pd
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser

from leaderboard.models import Profile
from leaderboard.reading.boards import build_leaderboard
from tests.leaderboard.pages_data import add_run, make_benchmark, store_comparisons

NEEDS = {f"n{i}": f"need {i}" for i in range(8)}
rng = np.random.default_rng(7)


def frame(level: float) -> pd.DataFrame:
    """Per-need AP around ``level`` (noisy, so the t-tests have variance)."""
    values = np.clip(level + rng.normal(0, 0.05, len(NEEDS)), 0, 1)
    return pd.DataFrame({"map": values, "num_rel": 3.0}, index=list(NEEDS))


@pytest.fixture
def teams(db):
    """Red (alice, bob) with three runs, carol (no team, a display name) with two."""
    users = {
        name: get_user_model().objects.create_user(name, password=f"pw-{name}-123")
        for name in ("alice", "bob", "carol")
    }
    alice = Profile.of(users["alice"])
    red = alice.create_team("Red <b>Team</b>")
    Profile.of(users["bob"]).join_team(red.join_code)
    Profile.objects.create(user=users["carol"], display_name="Carol C.")
    Profile.objects.filter(user=users["alice"]).update(display_name="Alice A.")
    benchmark = make_benchmark("teams", NEEDS, title="Teams")
    for user, name, level in [
        ("alice", "a1", 0.60),
        ("bob", "b1", 0.55),
        ("carol", "c1", 0.50),
        ("carol", "c2", 0.45),
        ("alice", "a2", 0.30),
    ]:
        add_run(benchmark, users[user], name, frame(level))
    store_comparisons(benchmark)
    return benchmark


def test_rows_carry_display_names_and_teams(teams):
    board = build_leaderboard(teams, AnonymousUser(), None)
    assert [(r.run_name, r.participant, r.team) for r in board.rows] == [
        ("a1", "Alice A.", "Red <b>Team</b>"),
        ("b1", "bob", "Red <b>Team</b>"),
        ("c1", "Carol C.", ""),
        ("c2", "Carol C.", ""),
        ("a2", "Alice A.", "Red <b>Team</b>"),
    ]
    assert not board.best_per_team and board.left_out == 0


def test_best_per_team_keeps_each_teams_best_and_ranks_and_tests_over_those(teams):
    anyone = AnonymousUser()
    full = build_leaderboard(teams, anyone)
    best = build_leaderboard(teams, anyone, best="team")
    assert [(r.run_name, r.rank) for r in best.rows] == [("a1", 1), ("c1", 2)]
    assert best.best_per_team and best.left_out == 3
    # The family is "#1 vs. each other team's best": one test, so Holm leaves p as it is.
    assert best.family_size == 1
    c1 = best.rows[1]
    assert c1.p_adjusted == pytest.approx(c1.p_raw)
    full_c1 = next(r for r in full.rows if r.run_name == "c1")
    assert full.family_size == 4 and full_c1.rank == 3
    assert full_c1.p_raw == pytest.approx(c1.p_raw)  # the same stored test
    assert full_c1.p_adjusted >= c1.p_adjusted
    # Any other value of best= is the full board.
    assert len(build_leaderboard(teams, anyone, best="everything").rows) == 5


def test_best_per_team_follows_the_ranking_measure(teams):
    # Only a2 has a P_10: it is Red's best by P_10; carol's runs have no value, so her
    # team of one keeps its earliest run, unranked.
    for result in teams.submissions.get(run_name="a2").results.all():
        result.summary = {**result.summary, "P_10": 0.9}
        result.save()
    best = build_leaderboard(teams, AnonymousUser(), "P_10", best="team")
    assert [(r.run_name, r.rank) for r in best.rows] == [("a2", 1), ("c1", None)]


def test_the_leaderboard_page_shows_names_teams_and_the_toggle(client, teams):
    page = client.get("/benchmarks/teams/").content.decode()
    assert (
        '<td class="wide who" title="Alice A. (Red &lt;b&gt;Team&lt;/b&gt;)">Alice A. '
        '<span class="team">Red &lt;b&gt;Team&lt;/b&gt;</span></td>' in page
    )
    assert '<td class="wide who" title="Carol C.">Carol C.</td>' in page
    assert ">alice<" not in page and ">carol<" not in page
    assert '<input type="checkbox" id="best" name="best" value="team" data-autosubmit>' in page
    assert "best-note" not in page

    best = client.get("/benchmarks/teams/?best=team").content.decode()
    assert (
        '<input type="checkbox" id="best" name="best" value="team" data-autosubmit checked>' in best
    )
    assert "Each team's best run by AP only" in best and "3 other runs not listed" in best
    assert "“#1 vs. each other team's best run”" in best
    assert '<a href="/benchmarks/teams/?measure=map">Show every run</a>' in best
    assert 'href="/benchmarks/teams/?measure=map&amp;best=team"' in best  # columns keep it
    assert "leaderboard.csv?measure=map&amp;best=team" in best
    body = best.split("<tbody>")[1].split("</tbody>")[0]
    assert body.count("<tr") == 2 and "b1" not in body and "c2" not in body


def test_exports_name_the_participant_and_team_and_honour_best(client, teams):
    data = json.loads(client.get("/benchmarks/teams/leaderboard.json?best=team").content)
    assert data["best_run_per_team"] is True
    assert [(r["run"], r["rank"], r["participant"], r["team"]) for r in data["runs"]] == [
        ("a1", 1, "Alice A.", "Red <b>Team</b>"),
        ("c1", 2, "Carol C.", ""),
    ]
    rows = list(
        csv.DictReader(
            io.StringIO(client.get("/benchmarks/teams/leaderboard.csv").content.decode())
        )
    )
    assert (
        len(rows) == 5 and rows[1]["participant"] == "bob" and rows[1]["team"] == "Red <b>Team</b>"
    )


def test_the_run_page_names_the_participant_and_team(client, teams):
    run = teams.submissions.get(run_name="a1")
    page = client.get(f"/submissions/{run.pk}/").content.decode()
    assert (
        'by <span class="who">Alice A.</span> <span class="team">(Red &lt;b&gt;Team&lt;/b&gt;)</span>'
        in page
    )
    plain = client.get(f"/submissions/{teams.submissions.get(run_name='c1').pk}/").content.decode()
    assert 'by <span class="who">Carol C.</span> ·' in plain


def test_the_api_names_the_participant_by_display_name(client, teams):
    run = teams.submissions.get(run_name="c1")
    data = json.loads(client.get(f"/api/submissions/{run.pk}/").content)
    assert data["participant"] == "Carol C."
