"""The JSON API (``/api/``): token-authenticated reads and run submission.

Plain Django function views: six endpoints do not need a REST framework. Decisions:

- **Token only.** ``Authorization: Bearer <token>`` names the caller; without the header
  the caller is anonymous and sees what an anonymous reader sees. The session cookie is
  ignored, which is why every view can be ``csrf_exempt``: a cross-site form cannot add
  the header, so there is no ambient authority to forge. A header that is present but
  wrong is a 401, never a silent downgrade to anonymous. Too many wrong tokens from one
  address are a 429 with ``Retry-After`` (``accounts/throttle.py``).
- **Same rules as the pages.** Visibility comes from the same querysets and helpers as
  the pages; uploads go through ``uploads.receive_run``, the web form's own path, so both
  refuse the same files for the same reasons and share the daily limit.
- **Errors** are ``{"error": message, "details": {...}}`` with the status code saying
  which kind; nothing a client sends ends in a 500. Should a bug raise anyway, the
  site's error handlers (``server_error`` and friends, set in ``leaderboard/urls.py``)
  answer JSON under /api/ too, and the site's HTML pages elsewhere.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    JsonResponse,
    UnreadablePostError,
)
from django.http.multipartparser import MultiPartParserError
from django.urls import reverse
from django.utils import timezone
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt

from evaluation.measures import UnknownMeasure
from leaderboard.accounts.throttle import client_address, token_failed, token_wait
from leaderboard.api import openapi
from leaderboard.models import ApiToken, Benchmark, Profile, Result, Submission, utc_day_start
from leaderboard.pages.boards import build_leaderboard, unknown_measure_message
from leaderboard.pages.shortcuts import shown_result, visible_benchmark, visible_submission
from leaderboard.uploads.forms import max_upload_bytes
from leaderboard.uploads.views import receive_run


class ApiError(Exception):
    """An answer other than success: status code, message and structured details."""

    def __init__(
        self,
        status: int,
        message: str,
        details: dict | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.message = status, message
        self.details, self.headers = details or {}, headers or {}

    def response(self) -> JsonResponse:
        response = JsonResponse(
            {"error": self.message, "details": self.details}, status=self.status
        )
        for name, value in self.headers.items():
            response[name] = value
        return response


def _caller(request: HttpRequest):
    """The token's user, or AnonymousUser without an Authorization header."""
    header = request.headers.get("Authorization")
    if header is None:
        return AnonymousUser()
    scheme, _, raw = header.strip().partition(" ")
    raw = raw.strip()
    if scheme.lower() != "bearer" or not raw:
        raise ApiError(
            401,
            "Send the token as 'Authorization: Bearer <token>'.",
            headers={"WWW-Authenticate": 'Bearer error="invalid_request"'},
        )
    address = client_address(request)
    wait = token_wait(address)
    if wait == 0:
        user = ApiToken.authenticate(raw)
        if user is not None:
            return user
        wait = token_failed(address)
    if wait:
        raise ApiError(
            429,
            f"Too many unknown tokens from your address; try again in {wait} s.",
            {"retry_after": wait},
            {"Retry-After": str(wait)},
        )
    raise ApiError(
        401,
        "Unknown or revoked token.",
        headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
    )


def api_view(*methods: str, login: bool = False) -> Callable:
    """Allowed methods (405 otherwise), token authentication (401 when ``login`` and
    anonymous), and every refusal answered as JSON. The methods are kept on the view as
    ``api_methods`` so the schema test can check each one is documented."""

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @csrf_exempt
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            try:
                if request.method not in methods:
                    raise ApiError(
                        405,
                        f"{request.method} is not allowed here; use {', '.join(methods)}.",
                        {"allowed": list(methods)},
                        {"Allow": ", ".join(methods)},
                    )
                request.user = _caller(request)
                if login and not request.user.is_authenticated:
                    raise ApiError(
                        401,
                        "This endpoint needs a token: 'Authorization: Bearer <token>'.",
                        headers={"WWW-Authenticate": "Bearer"},
                    )
                return view(request, *args, **kwargs)
            except ApiError as error:
                return error.response()
            except Http404 as error:
                return ApiError(404, str(error) or "Not found.").response()

        wrapped.api_methods = methods  # type: ignore[attr-defined]
        return wrapped

    return decorator


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: those become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _iso(moment: dt.datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def _benchmark_json(request: HttpRequest, benchmark: Benchmark) -> dict[str, Any]:
    judgments = benchmark.current_judgments
    return {
        "slug": benchmark.slug,
        "title": benchmark.title,
        "description": benchmark.description,
        "primary_measure": benchmark.primary_measure,
        "shown_measures": list(benchmark.shown_measures),
        "tested_measures": benchmark.tested_measures(),
        "interpolation": benchmark.interpolation,
        "open": benchmark.is_open,
        "daily_limit": benchmark.daily_limit,
        "judgments_version": judgments.version if judgments else None,
        "num_needs": judgments.num_needs if judgments else 0,
        "url": request.build_absolute_uri(reverse("api_benchmark", args=[benchmark.slug])),
        "page": request.build_absolute_uri(benchmark.get_absolute_url()),
    }


def _submission_json(request: HttpRequest, run: Submission, result: Result | None) -> dict:
    return {
        "id": run.pk,
        "benchmark": run.benchmark.slug,
        "run_name": run.run_name,
        "participant": Profile.find(run.participant).public_name,
        "description": run.description,
        "status": run.status,
        "waiting_for_queue": run.waiting_for_queue,
        "failure_reason": run.failure_reason,
        "warnings": run.warnings,
        "baseline": run.is_baseline,
        "hidden": run.is_hidden,
        "submitted": _iso(run.created),
        "finished": _iso(run.finished),
        "judgments_version": result.judgments.version if result else None,
        "summary": {k: _finite(v) for k, v in result.summary.items()} if result else None,
        "url": request.build_absolute_uri(reverse("api_submission", args=[run.pk])),
        "per_need_url": request.build_absolute_uri(reverse("api_per_need", args=[run.pk])),
        "page": request.build_absolute_uri(run.get_absolute_url()),
    }


# --- Endpoints -------------------------------------------------------------------------


@api_view("GET")
def benchmarks(request: HttpRequest) -> HttpResponse:
    visible = Benchmark.objects.visible_to(request.user).select_related("current_judgments")
    rows = [_benchmark_json(request, b) for b in visible.order_by("title")]
    return JsonResponse({"benchmarks": rows})


@api_view("GET")
def benchmark(request: HttpRequest, slug: str) -> HttpResponse:
    """The benchmark and its leaderboard, as the leaderboard page ranks it for the caller."""
    bench = visible_benchmark(request, slug)
    try:
        board = build_leaderboard(bench, request.user, request.GET.get("measure"))
    except UnknownMeasure as error:
        raise ApiError(
            400, unknown_measure_message(error), {"suggestions": error.suggestions}
        ) from error
    runs = [
        {
            "rank": row.rank,
            "submission_id": row.submission_id,
            "run_name": row.run_name,
            "participant": row.participant,
            "submitted": _iso(row.created),
            "baseline": row.is_baseline,
            "hidden": row.is_hidden,
            "num_needs": row.num_needs,
            "value": _finite(row.value),
            "p_vs_leader_holm": _finite(row.p_adjusted),
            "summary": {k: _finite(v) for k, v in row.summary.items()},
        }
        for row in board.rows
    ]
    leaderboard = {
        "ranked_by": board.measure,
        "measures": board.measures,
        "significance": board.significance,
        "notes": board.notes,
        "runs": runs,
    }
    return JsonResponse({**_benchmark_json(request, bench), "leaderboard": leaderboard})


@api_view("POST", login=True)
def submit(request: HttpRequest, slug: str) -> HttpResponse:
    bench = visible_benchmark(request, slug)
    try:
        outcome = receive_run(request, bench, request.user)
    except RequestDataTooBig as error:
        raise ApiError(413, "The request's form fields are too large.") from error
    except (MultiPartParserError, SuspiciousOperation, UnreadablePostError) as error:
        raise ApiError(400, f"Could not read the upload: {error}") from error
    if outcome.submission is not None:
        response = JsonResponse(_submission_json(request, outcome.submission, None), status=201)
        response["Location"] = reverse("api_submission", args=[outcome.submission.pk])
        return response
    if outcome.form is None or not outcome.form.errors:
        raise ApiError(outcome.status, outcome.refusal or "The run was not accepted.")
    details = {
        ("non_field" if field == "__all__" else field): [str(m) for m in messages]
        for field, messages in outcome.form.errors.items()
    }
    message = next(iter(details.values()))[0]
    headers = {}
    if outcome.status == 429:
        resets = utc_day_start() + dt.timedelta(days=1)
        details.update(limit=bench.daily_limit, resets_at=resets.isoformat())
        headers["Retry-After"] = str(max(int((resets - timezone.now()).total_seconds()), 1))
    elif outcome.status == 413:
        details["limit_bytes"] = max_upload_bytes()
    raise ApiError(outcome.status, message, details, headers)


@api_view("GET")
def submission(request: HttpRequest, submission_id: int) -> HttpResponse:
    run = visible_submission(request, submission_id)
    return JsonResponse(_submission_json(request, run, shown_result(run)))


@api_view("GET")
def per_need(request: HttpRequest, submission_id: int) -> HttpResponse:
    run = visible_submission(request, submission_id)
    result = shown_result(run)
    if result is None:
        raise ApiError(404, f"Run {run.run_name} has no scores yet.", {"status": run.status})
    frame = result.per_need_frame()
    measures = [str(m) for m in frame.columns]
    needs = [
        {"need_id": need, "values": {m: _finite(v) for m, v in zip(measures, line, strict=True)}}
        for need, line in zip(frame.index.tolist(), frame.to_numpy().tolist(), strict=True)
    ]
    return JsonResponse(
        {
            "id": run.pk,
            "run_name": run.run_name,
            "judgments_version": result.judgments.version,
            "measures": measures,
            "needs": needs,
        }
    )


@api_view("GET")
def schema(request: HttpRequest) -> HttpResponse:
    return JsonResponse(openapi.openapi(), json_dumps_params={"indent": 1})


@csrf_exempt
def not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    """Any method on any other path under /api/."""
    return ApiError(404, "No such endpoint; the routes are listed at /api/schema/.").response()


# --- The site's error handlers: JSON under /api/, Django's HTML pages elsewhere ---------


def _is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith("/api/")


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return ApiError(400, "Bad request.").response()
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return ApiError(403, "You may not do this.").response()
    return defaults.permission_denied(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """A bug (the error is logged by Django with its traceback, as for any page)."""
    if _is_api(request):
        return ApiError(
            500, "Internal error; it has been logged. Please try again later."
        ).response()
    return defaults.server_error(request)
