"""The pages' measure menus: ``<optgroup>``s from the engine's catalog, in natural order.

The benchmark's own measures (primary first, then the shown ones, in the organizer's
order) come first, in a group of their own; the rest follow under "More measures",
by the catalog's groups (precision, recall, rank-based, graded, judged, counts) in its
order, each sorted naturally (P@5, P@10, P@100, not P@10, P@100, P@5). No menu offers
the counts (``boards.NotRankable``): runs are not ranked, plotted or tested by them.
"""

from __future__ import annotations

import re

from evaluation.measures.catalog import GROUPS
from leaderboard.reading.boards import _entry, is_count, measure_label


def _natural_key(text: str) -> list:
    """P@5 before P@10 before P@100: digit runs compare as numbers."""
    return [
        (0, float(part)) if re.fullmatch(r"\d+(?:\.\d+)?", part) else (1, part.lower())
        for part in re.split(r"(\d+(?:\.\d+)?)", text)
        if part
    ]


BENCHMARK_GROUP = "Primary and shown"
MORE = "More measures"


def measure_groups(measures, first=()) -> list[tuple[str, list[tuple[str, str]]]]:
    """``measures`` (stored columns) as a menu's ``<optgroup>``s: (group, [(column,
    label)]). Those of ``first`` (the benchmark's primary and shown measures) lead, in
    that order; the rest follow as "More measures: <group>" in the catalog's group
    order, each naturally sorted by label. Every menu picks a measure to rank, plot or
    test runs by, so the counts (the catalog's ``is_count``) are left out; names the
    catalog does not know come last, under "other"."""
    offered = [m for m in dict.fromkeys(measures) if not is_count(m)]
    leading = [m for m in dict.fromkeys(first) if m in offered]
    groups: dict[str, list[tuple[str, str]]] = {}
    for measure in offered:
        if measure in leading:
            continue
        entry = _entry(measure)
        groups.setdefault(entry.group if entry else "other", []).append(
            (measure, measure_label(measure))
        )
    menu = [(BENCHMARK_GROUP, [(m, measure_label(m)) for m in leading])] if leading else []
    return menu + [
        (
            f"{MORE}: {group}" if leading else group,
            sorted(groups[group], key=lambda option: _natural_key(option[1])),
        )
        for group in [*GROUPS, "other"]
        if group in groups
    ]
