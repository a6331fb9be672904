"""The comparison page's per-need charts: the sorted differences and the scatter.

Each need is its own element, up to a few hundred needs: a link (``link(need)``, the
comparison's figure of that need) around a ``<title>`` (the tooltip and the link's
accessible name, "cs-foundations: +0.1144") and the shapes. A bar's link covers its
whole column, so a need the runs tie on (a bar of height 0) can still be chosen. Where
a column is wide enough for 14-unit text (20 needs or fewer) the bar carries its need
id as a visible label on the other side of the zero line. Past that many needs the
charts are drawn as one path per series, as before (7,000 linked elements would make
the page megabytes); the per-need table's links choose a need there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

import numpy as np
from django.utils.safestring import SafeString

from leaderboard.pages.plots import (
    BOTTOM,
    FONT_SIZE,
    HEIGHT,
    INK,
    LEFT,
    RIGHT,
    SERIES,
    TOP,
    WIDTH,
    Frame,
    axes,
    clip,
    diagonal,
    svg,
    ticks,
)

# Up to this many needs the difference chart draws one bar per need, the scatter one dot.
BARS_UP_TO = 200
DOTS_UP_TO = 500
# Need ids printed on the bars when a column is at least this wide (view-box units).
LABEL_COLUMN = FONT_SIZE + 2
Link = Callable[[str], str] | None


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


def _item(link: Link, need: str, tip: str, shapes: str) -> str:
    """One need's shapes, with its tooltip; a link to its figure when there is one."""
    title = f"<title>{escape(tip)}</title>"
    if link is None:
        return f'<g class="need">{title}{shapes}</g>'
    return f'<a class="need" href="{escape(link(need))}">{title}{shapes}</a>'


def difference_bars(
    diffs: np.ndarray, needs: Sequence[str], measure: str, a: str, b: str, link: Link = None
) -> SafeString:
    """Per-need differences a - b, sorted from largest to smallest (ties in table order)."""
    diffs = np.asarray(diffs, dtype=np.float64)
    order = np.argsort(-diffs, kind="stable")
    diffs, needs = diffs[order], [needs[i] for i in order]
    n = len(diffs)
    bound = _nice_bound(float(np.abs(diffs).max()) if n else 1.0)
    frame = Frame(0, max(n, 1), -bound, bound)
    hint = ": select a bar" if n <= BARS_UP_TO and link else ""
    body = axes(
        frame,
        f"Needs by difference ({n}){hint}",
        f"{measure}: {a} − {b}",
        x_ticks=[],
        y_ticks=ticks(-bound, bound, 4),
    )
    zero = frame.y(0)
    body.append(
        f'<line class="zero" stroke="{INK}" stroke-opacity="0.6" x1="{LEFT}" '
        f'x2="{WIDTH - RIGHT}" y1="{zero:.1f}" y2="{zero:.1f}"/>'
    )
    colours = {1: SERIES[0][0], -1: SERIES[1][0]}
    if n <= BARS_UP_TO:
        column = (WIDTH - LEFT - RIGHT) / max(n, 1)
        gap = 0.15 * column if column > 3 else 0
        labelled = column >= LABEL_COLUMN
        for i, (need, diff) in enumerate(zip(needs, diffs.tolist(), strict=True)):
            x0, x1 = frame.x(i), frame.x(i + 1)
            y = frame.y(diff)
            shapes = (
                f'<rect class="hit" x="{x0:.1f}" y="{TOP}" width="{x1 - x0:.1f}" '
                f'height="{HEIGHT - TOP - BOTTOM}" fill="{INK}" fill-opacity="0"/>'
            )
            if diff:
                shapes += (
                    f'<rect class="bar" fill="{colours[1 if diff > 0 else -1]}" '
                    f'x="{x0 + gap:.1f}" y="{min(y, zero):.1f}" width="{x1 - x0 - 2 * gap:.1f}" '
                    f'height="{abs(zero - y):.1f}"/>'
                )
            if labelled:
                # Rotated to read upwards, on the side of the zero line the bar leaves free.
                cx = (x0 + x1) / 2 + FONT_SIZE * 0.35
                ly, anchor = (zero + 6, "end") if diff >= 0 else (zero - 6, "start")
                shapes += (
                    f'<text class="need-label" transform="translate({cx:.1f} {ly:.1f}) '
                    f'rotate(-90)" text-anchor="{anchor}">{escape(clip(need, 14))}</text>'
                )
            sign = "+" if diff > 0 else ""
            body.append(_item(link, need, f"{need}: {sign}{diff:.4f}", shapes))
    else:
        # More needs than pixels: the bars merge into the area under the sorted curve,
        # drawn from one sample per half pixel column (exact at the plot's resolution).
        for sign in (1, -1):
            idx = np.flatnonzero(np.sign(diffs) == sign)
            if not len(idx):
                continue
            take = np.unique(np.linspace(idx[0], idx[-1], min(len(idx), 2 * BARS_UP_TO)).round())
            xs = LEFT + (take + 0.5) / n * (WIDTH - LEFT - RIGHT)
            ys = [frame.y(v) for v in diffs[take.astype(int)].tolist()]
            x0 = LEFT + idx[0] / n * (WIDTH - LEFT - RIGHT)
            x1 = LEFT + (idx[-1] + 1) / n * (WIDTH - LEFT - RIGHT)
            line = "".join(f"L{x:.1f} {y:.1f}" for x, y in zip(xs, ys, strict=True))
            body.append(
                f'<path class="bars" fill="{colours[sign]}" '
                f'd="M{x0:.1f} {zero:.1f}{line}L{x1:.1f} {zero:.1f}Z"/>'
            )
    wins, losses = int((diffs > 0).sum()), int((diffs < 0).sum())
    return svg(
        f"Per-need difference in {measure}, {a} minus {b}",
        f"{n} needs sorted by difference: {wins} above zero ({a} better), "
        f"{losses} below zero ({b} better), {n - wins - losses} tied.",
        body,
        "bars",
    )


def scatter(
    x: np.ndarray, y: np.ndarray, needs: Sequence[str], measure: str, a: str, b: str,
    link: Link = None,
) -> SafeString:  # fmt: skip
    """One dot per need, a's score across, b's score up; the diagonal is 'no difference'.

    Past ``DOTS_UP_TO`` needs the dots are snapped to whole view-box units and drawn as
    one path, so 7,000 needs stay small.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    top = _nice_bound(float(max(x.max(initial=0), y.max(initial=0), 1.0)))
    frame = Frame(0, top, 0, top)
    body = axes(frame, f"{a}: {measure}", f"{b}: {measure}")
    body.append(diagonal(frame, top))
    colour = SERIES[0][0]
    if len(x) <= DOTS_UP_TO:
        for need, xv, yv in zip(needs, x.tolist(), y.tolist(), strict=True):
            dot = (
                f'<circle class="dot" cx="{frame.x(xv):.1f}" cy="{frame.y(yv):.1f}" r="6" '
                f'fill="{colour}" fill-opacity="0.8" stroke="{INK}" stroke-width="1"/>'
            )
            body.append(_item(link, need, f"{need}: {a} {xv:.4f}, {b} {yv:.4f}", dot))
    else:
        px = np.rint(LEFT + x / top * (WIDTH - LEFT - RIGHT)).astype(np.int64)
        py = np.rint(HEIGHT - BOTTOM - y / top * (HEIGHT - TOP - BOTTOM)).astype(np.int64)
        unique = np.unique(px * 10_000 + py)
        dots = "".join(f"M{k // 10_000} {k % 10_000}h0" for k in unique.tolist())
        body.append(
            f'<path class="points" fill="none" stroke="{colour}" stroke-width="6" '
            f'stroke-linecap="round" d="{dots}"/>'
        )
    above, below = int((y > x).sum()), int((y < x).sum())
    return svg(
        f"{measure} per need: {a} against {b}",
        f"{len(x)} needs; {below} below the diagonal ({a} better), {above} above "
        f"({b} better), {len(x) - above - below} on it.",
        body,
        "scatter",
    )
