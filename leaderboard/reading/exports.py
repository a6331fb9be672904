"""Downloads: the leaderboard as CSV/JSON, a run's per-need CSV, a comparison's JSON.

JSON keeps every digit of the stored floats (``repr`` round-trips). CSV is for people and
spreadsheets: a score is written with at most six decimals (``0.62``, not
``0.6199999999999999``; trec_eval prints four), a non-zero value that would round to 0
(a p-value of ``3e-09``) with six significant digits instead, and a count measure
(``num_ret``, ``num_rel`` ...) as an integer; a p-value below 0.001 keeps six significant
digits. The per-need CSV names each need's title.
A CSV's measure columns are headed by the measures' labels (``nDCG@10``, ``AP``), the
names the pages show; the JSON keys stay trec_eval's names (``ndcg_cut_10``, ``map``),
with a ``labels`` object from one to the other.

CSV cells are escaped against formula injection (OWASP's rule): a text cell that starts
with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``, so a
spreadsheet shows it as text instead of running it (a need id ``=cmd|'/Ccalc'!A0``, a
username ``+A1+B1``). Only text is escaped: the numbers the exporter writes itself (ints
and floats: ranks, ids, scores, p-values) stay numbers, ``-0.5`` included. A need id or a
name is text even when it looks like a number, so a need id ``-5`` is written ``'-5``.
"""

from __future__ import annotations

import csv
import math

from django.http import HttpResponse, JsonResponse

from leaderboard.models import Result, Submission
from leaderboard.reading.boards import Board, adjusted, is_count, measure_label, measure_labels

#: The corrections an export applies over the "vs #1" family (``?correction=``).
EXPORT_CORRECTIONS = ("holm", "bh", "none")

# A run's columns in leaderboard.csv, before its p-values against #1 and its measures: the
# same with no run yet, so a script reading the board early in a campaign finds the columns
# it reads later.
RUN_COLUMNS = (
    "rank",
    "run",
    "submission_id",
    "participant",
    "team",
    "submitted",
    "baseline",
    "num_needs",
    "judgments_version",
)


def p_columns(correction: str) -> tuple[str, ...]:
    """The p-value columns against #1 of an export with ``correction``."""
    return ("p_vs_leader_raw",) + (() if correction == "none" else (f"p_vs_leader_{correction}",))


def leaderboard_file(board: Board, fmt: str, correction: str = "holm") -> HttpResponse:
    """The leaderboard ``board`` as ``leaderboard.csv`` or ``leaderboard.json``.

    Each run's paired t-test p against #1 is given raw (``p_vs_leader_raw``) and, unless
    ``correction`` is ``"none"``, corrected over the board's family of runs tested
    against #1 (``p_vs_leader_holm``, the page's verdict, or ``p_vs_leader_bh``)."""
    if correction not in EXPORT_CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}")
    benchmark, lens = board.benchmark, board.lens
    judgments = lens.judgments if lens else None
    version = lens.version if lens else None
    base = {
        "benchmark": benchmark.slug,
        "title": benchmark.title,
        "primary_measure": benchmark.primary_measure,
        "ranked_by": board.measure,
        "labels": board.labels,
        "best_run_per_team": board.best_per_team,
        "interpolation": benchmark.interpolation,
        "judgments_version": version,
        "needs": lens.needs if lens else "all",
        "num_needs": judgments.num_needs if judgments else 0,
        "correction": correction,
    }
    tested = [row for row in board.rows if row.p_raw is not None]
    corrected = dict(
        zip(
            (row.submission_id for row in tested),
            adjusted([row.p_raw for row in tested], correction),
            strict=True,
        )
    )
    runs = [
        {
            "rank": row.rank,
            "run": row.run_name,
            "submission_id": row.submission_id,
            "participant": row.participant,
            "team": row.team,
            "submitted": row.created.isoformat(),
            "baseline": row.is_baseline,
            "num_needs": row.num_needs,
            "judgments_version": version,
            **dict(
                zip(
                    p_columns(correction),
                    (_finite(row.p_raw), corrected.get(row.submission_id)),
                    strict=False,
                )
            ),
            "summary": row.summary,
        }
        for row in board.rows
    ]
    if fmt == "json":
        return JsonResponse({**base, "runs": runs}, json_dumps_params={"indent": 1})
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{benchmark.slug}-leaderboard.csv"'
    writer = csv.writer(response)
    ps = p_columns(correction)
    writer.writerow([_csv(k) for k in [*RUN_COLUMNS, *ps, *map(measure_label, board.measures)]])
    for run in runs:
        writer.writerow(
            [_csv(run[k]) for k in RUN_COLUMNS]
            + [_p_cell(run[k]) for k in ps]
            + [_csv(run["summary"].get(m), m) for m in board.measures]
        )
    return response


def _finite(value: float | None) -> float | None:
    """A p-value for JSON: NaN (no t-test on one need) is null."""
    return None if value is None or value != value else value


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


CSV_PLACES = 6


def _csv(value, measure: str = "") -> str:
    """One CSV cell: numbers as numbers (at most six decimals; a count measure's as an
    integer), text escaped (see above)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return _number(value, measure)
    if isinstance(value, int):  # bool too: True/False
        return str(value)
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _p_cell(value: float | None) -> str:
    """A p-value cell: six significant digits below 0.001, where six decimals would keep
    one or two (6.4e-06 as 0.000006 would pass a Bonferroni threshold of 6.06e-06)."""
    if value is None or value != value:
        return ""
    return f"{value:.6g}" if 0 < value < 1e-3 else _number(value)


def _number(value: float, measure: str = "") -> str:
    if value != value:
        return ""
    if measure and is_count(measure):
        return str(round(value))
    text = f"{value:.{CSV_PLACES}f}".rstrip("0").rstrip(".")
    if text in ("0", "-0"):
        return "0" if value == 0 else f"{value:.{CSV_PLACES}g}"
    return text


def per_need_file(run: Submission, result: Result) -> HttpResponse:
    """A run's per-need values on ``result`` (the one its reader's lens shows) as CSV,
    each need with its title."""
    frame = result.per_need_frame()
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = (
        f'attachment; filename="{run.benchmark.slug}-{run.run_name}-per-need.csv"'
    )
    titles = dict(run.benchmark.needs.values_list("need_id", "title"))
    columns = frame.columns.tolist()
    writer = csv.writer(response)
    writer.writerow([_csv(c) for c in ["need_id", "title", *map(measure_label, columns)]])
    for need, line in zip(frame.index.tolist(), frame.to_numpy().tolist(), strict=True):
        cells = (_number(float(v), m) for v, m in zip(line, columns, strict=True))
        writer.writerow([_csv(str(need)), _csv(titles.get(str(need), "")), *cells])
    return response


def comparison_payload(ctx: dict) -> dict:
    """Two runs compared (``comparison_context``) as JSON: the download's and the API's.
    JSON has no NaN or infinity: an undefined t (one need) and the infinite t and effect
    size of a constant difference are null, as the API and ``compare`` write them."""
    scores = ctx["scores"]
    test = {
        k: (None if isinstance(v, float) and not math.isfinite(v) else v)
        for k, v in ctx["test"].items()
    }
    return {
        "benchmark": ctx["benchmark"].slug,
        **ctx["lens"].payload(),
        "measure": ctx["measure"],
        "labels": measure_labels([ctx["measure"]]),
        "a": {
            "submission_id": ctx["a"].pk,
            "run": ctx["a"].run_name,
            "mean": float(scores["a"].mean()) if len(scores) else None,
        },
        "b": {
            "submission_id": ctx["b"].pk,
            "run": ctx["b"].run_name,
            "mean": float(scores["b"].mean()) if len(scores) else None,
        },
        "difference": "a - b",
        "verdict": ctx["verdict"],
        "stored": ctx["stored"],
        "correction": "none (a single comparison: raw p-values)",
        "tests": test,
        "per_need": [
            {"need_id": need, "a": a_, "b": b_, "diff": d}
            for need, (a_, b_, d) in zip(
                scores.index.tolist(), scores.to_numpy().tolist(), strict=True
            )
        ],
    }
