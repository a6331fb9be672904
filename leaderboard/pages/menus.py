"""The pages' measure menus: ``<optgroup>``s from the engine's catalog, in natural order.

Groups are the catalog's (``CatalogEntry.group``: precision, recall, rank-based, graded,
judged, counts), in its order; within a group labels sort naturally (P@5, P@10, P@100,
not P@10, P@100, P@5). A menu to rank by leaves the counts out (``boards.NotRankable``).
"""

from __future__ import annotations

import re

from evaluation.measures.catalog import GROUPS
from leaderboard.pages.boards import _entry, is_count, measure_label


def _natural_key(text: str) -> list:
    """P@5 before P@10 before P@100: digit runs compare as numbers."""
    return [
        (0, float(part)) if re.fullmatch(r"\d+(?:\.\d+)?", part) else (1, part.lower())
        for part in re.split(r"(\d+(?:\.\d+)?)", text)
        if part
    ]


def measure_groups(
    measures, rankable: bool = True, label=None
) -> list[tuple[str, list[tuple[str, str]]]]:
    """``measures`` (stored columns) as a menu's ``<optgroup>``s: (group, [(column,
    label)]) in the catalog's group order, each naturally sorted by label. ``rankable``
    leaves out the counts; names the catalog does not know come last, under "other"."""
    label = label or measure_label
    groups: dict[str, list[tuple[str, str]]] = {}
    for measure in dict.fromkeys(measures):
        entry = _entry(measure)
        if rankable and is_count(measure):
            continue
        groups.setdefault(entry.group if entry else "other", []).append((measure, label(measure)))
    order = [*GROUPS, "other"]
    return [
        (group, sorted(groups[group], key=lambda option: _natural_key(option[1])))
        for group in order
        if group in groups
    ]
