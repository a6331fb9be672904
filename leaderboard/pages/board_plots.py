"""The benchmark page's progress plot: every run's score on the ranking measure by the
time it was submitted, and the best score so far as a step line, as Papers with Code
draws the state of the art over time. Drawn with the run pages' SVG helpers
(``plots``), so it follows the page's colours and scales to a phone."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from django.utils.safestring import SafeString

from leaderboard.pages.plots import HEIGHT, INK, LEFT, SERIES, Frame, axes, svg, ticks


@dataclass(frozen=True)
class Point:
    submitted: dt.datetime
    value: float
    run_name: str
    is_baseline: bool


def running_best(points: Sequence[Point]) -> list[Point]:
    """The points that set a new best, in time order (ties keep the earlier run)."""
    best: list[Point] = []
    for point in sorted(points, key=lambda p: p.submitted):
        if not best or point.value > best[-1].value:
            best.append(point)
    return best


def progress_figure(points: Sequence[Point], measure: str) -> SafeString | None:
    """Runs as dots (baselines as hollow squares), the best so far as a step line; None
    for fewer than two runs (nothing to see progress in)."""
    if len(points) < 2:
        return None
    start = min(p.submitted for p in points).timestamp()
    end = max(p.submitted for p in points).timestamp()
    span = (end - start) or 1.0
    top = max(p.value for p in points)
    frame = Frame(0, 1, 0, top * 1.05 if top > 0 else 1)

    def x_of(moment: dt.datetime) -> float:
        return (moment.timestamp() - start) / span

    body = axes(frame, "Submitted (UTC)", measure, x_ticks=[], y_ticks=ticks(0, frame.y1, 4))
    for fraction in (0, 0.5, 1):
        moment = dt.datetime.fromtimestamp(start + fraction * span, dt.UTC)
        anchor = {0: "start", 0.5: "middle", 1: "end"}[fraction]
        body.append(
            f'<text class="tick" x="{frame.x(fraction):.1f}" y="{HEIGHT - 28}" '
            f'text-anchor="{anchor}">{moment:%Y-%m-%d}</text>'
        )
    best = running_best(points)
    colour, accent = SERIES[0][0], SERIES[1][0]
    steps = [f"M{frame.x(x_of(best[0].submitted)):.1f} {frame.y(best[0].value):.1f}"]
    for point in best[1:]:
        steps.append(f"H{frame.x(x_of(point.submitted)):.1f}V{frame.y(point.value):.1f}")
    steps.append(f"H{frame.x(1):.1f}")
    body.append(
        f'<path class="best" fill="none" stroke="{colour}" stroke-width="2.5" d="{"".join(steps)}"/>'
    )
    runs = "".join(
        f"M{frame.x(x_of(p.submitted)):.1f} {frame.y(p.value):.1f}h0"
        for p in points
        if not p.is_baseline
    )
    body.append(
        f'<path class="runs" fill="none" stroke="{INK}" stroke-opacity="0.6" stroke-width="6" '
        f'stroke-linecap="round" d="{runs}"/>'
    )
    for p in points:
        if p.is_baseline:
            x, y = frame.x(x_of(p.submitted)), frame.y(p.value)
            body.append(
                f'<rect class="baseline" fill="none" stroke="{accent}" stroke-width="2" '
                f'x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8"/>'
            )
    body.append(
        f'<g class="legend"><text x="{LEFT + 8}" y="{frame.y(frame.y1) + 18:.1f}">'
        f"best {escape(measure)} {best[-1].value:.4f} ({escape(best[-1].run_name)})</text></g>"
    )
    records = "; ".join(f"{p.submitted:%Y-%m-%d} {p.run_name} {p.value:.4f}" for p in best)
    baselines = sum(p.is_baseline for p in points)
    return svg(
        f"Best {measure} over time: {best[-1].value:.4f}",
        f"{len(points)} runs by submission time ({baselines} baselines, hollow squares); "
        f"the step line is the best so far, set by: {records}.",
        body,
        "progress",
    )
