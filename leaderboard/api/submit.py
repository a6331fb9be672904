"""Submitting a run: ``POST /api/benchmarks/<slug>/submissions/`` (multipart).

- **One path with the web form.** ``uploads.receiving.receive_run`` checks, stores and
  queues the run, so both refuse the same files for the same reasons and share the daily
  limit. The body is read by Django's own multipart parser there (DRF's is declared for
  the schema only), so an oversized body is refused before it is spooled.
- **409, never a second copy.** A run name already taken on the benchmark, or a file
  this participant already submitted to it (same SHA-256), is a 409 whose
  ``details.existing`` names the run and, when the caller may see it, its URL.
- **Idempotency-Key.** A request carrying the header claims the key (per user) before it
  is answered; a retry with the same key gets the first answer again (header
  ``Idempotent-Replayed: true``), a retry while the first is still running a 409, and
  the key on another benchmark a 422. Answers that a retry should not get again (429,
  any 5xx) are not kept. Keys are forgotten after ``IDEMPOTENCY_KEY_HOURS``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import UnreadablePostError
from django.http.multipartparser import MultiPartParserError
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from leaderboard.api import serializers as s
from leaderboard.api.base import ApiView
from leaderboard.api.errors import ApiError
from leaderboard.api.schema import errors
from leaderboard.models import Benchmark, IdempotencyKey, Submission
from leaderboard.reading.visibility import error_body, visible_benchmark
from leaderboard.uploads.forms import RUN_NAME_TAKEN, max_upload_bytes
from leaderboard.uploads.receiving import Outcome, receive_run

KEPT = {201, 400, 403, 409, 413}  # answers replayed to a retry with the same key
# What an Idempotency-Key may be: 1 to 255 visible ASCII characters (no space: HTTP trims
# a header's ends). The schema declares it; any other key is refused with a 400.
KEY_PATTERN = re.compile(r"[!-~]{1,255}")

IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    {"type": "string", "pattern": f"^{KEY_PATTERN.pattern}$", "minLength": 1, "maxLength": 255},
    OpenApiParameter.HEADER,
    description="Any unique string of 1 to 255 visible ASCII characters (a UUID). A retry "
    "with the same key returns the first answer instead of submitting again; any other "
    "key is a 400.",
)


class Submit(ApiView):
    permission_classes = [IsAuthenticated]
    token_action = "submit"  # a token of scope submit may
    parser_classes = [MultiPartParser]
    serializer_class = s.UploadSerializer

    @extend_schema(
        operation_id="submitRun",
        summary="Submit a run",
        description="Validated as the web form validates it and counted against the same "
        "daily limit; scored in the background (poll the run's `url`).",
        request={"multipart/form-data": s.UploadSerializer},
        parameters=[IDEMPOTENCY_KEY],
        examples=[
            OpenApiExample(
                "A one-line run",
                value={"file": "cs-foundations Q0 cs-foundations-rel-01 1 1.0 example\n"},
                request_only=True,
                media_type="multipart/form-data",
            )
        ],
        responses={
            201: OpenApiResponse(s.SubmissionSerializer, description="Stored and queued."),
            **errors(400, 401, 403, 404, 409, 413, 429),
            422: OpenApiResponse(
                s.ErrorSerializer, description="The Idempotency-Key was used on another request."
            ),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        benchmark = visible_benchmark(request, slug)
        return idempotent(request, lambda: self.submit(request, benchmark))

    def submit(self, request: Request, benchmark: Benchmark) -> Response:
        try:
            outcome = receive_run(request._request, benchmark, request.user, refuse_identical=True)
        except RequestDataTooBig as error:
            raise ApiError(413, "The request's form fields are too large.") from error
        except (MultiPartParserError, SuspiciousOperation, UnreadablePostError) as error:
            raise ApiError(400, f"Could not read the upload: {error}") from error
        if outcome.submission is not None:
            context = {"request": request, "results": {}}
            data = s.SubmissionSerializer(outcome.submission, context=context).data
            location = reverse("api_submission", args=[outcome.submission.pk])
            return Response(data, status=201, headers={"Location": location})
        raise refusal(request, benchmark, outcome)


def idempotent(request: Request, answer: Callable[[], Response]) -> Response:
    """``answer()``, or, for a request whose ``Idempotency-Key`` was seen before, the
    first request's answer again (or a 409 while it is still being answered)."""
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return answer()
    if not KEY_PATTERN.fullmatch(key):
        raise ApiError(400, "The Idempotency-Key must be 1 to 255 visible ASCII characters.")
    row, first = IdempotencyKey.claim(request.user, key, request.path)
    if not first:
        return replay(request, row)
    try:
        response = answer()
    except ApiError as error:
        if error.status_code in KEPT:
            row.answer(error.status_code, error_body(error.message, error.details))
        else:
            row.release()
        raise
    except BaseException:
        row.release()
        raise
    row.answer(response.status_code, response.data, response.get("Location", ""))
    return response


def replay(request: Request, row: IdempotencyKey | None) -> Response:
    if row is None or row.status is None:
        raise ApiError(
            409,
            "A request with this Idempotency-Key is still being answered; retry shortly.",
            headers={"Retry-After": "1"},
        )
    if row.path != request.path:
        raise ApiError(422, "This Idempotency-Key was used on another request; use a new key.", {})
    headers = {"Idempotent-Replayed": "true"}
    if row.location:
        headers["Location"] = row.location
    return Response(row.body, status=row.status, headers=headers)


def refusal(request: Request, benchmark: Benchmark, outcome: Outcome) -> ApiError:
    """Why the run was not stored, as the error to answer with."""
    form = outcome.form
    if form is None or not form.errors:
        wait = {"Retry-After": str(outcome.retry_after)} if outcome.retry_after else {}
        return ApiError(outcome.status, outcome.refusal or "The run was not accepted.", {}, wait)
    details: dict = {
        ("non_field" if field == "__all__" else field): [str(m) for m in messages]
        for field, messages in form.errors.items()
    }
    message = next(iter(details.values()))[0]
    status, headers = outcome.status, {}
    existing = outcome.existing
    if form.has_error("run_name", RUN_NAME_TAKEN):
        status = 409
        existing = (
            Submission.objects.for_benchmark(benchmark)
            .holding_name(form.cleaned_data.get("run_name", ""))
            .first()
        )
    if status == 409 and existing is not None:
        details["existing"] = existing_run(request, existing)
    reached = getattr(form, "limit_reached", None)
    if status == 429 and reached is not None:
        details["limit"] = reached.limit
        if reached.resets_at is not None:  # a limit on a whole phase never resets
            details["resets_at"] = reached.resets_at.isoformat()
            seconds = (reached.resets_at - timezone.now()).total_seconds()
            headers["Retry-After"] = str(max(int(seconds), 1))
    elif status == 413:
        details["limit_bytes"] = max_upload_bytes()
    return ApiError(status, message, details, headers)


def existing_run(request: Request, run: Submission) -> dict:
    """The run a 409 is about: its name, and its id and URLs if the caller may see it."""
    named: dict = {"run_name": run.run_name}
    if run.is_visible_to(request.user):
        named["id"] = run.pk
        named["url"] = request.build_absolute_uri(reverse("api_submission", args=[run.pk]))
        named["page"] = request.build_absolute_uri(run.get_absolute_url())
    return named
