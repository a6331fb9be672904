"""Celery tasks, thin, idempotent and safe to redeliver, and the one place that sends them.

Each task takes an id, claims the row with a conditional update and calls ``scoring`` or
``comparing``. ``acks_late`` with ``reject_on_worker_lost`` (settings) means a worker
killed mid-task leaves its message to be redelivered; ``sweep_stuck`` catches anything
else. Task names stay ``leaderboard.tasks.*`` (the module they were first defined in):
messages queued before a deploy and the beat schedule keep finding them.

Everything that queues work goes through the ``queue_*`` functions at the bottom, which
send once the surrounding transaction commits (a worker never sees a row that is not
there yet).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable

from celery import shared_task
from django.conf import settings
from django.db import transaction

from leaderboard.models import Submission, SubmissionQuerySet
from leaderboard.pipeline import comparing, scoring

log = logging.getLogger(__name__)


@shared_task(
    name="leaderboard.tasks.score_submission", bind=True, acks_late=True, reject_on_worker_lost=True
)
def score_submission(self, submission_id: int) -> str:
    """Score one queued run, then queue its comparisons."""
    submission = scoring.run_scoring(submission_id, self.request.id or "eager")
    if submission is None:
        return "skipped"
    if submission.status == Submission.Status.SCORED:
        judgments_id = submission.judgments_id
        transaction.on_commit(lambda: compare_submission.delay(submission_id, judgments_id))
    return submission.status


@shared_task(
    name="leaderboard.tasks.compare_submission", acks_late=True, reject_on_worker_lost=True
)
def compare_submission(submission_id: int, judgments_id: int) -> int:
    """Test one scored run against every other scored, visible run (new pairs only)."""
    submission = Submission.objects.select_related("benchmark").filter(pk=submission_id).first()
    if submission is None or submission.status != Submission.Status.SCORED:
        return 0
    judgments = submission.benchmark.judgments.filter(pk=judgments_id).first()
    if judgments is None:
        return 0
    return comparing.compare(submission, judgments)


@shared_task(name="leaderboard.tasks.sweep_stuck")
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
            queue_scoring(submission)
            requeued += 1
    if requeued or failed:
        log.warning("sweep: re-queued %d, failed %d stuck submissions", requeued, failed)
    return {"requeued": requeued, "failed": failed}


# --- Sending work ---------------------------------------------------------------------


def queue_scoring(submission: Submission) -> None:
    """Score ``submission`` once the surrounding transaction commits."""
    pk = submission.pk
    transaction.on_commit(lambda: score_submission.delay(pk))


def queue_rescore(submissions: SubmissionQuerySet) -> list[int]:
    """Re-queue these runs (withdrawn ones excepted, attempts reset) and send them.

    One UPDATE for all of them; the tasks are sent once the transaction commits.
    """
    ids = submissions.requeue_all()
    for pk in ids:
        transaction.on_commit(lambda pk=pk: score_submission.delay(pk))
    return ids


def queue_comparisons(submissions: Iterable[Submission]) -> int:
    """Compare each scored run (against its latest judgments) again: the missing pairs."""
    count = 0
    for submission in submissions:
        if submission.status == Submission.Status.SCORED and submission.judgments_id:
            pk, judgments_id = submission.pk, submission.judgments_id
            transaction.on_commit(lambda pk=pk, j=judgments_id: compare_submission.delay(pk, j))
            count += 1
    return count
