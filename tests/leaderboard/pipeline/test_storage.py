"""Files in an S3-compatible bucket (moto's server, a real HTTP endpoint): uploads land in
the bucket and not on disk, scoring reads through temporary copies deleted afterwards,
judgments are fetched once per worker, and a bucket that does not answer refuses an
upload cleanly with nothing half-stored."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import DatabaseError
from storages.backends.s3 import S3Storage

from leaderboard.models import Submission
from leaderboard.pipeline import scoring
from leaderboard.pipeline.files import StorageUnavailable, local_copy
from leaderboard.pipeline.loading import load_judgments
from tests import DEMO
from tests.hostile import gzip_bomb
from tests.leaderboard.buckets import Bucket, S3Server

RUN_B = (DEMO / "run-B.txt").read_bytes()
FORM = "/benchmarks/library/submit/"

pytestmark = pytest.mark.django_db


@pytest.fixture
def s3_library(bucket, library):
    """The library benchmark with its judgments stored in the test's bucket."""
    return library


def files_under(root) -> list[Path]:
    return [path for path in Path(root).rglob("*") if path.is_file()]


def post_run(client, user, content: bytes = RUN_B, name: str = "run-B.txt", **fields):
    client.force_login(user)
    return client.post(FORM, {"file": SimpleUploadedFile(name, content), **fields})


def test_the_default_storage_is_the_bucket(bucket):
    storage = Submission._meta.get_field("file").storage
    assert storage.bucket_name == bucket.name
    assert isinstance(storage._wrapped, S3Storage)


def test_an_uploaded_run_goes_to_the_bucket_not_to_local_disk(
    s3_library, bucket, client, participant, settings, django_capture_on_commit_callbacks
):
    judgments = s3_library.latest_judgments
    with django_capture_on_commit_callbacks(execute=True):
        response = post_run(client, participant)
    assert response.status_code == 302
    submission = Submission.objects.get()
    assert submission.file.name.startswith("runs/library/system-B-")
    assert submission.parsed.name.startswith("parsed/library/system-B-")
    assert bucket.keys() == sorted(
        [judgments.file.name, submission.file.name, submission.parsed.name]
    )
    assert bucket.read(submission.file.name) == RUN_B
    assert files_under(settings.MEDIA_ROOT) == []
    # scored (in-process here) from the bucket
    submission.refresh_from_db()
    assert submission.status == "scored", submission.failure_reason
    assert round(submission.current_result().summary["map"], 3) == 0.740


def test_scoring_reads_a_temporary_copy_that_is_deleted_after(
    s3_library, bucket, participant, settings, tmp_path, caplog
):
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    scoring._qrels_cached.cache_clear()
    good = _stored_run(s3_library, participant, "good", RUN_B)
    bad = _stored_run(s3_library, participant, "bad", RUN_B + b"stage-plays Q0 x 1 oops tag\n")
    with caplog.at_level(logging.INFO, logger="leaderboard.pipeline.files"):
        scoring.run_scoring(good.pk, "task-1")
        scoring.run_scoring(bad.pk, "task-2")
    good.refresh_from_db()
    bad.refresh_from_db()
    assert good.status == "scored", good.failure_reason
    assert bad.status == "failed"
    assert bad.failure_reason.startswith("run.txt:39: ")  # file:line: reason, as on disk
    fetched = [r.getMessage() for r in caplog.records if r.getMessage().startswith("fetched")]
    assert len(fetched) == 3, fetched  # the judgments once, each run once
    assert list(tmp_path.iterdir()) == []  # every copy deleted, the failed run's too


def test_a_temporary_copy_is_deleted_when_the_reader_fails(bucket, tmp_path, settings):
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    storage = Submission._meta.get_field("file").storage
    name = storage.save("runs/x/run.txt", ContentFile(b"q1 Q0 d1 1 1 t\n"))
    with pytest.raises(RuntimeError), local_copy((storage, name)) as path:
        assert Path(path).read_bytes() == b"q1 Q0 d1 1 1 t\n"
        assert Path(path).parent == tmp_path
        raise RuntimeError("the engine failed")
    assert list(tmp_path.iterdir()) == []


def test_judgments_are_fetched_once_for_many_runs(s3_library, bucket, participant, monkeypatch):
    """1,000 runs on one benchmark download the judgments once per worker: counted here
    on 25 runs scored one after the other in this process (a worker's life)."""
    s3_library.daily_limit = 100
    s3_library.save()
    opened: list[str] = []
    real_open = S3Storage._open

    def counting_open(self, name, mode="rb"):
        opened.append(name)
        return real_open(self, name, mode)

    monkeypatch.setattr(S3Storage, "_open", counting_open)
    scoring._qrels_cached.cache_clear()
    runs = [_stored_run(s3_library, participant, f"run-{i:02d}", RUN_B) for i in range(25)]
    for number, run in enumerate(runs):
        scoring.run_scoring(run.pk, f"task-{number}")
    assert Submission.objects.filter(status="scored").count() == 25
    judgments = s3_library.latest_judgments.file.name
    assert opened.count(judgments) == 1
    assert sorted(name for name in opened if name != judgments) == sorted(
        run.file.name for run in runs
    )


def test_a_bucket_outage_refuses_the_upload_clearly_and_stores_nothing(
    library, client, participant, settings
):
    server = S3Server()
    server.client().create_bucket(Bucket="lb-outage")
    settings.STORAGES = {
        **settings.STORAGES,
        "default": Bucket(server, "lb-outage").storage(timeout=1),
    }
    server.stop()  # the bucket's host goes down between page load and upload
    before = files_under(settings.MEDIA_ROOT)  # the judgments, loaded before the switch
    response = post_run(client, participant)
    assert response.status_code == 503
    assert "The file store is not answering right now" in response.content.decode()
    assert "nothing was kept" in response.content.decode()
    assert not Submission.objects.exists()
    assert files_under(settings.MEDIA_ROOT) == before  # not stored locally instead


def test_an_upload_stored_in_the_bucket_is_deleted_when_its_row_is_not(
    s3_library, bucket, client, participant, monkeypatch
):
    """Nothing half-stored: the file reached the bucket, then the database failed."""
    judgments = s3_library.latest_judgments.file.name

    def failing_save(self, *args, **kwargs):
        raise DatabaseError("the database went away")

    monkeypatch.setattr(Submission, "save", failing_save)
    with pytest.raises(DatabaseError):
        post_run(client, participant)
    assert not Submission.objects.exists()
    assert bucket.keys() == [judgments]  # no orphan run file


def test_a_gzip_bomb_is_refused_and_nothing_reaches_the_bucket(
    s3_library, bucket, client, participant, settings
):
    settings.MAX_UNCOMPRESSED_MB = 10
    settings.MAX_GZIP_RATIO = 10**6  # the size limit, not the ratio, is what refuses it here
    response = post_run(client, participant, gzip_bomb(30, head=RUN_B), "run.txt.gz")
    assert response.status_code == 400
    assert "run.txt.gz: expands past 10 MB" in response.content.decode()
    assert bucket.keys() == [s3_library.latest_judgments.file.name]


def test_judgments_loaded_from_the_admin_side_go_to_the_bucket(s3_library, bucket):
    with open(DEMO / "qrels.txt", "rb") as qrels:
        stream = ContentFile(qrels.read() + b"stage-plays 0 doc-extra 1\n")
    judgments = load_judgments(s3_library, stream, "qrels-v2.txt")
    assert judgments.version == 2
    assert judgments.file.name in bucket.keys()
    assert bucket.read(judgments.file.name).endswith(b"stage-plays 0 doc-extra 1\n")


def test_a_run_missing_from_the_bucket_fails_with_its_name(s3_library, bucket, participant):
    run = _stored_run(s3_library, participant, "gone", RUN_B)
    bucket.server.client().delete_object(Bucket=bucket.name, Key=run.file.name)
    scoring.run_scoring(run.pk, "task-1")
    run.refresh_from_db()
    assert run.status == "failed"
    assert run.failure_reason.startswith("run.txt: File does not exist")


def test_judgments_missing_from_the_bucket_fail_the_run_without_blaming_it(
    s3_library, bucket, participant
):
    """Not "run.txt: File does not exist: judgments/library/v1-qrels.txt", which blamed
    the participant's file, named the store's path, and was mailed with "fix the file"."""
    run = _stored_run(s3_library, participant, "innocent", RUN_B)
    judgments = s3_library.latest_judgments
    bucket.server.client().delete_object(Bucket=bucket.name, Key=judgments.file.name)
    scoring._qrels_cached.cache_clear()  # a worker that never read them
    scoring.run_scoring(run.pk, "task-1")
    run.refresh_from_db()
    assert (run.status, run.failure_reason) == (
        "failed",
        "The benchmark's judgments (v1) are missing from the file store; contact the organizers.",
    )


def test_a_bucket_outage_while_scoring_is_retried_not_failed(library, participant, settings):
    run = _stored_run(library, participant, "later", RUN_B)  # on local disk
    server = S3Server()
    settings.STORAGES = {**settings.STORAGES, "default": Bucket(server, "lb-x").storage(timeout=1)}
    server.stop()
    scoring._qrels_cached.cache_clear()
    with pytest.raises(StorageUnavailable):
        scoring.run_scoring(run.pk, "task-1")
    run.refresh_from_db()
    assert run.status == "running"  # the task retries (tasks.RETRY) or gives it back


def _stored_run(benchmark, user, run_name: str, content: bytes) -> Submission:
    submission = Submission(benchmark=benchmark, participant=user, run_name=run_name)
    submission.original_name = "run.txt"
    submission.file.save("run.txt", ContentFile(content), save=False)
    submission.save()
    return submission


def test_judgments_uploaded_while_the_bucket_is_down_are_refused_with_a_message(
    client, organizer, settings
):
    from leaderboard.models import Benchmark, Judgments
    from tests.leaderboard.test_admin import benchmark_form

    server = S3Server()
    settings.STORAGES = {**settings.STORAGES, "default": Bucket(server, "lb-x").storage(timeout=1)}
    server.stop()
    client.force_login(organizer)
    qrels = SimpleUploadedFile("qrels.txt", (DEMO / "qrels.txt").read_bytes())
    response = client.post(
        "/admin/leaderboard/benchmark/add/", benchmark_form(qrels_file=qrels), follow=True
    )
    assert response.status_code == 200
    assert "The file store is not answering, so the judgments file was not stored" in (
        response.content.decode()
    )
    assert Benchmark.objects.filter(slug="robust").exists()
    assert not Judgments.objects.exists()


def test_judgments_stored_in_the_bucket_are_deleted_when_their_row_is_not(
    s3_library, bucket, monkeypatch
):
    from leaderboard.models import Judgments

    def failing_save(self, *args, **kwargs):
        raise DatabaseError("the database went away")

    monkeypatch.setattr(Judgments, "save", failing_save)
    before = bucket.keys()
    with pytest.raises(DatabaseError):
        load_judgments(s3_library, ContentFile(b"atwood 0 doc-9 1\n"), "qrels-v2.txt")
    assert bucket.keys() == before
