"""Computing a benchmark's health for one judgments version, and storing it.

What ``compute_health`` calls, a few seconds after a batch of runs was scored and
compared (debounced: see :mod:`leaderboard.models.health`). The runs are those a
reader sees: scored, not hidden, not withdrawn, with a result on these judgments.
For each tested measure the needs x runs matrix is built from the stored per-need
vectors over the needs with a relevant document (as comparisons pair them); the
engine's :func:`evaluation.health.benchmark_health` gives the MDD, topic set sizes,
discriminative power (paired t-test with Holm over all pairs, the leaderboard's own
test, from the stored comparisons when they cover every pair) and tau against the
primary measure. Pool bias leaves one team out: it rescores each team's runs (the
team a run was submitted under, else its participant as a team of one) without the judgments only that team
pooled within the benchmark's pool depth, from each result's stored
:class:`~leaderboard.models.PoolRanks` (kept when the run was scored); no run file is
read, except once for a result stored without them, whose ranks are stored then.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
from django.db import transaction
from django.utils import timezone

from evaluation.health import (
    JudgedRanks,
    QrelsIndex,
    benchmark_health,
    judged_ranks,
    pool_bias_of_ranks,
)
from leaderboard.models import (
    Benchmark,
    BenchmarkHealth,
    Comparison,
    Judgments,
    MeasureVector,
    PoolRanks,
    Result,
    Submission,
)
from leaderboard.models.visibility import open_board
from leaderboard.pipeline.scoring import pool_qrels, read_submission

TEST = "t"
CORRECTION = "holm"
ALPHA = 0.05
POWER = 0.8
#: Rows of the pool-bias table kept (largest drops first).
POOL_ROWS = 20
log = logging.getLogger(__name__)


def _results(benchmark: Benchmark, judgments: Judgments):
    return (
        Result.objects.filter(
            judgments=judgments,
            submission__benchmark=benchmark,
            submission__status=Submission.Status.SCORED,
            submission__is_hidden=False,
            # a phase whose board is not public stays out of the statistics until the reveal
            submission__in=Submission.objects.filter(open_board()),
        )
        .select_related("submission")
        .order_by("submission_id")
    )


def _matrix(results: list[Result], measure: str, mask: np.ndarray) -> pd.DataFrame | None:
    vectors = dict(
        MeasureVector.objects.filter(result__in=results, measure=measure).values_list(
            "result__submission_id", "values"
        )
    )
    columns = {}
    for result in results:
        blob = vectors.get(result.submission_id)
        if blob is None:
            return None  # scored before this measure was tested: the comparisons fill it
        columns[result.submission_id] = np.frombuffer(bytes(blob), dtype=np.float64)[mask]
    return pd.DataFrame(columns)


def _stored_p(judgments: Judgments, measure: str, ids: list[int]) -> np.ndarray | None:
    """The stored t-test p of every pair (a < b by id, ``np.triu_indices`` order), or None
    when some pair has no comparison yet."""
    pairs = len(ids) * (len(ids) - 1) // 2
    rows = Comparison.objects.filter(
        judgments=judgments, measure=measure, submission_a__in=ids, submission_b__in=ids
    ).values_list("submission_a_id", "submission_b_id", "t_p")
    found = {(a, b): p for a, b, p in rows}
    if len(found) < pairs:
        return None
    left, right = np.triu_indices(len(ids), 1)
    return np.array([found[(ids[i], ids[j])] for i, j in zip(left, right, strict=True)])


def _participant(submission: Submission) -> str:
    """The team a run is left out with: the one it was submitted under, else its
    participant as a team of one."""
    if submission.team_id is not None:
        return f"team {submission.team_id}"
    return f"user {submission.participant_id}"


def _read_ranks(submission: Submission, qrels: QrelsIndex) -> JudgedRanks:
    return judged_ranks(qrels, read_submission(submission))


def _pool_ranks(results: list[Result], qrels: QrelsIndex) -> dict[str, JudgedRanks]:
    """Each result's stored judged ranks (by submission id, as a str); a result stored
    without them, or with ranks of other qrels, has its run read once and stored."""
    stored = dict(PoolRanks.objects.filter(result__in=results).values_list("result_id", "data"))
    found = {}
    for result in results:
        blob = stored.pop(result.pk, None)  # each copy held once
        try:
            ranks = None if blob is None else JudgedRanks.from_bytes(bytes(blob), qrels)
        except ValueError:
            ranks = None
        if ranks is None:
            ranks = _read_ranks(result.submission, qrels)
            PoolRanks.objects.update_or_create(result=result, defaults={"data": ranks.to_bytes()})
        found[str(result.submission_id)] = ranks
    return found


def _pool_bias(benchmark: Benchmark, judgments: Judgments, results: list[Result]) -> dict:
    qrels = pool_qrels(judgments)
    runs = _pool_ranks(results, qrels)
    participants = {str(r.submission_id): _participant(r.submission) for r in results}
    names = {str(r.submission_id): r.submission.run_name for r in results}
    found = pool_bias_of_ranks(
        qrels,
        runs,
        participants,
        measure=benchmark.primary_measure,
        depth=benchmark.pool_depth,
        relevance_level=benchmark.relevance_level,
    )
    table = found["runs"].head(POOL_ROWS)
    teams = found["participants"]
    return {
        "depth": benchmark.pool_depth,
        "measure": benchmark.primary_measure,
        "max_drop": found["max_drop"],
        "min_tau": float(teams["tau"].min()) if len(teams) else None,
        "participants": len(teams),
        "runs": [
            {
                "id": int(row.run),
                "run": names[row.run],
                "score": float(row.score),
                "loo_score": float(row.loo_score),
                "drop": float(row.drop),
                "rank": int(row.rank),
                "loo_rank": int(row.loo_rank),
                "judged": float(row.judged),
            }
            for row in table.itertuples()
        ],
    }


def _json_safe(value):
    """NaN and infinities (tau of a ranking with every run level) as None: JSON has neither."""
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(item) for item in value]
    if isinstance(value, float | np.floating):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


def compute(benchmark_id: int, judgments_id: int) -> BenchmarkHealth | None:
    """Compute and store the health of ``benchmark`` on ``judgments``; None if either is gone."""
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    judgments = Judgments.objects.filter(pk=judgments_id, benchmark_id=benchmark_id).first()
    if benchmark is None or judgments is None:
        return None
    results = list(_results(benchmark, judgments))
    data: dict = {"runs": len(results), "judged": judgments.num_judged, "measures": {}}
    if results:  # the needs with a relevant document, said even with one run to assess
        mask = results[0].per_need_frame()["num_rel"].to_numpy() > 0
        data["needs"] = int(mask.sum())
    if len(results) >= 2:
        ids = [r.submission_id for r in results]
        matrices, stored = {}, {}
        # no need with a relevant document (a pool's export loaded as judgments): no
        # scores to assess, the pool bias still is
        for measure in benchmark.tested_measures() if mask.any() else ():
            matrix = _matrix(results, measure, mask)
            if matrix is not None:
                matrices[measure] = matrix
                stored[measure] = _stored_p(judgments, measure, ids)
        if matrices:
            primary = benchmark.primary_measure
            data = {
                **data,
                **benchmark_health(
                    matrices,
                    primary=primary if primary in matrices else None,
                    test=TEST,
                    correction=CORRECTION,
                    alpha=ALPHA,
                    power=POWER,
                    p_values={m: p for m, p in stored.items() if p is not None},
                ),
            }
        try:
            data["pool_bias"] = _pool_bias(benchmark, judgments, results)
        except (OSError, ValueError) as error:  # a run file gone from storage, say
            log.warning("health of %s: pool bias skipped (%s)", benchmark.slug, error)
            data["pool_bias"] = {"error": "Some run files could not be read."}
    data["runs"] = len(results)
    with transaction.atomic():
        row, _ = BenchmarkHealth.objects.select_for_update().get_or_create(
            benchmark=benchmark, judgments=judgments
        )
        row.data = _json_safe(data)
        row.computed_at = timezone.now()
        row.save(update_fields=["data", "computed_at"])
    return row
