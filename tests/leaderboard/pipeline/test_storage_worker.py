"""Web and workers on different hosts, sharing only the bucket: real Celery worker
processes with MEDIA_ROOTs of their own score what the web process stored in moto's S3
server, and each worker fetches a benchmark's judgments once however many runs it
scores."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import Submission
from leaderboard.pipeline import tasks
from tests import DEMO
from tests.leaderboard.workers import Worker, end_worker_sessions, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

RUN_B = (DEMO / "run-B.txt").read_bytes()


@pytest.fixture
def remote_workers(queue, bucket, tmp_path):
    """Start workers that share nothing with this process but the database, the broker
    and the bucket: each has a MEDIA_ROOT of its own (its "host's" disk)."""
    workers: list[Worker] = []

    def start() -> Worker:
        number = len(workers)
        media = tmp_path / f"worker{number}-media"
        media.mkdir()
        worker = Worker(queue, str(media), tmp_path / f"worker{number}.log", bucket.env())
        worker.media = media
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.stop()
    end_worker_sessions()


def files_under(root) -> list[Path]:
    return [path for path in Path(root).rglob("*") if path.is_file()]


def log_lines(worker: Worker, text: str) -> list[str]:
    return [line for line in worker.log_path.read_text().splitlines() if text in line]


def test_a_worker_with_another_media_root_scores_a_run_stored_in_the_bucket(
    bucket, library, remote_workers, client, participant, settings
):
    worker = remote_workers()
    worker.wait_ready()
    assert Path(settings.MEDIA_ROOT) != worker.media
    client.force_login(participant)
    response = client.post(
        "/benchmarks/library/submit/", {"file": SimpleUploadedFile("run-B.txt", RUN_B)}
    )
    assert response.status_code == 302
    submission = Submission.objects.get()

    def done():
        submission.refresh_from_db()
        return submission.status in {"scored", "failed"}

    wait_for(done, timeout=60, what="the worker to score the run from the bucket")
    assert submission.status == "scored", submission.failure_reason
    assert round(submission.current_result().summary["map"], 3) == 0.740
    assert submission.task_id != "eager"
    # only the bucket was shared: neither "host" has the files on its disk
    assert {submission.file.name, submission.parsed.name} <= set(bucket.keys())
    assert files_under(settings.MEDIA_ROOT) == [] and files_under(worker.media) == []
    # the worker fetched the run's parsed lines, not its file
    assert log_lines(worker, f"fetched {submission.parsed.name} from the file store")
    assert not log_lines(worker, f"fetched {submission.file.name} from the file store")


def test_each_worker_fetches_the_judgments_once_for_many_runs(
    bucket, library, remote_workers, participant
):
    library.daily_limit = 100
    library.save()
    workers = [remote_workers(), remote_workers()]
    for worker in workers:
        worker.wait_ready()
    runs = []
    for number in range(16):
        run = Submission(benchmark=library, participant=participant, run_name=f"run-{number:02d}")
        run.original_name = "run-B.txt"
        run.file.save("run-B.txt", ContentFile(RUN_B), save=False)
        run.save()
        runs.append(run)
    assert tasks.send_scoring([run.pk for run in runs]) == 16

    def all_scored():
        return Submission.objects.filter(status="scored").count() == 16

    wait_for(all_scored, timeout=120, what="16 runs scored by two workers")
    judgments = library.latest_judgments.file.name
    fetched = [len(log_lines(worker, f"fetched {judgments} ")) for worker in workers]
    runs_fetched = sum(len(log_lines(worker, "fetched runs/library/")) for worker in workers)
    assert runs_fetched == 16
    assert all(count <= 1 for count in fetched), fetched  # once per worker, at most
    assert sum(fetched) >= 1


def test_a_worker_deletes_a_deleted_run_s_objects_from_the_queue_not_the_request(
    bucket, library, remote_workers, participant
):
    runs = []
    for number in range(3):
        run = Submission(benchmark=library, participant=participant, run_name=f"run-{number}")
        run.file.save("run-B.txt", ContentFile(RUN_B), save=False)
        run.parsed.save("run-B.arrow", ContentFile(b"lines"), save=False)
        run.save()
        runs.append(run)
    judgments = library.latest_judgments.file.name
    assert len(bucket.keys()) == 7
    Submission.objects.filter(run_name__in=["run-0", "run-1"]).delete()  # commits here
    assert len(bucket.keys()) == 7  # left to a worker: none runs yet
    worker = remote_workers()
    worker.wait_ready()
    kept = sorted([judgments, runs[2].file.name, runs[2].parsed.name])
    wait_for(lambda: bucket.keys() == kept, timeout=60, what="a worker to delete the objects")

    def logged_success():  # the worker logs the task's answer just after the deletion
        ran = log_lines(worker, "leaderboard.tasks.discard_files")
        return any("succeeded" in line and line.endswith(": 4") for line in ran)  # 4 deleted

    wait_for(logged_success, timeout=30, what="the worker to log discard_files: 4")
