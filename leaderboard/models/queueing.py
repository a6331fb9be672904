"""A run's place in the scoring queue: the conditional updates that make the Celery
tasks safe to redeliver, mixed into ``SubmissionQuerySet`` (``QueueQuerySet``: the sweep,
the outbox, rescoring many runs) and ``Submission`` (``QueuedRun``: one run's claim,
lease, requeue and failure).

The status moves ``queued -> running -> scored | failed`` (``withdrawn`` at any time).
Two fields keep the queue honest when a service fails: ``sent_at`` (the outbox: set only
once the broker accepted a scoring message, so a run stored while the broker was down is
found and sent later) and ``lease_until`` (a claim holds only while its task renews it,
so the sweep never takes a run from a live task). Lease times are the database's clock
(``Now()``): web, workers and beat may run on hosts whose clocks differ. Sending tasks is
not done here: a model never imports a task (``leaderboard.pipeline.tasks`` queues
them).

Imports nothing else of ``models``: the mixins reach the model through ``self.model``
(a QuerySet) and ``type(self)`` (a run).
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db import models
from django.db.models import Exists, F, OuterRef, Q
from django.db.models.functions import Now
from django.utils import timezone


class QueueQuerySet(models.QuerySet):
    def requeue_all(self) -> list[int]:
        """Put these runs (withdrawn ones, and failed ones whose name another run took,
        excepted) back to ``queued``, attempts reset.

        One UPDATE for all of them; returns their ids. The caller sends the tasks
        (``leaderboard.pipeline.tasks.queue_rescore``). Running ones too: a task that
        started before, say, a new judgments version finds its row re-queued when it
        finishes, keeps nothing, and the new message scores it.
        """
        # a failed run whose name a later run took stays failed: two runs never hold a name
        taken = self.model.objects.holding_names().filter(benchmark=OuterRef("benchmark"))
        taken = taken.filter(run_name=OuterRef("run_name")).exclude(pk=OuterRef("pk"))
        ids = list(
            self.live()
            .exclude(Q(status=self.model.Status.FAILED) & Exists(taken))
            .values_list("pk", flat=True)
        )
        self.model.objects.filter(pk__in=ids).update(
            status=self.model.Status.QUEUED,
            queued_at=timezone.now(),
            task_id="",
            attempts=0,
            failure_reason="",
            sent_at=None,
            lease_until=None,
        )
        return ids

    def stuck(self, older_than: dt.timedelta) -> QueueQuerySet:
        """Runs the sweep takes back: ``running`` ones whose lease ran out (their task
        stopped renewing it: killed, or its worker lost), and ``queued`` ones waiting
        longer than ``older_than`` (a message the broker lost). A running row without a
        lease (claimed before leases existed) is stuck once started ``older_than`` ago."""
        cutoff = timezone.now() - older_than
        running = Q(status=self.model.Status.RUNNING) & (
            Q(lease_until__lt=Now()) | Q(lease_until__isnull=True, started__lt=cutoff)
        )
        return self.filter(running | Q(status=self.model.Status.QUEUED, queued_at__lt=cutoff))

    def unsent(self, older_than: dt.timedelta) -> QueueQuerySet:
        """The outbox: queued runs no broker has accepted a message for, queued at least
        ``older_than`` ago (younger ones are being sent by the request that stored them)."""
        return self.filter(
            status=self.model.Status.QUEUED,
            sent_at__isnull=True,
            queued_at__lt=timezone.now() - older_than,
        )

    def mark_sent(self) -> int:
        """Record that the broker accepted a scoring message for these runs."""
        return self.filter(sent_at__isnull=True).update(sent_at=timezone.now())

    def release(self, task_id: str, reason: str) -> str:
        """A task that cannot finish gives back the runs it holds (``running`` under
        ``task_id``): ``queued`` and unsent, for the outbox to send again, while attempts
        remain; else ``failed`` with ``reason``. Returns the new status, or "" if the task
        held none of them (re-queued or withdrawn meanwhile)."""
        held = self.filter(status=self.model.Status.RUNNING, task_id=task_id)
        if held.filter(attempts__lt=settings.MAX_SCORING_ATTEMPTS).update(
            status=self.model.Status.QUEUED,
            queued_at=timezone.now(),
            task_id="",
            sent_at=None,
            lease_until=None,
        ):
            return self.model.Status.QUEUED
        if held.update(
            status=self.model.Status.FAILED,
            failure_reason=reason,
            finished=timezone.now(),
            lease_until=None,
        ):
            return self.model.Status.FAILED
        return ""


class QueuedRun:
    """One run's side of the queue (mixed into ``Submission``)."""

    def claim(self, task_id: str) -> bool:
        """Move ``queued`` -> ``running`` atomically, leased for ``LEASE_SECONDS``; False
        if another task has it.

        A message redelivered after its worker died, or a task retrying after a database
        error, carries the same task id, so it may take back a row left ``running`` by that
        same task, lease or not; a different task never can (the sweep re-queues the row
        first, and only once its lease has run out).
        """
        claimable = Q(status=self.Status.QUEUED) | Q(status=self.Status.RUNNING, task_id=task_id)
        won = (
            type(self)
            .objects.filter(claimable, pk=self.pk)
            .update(
                status=self.Status.RUNNING,
                started=timezone.now(),
                task_id=task_id,
                attempts=F("attempts") + 1,
                lease_until=Now() + dt.timedelta(seconds=settings.LEASE_SECONDS),
            )
        )
        if won:
            self.refresh_from_db()
        return bool(won)

    def renew_lease(self, task_id: str) -> bool:
        """Extend the lease of a run ``task_id`` still holds; False once it holds it no more."""
        return bool(
            type(self)
            .objects.filter(pk=self.pk, status=self.Status.RUNNING, task_id=task_id)
            .update(lease_until=Now() + dt.timedelta(seconds=settings.LEASE_SECONDS))
        )

    def requeue(self, stuck_for: dt.timedelta | None = None) -> bool:
        """Back to ``queued`` and unsent (the sweep's retry: attempts are kept and counted).

        With ``stuck_for``, only if the run is still stuck (``SubmissionQuerySet.stuck``),
        checked in the same UPDATE: a lease renewed since the sweep looked keeps its run.
        """
        rows = type(self).objects.filter(pk=self.pk).exclude(status=self.Status.WITHDRAWN)
        if stuck_for is not None:
            rows = rows.stuck(stuck_for)
        done = rows.update(
            status=self.Status.QUEUED,
            queued_at=timezone.now(),
            task_id="",
            failure_reason="",
            sent_at=None,
            lease_until=None,
        )
        self.refresh_from_db()
        return bool(done)

    def fail(
        self, reason: str, task_id: str | None = None, stuck_for: dt.timedelta | None = None
    ) -> bool:
        """``failed`` with ``reason``; with ``task_id`` only while that task holds the run,
        with ``stuck_for`` only while it is still stuck."""
        rows = type(self).objects.filter(pk=self.pk).exclude(status=self.Status.WITHDRAWN)
        if task_id is not None:
            rows = rows.filter(status=self.Status.RUNNING, task_id=task_id)
        if stuck_for is not None:
            rows = rows.stuck(stuck_for)
        done = rows.update(
            status=self.Status.FAILED,
            failure_reason=reason,
            finished=timezone.now(),
            lease_until=None,
        )
        self.refresh_from_db()
        return bool(done)

    def claim_notification(self) -> bool:
        """Whether this caller is the one to tell the participant the run finished: True
        once per run, for the first caller after it is ``scored`` or ``failed`` (one
        conditional UPDATE, so two deliveries of a task cannot both mail)."""
        return bool(
            type(self)
            .objects.filter(
                pk=self.pk,
                notified_at__isnull=True,
                status__in=[self.Status.SCORED, self.Status.FAILED],
            )
            .update(notified_at=timezone.now())
        )

    @property
    def waiting_for_queue(self) -> bool:
        """Stored and queued, but not yet handed to the broker (the outbox sends it)."""
        return self.status == self.Status.QUEUED and self.sent_at is None
