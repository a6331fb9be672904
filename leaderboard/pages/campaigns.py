"""A run's per-need results beside the field: the page, its CSV and JSON
(``/submissions/<id>/results/``, ``.csv``, ``.json``), all from
:func:`leaderboard.reading.results.run_results`, the API's reading too.
"""

from __future__ import annotations

import csv
from html import escape

import numpy as np
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_safe

from leaderboard.pages.plots import INK, LEFT, RIGHT, SERIES, WIDTH, Frame, axes, svg
from leaderboard.pages.shortcuts import fmt, problem_page, validated
from leaderboard.reading.boards import measure_label
from leaderboard.reading.exports import _csv, _number
from leaderboard.reading.lenses import lens_for
from leaderboard.reading.results import NoResults, RunResults, results_payload, run_results
from leaderboard.reading.visibility import Problem, visible_submission


def results_figure(results: RunResults) -> SafeString:
    """Per need (x, the judgments' order): the run's value as a bar, the field's worst
    to best as a line, its median as a tick; y from 0 to the largest value (1 at least
    for measures in 0..1)."""
    table = results.table
    n = len(table)
    top = float(np.nanmax([table.to_numpy().max(initial=0.0), 1.0]))
    frame = Frame(0, max(n, 1), 0, top)
    step = (WIDTH - LEFT - RIGHT) / max(n, 1)
    labels = [i for i in range(n) if n <= 12 or i % max(n // 6, 1) == 0]
    body = axes(frame, "Need", measure_label(results.measure), [], None)
    colour, _ = SERIES[0]
    bars, ranges, medians = [], [], []
    base = frame.y(0)
    for i, (run, best, median, worst) in enumerate(
        table[["run", "best", "median", "worst"]].itertuples(index=False)
    ):
        x = LEFT + i * step
        y = frame.y(run)
        bars.append(f"M{x + step * 0.15:.1f} {base:.1f}V{y:.1f}H{x + step * 0.85:.1f}V{base:.1f}Z")
        if best == best:  # a field
            mid = x + step / 2
            ranges.append(f"M{mid:.1f} {frame.y(worst):.1f}V{frame.y(best):.1f}")
            medians.append(f"M{x:.1f} {frame.y(median):.1f}H{x + step:.1f}")
    body.append(f'<path class="run" fill="{colour}" fill-opacity="0.75" d="{"".join(bars)}"/>')
    body.append(f'<path class="range" stroke="{INK}" stroke-width="1.5" d="{"".join(ranges)}"/>')
    body.append(f'<path class="median" stroke="{INK}" stroke-width="2.5" d="{"".join(medians)}"/>')
    for i in labels:
        x = LEFT + (i + 0.5) * step
        need = escape(str(table.index[i])[:8])
        body.append(
            f'<text class="tick" x="{x:.1f}" y="{frame.y(0) + 18:.1f}" text-anchor="middle">'
            f"{need}</text>"
        )
    desc = "; ".join(
        f"{need}: {row.run:.4f} (best {row.best:.4f}, median {row.median:.4f}, "
        f"worst {row.worst:.4f})"
        if row.best == row.best
        else f"{need}: {row.run:.4f}"
        for need, row in zip(table.index[:200], table.head(200).itertuples(), strict=True)
    )
    return svg(
        f"{results.run.run_name}: {measure_label(results.measure)} per need beside the "
        f"{results.field_name} ({len(results.field)})",
        f"Bars: the run's value; lines: worst to best; ticks: the median. {desc}",
        body,
        "results",
    )


@require_safe
def run_results_page(request: HttpRequest, pk: int, fmt: str = "html") -> HttpResponse:
    """``/submissions/<id>/results/`` (and ``.csv``, ``.json``), ``?measure=`` a stored one."""
    run = visible_submission(request, pk)
    try:
        lens = lens_for(request, run.benchmark)
    except Problem as problem:
        return problem_page(request, problem, run.benchmark)
    result = lens.result(run)
    if result is None:
        return problem_page(
            request, Problem(f"Run {run.run_name} has no scores yet here: {lens.line()}")
        )
    try:
        results = run_results(run, result, request.GET.get("measure") or None, viewer=request.user)
    except NoResults as error:
        return problem_page(request, Problem(str(error), 400), run.benchmark)
    if fmt == "json":
        return validated(request, JsonResponse(results_payload(results)), lens)
    if fmt == "csv":
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = (
            f'attachment; filename="{run.benchmark.slug}-{run.run_name}-results.csv"'
        )
        writer = csv.writer(response)
        head = ["need_id", measure_label(results.measure), "best", "median", "worst"]
        writer.writerow([_csv(c) for c in head])
        for row in results.rows():
            cells = [row[k] for k in ("run", "best", "median", "worst")]
            writer.writerow(
                [
                    _csv(row["need_id"]),
                    *("" if c is None else _number(c, results.measure) for c in cells),
                ]
            )
        return validated(request, response, lens)
    context = {
        "run": run,
        "benchmark": run.benchmark,
        "lens": lens,
        "results": results,
        "rows": _rows_html(results.rows()),
        "figure": results_figure(results),
    }
    return validated(request, render(request, "campaigns/results.html", context), lens)


def _rows_html(rows: list[dict]) -> SafeString:
    """The table's rows, built in one pass (through the template engine its 7,000 rows
    would be most of the page's time); numbers with trec_eval's four decimals, a dash
    where the field has no value, as every page writes them (``fmt``)."""
    cells = ("run", "best", "median", "worst")
    return mark_safe(
        "".join(
            f'\n    <tr><th scope="row">{escape(row["need_id"])}</th>'
            + "".join(f"<td>{fmt(row[key])}</td>" for key in cells)
            + "</tr>\n  "
            for row in rows
        )
    )
