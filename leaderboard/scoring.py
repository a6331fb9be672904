"""Workflows that span several models: load judgments, score a run, compare it.

The Celery tasks in ``tasks.py`` stay thin and call these. The engine (``evaluation``)
does all the maths; this module only moves data between files, the engine and rows.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
from collections.abc import Iterable

import numpy as np
import pandas as pd
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from evaluation.measures import evaluate, relevant_ranks
from evaluation.significance import compare_one_against_many
from evaluation.trec import TrecFormatError, read_qrels, read_run
from leaderboard.comparing import turned
from leaderboard.models import (
    Benchmark,
    Comparison,
    Judgments,
    MeasureVector,
    Result,
    Submission,
)

log = logging.getLogger(__name__)

PERMUTATIONS = 10_000
SEED = 0
# Measures whose per-need vectors are stored for significance tests, besides the primary.
TESTED_MEASURES = ("map",)


def sha256_of(chunks: Iterable[bytes]) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    for chunk in chunks:
        digest.update(chunk)
        size += len(chunk)
    return digest.hexdigest(), size


@functools.lru_cache(maxsize=4)
def _qrels_cached(path: str, sha256: str, name: str) -> pd.DataFrame:
    # Keyed by the file's hash too, so a replaced file is never served stale.
    return read_qrels(path, name=name)


def load_qrels(judgments: Judgments) -> pd.DataFrame:
    return _qrels_cached(
        judgments.file.path, judgments.sha256, os.path.basename(judgments.file.name)
    )


def tested_measures(benchmark: Benchmark) -> list[str]:
    return list(dict.fromkeys([benchmark.primary_measure, *TESTED_MEASURES]))


def score(submission: Submission, judgments: Judgments) -> Result | None:
    """Score ``submission`` against ``judgments`` (trec_eval -c semantics) and store it.

    Raises ``TrecFormatError`` for a bad run file; nothing is stored then. Returns None,
    storing nothing, when the run was withdrawn or re-queued while it was being scored.
    """
    benchmark = submission.benchmark
    qrels = load_qrels(judgments)
    name = os.path.basename(submission.file.name)
    run = read_run(submission.file.path, name=name)
    evaluation = evaluate(
        qrels,
        run,
        relevance_level=benchmark.relevance_level,
        max_depth=benchmark.max_depth,
        complete=True,
    )
    per_need = evaluation.per_need
    ranks = relevant_ranks(evaluation.ranking)  # same flags: reuse the ordering
    per_need = per_need.reindex(judgments.need_ids) if judgments.need_ids else per_need
    num_rel = per_need["num_rel"].astype(np.int64)
    with transaction.atomic():
        result, _ = Result.objects.update_or_create(
            submission=submission,
            judgments=judgments,
            defaults={
                "summary": {key: float(value) for key, value in evaluation.summary.items()},
                "num_needs": len(per_need),
                "per_need": Result.pack_per_need(per_need),
                "ranks": Result.pack_ranks(ranks, num_rel),
            },
        )
        MeasureVector.objects.filter(result=result).delete()
        MeasureVector.objects.bulk_create(
            MeasureVector(
                result=result,
                measure=measure,
                values=per_need[measure].to_numpy(dtype=np.float64).tobytes(),
            )
            for measure in tested_measures(benchmark)
            if measure in per_need.columns
        )
        updated = Submission.objects.filter(
            pk=submission.pk, status=Submission.Status.RUNNING
        ).update(
            status=Submission.Status.SCORED,
            finished=timezone.now(),
            judgments=judgments,
            failure_reason="",
            warnings=list(evaluation.warnings) + list(run.warnings),
        )
        if updated:
            benchmark.promote_judgments_if_complete(judgments)
        else:  # withdrawn or re-queued while we worked: keep nothing
            transaction.set_rollback(True)
    submission.refresh_from_db()
    return result if updated else None


def _clean(value):
    if value is None:
        return None
    value = float(value)
    return None if np.isnan(value) else value


def compare(submission: Submission, judgments: Judgments) -> int:
    """Test ``submission`` against every other scored, visible run: only the new pairs.

    Pairs over the needs with at least one relevant document; a need a run did not
    answer scores 0 (trec_eval -c). Returns the number of comparisons stored.
    """
    benchmark = submission.benchmark
    mine = Result.objects.filter(submission=submission, judgments=judgments).first()
    if mine is None:
        return 0
    # Pair over the needs with at least one relevant document.
    mask = mine.per_need_frame()["num_rel"].to_numpy() > 0
    stored = 0
    for measure in tested_measures(benchmark):
        done = set(
            Comparison.objects.filter(judgments=judgments, measure=measure)
            .filter(Q(submission_a=submission) | Q(submission_b=submission))
            .values_list("submission_a_id", "submission_b_id")
        )
        done_ids = {a if b == submission.pk else b for a, b in done}
        vectors = (
            MeasureVector.objects.filter(
                measure=measure,
                result__judgments=judgments,
                result__submission__benchmark=benchmark,
                result__submission__status=Submission.Status.SCORED,
                result__submission__is_hidden=False,
            )
            .exclude(result__submission__in=[submission.pk, *done_ids])
            .values_list("result__submission_id", "values")
        )
        mine_vector = MeasureVector.objects.filter(result=mine, measure=measure).first()
        if mine_vector is None:
            continue
        others = {
            int(pk): np.frombuffer(bytes(values), dtype=np.float64)[mask] for pk, values in vectors
        }
        if not others:
            continue
        new = mine_vector.array()[mask]
        frame = pd.DataFrame(others)
        rows = compare_one_against_many(
            new, frame, name=str(submission.pk), permutations=PERMUTATIONS, seed=SEED
        )
        comparisons = []
        for row in rows.to_dict("records"):
            other = int(row["b"])
            if submission.pk > other:
                row, a, b = turned(row), other, submission.pk
            else:
                a, b = submission.pk, other
            comparisons.append(
                Comparison(
                    submission_a_id=a,
                    submission_b_id=b,
                    judgments=judgments,
                    measure=measure,
                    n=int(row["n"]),
                    mean_diff=float(row["mean_diff"]),
                    ci_low=_clean(row["ci_low"]),
                    ci_high=_clean(row["ci_high"]),
                    effect_size=_clean(row["effect_size"]),
                    wins=int(row["wins"]),
                    ties=int(row["ties"]),
                    losses=int(row["losses"]),
                    t_statistic=_clean(row["t_statistic"]),
                    t_p=float(row["t_p"]),
                    wilcoxon_statistic=_clean(row["wilcoxon_statistic"]),
                    wilcoxon_p=float(row["wilcoxon_p"]),
                    randomization_p=float(row["randomization_p"]),
                    permutations=PERMUTATIONS,
                )
            )
        Comparison.objects.bulk_create(comparisons, ignore_conflicts=True, batch_size=1000)
        stored += len(comparisons)
    return stored


def run_scoring(submission_id: int, task_id: str) -> Submission | None:
    """Claim, score and store one submission; a bad file ends ``failed`` with its reason."""
    submission = Submission.objects.select_related("benchmark").filter(pk=submission_id).first()
    if submission is None or not submission.claim(task_id):
        return None
    judgments = submission.benchmark.latest_judgments
    if judgments is None:
        submission.fail("The benchmark has no relevance judgments yet.")
        return submission
    try:
        score(submission, judgments)
    except TrecFormatError as error:
        submission.fail(str(error))
    except (OSError, ValueError) as error:
        log.exception("scoring submission %s failed", submission.pk)
        submission.fail(f"{os.path.basename(submission.file.name)}: {error}")
    return submission
