"""A run's per-need results beside the field's: TREC's per-topic report for participants.

:func:`run_results` is the one reading (the page, its CSV and JSON, and the API call
it): for one scored run and one stored measure, per need of the judgments, the run's
value and the best, median and worst value over the *field*: the final runs of the
run's phase (``leaderboard.models.finals``), or on a benchmark without phases every
live scored run. A need a run did not answer scores 0, as everywhere on the platform.
All values are read from the results of the run's judgments version (stored
``Result.per_need``; nothing is rescored here). :func:`results_figure` draws them as
the bar plot of TREC's appendix: per need, the run's value as a bar, the field's range
(worst to best) as a line, its median as a tick.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from leaderboard.models import MeasureVector, Result, Submission, final_runs
from leaderboard.models.benchmarks import canonical_measure
from leaderboard.reading.boards import is_count, measure_label, measure_labels


class NoResults(Exception):
    """Why a run's results cannot be shown (not scored, unknown measure)."""


@dataclass
class RunResults:
    """``table``: index need_id (the judgments' order), columns run, best, median, worst
    (best/median/worst NaN when the field is empty); ``field``: the runs compared."""

    run: Submission
    result: Result
    measure: str
    measures: list[str]
    table: pd.DataFrame
    field: list[Submission]
    field_name: str

    def rows(self) -> list[dict]:
        return [
            {"need_id": need, **{k: _value(v) for k, v in row.items()}}
            for need, row in zip(self.table.index, self.table.to_dict("records"), strict=True)
        ]


def _value(value: float) -> float | None:
    return None if value != value else float(value)  # NaN: no field


def field_runs(run: Submission) -> tuple[list[Submission], str]:
    """The runs a run's per-need values are set beside, and what they are."""
    benchmark = run.benchmark
    if run.phase_id is not None or benchmark.phase_list:
        phase = run.phase
        finals = [f.submission for f in final_runs(benchmark, phase)]
        where = f"of the phase {phase.name}" if phase else "submitted outside any phase"
        return finals, f"final runs {where}"
    runs = list(Submission.objects.for_benchmark(benchmark).live().scored())
    return runs, "scored runs"


def run_results(
    run: Submission, result: Result, measure: str | None = None, *, viewer=None
) -> RunResults:
    """The run's per-need ``measure`` (either name system; default: the benchmark's
    primary one) beside the best, median and worst of its field on the judgments of
    ``result``; with ``viewer``, a field of the runs whose scores they may see;
    ``measures`` lists the stored scores a reader may pick (no counts)."""
    own = result.per_need_frame()
    # a count (num_rel ...) per need beside the field's is no score to set runs beside
    measures = [str(m) for m in own.columns if not is_count(str(m))]
    measure = canonical_measure(measure or run.benchmark.primary_measure)  # P@10: P_10
    if measure in own.columns and is_count(measure):
        raise NoResults(
            f"{measure_label(measure)} is a count, not a score to set beside the field's; "
            f"stored scores: {', '.join(map(measure_label, measures))}."
        )
    if measure not in own.columns:
        raise NoResults(
            f"No stored measure {measure!r}; stored: {', '.join(map(measure_label, measures))}."
        )
    needs = own.index
    field, field_name = field_runs(run)
    if viewer is not None:
        seen = Submission.objects.filter(pk__in=[r.pk for r in field]).scores_visible_to(viewer)
        kept = set(seen.values_list("pk", flat=True))
        field = [r for r in field if r.pk in kept]
    columns = _field_values(field, result, measure, needs)
    table = pd.DataFrame({"run": own[measure].to_numpy(dtype=np.float64)}, index=needs)
    if columns:
        values = np.vstack(columns)
        table["best"], table["median"] = values.max(axis=0), np.median(values, axis=0)
        table["worst"] = values.min(axis=0)
    else:
        table["best"] = table["median"] = table["worst"] = np.nan
    return RunResults(run, result, measure, measures, table, field, field_name)


def _field_values(field, result: Result, measure: str, needs: pd.Index) -> list[np.ndarray]:
    """Each field run's per-need ``measure`` on ``result``'s judgments row, in ``needs``'
    order. A tested measure's stored vector (``MeasureVector``: 56 KB at 7,000 needs, in the
    row's need order) where ``needs`` is that order; else the run's whole per-need matrix
    (~1 MB), a need it lacks scoring 0."""
    stored = list(
        Result.objects.filter(
            judgments_id=result.judgments_id, submission__in=[r.pk for r in field]
        ).values_list("pk", flat=True)
    )
    vectors = {}
    if list(needs) == list(result.judgments.need_ids):
        vectors = dict(
            MeasureVector.objects.filter(result__in=stored, measure=measure).values_list(
                "result_id", "values"
            )
        )
    columns = [np.frombuffer(bytes(values), dtype=np.float64) for values in vectors.values()]
    missing = [pk for pk in stored if pk not in vectors]
    if missing:
        for row in Result.objects.filter(pk__in=missing).only("per_need"):
            frame = row.per_need_frame()
            if measure in frame.columns:
                columns.append(frame[measure].reindex(needs, fill_value=0.0).to_numpy(np.float64))
    return columns


def results_payload(results: RunResults) -> dict:
    """The JSON of the page's table (the API's answer too)."""
    return {
        "id": results.run.pk,
        "run_name": results.run.run_name,
        "benchmark": results.run.benchmark.slug,
        "judgments_version": results.result.judgments.version,
        "judgments_needs": results.result.judgments.part or "all",
        "measure": results.measure,
        "measures": results.measures,
        "labels": measure_labels(results.measures),
        "field": results.field_name,
        "field_runs": len(results.field),
        "needs": results.rows(),
    }
