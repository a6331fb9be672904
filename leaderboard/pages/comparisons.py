"""The comparison pages: two runs need by need, and every pair's significance.

Thin views over ``pairs`` (paired scores, stored or fresh tests, the matrix) and
``plots``; the helpers shared with the other pages (visible benchmark, problem pages,
number formats) live in ``shortcuts``.
"""

from __future__ import annotations

import re
from html import escape

import numpy as np
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_safe

from evaluation.measures import UnknownMeasure
from evaluation.significance import p_text, randomization_enumerates
from leaderboard.converters import IdConverter
from leaderboard.models import Benchmark
from leaderboard.pages import pair_plots, plots
from leaderboard.pages.menus import measure_groups
from leaderboard.pages.paging import PER_PAGE
from leaderboard.pages.shortcuts import (
    PLOT_FORMATS,
    fmt,
    fmt_p,
    need_choices,
    p_phrase,
    plot_response,
    problem_page,
    validated,
)
from leaderboard.reading.boards import (
    ALPHA,
    CORRECTIONS,
    Board,
    build_leaderboard,
    is_count,
    measure_column,
    measure_label,
    unknown_measure_message,
)
from leaderboard.reading.comparisons import comparison
from leaderboard.reading.lenses import lens_for
from leaderboard.reading.pairs import (
    P_BANDS,
    eleven_point,
    significance_matrix,
)
from leaderboard.reading.visibility import Problem, visible_benchmark


@require_safe
def compare_pick(request: HttpRequest, slug: str) -> HttpResponse:
    """The board's "Compare two runs" form: to the pair's comparison, on the same lens."""
    benchmark = visible_benchmark(request, slug)
    a, b = request.GET.get("a", ""), request.GET.get("b", "")
    if not all(re.fullmatch(IdConverter.regex, value) for value in (a, b)):
        return problem_page(request, Problem("Pick two runs to compare.", 400), benchmark)
    if a == b:
        return problem_page(request, Problem("Pick two different runs to compare.", 400), benchmark)
    try:
        lens = lens_for(request, benchmark)
    except Problem as problem:
        return problem_page(request, problem, benchmark)
    return redirect(lens.link(reverse("compare", args=[benchmark.slug, a, b])))


def comparison_page(request: HttpRequest, slug: str, a: int, b: int) -> dict:
    """``reading.comparisons.comparison`` on ``?measure=``, with the page's measure menu."""
    ctx = comparison(request, slug, a, b, request.GET.get("measure"))
    ctx["measure_groups"] = measure_groups(ctx["measures"], ctx["benchmark"].menu_measures())
    return ctx


@require_safe
def compare(request: HttpRequest, slug: str, a: int, b: int) -> HttpResponse:
    try:
        ctx = comparison_page(request, slug, a, b)
    except Problem as problem:
        return problem_page(request, problem, Benchmark.objects.filter(slug=slug).first())
    scores, test, measure = ctx["scores"], ctx["test"], ctx["measure"]
    label = measure_label(measure)
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
                _randomization_question(int(test.get("n") or 0), test.get("permutations") or 0),
            ),
        ],
        **_need_choice(request, ctx, titles),
    )
    # Links on the page are relative to it ("?measure=map&need=401#need-figure"): a
    # 7,000-row table of full paths would weigh 250 KB more.
    ctx.update(
        rows=_comparison_html(scores, titles, measure, ctx["lens"]),
        plots={
            name: comparison_plot(ctx, name, _need_link("", measure, ctx["lens"])) for name in PLOTS
        },
        downloads={name: _download_urls(ctx, name) for name in PLOTS},
    )
    return validated(request, render(request, "leaderboard/compare.html", ctx), ctx["lens"])


PLOTS = ("bars", "scatter", "need", "eleven")


def _need_link(base: str, measure: str, lens):
    """Where a need's bar, dot or table row leads: this comparison's figure of that need,
    on the same judgments."""
    link = lens.links(base, "need", measure=measure)
    return lambda need: f"{link(need)}#need-figure"


def _download_urls(ctx: dict, name: str) -> dict[str, str]:
    """The plot's file in each format: {"svg": url, "png": url}."""
    args = [ctx["benchmark"].slug, ctx["a"].pk, ctx["b"].pk, name]
    need = ctx.get("need") if name == "need" else None
    return {
        fmt: ctx["lens"].link(
            reverse("compare_plot", args=[*args, fmt]),
            measure=ctx["measure"],
            download=1,
            need=need or None,
        )
        for fmt in PLOT_FORMATS
    }


def _randomization_question(n: int, permutations: int) -> str:
    """What the randomization test asks, with how its swaps were made: all 2^n of them
    when that is no more than the permutations (an exact p), else that many at random."""
    if randomization_enumerates(n, permutations):
        how = f"in each of the {2**n:,} possible ways"
    else:
        how = f"at random ({permutations:,} times)"
    return (
        f"If the run labels were swapped on each need {how}, how often would the mean "
        "difference be at least this large?"
    )


def _need_choice(request: HttpRequest, ctx: dict, titles: dict[str, str]) -> dict:
    """The need of the comparison's precision-recall figure: ``?need=``, else the need the
    runs differ most on (the first in table order among equals)."""
    scores = ctx["scores"]
    needs = scores.index.tolist()
    chosen, note = request.GET.get("need"), None
    if chosen not in needs:
        if chosen:
            note = f"No need “{chosen}” among these runs' judged needs; showing another."
        chosen = needs[int(scores["diff"].abs().to_numpy().argmax())] if needs else None
    return {
        "need": chosen,
        "need_title": titles.get(chosen, ""),
        "need_note": note,
        "need_default": chosen != request.GET.get("need"),
        "need_choices": need_choices(needs, titles),
    }


def comparison_plot(ctx: dict, name: str, link) -> SafeString | None:
    """One of the comparison's plots (``PLOTS``), its needs linked by ``link(need)``."""
    scores, measure = ctx["scores"], ctx["label"]
    a, b = ctx["a"].run_name, ctx["b"].run_name
    needs = scores.index.tolist()
    if name == "bars":
        return pair_plots.difference_bars(scores["diff"].to_numpy(), needs, measure, a, b, link)
    if name == "scatter":
        x, y = scores["a"].to_numpy(), scores["b"].to_numpy()
        return pair_plots.scatter(x, y, needs, measure, a, b, link)
    if name == "need":
        need = ctx.get("need")
        if need is None:
            return None
        found = [ctx["result_a"].need_ranks(need), ctx["result_b"].need_ranks(need)]
        num_rel = max((f[1] for f in found if f is not None), default=0)
        curves = {run: f[0] if f else np.empty(0) for run, f in zip((a, b), found, strict=True)}
        return plots.need_pair_figure(curves, num_rel, need)
    curves = {a: eleven_point(ctx["result_a"]), b: eleven_point(ctx["result_b"])}
    return plots.eleven_figure(curves, "averaged over needs")


@require_safe
def compare_plot(
    request: HttpRequest, slug: str, a: int, b: int, name: str, fmt: str
) -> HttpResponse:
    """One plot of the comparison as an SVG or PNG file (``?download=1``: an attachment)."""
    if name not in PLOTS or fmt not in PLOT_FORMATS:
        raise Http404(f"The comparison's plots are {', '.join(PLOTS)}, as .svg or .png.")
    try:
        ctx = comparison_page(request, slug, a, b)
    except Problem as problem:
        return problem_page(request, problem, Benchmark.objects.filter(slug=slug).first())
    ctx["label"] = measure_label(ctx["measure"])
    ctx.update(_need_choice(request, ctx, {}))
    base = request.build_absolute_uri(reverse("compare", args=[slug, a, b]))
    svg = comparison_plot(ctx, name, _need_link(base, ctx["measure"], ctx["lens"]))
    if svg is None:
        raise Http404("These runs have no such plot.")
    what = f"{ctx['a'].run_name}-vs-{ctx['b'].run_name}-{name}-{ctx['measure']}"
    if name == "need":
        what += f"-{ctx['need']}"
    return plot_response(request, svg, what, fmt)


def _comparison_html(scores, titles: dict[str, str], measure: str, lens) -> SafeString:
    """Rows of the per-need table; the sorter reads the numbers from the cells' text.
    Each need id links to the comparison's figure of that need."""
    places = "{:.0f}" if is_count(measure) else "{:.4f}"
    a_text = [places.format(v) for v in scores["a"].tolist()]
    b_text = [places.format(v) for v in scores["b"].tolist()]
    diffs = scores["diff"].tolist()
    link = _need_link("", measure, lens)
    out = []
    for need, a, b, d in zip(scores.index.tolist(), a_text, b_text, diffs, strict=True):
        css = "win" if d > 0 else "loss" if d < 0 else "tie"
        d_text = ("+" if d > 0 else "") + places.format(d)
        out.append(
            f'<tr class="{css}"><th scope="row"><a href="{escape(link(need))}">{escape(need)}</a>'
            f"</th><td>{escape(titles.get(need, ''))}"
            f'</td><td class="num">{a}</td><td class="num">{b}</td><td class="num">{d_text}</td></tr>'
        )
    return mark_safe("".join(out))


@require_safe
def significance(request: HttpRequest, slug: str) -> HttpResponse:
    benchmark = visible_benchmark(request, slug)
    # Counts are not offered to rank by (see boards.NotRankable), unless they are the primary.
    primary = benchmark.primary_measure
    measures = [m for m in benchmark.tested_measures() if m == primary or not is_count(m)]
    # The primary measure, unless it is a summary over needs (GMAP): the first tested one.
    default = primary if primary in measures or not measures else measures[0]
    correction = request.GET.get("correction") or "holm"
    notes = []
    try:
        measure = measure_column(request.GET.get("measure"), default)
    except UnknownMeasure as error:  # said on the page, above the matrix of the default
        notes.append(unknown_measure_message(error))
        measure = default
    if measure not in measures:
        notes.append(f"All pairs are tested on {', '.join(map(measure_label, measures))} only.")
        measure = default
    if correction not in CORRECTIONS:
        notes.append(f"Unknown correction “{correction}”; using Holm.")
        correction = "holm"
    try:
        lens = lens_for(request, benchmark)
    except Problem as problem:
        return problem_page(request, problem, benchmark)
    board = build_leaderboard(benchmark, request.user, measure, lens=lens)
    matrix = significance_matrix(board, correction)
    compare_url = reverse("compare", args=[benchmark.slug, 0, 0]).rsplit("0/0/", 1)[0]
    against_leader = _board_verdicts(board)
    leader = board.leader.submission_id if board.leader else None
    query = lens.link("", measure=measure)
    for line in matrix.cells:
        for cell in line:
            if cell is not None:
                cell["text"] = _p_short(cell["p"])
                cell["phrase"] = p_phrase(cell["p"])
                cell["url"] = f"{compare_url}{cell['a']}/{cell['b']}/{query}"
                cell["board"] = None
                if leader in (cell["a"], cell["b"]):  # only a pair with #1 is on the board
                    run = cell["b"] if cell["a"] == leader else cell["a"]
                    cell["board"] = against_leader.get(run)
    context = {
        "benchmark": benchmark,
        "matrix": matrix,
        "rows": _matrix_html(matrix, lens),
        "measure": measure,
        "measure_label": measure_label(measure),
        "measure_groups": measure_groups(measures, benchmark.menu_measures()),
        "correction": correction,
        "correction_label": CORRECTIONS[correction],
        "corrections": list(CORRECTIONS.items()),
        "alpha": ALPHA,
        "bands": P_BANDS,
        "notes": notes,
        "board": board,
        "lens": lens,
    }
    return validated(request, render(request, "leaderboard/significance.html", context), lens)


def _matrix_html(matrix, lens) -> SafeString:
    """The matrix's rows, built in one pass (through the template engine its 2,500 cells
    would be most of the page's time). A cell's class says the verdict and its p-value
    band; its link leads to the pair's comparison, and a pair with #1 also says the
    board's verdict."""
    out = []
    for row, cells in zip(matrix.rows, matrix.cells, strict=True):
        href = escape(lens.link(reverse("submission", args=[row.submission_id])))
        name = escape(row.run_name)
        out.append(
            f'<tr><th scope="row"><a href="{href}" title="{name}">{row.rank}. {name}</a></th>\n    '
        )
        out.extend(_cell_html(cell) for cell in cells)
        out.append("\n  </tr>")
    return mark_safe("".join(out))


def _cell_html(cell: dict | None) -> str:
    if cell is None:
        return '<td class="self" aria-label="same run">·</td>'
    band, significant = cell["band"], cell["significant"]
    if band is None:
        css = "missing"
    elif significant:
        css = f"{'better' if cell['better'] else 'worse'} band-{band}"
    else:
        css = f"ns band-{band}"
    # named in words: a screen reader would say "black up-pointing triangle"
    word, symbol = ("better", "▲") if cell["better"] else ("worse", "▼")
    mark = f'<span role="img" aria-label="significantly {word}:">{symbol}</span> '
    mark = mark if significant else ""
    title = escape(f"{cell['a_name']} vs {cell['b_name']}: {cell['phrase']}")
    html = (
        f'<td id="pair-{cell["a"]}-{cell["b"]}" class="{css}"><a href="{escape(cell["url"])}"'
        f' title="{title}">{mark}{escape(cell["text"])}</a>'
    )
    board = cell["board"]
    if board:
        verdict = "below" if board["differs"] else "tied"
        html += (
            f'<a class="vs-leader" href="{escape(board["url"])}"'
            f' title="{escape(board["title"])}">vs #1: {verdict}</a>'
        )
    return html + "</td>"


def _p_short(p: float | None) -> str:
    """A matrix cell's p, short enough for a 50-column heatmap: "<0.001", "0.004",
    "0.62" (the full value is in the cell's title); a p just below alpha keeps the
    digits that show it is below ("0.0496", not "0.050")."""
    if p is None or p != p:
        return "—"
    if p < 0.001:
        return "<0.001"
    return p_text(p, 3, ALPHA) if p < 0.1 else f"{p:.2f}"


def _board_verdicts(board: Board) -> dict[int, dict]:
    """The leaderboard's "vs #1" verdict on each run tested against #1, by run id: what
    the matrix's cells of a pair with #1 show beside their own (corrected over all pairs)
    and link to (the run's row on the board)."""
    if board.leader is None:
        return {}
    url = reverse("leaderboard", args=[board.benchmark.slug])
    verdicts = {}
    for index, row in enumerate(board.rows):
        if row.is_leader or row.p_adjusted is None:
            continue
        page = board.lens.link(url, measure=board.measure, page=index // PER_PAGE + 1)
        verdict = (
            "significantly below #1" if row.differs_from_leader else "statistically tied with #1"
        )
        verdicts[row.submission_id] = {
            "url": f"{page}#run-{row.submission_id}",
            "text": fmt_p(row.p_adjusted),
            "differs": row.differs_from_leader,
            "title": f"On the leaderboard's “vs #1” column, {row.run_name} is {verdict}: "
            f"{p_phrase(row.p_adjusted)}, {board.family}",
        }
    return verdicts
