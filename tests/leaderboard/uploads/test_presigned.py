"""Presigned uploads against a real S3 endpoint (moto's server): the client PUTs the file
straight to the bucket with requests, then confirms; the platform checks the object from
the bucket as the upload form checks a posted file, and deletes what it refuses."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import requests
from django.utils import timezone

from leaderboard.models import PendingUpload, Submission
from leaderboard.uploads.presigned import (
    UploadRefused,
    confirm_upload,
    discard_expired,
    start_upload,
)
from tests import DEMO
from tests.hostile import gzip_bomb

RUN_B = (DEMO / "run-B.txt").read_bytes()

pytestmark = pytest.mark.django_db


@pytest.fixture
def s3_library(bucket, library):
    return library


def put(upload, content: bytes) -> requests.Response:
    return requests.put(upload.url, data=content, headers=upload.headers, timeout=10)


def key_of(upload) -> str:
    return PendingUpload.objects.get(token=upload.token).key


def test_a_run_put_to_the_presigned_url_is_confirmed_stored_and_scored(
    s3_library, bucket, participant, settings, django_capture_on_commit_callbacks
):
    upload = start_upload(participant, s3_library, file_name="run-B.txt", size=len(RUN_B))
    assert upload.method == "PUT" and upload.headers == {"Content-Length": str(len(RUN_B))}
    assert upload.expires > timezone.now() + dt.timedelta(minutes=59)
    assert not Submission.objects.exists()  # nothing until confirmed
    response = put(upload, RUN_B)
    assert response.status_code == 200, response.text
    key = key_of(upload)
    assert bucket.read(key) == RUN_B

    with django_capture_on_commit_callbacks(execute=False) as queued:
        submission = confirm_upload(participant, upload.token)
    submission.refresh_from_db()
    assert submission.run_name == "system-B"  # from the run's tag, as the form does
    assert submission.original_name == "run-B.txt"
    assert (submission.file.name, submission.size) == (key, len(RUN_B))
    assert submission.sha256 and submission.participant == participant
    # the lines the confirmation's check parsed are stored beside the object
    assert submission.parsed.name == f"parsed/{key.removeprefix('runs/')}.arrow"
    assert sorted(bucket.keys()) == sorted(
        [s3_library.latest_judgments.file.name, key, submission.parsed.name]
    )
    # scoring reads them, not the object: spoiled in the bucket, the run still scores
    bucket.server.client().put_object(Bucket=bucket.name, Key=key, Body=b"not a run\n")
    for callback in queued:
        callback()
    submission.refresh_from_db()
    assert submission.status == "scored", submission.failure_reason
    assert round(submission.current_result().summary["map"], 3) == 0.740
    assert not [p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file()]
    # a confirmation sent twice (the answer was lost) gives the same run
    assert confirm_upload(participant, upload.token) == submission
    assert Submission.objects.count() == 1


def test_a_bad_object_is_deleted_and_reported_with_its_line(s3_library, bucket, participant):
    bad = RUN_B + b"stage-plays Q0 doc-x 1 not-a-number system-B\n"
    upload = start_upload(participant, s3_library, file_name="mine.txt", size=len(bad))
    assert put(upload, bad).status_code == 200
    with pytest.raises(UploadRefused) as refused:
        confirm_upload(participant, upload.token)
    assert refused.value.status == 400
    assert refused.value.messages[0].startswith("mine.txt:39: ")
    assert bucket.keys() == [s3_library.latest_judgments.file.name]  # nor parsed lines
    assert not PendingUpload.objects.exists() and not Submission.objects.exists()


def test_a_bad_line_deep_in_the_object_is_refused_with_its_line(s3_library, bucket, participant):
    """Every line of the object is checked at confirmation, not only its first ones."""
    filler = b"".join(b"stage-plays Q0 filler-%d 1 1.5 system-B\n" % i for i in range(1500))
    bad = RUN_B + filler + b"stage-plays Q0 doc-x 1 not-a-number system-B\n"
    upload = start_upload(participant, s3_library, file_name="deep.txt", size=len(bad))
    assert put(upload, bad).status_code == 200
    key = key_of(upload)
    with pytest.raises(UploadRefused) as refused:
        confirm_upload(participant, upload.token)
    assert refused.value.status == 400
    line = bad.count(b"\n")
    assert refused.value.messages == [f"deep.txt:{line}: score 'not-a-number' is not a number"]
    assert key not in bucket.keys()
    assert not PendingUpload.objects.exists() and not Submission.objects.exists()


@pytest.mark.parametrize(
    ("ratio", "reason"),
    [(10**9, "run.txt.gz: expands past 10 MB"), (100, "run.txt.gz: expands more than 100 times")],
    ids=["size", "ratio"],
)
def test_a_gzip_bomb_in_the_bucket_is_refused_and_deleted(
    s3_library, bucket, participant, settings, ratio, reason
):
    settings.MAX_UNCOMPRESSED_MB = 10
    settings.MAX_GZIP_RATIO = ratio
    bomb = gzip_bomb(30, head=RUN_B)
    upload = start_upload(participant, s3_library, file_name="run.txt.gz", size=len(bomb))
    assert put(upload, bomb).status_code == 200
    with pytest.raises(UploadRefused) as refused:
        confirm_upload(participant, upload.token)
    assert refused.value.status == 400
    assert reason in refused.value.messages[0]
    assert bucket.keys() == [s3_library.latest_judgments.file.name]


def test_an_object_over_the_size_limit_is_deleted_without_reading_it(
    s3_library, bucket, participant, settings
):
    settings.MAX_UPLOAD_MB = 1
    with pytest.raises(UploadRefused) as refused:
        start_upload(participant, s3_library, file_name="big.txt", size=2 << 20)
    assert refused.value.status == 413
    assert "big.txt: the file is 2.0 MB; the limit is 1 MB." in refused.value.messages
    # a client that announced a small file and stored a large one anyway
    upload = start_upload(participant, s3_library, file_name="big.txt", size=1000)
    key = key_of(upload)
    bucket.server.client().put_object(Bucket=bucket.name, Key=key, Body=b"x" * (3 << 19))
    with pytest.raises(UploadRefused) as refused:
        confirm_upload(participant, upload.token)
    assert refused.value.status == 413
    assert "big.txt: the file is 1.5 MB; the limit is 1 MB." in refused.value.messages
    assert key not in bucket.keys()


def test_confirming_before_the_put_keeps_the_upload_open(s3_library, bucket, participant):
    upload = start_upload(participant, s3_library, file_name="run-B.txt", size=len(RUN_B))
    with pytest.raises(UploadRefused) as refused:
        confirm_upload(participant, upload.token)
    assert refused.value.status == 409
    assert "run-B.txt: nothing was uploaded to the URL yet." in refused.value.messages
    assert put(upload, RUN_B).status_code == 200
    assert confirm_upload(participant, upload.token).run_name == "system-B"


def test_only_the_uploader_confirms(s3_library, bucket, participant, other_participant):
    upload = start_upload(participant, s3_library, file_name="run-B.txt", size=len(RUN_B))
    put(upload, RUN_B)
    for user, token in [(other_participant, upload.token), (participant, "0" * 32)]:
        with pytest.raises(UploadRefused) as refused:
            confirm_upload(user, token)
        assert refused.value.status == 404
    assert key_of(upload) in bucket.keys()


def test_start_refuses_what_the_form_would(s3_library, bucket, participant):
    cases = [
        (dict(file_name="run.txt", size=0), 400, "run.txt: the file is empty."),
        (dict(file_name="run.txt", size=10, run_name="no spaces"), 400, "Use 1 to 40 letters"),
    ]
    for kwargs, status, message in cases:
        with pytest.raises(UploadRefused) as refused:
            start_upload(participant, s3_library, **kwargs)
        assert refused.value.status == status
        assert message in " ".join(refused.value.messages)
    s3_library.is_open = False
    s3_library.save()
    with pytest.raises(UploadRefused) as refused:
        start_upload(participant, s3_library, file_name="run.txt", size=10)
    assert refused.value.status == 403
    assert not PendingUpload.objects.exists()


def test_the_daily_limit_is_checked_again_at_confirmation(s3_library, bucket, participant):
    first = start_upload(participant, s3_library, file_name="run-B.txt", size=len(RUN_B))
    second = start_upload(participant, s3_library, file_name="run-B.txt", size=len(RUN_B))
    s3_library.daily_limit = 1  # lowered by the organizer meanwhile
    s3_library.save()
    put(first, RUN_B)
    put(second, RUN_B.replace(b"system-B", b"system-C"))
    confirm_upload(participant, first.token)
    key = key_of(second)
    with pytest.raises(UploadRefused) as refused:
        confirm_upload(participant, second.token)
    assert refused.value.status == 429
    assert any(
        m.startswith("You have used all 1 submissions for today; the count resets at ")
        and m.endswith(" UTC.")
        for m in refused.value.messages
    )
    assert key not in bucket.keys()
    assert Submission.objects.count() == 1


def test_expired_uploads_are_discarded_object_and_row(s3_library, bucket, participant):
    upload = start_upload(participant, s3_library, file_name="run-B.txt", size=len(RUN_B))
    kept = start_upload(participant, s3_library, file_name="run-B.txt", size=len(RUN_B))
    put(upload, RUN_B)
    put(kept, RUN_B)
    key, kept_key = key_of(upload), key_of(kept)
    PendingUpload.objects.filter(token=upload.token).update(
        expires=timezone.now() - dt.timedelta(seconds=1)
    )
    assert discard_expired() == 1
    assert key not in bucket.keys() and kept_key in bucket.keys()
    with pytest.raises(UploadRefused) as refused:
        confirm_upload(participant, upload.token)
    assert refused.value.status == 404
    PendingUpload.objects.filter(token=kept.token).update(
        expires=timezone.now() - dt.timedelta(seconds=1)
    )
    with pytest.raises(UploadRefused) as refused:
        confirm_upload(participant, kept.token)
    assert refused.value.status == 410
    assert kept_key not in bucket.keys()


def test_without_a_bucket_there_is_no_presigned_upload(library, participant):
    with pytest.raises(UploadRefused) as refused:
        start_upload(participant, library, file_name="run.txt", size=10)
    assert refused.value.status == 501
    assert "AWS_STORAGE_BUCKET_NAME" in refused.value.messages[0]


def test_urls_are_signed_for_the_address_clients_reach_the_bucket_at(
    s3_library, bucket, participant, settings
):
    """MinIO in docker-compose is http://minio:9000 to web and workers, and the host's
    own name to participants: the URL carries the latter and the PUT still works."""
    settings.PRESIGNED_ENDPOINT_URL = bucket.server.url.replace("127.0.0.1", "localhost")
    upload = start_upload(participant, s3_library, file_name="run-B.txt", size=len(RUN_B))
    assert upload.url.startswith(f"{settings.PRESIGNED_ENDPOINT_URL}/{bucket.name}/runs/")
    assert put(upload, RUN_B).status_code == 200
    assert confirm_upload(participant, upload.token).run_name == "system-B"


def test_beat_discards_expired_uploads_every_hour(s3_library, bucket, participant, settings):
    from leaderboard.pipeline import tasks

    entry = settings.CELERY_BEAT_SCHEDULE["discard-expired-uploads"]
    assert entry["task"] == tasks.discard_expired_uploads.name
    assert entry["schedule"] == 3600.0
    upload = start_upload(participant, s3_library, file_name="run-B.txt", size=len(RUN_B))
    put(upload, RUN_B)
    key = key_of(upload)
    assert tasks.discard_expired_uploads.delay().get() == 0  # not expired yet
    PendingUpload.objects.update(expires=timezone.now() - dt.timedelta(seconds=1))
    assert tasks.discard_expired_uploads.delay().get() == 1
    assert key not in bucket.keys() and not PendingUpload.objects.exists()


def test_open_uploads_are_bounded_by_the_daily_limit(s3_library, bucket, participant):
    """Each open upload may hold up to MAX_UPLOAD_MB of bucket space until it expires."""
    s3_library.daily_limit = 2
    s3_library.save()
    first = start_upload(participant, s3_library, file_name="a.txt", size=len(RUN_B))
    start_upload(participant, s3_library, file_name="b.txt", size=len(RUN_B))
    with pytest.raises(UploadRefused) as refused:
        start_upload(participant, s3_library, file_name="c.txt", size=len(RUN_B))
    assert refused.value.status == 429
    assert "You have 2 uploads open on this benchmark" in refused.value.messages[0]
    PendingUpload.objects.filter(token=first.token).update(
        expires=timezone.now() - dt.timedelta(seconds=1)
    )
    assert start_upload(participant, s3_library, file_name="c.txt", size=len(RUN_B)).token


def test_a_presigned_object_is_kept_when_its_row_cannot_be_stored(
    s3_library, bucket, participant, monkeypatch
):
    """The database failed at confirmation: the upload stays open, to confirm again."""
    from django.db import DatabaseError

    upload = start_upload(participant, s3_library, file_name="run-B.txt", size=len(RUN_B))
    put(upload, RUN_B)
    real_save = Submission.save

    def failing_save(self, *args, **kwargs):
        raise DatabaseError("the database went away")

    monkeypatch.setattr(Submission, "save", failing_save)
    with pytest.raises(DatabaseError):
        confirm_upload(participant, upload.token)
    # the object stays, its parsed lines do not
    assert sorted(bucket.keys()) == sorted([s3_library.latest_judgments.file.name, key_of(upload)])
    monkeypatch.setattr(Submission, "save", real_save)
    assert confirm_upload(participant, upload.token).run_name == "system-B"


def test_refused_confirmations_spend_the_budget_and_then_no_upload_starts(
    s3_library, bucket, participant, settings
):
    settings.UPLOAD_REFUSAL_LIMIT = 2
    bad = RUN_B + b"stage-plays Q0 doc-x 1 not-a-number system-B\n"
    for _ in range(2):
        upload = start_upload(participant, s3_library, file_name="bad.txt", size=len(bad))
        assert put(upload, bad).status_code == 200
        with pytest.raises(UploadRefused) as refused:
            confirm_upload(participant, upload.token)
        assert refused.value.status == 400
    with pytest.raises(UploadRefused) as early:
        start_upload(participant, s3_library, file_name="good.txt", size=len(RUN_B))
    assert early.value.status == 429
    assert "Your last 2 uploads were refused" in early.value.messages[0]
    assert not PendingUpload.objects.exists()
