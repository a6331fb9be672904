"""trec_eval's text output and the warnings of an evaluation, with the standard library
alone: shared by every scoring path, the numpy-free one (:mod:`evaluation.measures.plain`)
included, so that all of them print the same bytes."""

from __future__ import annotations

from collections.abc import Callable, Iterable

__all__ = ["Layout", "fmt", "need_warnings", "trec_eval_text"]

# one entry per printed measure: (column, format, printed per need, printed in the summary)
Layout = list[tuple[str, str, bool, bool]]


def need_warnings(run_needs: set[str], judged: set[str], rank_disagrees: bool) -> list[str]:
    """The warnings of an evaluation: run needs without judgments, a rank column
    that contradicts the scores."""
    warnings = []
    unjudged = sorted(run_needs - judged, key=str.encode)
    if unjudged:
        shown = ", ".join(unjudged[:5]) + (" ..." if len(unjudged) > 5 else "")
        warnings.append(f"{len(unjudged)} run need(s) without judgments, ignored: {shown}")
    if rank_disagrees:
        warnings.append(
            "the rank column disagrees with the score order; ranks come from the scores"
        )
    return warnings


def fmt(value: float, kind: str) -> str:
    """A value as trec_eval prints it: ``%ld`` for counts, ``%6.4f`` else."""
    if kind == "long":
        return str(int(value))
    if value != value:  # NaN: C's printf shows 0.0 / 0.0 on x86 as -nan
        return "  -nan"
    return f"{value:6.4f}"


def trec_eval_text(
    needs: Iterable[str],
    value: Callable[[str], Callable[[str], float]],
    order: Layout,
    summary: dict[str, float],
    strings: dict[str, dict[str, str]],
    run_id: str,
    per_need: bool = False,
    with_summary: bool = True,
) -> str:
    """trec_eval's text output: with ``per_need`` the lines of each of ``needs`` first
    (``value(need)(column)`` gives a need's value), then the ``all`` lines."""
    lines = []
    if per_need:
        for need in needs:
            row = value(need)
            for column, kind, printed, _ in order:
                if not printed:
                    continue
                if kind == "string":
                    lines.append(f"{column:<22}\t{need}\t'{strings[column][need]}'")
                else:
                    lines.append(f"{column:<22}\t{need}\t{fmt(row(column), kind)}")
    for column, kind, _, summarised in order:
        if not summarised or not with_summary:
            continue
        if kind == "runid":
            lines.append(f"{'runid':<22}\tall\t{run_id}")
        else:
            lines.append(f"{column:<22}\tall\t{fmt(summary[column], kind)}")
    return "\n".join(lines) + "\n" if lines else ""
