"""Celery tasks: thin, idempotent, safe to redeliver.

Each takes an id, claims the row with a conditional update and calls ``scoring``.
``acks_late`` with ``reject_on_worker_lost`` (settings) means a worker killed mid-task
leaves its message to be redelivered; ``sweep_stuck`` catches anything else.
"""

from __future__ import annotations

import datetime as dt
import logging

from celery import shared_task
from django.conf import settings
from django.db import transaction

from leaderboard import scoring
from leaderboard.models import Submission

log = logging.getLogger(__name__)


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True)
def score_submission(self, submission_id: int) -> str:
    """Score one queued run, then queue its comparisons."""
    submission = scoring.run_scoring(submission_id, self.request.id or "eager")
    if submission is None:
        return "skipped"
    if submission.status == Submission.Status.SCORED:
        judgments_id = submission.judgments_id
        transaction.on_commit(lambda: compare_submission.delay(submission_id, judgments_id))
    return submission.status


@shared_task(acks_late=True, reject_on_worker_lost=True)
def compare_submission(submission_id: int, judgments_id: int) -> int:
    """Test one scored run against every other scored, visible run (new pairs only)."""
    submission = Submission.objects.select_related("benchmark").filter(pk=submission_id).first()
    if submission is None or submission.status != Submission.Status.SCORED:
        return 0
    judgments = submission.benchmark.judgments.filter(pk=judgments_id).first()
    if judgments is None:
        return 0
    return scoring.compare(submission, judgments)


@shared_task
def sweep_stuck() -> dict[str, int]:
    """Re-queue runs stuck in ``queued``/``running``; fail them after too many attempts."""
    older_than = dt.timedelta(seconds=settings.STUCK_AFTER_SECONDS)
    requeued = failed = 0
    for submission in Submission.objects.stuck(older_than):
        if submission.attempts >= settings.MAX_SCORING_ATTEMPTS:
            submission.fail(
                f"Scoring did not finish after {submission.attempts} attempts; "
                "the file may be too large. Contact the organizers."
            )
            failed += 1
        else:
            submission.requeue()
            submission.enqueue()
            requeued += 1
    if requeued or failed:
        log.warning("sweep: re-queued %d, failed %d stuck submissions", requeued, failed)
    return {"requeued": requeued, "failed": failed}
