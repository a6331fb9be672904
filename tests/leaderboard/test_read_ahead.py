"""A scoring worker reads the open benchmarks' judgments as it starts (WORKER_READ_AHEAD):
which benchmarks, how many, what a file it cannot read does, and that the pool process a
real worker forks scores from what its main process read."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from leaderboard.models import Benchmark, Submission
from leaderboard.pipeline.loading import load_judgments
from leaderboard.pipeline.scoring import _qrels_cached, load_qrels, read_ahead_judgments
from tests.leaderboard.workers import Worker, free_port, wait_for

DEMO_DIR = Path(__file__).resolve().parents[2] / "leaderboard" / "demo"


@pytest.fixture
def cold_cache():
    _qrels_cached.cache_clear()
    yield
    _qrels_cached.cache_clear()


def _benchmark(slug: str, *, judged: bool = True, is_open: bool = True) -> Benchmark:
    benchmark = Benchmark.objects.create(slug=slug, title=slug, is_open=is_open)
    if judged:
        with open(DEMO_DIR / "qrels.txt", "rb") as qrels:
            load_judgments(benchmark, qrels, "qrels.txt")
    return benchmark


def _submitted(benchmark: Benchmark, user, minutes_ago: int) -> None:
    Submission.objects.create(
        benchmark=benchmark,
        participant=user,
        run_name=f"{benchmark.slug}-run",
        file=SimpleUploadedFile("run.txt", b"q1 Q0 d1 1 1.0 t\n"),
        status=Submission.Status.FAILED,
        created=timezone.now() - datetime.timedelta(minutes=minutes_ago),
    )


@pytest.mark.django_db
def test_open_judged_benchmarks_are_read_the_latest_submitted_to_first(cold_cache, participant):
    quiet, busy, recent = _benchmark("quiet"), _benchmark("busy"), _benchmark("recent")
    _benchmark("closed", is_open=False)
    _benchmark("unjudged", judged=False)
    _submitted(busy, participant, minutes_ago=5)
    _submitted(recent, participant, minutes_ago=1)
    _submitted(quiet, participant, minutes_ago=60 * 24)

    assert read_ahead_judgments(2) == ["recent", "busy"]
    assert _qrels_cached.cache_info().currsize == 2
    assert read_ahead_judgments(10) == ["recent", "busy", "quiet"]
    assert _qrels_cached.cache_info().currsize == 3
    assert read_ahead_judgments(0) == []


@pytest.mark.django_db
def test_never_more_than_the_cache_holds(cold_cache, participant):
    """Five eligible benchmarks, a limit of ten: the four latest submitted to are read, so
    nothing read ahead pushes another out of the cache (maxsize 4)."""
    for minutes_ago, slug in enumerate(["e", "d", "c", "b", "a"]):
        _submitted(_benchmark(slug), participant, minutes_ago=minutes_ago + 1)
    assert _qrels_cached.cache_info().maxsize == 4
    assert read_ahead_judgments(10) == ["e", "d", "c", "b"]
    assert _qrels_cached.cache_info().currsize == 4


@pytest.mark.django_db
def test_the_latest_version_is_read_and_then_served_from_the_cache(cold_cache):
    benchmark = _benchmark("versions")
    with open(DEMO_DIR / "qrels.txt", "rb") as qrels:
        data = qrels.read()
    load_judgments(benchmark, SimpleUploadedFile("v2.txt", data + b"1 0 extra-doc 1\n"), "v2.txt")
    assert read_ahead_judgments(4) == ["versions"]
    before = _qrels_cached.cache_info().hits
    qrels = load_qrels(benchmark.latest_judgments)
    assert _qrels_cached.cache_info().hits == before + 1
    assert "extra-doc" in set(qrels["doc_id"].astype(str))


@pytest.mark.django_db
def test_a_file_that_cannot_be_read_is_skipped_and_named(cold_cache, caplog):
    gone = _benchmark("gone")
    _benchmark("kept")
    judgments = gone.latest_judgments
    judgments.file.storage.delete(judgments.file.name)
    assert read_ahead_judgments(4) == ["kept"]
    assert "judgments of gone not read ahead" in caplog.text


@pytest.fixture
def worker_log(queue, settings, tmp_path):
    started: list[Worker] = []

    def start(consume: list[str], extra_env: dict | None = None) -> Path:
        log = tmp_path / f"worker{len(started)}.log"
        started.append(
            Worker(queue, settings.MEDIA_ROOT, log, consume=consume, extra_env=extra_env)
        )
        started[-1].wait_ready()
        return log

    yield start
    for worker in started:
        worker.stop()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_fresh_workers_pool_process_scores_from_what_it_read_as_it_started(
    queue, worker_log, library, client, participant, cold_cache
):
    log = worker_log([f"{queue}.score", queue])
    assert "judgments read ahead in" in log.read_text() and ": library" in log.read_text()
    # The file gone from the store after the worker started: only the read-ahead copy,
    # inherited by the pool process from the main one, can score the run now.
    judgments = library.latest_judgments
    judgments.file.storage.delete(judgments.file.name)
    client.force_login(participant)
    upload = SimpleUploadedFile("run-B.txt", (DEMO_DIR / "run-B.txt").read_bytes())
    response = client.post("/benchmarks/library/submit/", {"file": upload, "run_name": "b"})
    assert response.status_code == 302
    submission = Submission.objects.get(run_name="b")

    def finished() -> bool:
        submission.refresh_from_db()
        return submission.status in {"scored", "failed"}

    wait_for(finished, timeout=60, interval=0.1, what="the run to be scored")
    assert submission.status == "scored", submission.failure_reason


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_on_the_compare_queue_alone_reads_nothing(queue, worker_log, library):
    log = worker_log([f"{queue}.compare"])
    assert "ready." in log.read_text() and "read ahead" not in log.read_text()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_whose_database_does_not_answer_still_starts(queue, worker_log, library):
    """Nothing listens on the port: the read-ahead logs why it read nothing and the worker
    comes up anyway (its first run reads the judgments, or fails and is retried)."""
    nowhere = f"postgres://postgres@127.0.0.1:{free_port()}/nowhere"
    log = worker_log([f"{queue}.score"], extra_env={"DATABASE_URL": nowhere})
    text = log.read_text()
    assert "judgments not read ahead:" in text and "ready." in text
    assert "judgments read ahead in" not in text
