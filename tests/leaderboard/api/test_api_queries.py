"""The API's reading endpoints cost the same queries, and build the same serializers, for
a campaign of a few runs as for one of many: nothing is read once per run or per cell."""

from __future__ import annotations

import pandas as pd
import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard.models import Profile, Team
from tests.leaderboard.pages_data import add_run, make_benchmark

NEEDS = {f"n{i}": f"need {i}" for i in range(6)}


def add_runs(benchmark, start: int, count: int) -> None:
    """``count`` scored runs, each by a participant of its own with a display name, in
    teams of two (a run's name and team are what a list shows of them)."""
    users = get_user_model().objects
    for i in range(start, start + count):
        user = users.create_user(f"person-{i}")
        team = Team.objects.get_or_create(name=f"Team {i // 2}")[0]
        Profile.objects.create(user=user, display_name=f"Person {i}", team=team)
        values = [(i * 7 + k * 3) % 10 / 10 for k in range(len(NEEDS))]
        frame = pd.DataFrame({"map": values, "num_rel": 1.0}, index=list(NEEDS))
        add_run(benchmark, user, f"run-{i:02d}", frame)


@pytest.fixture
def benchmark(db):
    return make_benchmark("queries", NEEDS)


def queries_of(client, url: str) -> tuple[int, dict]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, response.content[:300]
    return len(queries), response.json()


def test_the_run_list_costs_the_same_queries_for_twelve_runs_as_for_three(client, benchmark):
    """Each listed run's participant name used to be read with a query of its own."""
    url = "/api/submissions/?benchmark=queries"
    add_runs(benchmark, 0, 3)
    few, body = queries_of(client, url)
    assert len(body["submissions"]) == 3
    add_runs(benchmark, 3, 9)
    many, body = queries_of(client, url)
    assert len(body["submissions"]) == 12
    assert many == few
    shown = {(r["run_name"], r["participant"], r["team"]) for r in body["submissions"]}
    assert ("run-07", "Person 7", "Team 3") in shown
    assert ("run-00", "Person 0", "Team 0") in shown

