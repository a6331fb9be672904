"""The health statistics over phase boards: a phase whose board is not public stays out
of them until the reveal, and the sweep queues a recomputation once the reveal passed (the
health page says so meanwhile)."""

from __future__ import annotations

import time_machine
from django.urls import reverse
from django.utils import timezone

from leaderboard.models import BenchmarkHealth
from leaderboard.pipeline import health, tasks
from tests.leaderboard.campaign_data import AFTER_REVEAL, BEFORE_REVEAL, REVEAL, seed_boards
from tests.leaderboard.split_data import new_version, part_of


def test_closed_boards_stay_out_of_the_statistics_until_the_reveal(db):
    boards = seed_boards()
    judgments = boards.benchmark.current_judgments
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        before = {r.submission.run_name for r in health._results(boards.benchmark, judgments)}
    with time_machine.travel(AFTER_REVEAL, tick=False):
        after = {r.submission.run_name for r in health._results(boards.benchmark, judgments)}
    assert before == {"zeta-public", "alpha-public"}
    assert after == before | {"alpha-owners", "alpha-hidden"}


def test_the_sweep_queues_health_computed_before_the_reveal(db, django_capture_on_commit_callbacks):
    boards = seed_boards()
    row = BenchmarkHealth.objects.create(
        benchmark=boards.benchmark,
        judgments=boards.benchmark.current_judgments,
        computed_at=REVEAL - timezone.timedelta(days=2),
    )
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        assert tasks.refresh_revealed_health() == 0
    with time_machine.travel(AFTER_REVEAL, tick=False), django_capture_on_commit_callbacks():
        assert tasks.refresh_revealed_health() == 1
    row.refresh_from_db()
    assert row.requested == 1
    BenchmarkHealth.objects.filter(pk=row.pk).update(computed_at=AFTER_REVEAL)
    with time_machine.travel(AFTER_REVEAL, tick=False):
        assert tasks.refresh_revealed_health() == 0


def test_the_sweep_queues_the_parts_health_and_not_an_older_versions(
    db, django_capture_on_commit_callbacks
):
    """A split version's parts were computed beside it and are queued with it; a version
    no longer current is not recomputed."""
    boards = seed_boards()
    whole = boards.benchmark.current_judgments
    public = part_of(whole, "public", ["n00", "n01"])
    older = new_version(boards.benchmark, 0)
    before = REVEAL - timezone.timedelta(days=2)
    for judgments in (whole, public, older):
        BenchmarkHealth.objects.create(
            benchmark=boards.benchmark, judgments=judgments, computed_at=before
        )
    with time_machine.travel(AFTER_REVEAL, tick=False), django_capture_on_commit_callbacks():
        assert tasks.refresh_revealed_health() == 2
    requested = dict(BenchmarkHealth.objects.values_list("judgments_id", "requested"))
    assert requested == {whole.pk: 1, public.pk: 1, older.pk: 0}


def test_moving_the_reveal_recomputes_the_health(db, django_capture_on_commit_callbacks):
    """Health computed after the reveal covers the hidden phases' runs: an organizer who
    puts the reveal back (a wrong date) has it recomputed without them, at once."""
    from leaderboard.pipeline.loading import settings_changed

    boards = seed_boards()
    row = BenchmarkHealth.objects.create(
        benchmark=boards.benchmark,
        judgments=boards.benchmark.current_judgments,
        computed_at=AFTER_REVEAL,
    )
    with django_capture_on_commit_callbacks() as queued:
        settings_changed(boards.benchmark, ["title"])
    row.refresh_from_db()
    assert (row.requested, len(queued)) == (0, 0)
    with django_capture_on_commit_callbacks() as queued:
        settings_changed(boards.benchmark, ["reveal_at"])
    row.refresh_from_db()
    assert (row.requested, len(queued)) == (1, 1)


def test_the_health_page_says_when_it_predates_the_reveal(client, db):
    boards = seed_boards()
    row = BenchmarkHealth.objects.create(
        benchmark=boards.benchmark,
        judgments=boards.benchmark.current_judgments,
        computed_at=REVEAL - timezone.timedelta(days=2),
    )
    url = reverse("benchmark_health", args=[boards.benchmark.slug])
    note = "Computed before the reveal"
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        assert note not in client.get(url).content.decode()
    with time_machine.travel(AFTER_REVEAL, tick=False):
        assert note in client.get(url).content.decode()
        BenchmarkHealth.objects.filter(pk=row.pk).update(computed_at=AFTER_REVEAL)
        assert note not in client.get(url).content.decode()
