"""The one path a run takes into the platform: check, store and queue an upload.

The upload form (``views.submit``), the API's submit endpoint and the presigned upload's
confirmation all come through here, so they refuse the same files for the same reasons
and share the daily limit.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.http import HttpRequest
from django.utils import timezone

from leaderboard.models import Benchmark, Profile, Submission
from leaderboard.models.submissions import keep_name
from leaderboard.pipeline.files import StorageUnavailable, discard, save, sha256_of
from leaderboard.pipeline.tasks import queue_scoring
from leaderboard.uploads import refusals
from leaderboard.uploads.forms import RUN_NAME_TAKEN, SubmissionForm, max_upload_bytes
from leaderboard.uploads.middleware import request_started

STORE_DOWN = (
    "The file store is not answering right now, so your run was not stored (nothing "
    "was kept). Please try again in a few minutes."
)


@dataclass
class Outcome:
    """What became of an uploaded run: stored (``submission``), or refused with a status
    code and either form errors or, before the form could run, a ``refusal``."""

    status: int
    form: SubmissionForm | None = None
    submission: Submission | None = None
    refusal: str = ""
    existing: Submission | None = None  # with 409: the same file, submitted before
    retry_after: int | None = None  # with 429: seconds until an upload may be tried again


def receive_run(
    request: HttpRequest, benchmark: Benchmark, user, refuse_identical: bool = False
) -> Outcome:
    """Check, store and queue a run posted as ``file``, ``run_name``, ``description``.

    The one path for the upload form and the API, so both refuse the same files for the
    same reasons and share the daily limit. Status: 201 stored, 400 invalid, 403 closed (or outside every phase),
    413 too large, 429 daily limit reached or too many refused uploads lately
    (:mod:`~leaderboard.uploads.refusals`: refused before the body is read), 503 the file
    store did not answer; with ``refuse_identical``, 409 when this user already submitted
    the same bytes to this benchmark (``Outcome.existing`` is that run).
    """
    wait = refusals.seconds_to_wait(user)
    if wait:
        return Outcome(429, refusal=refusals.too_many(wait), retry_after=wait)
    # Refuse an oversized body before Django spools it to disk.
    if content_length(request) > max_upload_bytes() + 1_048_576:
        refusals.count(user)
        refusal = f"The upload is larger than the limit of {max_upload_bytes() // 1048576} MB."
        return Outcome(413, refusal=refusal)
    started = request_started(request)
    refusal = benchmark.window(started).refusal
    if refusal:
        return Outcome(403, refusal=refusal)
    form = SubmissionForm(request.POST, request.FILES, benchmark=benchmark)
    try:
        return _store_valid(form, request, benchmark, user, refuse_identical, started)
    finally:  # stored by now (moved, on local disk), or not to be stored
        parsed = getattr(request.FILES.get("file"), "parsed", None)
        if parsed is not None:
            parsed.close()


def _store_valid(
    form: SubmissionForm,
    request: HttpRequest,
    benchmark: Benchmark,
    user,
    refuse_identical: bool,
    started: dt.datetime,
) -> Outcome:
    """:func:`receive_run` once the form is made: validate it, refuse an identical file
    (with ``refuse_identical``), store and queue."""
    if not form.is_valid():
        upload = request.FILES.get("file")
        too_large = upload is not None and upload.size > max_upload_bytes()
        if "file" in form.errors:
            refusals.count(user)
        return Outcome(413 if too_large else 400, form=form)
    if refuse_identical:
        existing = _identical(user, benchmark, form)
        if existing is not None:
            return Outcome(409, form=form, existing=existing)
    try:
        submission, status = store_run(user, benchmark, form, started)
    except StorageUnavailable:
        return Outcome(503, form=form, refusal=STORE_DOWN)
    return Outcome(status, form=form, submission=submission)


def _identical(user, benchmark: Benchmark, form: SubmissionForm) -> Submission | None:
    """This user's run on this benchmark with the same file (its SHA-256), if any: one
    that holds its name (a failed or withdrawn run's file may be sent again)."""
    upload = form.cleaned_data["file"]
    sha256, _ = form.digest or _hash(upload)
    existing = (
        Submission.objects.for_benchmark(benchmark)
        .holding_names()
        .filter(participant=user, sha256=sha256)
        .order_by("created")
        .first()
    )
    if existing is not None:
        form.add_error(
            "file", f"You already submitted this file to this benchmark as {existing.run_name}."
        )
    return existing


def _hash(upload) -> tuple[str, int]:
    """SHA-256 and size of an upload the form did not hash (one held in memory)."""
    digest = sha256_of(upload.chunks())
    upload.seek(0)
    return digest


def store_run(
    user, benchmark: Benchmark, form: SubmissionForm, started: dt.datetime, stored_name: str = ""
) -> tuple[Submission | None, int]:
    """Store and queue the run; or add an error and give the status code to answer with.

    ``stored_name``: the file is already in the storage under that name (a presigned
    upload, checked from the bucket), so only its parsed lines and the row are written.

    The user's row is locked while counting, so two concurrent uploads cannot both take
    the last slot of the day. The file is stored (in the bucket, or under MEDIA_ROOT)
    inside the transaction: if the store does not answer, ``StorageUnavailable`` and no
    row; if anything fails after it was stored, the stored file is deleted again, so
    nothing is left half-stored.
    """
    upload = form.cleaned_data["file"]
    sha256, size = form.digest or _hash(upload)
    with transaction.atomic():
        get_user_model().objects.select_for_update().get(pk=user.pk)
        window = benchmark.window(started)
        if window.refusal:
            form.add_error(None, window.refusal)
            return None, 403
        team = Profile.find(user).team
        form.limit_reached = window.limit_reached(benchmark, user, team, timezone.now())
        if form.limit_reached:
            form.add_error(None, form.limit_reached.message)
            return None, 429
        taken = "A run with this name was just submitted."
        if (
            Submission.objects.for_benchmark(benchmark)
            .holding_name(form.cleaned_data["run_name"])
            .exists()
        ):
            form.add_error("run_name", ValidationError(taken, code=RUN_NAME_TAKEN))
            return None, 400
        submission = Submission(
            benchmark=benchmark,
            participant=user,
            phase=window.phase,
            team=team,
            run_name=form.cleaned_data["run_name"],
            description=form.cleaned_data["description"],
            size=size,
            sha256=sha256,
            original_name=keep_name(upload.name or ""),
        )
        try:
            if stored_name:
                submission.file.name = stored_name
            else:  # submission_path makes the stored name short and safe from this one
                save(submission.file, _gz_suffixed(upload), upload)
            parsed = getattr(upload, "parsed", None)
            if parsed is not None:  # what the check parsed: scoring reads it
                save(submission.parsed, parsed.name, parsed)
            try:
                with transaction.atomic():
                    submission.save()
            except IntegrityError:  # another user's upload took the name meanwhile
                form.add_error("run_name", ValidationError(taken, code=RUN_NAME_TAKEN))
                _discard_files(submission, keep_file=bool(stored_name))
                return None, 400
            queue_scoring(submission)
        except BaseException:
            # no orphan file; a presigned upload's object stays (confirm again)
            _discard_files(submission, keep_file=bool(stored_name))
            raise
    return submission, 201


def _discard_files(submission: Submission, keep_file: bool = False) -> None:
    """Delete the run's stored parsed lines and, unless ``keep_file``, its file (best
    effort): no orphan is left."""
    if not keep_file:
        discard(submission.file.storage, submission.file.name)
    discard(submission.parsed.storage, submission.parsed.name)


def _gz_suffixed(upload) -> str:
    """The upload's name, ending in ``.gz`` exactly when its content is gzip."""
    upload.seek(0)
    gzipped = upload.read(2) == b"\x1f\x8b"
    upload.seek(0)
    name = upload.name or "run"
    if name.lower().endswith(".gz") and not gzipped:
        return name[:-3]
    return name + ".gz" if gzipped and not name.lower().endswith(".gz") else name


def content_length(request: HttpRequest) -> int:
    """The request's declared body size in bytes; 0 when absent or not a number."""
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0
