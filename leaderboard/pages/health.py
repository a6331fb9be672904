"""The "Benchmark health" page: can this benchmark separate the runs it ranks?

Reads the stored :class:`~leaderboard.models.BenchmarkHealth` of the judgments row the
reader's lens shows (a version, or its public or private part) (computed in the background after each batch of scored runs; never here) and
draws each measure's ASL curve as server-rendered SVG with :mod:`leaderboard.pages.plots`'
conventions (own colours for the series, ``currentColor`` for text, 14-unit text).
Visible as the leaderboard is: to all once published, to its organizers before.
"""

from __future__ import annotations

import math

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import SafeString
from django.views.decorators.http import require_safe

from leaderboard.models import BenchmarkHealth
from leaderboard.pages.plots import GRID, INK, LEFT, RIGHT, SERIES, WIDTH, Frame, axes, svg
from leaderboard.pages.shortcuts import problem_page, validated
from leaderboard.reading.boards import measure_label
from leaderboard.reading.lenses import Lens, lens_for
from leaderboard.reading.visibility import Problem, visible_benchmark

CORRECTIONS = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no"}


def current_health(lens: Lens) -> BenchmarkHealth | None:
    """The stored health of the judgments row the reader's lens shows, if computed yet."""
    if lens.judgments_id is None:
        return None
    return (
        BenchmarkHealth.objects.filter(
            benchmark=lens.benchmark,
            judgments_id=lens.judgments_id,
            computed_at__isnull=False,
        )
        .only("data", "computed_at", "benchmark_id", "judgments_id")
        .first()
    )


def asl_figure(curve: list[list[float]], label: str, alpha: float, pairs: int) -> SafeString:
    """Sorted p-values (y, 0..1) against pair rank (x), with the alpha line."""
    frame = Frame(1, max(pairs, 2), 0, 1)
    x_ticks = sorted({1, *(round(pairs * f) for f in (0.25, 0.5, 0.75)), pairs})
    body = axes(frame, "Pairs of runs, by p-value", "Corrected p-value", x_ticks, None)
    colour, _ = SERIES[0]
    path = "".join(
        f"{'M' if i == 0 else 'L'}{frame.x(r):.1f} {frame.y(p):.1f}"
        for i, (r, p) in enumerate(curve)
    )
    y = frame.y(alpha)
    body.append(
        f'<line class="alpha" {GRID.replace("0.15", "0.7")} stroke-dasharray="5 4" '
        f'x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
        f'<text x="{WIDTH - RIGHT - 4}" y="{y - 5:.1f}" text-anchor="end" fill="{INK}">'
        f"α = {alpha:g}</text>"
        f'<path class="series" fill="none" stroke-width="2.5" stroke="{colour}" d="{path}"/>'
    )
    if len(curve) <= 50:  # few pairs: each one a dot (a single pair draws no line)
        dots = "".join(f"M{frame.x(r):.1f} {frame.y(p):.1f}h0" for r, p in curve)
        body.append(
            f'<path class="series-points" fill="none" stroke-width="7" stroke-linecap="round" '
            f'stroke="{colour}" d="{dots}"/>'
        )
    below = sum(1 for _, p in curve if p < alpha)
    desc = (
        f"The corrected p-value of each of {pairs} pairs of runs on {label}, sorted; "
        f"the curve stays below α = {alpha:g} for the pairs found significant "
        f"({below} of the {len(curve)} points drawn)."
    )
    return svg(f"Achieved significance level curve, {label}", desc, body, "asl")


def _pct(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.1%}"


@require_safe
def benchmark_health(request: HttpRequest, slug: str) -> HttpResponse:
    benchmark = visible_benchmark(request, slug)
    try:
        lens = lens_for(request, benchmark)
    except Problem as problem:
        return problem_page(request, problem, benchmark)
    health = current_health(lens)
    measures = []
    data = health.data if health else {}
    for name, stats in (data.get("measures") or {}).items():
        label = measure_label(name)
        discrim = stats.get("discriminative_power") or {}
        measures.append(
            {
                "name": name,
                "label": label,
                "stats": stats,
                "sizes": [
                    (delta, stats["topic_set_size"].get(str(delta)))
                    for delta in data.get("deltas", [])
                ],
                "share": _pct(discrim.get("share")),
                "discrim": discrim,
                "figure": asl_figure(stats["asl"], label, data["alpha"], discrim["pairs"])
                if stats.get("asl") and discrim.get("pairs")
                else None,
            }
        )
    context = {
        "benchmark": benchmark,
        "lens": lens,
        "health": health,
        "before_reveal": health is not None and health.computed_before_reveal(),
        "data": data,
        "measures": measures,
        "primary_label": measure_label(benchmark.primary_measure),
        "pool": health.pool_bias_for(request.user) if health else None,
        "correction_label": CORRECTIONS.get(data.get("correction", ""), ""),
    }
    return validated(request, render(request, "leaderboard/health.html", context), lens)
