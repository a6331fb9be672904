"""The reader's pages: benchmarks, leaderboards and run pages (comparisons: comparison_views).

Views stay thin: ``leaderboard.ranking`` assembles tables and tests, ``leaderboard.plots``
draws, templates lay out. Anything a reader can type into a URL (an unknown measure,
ids of runs that do not exist, belong to another benchmark, are hidden from them or have
no scores yet) ends in a readable 404/400 page, never a server error.
"""

from __future__ import annotations

from html import escape

import numpy as np
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET

from leaderboard import plots
from leaderboard.comparing import eleven_point
from leaderboard.models import Benchmark, InformationNeed, Result, Submission
from leaderboard.ranking import (
    ALPHA,
    NEED_COLUMNS,
    build_leaderboard,
    current_leaders,
    is_count,
    measure_label,
    stored_measures,
)


class Problem(Exception):
    """A request the page cannot answer, with what to tell the reader."""

    def __init__(self, message: str, status: int = 404) -> None:
        super().__init__(message)
        self.message, self.status = message, status


def problem_page(request: HttpRequest, problem: Problem, benchmark: Benchmark | None = None):
    context = {"message": problem.message, "benchmark": benchmark}
    return render(request, "leaderboard/problem.html", context, status=problem.status)


def visible_benchmark(request: HttpRequest, slug: str) -> Benchmark:
    return get_object_or_404(
        Benchmark.objects.visible_to(request.user).select_related("current_judgments"), slug=slug
    )


def fmt(value: float | None, measure: str = "") -> str:
    """trec_eval's four decimals; counts as integers; a dash for no value."""
    if value is None or value != value:
        return "—"
    if is_count(measure):
        return f"{value:.0f}"
    return f"{value:.4f}"


def fmt_p(p: float | None) -> str:
    if p is None or p != p:
        return "—"
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


# --- Benchmarks and leaderboards ------------------------------------------------------


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    benchmarks = list(Benchmark.objects.visible_to(request.user).order_by("title"))
    counts = _need_counts(benchmarks)
    leaders = current_leaders(benchmarks, request.user)
    rows = []
    for benchmark in benchmarks:
        leader, runs = leaders.get(benchmark.pk, (None, 0))
        rows.append(
            {
                "benchmark": benchmark,
                "needs": counts.get(benchmark.pk, 0),
                "runs": runs,
                "leader": leader,
                "leader_value": fmt(leader.value if leader else None, benchmark.primary_measure),
                "measure_label": measure_label(benchmark.primary_measure),
            }
        )
    return render(request, "leaderboard/home.html", {"rows": rows})


def _need_counts(benchmarks: list[Benchmark]) -> dict[int, int]:
    return dict(
        InformationNeed.objects.filter(benchmark__in=benchmarks)
        .values("benchmark_id")
        .annotate(n=Count("pk"))
        .values_list("benchmark_id", "n")
    )


@require_GET
def leaderboard(request: HttpRequest, slug: str) -> HttpResponse:
    benchmark = visible_benchmark(request, slug)
    board = build_leaderboard(benchmark, request.user, request.GET.get("measure"))
    context = {
        "benchmark": benchmark,
        "board": board,
        "alpha": ALPHA,
        "measure_label": measure_label(board.measure),
        "column_heads": [(m, measure_label(m)) for m in board.columns],
        "other_measures": [(m, measure_label(m)) for m in board.measures],
        "run_options": _run_options(board.rows),
        "table_rows": _board_html(board),
        "needs": benchmark.current_judgments.num_needs if benchmark.current_judgments else 0,
        "stored_measures": stored_measures(benchmark),
    }
    return render(request, "leaderboard/leaderboard.html", context)


def _board_html(board) -> SafeString:
    """The leaderboard's rows. Built here rather than in the template because a
    thousand runs through Django's template engine take ~100 ms; this takes ~5."""
    run_url = reverse("submission", args=[0])[:-2]
    pending = board.significance == "stored"
    out = []
    for row in board.rows:
        css = (
            ' class="leader"' if row.is_leader else ' class="tied"' if row.tied_with_leader else ""
        )
        badges = ' <span class="badge baseline">baseline</span>' if row.is_baseline else ""
        if not row.is_public:
            badges += (
                f' <span class="badge hidden">{"hidden" if row.is_hidden else row.status}</span>'
            )
        cells = "".join(f'<td class="num">{fmt(row.summary.get(m), m)}</td>' for m in board.columns)
        p = fmt_p(row.p_adjusted)
        if row.is_leader:
            sig = "#1"
        elif row.differs_from_leader:
            sig = (
                f'<span class="mark diff" title="significantly below #1: Holm-corrected '
                f'p = {p}">▼</span> <span class="p">p {p}</span>'
            )
        elif row.tied_with_leader:
            sig = (
                f'<span class="mark tie" title="statistically tied with #1: Holm-corrected '
                f'p = {p}">≈</span> <span class="p">p {p}</span>'
            )
        elif row.value is not None and pending:
            sig = '<span class="muted">pending</span>'
        else:
            sig = ""
        out.append(
            f'<tr{css}><td class="num">{row.rank or "—"}</td>'
            f'<th scope="row"><a href="{run_url}{row.submission_id}/">{escape(row.run_name)}</a>'
            f'{badges}</th><td class="wide">{escape(row.participant)}</td>'
            f'<td class="wide"><time datetime="{row.created.isoformat()}">'
            f'{row.created:%Y-%m-%d}</time></td>{cells}<td class="sig">{sig}</td></tr>'
        )
    return mark_safe("\n".join(out))


def _run_options(rows) -> tuple[SafeString, SafeString]:
    """The run pickers' <option>s: #1 chosen in the first, the runner-up in the second,
    so that the form compares two different runs without a click (and without JS)."""
    options = [
        f'value="{row.submission_id}">{escape(row.run_name)}'
        f"{'' if row.rank is None else f' (#{row.rank})'}</option>"
        for row in rows
    ]

    def picked(index: int) -> SafeString:
        return mark_safe(
            "".join(
                f"<option {'selected ' if i == index else ''}{o}" for i, o in enumerate(options)
            )
        )

    return picked(0), picked(1)


# --- One run ---------------------------------------------------------------------------


def visible_submission(request: HttpRequest, pk: int) -> Submission:
    submission = get_object_or_404(
        Submission.objects.select_related("benchmark", "participant", "judgments"), pk=pk
    )
    if not submission.is_visible_to(request.user) or not (
        submission.benchmark.published or submission.benchmark.is_organised_by(request.user)
    ):
        raise Http404("No such run.")
    return submission


def shown_result(submission: Submission) -> Result | None:
    """The result on the benchmark's current judgments, else the newest one (rescoring)."""
    results = list(submission.results.select_related("judgments").order_by("-judgments__version"))
    current = submission.benchmark.current_judgments_id
    for result in results:
        if result.judgments_id == current:
            return result
    return results[0] if results else None


@require_GET
def submission(request: HttpRequest, pk: int) -> HttpResponse:
    run = visible_submission(request, pk)
    benchmark = run.benchmark
    result = shown_result(run)
    context = {"run": run, "benchmark": benchmark, "result": result, "live": False}
    context["live"] = run.status in (Submission.Status.QUEUED, Submission.Status.RUNNING)
    if result is None:
        return render(request, "leaderboard/submission.html", context)
    frame = result.per_need_frame()
    titles = dict(benchmark.needs.values_list("need_id", "title"))
    context.update(
        summary=_summary_rows(result.summary),
        per_need_heads=[(m, NEED_COLUMNS[m]) for m in NEED_COLUMNS if m in frame.columns],
        per_need_rows=_per_need_html(frame, titles),
        is_current=result.judgments_id == benchmark.current_judgments_id,
        eleven=eleven_figure({run.run_name: eleven_point(result)}, "averaged over needs"),
        **_need_figure(request, result, titles),
        **_compare_links(request, benchmark, run),
    )
    return render(request, "leaderboard/submission.html", context)


def _summary_rows(summary: dict) -> tuple[list, list, int]:
    """The seed's measures first, then every other stored one; and how many in all."""
    main = [(m, measure_label(m), fmt(summary[m], m)) for m in NEED_COLUMNS if m in summary]
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


def eleven_figure(curves: dict, what: str) -> SafeString | None:
    if any(values is None for values in curves.values()):
        return None
    return plots.eleven_point_figure(curves, f"11-point interpolated precision, {what}")


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
