"""Presigned uploads: a large run goes from the client straight into the bucket.

When files live in an S3-compatible bucket, a 300 MB run need not stream through a web
process. The client asks for an upload (``start_upload``: the benchmark, the file's name
and size, optionally a run name and a description) and gets a presigned PUT URL, valid
``PRESIGNED_UPLOAD_SECONDS``; it PUTs the file there (with the announced
``Content-Length``, which the signature covers), then confirms (``confirm_upload``).
Confirming checks the object from the bucket exactly as the upload form checks a posted
file (``SubmissionForm``: size limit, every line streamed through the engine's
``check_run`` so a gzip bomb is refused once it expands past ``MAX_UNCOMPRESSED_MB``,
the run's needs against the judged ones, the run name), then stores the ``Submission``
(daily limit under the same row lock as a posted upload) with the lines the check parsed
(scoring reads those, not the object) and queues its scoring. An
object that fails a check is deleted and the reasons come back as ``file:line: reason``.
A confirmation sent twice returns the same run. Uploads never confirmed are deleted,
object and row, by ``discard_expired``.

Every refusal is ``UploadRefused`` with an HTTP status for the API to answer with.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from dataclasses import dataclass, field

import boto3
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from leaderboard.models import Benchmark, PendingUpload, Profile, Submission, run_name_validator
from leaderboard.models.submissions import keep_name, safe_file_name
from leaderboard.pipeline.files import (
    StorageUnavailable,
    discard,
    discard_expired_uploads,
    local_copy,
    unavailable_as_error,
)
from leaderboard.uploads import refusals
from leaderboard.uploads.forms import SubmissionForm, max_upload_bytes
from leaderboard.uploads.receiving import STORE_DOWN, store_run

log = logging.getLogger(__name__)


class UploadRefused(Exception):
    """A presigned upload refused: ``status`` to answer with, ``messages`` to show."""

    def __init__(self, status: int, *messages: str) -> None:
        super().__init__("; ".join(messages))
        self.status = status
        self.messages = list(messages)


@dataclass(frozen=True)
class PresignedUpload:
    """What the client needs: PUT the file to ``url`` with ``headers`` before ``expires``,
    then confirm with ``token``."""

    token: str
    url: str
    expires: dt.datetime
    headers: dict[str, str] = field(default_factory=dict)
    method: str = "PUT"


def _storage():
    return Submission._meta.get_field("file").storage


def _presigning_client(storage):
    """The boto3 client that signs upload URLs: the storage's own, or one for the address
    clients reach the bucket at (``PRESIGNED_ENDPOINT_URL``), since the signature
    covers the host."""
    if not settings.PRESIGNED_ENDPOINT_URL:
        return storage.connection.meta.client
    return boto3.session.Session(
        aws_access_key_id=storage.access_key,
        aws_secret_access_key=storage.secret_key,
        aws_session_token=storage.security_token,
    ).client(
        "s3",
        endpoint_url=settings.PRESIGNED_ENDPOINT_URL,
        region_name=storage.region_name,
        config=storage.client_config,
    )


def available() -> bool:
    """True when files live in an S3-compatible bucket, the only place a client can PUT to."""
    return hasattr(_storage(), "bucket_name")


def start_upload(
    user,
    benchmark: Benchmark,
    *,
    file_name: str,
    size: int,
    run_name: str = "",
    description: str = "",
) -> PresignedUpload:
    """Open a presigned upload of a run of ``size`` bytes named ``file_name``.

    Refuses (``UploadRefused``) with 501 when files are not in a bucket, 403 when the
    benchmark is closed, 413 when ``size`` is over ``MAX_UPLOAD_MB``, 400 for an empty
    file or a bad or taken run name, 429 when the day's submissions are used up (checked
    again at confirmation) or too many uploads were refused lately
    (:mod:`~leaderboard.uploads.refusals`), 503 when the bucket does not answer.
    """
    if not available():
        raise UploadRefused(
            501, "Direct uploads need object storage (AWS_STORAGE_BUCKET_NAME); post the file."
        )
    window = benchmark.window()
    if window.refusal:
        raise UploadRefused(403, window.refusal)
    wait = refusals.seconds_to_wait(user)
    if wait:
        raise UploadRefused(429, refusals.too_many(wait))
    name = os.path.basename(file_name or "") or "run"
    if size <= 0:
        raise UploadRefused(400, f"{name}: the file is empty.")
    if size > max_upload_bytes():
        raise UploadRefused(
            413,
            f"{name}: the file is {size / 1048576:.1f} MB; the limit is {settings.MAX_UPLOAD_MB} MB.",
        )
    if run_name:
        try:
            run_name_validator(run_name)
        except ValidationError as error:
            raise UploadRefused(400, *error.messages) from error
        if Submission.objects.for_benchmark(benchmark).holding_name(run_name).exists():
            raise UploadRefused(400, f"A run named {run_name!r} already exists on this benchmark.")
    reached = window.limit_reached(benchmark, user, Profile.find(user).team, timezone.now())
    if reached:
        raise UploadRefused(429, reached.message)
    # Open uploads hold bucket space until they expire: no more than the day's limit.
    open_uploads = PendingUpload.objects.filter(
        participant=user, benchmark=benchmark, submission__isnull=True, expires__gte=timezone.now()
    ).count()
    if open_uploads >= benchmark.daily_limit:
        raise UploadRefused(
            429,
            f"You have {open_uploads} uploads open on this benchmark; confirm them or let "
            "them expire before starting another.",
        )
    pending = PendingUpload(
        benchmark=benchmark,
        participant=user,
        original_name=keep_name(file_name or ""),
        run_name=run_name,
        description=description,
        size=size,
        expires=timezone.now() + dt.timedelta(seconds=settings.PRESIGNED_UPLOAD_SECONDS),
    )
    pending.key = f"runs/{benchmark.slug}/upload-{pending.token[:12]}-{safe_file_name(name)}"
    storage = _storage()
    try:
        with unavailable_as_error("presigning an upload"):
            url = _presigning_client(storage).generate_presigned_url(
                "put_object",
                Params={
                    "Bucket": storage.bucket_name,
                    "Key": pending.key,
                    "ContentLength": size,
                },
                ExpiresIn=settings.PRESIGNED_UPLOAD_SECONDS,
                HttpMethod="PUT",
            )
    except StorageUnavailable as error:
        raise UploadRefused(503, STORE_DOWN) from error
    pending.save()
    return PresignedUpload(
        token=pending.token,
        url=url,
        expires=pending.expires,
        headers={"Content-Length": str(size)},
    )


def confirm_upload(user, token: str) -> Submission:
    """Check the object ``user`` PUT for the upload ``token`` and make it a run.

    Returns the new ``Submission`` (queued for scoring), or the same one again for a
    confirmation sent twice. Refuses (``UploadRefused``) with 404 for an unknown token
    (or another user's), 409 while nothing was PUT yet (the upload stays open), 410 once
    it expired, 403 when the benchmark closed meanwhile, 413, 400 or 429 for what the
    upload form refuses (the object is deleted then: upload again), 503 when the bucket
    does not answer (the upload stays open; confirm again).

    The upload's row stays locked while it is checked, so two confirmations of one
    upload run one after the other: the second finds the run the first made.
    """
    with transaction.atomic():
        pending = (
            PendingUpload.objects.select_for_update(of=("self",))
            .select_related("benchmark")
            .filter(token=token, participant=user)
            .first()
        )
        if pending is None:
            raise UploadRefused(404, "No such upload.")
        if pending.submission_id is not None:
            return pending.submission
        try:
            submission = _check_and_store(user, pending)
        except UploadRefused as error:
            refused = error  # raised once the transaction kept what _drop did
        else:
            pending.submission = submission
            pending.save(update_fields=["submission"])
            return submission
    raise refused


def _check_and_store(user, pending: PendingUpload) -> Submission:
    storage = _storage()
    name = pending.original_name or os.path.basename(pending.key)
    if pending.is_expired:
        _drop(pending)
        raise UploadRefused(410, "This upload expired; start a new one.")
    refusal = pending.benchmark.window(started=pending.created).refusal
    if refusal:  # the upload began when it was opened: the grace counts from there
        _drop(pending)
        raise UploadRefused(403, refusal)
    try:
        with unavailable_as_error(f"checking {pending.key}"):
            size = storage.size(pending.key)
        if size > max_upload_bytes():  # never downloaded
            _drop(pending)
            raise UploadRefused(
                413,
                f"{name}: the file is {size / 1048576:.1f} MB; "
                f"the limit is {settings.MAX_UPLOAD_MB} MB.",
            )
        with local_copy((storage, pending.key)) as path, open(path, "rb") as handle:
            upload = UploadedFile(handle, name=name, size=size)
            form = SubmissionForm(
                {"run_name": pending.run_name, "description": pending.description},
                {"file": upload},
                benchmark=pending.benchmark,
            )
            try:
                if not form.is_valid():
                    _drop(pending)
                    if "file" in form.errors:
                        refusals.count(user)
                    raise UploadRefused(400, *_messages(form))
                # the object is stored already: its parsed lines and the row are written
                submission, status = store_run(
                    user, pending.benchmark, form, pending.created, stored_name=pending.key
                )
            finally:  # the check's parse, in a temporary file: stored or not, it goes
                if getattr(upload, "parsed", None) is not None:
                    upload.parsed.close()
    except FileNotFoundError as error:
        raise UploadRefused(409, f"{name}: nothing was uploaded to the URL yet.") from error
    except StorageUnavailable as error:
        raise UploadRefused(503, STORE_DOWN) from error
    if submission is None:  # the daily limit, or the run name taken meanwhile
        _drop(pending)
        raise UploadRefused(status, *_messages(form))
    return submission


def _messages(form: SubmissionForm) -> list[str]:
    return [message for messages in form.errors.values() for message in messages]


def _drop(pending: PendingUpload) -> None:
    """The upload is over without a run: its object and its row go."""
    discard(_storage(), pending.key)
    pending.delete()


def discard_expired(now: dt.datetime | None = None) -> int:
    """Delete every upload never confirmed whose URL has expired, object and row; how
    many. (Beat runs the same hourly: ``leaderboard.tasks.discard_expired_uploads``.)"""
    return discard_expired_uploads(now)
