"""The reader's first pages: the list of benchmarks and each benchmark's leaderboard.

Thin views: ``boards`` ranks the runs and tests them against the leader, ``paging`` cuts
the ranked board into pages and searches it; the rows are built here as HTML in one pass
(see ``_board_html``); templates lay out.
"""

from __future__ import annotations

from html import escape

from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_safe

from evaluation.measures import UnknownMeasure
from leaderboard.models import Benchmark, InformationNeed
from leaderboard.pages.board_plots import Point, progress_figure
from leaderboard.pages.health import current_health
from leaderboard.pages.menus import measure_groups
from leaderboard.pages.paging import board_page
from leaderboard.pages.richtext import markdown_html, markdown_text
from leaderboard.pages.shortcuts import fmt, fmt_p, p_phrase, problem_page, validated
from leaderboard.reading.boards import (
    ALPHA,
    build_leaderboard,
    current_leaders,
    is_count,
    measure_label,
    unknown_measure_message,
)
from leaderboard.reading.lenses import lens_for
from leaderboard.reading.visibility import Problem, visible_benchmark

JUDGED = "judged_10"  # Judged@10: the share of a run's top 10 the pool judged


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    benchmarks = list(
        Benchmark.objects.visible_to(request.user).prefetch_related("phases").order_by("title")
    )
    counts = _need_counts(benchmarks)
    leaders = current_leaders(benchmarks, request.user)
    rows = []
    for benchmark in benchmarks:
        leader, runs = leaders.get(benchmark.pk, (None, 0))
        rows.append(
            {
                "benchmark": benchmark,
                "summary": markdown_text(benchmark.description),
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


@require_safe
def leaderboard(request: HttpRequest, slug: str) -> HttpResponse:
    benchmark = visible_benchmark(request, slug)
    try:
        lens = lens_for(request, benchmark)
        board = build_leaderboard(
            benchmark, request.user, request.GET.get("measure"), request.GET.get("best"), lens
        )
    except UnknownMeasure as error:
        return problem_page(request, Problem(unknown_measure_message(error), 400), benchmark)
    except Problem as problem:
        return problem_page(request, problem, benchmark)
    shown = board_page(board, request.GET.get("q"), request.GET.get("page"), request.user)
    others = [m for m in board.columns if m != board.measure]
    health = current_health(lens)  # stored by the background task, never computed here
    context = {
        "mdd_line": health.mdd_line(board.measure, measure_label(board.measure))
        if health
        else None,
        "best": "team" if board.best_per_team else None,
        "benchmark": benchmark,
        "is_organizer": benchmark.is_organised_by(request.user),
        "timeline": benchmark.timeline(),
        "progress": progress_figure(
            [
                Point(row.created, row.value, row.run_name, row.is_baseline)
                for row in board.rows
                if row.value is not None
            ],
            measure_label(board.measure),
        ),
        "description": markdown_html(benchmark.description),
        "rules": markdown_html(benchmark.rules),
        "data": markdown_html(benchmark.data_description),
        "board": board,
        "lens": lens,
        "shown": shown,
        "page_prefix": _page_prefix(_params(board, benchmark, shown.query)),
        "own_prefix": _page_prefix(_params(board, benchmark, "")),
        "all_runs": _params(board, benchmark, "") or "?",
        "page_range": shown.page.paginator.get_elided_page_range(shown.page.number),
        "alpha": ALPHA,
        "measure_label": measure_label(board.measure),
        "column_heads": [(m, measure_label(m), not is_count(m)) for m in others],
        "measure_groups": measure_groups(board.measures, benchmark.menu_measures()),
        "run_options": _run_options(board.rows),
        "table_rows": _board_html(board, shown.rows, others),
        "pinned_row": _board_html(board, [shown.pinned_leader], others, "pinned")
        if shown.pinned_leader
        else "",
        "needs": lens.judgments.num_needs if lens.judgments else 0,
        "stored_measures": [(m, measure_label(m)) for m in benchmark.tested_measures()],
        "primary_label": measure_label(benchmark.primary_measure),
        "judged_column": shows_judged(board),
        "underjudged": [
            row
            for row in board.rows
            if is_underjudged(row.summary.get(JUDGED), benchmark.judged_threshold)
        ],
    }
    return validated(request, render(request, "leaderboard/leaderboard.html", context), lens)


def _params(board, benchmark: Benchmark, query: str) -> str:
    """What a page link carries, as a query string ("?..."; "" when nothing is asked): the
    lens's version and needs, the measure (unless it is the primary), best run per team,
    and the search."""
    return board.lens.link(
        "",
        measure=board.measure if board.measure != benchmark.primary_measure else None,
        best="team" if board.best_per_team else None,
        q=query or None,
    )


def _page_prefix(params: str) -> str:
    """A page link up to its number: ``?measure=P_10&q=bm25&page=``."""
    return f"{params}&page=" if params else "?page="


def _board_html(board, rows, others: list[str], css_class: str = "") -> SafeString:
    """The leaderboard's rows. Built here rather than in the template because a
    thousand runs through Django's template engine take ~100 ms; this takes ~5.

    Columns: rank, run, the ranking measure (with a bar) and "vs #1" first (what a phone
    shows without scrolling), then the other measures, Judged@10 and the participant.
    One line per run: the CSS truncates long run and participant names, whose full text
    stays in the cell (what a screen reader reads) and in its title (hover); the run's
    link carries the submission time in its title rather than a column of its own; it
    keeps the reader's lens, as every link from the board does."""
    run_url = reverse("submission", args=[0])[:-2]
    keep = escape(board.lens.link(""))
    judged = shows_judged(board)
    pending = board.significance == "stored"
    other_verdict = _other_verdict(board)
    top = board.leader.value if board.leader else None
    out = []
    for row in rows:
        classes = [css_class] if css_class else []
        if row.is_leader:
            classes.append("leader")
        elif row.tied_with_leader:
            classes.append("tied")
        css = f' class="{" ".join(classes)}"' if classes else ""
        badges = ' <span class="badge baseline">baseline</span>' if row.is_baseline else ""
        if not row.is_public:
            badges += (
                f' <span class="badge hidden">{"hidden" if row.is_hidden else row.status}</span>'
            )
        badges += _run_links(row)
        cells = "".join(f'<td class="num">{fmt(row.summary.get(m), m)}</td>' for m in others)
        if judged:
            cells += _judged_cell(row.summary.get(JUDGED), board.benchmark.judged_threshold)
        if row.is_leader:
            sig = "#1"
        elif row.differs_from_leader or row.tied_with_leader:
            sig = _verdict_html(board, row, other_verdict(row))
        elif row.value is not None and pending:
            sig = '<span class="muted">pending</span>'
        else:
            sig = ""
        anchor = "" if css_class else f' id="run-{row.submission_id}"'
        name = escape(row.run_name)
        title = escape(f"{row.run_name}, submitted {row.created:%Y-%m-%d %H:%M} UTC")
        out.append(
            f'<tr{anchor}{css}><td class="num rank">{row.rank or "—"}</td>'
            f'<th scope="row"><a href="{run_url}{row.submission_id}/{keep}" class="run-name" '
            f'title="{title}">{name}</a>{badges}</th><td class="num ranked">'
            f"{_bar(row.value, top)}{fmt(row.value, board.measure)}</td>"
            f'<td class="sig">{sig}</td>{cells}{_who(row)}</tr>'
        )
    return mark_safe("\n".join(out))


BAR_WIDTH = 48  # px: the ranking measure's bar, the leader's value filling it


def _bar(value: float | None, top: float | None) -> str:
    """A small bar of a run's value on the ranking measure, as a share of #1's value
    (decorative: the number beside it says the same). An SVG with presentation
    attributes, which the CSP allows where a ``style`` attribute would be refused."""
    if value is None or not top or top <= 0 or value < 0:
        return ""
    width = round(BAR_WIDTH * min(value / top, 1.0), 1)
    return (
        f'<svg class="bar" width="{BAR_WIDTH}" height="8" aria-hidden="true" focusable="false">'
        f'<rect class="track" width="{BAR_WIDTH}" height="8" rx="2"/>'
        f'<rect class="fill" width="{width:g}" height="8" rx="2"/></svg>'
    )


def _verdict_html(board, row, other: tuple[str, str]) -> str:
    """The "vs #1" cell of a tested run: its mark, its corrected p and the family that p
    is corrected over (in the title), the p linking to the pair's other verdict."""
    verdict = "significantly below #1" if row.differs_from_leader else "statistically tied with #1"
    # The symbol alone would be read as "black down-pointing triangle": it is an image
    # named in words (the title, a tooltip for the mouse, adds the p and the family).
    mark = (
        '<span class="mark diff" role="img" aria-label="below #1"'
        if row.differs_from_leader
        else '<span class="mark tie" role="img" aria-label="tied with #1"'
    )
    symbol = "▼" if row.differs_from_leader else "≈"
    title = escape(f"{verdict}: {p_phrase(row.p_adjusted)}, {board.family}")
    url, where = other
    return (
        f'{mark} title="{title}">{symbol}</span> <a class="p" href="{escape(url)}" '
        f'title="{escape(where)}">{escape("p " + fmt_p(row.p_adjusted))}</a>'
    )


def _other_verdict(board):
    """Where a run's "vs #1" p links: the pair's cell in the all-pairs matrix (corrected
    over every pair of the top runs) when the matrix has the pair, else the pair's
    comparison (its raw p-values). The matrix is of every run, on tested measures only,
    so best-per-team boards and measures tested on the fly link to the comparison. Both
    on the board's lens."""
    leader = board.leader
    slug, measure = board.benchmark.slug, board.lens.link("", measure=board.measure)
    compare_url = reverse("compare", args=[slug, 0, 0]).rsplit("0/0/", 1)[0]
    matrix_url = reverse("significance", args=[slug])
    in_matrix = {row.submission_id for row in board.in_matrix}

    def other(row) -> tuple[str, str]:
        if leader.submission_id in in_matrix and row.submission_id in in_matrix:
            return (
                f"{matrix_url}{measure}#pair-{leader.submission_id}-{row.submission_id}",
                f"This pair in the all-pairs matrix (Holm-corrected over {board.matrix_family})",
            )
        return (
            f"{compare_url}{leader.submission_id}/{row.submission_id}/{measure}",
            "This pair's comparison (raw p-values, one comparison)",
        )

    return other


def _who(row) -> str:
    """The participant's cell: the display name (or username) and the team as a small
    label after it, the whole in the cell's title for when the CSS truncates it."""
    team = f' <span class="team">{escape(row.team)}</span>' if row.team else ""
    whole = f"{row.participant} ({row.team})" if row.team else row.participant
    return f'<td class="wide who" title="{escape(whole)}">{escape(row.participant)}{team}</td>'


def _run_links(row) -> str:
    """The owner's paper and code links, small, after the run's name (http(s) only: the
    model's validator)."""
    links = [
        f'<a href="{escape(url)}" rel="nofollow ugc noopener">{label}</a>'
        for label, url in (("paper", row.paper_url), ("code", row.code_url))
        if url
    ]
    return f' <span class="run-links">{" ".join(links)}</span>' if links else ""


def shows_judged(board) -> bool:
    """The Judged@10 column: when a run has the value (scored since it is stored)."""
    return any(JUDGED in row.summary for row in board.rows)


def is_underjudged(value, threshold: float) -> bool:
    return isinstance(value, int | float) and value == value and value < threshold


def _judged_cell(value, threshold: float) -> str:
    """Judged@10, with a badge in words when it is below the benchmark's threshold."""
    if not is_underjudged(value, threshold):
        return f'<td class="num judged">{fmt(value, JUDGED)}</td>'
    return (
        f'<td class="num judged low"><span class="badge underjudged" title="Judged@10 below '
        f'{threshold:g}: scores are underestimates">few judged</span> {fmt(value, JUDGED)}'
        '<a href="#judged-note" class="note-ref" aria-label="see the note on Judged@10">*</a></td>'
    )


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
