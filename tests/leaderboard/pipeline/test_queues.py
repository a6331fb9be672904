"""Scoring and comparing on queues of their own (settings' CELERY_SCORE_QUEUE and
CELERY_COMPARE_QUEUE): a comparison fan-out never delays the next run's scoring, on a
worker that consumes only the score queue nor, beyond one comparison, on one that
consumes every queue (as ``make worker`` does)."""

from __future__ import annotations

import time

import pytest
import redis
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.celery import app
from leaderboard.models import Submission
from leaderboard.pipeline import tasks
from tests import DEMO as DEMO_DIR
from tests.leaderboard.workers import (
    Worker,
    broker_or_skip,
    queues_of,
    wait_for,
)


def _queue_of(task_name: str) -> str:
    return app.amqp.router.route({}, task_name)["queue"].name


def test_scoring_and_comparing_are_routed_to_their_own_queues(settings):
    settings.CELERY_SCORE_QUEUE, settings.CELERY_COMPARE_QUEUE = "s-test", "c-test"
    assert _queue_of(tasks.score_submission.name) == "s-test"
    assert _queue_of(tasks.compare_submission.name) == "c-test"
    # Beat's housekeeping stays on the default queue, which every worker consumes.
    assert _queue_of(tasks.sweep_stuck.name) == app.conf.task_default_queue
    assert _queue_of(tasks.send_unsent.name) == app.conf.task_default_queue
    # A deletion's files too: no scoring waits behind them.
    assert _queue_of(tasks.discard_files.name) == app.conf.task_default_queue


def test_a_worker_without_q_consumes_every_queue():
    """The production defaults: ``celery -A leaderboard worker`` (make worker, compose's
    ``worker``) consumes the default, score and compare queues."""
    names = [queue.name for queue in app.conf.task_queues]
    assert names == ["celery", "score", "compare"]


@pytest.fixture
def start_worker(queue, settings, tmp_path):
    started: list[Worker] = []

    def start(consume: list[str] | None = None, wait: bool = True) -> Worker:
        log = tmp_path / f"worker{len(started)}.log"
        worker = Worker(queue, settings.MEDIA_ROOT, log, consume=consume)
        started.append(worker)
        if wait:
            worker.wait_ready()
        return worker

    yield start
    for worker in started:
        worker.stop()


def _upload(client, name: str) -> Submission:
    """Run B under the tag ``name``: other bytes for each name (the form refuses a file
    its participant already submitted)."""
    content = (DEMO_DIR / "run-B.txt").read_bytes().replace(b"system-B", name.encode())
    upload = SimpleUploadedFile(f"{name}.txt", content)
    response = client.post("/benchmarks/library/submit/", {"file": upload, "run_name": name})
    assert response.status_code == 302
    return Submission.objects.get(run_name=name)


def _finished(submission: Submission):
    def check() -> bool:
        submission.refresh_from_db()
        return submission.status in {"scored", "failed"}

    return check


def _lines(worker: Worker, task: str) -> list[int]:
    """Line numbers of the worker log's 'succeeded' lines for ``task``."""
    return [
        number
        for number, line in enumerate(worker.log_path.read_text().splitlines())
        if f"leaderboard.tasks.{task}[" in line and "succeeded" in line
    ]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_full_compare_queue_does_not_delay_a_score_worker(
    queue, start_worker, library, client, participant
):
    """500 comparisons wait on the compare queue; a worker consuming only the score
    queue scores a new run within seconds, and the run's own comparison joins the 500."""
    compare_queue = f"{queue}.compare"
    for _ in range(500):
        tasks.compare_submission.delay(10**12, 1)
    backlog = redis.Redis.from_url(broker_or_skip())
    assert backlog.llen(compare_queue) == 500
    worker = start_worker(consume=[f"{queue}.score"])
    client.force_login(participant)
    started = time.monotonic()
    submission = _upload(client, "fast")
    wait_for(_finished(submission), timeout=60, interval=0.1, what="the run to be scored")
    assert submission.status == "scored", submission.failure_reason
    assert time.monotonic() - started < 30
    wait_for(lambda: backlog.llen(compare_queue) == 501, timeout=10, what="its comparison")
    # Its log line comes a moment after the row is stored.
    wait_for(lambda: _lines(worker, "score_submission"), timeout=10, what="the log line")
    assert len(_lines(worker, "score_submission")) == 1
    assert _lines(worker, "compare_submission") == []


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_on_every_queue_takes_turns_between_them(
    queue, start_worker, library, client, participant
):
    """100 comparisons queued before a run's scoring, one worker consuming every queue
    (the default): it takes the queues in turn, so the run is scored after at most one
    or two comparisons, not after all 100 (as on one first-in-first-out queue)."""
    for _ in range(100):
        tasks.compare_submission.delay(10**12, 1)
    client.force_login(participant)
    submission = _upload(client, "turn")  # sent to the score queue; no worker yet
    worker = start_worker(consume=queues_of(queue))
    wait_for(_finished(submission), timeout=60, interval=0.1, what="the run to be scored")
    assert submission.status == "scored", submission.failure_reason
    wait_for(lambda: _lines(worker, "score_submission"), timeout=10, what="the log line")
    (scored_at,) = _lines(worker, "score_submission")
    before = [line for line in _lines(worker, "compare_submission") if line < scored_at]
    assert len(before) <= 2, f"{len(before)} comparisons ran before the scoring"
