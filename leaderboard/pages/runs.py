"""The run page: status, summary, per-need table, the precision-recall figure of one need,
the 11-point curve and links to compare the run with the leader and the baselines.

Anything a reader can type into the URL (ids of runs that do not exist, are hidden from
them or have no scores yet, an unknown need) ends in a readable page, never an error.
"""

from __future__ import annotations

from html import escape

import numpy as np
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET

from leaderboard.models import Benchmark, Result, Submission
from leaderboard.pages import plots
from leaderboard.pages.boards import NEED_COLUMNS, build_leaderboard, measure_label
from leaderboard.pages.pairs import eleven_point
from leaderboard.pages.shortcuts import fmt, shown_result, visible_submission


@require_GET
def submission(request: HttpRequest, pk: int) -> HttpResponse:
    run = visible_submission(request, pk)
    benchmark = run.benchmark
    result = shown_result(run)
    context = {"run": run, "benchmark": benchmark, "result": result, "live": False}
    context["live"] = run.status in (Submission.Status.QUEUED, Submission.Status.RUNNING)
    context["is_owner"] = run.is_owned_by(request.user)  # edit, hide, withdraw links
    if result is None:
        return render(request, "leaderboard/submission.html", context)
    frame = result.per_need_frame()
    titles = dict(benchmark.needs.values_list("need_id", "title"))
    context.update(
        summary=_summary_rows(result.summary, benchmark),
        per_need_heads=[(m, NEED_COLUMNS[m]) for m in NEED_COLUMNS if m in frame.columns],
        per_need_rows=_per_need_html(frame, titles),
        is_current=result.judgments_id == benchmark.current_judgments_id,
        eleven=plots.eleven_figure({run.run_name: eleven_point(result)}, "averaged over needs"),
        **_need_figure(request, result, titles),
        **_compare_links(request, benchmark, run),
    )
    return render(request, "leaderboard/submission.html", context)


def _summary_rows(summary: dict, benchmark: Benchmark) -> tuple[list, list, int]:
    """The benchmark's primary and shown measures, then the seed's, then every other
    stored one; and how many in all."""
    first = [benchmark.primary_measure, *(benchmark.shown_measures or ()), *NEED_COLUMNS]
    main = [(m, measure_label(m), fmt(summary[m], m)) for m in dict.fromkeys(first) if m in summary]
    shown = {m for m, _, _ in main}
    rest = [(m, m, fmt(v, m)) for m, v in sorted(summary.items()) if m not in shown]
    return main, rest, len(summary)


def _per_need_html(frame, titles: dict[str, str]) -> SafeString:
    """Rows of the per-need table, built in one pass (7,000 needs in a few ms)."""
    columns = [m for m in NEED_COLUMNS if m in frame.columns]
    values = frame[columns].to_numpy() if columns else np.empty((len(frame), 0))
    out = []
    for need, line in zip(frame.index.tolist(), values.tolist(), strict=True):
        cells = "".join(
            f'<td class="num" data-sort="{v!r}">{fmt(v, m)}</td>'
            for m, v in zip(columns, line, strict=True)
        )
        title = escape(titles.get(need, ""))
        out.append(f'<tr><th scope="row">{escape(need)}</th><td>{title}</td>{cells}</tr>')
    return mark_safe("".join(out))


def _need_figure(request: HttpRequest, result: Result, titles: dict[str, str]) -> dict:
    ranks, num_rel = result.relevant_ranks()
    needs = sorted(num_rel)
    if not needs:
        return {"needs": [], "need": None, "need_svg": None}
    chosen = request.GET.get("need")
    note = None
    if chosen not in num_rel:
        if chosen:
            note = f"No need “{chosen}” in this run's judgments; showing another."
        chosen = next((n for n in needs if num_rel[n] > 0), needs[0])
    return {
        "needs": [(n, titles.get(n, "")) for n in needs],
        "need": chosen,
        "need_title": titles.get(chosen, ""),
        "need_note": note,
        "need_svg": plots.need_figure(ranks[chosen], num_rel[chosen], chosen),
    }


def _compare_links(request: HttpRequest, benchmark: Benchmark, run: Submission) -> dict:
    if run.benchmark.current_judgments_id is None:
        return {"compare_links": []}
    board = build_leaderboard(benchmark, request.user)
    links = []
    leader = board.leader
    mine = next((row for row in board.rows if row.submission_id == run.pk), None)
    if leader and leader.submission_id != run.pk and mine is not None:
        links.append(("the leader", leader))
    for row in board.rows:
        if row.is_baseline and row.submission_id != run.pk and mine is not None:
            links.append(("baseline", row))
    return {"compare_links": links, "board_row": mine}
