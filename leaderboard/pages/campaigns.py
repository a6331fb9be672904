"""A run's per-need results beside the field: the page, its CSV and JSON
(``/submissions/<id>/results/``, ``.csv``, ``.json``), all from
:func:`leaderboard.pages.results.run_results`, the API's reading too.
"""

from __future__ import annotations

import csv

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from leaderboard.pages.exports import _csv, _number
from leaderboard.pages.results import NoResults, results_figure, results_payload, run_results
from leaderboard.pages.shortcuts import Problem, problem_page, shown_result, visible_submission


@require_GET
def run_results_page(request: HttpRequest, pk: int, fmt: str = "html") -> HttpResponse:
    """``/submissions/<id>/results/`` (and ``.csv``, ``.json``), ``?measure=`` a stored one."""
    run = visible_submission(request, pk)
    result = shown_result(run)
    if result is None:
        return problem_page(request, Problem(f"Run {run.run_name} has no scores yet."))
    try:
        results = run_results(run, result, request.GET.get("measure") or None)
    except NoResults as error:
        return problem_page(request, Problem(str(error), 400), run.benchmark)
    if fmt == "json":
        return JsonResponse(results_payload(results))
    if fmt == "csv":
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = (
            f'attachment; filename="{run.benchmark.slug}-{run.run_name}-results.csv"'
        )
        writer = csv.writer(response)
        writer.writerow([_csv(c) for c in ["need_id", results.measure, "best", "median", "worst"]])
        for row in results.rows():
            cells = [row[k] for k in ("run", "best", "median", "worst")]
            writer.writerow(
                [
                    _csv(row["need_id"]),
                    *("" if c is None else _number(c, results.measure) for c in cells),
                ]
            )
        return response
    context = {
        "run": run,
        "benchmark": run.benchmark,
        "results": results,
        "rows": results.rows(),
        "figure": results_figure(results),
    }
    return render(request, "campaigns/results.html", context)
