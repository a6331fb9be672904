"""Server-rendered SVG plots for the run and comparison pages.

Every plot is a small, self-contained ``<svg role="img">`` with a ``<title>`` and a
``<desc>`` (screen readers announce them), drawn in a 0..1 data space mapped onto a
fixed view box so that CSS can scale it to any screen. Large series (7,000 needs) are
drawn as one ``<path>`` each instead of thousands of elements, which keeps a page of
two such runs to a few hundred kilobytes and a few milliseconds to build.

The run page's figure is the seed chapter's Figure 1 for one need: the
precision-recall point at each relevant document retrieved, the interpolated
(step) curve, the area of average precision shaded (one rectangle of width 1/R and
height P_i per relevant document retrieved, so the shaded area *is* AP), and
R-precision marked where the curve meets the diagonal precision = recall (at rank R
both equal the number of relevant documents in the top R divided by R).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from html import escape

import numpy as np
from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT = 480, 340
LEFT, RIGHT, TOP, BOTTOM = 52, 16, 16, 44
RECALL_LEVELS = [round(i / 10, 1) for i in range(11)]
# Series styles: colour and dash pattern, so curves differ without colour vision too.
# Up to this many needs the difference chart draws one bar per need.
BARS_UP_TO = 200
SERIES = [("#1f5fa8", ""), ("#b4431e", "6 4"), ("#3d7a32", "2 3"), ("#6b3fa0", "8 3 2 3")]
_ids = itertools.count(1)


class _Frame:
    """Maps data coordinates (x0..x1, y0..y1) onto the plot area of the view box."""

    def __init__(self, x0: float = 0, x1: float = 1, y0: float = 0, y1: float = 1) -> None:
        self.x0, self.x1, self.y0, self.y1 = x0, x1, y0, y1 or 1

    def x(self, value: float) -> float:
        return LEFT + (value - self.x0) / ((self.x1 - self.x0) or 1) * (WIDTH - LEFT - RIGHT)

    def y(self, value: float) -> float:
        span = (self.y1 - self.y0) or 1
        return HEIGHT - BOTTOM - (value - self.y0) / span * (HEIGHT - TOP - BOTTOM)


def _svg(title: str, desc: str, body: list[str], css_class: str = "plot") -> SafeString:
    uid = f"plot{next(_ids)}"
    return mark_safe(
        f'<svg class="{css_class}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-labelledby="{uid}-t {uid}-d" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="{uid}-t">{escape(title)}</title><desc id="{uid}-d">{escape(desc)}</desc>'
        + "".join(body)
        + "</svg>"
    )


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    if high <= low:
        return [low]
    step = (high - low) / count
    return [low + i * step for i in range(count + 1)]


def _fmt_tick(value: float) -> str:
    if abs(value) >= 10 or value == int(value):
        return f"{value:.0f}"
    return f"{value:.2f}".rstrip("0").rstrip(".") if abs(value) < 1 else f"{value:.1f}"


def _axes(frame: _Frame, x_label: str, y_label: str, x_ticks=None, y_ticks=None) -> list[str]:
    parts = ['<g class="axes">']
    for value in y_ticks if y_ticks is not None else _ticks(frame.y0, frame.y1):
        y = frame.y(value)
        parts.append(
            f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="tick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
            f"{_fmt_tick(value)}</text>"
        )
    for value in x_ticks if x_ticks is not None else _ticks(frame.x0, frame.x1):
        x = frame.x(value)
        parts.append(
            f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{HEIGHT - BOTTOM}"/>'
            f'<text class="tick" x="{x:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">'
            f"{_fmt_tick(value)}</text>"
        )
    parts.append(
        f'<rect class="frame" x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" '
        f'height="{HEIGHT - TOP - BOTTOM}"/>'
        f'<text class="label" x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 8}" '
        f'text-anchor="middle">{escape(x_label)}</text>'
        f'<text class="label" transform="translate(14 {(TOP + HEIGHT - BOTTOM) / 2}) rotate(-90)" '
        f'text-anchor="middle">{escape(y_label)}</text></g>'
    )
    return parts


def _legend(names: Sequence[str], x: float = LEFT + 10, y: float = TOP + 14) -> list[str]:
    parts = ['<g class="legend">']
    for i, name in enumerate(names):
        colour, dash = SERIES[i % len(SERIES)]
        yy = y + i * 16
        parts.append(
            f'<line x1="{x}" x2="{x + 22}" y1="{yy - 4}" y2="{yy - 4}" stroke="{colour}" '
            f'stroke-width="2.5" stroke-dasharray="{dash}"/>'
            f'<text x="{x + 28}" y="{yy}">{escape(name)}</text>'
        )
    parts.append("</g>")
    return parts


def precision_recall_points(ranks: np.ndarray, num_rel: int) -> tuple[np.ndarray, np.ndarray]:
    """(recall, precision) at each relevant document retrieved: i/R and i/rank_i."""
    ranks = np.sort(np.asarray(ranks, dtype=np.int64))
    hits = np.arange(1, len(ranks) + 1, dtype=np.float64)
    if num_rel <= 0:
        return np.empty(0), np.empty(0)
    return hits / num_rel, hits / ranks


def need_figure(ranks: np.ndarray, num_rel: int, need: str) -> SafeString:
    """The seed's Figure 1 for one need (see the module docstring)."""
    recall, precision = precision_recall_points(ranks, num_rel)
    if num_rel <= 0:
        return _svg(
            f"Need {need}: no relevant documents judged",
            "Nothing to plot: precision and recall are undefined without relevant documents.",
            [
                f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">'
                "No relevant documents judged for this need.</text>"
            ],
        )
    ranks = np.sort(np.asarray(ranks, dtype=np.int64))
    ap = float(precision.sum() / num_rel)
    r_prec = float((ranks <= num_rel).sum() / num_rel)
    frame = _Frame()
    body = _axes(frame, "Recall", "Precision", RECALL_LEVELS[::2], RECALL_LEVELS[::2])
    # AP: one rectangle per relevant document retrieved, width 1/R, height P_i.
    width = 1 / num_rel
    rects = "".join(
        f"M{frame.x(r - width):.1f} {frame.y(0):.1f}V{frame.y(p):.1f}H{frame.x(r):.1f}"
        f"V{frame.y(0):.1f}Z"
        for r, p in zip(recall, precision, strict=True)
    )
    body.append(f'<path class="ap-area" d="{rects}"/>')
    # Interpolated precision: at recall r, the best precision at any recall >= r.
    interpolated = np.maximum.accumulate(precision[::-1])[::-1] if len(precision) else precision
    d = [f"M{frame.x(0):.1f} {frame.y(interpolated[0] if len(interpolated) else 0):.1f}"]
    # the next point's level, 0 after the last (no points: no steps, not one dangling 0)
    following = [*interpolated[1:], 0.0] if len(interpolated) else []
    for r, p_next in zip(recall, following, strict=True):
        d.append(f"H{frame.x(r):.1f}V{frame.y(p_next):.1f}")
    d.append(f"H{frame.x(1):.1f}")
    body.append(f'<path class="interp" d="{"".join(d)}"/>')
    # R-precision sits where precision = recall: the diagonal's crossing at rank R.
    body.append(
        f'<line class="diagonal" x1="{frame.x(0):.1f}" y1="{frame.y(0):.1f}" '
        f'x2="{frame.x(1):.1f}" y2="{frame.y(1):.1f}"/>'
    )
    dots = "".join(
        f"M{frame.x(r):.1f} {frame.y(p):.1f}h0" for r, p in zip(recall, precision, strict=True)
    )
    body.append(f'<path class="points" d="{dots}"/>')
    rx, ry = frame.x(r_prec), frame.y(r_prec)
    body.append(
        f'<g class="rprec"><rect x="{rx - 5:.1f}" y="{ry - 5:.1f}" width="10" height="10" '
        f'transform="rotate(45 {rx:.1f} {ry:.1f})"/>'
        f'<text x="{rx + 9:.1f}" y="{ry + 16:.1f}">R-Prec {r_prec:.3f}</text></g>'
    )
    body.append(
        f'<g class="legend"><text x="{WIDTH - RIGHT - 8}" y="{TOP + 16}" text-anchor="end">'
        f"AP {ap:.3f} (shaded area)</text>"
        f'<text x="{WIDTH - RIGHT - 8}" y="{TOP + 32}" text-anchor="end">'
        f"R = {num_rel}, retrieved {len(ranks)} relevant</text></g>"
    )
    points = ", ".join(f"({r:.3f}, {p:.3f})" for r, p in zip(recall, precision, strict=True))
    return _svg(
        f"Precision-recall for need {need}: AP {ap:.3f}, R-precision {r_prec:.3f}",
        f"Points (recall, precision) at each relevant document retrieved: {points or 'none'}. "
        "A step line shows interpolated precision; shaded rectangles under the points "
        "add up to average precision; a diamond on the diagonal marks R-precision.",
        body,
    )


def eleven_point_figure(curves: dict[str, Sequence[float]], title: str) -> SafeString:
    """Interpolated precision at recall 0.0, 0.1, ..., 1.0, one line per run."""
    frame = _Frame()
    body = _axes(frame, "Recall", "Interpolated precision", RECALL_LEVELS[::2], RECALL_LEVELS[::2])
    descs = []
    for i, (name, values) in enumerate(curves.items()):
        colour, dash = SERIES[i % len(SERIES)]
        d = "".join(
            f"{'M' if j == 0 else 'L'}{frame.x(r):.1f} {frame.y(v):.1f}"
            for j, (r, v) in enumerate(zip(RECALL_LEVELS, values, strict=True))
        )
        dots = "".join(
            f"M{frame.x(r):.1f} {frame.y(v):.1f}h0"
            for r, v in zip(RECALL_LEVELS, values, strict=True)
        )
        body.append(
            f'<path class="series" d="{d}" stroke="{colour}" stroke-dasharray="{dash}"/>'
            f'<path class="series-points" d="{dots}" stroke="{colour}"/>'
        )
        descs.append(f"{name}: " + ", ".join(f"{v:.3f}" for v in values))
    body += _legend(list(curves), x=WIDTH - RIGHT - 150)
    return _svg(title, "Interpolated precision at recall 0.0 to 1.0. " + "; ".join(descs), body)


def eleven_figure(curves: dict[str, Sequence[float] | None], what: str) -> SafeString | None:
    """``eleven_point_figure`` of the runs' curves; None when any run has no curve."""
    if any(values is None for values in curves.values()):
        return None
    return eleven_point_figure(curves, f"11-point interpolated precision, {what}")


def _nice_bound(value: float) -> float:
    """A round axis bound at or above ``value`` (1, 2, 5 times a power of ten)."""
    if not value or value != value:
        return 1.0
    exponent = np.floor(np.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        bound = step * 10**exponent
        if bound >= value - 1e-12:
            return float(bound)
    return float(10 ** (exponent + 1))


def difference_bars(diffs: np.ndarray, measure: str, a: str, b: str) -> SafeString:
    """Per-need differences a - b, sorted from largest to smallest, as one bar path each sign."""
    diffs = np.sort(np.asarray(diffs, dtype=np.float64))[::-1]
    n = len(diffs)
    bound = _nice_bound(float(np.abs(diffs).max()) if n else 1.0)
    frame = _Frame(0, max(n, 1), -bound, bound)
    body = _axes(
        frame,
        f"Needs, sorted by difference ({n})",
        f"{measure}: {a} − {b}",
        x_ticks=[],
        y_ticks=_ticks(-bound, bound, 4),
    )
    zero = frame.y(0)
    if n <= BARS_UP_TO:
        bar = (WIDTH - LEFT - RIGHT) / max(n, 1)
        gap = 0.15 * bar if bar > 3 else 0
        for sign, css in ((1, "bar-pos"), (-1, "bar-neg")):
            d = "".join(
                f"M{frame.x(i) + gap:.1f} {zero:.1f}V{frame.y(diffs[i]):.1f}"
                f"H{frame.x(i + 1) - gap:.1f}V{zero:.1f}Z"
                for i in np.flatnonzero(np.sign(diffs) == sign)
            )
            body.append(f'<path class="{css}" d="{d}"/>')
    else:
        # More needs than pixels: the bars merge into the area under the sorted curve,
        # drawn from one sample per half pixel column (exact at the plot's resolution).
        for sign, css in ((1, "bar-pos"), (-1, "bar-neg")):
            idx = np.flatnonzero(np.sign(diffs) == sign)
            if not len(idx):
                continue
            take = np.unique(np.linspace(idx[0], idx[-1], min(len(idx), 2 * BARS_UP_TO)).round())
            xs = LEFT + (take + 0.5) / n * (WIDTH - LEFT - RIGHT)
            ys = (
                HEIGHT
                - BOTTOM
                - (diffs[take.astype(int)] + bound) / (2 * bound) * (HEIGHT - TOP - BOTTOM)
            )
            x0 = LEFT + idx[0] / n * (WIDTH - LEFT - RIGHT)
            x1 = LEFT + (idx[-1] + 1) / n * (WIDTH - LEFT - RIGHT)
            line = "".join(f"L{x:.1f} {y:.1f}" for x, y in zip(xs, ys, strict=True))
            body.append(
                f'<path class="{css}" d="M{x0:.1f} {zero:.1f}{line}L{x1:.1f} {zero:.1f}Z"/>'
            )
    wins, losses = int((diffs > 0).sum()), int((diffs < 0).sum())
    return _svg(
        f"Per-need difference in {measure}, {a} minus {b}",
        f"{n} needs sorted by difference: {wins} above zero ({a} better), "
        f"{losses} below zero ({b} better), {n - wins - losses} tied.",
        body,
    )


def scatter(x: np.ndarray, y: np.ndarray, measure: str, a: str, b: str) -> SafeString:
    """One dot per need, a's score across, b's score up; the diagonal is 'no difference'.

    Dots are snapped to whole view-box units and drawn once, so 7,000 needs stay small.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    top = _nice_bound(float(max(x.max(initial=0), y.max(initial=0), 1.0)))
    frame = _Frame(0, top, 0, top)
    body = _axes(frame, f"{a}: {measure}", f"{b}: {measure}")
    body.append(
        f'<line class="diagonal" x1="{frame.x(0):.1f}" y1="{frame.y(0):.1f}" '
        f'x2="{frame.x(top):.1f}" y2="{frame.y(top):.1f}"/>'
    )
    px = np.rint(LEFT + x / top * (WIDTH - LEFT - RIGHT)).astype(np.int64)
    py = np.rint(HEIGHT - BOTTOM - y / top * (HEIGHT - TOP - BOTTOM)).astype(np.int64)
    unique = np.unique(px * 10_000 + py)
    dots = "".join(f"M{k // 10_000} {k % 10_000}h0" for k in unique.tolist())
    body.append(f'<path class="points" d="{dots}"/>')
    above, below = int((y > x).sum()), int((y < x).sum())
    return _svg(
        f"{measure} per need: {a} against {b}",
        f"{len(x)} needs; {below} below the diagonal ({a} better), {above} above "
        f"({b} better), {len(x) - above - below} on it.",
        body,
    )
