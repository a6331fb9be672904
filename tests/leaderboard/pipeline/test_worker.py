"""Real Celery workers on Redis (not eager mode): results come back, runs get scored,
and a worker killed mid-task loses nothing."""

from __future__ import annotations

import datetime as dt
import io
import time
import uuid

import numpy as np
import pandas as pd
import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.celery import app
from leaderboard.models import Benchmark, Submission
from leaderboard.pipeline import tasks
from leaderboard.pipeline.loading import load_judgments
from tests import DEMO as DEMO_DIR
from tests.leaderboard.workers import (
    Worker,
    broker_or_skip,
    end_worker_sessions,
    purge,
    queue_settings,
    results_locked,
    scored_lines,
    wait_for,
    waiting_on_a_lock,
)

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

DEMO = "leaderboard/demo"


@pytest.fixture
def queue(settings):
    broker_or_skip()
    name = f"test-{uuid.uuid4().hex[:8]}"
    previous = app.conf.task_default_queue, app.conf.task_always_eager
    app.conf.task_default_queue = name
    app.conf.task_always_eager = False
    routes = queue_settings(name)
    settings.CELERY_SCORE_QUEUE = routes["CELERY_SCORE_QUEUE"]
    settings.CELERY_COMPARE_QUEUE = routes["CELERY_COMPARE_QUEUE"]
    yield name
    purge(name)
    app.conf.task_default_queue, app.conf.task_always_eager = previous


@pytest.fixture
def start_worker(queue, settings, tmp_path):
    workers: list[Worker] = []

    def start(**extra_env) -> Worker:
        worker = Worker(
            queue, settings.MEDIA_ROOT, tmp_path / f"worker{len(workers)}.log", extra_env
        )
        workers.append(worker)
        worker.wait_ready()
        return worker

    yield start
    for worker in workers:
        worker.stop()
    # A SIGKILLed worker's database session can outlive it for a moment; end it so the
    # test database can be dropped at the end of the run.
    end_worker_sessions()


def test_a_real_worker_runs_a_task_and_returns_its_result(start_worker):
    start_worker()
    result = app.send_task("leaderboard.tasks.sweep_stuck")
    assert result.get(timeout=30) == {"requeued": 0, "failed": 0}
    assert result.successful()


def test_a_run_uploaded_through_the_web_is_scored_by_the_worker(
    start_worker, library, client, participant
):
    start_worker()
    client.force_login(participant)
    with open(f"{DEMO}/run-B.txt", "rb") as handle:
        upload = SimpleUploadedFile("run-B.txt", handle.read())
    response = client.post("/benchmarks/library/submit/", {"file": upload, "description": ""})
    assert response.status_code == 302
    submission = Submission.objects.get(benchmark=library)

    def scored():
        submission.refresh_from_db()
        return submission.status in {"scored", "failed"}

    wait_for(scored, timeout=60, what="the worker to score the run")
    assert submission.status == "scored", submission.failure_reason
    assert round(submission.current_result().summary["map"], 3) == 0.740
    assert submission.task_id and submission.task_id != "eager"


def _big_benchmark(tmp_path) -> tuple[Benchmark, bytes]:
    """1,000 needs; a run of 3,000 documents each (3M lines): a few seconds to score."""
    rng = np.random.default_rng(7)
    needs = np.repeat([f"n{i:04d}" for i in range(1000)], 3000)
    docs = np.tile([f"d{j:05d}" for j in range(3000)], 1000)
    run = pd.DataFrame(
        {
            "need": needs,
            "q0": "Q0",
            "doc": docs,
            "rank": 1,
            "score": rng.random(len(needs)),
            "tag": "big",
        }
    )
    buffer = io.StringIO()
    run.to_csv(buffer, sep=" ", header=False, index=False)
    judged = run.groupby("need").head(50)
    qrels = pd.DataFrame(
        {
            "need": judged["need"],
            "it": 0,
            "doc": judged["doc"],
            "rel": rng.integers(0, 2, len(judged)),
        }
    )
    qrels_buffer = io.BytesIO(qrels.to_csv(sep=" ", header=False, index=False).encode())
    benchmark = Benchmark.objects.create(slug="big", title="Big", daily_limit=100)
    load_judgments(benchmark, qrels_buffer, "qrels.txt")
    benchmark.refresh_from_db()
    return benchmark, buffer.getvalue().encode()


@pytest.mark.long
def test_a_worker_killed_mid_scoring_leaves_a_run_that_a_new_worker_scores(
    start_worker, client, participant, tmp_path
):
    benchmark, run_bytes = _big_benchmark(tmp_path)
    # A short visibility timeout so the new worker takes the dead worker's message back soon.
    first = start_worker(CELERY_VISIBILITY_TIMEOUT="4")
    client.force_login(participant)
    response = client.post(
        "/benchmarks/big/submit/",
        {"file": SimpleUploadedFile("big.txt", run_bytes), "run_name": "big"},
    )
    assert response.status_code == 302
    submission = Submission.objects.get(benchmark=benchmark)

    def running():
        submission.refresh_from_db()
        return submission.status == "running"

    wait_for(running, timeout=60, interval=0.01, what="the worker to start scoring")
    first.kill()
    submission.refresh_from_db()
    assert submission.status == "running"  # the dead worker could not finish or clean up

    start_worker(CELERY_VISIBILITY_TIMEOUT="4")

    def finished():
        submission.refresh_from_db()
        return submission.status in {"scored", "failed"}

    wait_for(finished, timeout=120, interval=0.2, what="the new worker to score the run")
    assert submission.status == "scored", submission.failure_reason
    assert submission.attempts == 2
    assert submission.current_result().summary["num_q"] == 1000


def test_the_sweep_never_takes_a_run_from_a_live_task(
    start_worker, library, client, participant, settings
):
    """A task slower than its lease (held up by a lock) keeps renewing it; an aggressive
    sweep (runs stuck after 1 s, swept every 0.2 s) leaves it alone; it is scored once."""
    settings.STUCK_AFTER_SECONDS = 1
    worker = start_worker(LEASE_SECONDS="3")  # renewed every second
    client.force_login(participant)
    sweeps, leases = [], set()
    with results_locked():
        upload = SimpleUploadedFile("run-B.txt", (DEMO_DIR / "run-B.txt").read_bytes())
        assert client.post("/benchmarks/library/submit/", {"file": upload}).status_code == 302
        submission = Submission.objects.get(benchmark=library)
        wait_for(waiting_on_a_lock, timeout=60, what="the worker to wait mid-scoring")
        until = time.monotonic() + 10  # three leases and more
        while time.monotonic() < until:
            sweeps.append(tasks.sweep_stuck())
            row = Submission.objects.values("status", "lease_until", "attempts").get(
                pk=submission.pk
            )
            assert row["status"] == "running" and row["attempts"] == 1, (row, sweeps)
            leases.add(row["lease_until"])
            time.sleep(0.2)
    assert all(sweep == {"requeued": 0, "failed": 0} for sweep in sweeps)
    assert len(sweeps) > 20
    assert max(leases) - min(leases) >= dt.timedelta(seconds=6), "the lease was not renewed"

    def finished():
        submission.refresh_from_db()
        return submission.status in {"scored", "failed"}

    wait_for(finished, timeout=60, interval=0.1, what="the worker to store the result")
    assert submission.status == "scored", submission.failure_reason
    assert submission.attempts == 1 and submission.results.count() == 1
    assert submission.lease_until is None
    # the worker logs the task's success a moment after the row is stored
    wait_for(lambda: scored_lines(worker), timeout=10, what="the success line")
    assert len(scored_lines(worker)) == 1


@pytest.mark.long
def test_a_task_stopped_by_its_time_limit_gives_its_run_back(start_worker, library, participant):
    """A soft time limit of 18 s and a task held up mid-scoring: the task ends, its run
    is not left ``running`` but back in the queue, unsent, and the outbox sends it; the
    next attempt scores it. The time between the soft and the hard limit is the task's to
    give its run back (a tenth of the limit, up to a minute, in production): 7 s here, as
    2 s was too little once on a loaded machine and the hard limit killed the task, whose
    message then came back for a second attempt."""
    worker = start_worker(TASK_TIME_LIMIT="25")
    submission = Submission(benchmark=library, participant=participant, run_name="B")
    submission.file.save("run-B.txt", ContentFile((DEMO_DIR / "run-B.txt").read_bytes()))
    with results_locked():
        # The sender's limits travel with the message, as a web process sends them.
        tasks.score_submission.apply_async((submission.pk,), time_limit=25, soft_time_limit=18)
        wait_for(waiting_on_a_lock, timeout=60, what="the worker to wait mid-scoring")
        started = time.monotonic()

        def given_back():
            submission.refresh_from_db()
            return submission.status != "running"

        wait_for(given_back, timeout=40, interval=0.2, what="the task to give its run back")
        stopped_after = time.monotonic() - started
    assert stopped_after > 5, stopped_after  # held until the soft limit, not given back early
    assert submission.status == "queued" and submission.waiting_for_queue
    assert submission.attempts == 1 and not submission.results.exists()
    # The row is given back before the task re-raises, so the worker logs the
    # exception a moment after the status changes.
    wait_for(
        lambda: "SoftTimeLimitExceeded" in worker.log_path.read_text(),
        timeout=10,
        what="the worker to log the soft time limit's exception",
    )
    Submission.objects.filter(pk=submission.pk).update(
        queued_at=submission.queued_at - dt.timedelta(minutes=1)
    )
    assert tasks.send_unsent() == 1  # beat's outbox

    def finished():
        submission.refresh_from_db()
        return submission.status in {"scored", "failed"}

    wait_for(finished, timeout=60, interval=0.1, what="the second attempt")
    assert submission.status == "scored" and submission.attempts == 2
