"""Submitted runs: one row per uploaded run file, its status and the queries over many.

The status moves ``queued -> running -> scored | failed`` (``withdrawn`` at any time);
the conditional updates here (``claim``, ``requeue``, ``fail``) are what make the Celery
tasks safe to redeliver. Two fields keep the queue honest when a service fails:
``sent_at`` (the outbox: set only once the broker accepted a scoring message, so a run
stored while the broker was down is found and sent later) and ``lease_until`` (a claim
holds only while its task renews it, so the sweep never takes a run from a live task).
Lease times are the database's clock (``Now()``): web, workers and beat may run on hosts
whose clocks differ. Sending tasks is not done here: a model never imports a task
(``leaderboard.pipeline.tasks`` queues them). Imports nothing else of ``models``: the
foreign keys name their targets as strings.

The owner's operations (``edit``, ``hide``, ``unhide``, ``withdraw``) are here too, each
checking who may do it: over 400 lines, because a run's whole life, queue to withdrawal,
reads best in one place and splitting the model would not make it shorter.

Hiding: a run is hidden by its participant or by the benchmark's organizers, and the row
records which (``hidden_by``, ``hidden_by_organizer``). The participant may show again
only a run they hid themselves; the organizers may show any. Every change of the hidden
flag goes through ``SubmissionQuerySet.hide`` and ``unhide`` (the run's own ``hide`` and
``unhide`` and the admin's actions call them), so work that follows a change of what
readers see has one place to hook into.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
import unicodedata
from typing import TYPE_CHECKING

from django.apps import apps
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.validators import RegexValidator, URLValidator
from django.db import models
from django.db.models import Case, Exists, F, OuterRef, Q, When
from django.db.models.functions import Now
from django.urls import reverse
from django.utils import timezone

if TYPE_CHECKING:
    from leaderboard.models.benchmarks import Benchmark
    from leaderboard.models.results import Result

RUN_NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,40}$")
run_name_validator = RegexValidator(
    RUN_NAME_RE, "Use 1 to 40 letters, digits, dots, underscores or hyphens."
)


# A run's paper and code links: web addresses only (no ftp:, never javascript:).
web_url_validator = URLValidator(schemes=["http", "https"])


def utc_day_start(now: dt.datetime | None = None) -> dt.datetime:
    now = now or timezone.now()
    return now.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)


# The runs whose name no other run of the benchmark may take: all but failed and
# withdrawn ones (the unique constraint's condition, and ``holding_name``'s filter).
NAME_HELD = ~Q(status__in=["failed", "withdrawn"])


def _public() -> Q:
    """Runs anyone may see on a public board (the condition, not the phase's board)."""
    Result = apps.get_model("leaderboard", "Result")
    return (
        Q(is_hidden=False)
        & ~Q(status__in=[Submission.Status.WITHDRAWN, Submission.Status.FAILED])
        & Q(Exists(Result.objects.filter(submission=OuterRef("pk"))))
    )


def open_board(now: dt.datetime | None = None) -> Q:
    """Runs whose phase shows them to everyone: no phase, a public board, or the benchmark
    revealed. Before the reveal an "owners" phase's runs are their owner's and the
    organizers' only, and a "hidden" phase's scores the organizers' only."""
    now = now or timezone.now()
    return (
        Q(phase__isnull=True)
        | Q(phase__board="public")
        | Q(benchmark__reveal_at__isnull=False, benchmark__reveal_at__lte=now)
    )


def _hidden_phase_runs() -> models.QuerySet:
    """Ids of runs of a "hidden" phase before their benchmark's reveal."""
    return (
        Submission.objects.filter(phase__board="hidden")
        .exclude(benchmark__reveal_at__lte=timezone.now())
        .values("pk")
    )


class SubmissionQuerySet(models.QuerySet):
    def for_benchmark(self, benchmark: Benchmark) -> SubmissionQuerySet:
        return self.filter(benchmark=benchmark)

    def live(self) -> SubmissionQuerySet:
        return self.exclude(status=Submission.Status.WITHDRAWN)

    def holding_names(self) -> SubmissionQuerySet:
        """The runs that hold their names: neither failed nor withdrawn. A failed or
        withdrawn run keeps its name on its page, but a corrected upload may take it
        (``unique_live_run_name``), and send the same file again."""
        return self.filter(NAME_HELD)

    def holding_name(self, run_name: str) -> SubmissionQuerySet:
        """The run holding ``run_name`` (at most one per benchmark)."""
        return self.holding_names().filter(run_name=run_name)

    def scored(self) -> SubmissionQuerySet:
        return self.filter(status=Submission.Status.SCORED)

    def visible_to(self, user) -> SubmissionQuerySet:
        """Runs ``user`` may see exist (on boards, lists and their pages). Anyone: runs
        neither hidden, withdrawn nor failed, scored at least once (a run being rescored
        keeps its place), and on an open board (``open_board``). Their owner, the
        organizers and superusers: all of them. Whether their scores are shown is
        ``scores_visible_to``."""
        public = _public() & open_board()
        if not user.is_authenticated:
            return self.filter(public)
        if user.is_superuser:
            return self
        return self.filter(public | Q(participant=user) | Q(benchmark__organizers=user)).distinct()

    def scores_visible_to(self, user) -> SubmissionQuerySet:
        """The runs of ``visible_to`` whose scores ``user`` may see: all but the owner's
        own runs of a hidden phase before the reveal (only organizers see those scores).
        Every read of scores (boards, comparisons, exports, matrices, plots, the field of
        a run's results, health) lists runs through this."""
        if not user.is_authenticated:
            return self.visible_to(user)
        if user.is_superuser:
            return self
        shown = (
            (_public() & open_board())
            | Q(benchmark__organizers=user)
            | (Q(participant=user) & ~Q(pk__in=_hidden_phase_runs()))
        )
        return self.filter(shown).distinct()

    def counted_today(self, user) -> int:
        """Submissions that count against the daily limit: this UTC day, not failed.

        Withdrawn and hidden runs count: the limit bounds how often a participant may
        look at scores against the hidden judgments, and a run's scores were seen (on
        its page) before it was withdrawn. Failed runs do not: nothing was scored."""
        return (
            self.filter(participant=user, created__gte=utc_day_start())
            .exclude(status=Submission.Status.FAILED)
            .count()
        )

    def withdraw(self) -> list[int]:
        """Withdraw these runs (those not withdrawn yet): kept for the record, off every
        board. One UPDATE; returns the ids it withdrew. A scoring task holding one of
        them finds it withdrawn when it stores and keeps nothing; a queued comparison
        finds it not scored and does nothing (``pipeline.tasks``)."""
        ids = list(self.live().values_list("pk", flat=True))
        Submission.objects.filter(pk__in=ids).live().update(
            status=Submission.Status.WITHDRAWN, withdrawn_at=timezone.now(), lease_until=None
        )
        return ids

    def hide(self, by, *, by_organizer: bool) -> list[int]:
        """Hide these runs (withdrawn ones excepted), recording that ``by`` hid them and
        whether as an organizer; returns the ids of those that were public.

        An organizer's hide takes over a run its participant hid (so the participant can
        no longer show it); a participant's hide leaves an organizer's as it is. Permission
        is the caller's to check (``Submission.hide``, the admin's organizer scoping).
        ``visibility_changed_at`` moves only for runs that were public."""
        runs = Submission.objects.filter(pk__in=self.values("pk")).live()
        public = list(runs.filter(is_hidden=False).values_list("pk", flat=True))
        if by_organizer:
            runs = runs.exclude(is_hidden=True, hidden_by_organizer=True)
        else:
            runs = runs.filter(is_hidden=False)
        runs.update(
            is_hidden=True,
            hidden_by=by if by is not None and by.is_authenticated else None,
            hidden_by_organizer=by_organizer,
            visibility_changed_at=Case(
                When(is_hidden=False, status=Submission.Status.SCORED, then=Now()),
                default=F("visibility_changed_at"),
            ),
        )
        return public

    def unhide(self, *, by_organizer: bool) -> list[int]:
        """Show these hidden runs to everyone again (withdrawn ones excepted); returns the
        ids shown. Without ``by_organizer`` only the runs their participant hid: an
        organizer's hide is the organizers' to undo. The caller queues the comparisons
        left untested while they were hidden (``pipeline.tasks.queue_comparisons``)."""
        hidden = Submission.objects.filter(pk__in=self.values("pk")).live().filter(is_hidden=True)
        if not by_organizer:
            hidden = hidden.filter(hidden_by_organizer=False)
        ids = list(hidden.values_list("pk", flat=True))
        hidden.filter(pk__in=ids).update(
            is_hidden=False,
            hidden_by=None,
            hidden_by_organizer=False,
            visibility_changed_at=Case(
                When(status=Submission.Status.SCORED, then=Now()),
                default=F("visibility_changed_at"),
            ),
        )
        return ids

    def requeue_all(self) -> list[int]:
        """Put these runs (withdrawn ones, and failed ones whose name another run took,
        excepted) back to ``queued``, attempts reset.

        One UPDATE for all of them; returns their ids. The caller sends the tasks
        (``leaderboard.pipeline.tasks.queue_rescore``). Running ones too: a task that
        started before, say, a new judgments version finds its row re-queued when it
        finishes, keeps nothing, and the new message scores it.
        """
        # a failed run whose name a later run took stays failed: two runs never hold a name
        taken = Submission.objects.filter(NAME_HELD, benchmark=OuterRef("benchmark"))
        taken = taken.filter(run_name=OuterRef("run_name")).exclude(pk=OuterRef("pk"))
        ids = list(
            self.live()
            .exclude(Q(status=Submission.Status.FAILED) & Exists(taken))
            .values_list("pk", flat=True)
        )
        Submission.objects.filter(pk__in=ids).update(
            status=Submission.Status.QUEUED,
            queued_at=timezone.now(),
            task_id="",
            attempts=0,
            failure_reason="",
            sent_at=None,
            lease_until=None,
        )
        return ids

    def stuck(self, older_than: dt.timedelta) -> SubmissionQuerySet:
        """Runs the sweep takes back: ``running`` ones whose lease ran out (their task
        stopped renewing it: killed, or its worker lost), and ``queued`` ones waiting
        longer than ``older_than`` (a message the broker lost). A running row without a
        lease (claimed before leases existed) is stuck once started ``older_than`` ago."""
        cutoff = timezone.now() - older_than
        running = Q(status=Submission.Status.RUNNING) & (
            Q(lease_until__lt=Now()) | Q(lease_until__isnull=True, started__lt=cutoff)
        )
        return self.filter(running | Q(status=Submission.Status.QUEUED, queued_at__lt=cutoff))

    def unsent(self, older_than: dt.timedelta) -> SubmissionQuerySet:
        """The outbox: queued runs no broker has accepted a message for, queued at least
        ``older_than`` ago (younger ones are being sent by the request that stored them)."""
        return self.filter(
            status=Submission.Status.QUEUED,
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
        held = self.filter(status=Submission.Status.RUNNING, task_id=task_id)
        if held.filter(attempts__lt=settings.MAX_SCORING_ATTEMPTS).update(
            status=Submission.Status.QUEUED,
            queued_at=timezone.now(),
            task_id="",
            sent_at=None,
            lease_until=None,
        ):
            return Submission.Status.QUEUED
        if held.update(
            status=Submission.Status.FAILED,
            failure_reason=reason,
            finished=timezone.now(),
            lease_until=None,
        ):
            return Submission.Status.FAILED
        return ""


STEM_LENGTH = 40


def safe_file_name(filename: str) -> str:
    """A short, safe name for a stored upload, from the name it was given.

    The given name may be 255 characters of anything (a path, ``..``, control
    characters, any script): the stored one is its last path part reduced to ASCII
    letters, digits, ``.``, ``_`` and ``-`` (accents dropped, anything else one ``_``),
    at most 40 characters, never starting with a dot, keeping a final ``.gz`` so the
    file still says it is gzipped. The given name is kept on the row
    (``original_name``) and is what messages show.

    >>> safe_file_name("../../Runs/BM25 (été) final.txt.gz")
    'BM25_ete_final.txt.gz'
    """
    base = re.split(r"[/\\]", filename)[-1]
    gzipped = base.lower().endswith(".gz")
    if gzipped:
        base = base[:-3]
    ascii_only = unicodedata.normalize("NFKD", base).encode("ascii", "ignore").decode()
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", ascii_only).strip("._-")
    stem = stem[:STEM_LENGTH].rstrip("._-") or "file"
    return stem + (".gz" if gzipped else "")


def keep_name(filename: str) -> str:
    """The given name as it can be stored in ``original_name``: printable characters
    only (PostgreSQL refuses NUL in text), at most 255."""
    return "".join(c for c in filename if c.isprintable())[:255]


def submission_path(instance: Submission, filename: str) -> str:
    """``runs/<benchmark>/<run name>-<12 hex digits>-<safe stem>[.gz]``.

    The file is saved before the row, so there is no id yet; the 12 hex digits are the
    start of the content's SHA-256 (on the row since the upload was checked), which ties
    the stored file to the hash the row records (random ones where no hash is known).
    The run name is unique per benchmark, and the storage adds a suffix should a name
    still be taken, so the path never collides; it is at most ~190 characters.
    """
    token = instance.sha256[:12] or secrets.token_hex(6)
    name = safe_file_name(filename)
    return f"runs/{instance.benchmark.slug}/{instance.run_name}-{token}-{name}"


class Submission(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SCORED = "scored"
        FAILED = "failed"
        WITHDRAWN = "withdrawn"

    benchmark = models.ForeignKey(
        "leaderboard.Benchmark", on_delete=models.CASCADE, related_name="submissions"
    )
    participant = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions"
    )
    run_name = models.CharField(max_length=40, validators=[run_name_validator])
    phase = models.ForeignKey(
        "leaderboard.Phase",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="submissions",
        help_text="The campaign phase it was submitted in (none on an ever-open benchmark).",
    )
    team = models.ForeignKey(
        "leaderboard.Team",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="submissions",
        help_text="The participant's team when the run was submitted.",
    )
    final_priority = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Set by the team: this run is final, at this priority (1 first); "
        "empty: not marked (leaderboard.models.finals).",
    )
    description = models.TextField(blank=True)
    paper_url = models.URLField(
        "paper",
        max_length=500,
        blank=True,
        validators=[web_url_validator],
        help_text="A paper or preprint describing the run.",
    )
    code_url = models.URLField(
        "code",
        max_length=500,
        blank=True,
        validators=[web_url_validator],
        help_text="The code that produced the run.",
    )
    file = models.FileField(upload_to=submission_path, max_length=300)
    original_name = models.CharField(
        max_length=255,
        blank=True,
        help_text="The uploaded file's name, as the participant gave it.",
    )
    size = models.BigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    failure_reason = models.TextField(blank=True)
    warnings = models.JSONField(default=list, blank=True)
    is_baseline = models.BooleanField("baseline", default=False)
    is_hidden = models.BooleanField("hidden", default=False)
    hidden_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who hid the run (empty while it is public).",
    )
    hidden_by_organizer = models.BooleanField(
        default=False,
        help_text="Hidden by the benchmark's organizers: only they may show it again.",
    )
    visibility_changed_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the scored run was last hidden from readers or shown to them again "
        "(a board's Last-Modified).",
    )
    created = models.DateTimeField(default=timezone.now)
    queued_at = models.DateTimeField(default=timezone.now)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    task_id = models.CharField(max_length=64, blank=True)
    sent_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the broker accepted the latest scoring message (the outbox: empty "
        "while a queued run has not been handed to the broker).",
    )
    lease_until = models.DateTimeField(
        null=True,
        blank=True,
        help_text="A running task holds its claim until then and renews it while alive; "
        "the sweep only takes back runs whose lease has run out.",
    )
    notified_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the participant was mailed that the run was scored or failed (or "
        "it was settled that no mail goes: opted out, no address). Set once, atomically: "
        "a redelivered task does not mail twice.",
    )
    judgments = models.ForeignKey(
        "leaderboard.Judgments",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The judgments version of the latest scoring.",
    )

    objects = SubmissionQuerySet.as_manager()

    class Meta:
        ordering = ["-created"]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "run_name"], condition=NAME_HELD, name="unique_live_run_name"
            ),
        ]
        indexes = [models.Index(fields=["status", "queued_at"])]

    def __str__(self) -> str:
        return self.run_name

    def get_absolute_url(self) -> str:
        return reverse("submission", args=[self.pk])

    def is_visible_to(self, user) -> bool:
        """One run's ``SubmissionQuerySet.visible_to``."""
        public = not self.is_hidden and self.status not in (
            self.Status.WITHDRAWN,
            self.Status.FAILED,
        )
        if (
            public
            and self.board_open()
            and (self.status == self.Status.SCORED or self.results.exists())
        ):
            return True
        if not user.is_authenticated:
            return False
        return user.pk == self.participant_id or self.benchmark.is_organised_by(user)

    def board_open(self) -> bool:
        """Whether the run's phase shows it to everyone (``open_board`` for one run)."""
        if self.phase_id is None or self.benchmark.revealed():
            return True
        return self.phase.board == "public"

    def scores_hidden(self) -> bool:
        """Whether the run's scores are the organizers' only: a hidden phase's, before the
        reveal."""
        return self.phase_id is not None and self.phase.board == "hidden" and not self.board_open()

    def scores_visible_to(self, user) -> bool:
        """One run's ``SubmissionQuerySet.scores_visible_to``."""
        if not self.is_visible_to(user):
            return False
        return not self.scores_hidden() or self.benchmark.is_organised_by(user)

    def scores_note(self, user) -> str:
        """Why ``user``, who may see the run, sees no scores of it ("" if they do)."""
        if self.scores_visible_to(user) or not self.scores_hidden():
            return ""
        return self.phase.scores_note()

    # --- The owner's operations (the run page and My runs; organizers use the admin) ---

    @property
    def is_withdrawn(self) -> bool:
        return self.status == self.Status.WITHDRAWN

    def is_owned_by(self, user) -> bool:
        return user.is_authenticated and user.pk == self.participant_id

    def _check_owner(self, by) -> None:
        if not self.is_owned_by(by):
            raise PermissionDenied("Only the participant who submitted a run may change it.")

    def edit(self, by, *, description: str, paper_url: str = "", code_url: str = "") -> None:
        """Change the run's description and links (validated by the caller's form).
        A withdrawn run is kept as it was: ``ValueError``."""
        self._check_owner(by)
        if self.is_withdrawn:
            raise ValueError(f"Run {self.run_name} is withdrawn; it is kept as it was.")
        self.description, self.paper_url, self.code_url = description, paper_url, code_url
        self.save(update_fields=["description", "paper_url", "code_url"])

    def why_not_hide(self, user) -> str:
        """Why ``user`` may not hide the run, or "" if they may: its participant and the
        benchmark's organizers may."""
        if self.is_owned_by(user) or self.benchmark.is_organised_by(user):
            return ""
        return (
            "Only the participant who submitted a run, or the benchmark's organizers, may hide it."
        )

    def why_not_unhide(self, user) -> str:
        """Why ``user`` may not show the run again, or "" if they may: the organizers may
        show any hidden run, its participant only one they hid themselves."""
        if self.benchmark.is_organised_by(user):
            return ""
        if not self.is_owned_by(user):
            return (
                "Only the participant who submitted a run, or the benchmark's organizers, "
                "may show it again."
            )
        if self.is_hidden and self.hidden_by_organizer:
            return (
                f"Run {self.run_name} was hidden by the benchmark's organizers; ask them to "
                "show it again."
            )
        return ""

    def hide(self, by) -> bool:
        """Hide the run from the public board; True if it was public.

        Its participant or the benchmark's organizers may (``why_not_hide``, else
        ``PermissionDenied`` with the reason); the row records which, and a participant's
        own hide is theirs to undo while an organizer's is not (an organizer hiding their
        own run hides it as its participant).

        Hiding keeps the stored comparisons (raw p-values; the board forms its families
        from the runs it shows, so a hidden run is in none of the public ones) and new
        runs are not tested against a hidden one. So showing it again leaves pairs to
        test: the caller queues them (``pipeline.tasks.queue_comparisons``). A withdrawn
        run stays as it is: ``ValueError``."""
        if reason := self.why_not_hide(by):
            raise PermissionDenied(reason)
        if self.is_withdrawn:
            raise ValueError(f"Run {self.run_name} is withdrawn; it is off the board for good.")
        organizer = not self.is_owned_by(by)
        changed = Submission.objects.filter(pk=self.pk).hide(by, by_organizer=organizer)
        self.refresh_from_db()
        return bool(changed)

    def unhide(self, by) -> bool:
        """Show the hidden run to everyone again; True if it was hidden.

        ``PermissionDenied`` with the reason (``why_not_unhide``) for a participant whose
        run the organizers hid, or anyone neither its participant nor an organizer. A
        withdrawn run stays as it is: ``ValueError``. The caller queues the comparisons
        left untested while it was hidden."""
        if reason := self.why_not_unhide(by):
            raise PermissionDenied(reason)
        if self.is_withdrawn:
            raise ValueError(f"Run {self.run_name} is withdrawn; it is off the board for good.")
        organizer = self.benchmark.is_organised_by(by)
        shown = Submission.objects.filter(pk=self.pk).unhide(by_organizer=organizer)
        self.refresh_from_db()
        return bool(shown)

    def withdraw(self, by) -> bool:
        """Withdraw the run: kept for the record (its page, for its owner and the
        organizers), off every board, export, matrix and significance family, for good.

        It still counts against the day's limit (``counted_today``). Stored comparisons
        stay, unread by any public family; pending work on the run keeps nothing
        (``SubmissionQuerySet.withdraw``). A run that was holding back a new judgments
        version (not yet rescored against it) holds it back no longer. Returns False if
        it was withdrawn already."""
        self._check_owner(by)
        done = bool(Submission.objects.filter(pk=self.pk).withdraw())
        self.refresh_from_db()
        latest = self.benchmark.latest_judgments
        if done and latest is not None:
            self.benchmark.promote_judgments_if_complete(latest)
        return done

    def claim(self, task_id: str) -> bool:
        """Move ``queued`` -> ``running`` atomically, leased for ``LEASE_SECONDS``; False
        if another task has it.

        A message redelivered after its worker died, or a task retrying after a database
        error, carries the same task id, so it may take back a row left ``running`` by that
        same task, lease or not; a different task never can (the sweep re-queues the row
        first, and only once its lease has run out).
        """
        claimable = Q(status=self.Status.QUEUED) | Q(status=self.Status.RUNNING, task_id=task_id)
        won = Submission.objects.filter(claimable, pk=self.pk).update(
            status=self.Status.RUNNING,
            started=timezone.now(),
            task_id=task_id,
            attempts=F("attempts") + 1,
            lease_until=Now() + dt.timedelta(seconds=settings.LEASE_SECONDS),
        )
        if won:
            self.refresh_from_db()
        return bool(won)

    def renew_lease(self, task_id: str) -> bool:
        """Extend the lease of a run ``task_id`` still holds; False once it holds it no more."""
        return bool(
            Submission.objects.filter(
                pk=self.pk, status=self.Status.RUNNING, task_id=task_id
            ).update(lease_until=Now() + dt.timedelta(seconds=settings.LEASE_SECONDS))
        )

    def requeue(self, stuck_for: dt.timedelta | None = None) -> bool:
        """Back to ``queued`` and unsent (the sweep's retry: attempts are kept and counted).

        With ``stuck_for``, only if the run is still stuck (``SubmissionQuerySet.stuck``),
        checked in the same UPDATE: a lease renewed since the sweep looked keeps its run.
        """
        rows = Submission.objects.filter(pk=self.pk).exclude(status=self.Status.WITHDRAWN)
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
        rows = Submission.objects.filter(pk=self.pk).exclude(status=self.Status.WITHDRAWN)
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
            Submission.objects.filter(
                pk=self.pk,
                notified_at__isnull=True,
                status__in=[self.Status.SCORED, self.Status.FAILED],
            ).update(notified_at=timezone.now())
        )

    @property
    def waiting_for_queue(self) -> bool:
        """Stored and queued, but not yet handed to the broker (the outbox sends it)."""
        return self.status == self.Status.QUEUED and self.sent_at is None

    def current_result(self) -> Result | None:
        judgments_id = self.benchmark.current_judgments_id
        if judgments_id is None:
            return None
        return self.results.filter(judgments_id=judgments_id).first()
