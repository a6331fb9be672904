"""Celery tasks, thin, idempotent and safe to redeliver, and the one place that sends them.

Each task takes an id, claims the row with a conditional update and calls ``scoring`` or
``comparing``. ``acks_late`` with ``reject_on_worker_lost`` (settings) means a worker
killed mid-task leaves its message to be redelivered; ``sweep_stuck`` catches anything
else. Task names stay ``leaderboard.tasks.*`` (the module they were first defined in):
messages queued before a deploy and the beat schedule keep finding them.

A database, broker or file store error inside a task (PostgreSQL restarting, Redis or
the bucket gone for a moment) retries it with backoff (``RETRY``: 2, 4, 8 ... 120 s, eight times, about six
minutes in all); a retry keeps its task id, so it takes its claimed row back. A scoring
task that ends without a result (retries exhausted, soft time limit, a bug) gives its
run back (``scoring.give_back``): it is never left ``running`` by a task that has ended,
unless the database is down even then, when the lease runs out and the sweep takes it.
Once a run is scored or has failed for good, its participant is mailed (``notify``:
once per run, never failing the task).

Everything that queues work goes through the ``queue_*`` functions at the bottom, which
send once the surrounding transaction commits (a worker never sees a row that is not
there yet). Scoring messages go through an outbox: ``Submission.sent_at`` is set only
once the broker accepted the message, and ``send_unsent`` (beat, every
``OUTBOX_INTERVAL_SECONDS``) sends the queued runs it never accepted. So an upload while
Redis is down is stored, answered normally, and scored once Redis is back. A deletion's
file names (``send_discard``) have no outbox: their rows are gone, so a broker that does
not take them has the request delete the files itself.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from collections.abc import Iterable, Iterator

import kombu.exceptions
from celery import current_app, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone

from evaluation.trec import TrecFormatError
from leaderboard.models import (
    Benchmark,
    BenchmarkHealth,
    Judgments,
    Pool,
    Submission,
    SubmissionQuerySet,
)
from leaderboard.pipeline import comparing, files, health, notify, pooling, scoring, splits
from leaderboard.pipeline.files import StorageUnavailable

log = logging.getLogger(__name__)

# What the broker raises when it cannot take a message: Celery turns the transport's
# connection and channel errors into kombu's OperationalError.
BROKER_ERRORS = (kombu.exceptions.OperationalError, kombu.exceptions.InconsistencyError)
# Errors worth retrying a task for: the service is likely back in a moment.
RETRY = {
    "autoretry_for": (OperationalError, InterfaceError, *BROKER_ERRORS, StorageUnavailable),
    "retry_backoff": 2,
    "retry_backoff_max": 120,
    "retry_jitter": False,  # jitter may shrink every delay to ~0 and spend the retries at once
    "max_retries": 8,
}
# The options of a task that redoes its work safely: acknowledged once done (a worker
# lost mid-task leaves its message to be redelivered), retried while a service is away.
REDELIVERED = {"acks_late": True, "reject_on_worker_lost": True, "ignore_result": True, **RETRY}
# A queued run younger than this is still being sent by the request that stored it.
OUTBOX_GRACE = dt.timedelta(seconds=10)
OUTBOX_BATCH = 500


@shared_task(name="leaderboard.tasks.score_submission", bind=True, **REDELIVERED)
def score_submission(self, submission_id: int) -> str:
    """Score one queued run, then queue its comparisons."""
    task_id = self.request.id or "eager"
    try:
        submission = scoring.run_scoring(submission_id, task_id)
        if submission is None:
            return "skipped"
        if submission.status == Submission.Status.SCORED:
            _send_comparison(submission.pk, submission.judgments_id)
        notify.notify_finished(submission.pk)  # once per run; never raises
        return submission.status
    except RETRY["autoretry_for"] as error:
        if self.request.retries < self.max_retries:
            raise  # retried with backoff; the retry takes its claimed row back
        log.error("scoring submission %s: retries exhausted (%s)", submission_id, error)
        # The participant sees the reason: no server names or addresses in it.
        reason = (
            "The database, the task queue or the file store did not answer; contact the organizers."
        )
        if scoring.give_back(submission_id, task_id, reason) == Submission.Status.FAILED:
            notify.notify_finished(submission_id)
        raise
    except Exception as error:  # the soft time limit, a bug: the run is not left running
        if scoring.give_back(submission_id, task_id, _reason(error)) == Submission.Status.FAILED:
            notify.notify_finished(submission_id)
        raise


def _reason(error: Exception) -> str:
    if isinstance(error, SoftTimeLimitExceeded):
        return (
            f"Scoring took longer than the time limit ({settings.TASK_TIME_LIMIT} s) on "
            "every attempt; the file may be too large. Contact the organizers."
        )
    return f"Scoring stopped on an internal error ({type(error).__name__}). Contact the organizers."


def _send_comparison(pk: int, judgments_id: int) -> None:
    # Inside a task there is no transaction: on_commit runs at once. A broker error here
    # retries the task, whose claim then finds the run scored by itself and sends again.
    transaction.on_commit(lambda: compare_submission.delay(pk, judgments_id))


@shared_task(name="leaderboard.tasks.compare_submission", **REDELIVERED)
def compare_submission(submission_id: int, judgments_id: int) -> int:
    """Test one scored run against every other scored, visible run (new pairs only)."""
    submission = Submission.objects.select_related("benchmark").filter(pk=submission_id).first()
    if submission is None or submission.status != Submission.Status.SCORED:
        return 0
    judgments = submission.benchmark.judgments.filter(pk=judgments_id).first()
    if judgments is None:
        return 0
    stored = 0
    for each in [judgments, *judgments.parts.all()]:  # a split's parts are tested apart
        stored += comparing.compare(submission, each)
        queue_health(submission.benchmark_id, each.pk)
    return stored


@shared_task(name="leaderboard.tasks.split_results", **REDELIVERED)
def split_results(benchmark_id: int) -> int:
    """After a split was set or changed: each scored run's public and private results,
    from its stored whole results (``splits.derive_parts``), then their comparisons."""
    stored = splits.derive_parts(benchmark_id)
    for submission_id, part_id in stored:
        transaction.on_commit(lambda pk=submission_id, j=part_id: compare_submission.delay(pk, j))
    return len(stored)


@shared_task(name="leaderboard.tasks.compute_health", **REDELIVERED)
def compute_health(benchmark_id: int, judgments_id: int, number: int) -> str:
    """Compute a benchmark's health on a judgments version, unless a newer request is
    queued behind this one (``number`` is no longer the row's: debounced)."""
    if not BenchmarkHealth.is_latest_request(benchmark_id, judgments_id, number):
        return "superseded"
    return "computed" if health.compute(benchmark_id, judgments_id) else "gone"


@shared_task(name="leaderboard.tasks.make_pool", bind=True, **REDELIVERED)
def make_pool(self, pool_id: int) -> str:
    """Build a pool (``pipeline.pooling``): claimed, so a redelivered message builds it
    once; a run file or a setting the engine refuses fails it with the reason."""
    pool = Pool.objects.select_related("benchmark", "phase").filter(pk=pool_id).first()
    if pool is None or not pool.claim(self.request.id):
        return "gone"
    try:
        built = pooling.build(pool, self.request.id)
    except (TrecFormatError, ValueError) as error:
        pooling.fail(pool, self.request.id, str(error))
        return "failed"
    return "built" if built else "gone"


@shared_task(name="leaderboard.tasks.sweep_stuck")
def sweep_stuck() -> dict[str, int]:
    """Re-queue runs stuck in ``queued`` or ``running`` (lease run out); fail them after
    too many attempts. Each change re-checks, in its UPDATE, that the run is still stuck:
    a task that renewed its lease since keeps its run."""
    older_than = dt.timedelta(seconds=settings.STUCK_AFTER_SECONDS)
    requeued = failed = 0
    for submission in Submission.objects.stuck(older_than):
        if submission.attempts >= settings.MAX_SCORING_ATTEMPTS:
            if submission.fail(
                f"Scoring did not finish after {submission.attempts} attempts; "
                "the file may be too large. Contact the organizers.",
                stuck_for=older_than,
            ):
                failed += 1
                notify.notify_finished(submission.pk)
        elif submission.requeue(stuck_for=older_than):
            queue_scoring(submission)
            requeued += 1
    if requeued or failed:
        log.warning("sweep: re-queued %d, failed %d stuck submissions", requeued, failed)
    refresh_revealed_health()
    return {"requeued": requeued, "failed": failed}


def refresh_revealed_health() -> int:
    """Queue the health computed before its benchmark's reveal, when the benchmark has a
    phase whose board was not public: its runs were left out of the statistics until the
    reveal (``pipeline.health``). Returns how many were queued."""
    stale = BenchmarkHealth.objects.computed_before_reveal()
    pairs = set(stale.values_list("benchmark_id", "judgments_id"))
    for benchmark_id, judgments_id in pairs:
        queue_health(benchmark_id, judgments_id)
    return len(pairs)


@shared_task(name="leaderboard.tasks.send_unsent", ignore_result=True)
def send_unsent() -> int:
    """The outbox: send the queued runs whose scoring message no broker has accepted yet
    (stored while Redis was down, or re-queued while it was). Returns how many were sent."""
    pending = Submission.objects.unsent(OUTBOX_GRACE).order_by("queued_at")
    sent = send_scoring(list(pending.values_list("pk", flat=True)[:OUTBOX_BATCH]))
    if sent:
        log.warning("outbox: sent %d queued runs the broker had not accepted", sent)
    return sent


@shared_task(name="leaderboard.tasks.discard_files", bind=True, **REDELIVERED)
def discard_files(self, names: list[str]) -> int:
    """Delete these files of deleted rows, those no row names now (``files.delete_unused``,
    checked on every try); a file store that does not answer retries the whole list."""
    try:
        return files.delete_unused(names)
    except RETRY["autoretry_for"] as error:
        if self.request.retries >= self.max_retries:
            log.error(
                "file store: could not delete %s after %d tries (%s); those no row names "
                "are orphans now",
                ", ".join(names),
                self.request.retries + 1,
                error,
            )
        raise


@shared_task(name="leaderboard.tasks.discard_expired_uploads", ignore_result=True)
def discard_expired_uploads() -> int:
    """Presigned uploads never confirmed, their URL expired: object and row deleted."""
    return files.discard_expired_uploads()


# --- Sending work ---------------------------------------------------------------------


def send_scoring(ids: Iterable[int], timeout: float | None = None) -> int:
    """Hand these runs' scoring messages to the broker now; mark each one it accepted.

    Stops at the first broker error (it is down: the next ones would wait as long for
    nothing); the rest stay unsent, for ``send_unsent``. The broker's socket timeouts
    and ``task_publish_retry_policy`` (settings) bound the wait to a few seconds; with
    ``timeout`` (seconds), one try on a connection of its own with that socket timeout
    (an upload's request: the outbox sends later anyway). Returns how many were accepted.
    """
    sent = 0
    with _publishing(timeout) as options:
        for pk in ids:
            try:
                score_submission.apply_async((pk,), **options)
            except (*BROKER_ERRORS, OSError) as error:
                log.warning("broker did not take run %s (%s); the outbox sends it later", pk, error)
                break
            Submission.objects.filter(pk=pk).mark_sent()
            sent += 1
    return sent


@contextlib.contextmanager
def _publishing(timeout: float | None) -> Iterator[dict]:
    """``apply_async``'s options: none (the app's pooled connection, its timeouts and
    retries), or, with ``timeout``, one try on a fresh connection with that timeout."""
    if timeout is None:
        yield {}
        return
    # kombu's own connection retries (max_retries) would wait seconds between tries
    limits = {"socket_timeout": timeout, "socket_connect_timeout": timeout, "max_retries": 0}
    connection = current_app.connection_for_write(transport_options=limits)
    try:
        yield {"connection": connection, "retry": False}
    finally:
        with contextlib.suppress(*BROKER_ERRORS, OSError):
            connection.release()


def send_discard(names: list[str]) -> None:
    """Hand deleted rows' file names to ``discard_files``, ``files.DELETE_BATCH`` a
    message, once the deletion committed. If the broker does not take one (one try, as
    an upload's), this request deletes the rest itself, in batches, best effort."""
    with _publishing(settings.UPLOAD_PUBLISH_TIMEOUT_MS / 1000) as options:
        for start in range(0, len(names), files.DELETE_BATCH):
            try:
                discard_files.apply_async((names[start : start + files.DELETE_BATCH],), **options)
            except (*BROKER_ERRORS, OSError) as error:
                left = len(names) - start
                log.warning(
                    "the broker did not take %d file deletions (%s); deleting now", left, error
                )
                files.discard_unused(names[start:])
                return


def queue_scoring(submission: Submission) -> None:
    """Score ``submission`` once the surrounding transaction commits.

    If the broker does not take the message, the run stays queued and unsent and the
    outbox sends it later: ``submission.sent_at`` (in memory) says which, so the caller
    can tell the participant.
    """

    def send() -> None:
        if send_scoring([submission.pk], settings.UPLOAD_PUBLISH_TIMEOUT_MS / 1000):
            submission.sent_at = submission.sent_at or timezone.now()

    transaction.on_commit(send)


def queue_rescore(submissions: SubmissionQuerySet) -> list[int]:
    """Re-queue these runs (withdrawn ones excepted, attempts reset) and send them.

    One UPDATE for all of them; the tasks are sent once the transaction commits, through
    the outbox (a run the broker does not take is sent later by ``send_unsent``).
    """
    ids = submissions.requeue_all()
    refused: list[int] = []  # once the broker refuses one, the rest wait for the outbox

    def send(pk: int) -> None:
        if not refused and not send_scoring([pk]):
            refused.append(pk)

    for pk in ids:
        transaction.on_commit(lambda pk=pk: send(pk))
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


def health_changed(*benchmarks: Benchmark) -> None:
    """Recompute the health of these benchmarks on their current judgments: which runs
    it covers changed (a run hidden, shown again or withdrawn)."""
    for benchmark in benchmarks:
        if benchmark.current_judgments_id is not None:
            queue_health(benchmark.pk, benchmark.current_judgments_id)
            parts = Judgments.objects.filter(parent_id=benchmark.current_judgments_id)
            for part_id in parts.values_list("pk", flat=True):
                queue_health(benchmark.pk, part_id)


def queue_health(benchmark_id: int, judgments_id: int) -> None:
    """Recompute the benchmark's health ``BENCHMARK_HEALTH_DELAY_SECONDS`` after the
    transaction commits; requests in the meantime supersede this one (the last wins)."""
    number = BenchmarkHealth.request(benchmark_id, judgments_id)
    delay = settings.BENCHMARK_HEALTH_DELAY_SECONDS
    transaction.on_commit(
        lambda: compute_health.apply_async((benchmark_id, judgments_id, number), countdown=delay)
    )


def queue_split(benchmark: Benchmark) -> None:
    """Derive the parts' results of a benchmark whose split was set or changed, once the
    transaction commits (``split_results``)."""
    pk = benchmark.pk
    transaction.on_commit(lambda: split_results.delay(pk))


def queue_pool(benchmark, phase, depth: int, runs_per_team: int, user=None) -> Pool:
    """A new pool of ``phase``'s final runs, built once the transaction commits."""
    pool = Pool.objects.create(
        benchmark=benchmark,
        phase=phase,
        depth=depth,
        runs_per_team=runs_per_team,
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    transaction.on_commit(lambda: make_pool.delay(pool.pk))
    return pool
