"""The run page: status, summary, per-need table, the precision-recall figure of one need,
the 11-point curve and links to compare the run with the leader and the baselines.

Anything a reader can type into the URL (ids of runs that do not exist, are hidden from
them or have no scores yet, an unknown need) ends in a readable page, never an error.
"""

from __future__ import annotations

from html import escape

import numpy as np
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_safe

from leaderboard.models import Benchmark, Result, Submission
from leaderboard.pages import plots
from leaderboard.pages.richtext import markdown_html
from leaderboard.pages.shortcuts import (
    PLOT_FORMATS,
    fmt,
    need_choices,
    plot_response,
    problem_page,
    validated,
)
from leaderboard.reading.boards import (
    NEED_COLUMNS,
    build_leaderboard,
    measure_label,
)
from leaderboard.reading.lenses import Lens, lens_for
from leaderboard.reading.names import shown_names
from leaderboard.reading.pairs import eleven_point
from leaderboard.reading.runs import per_need_table
from leaderboard.reading.visibility import Problem, visible_submission


@require_safe
def submission(request: HttpRequest, pk: int) -> HttpResponse:
    run = visible_submission(request, pk, scores=False)
    benchmark = run.benchmark
    try:
        lens = lens_for(request, benchmark)
    except Problem as problem:
        return problem_page(request, problem, benchmark)
    scores_note = run.scores_note(request.user)
    result = None if scores_note else lens.result(run)
    # The line over the run says when this run's scores were stored, not the board's
    # (set again once the compare links have built the board, which sets the board's).
    if scores_note:
        scored_at = run.finished if run.status == Submission.Status.SCORED else None
    else:
        scored_at = result.created if result else None
    lens.scored_at = scored_at
    author, team = shown_names(run, request.user)
    context = {
        "run": run,
        "benchmark": benchmark,
        "result": result,
        "lens": lens,
        "author": author,
        "team": team,
        "description": markdown_html(run.description),
        "scores_note": scores_note,
    }
    context["live"] = run.status in (Submission.Status.QUEUED, Submission.Status.RUNNING)
    context["is_participant"] = run.is_submitted_by(request.user)  # edit, hide, withdraw links
    context["is_owner"] = run.has_owner(request.user)  # teammates too: who hid it
    # Organizers hide and show runs too; who hid a run is shown to both.
    context["is_organizer"] = benchmark.is_organised_by(request.user)
    context["may_unhide"] = run.is_hidden and not run.why_not_unhide(request.user)
    if result is None:
        return validated(request, render(request, "leaderboard/submission.html", context), lens)
    columns, table = per_need_table(benchmark, result.per_need_frame())
    titles = dict(benchmark.needs.values_list("need_id", "title"))
    context.update(
        summary=_summary_rows(result.summary, benchmark),
        per_need_heads=[(m, measure_label(m)) for m in columns],
        per_need_sorted=measure_label(columns[0]) if columns else "",
        per_need_rows=_per_need_html(table, titles, lens),
        is_current=result.judgments_id == lens.judgments_id,
        eleven=_eleven(run, result),
        **_need_figure(request, result, titles),
        **_compare_links(request, lens, run),
    )
    context["downloads"] = {
        name: {
            fmt: lens.link(reverse("submission_plot", args=[run.pk, name, fmt]), **query)
            for fmt in PLOT_FORMATS
        }
        for name, query in (
            ("need", {"need": context["need"] or "", "download": 1}),
            ("eleven", {"download": 1}),
        )
    }
    lens.scored_at = scored_at
    return validated(request, render(request, "leaderboard/submission.html", context), lens)


@require_safe
def submission_plot(request: HttpRequest, pk: int, name: str, fmt: str) -> HttpResponse:
    """The run page's figure of a need (``?need=``) or its 11-point curve as an SVG or PNG
    file (``?download=1``: as an attachment)."""
    run = visible_submission(request, pk)
    try:
        result = lens_for(request, run.benchmark).result(run)
    except Problem as problem:
        return problem_page(request, problem, run.benchmark)
    if name not in ("need", "eleven") or fmt not in PLOT_FORMATS or result is None:
        raise Http404("A scored run's plots are need and eleven, as .svg or .png.")
    if name == "eleven":
        svg, what = _eleven(run, result), f"{run.run_name}-11-point"
    else:
        figure = _need_figure(request, result, {})
        svg, what = figure["need_svg"], f"{run.run_name}-need-{figure['need']}"
    if svg is None:
        raise Http404("This run has no such plot.")
    return plot_response(request, svg, what, fmt)


def _eleven(run: Submission, result: Result) -> SafeString | None:
    return plots.eleven_figure({run.run_name: eleven_point(result)}, "averaged over needs")


def _summary_rows(summary: dict, benchmark: Benchmark) -> tuple[list, list, int]:
    """The benchmark's primary and shown measures, then the seed's, then every other
    stored one; and how many in all."""
    first = [benchmark.primary_measure, *(benchmark.shown_measures or ()), *NEED_COLUMNS]
    main = [(m, measure_label(m), fmt(summary[m], m)) for m in dict.fromkeys(first) if m in summary]
    shown = {m for m, _, _ in main}
    rest = [(m, measure_label(m), fmt(v, m)) for m, v in sorted(summary.items()) if m not in shown]
    return main, rest, len(summary)


def _per_need_html(frame, titles: dict[str, str], lens: Lens) -> SafeString:
    """Rows of the per-need table (``reading.runs.per_need_table``'s, in its order), built
    in one pass (7,000 needs in a few ms); each need id links to the page's figure of
    that need, on the same lens."""
    columns = list(frame.columns)
    values = frame.to_numpy() if columns else np.empty((len(frame), 0))
    link = lens.links("", "need")
    out = []
    for need, line in zip(frame.index.tolist(), values.tolist(), strict=True):
        cells = "".join(
            f'<td class="num" data-sort="{v!r}">{fmt(v, m)}</td>'
            for m, v in zip(columns, line, strict=True)
        )
        title = escape(titles.get(need, ""))
        href = escape(f"{link(need)}#need-figure")
        out.append(
            f'<tr><th scope="row"><a href="{href}">{escape(need)}</a></th><td>{title}</td>'
            f"{cells}</tr>"
        )
    return mark_safe("".join(out))


def _need_figure(request: HttpRequest, result: Result, titles: dict[str, str]) -> dict:
    num_rel = result.num_relevant()
    needs = sorted(num_rel)
    if not needs:
        return {"need": None, "need_svg": None}
    chosen = request.GET.get("need")
    note = None
    if chosen not in num_rel:
        if chosen:
            note = f"No need “{chosen}” in this run's judgments; showing another."
        chosen = next((n for n in needs if num_rel[n] > 0), needs[0])
    ranks, _ = result.need_ranks(chosen)
    return {
        "need_choices": need_choices(needs, titles),
        "need": chosen,
        "need_title": titles.get(chosen, ""),
        "need_note": note,
        "need_svg": plots.need_figure(ranks, num_rel[chosen], chosen),
    }


def _compare_links(request: HttpRequest, lens: Lens, run: Submission) -> dict:
    if lens.judgments_id is None:
        return {"compare_links": []}
    board = build_leaderboard(lens.benchmark, request.user, lens=lens)
    links = []
    leader = board.leader
    mine = next((row for row in board.rows if row.submission_id == run.pk), None)
    if leader and leader.submission_id != run.pk and mine is not None:
        links.append(("the leader", leader))
    for row in board.rows:
        if row.is_baseline and row.submission_id != run.pk and mine is not None:
            links.append(("baseline", row))
    return {"compare_links": links, "board_row": mine}
