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
from html import escape

import numpy as np
import pandas as pd
from django.utils.safestring import SafeString

from leaderboard.models import Result, Submission, final_runs
from leaderboard.models.benchmarks import canonical_measure
from leaderboard.pages.plots import INK, LEFT, RIGHT, SERIES, WIDTH, Frame, axes, svg


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


def run_results(run: Submission, result: Result, measure: str | None = None) -> RunResults:
    """The run's per-need ``measure`` (either name system; default: the benchmark's
    primary one) beside the best, median and worst of its field on the judgments of
    ``result``."""
    own = result.per_need_frame()
    measures = [str(m) for m in own.columns]
    measure = canonical_measure(measure or run.benchmark.primary_measure)  # P@10: P_10
    if measure not in own.columns:
        raise NoResults(f"No stored measure {measure!r}; stored: {', '.join(measures)}.")
    needs = own.index
    field, field_name = field_runs(run)
    stored = Result.objects.filter(
        judgments_id=result.judgments_id, submission__in=[r.pk for r in field]
    ).only("per_need", "submission_id")
    columns = [
        frame[measure].reindex(needs, fill_value=0.0).to_numpy(dtype=np.float64)
        for frame in (r.per_need_frame() for r in stored)
        if measure in frame.columns
    ]
    table = pd.DataFrame({"run": own[measure].to_numpy(dtype=np.float64)}, index=needs)
    if columns:
        values = np.vstack(columns)
        table["best"], table["median"] = values.max(axis=0), np.median(values, axis=0)
        table["worst"] = values.min(axis=0)
    else:
        table["best"] = table["median"] = table["worst"] = np.nan
    return RunResults(run, result, measure, measures, table, field, field_name)


def results_figure(results: RunResults) -> SafeString:
    """Per need (x, the judgments' order): the run's value as a bar, the field's worst
    to best as a line, its median as a tick; y from 0 to the largest value (1 at least
    for measures in 0..1)."""
    table = results.table
    n = len(table)
    top = float(np.nanmax([table.to_numpy().max(initial=0.0), 1.0]))
    frame = Frame(0, max(n, 1), 0, top)
    step = (WIDTH - LEFT - RIGHT) / max(n, 1)
    labels = [i for i in range(n) if n <= 12 or i % max(n // 6, 1) == 0]
    body = axes(frame, "Need", results.measure, [], None)
    colour, _ = SERIES[0]
    bars, ranges, medians = [], [], []
    base = frame.y(0)
    for i, (run, best, median, worst) in enumerate(
        table[["run", "best", "median", "worst"]].itertuples(index=False)
    ):
        x = LEFT + i * step
        y = frame.y(run)
        bars.append(f"M{x + step * 0.15:.1f} {base:.1f}V{y:.1f}H{x + step * 0.85:.1f}V{base:.1f}Z")
        if best == best:  # a field
            mid = x + step / 2
            ranges.append(f"M{mid:.1f} {frame.y(worst):.1f}V{frame.y(best):.1f}")
            medians.append(f"M{x:.1f} {frame.y(median):.1f}H{x + step:.1f}")
    body.append(f'<path class="run" fill="{colour}" fill-opacity="0.75" d="{"".join(bars)}"/>')
    body.append(f'<path class="range" stroke="{INK}" stroke-width="1.5" d="{"".join(ranges)}"/>')
    body.append(f'<path class="median" stroke="{INK}" stroke-width="2.5" d="{"".join(medians)}"/>')
    for i in labels:
        x = LEFT + (i + 0.5) * step
        need = escape(str(table.index[i])[:8])
        body.append(
            f'<text class="tick" x="{x:.1f}" y="{frame.y(0) + 18:.1f}" text-anchor="middle">'
            f"{need}</text>"
        )
    desc = "; ".join(
        f"{need}: {row.run:.4f} (best {row.best:.4f}, median {row.median:.4f}, "
        f"worst {row.worst:.4f})"
        if row.best == row.best
        else f"{need}: {row.run:.4f}"
        for need, row in zip(table.index[:200], table.head(200).itertuples(), strict=True)
    )
    return svg(
        f"{results.run.run_name}: {results.measure} per need beside the "
        f"{results.field_name} ({len(results.field)})",
        f"Bars: the run's value; lines: worst to best; ticks: the median. {desc}",
        body,
        "results",
    )


def results_payload(results: RunResults) -> dict:
    """The JSON of the page's table (the API's answer too)."""
    return {
        "id": results.run.pk,
        "run_name": results.run.run_name,
        "benchmark": results.run.benchmark.slug,
        "judgments_version": results.result.judgments.version,
        "measure": results.measure,
        "measures": results.measures,
        "field": results.field_name,
        "field_runs": len(results.field),
        "needs": results.rows(),
    }
