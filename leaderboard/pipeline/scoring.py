"""Scoring a run: read its file and the judgments, call the engine, store the result.

``run_scoring`` is what the ``score_submission`` task calls: claim the row, score, store
in one transaction, or fail it with a readable reason. The engine (``evaluation``) does
all the maths; this module only moves data between files, the engine and rows.
"""

from __future__ import annotations

import functools
import logging
import os

import numpy as np
import pandas as pd
from django.db import transaction
from django.utils import timezone

from evaluation.measures import evaluate, relevant_ranks, stored_requests
from evaluation.trec import TrecFormatError, read_qrels, read_run
from leaderboard.models import Judgments, MeasureVector, Result, Submission
from leaderboard.pipeline.files import max_uncompressed_bytes

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=4)
def _qrels_cached(path: str, sha256: str, name: str, max_bytes: int) -> pd.DataFrame:
    # Keyed by the file's hash too, so a replaced file is never served stale.
    return read_qrels(path, name=name, max_bytes=max_bytes)


def display_name(stored) -> str:
    """The name a participant or organizer gave the file (errors name it so); the stored
    file's own name for rows from before names were kept."""
    return stored.original_name or os.path.basename(stored.file.name)


def load_qrels(judgments: Judgments) -> pd.DataFrame:
    return _qrels_cached(
        judgments.file.path, judgments.sha256, display_name(judgments), max_uncompressed_bytes()
    )


def score(submission: Submission, judgments: Judgments) -> Result | None:
    """Score ``submission`` against ``judgments`` (trec_eval -c semantics) and store it.

    Raises ``TrecFormatError`` for a bad run file; nothing is stored then. Returns None,
    storing nothing, when the run was withdrawn or re-queued while it was being scored.
    """
    benchmark = submission.benchmark
    qrels = load_qrels(judgments)
    run = read_run(
        submission.file.path, name=display_name(submission), max_bytes=max_uncompressed_bytes()
    )
    # Every measure of the catalog (and the benchmark's own cutoffs): the leaderboard
    # ranks by any of them without rescoring.
    evaluation = evaluate(
        qrels,
        run,
        stored_requests(benchmark.catalog_measures()),
        relevance_level=benchmark.relevance_level,
        max_depth=benchmark.max_depth,
        complete=True,
        interpolation=benchmark.interpolation,
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
            for measure in benchmark.tested_measures()
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
        submission.fail(f"{display_name(submission)}: {error}")
    return submission
