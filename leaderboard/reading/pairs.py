"""Comparing runs: one pair (stored or computed on the page) and the all-pairs matrix.

Stored comparisons hold raw p-values for the benchmark's tested measures (its primary
measure and ``map``); corrections are applied here, over the family the page asks about.
See ``boards`` for the decisions on ranks and significance against the leader.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import pandas as pd

from evaluation.significance import PAIR_KEYS, compare_pair, tukey_hsd_blocked
from leaderboard.models import Comparison, Result, Submission
from leaderboard.reading.boards import ALPHA, ELEVEN, Board, Row, adjusted, judged

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
            result = Comparison.turned(result)
        return result, True
    n = len(scores)
    if n == 0:  # no judged need with a relevant document: nothing to test (the verdict says so)
        counts = ("n", "wins", "ties", "losses")
        return {
            **{key: 0 if key in counts else None for key in PAIR_KEYS},
            "permutations": 0,
        }, False
    permutations = 10_000 if n <= 1_000 else max(1_000, 10_000_000 // max(n, 1) // 100 * 100)
    with warnings.catch_warnings():  # FewNeedsWarning: the page says it in words
        warnings.simplefilter("ignore")
        result = dict(
            compare_pair(scores["a"].to_numpy(), scores["b"].to_numpy(), permutations=permutations)
        )
    result["permutations"] = permutations
    return result, False


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


# The matrix's heatmap bands of corrected p: band 0 below 0.001, 1 below 0.01, 2 below
# alpha (0.05), 3 not significant; None for a pair not tested yet.
P_BANDS = (0.001, 0.01, ALPHA)


def p_band(p: float | None) -> int | None:
    """Which of ``P_BANDS`` a corrected p falls in (NaN counts as 1, as ``adjusted`` does)."""
    if p is None:
        return None
    if p != p:
        return len(P_BANDS)
    return next((i for i, edge in enumerate(P_BANDS) if p < edge), len(P_BANDS))


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
    rows = board.top
    ids = [row.submission_id for row in rows]
    pairs: dict[tuple[int, int], float] = {}
    if correction == "tukey":
        pairs = _tukey(rows, board.measure)
    else:
        comparisons = Comparison.objects.filter(
            judgments_id=board.judgments_id,
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
                    "band": p_band(p),
                    "better": better,
                    "a": row.submission_id,
                    "b": col.submission_id,
                    "a_name": row.run_name,  # the cell's tooltip names both runs
                    "b_name": col.run_name,
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
