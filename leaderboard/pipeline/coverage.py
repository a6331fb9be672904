"""Coverage: which of a benchmark's judged needs a run answers, and how deep, in words
for a person.

A run that answers none of them is refused at upload (``uploads.forms``: its scores would
all be 0 and say nothing); one that answers some is scored and warned, since the needs it
misses score 0 and pull every mean down (trec_eval ``-c``). A run ranking more documents
for a need than the benchmark's depth is scored on the first ``max_depth`` of them only
(trec_eval ``-M``) and warned too, since trec_eval without ``-M`` would count them all.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

SHOWN_IDS = 10  # need ids listed in the refusal before "..."


def none_answered(name: str, judged: list[str]) -> str:
    """``run.txt answers none of the 50 judged needs of this benchmark (its needs: ...)``."""
    shown = ", ".join(judged[:SHOWN_IDS]) + (", ..." if len(judged) > SHOWN_IDS else "")
    return (
        f"{name} answers none of the {len(judged)} judged needs of this benchmark "
        f"(its needs: {shown})"
    )


def partly_answered(name: str, answered: int, judged: int) -> str | None:
    """``run.txt answers 25 of 50 judged needs; the other 25 score 0`` (None: all)."""
    if answered >= judged:
        return None
    return (
        f"{name} answers {answered} of {judged} judged needs; the other {judged - answered} score 0"
    )


def coverage_warnings(name: str, run_needs: Iterable[str], judged: list[str]) -> list[str]:
    """The warning for a scored run (empty when it answers every judged need)."""
    answered = len(set(judged).intersection(run_needs))
    message = partly_answered(name, answered, len(judged))
    return [message] if message else []


def lines_per_need(codes: np.ndarray, count: int) -> np.ndarray:
    """How many lines each of ``count`` need codes has in ``codes`` (a run's ``need``
    column; -1, a missing value, is skipped). A slice at a time, so no temporary the size
    of the run (``bincount`` copies its input to int64: 56 MB for 7M lines)."""
    counts = np.zeros(count, np.int64)
    for start in range(0, len(codes), 1 << 20):
        piece = codes[start : start + (1 << 20)]
        counts += np.bincount(piece[piece >= 0], minlength=count)
    return counts


def depth_warnings(lines: np.ndarray, max_depth: int | None) -> list[str]:
    """``3 needs had more than 1,000 documents; ranks past 1,000 were ignored, as
    `trec_eval -M 1000``` (empty when every need is within ``max_depth``, or there is
    none). ``lines``: each need's line count; a doc id twice for one need is refused at
    reading, so lines are documents."""
    if max_depth is None:
        return []
    deeper = int(np.count_nonzero(lines > max_depth))
    if not deeper:
        return []
    needs = "need" if deeper == 1 else "needs"
    return [
        f"{deeper} {needs} had more than {max_depth:,} documents; ranks past {max_depth:,} "
        f"were ignored, as `trec_eval -M {max_depth}`"
    ]
