"""The comparison pages: two runs need by need, and every pair's significance.

Thin views over ``pairs`` (paired scores, stored or fresh tests, the matrix) and
``plots``; the helpers shared with the other pages (visible benchmark, problem pages,
number formats) live in ``shortcuts``.
"""

from __future__ import annotations

import re
from html import escape

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET

from evaluation.measures import UnknownMeasure
from leaderboard.converters import IdConverter
from leaderboard.models import Benchmark, Result, Submission
from leaderboard.pages import plots
from leaderboard.pages.boards import (
    ALPHA,
    CORRECTIONS,
    build_leaderboard,
    is_count,
    measure_column,
    measure_label,
    per_need_label,
    unknown_measure_message,
)
from leaderboard.pages.menus import measure_groups
from leaderboard.pages.pairs import (
    eleven_point,
    paired_scores,
    significance_matrix,
    stats_for_pair,
)
from leaderboard.pages.shortcuts import (
    Problem,
    fmt,
    fmt_p,
    problem_page,
    visible_benchmark,
)


@require_GET
def compare_pick(request: HttpRequest, slug: str) -> HttpResponse:
    benchmark = visible_benchmark(request, slug)
    a, b = request.GET.get("a", ""), request.GET.get("b", "")
    if not all(re.fullmatch(IdConverter.regex, value) for value in (a, b)):
        return problem_page(request, Problem("Pick two runs to compare.", 400), benchmark)
    if a == b:
        return problem_page(request, Problem("Pick two different runs to compare.", 400), benchmark)
    return redirect("compare", slug=benchmark.slug, a=a, b=b)


def _pair(request: HttpRequest, benchmark: Benchmark, a: int, b: int):
    """Both runs and their current results, or a Problem saying what is wrong."""
    if a == b:
        raise Problem("A run compared with itself has no differences; pick two runs.", 400)
    runs = {
        s.pk: s
        for s in Submission.objects.select_related("benchmark", "participant").filter(
            pk__in=[a, b], benchmark=benchmark
        )
    }
    for pk in (a, b):
        if pk not in runs or not runs[pk].is_visible_to(request.user):
            raise Problem(f"There is no run {pk} on {benchmark.title}.")
    results = {
        r.submission_id: r
        for r in Result.objects.filter(
            submission_id__in=[a, b], judgments_id=benchmark.current_judgments_id
        )
    }
    for pk in (a, b):
        if pk not in results:
            raise Problem(f"Run {runs[pk].run_name} has no scores on the current judgments yet.")
    return runs[a], runs[b], results[a], results[b]


def comparison_context(request: HttpRequest, slug: str, a: int, b: int) -> dict:
    benchmark = visible_benchmark(request, slug)
    run_a, run_b, result_a, result_b = _pair(request, benchmark, a, b)
    frame_a, frame_b = result_a.per_need_frame(), result_b.per_need_frame()
    common = [m for m in frame_a.columns if m in frame_b.columns]
    note = None
    try:
        measure = measure_column(request.GET.get("measure"), "map")
    except UnknownMeasure as error:  # said on the page, above the comparison on AP
        note, measure = f"{unknown_measure_message(error)} (showing AP)", "map"
    if measure not in common:
        note = f"No per-need values of “{measure}”; showing AP."
        measure = "map"
        if measure not in common:
            raise Problem("These runs have no per-need AP values.")
    scores = paired_scores(frame_a, frame_b, measure)
    test, stored = stats_for_pair(benchmark.current_judgments_id, run_a, run_b, measure, scores)
    return {
        "benchmark": benchmark,
        "a": run_a,
        "b": run_b,
        "result_a": result_a,
        "result_b": result_b,
        "measure": measure,
        "measure_groups": measure_groups(common, rankable=False, label=per_need_label),
        "measure_note": note,
        "scores": scores,
        "test": test,
        "stored": stored,
    }


@require_GET
def compare(request: HttpRequest, slug: str, a: int, b: int) -> HttpResponse:
    try:
        ctx = comparison_context(request, slug, a, b)
    except Problem as problem:
        return problem_page(request, problem, Benchmark.objects.filter(slug=slug).first())
    scores, test, measure = ctx["scores"], ctx["test"], ctx["measure"]
    name_a, name_b = ctx["a"].run_name, ctx["b"].run_name
    label = per_need_label(measure)
    titles = dict(ctx["benchmark"].needs.values_list("need_id", "title"))
    ctx.update(
        label=label,
        alpha=ALPHA,
        mean_a=fmt(float(scores["a"].mean()) if len(scores) else None, measure),
        mean_b=fmt(float(scores["b"].mean()) if len(scores) else None, measure),
        mean_diff=fmt(test.get("mean_diff")),
        ci=(fmt(test.get("ci_low")), fmt(test.get("ci_high"))),
        effect=fmt(test.get("effect_size")),
        p=[
            (
                "Paired t-test",
                fmt_p(test.get("t_p")),
                test.get("t_p"),
                "Is the mean of the per-need differences far from zero, given how much they vary?",
            ),
            (
                "Wilcoxon signed-rank test",
                fmt_p(test.get("wilcoxon_p")),
                test.get("wilcoxon_p"),
                "Do the needs where one run wins outweigh the others, using only the ranks of the "
                "differences (not their size)?",
            ),
            (
                "Randomization test",
                fmt_p(test.get("randomization_p")),
                test.get("randomization_p"),
                f"If the run labels were swapped at random on each need "
                f"({test.get('permutations', 0):,} times), how often would the mean difference be "
                "at least this large?",
            ),
        ],
        rows=_comparison_html(scores, titles, measure),
        bars=plots.difference_bars(scores["diff"].to_numpy(), label, name_a, name_b),
        dots=plots.scatter(scores["a"].to_numpy(), scores["b"].to_numpy(), label, name_a, name_b),
        eleven=plots.eleven_figure(
            {name_a: eleven_point(ctx["result_a"]), name_b: eleven_point(ctx["result_b"])},
            "averaged over needs",
        ),
    )
    return render(request, "leaderboard/compare.html", ctx)


def _comparison_html(scores, titles: dict[str, str], measure: str) -> SafeString:
    """Rows of the per-need table; the sorter reads the numbers from the cells' text."""
    places = "{:.0f}" if is_count(measure) else "{:.4f}"
    a_text = [places.format(v) for v in scores["a"].tolist()]
    b_text = [places.format(v) for v in scores["b"].tolist()]
    diffs = scores["diff"].tolist()
    out = []
    for need, a, b, d in zip(scores.index.tolist(), a_text, b_text, diffs, strict=True):
        css = "win" if d > 0 else "loss" if d < 0 else "tie"
        d_text = ("+" if d > 0 else "") + places.format(d)
        out.append(
            f'<tr class="{css}"><th scope="row">{escape(need)}</th><td>{escape(titles.get(need, ""))}'
            f'</td><td class="num">{a}</td><td class="num">{b}</td><td class="num">{d_text}</td></tr>'
        )
    return mark_safe("".join(out))


@require_GET
def significance(request: HttpRequest, slug: str) -> HttpResponse:
    benchmark = visible_benchmark(request, slug)
    # Counts are not offered to rank by (see boards.NotRankable), unless they are the primary.
    primary = benchmark.primary_measure
    measures = [m for m in benchmark.tested_measures() if m == primary or not is_count(m)]
    correction = request.GET.get("correction") or "holm"
    notes = []
    try:
        measure = measure_column(request.GET.get("measure"), benchmark.primary_measure)
    except UnknownMeasure as error:  # said on the page, above the matrix of the primary
        notes.append(unknown_measure_message(error))
        measure = benchmark.primary_measure
    if measure not in measures:
        notes.append(f"All pairs are tested on {', '.join(map(measure_label, measures))} only.")
        measure = benchmark.primary_measure
    if correction not in CORRECTIONS:
        notes.append(f"Unknown correction “{correction}”; using Holm.")
        correction = "holm"
    board = build_leaderboard(benchmark, request.user, measure)
    matrix = significance_matrix(board, correction)
    compare_url = reverse("compare", args=[benchmark.slug, 0, 0]).rsplit("0/0/", 1)[0]
    for line in matrix.cells:
        for cell in line:
            if cell is not None:
                cell["text"] = fmt_p(cell["p"])
                cell["url"] = f"{compare_url}{cell['a']}/{cell['b']}/?measure={measure}"
    context = {
        "benchmark": benchmark,
        "matrix": matrix,
        "lines": list(zip(matrix.rows, matrix.cells, strict=True)),
        "measure": measure,
        "measure_label": measure_label(measure),
        "measure_groups": measure_groups(measures),
        "correction": correction,
        "correction_label": CORRECTIONS[correction],
        "corrections": list(CORRECTIONS.items()),
        "alpha": ALPHA,
        "notes": notes,
    }
    return render(request, "leaderboard/significance.html", context)
