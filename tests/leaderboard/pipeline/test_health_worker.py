"""The benchmark health through a real worker: two runs uploaded one after the other are
scored and compared, and the health is computed once, after the last comparison (the
earlier request is superseded), on the compare queue."""

from __future__ import annotations

import uuid

import pytest

from leaderboard.models import BenchmarkHealth
from tests.leaderboard.pipeline.test_queues import _finished, _lines, _upload
from tests.leaderboard.workers import Worker, broker_or_skip, celery_on, purge, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_health_is_computed_once_after_a_batch(library, client, participant, settings, tmp_path):
    broker = broker_or_skip()
    queue = f"test-h-{uuid.uuid4().hex[:8]}"
    with celery_on(broker, queue):
        client.force_login(participant)
        runs = [_upload(client, name) for name in ("first", "second")]  # queued, no worker yet
        worker = Worker(
            queue,
            settings.MEDIA_ROOT,
            tmp_path / "worker.log",
            extra_env={"BENCHMARK_HEALTH_DELAY_SECONDS": "12"},
        )
        try:
            worker.wait_ready()
            for run in runs:
                wait_for(_finished(run), timeout=90, interval=0.2, what="the run to be scored")
                assert run.status == "scored", run.failure_reason

            def computed() -> bool:
                row = BenchmarkHealth.objects.filter(benchmark=library).first()
                return bool(row and row.computed_at and row.data.get("runs") == 2)

            wait_for(computed, timeout=90, interval=0.5, what="the health to be computed")

            def tasks() -> str:  # the worker's task lines, to read when this fails
                lines = worker.log_path.read_text().splitlines()
                return "\n".join(line for line in lines if "tasks." in line)

            try:
                wait_for(
                    lambda: len(_lines(worker, "compute_health")) >= 2, timeout=60, what="both"
                )
            except TimeoutError:
                raise AssertionError(f"two health tasks expected:\n{tasks()}") from None
            log = worker.log_path.read_text()
            assert log.count("'superseded'") == 1 and log.count("'computed'") == 1, tasks()
            row = BenchmarkHealth.objects.get(benchmark=library)
            assert row.requested == 2
            assert row.data["measures"]["map"]["discriminative_power"]["pairs"] == 1
        finally:
            worker.stop()
            purge(queue)
