"""Coverage: which of a benchmark's judged needs a run answers, in words for a person.

A run that answers none of them is refused at upload (``uploads.forms``: its scores would
all be 0 and say nothing); one that answers some is scored and warned, since the needs it
misses score 0 and pull every mean down (trec_eval ``-c``).
"""

from __future__ import annotations

from collections.abc import Iterable

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
