"""Server-rendered SVG plots for the run and comparison pages.

Every plot is a small, self-contained ``<svg role="img">`` with a ``<title>`` and a
``<desc>`` (screen readers announce them; a plot whose needs are links is a
``role="group"`` instead, since an image's children are hidden from them), drawn in a 0..1 data space mapped onto a
fixed view box so that CSS can scale it to any screen. Large series (7,000 needs) are
drawn as one ``<path>`` each instead of thousands of elements, which keeps a page of
two such runs to a few hundred kilobytes and a few milliseconds to build.

**Self-contained and following the page's colours.** Fonts, sizes and colours are
presentation attributes on the elements (no class the page's CSS has to style, no
style element, which the Content-Security-Policy would refuse inline): a
downloaded SVG looks as it does on the page. Text, axes and grid lines are
``currentColor``, so an embedded plot takes the page's text colour (dark text on the
light scheme, light text on a dark one) and a downloaded one is black. The series
colours are mid tones with at least 3.8:1 contrast on white and on a near-black
background, so they read in both schemes.

**Readable on a phone.** The view box is 400 units wide and text is 14 units, so on a
390 px phone (a 358 px wide figure, scale 0.9) text renders at 12.5 px; the page caps
a figure's width, so on a desktop it is ~16 px, not 20.

The run page's figure is the seed chapter's Figure 1 for one need: the
precision-recall point at each relevant document retrieved, the interpolated
(step) curve, the area of average precision shaded (one rectangle of width 1/R and
height P_i per relevant document retrieved, so the shaded area *is* AP), and
R-precision marked where the curve meets the diagonal precision = recall (at rank R
both equal the number of relevant documents in the top R divided by R). The
comparison's per-need charts are in ``pair_plots``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from html import escape

import numpy as np
from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT = 400, 300
LEFT, RIGHT, TOP, BOTTOM = 64, 12, 12, 46
FONT_SIZE = 14  # view-box units; >= 12 px at a 390 px viewport (see the docstring)
# The last two named so that the PNG renderer (resvg, which resolves no generic family
# through fontconfig) finds the fonts a Linux server has (the Docker image: DejaVu).
FONT = (
    "system-ui, -apple-system, 'Segoe UI', Roboto, Arial, 'Liberation Sans', 'DejaVu Sans', "
    "sans-serif"
)
RECALL_LEVELS = [round(i / 10, 1) for i in range(11)]
# Series styles: colour and dash pattern, so curves differ without colour vision too.
SERIES = [("#3a7bd5", ""), ("#d0601f", "6 4"), ("#33913f", "2 3"), ("#9060d0", "8 3 2 3")]
INK = "currentColor"
GRID = f'stroke="{INK}" stroke-opacity="0.15"'


class Frame:
    """Maps data coordinates (x0..x1, y0..y1) onto the plot area of the view box."""

    def __init__(self, x0: float = 0, x1: float = 1, y0: float = 0, y1: float = 1) -> None:
        self.x0, self.x1, self.y0, self.y1 = x0, x1, y0, y1 or 1

    def x(self, value: float) -> float:
        return LEFT + (value - self.x0) / ((self.x1 - self.x0) or 1) * (WIDTH - LEFT - RIGHT)

    def y(self, value: float) -> float:
        span = (self.y1 - self.y0) or 1
        return HEIGHT - BOTTOM - (value - self.y0) / span * (HEIGHT - TOP - BOTTOM)


def clip(text: str, most: int) -> str:
    """``text`` cut to ``most`` characters with an ellipsis: labels stay inside the plot."""
    return text if len(text) <= most else text[: most - 1] + "…"


def svg(title: str, desc: str, body: list[str], kind: str) -> SafeString:
    """The ``<svg>`` element; ``kind`` (``data-plot``) names the plot for tests and CSS.
    Its title's and description's ids come from its content, not a counter, so a page
    drawn twice is the same bytes (its ETag holds) and two plots of a page differ."""
    drawn = "\0".join([kind, title, desc, *body]).encode()
    uid = f"plot-{kind}-{hashlib.blake2b(drawn, digest_size=6).hexdigest()}"
    role = "group" if any(part.startswith("<a ") for part in body) else "img"
    return mark_safe(
        f'<svg class="plot" data-plot="{kind}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="{role}" aria-labelledby="{uid}-t {uid}-d" '
        f'xmlns="http://www.w3.org/2000/svg" font-family="{FONT}" font-size="{FONT_SIZE}" '
        f'fill="{INK}">'
        f'<title id="{uid}-t">{escape(title)}</title><desc id="{uid}-d">{escape(desc)}</desc>'
        + "".join(body)
        + "</svg>"
    )


def ticks(low: float, high: float, count: int = 5) -> list[float]:
    if high <= low:
        return [low]
    step = (high - low) / count
    return [low + i * step for i in range(count + 1)]


def _fmt_tick(value: float) -> str:
    if abs(value) >= 10 or value == int(value):
        return f"{value:.0f}"
    return f"{value:.3f}".rstrip("0").rstrip(".") if abs(value) < 1 else f"{value:.1f}"


def axes(frame: Frame, x_label: str, y_label: str, x_ticks=None, y_ticks=None) -> list[str]:
    parts = ['<g class="axes">']
    for value in y_ticks if y_ticks is not None else ticks(frame.y0, frame.y1):
        y = frame.y(value)
        parts.append(
            f'<line {GRID} x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="tick" x="{LEFT - 6}" y="{y + 5:.1f}" text-anchor="end">'
            f"{_fmt_tick(value)}</text>"
        )
    for value in x_ticks if x_ticks is not None else ticks(frame.x0, frame.x1):
        x = frame.x(value)
        parts.append(
            f'<line {GRID} x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{HEIGHT - BOTTOM}"/>'
            f'<text class="tick" x="{x:.1f}" y="{HEIGHT - BOTTOM + 18}" text-anchor="middle">'
            f"{_fmt_tick(value)}</text>"
        )
    parts.append(
        f'<rect fill="none" stroke="{INK}" stroke-opacity="0.5" x="{LEFT}" y="{TOP}" '
        f'width="{WIDTH - LEFT - RIGHT}" height="{HEIGHT - TOP - BOTTOM}"/>'
        f'<text class="label" x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 6}" '
        f'text-anchor="middle">{escape(clip(x_label, 42))}</text>'
        f'<text class="label" transform="translate(16 {(TOP + HEIGHT - BOTTOM) / 2}) rotate(-90)" '
        f'text-anchor="middle">{escape(clip(y_label, 32))}</text></g>'
    )
    return parts


def diagonal(frame: Frame, top: float = 1) -> str:
    return (
        f'<line class="diagonal" stroke="{INK}" stroke-opacity="0.5" stroke-dasharray="4 4" '
        f'x1="{frame.x(0):.1f}" y1="{frame.y(0):.1f}" x2="{frame.x(top):.1f}" '
        f'y2="{frame.y(top):.1f}"/>'
    )


def _legend(names: Sequence[str]) -> list[str]:
    """Series keys in the plot's bottom-left corner, which precision-recall curves (high
    precision at low recall) leave free more often than any other."""
    x, y = LEFT + 10, HEIGHT - BOTTOM - 10 - (len(names) - 1) * 18
    parts = ['<g class="legend">']
    for i, name in enumerate(names):
        colour, dash = SERIES[i % len(SERIES)]
        yy = y + i * 18
        parts.append(
            f'<line x1="{x}" x2="{x + 22}" y1="{yy - 5}" y2="{yy - 5}" stroke="{colour}" '
            f'stroke-width="2.5" stroke-dasharray="{dash}"/>'
            f'<text x="{x + 28}" y="{yy}">{escape(clip(name, 20))}</text>'
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


def _step_path(frame: Frame, recall: np.ndarray, precision: np.ndarray) -> str:
    """Interpolated precision: at recall r, the best precision at any recall >= r."""
    interpolated = np.maximum.accumulate(precision[::-1])[::-1] if len(precision) else precision
    d = [f"M{frame.x(0):.1f} {frame.y(interpolated[0] if len(interpolated) else 0):.1f}"]
    # the next point's level, 0 after the last (no points: no steps, not one dangling 0)
    following = [*interpolated[1:], 0.0] if len(interpolated) else []
    for r, p_next in zip(recall, following, strict=True):
        d.append(f"H{frame.x(r):.1f}V{frame.y(p_next):.1f}")
    d.append(f"H{frame.x(1):.1f}")
    return "".join(d)


def _dots(frame: Frame, xs, ys) -> str:
    return "".join(f"M{frame.x(x):.1f} {frame.y(y):.1f}h0" for x, y in zip(xs, ys, strict=True))


def _no_relevant(need: str) -> SafeString:
    return svg(
        f"Need {need}: no relevant documents judged",
        "Nothing to plot: precision and recall are undefined without relevant documents.",
        [
            f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">'
            "No relevant documents judged for this need.</text>"
        ],
        "need",
    )


def need_figure(ranks: np.ndarray, num_rel: int, need: str) -> SafeString:
    """The seed's Figure 1 for one need (see the module docstring)."""
    recall, precision = precision_recall_points(ranks, num_rel)
    if num_rel <= 0:
        return _no_relevant(need)
    ranks = np.sort(np.asarray(ranks, dtype=np.int64))
    ap = float(precision.sum() / num_rel)
    r_prec = float((ranks <= num_rel).sum() / num_rel)
    frame = Frame()
    body = axes(frame, "Recall", "Precision", RECALL_LEVELS[::2], RECALL_LEVELS[::2])
    colour, accent = SERIES[0][0], SERIES[1][0]
    # AP: one rectangle per relevant document retrieved, width 1/R, height P_i.
    width = 1 / num_rel
    rects = "".join(
        f"M{frame.x(r - width):.1f} {frame.y(0):.1f}V{frame.y(p):.1f}H{frame.x(r):.1f}"
        f"V{frame.y(0):.1f}Z"
        for r, p in zip(recall, precision, strict=True)
    )
    body.append(
        f'<path class="ap-area" fill="{colour}" fill-opacity="0.22" stroke="{colour}" '
        f'stroke-opacity="0.4" stroke-width="0.5" d="{rects}"/>'
        f'<path class="interp" fill="none" stroke="{colour}" stroke-width="2.5" '
        f'd="{_step_path(frame, recall, precision)}"/>'
    )
    # R-precision sits where precision = recall: the diagonal's crossing at rank R.
    body.append(diagonal(frame))
    body.append(
        f'<path class="points" fill="none" stroke="{INK}" stroke-width="6" '
        f'stroke-linecap="round" d="{_dots(frame, recall, precision)}"/>'
    )
    rx, ry = frame.x(r_prec), frame.y(r_prec)
    # the label on the side with room: right of the diamond on the left half, else left
    tx, anchor = (rx + 9, "start") if rx < WIDTH / 2 else (rx - 9, "end")
    body.append(
        f'<g class="rprec"><rect fill="{accent}" x="{rx - 5:.1f}" y="{ry - 5:.1f}" '
        f'width="10" height="10" transform="rotate(45 {rx:.1f} {ry:.1f})"/>'
        f'<text x="{tx:.1f}" y="{ry + 19:.1f}" text-anchor="{anchor}">Rprec {r_prec:.3f}</text>'
        "</g>"
    )
    body.append(
        f'<g class="legend"><text x="{WIDTH - RIGHT - 8}" y="{TOP + 18}" text-anchor="end">'
        f"AP {ap:.3f} (shaded area)</text>"
        f'<text x="{WIDTH - RIGHT - 8}" y="{TOP + 36}" text-anchor="end">'
        f"R = {num_rel}, retrieved {len(ranks)} relevant</text></g>"
    )
    points = ", ".join(f"({r:.3f}, {p:.3f})" for r, p in zip(recall, precision, strict=True))
    return svg(
        f"Precision-recall for need {need}: AP {ap:.3f}, Rprec {r_prec:.3f}",
        f"Points (recall, precision) at each relevant document retrieved: {points or 'none'}. "
        "A step line shows interpolated precision; shaded rectangles under the points "
        "add up to average precision; a diamond on the diagonal marks R-precision.",
        body,
        "need",
    )


def need_pair_figure(curves: dict[str, np.ndarray], num_rel: int, need: str) -> SafeString:
    """Two (or more) runs on one need: each run's points and interpolated step curve,
    in its series style, with its AP in the legend. ``curves``: run name -> the ranks
    of its relevant documents retrieved."""
    if num_rel <= 0:
        return _no_relevant(need)
    frame = Frame()
    body = axes(frame, "Recall", "Precision", RECALL_LEVELS[::2], RECALL_LEVELS[::2])
    legend, descs = [], []
    for i, (name, ranks) in enumerate(curves.items()):
        colour, dash = SERIES[i % len(SERIES)]
        recall, precision = precision_recall_points(ranks, num_rel)
        ap = float(precision.sum() / num_rel)
        body.append(
            f'<path class="interp" fill="none" stroke="{colour}" stroke-width="2.5" '
            f'stroke-dasharray="{dash}" d="{_step_path(frame, recall, precision)}"/>'
            f'<path class="points" fill="none" stroke="{colour}" stroke-width="7" '
            f'stroke-linecap="round" d="{_dots(frame, recall, precision)}"/>'
        )
        legend.append(f"{clip(name, 12)}: AP {ap:.3f}")
        points = ", ".join(f"({r:.3f}, {p:.3f})" for r, p in zip(recall, precision, strict=True))
        descs.append(f"{name}: AP {ap:.3f}, points {points or 'none'}")
    body += _legend(legend)
    return svg(
        f"Precision-recall for need {need}: " + ", ".join(legend),
        f"R = {num_rel}. (Recall, precision) at each relevant document retrieved and the "
        "interpolated step curve of each run. " + "; ".join(descs),
        body,
        "need",
    )


def eleven_point_figure(curves: dict[str, Sequence[float]], title: str) -> SafeString:
    """Interpolated precision at recall 0.0, 0.1, ..., 1.0, one line per run."""
    frame = Frame()
    body = axes(frame, "Recall", "Interpolated precision", RECALL_LEVELS[::2], RECALL_LEVELS[::2])
    descs = []
    for i, (name, values) in enumerate(curves.items()):
        colour, dash = SERIES[i % len(SERIES)]
        d = "".join(
            f"{'M' if j == 0 else 'L'}{frame.x(r):.1f} {frame.y(v):.1f}"
            for j, (r, v) in enumerate(zip(RECALL_LEVELS, values, strict=True))
        )
        body.append(
            f'<path class="series" fill="none" stroke-width="2.5" d="{d}" stroke="{colour}" '
            f'stroke-dasharray="{dash}"/>'
            f'<path class="series-points" fill="none" stroke-width="6" stroke-linecap="round" '
            f'd="{_dots(frame, RECALL_LEVELS, values)}" stroke="{colour}"/>'
        )
        descs.append(f"{name}: " + ", ".join(f"{v:.3f}" for v in values))
    body += _legend(list(curves))
    return svg(
        title, "Interpolated precision at recall 0.0 to 1.0. " + "; ".join(descs), body, "eleven"
    )


def eleven_figure(curves: dict[str, Sequence[float] | None], what: str) -> SafeString | None:
    """``eleven_point_figure`` of the runs' curves; None when any run has no curve."""
    if any(values is None for values in curves.values()):
        return None
    return eleven_point_figure(curves, f"11-point interpolated precision, {what}")
