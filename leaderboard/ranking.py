"""Assembling what the reader's pages show: ranked leaderboards, significance against the
leader, the all-pairs matrix and a pairwise comparison.

Decisions, stated once:

- **Ranks** are competition ranks ("1, 2, 2, 4") on the value rounded to four decimals,
  the precision ``trec_eval`` prints and the table shows: two runs a reader sees with the
  same score share a rank. Runs without a value for the measure come last, unranked.
- **Significance against the leader**: the paired t-test's raw p of #1 against every other
  ranked run, Holm-corrected over that family (the family changes whenever a run arrives,
  so nothing corrected is stored), alpha 0.05. A run whose corrected p is at least alpha
  is *statistically tied* with #1. A p that cannot be computed (identical scores on every
  need) counts as 1: no evidence of a difference.
- Stored comparisons exist for the benchmark's primary measure and for ``map``; for any
  other measure the tests are computed here when the board is small enough to do so in a
  few milliseconds, and otherwise the caption says where to find them.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from django.db.models import F

from evaluation.significance import (
    adjust_p,
    compare_one_against_many,
    compare_pair,
    tukey_hsd_blocked,
)
from leaderboard.models import Benchmark, Comparison, Result, Submission

ALPHA = 0.05
PLACES = 4
TOP_RUNS = 50
# Measures of the seed chapter, in the order the table shows them, with readers' names.
MEASURE_LABELS = {
    "map": "MAP",
    "P_5": "P@5",
    "P_10": "P@10",
    "recip_rank": "MRR",
    "Rprec": "R-Prec",
    "ndcg_cut_10": "nDCG@10",
}
# Per-need table of the run page: AP, P@5, P@10, RR, R-Prec, num_rel, num_rel_ret.
NEED_COLUMNS = {
    "map": "AP",
    "P_5": "P@5",
    "P_10": "P@10",
    "recip_rank": "RR",
    "Rprec": "R-Prec",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
}
CORRECTIONS = {"holm": "Holm", "bh": "Benjamini-Hochberg", "tukey": "Tukey HSD", "none": "none"}
# On-the-fly tests for a measure without stored comparisons up to this many cells.
ON_THE_FLY_CELLS = 200_000
ELEVEN = [f"iprec_at_recall_{i / 10:.2f}" for i in range(11)]


def measure_label(measure: str) -> str:
    return MEASURE_LABELS.get(measure, measure)


def per_need_label(measure: str) -> str:
    """'AP' rather than 'MAP' where the value is one need's."""
    return NEED_COLUMNS.get(measure, measure_label(measure))


def is_count(measure: str) -> bool:
    return measure.startswith("num_")


def competition_ranks(values: list[float | None]) -> list[int | None]:
    """Ranks of values already sorted best first; equal rounded values share a rank."""
    ranks: list[int | None] = []
    previous = None
    for position, value in enumerate(values, start=1):
        if value is None:
            ranks.append(None)
            continue
        key = round(value, PLACES)
        ranks.append(ranks[-1] if key == previous else position)
        previous = key
    return ranks


def adjusted(pvalues: list[float], method: str) -> list[float]:
    """``adjust_p`` over a family, with uncomputable p (NaN) counted as 1."""
    if not pvalues:
        return []
    p = np.nan_to_num(np.asarray(pvalues, dtype=np.float64), nan=1.0)
    return [float(v) for v in np.asarray(adjust_p(p, method))]


def stored_measures(benchmark: Benchmark) -> list[str]:
    """Measures the workers test every pair on."""
    return list(dict.fromkeys([benchmark.primary_measure, "map"]))


@dataclass
class Row:
    result_id: int
    submission_id: int
    run_name: str
    participant: str
    created: Any
    is_baseline: bool
    is_hidden: bool
    status: str
    summary: dict[str, float]
    num_needs: int
    value: float | None = None
    rank: int | None = None
    p_raw: float | None = None
    p_adjusted: float | None = None
    is_leader: bool = False

    @property
    def tied_with_leader(self) -> bool:
        return self.is_leader or (self.p_adjusted is not None and self.p_adjusted >= ALPHA)

    @property
    def differs_from_leader(self) -> bool:
        return self.p_adjusted is not None and self.p_adjusted < ALPHA

    @property
    def is_public(self) -> bool:
        return not self.is_hidden and self.status != Submission.Status.WITHDRAWN


@dataclass
class Board:
    benchmark: Benchmark
    measure: str
    rows: list[Row]
    measures: list[str]
    columns: list[str]
    significance: str = "none"  # "stored", "computed", "unavailable", "none"
    family_size: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def leader(self) -> Row | None:
        return self.rows[0] if self.rows and self.rows[0].value is not None else None

    @property
    def tied(self) -> list[Row]:
        return [row for row in self.rows if row.tied_with_leader and not row.is_leader]


def leaderboard_rows(benchmark: Benchmark, user) -> list[Row]:
    """Every result on the current judgments the user may see, as plain rows (one query)."""
    values = Result.objects.on_leaderboard(benchmark, user).values(
        "pk",
        "summary",
        "num_needs",
        "submission_id",
        "submission__run_name",
        "submission__participant__username",
        "submission__created",
        "submission__is_baseline",
        "submission__is_hidden",
        "submission__status",
    )
    return [
        Row(
            result_id=v["pk"],
            submission_id=v["submission_id"],
            run_name=v["submission__run_name"],
            participant=v["submission__participant__username"],
            created=v["submission__created"],
            is_baseline=v["submission__is_baseline"],
            is_hidden=v["submission__is_hidden"],
            status=v["submission__status"],
            summary=v["summary"] or {},
            num_needs=v["num_needs"],
        )
        for v in values
    ]


def _value(summary: dict, measure: str) -> float | None:
    value = summary.get(measure)
    if value is None or not isinstance(value, int | float) or value != value:
        return None
    return float(value)


def build_leaderboard(benchmark: Benchmark, user, measure: str | None = None) -> Board:
    """The ranked table for ``measure`` (the primary one by default), with significance
    marks against the leader. A constant number of queries whatever the number of runs.
    """
    rows = leaderboard_rows(benchmark, user)
    measures = sorted({name for row in rows for name in row.summary})
    notes = []
    primary = benchmark.primary_measure
    if measure is None or measure == "":
        measure = primary
    elif measure not in measures:
        notes.append(f"No run has a value for “{measure}”; ranked by {measure_label(primary)}.")
        measure = primary
    for row in rows:
        row.value = _value(row.summary, measure)
    # Best first; equal values keep the earlier submission first, then the lower id.
    rows.sort(key=lambda r: (r.value is None, -(r.value or 0.0), r.created, r.submission_id))
    for row, rank in zip(rows, competition_ranks([r.value for r in rows]), strict=True):
        row.rank = rank
    columns = [m for m in MEASURE_LABELS if m in measures]
    if measure not in columns:
        columns.append(measure)
    board = Board(benchmark, measure, rows, measures, columns, notes=notes)
    _mark_against_leader(board)
    return board


def _mark_against_leader(board: Board) -> None:
    leader = board.leader
    if leader is None:
        return
    leader.is_leader = True
    others = [row for row in board.rows[1:] if row.value is not None]
    if not others:
        return
    raw: dict[int, float] = {}
    if board.measure in stored_measures(board.benchmark):
        board.significance = "stored"
        # Two index lookups joined by UNION ALL: SQLite plans "a = x OR b = x" as a scan.
        family = Comparison.objects.filter(
            judgments_id=board.benchmark.current_judgments_id, measure=board.measure
        )
        as_a = family.filter(submission_a_id=leader.submission_id)
        as_b = family.filter(submission_b_id=leader.submission_id)
        raw = dict(
            as_a.values_list("submission_b_id", "t_p").union(
                as_b.values_list("submission_a_id", "t_p"), all=True
            )
        )
    elif (len(others) + 1) * max(leader.num_needs, 1) <= ON_THE_FLY_CELLS:
        board.significance = "computed"
        raw = _t_tests_against(leader, others, board.measure)
    else:
        board.significance = "unavailable"
        return
    tested = [row for row in others if row.submission_id in raw]
    board.family_size = len(tested)
    for row, p_adj in zip(
        tested, adjusted([raw[row.submission_id] for row in tested], "holm"), strict=True
    ):
        row.p_raw = raw[row.submission_id]
        row.p_adjusted = p_adj


def _t_tests_against(leader: Row, others: list[Row], measure: str) -> dict[int, float]:
    """Paired t-test p of the leader against each run (the engine's, as stored ones are)."""
    ids = [leader.result_id] + [row.result_id for row in others]
    blobs = dict(Result.objects.filter(pk__in=ids).values_list("pk", "per_need"))
    columns = {}
    for row in [leader, *others]:
        frame = judged(Result(per_need=blobs[row.result_id]).per_need_frame())
        if measure in frame.columns:
            columns[row.submission_id] = frame[measure]
    if leader.submission_id not in columns:
        return {}
    scores = pd.DataFrame(columns).fillna(0.0)
    base = scores.pop(leader.submission_id).to_numpy()
    if scores.empty:
        return {}
    with warnings.catch_warnings():  # FewNeedsWarning: the caption already says n
        warnings.simplefilter("ignore")
        tests = compare_one_against_many(base, scores, permutations=0)  # t-test only needed
    return dict(zip(scores.columns.tolist(), tests["t_p"].tolist(), strict=True))


def current_leaders(benchmarks: list[Benchmark], user) -> dict[int, tuple[Row, int]]:
    """Per benchmark id: the leader on its primary measure and the number of runs shown."""
    runs = Submission.objects.live().visible_to(user)
    values = Result.objects.filter(
        submission__benchmark__in=benchmarks,
        judgments_id=F("submission__benchmark__current_judgments_id"),
        submission__in=runs,
    ).values(
        "pk",
        "summary",
        "submission_id",
        "submission__benchmark_id",
        "submission__run_name",
        "submission__created",
    )
    primary = {b.pk: b.primary_measure for b in benchmarks}
    best: dict[int, tuple[Row, int]] = {}
    for v in values:
        bid = v["submission__benchmark_id"]
        row = Row(
            v["pk"],
            v["submission_id"],
            v["submission__run_name"],
            "",
            v["submission__created"],
            False,
            False,
            "",
            v["summary"] or {},
            0,
        )
        row.value = _value(row.summary, primary[bid])
        current, count = best.get(bid, (None, 0))
        if current is None or (
            row.value is not None
            and (
                current.value is None
                or (-row.value, row.created) < (-current.value, current.created)
            )
        ):
            current = row
        best[bid] = (current, count + 1)
    return best


# --- Pairwise comparison ------------------------------------------------------------


def stats_for_pair(
    judgments_id: int, a: Submission, b: Submission, measure: str, scores: pd.DataFrame
) -> tuple[dict[str, Any], bool]:
    """Test results for ``a`` against ``b`` (differences a - b) on ``measure``.

    The stored ``Comparison`` when there is one, turned round when ``a`` is the stored
    ``submission_b``; otherwise ``compare_pair`` on ``scores`` (columns "a", "b"), with
    fewer permutations on large benchmarks so that the page stays fast (the number used is
    returned and shown). Returns (stats, stored).
    """
    stored = (
        Comparison.objects.between(a, b)
        .filter(judgments_id=judgments_id, measure=measure)
        .values()
        .first()
    )
    if stored is not None:
        result = {key: stored[key] for key in PAIR_KEYS if key in stored}
        result["permutations"] = stored["permutations"]
        if a.pk > b.pk:
            result = _turned(result)
        return result, True
    n = len(scores)
    permutations = 10_000 if n <= 1_000 else max(1_000, 10_000_000 // max(n, 1) // 100 * 100)
    with warnings.catch_warnings():  # FewNeedsWarning: the page says it in words
        warnings.simplefilter("ignore")
        result = dict(
            compare_pair(scores["a"].to_numpy(), scores["b"].to_numpy(), permutations=permutations)
        )
    result["permutations"] = permutations
    return result, False


PAIR_KEYS = [
    "n",
    "mean_diff",
    "ci_low",
    "ci_high",
    "effect_size",
    "wins",
    "ties",
    "losses",
    "t_statistic",
    "t_p",
    "wilcoxon_statistic",
    "wilcoxon_p",
    "randomization_p",
]


def _turned(result: dict[str, Any]) -> dict[str, Any]:
    """The same comparison seen from the other run: differences change sign."""
    out = dict(result)
    out["mean_diff"] = -result["mean_diff"]
    out["ci_low"] = None if result["ci_high"] is None else -result["ci_high"]
    out["ci_high"] = None if result["ci_low"] is None else -result["ci_low"]
    out["wins"], out["losses"] = result["losses"], result["wins"]
    for key in ("effect_size", "t_statistic"):
        out[key] = None if result[key] is None else -result[key]
    return out


def judged(frame: pd.DataFrame) -> pd.DataFrame:
    """The needs significance tests pair over: those with at least one relevant document
    (as ``leaderboard.scoring.compare`` does; without ``num_rel``, every need)."""
    if "num_rel" not in frame.columns:
        return frame
    return frame[frame["num_rel"].to_numpy() > 0]


def paired_scores(frame_a: pd.DataFrame, frame_b: pd.DataFrame, measure: str) -> pd.DataFrame:
    """Per-need scores of both runs (``Result.per_need_frame()``) over the judged needs
    with a relevant document; a need a run did not answer scores 0. Columns a, b and
    diff = a - b."""
    frame_a, frame_b = judged(frame_a), judged(frame_b)
    scores = pd.DataFrame(
        {
            "a": frame_a[measure] if measure in frame_a else pd.Series(dtype=float),
            "b": frame_b[measure] if measure in frame_b else pd.Series(dtype=float),
        }
    ).fillna(0.0)
    scores.index.name = "need_id"
    scores["diff"] = scores["a"] - scores["b"]
    return scores


def eleven_point(result: Result) -> list[float] | None:
    """The 11-point interpolated curve averaged over needs, from the stored summary."""
    values = [result.summary.get(name) for name in ELEVEN]
    if any(v is None for v in values):
        return None
    return [float(v) for v in values]


# --- All-pairs matrix -----------------------------------------------------------------


@dataclass
class Matrix:
    rows: list[Row]
    measure: str
    correction: str
    cells: list[list[dict | None]]
    family_size: int
    missing: int


def significance_matrix(board: Board, correction: str) -> Matrix:
    """Adjusted p of every pair among the top runs (stored t-tests; Tukey HSD on scores)."""
    rows = [row for row in board.rows if row.value is not None][:TOP_RUNS]
    ids = [row.submission_id for row in rows]
    pairs: dict[tuple[int, int], float] = {}
    if correction == "tukey":
        pairs = _tukey(rows, board.measure)
    else:
        comparisons = Comparison.objects.filter(
            judgments_id=board.benchmark.current_judgments_id,
            measure=board.measure,
            submission_a_id__in=ids,
            submission_b_id__in=ids,
        ).values_list("submission_a_id", "submission_b_id", "t_p")
        raw = {(a, b): p for a, b, p in comparisons}
        keys = list(raw)
        pairs = dict(zip(keys, adjusted([raw[k] for k in keys], correction), strict=True))
    cells: list[list[dict | None]] = []
    for row in rows:
        line: list[dict | None] = []
        for col in rows:
            if row.submission_id == col.submission_id:
                line.append(None)
                continue
            key = tuple(sorted((row.submission_id, col.submission_id)))
            p = pairs.get(key)  # type: ignore[arg-type]
            better = (row.value or 0) > (col.value or 0)
            line.append(
                {
                    "p": p,
                    "significant": p is not None and p < ALPHA,
                    "better": better,
                    "a": row.submission_id,
                    "b": col.submission_id,
                }
            )
        cells.append(line)
    expected = len(rows) * (len(rows) - 1) // 2
    return Matrix(rows, board.measure, correction, cells, len(pairs), expected - len(pairs))


def _tukey(rows: list[Row], measure: str) -> dict[tuple[int, int], float]:
    """Tukey's HSD over the top runs' per-need scores, needs as blocks."""
    if len(rows) < 2:
        return {}
    blobs = dict(
        Result.objects.filter(pk__in=[row.result_id for row in rows]).values_list("pk", "per_need")
    )
    columns = {}
    for row in rows:
        frame = judged(Result(per_need=blobs[row.result_id]).per_need_frame())
        columns[row.submission_id] = frame[measure] if measure in frame else pd.Series(dtype=float)
    scores = pd.DataFrame(columns).fillna(0.0)
    if len(scores) < 2:
        return {}
    pairs = tukey_hsd_blocked(scores)
    return {
        tuple(sorted((int(a), int(b)))): float(p)
        for a, b, p in zip(pairs["a"], pairs["b"], pairs["p"], strict=True)
    }
