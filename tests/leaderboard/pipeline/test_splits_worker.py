"""A split set on a benchmark whose runs are scored, through a real worker (Redis,
PostgreSQL): the worker derives each run's public and private results from the stored
whole results, then tests the pair and computes the health on each part."""

from __future__ import annotations

import pytest
from django.db import transaction

from leaderboard.models import BenchmarkHealth, Comparison, Result, Submission
from leaderboard.pipeline import tasks
from tests.leaderboard.pipeline import test_worker
from tests.leaderboard.pipeline.test_queues import _finished, _upload
from tests.leaderboard.workers import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
queue, start_worker = test_worker.queue, test_worker.start_worker


def test_a_worker_derives_the_parts_of_a_split_set_after_scoring(
    start_worker, library, client, participant
):
    start_worker(BENCHMARK_HEALTH_DELAY_SECONDS="0")
    client.force_login(participant)
    runs = [_upload(client, name) for name in ("first", "second")]
    for run in runs:
        wait_for(_finished(run), timeout=90, interval=0.2, what="the run to be scored")
        assert run.status == Submission.Status.SCORED, run.failure_reason
    version = library.latest_judgments
    wait_for(
        lambda: Comparison.objects.filter(judgments=version, measure="map").exists(),
        timeout=60,
        what="the whole version's comparison",
    )
    with transaction.atomic():
        assert library.set_split(fraction=0.5, seed=7)
        tasks.queue_split(library)
    parts = list(version.parts.all())
    assert sorted(part.part for part in parts) == ["private", "public"]

    def derived() -> bool:
        return all(
            Comparison.objects.filter(judgments=part, measure="map").exists()
            and BenchmarkHealth.objects.filter(judgments=part, computed_at__isnull=False).exists()
            for part in parts
        )

    wait_for(derived, timeout=90, interval=0.2, what="the parts' comparisons and health")
    for part in parts:
        results = Result.objects.filter(judgments=part)
        assert results.count() == 2
        assert all(r.summary["num_q"] == len(part.need_ids) == 2 for r in results)
        assert Comparison.objects.get(judgments=part, measure="map").n == 2
