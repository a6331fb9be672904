"""Two runs compared need by need: the one read behind the comparison page, its plots,
its JSON download and the API (``comparison``)."""

from __future__ import annotations

from django.http import HttpRequest

from evaluation.measures import UnknownMeasure
from evaluation.significance import p_text
from leaderboard.models import Result, Submission
from leaderboard.reading.boards import (
    ALPHA,
    is_count,
    measure_column,
    measure_label,
    unknown_measure_message,
)
from leaderboard.reading.lenses import Lens, lens_for
from leaderboard.reading.pairs import paired_scores, stats_for_pair
from leaderboard.reading.visibility import Problem, visible_benchmark


def _pair(request: HttpRequest, lens: Lens, a: int, b: int):
    """Both runs and their results on the lens's row, or a Problem saying what is wrong."""
    benchmark = lens.benchmark
    if a == b:
        raise Problem("A run compared with itself has no differences; pick two runs.", 400)
    runs = {
        s.pk: s
        for s in Submission.objects.select_related("benchmark", "participant").filter(
            pk__in=[a, b], benchmark=benchmark
        )
    }
    for pk in (a, b):
        if pk not in runs or not runs[pk].scores_visible_to(request.user):
            raise Problem(f"There is no run {pk} on {benchmark.title}.")
    results = {
        r.submission_id: r
        for r in Result.objects.filter(submission_id__in=[a, b], judgments_id=lens.judgments_id)
    }
    for pk in (a, b):
        if pk not in results:
            raise Problem(f"Run {runs[pk].run_name} has no scores yet here: {lens.line()}")
    return runs[a], runs[b], results[a], results[b]


def comparison(request: HttpRequest, slug: str, a: int, b: int, asked: str | None = None) -> dict:
    """Two runs compared on the measure ``asked``, the one read of a comparison (the page,
    its plots, its JSON download and the API). Without a measure: the benchmark's primary
    measure, or AP where these runs were scored before the primary was chosen. A measure
    the pair has no per-need values of falls back to that default with ``measure_note``
    saying so (so does a count, ``num_ret`` ...: no score to test runs on); ``measures``
    lists the measures the pair has, for callers that refuse instead (the API). Raises ``Problem`` for a pair that cannot be compared."""
    benchmark = visible_benchmark(request, slug)
    lens = lens_for(request, benchmark)
    run_a, run_b, result_a, result_b = _pair(request, lens, a, b)
    frame_a, frame_b = result_a.per_need_frame(), result_b.per_need_frame()
    # Counts (num_ret ...) are per-need numbers but no score to test two runs on.
    common = [m for m in frame_a.columns if m in frame_b.columns and not is_count(m)]
    # The benchmark's primary measure unless the reader asks for another (AP when these
    # runs have no per-need values of the primary, scored before it was chosen).
    default = benchmark.primary_measure if benchmark.primary_measure in common else "map"
    shown = measure_label(default)
    note = None
    try:
        measure = measure_column(asked, default)
    except UnknownMeasure as error:  # said on the page, above the comparison on the default
        note, measure = f"{unknown_measure_message(error)} (showing {shown})", default
    if measure not in common:
        what = "is a count, not a score to compare runs on" if is_count(measure) else None
        note = f"“{measure_label(measure)}” {what}; showing {shown}." if what else None
        note = note or f"No per-need values of “{measure_label(measure)}”; showing {shown}."
        measure = default
        if measure not in common:
            raise Problem("These runs have no per-need AP values.")
    scores = paired_scores(frame_a, frame_b, measure)
    test, stored = stats_for_pair(lens.judgments_id, run_a, run_b, measure, scores)
    return {
        "lens": lens,
        "verdict": verdict(run_a.run_name, run_b.run_name, measure, test),
        "benchmark": benchmark,
        "a": run_a,
        "b": run_b,
        "result_a": result_a,
        "result_b": result_b,
        "measure": measure,
        "measures": common,
        "measure_note": note,
        "scores": scores,
        "test": test,
        "stored": stored,
    }


class MeasureRefused(Problem):
    """A measure a program asked for and the comparison cannot give (``details``: the
    close matches, or the measures the pair can be compared on)."""

    def __init__(self, message: str, details: dict) -> None:
        super().__init__(message, 400)
        self.details = details


def asked_comparison(request: HttpRequest, slug: str, a: int, b: int, asked: str | None) -> dict:
    """``comparison`` for a program (the API and the page's JSON download): a measure it
    asked for and cannot have (unknown, a count, or without per-need values for these
    runs) raises ``MeasureRefused``, where the page shows its default with a note."""
    try:
        measure = measure_column(asked, "") or None
    except UnknownMeasure as error:
        message = unknown_measure_message(error)
        raise MeasureRefused(message, {"suggestions": error.suggestions}) from error
    context = comparison(request, slug, a, b, measure)
    if measure is not None and context["measure"] != measure:
        why = f"Runs {a} and {b} have no per-need values of {measure}."
        if is_count(measure):
            why = f"{measure} is a count, not a score to compare runs on."
        raise MeasureRefused(why, {"measures": list(context["measures"])})
    return context


def verdict(name_a: str, name_b: str, measure: str, test: dict) -> str:
    """The comparison in one sentence, the run ahead first: "colbertv2 is ahead of
    monot5-3b by 0.0240 nDCG@10 on 20 of 30 needs; the difference is not significant
    (t-test p = 0.62)." The page, the JSON download, the API and ``rrl compare`` all say
    this sentence.

    ``test`` is ``stats_for_pair``'s (differences a - b): the mean difference, the needs
    won, tied and lost by a, and the paired t-test's raw p (one question, nothing to
    correct). "ahead on k of n needs" counts the needs where that run scores higher; a
    p that cannot be computed (one need, or the same difference on every need) says so."""
    n = int(test.get("n") or 0)
    label = measure_label(measure)
    if n == 0:
        return f"{name_a} and {name_b} share no judged need to compare on {label}."
    diff = _number(test.get("mean_diff"))
    wins, losses = int(test.get("wins") or 0), int(test.get("losses") or 0)
    needs = f"{n} need{'' if n == 1 else 's'}"
    if diff is None or diff == 0:
        lead = f"{name_a} and {name_b} have the same mean {label} over {needs}"
        if wins or losses:
            lead += f" ({name_a} ahead on {wins}, {name_b} on {losses})"
    else:
        ahead, behind, won = (name_a, name_b, wins) if diff > 0 else (name_b, name_a, losses)
        size = f"{abs(diff):.1f}" if is_count(measure) else f"{abs(diff):.4f}"
        lead = f"{ahead} is ahead of {behind} by {size} {label} on {won} of {needs}"
    p = _number(test.get("t_p"))
    if p is None:
        why = "one need has no spread" if n == 1 else "the same difference on every need"
        return f"{lead}; the t-test cannot be computed ({why})."
    significant = "significant" if p < ALPHA else "not significant"
    return f"{lead}; the difference is {significant} (t-test p {_p_text(p)})."


def _number(value) -> float | None:
    if value is None or not isinstance(value, int | float) or value != value:
        return None
    return float(value)


def _p_text(p: float) -> str:
    """ "= 0.62" down to 0.1, four decimals below it (more where 0.04996 would round up to
    alpha), "< 0.0001" below that."""
    if p < 1e-4:
        return "< 0.0001"
    return f"= {p_text(p, 4, ALPHA)}" if p < 0.1 else f"= {p:.2f}"
