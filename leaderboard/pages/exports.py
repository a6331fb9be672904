"""Downloads: the leaderboard as CSV/JSON, a run's per-need CSV, a comparison's JSON.

Thin views over ``reading.exports``, which the API's downloads call too; each sends the
pages' validators (``shortcuts.validated``), as the API's copies do.
"""

from __future__ import annotations

import json

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_safe

from evaluation.measures import UnknownMeasure
from leaderboard.pages.shortcuts import problem_page, validated
from leaderboard.reading.boards import build_leaderboard, unknown_measure_message
from leaderboard.reading.comparisons import MeasureRefused, asked_comparison
from leaderboard.reading.exports import (
    EXPORT_CORRECTIONS,
    comparison_payload,
    leaderboard_file,
    per_need_file,
)
from leaderboard.reading.lenses import lens_for
from leaderboard.reading.visibility import (
    Problem,
    error_body,
    visible_benchmark,
    visible_submission,
)


@require_safe
def leaderboard_export(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    if fmt not in ("csv", "json"):
        raise Http404("Exports are leaderboard.csv and leaderboard.json.")
    benchmark = visible_benchmark(request, slug)
    correction = request.GET.get("correction") or "holm"
    if correction not in EXPORT_CORRECTIONS:
        message = (
            f"Unknown correction “{correction}”: the leaderboard's p-values against #1 are "
            f"corrected with {', '.join(EXPORT_CORRECTIONS)} (holm by default)."
        )
        return problem_page(request, Problem(message, 400), benchmark)
    try:
        lens = lens_for(request, benchmark)
        board = build_leaderboard(
            benchmark, request.user, request.GET.get("measure"), request.GET.get("best"), lens
        )
    except UnknownMeasure as error:
        return problem_page(request, Problem(unknown_measure_message(error), 400), benchmark)
    except Problem as problem:
        return problem_page(request, problem, benchmark)
    return validated(request, leaderboard_file(board, fmt, correction), lens)


@require_safe
def submission_csv(request: HttpRequest, pk: int) -> HttpResponse:
    run = visible_submission(request, pk)
    try:
        lens = lens_for(request, run.benchmark)
    except Problem as problem:
        return problem_page(request, problem, run.benchmark)
    result = lens.result(run)
    if result is None:
        return problem_page(
            request,
            Problem(f"Run {run.run_name} has no scores yet here: {lens.line()}"),
            run.benchmark,
        )
    return validated(request, per_need_file(run, result), lens)


@require_safe
def compare_json(request: HttpRequest, slug: str, a: int, b: int) -> HttpResponse:
    try:  # a program's download: a measure it cannot have is refused, as in the API
        ctx = asked_comparison(request, slug, a, b, request.GET.get("measure"))
    except MeasureRefused as refused:
        return JsonResponse(error_body(refused.message, refused.details), status=400)
    except Problem as problem:
        return JsonResponse(error_body(problem.message), status=problem.status)
    payload = comparison_payload(ctx)
    response = HttpResponse(
        json.dumps(payload, indent=1, allow_nan=False), content_type="application/json"
    )
    return validated(request, response, ctx["lens"])
