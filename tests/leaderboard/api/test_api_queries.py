"""The API's reading endpoints cost the same queries, and build the same serializers, for
a campaign of a few runs as for one of many: nothing is read once per run or per cell."""

from __future__ import annotations

import pandas as pd
import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard.api import comparisons
from leaderboard.models import Benchmark, Judgments, Profile, Result, Team
from tests.leaderboard import split_data as split
from tests.leaderboard.api.test_api import bearer
from tests.leaderboard.pages_data import add_run, make_benchmark, store_comparisons

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


def queries_of(client, url: str, headers: dict | None = None) -> tuple[int, dict]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, headers=headers)
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


def test_the_significance_matrix_makes_one_cell_serializer_for_all_its_cells(
    client, benchmark, monkeypatch
):
    """DRF copies a serializer's fields each time one is made: one per cell of a 50 x 50
    matrix took longer than the rest of the request."""
    add_runs(benchmark, 0, 5)
    store_comparisons(benchmark)
    made = []
    original = comparisons.MatrixCellSerializer.get_fields

    def counted(self):
        made.append(self)
        return original(self)

    monkeypatch.setattr(comparisons.MatrixCellSerializer, "get_fields", counted)
    body = client.get("/api/benchmarks/queries/significance/").json()
    assert len(body["cells"]) == 5 and sum(c is not None for c in body["cells"][0]) == 4
    assert len(made) == 1
    cell = body["cells"][0][1]
    assert set(cell) == {"a", "b", "p", "significant", "better"}
    assert cell["a"] == body["runs"][0]["submission_id"]
    assert cell["b"] == body["runs"][1]["submission_id"]


def test_a_run_costs_the_same_queries_with_three_judgments_versions_as_with_one(client, benchmark):
    """The run's answer read each of its results' judgments with a query of its own: one
    more per version it was scored on (and three per version on a split benchmark)."""
    add_runs(benchmark, 0, 1)
    run = benchmark.submissions.get()
    url = f"/api/submissions/{run.pk}/"
    few, body = queries_of(client, url)
    assert body["judgments_version"] == 1
    first = run.results.get()
    for version in (2, 3):
        judgments = Judgments.objects.create(
            benchmark=benchmark,
            version=version,
            file=f"judgments/queries/v{version}.txt",
            sha256=f"{version}" * 64,
            num_needs=len(NEEDS),
            need_ids=list(NEEDS),
        )
        Result.objects.create(
            submission=run,
            judgments=judgments,
            summary={"map": version / 10},
            num_needs=len(NEEDS),
            per_need=first.per_need,
            ranks=first.ranks,
        )
    Benchmark.objects.filter(pk=benchmark.pk).update(current_judgments=judgments)
    many, body = queries_of(client, url)
    assert (body["judgments_version"], body["summary"]["map"]) == (3, 0.3)
    assert many == few


def split_run(person, slug: str, shift: float) -> None:
    """``person``'s run on a new benchmark whose split is not revealed yet, scored on
    the whole version and on each part (``shift`` moves its values)."""
    benchmark = make_benchmark(slug, split.NEEDS, private_needs=split.PRIVATE)
    whole = benchmark.current_judgments
    run = benchmark.submissions.create(
        participant=person, run_name=f"run-{slug}", file=f"runs/{slug}.txt", status="scored"
    )
    split.score(run, whole, "alpha", shift)
    for part, needs in (("public", split.PUBLIC), ("private", split.PRIVATE)):
        split.score(run, split.part_of(whole, part, needs), "alpha", shift)


def test_one_s_own_runs_cost_the_same_queries_on_three_benchmarks_as_on_one(client, db):
    """The list resolved a lens per benchmark on the page: a split benchmark's public
    part and whether the caller organises it, two queries more for each."""
    person = get_user_model().objects.create_user("person")
    url = "/api/submissions/?mine=true"
    split_run(person, "first", 0.0)
    few, body = queries_of(client, url, bearer(person))  # a new token each: its first use
    assert [r["needs"] for r in body["submissions"]] == ["public"]
    split_run(person, "second", 0.01)
    split_run(person, "third", 0.02)
    many, body = queries_of(client, url, bearer(person))
    assert many == few
    shown = {(r["run_name"], r["needs"], r["judgments_version"]) for r in body["submissions"]}
    assert shown == {(f"run-{s}", "public", 1) for s in ("first", "second", "third")}
    means = sorted(round(r["summary"]["map"], 4) for r in body["submissions"])
    public = float(split.mean_text("alpha", split.PUBLIC))
    assert means == [round(public + shift, 4) for shift in (0.0, 0.01, 0.02)]
