"""Submitted runs: one row per uploaded run file, its status and the queries over many.

The model and its QuerySet are put together from mixins, one per concern: the queue's
conditional updates that make the Celery tasks safe to redeliver (``queueing``: claim,
lease, requeue, fail, the outbox, the sweep), who sees a run and its scores
(``visibility``), and hiding a run and showing it again (``hiding``). Here: the row, the
run-name rules, its stored path, the daily count, and the participant's own changes
(``edit``, ``withdraw``), each checking who may. The status moves ``queued -> running ->
scored | failed`` (``withdrawn`` at any time).

Changing a run is its participant's (``is_submitted_by``); its owners, the participant
and the members of its team, see it as theirs (``visibility``).

Imports ``queueing``, ``visibility`` and ``hiding``, which import nothing of it; the
foreign keys name their targets as strings.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
import unicodedata
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.validators import RegexValidator, URLValidator
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from leaderboard.models.hiding import HidingQuerySet, RunHiding
from leaderboard.models.queueing import QueuedRun, QueueQuerySet
from leaderboard.models.visibility import RunVisibility, VisibilityQuerySet

if TYPE_CHECKING:
    from leaderboard.models.benchmarks import Benchmark
    from leaderboard.models.results import Result

RUN_NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,40}$")
RUN_NAME_RULE = "1 to 40 letters, digits, dots, underscores or hyphens"
run_name_validator = RegexValidator(RUN_NAME_RE, f"Use {RUN_NAME_RULE}.")


# A run's paper and code links: web addresses only (no ftp:, never javascript:).
web_url_validator = URLValidator(schemes=["http", "https"])


def utc_day_start(now: dt.datetime | None = None) -> dt.datetime:
    now = now or timezone.now()
    return now.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)


# The runs whose name no other run of the benchmark may take: all but failed and
# withdrawn ones (the unique constraint's condition, and ``holding_name``'s filter).
NAME_HELD = ~Q(status__in=["failed", "withdrawn"])


class SubmissionQuerySet(VisibilityQuerySet, HidingQuerySet, QueueQuerySet):
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
        finds it not scored and does nothing (``pipeline.tasks``). A run that was holding
        back its benchmark's new judgments version (not yet rescored against it) holds it
        back no longer: the version becomes current if every other run has it, since no
        scoring task of the withdrawn run will."""
        ids = list(self.live().values_list("pk", flat=True))
        Submission.objects.filter(pk__in=ids).live().update(
            status=Submission.Status.WITHDRAWN, withdrawn_at=timezone.now(), lease_until=None
        )
        benchmarks = Submission.benchmark.field.related_model.objects.filter(
            submissions__pk__in=ids
        ).distinct()
        for benchmark in benchmarks:
            latest = benchmark.latest_judgments
            if latest is not None:
                benchmark.promote_judgments_if_complete(latest)
        return ids


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


def parsed_path(instance: Submission, filename: str) -> str:
    """``parsed/<the run file's path under runs/>.arrow``: beside its run, by name."""
    return f"parsed/{instance.file.name.removeprefix('runs/')}.arrow"


class Submission(RunVisibility, RunHiding, QueuedRun, models.Model):
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
    parsed = models.FileField(
        upload_to=parsed_path,
        max_length=320,
        blank=True,
        help_text="The run's lines as the upload check parsed them (Arrow IPC, lz4): "
        "scoring reads these instead of parsing the file again; empty for a run stored "
        "without them, whose file is parsed.",
    )
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

    # --- The participant's operations (the run page and My runs; organizers use the admin) ---

    @property
    def is_withdrawn(self) -> bool:
        return self.status == self.Status.WITHDRAWN

    def is_submitted_by(self, user) -> bool:
        """Whether ``user`` is the run's participant: the one who may change it (edit,
        withdraw, hide and show as its participant). Its teammates see it as they do
        (``has_owner``) but do not change it."""
        return user.is_authenticated and user.pk == self.participant_id

    def _check_participant(self, by) -> None:
        if not self.is_submitted_by(by):
            raise PermissionDenied("Only the participant who submitted a run may change it.")

    def edit(self, by, *, description: str, paper_url: str = "", code_url: str = "") -> None:
        """Change the run's description and links (validated by the caller's form).
        A withdrawn run is kept as it was: ``ValueError``."""
        self._check_participant(by)
        if self.is_withdrawn:
            raise ValueError(f"Run {self.run_name} is withdrawn; it is kept as it was.")
        self.description, self.paper_url, self.code_url = description, paper_url, code_url
        self.save(update_fields=["description", "paper_url", "code_url"])

    def withdraw(self, by) -> bool:
        """Withdraw the run: kept for the record (its page, for its owner and the
        organizers), off every board, export, matrix and significance family, for good.

        It still counts against the day's limit (``counted_today``). Stored comparisons
        stay, unread by any public family; pending work on the run keeps nothing
        (``SubmissionQuerySet.withdraw``), and a new judgments version it was holding
        back is held back no longer. Returns False if it was withdrawn already."""
        self._check_participant(by)
        done = bool(Submission.objects.filter(pk=self.pk).withdraw())
        self.refresh_from_db()
        return done

    def current_result(self) -> Result | None:
        judgments_id = self.benchmark.current_judgments_id
        if judgments_id is None:
            return None
        return self.results.filter(judgments_id=judgments_id).first()
