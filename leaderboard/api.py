"""The JSON API (``/api/``) and the page where a participant issues its tokens.

Plain Django function views: six endpoints do not need a REST framework. Decisions:

- **Token only.** ``Authorization: Bearer <token>`` names the caller; without the header
  the caller is anonymous and sees what an anonymous reader sees. The session cookie is
  ignored, which is why every view can be ``csrf_exempt``: a cross-site form cannot add
  the header, so there is no ambient authority to forge. A header that is present but
  wrong is a 401, never a silent downgrade to anonymous.
- **Same rules as the pages.** Visibility comes from the same querysets and helpers as
  the pages; uploads go through ``uploads.receive_run``, the web form's own path, so both
  refuse the same files for the same reasons and share the daily limit.
- **Errors** are ``{"error": message, "details": {...}}`` with the status code saying
  which kind; nothing a client sends ends in a 500.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from functools import wraps
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    JsonResponse,
    UnreadablePostError,
)
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import render
from django.urls import path, re_path, reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt

from leaderboard.forms import max_upload_bytes
from leaderboard.models import ApiToken, Benchmark, Result, Submission, utc_day_start
from leaderboard.ranking import build_leaderboard
from leaderboard.uploads import receive_run
from leaderboard.views import shown_result, visible_benchmark, visible_submission

MAX_TOKENS = 20


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
    user = ApiToken.authenticate(raw)
    if user is None:
        raise ApiError(
            401,
            "Unknown or revoked token.",
            headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
        )
    return user


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
        "participant": run.participant.get_username(),
        "description": run.description,
        "status": run.status,
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
    board = build_leaderboard(bench, request.user, request.GET.get("measure"))
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
    return JsonResponse(openapi(), json_dumps_params={"indent": 1})


@csrf_exempt
def not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    """Any method on any other path under /api/."""
    return ApiError(404, "No such endpoint; the routes are listed at /api/schema/.").response()


urlpatterns = [
    path("benchmarks/", benchmarks, name="api_benchmarks"),
    path("benchmarks/<slug:slug>/", benchmark, name="api_benchmark"),
    path("benchmarks/<slug:slug>/submissions/", submit, name="api_submit"),
    path("submissions/<int:submission_id>/", submission, name="api_submission"),
    path("submissions/<int:submission_id>/per-need/", per_need, name="api_per_need"),
    path("schema/", schema, name="api_schema"),
    # Anything else under /api/ is a JSON 404 (not the HTML page, not a slash redirect).
    re_path(r"^(?P<rest>.*)$", not_found, name="api_not_found"),
]


# --- The tokens page -------------------------------------------------------------------


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=100, help_text="What the token is for, e.g. the machine that submits."
    )


@never_cache
@login_required
def tokens(request: HttpRequest) -> HttpResponse:
    """List, issue and revoke one's API tokens; a new token is shown once, on this answer."""
    mine = ApiToken.objects.filter(user=request.user)
    form = TokenForm()
    new_token = ""
    status = 200
    if request.method == "POST" and "revoke" in request.POST:
        token_id = request.POST["revoke"]
        if token_id.isdigit():
            mine.filter(pk=int(token_id)).delete()
        return HttpResponseRedirect(reverse("api_tokens"))
    if request.method == "POST":
        form = TokenForm(request.POST)
        if form.is_valid() and mine.count() >= MAX_TOKENS:
            form.add_error(None, f"You have {MAX_TOKENS} tokens; revoke one first.")
        if form.is_valid():
            _, new_token = ApiToken.issue(request.user, form.cleaned_data["name"])
            form = TokenForm()
        else:
            status = 400
    context = {"tokens": list(mine), "form": form, "new_token": new_token}
    return render(request, "leaderboard/tokens.html", context, status=status)


# --- The OpenAPI document --------------------------------------------------------------


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(description: str, schema: dict) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*codes: int) -> dict[str, Any]:
    return {str(code): {"$ref": f"#/components/responses/{ERRORS[code][0]}"} for code in codes}


ERRORS = {
    400: ("BadRequest", "Invalid upload; `error` is the first reason (`file:line: reason`)."),
    401: ("Unauthorized", "Missing (where required), malformed, unknown or revoked token."),
    403: ("Forbidden", "The benchmark is closed for submissions."),
    404: ("NotFound", "No such benchmark, run or endpoint, or not visible to the caller."),
    405: ("MethodNotAllowed", "Method not allowed; the `Allow` header lists the allowed ones."),
    413: ("TooLarge", "The upload is larger than the limit."),
    429: ("TooManyRequests", "The daily limit is used up; `Retry-After` says until when."),
}
NULLABLE_NUMBER = {"type": ["number", "null"]}
SUMMARY = {
    "type": "object",
    "description": "Every measure, by trec_eval's name (`map`, `P_10`, `ndcg_cut_10`, ...).",
    "additionalProperties": NULLABLE_NUMBER,
}
SLUG = {"name": "slug", "in": "path", "required": True, "schema": {"type": "string"}}
SUBMISSION_ID = {
    "name": "submission_id",
    "in": "path",
    "required": True,
    "schema": {"type": "integer", "minimum": 0},
}
OPTIONAL_TOKEN: list[dict] = [{}, {"bearer": []}]


def openapi() -> dict[str, Any]:
    """The API's OpenAPI 3.1 document, written by hand (tests hold it to the routes)."""
    string, integer, boolean = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}
    when = {"type": ["string", "null"], "format": "date-time"}
    benchmark = {
        "type": "object",
        "required": ["slug", "title", "primary_measure", "open", "judgments_version"],
        "properties": {
            "slug": string,
            "title": string,
            "description": string,
            "primary_measure": string,
            "open": {"type": "boolean", "description": "Open for submissions."},
            "daily_limit": {
                "type": "integer",
                "description": "Runs per participant per UTC day (failed ones do not count).",
            },
            "judgments_version": {"type": ["integer", "null"]},
            "num_needs": integer,
            "url": {"type": "string", "format": "uri"},
            "page": {"type": "string", "format": "uri"},
        },
    }
    run = {
        "type": "object",
        "properties": {
            "rank": {
                "type": ["integer", "null"],
                "description": "Competition rank on the value rounded to 4 decimals.",
            },
            "submission_id": integer,
            "run_name": string,
            "participant": string,
            "submitted": {"type": "string", "format": "date-time"},
            "baseline": boolean,
            "hidden": boolean,
            "num_needs": integer,
            "value": {**NULLABLE_NUMBER, "description": "The `ranked_by` measure."},
            "p_vs_leader_holm": {
                **NULLABLE_NUMBER,
                "description": "Paired t-test against #1, Holm-corrected over the board.",
            },
            "summary": SUMMARY,
        },
    }
    leaderboard = {
        "allOf": [
            _ref("Benchmark"),
            {
                "type": "object",
                "properties": {
                    "leaderboard": {
                        "type": "object",
                        "properties": {
                            "ranked_by": string,
                            "measures": {"type": "array", "items": string},
                            "significance": {"enum": ["stored", "computed", "unavailable", "none"]},
                            "notes": {"type": "array", "items": string},
                            "runs": {"type": "array", "items": _ref("LeaderboardRun")},
                        },
                    }
                },
            },
        ]
    }
    submission = {
        "type": "object",
        "required": ["id", "status", "failure_reason", "summary"],
        "properties": {
            "id": integer,
            "benchmark": string,
            "run_name": string,
            "participant": string,
            "description": string,
            "status": {"enum": [s.value for s in Submission.Status]},
            "failure_reason": {
                "type": "string",
                "description": "Why scoring failed, as `file:line: reason`; empty otherwise.",
            },
            "warnings": {"type": "array", "items": string},
            "baseline": boolean,
            "hidden": boolean,
            "submitted": {"type": "string", "format": "date-time"},
            "finished": when,
            "judgments_version": {"type": ["integer", "null"]},
            "summary": {
                "oneOf": [SUMMARY, {"type": "null"}],
                "description": "Null until the run has been scored.",
            },
            "url": {"type": "string", "format": "uri"},
            "per_need_url": {"type": "string", "format": "uri"},
            "page": {"type": "string", "format": "uri"},
        },
    }
    per_need = {
        "type": "object",
        "properties": {
            "id": integer,
            "run_name": string,
            "judgments_version": integer,
            "measures": {"type": "array", "items": string},
            "needs": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "need_id": string,
                        "values": {"type": "object", "additionalProperties": NULLABLE_NUMBER},
                    },
                },
            },
        },
    }
    error = {
        "type": "object",
        "required": ["error", "details"],
        "properties": {
            "error": {"type": "string", "description": "What went wrong, for a person."},
            "details": {
                "type": "object",
                "description": "Per form field, the list of reasons (`non_field` for the "
                "others); `limit` and `resets_at` with a 429; `allowed` with a 405.",
            },
        },
    }
    upload = {
        "type": "object",
        "required": ["file"],
        "properties": {
            "file": {
                "type": "string",
                "contentMediaType": "application/octet-stream",
                "description": "TREC run: `need_id Q0 doc_id rank score tag`; plain or gzip.",
            },
            "run_name": {
                "type": "string",
                "pattern": "^[A-Za-z0-9._-]{1,40}$",
                "description": "Defaults to the run's tag; unique on the benchmark.",
            },
            "description": string,
        },
    }
    paths = {
        "/api/benchmarks/": {
            "get": {
                "operationId": "listBenchmarks",
                "summary": "Benchmarks the caller may see",
                "security": OPTIONAL_TOKEN,
                "responses": {
                    "200": _json(
                        "The benchmarks.",
                        {
                            "type": "object",
                            "properties": {
                                "benchmarks": {"type": "array", "items": _ref("Benchmark")}
                            },
                        },
                    ),
                    **_errors(401, 405),
                },
            }
        },
        "/api/benchmarks/{slug}/": {
            "get": {
                "operationId": "getBenchmark",
                "summary": "A benchmark and its leaderboard",
                "description": "Runs the caller may see (hidden ones only for their owner "
                "and the organizers), each with every summary measure.",
                "security": OPTIONAL_TOKEN,
                "parameters": [
                    SLUG,
                    {
                        "name": "measure",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string"},
                        "description": "Rank by this measure (default: the primary one).",
                    },
                ],
                "responses": {
                    "200": _json("The benchmark with its leaderboard.", _ref("Leaderboard")),
                    **_errors(401, 404, 405),
                },
            }
        },
        "/api/benchmarks/{slug}/submissions/": {
            "post": {
                "operationId": "submitRun",
                "summary": "Submit a run",
                "description": "Validated as the web form validates it and counted against "
                "the same daily limit; scored in the background (poll the run's `url`).",
                "security": [{"bearer": []}],
                "parameters": [SLUG],
                "requestBody": {
                    "required": True,
                    "content": {"multipart/form-data": {"schema": _ref("Upload")}},
                },
                "responses": {
                    "201": {
                        **_json("Stored and queued.", _ref("Submission")),
                        "headers": {
                            "Location": {
                                "description": "The run's API URL.",
                                "schema": {"type": "string"},
                            }
                        },
                    },
                    **_errors(400, 401, 403, 404, 405, 413, 429),
                },
            }
        },
        "/api/submissions/{submission_id}/": {
            "get": {
                "operationId": "getSubmission",
                "summary": "A run's status, failure reason and summary",
                "security": OPTIONAL_TOKEN,
                "parameters": [SUBMISSION_ID],
                "responses": {
                    "200": _json("The run.", _ref("Submission")),
                    **_errors(401, 404, 405),
                },
            }
        },
        "/api/submissions/{submission_id}/per-need/": {
            "get": {
                "operationId": "getPerNeed",
                "summary": "A scored run's value of every measure on every need",
                "security": OPTIONAL_TOKEN,
                "parameters": [SUBMISSION_ID],
                "responses": {
                    "200": _json("Per-need values.", _ref("PerNeed")),
                    **_errors(401, 404, 405),
                },
            }
        },
        "/api/schema/": {
            "get": {
                "operationId": "getSchema",
                "summary": "This document",
                "security": [{}],
                "responses": {
                    "200": _json("OpenAPI 3.1 document.", {"type": "object"}),
                    **_errors(405),
                },
            }
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Ranked retrieval leaderboards API",
            "version": "1",
            "description": "Benchmarks, leaderboards, submitting runs and polling their "
            "scores. Issue a token at /accounts/tokens/ and send it as "
            "`Authorization: Bearer <token>`. Without a token, GET requests see what an "
            'anonymous reader sees. Every error is `{"error": ..., "details": {...}}`.',
        },
        "servers": [{"url": "/"}],
        "security": OPTIONAL_TOKEN,
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A token from /accounts/tokens/.",
                }
            },
            "schemas": {
                "Benchmark": benchmark,
                "Leaderboard": leaderboard,
                "LeaderboardRun": run,
                "Submission": submission,
                "PerNeed": per_need,
                "Upload": upload,
                "Error": error,
            },
            "responses": {
                name: _json(description, _ref("Error")) for name, description in ERRORS.values()
            },
        },
    }
