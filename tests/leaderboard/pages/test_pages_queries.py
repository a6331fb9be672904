"""Pages that list many benchmarks cost the same queries for three as for one."""

from __future__ import annotations

import datetime as dt

from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.leaderboard.pages_data import make_benchmark
from tests.leaderboard.split_data import NEEDS, PRIVATE, PUBLIC, part_of, score

PAST = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
FUTURE = dt.datetime(2090, 1, 1, tzinfo=dt.UTC)


def split_benchmark(slug: str, reveal_at: dt.datetime, shift: float):
    """A benchmark split into public and private needs, one run scored on the whole
    version and on each part (``shift`` moves its values, so each benchmark's differ)."""
    owner = get_user_model().objects.create_user(f"{slug}-owner")
    benchmark = make_benchmark(slug, NEEDS, private_needs=PRIVATE, reveal_at=reveal_at)
    whole = benchmark.current_judgments
    public, private = part_of(whole, "public", PUBLIC), part_of(whole, "private", PRIVATE)
    run = benchmark.submissions.create(
        participant=owner, run_name=f"{slug}-run", file=f"runs/{slug}.txt", status="scored"
    )
    for judgments in (whole, public, private):
        score(run, judgments, "alpha", shift)
    return benchmark


def home(client) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/")
    assert response.status_code == 200
    return len(queries), response.content.decode()


def test_the_home_page_costs_the_same_queries_for_three_split_benchmarks_as_for_one(client, db):
    """Each benchmark with a split used to cost two queries (its current version and the
    part its board shows) to find the leader shown on the home page."""
    split_benchmark("first", FUTURE, 0.0)
    few, _ = home(client)
    split_benchmark("second", PAST, 0.01)  # revealed: the private part is the board
    split_benchmark("third", FUTURE, 0.02)
    many, page = home(client)
    assert many == few
    # the public needs' mean before the reveal, the private needs' after it
    assert "0.6335" in page and "0.8799" in page and "0.6535" in page
    assert "0.6435" not in page  # the public mean of the revealed one: not its board


def test_one_s_own_runs_page_costs_the_same_queries_on_three_benchmarks_as_on_one(client, db):
    """The participant's run list resolved a lens per benchmark: on a split benchmark
    its public part and whether the participant organises it, two queries each."""
    person = get_user_model().objects.create_user("person")
    client.force_login(person)

    def runs_page() -> tuple[int, str]:
        with CaptureQueriesContext(connection) as queries:
            response = client.get("/accounts/runs/")
        assert response.status_code == 200
        return len(queries), response.content.decode()

    def run_on(slug: str, shift: float) -> None:
        benchmark = make_benchmark(slug, NEEDS, private_needs=PRIVATE, reveal_at=FUTURE)
        whole = benchmark.current_judgments
        run = benchmark.submissions.create(
            participant=person, run_name=f"{slug}-run", file=f"runs/{slug}.txt", status="scored"
        )
        score(run, whole, "alpha", shift)
        for part, needs in (("public", PUBLIC), ("private", PRIVATE)):
            score(run, part_of(whole, part, needs), "alpha", shift)

    run_on("first", 0.0)
    few, _ = runs_page()
    run_on("second", 0.01)
    run_on("third", 0.02)
    many, page = runs_page()
    assert many == few
    # each run's public needs' mean (its board's), never the whole version's
    assert "0.6335" in page and "0.6435" in page and "0.6535" in page
    assert "0.7517" not in page
