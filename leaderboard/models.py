"""Benchmarks, their needs and versioned judgments, submitted runs, results and comparisons.

A submission is scored against a judgments version; its ``Result`` for that version
holds the summary of every measure and, as compact arrays, the per-need values and the
ranks of the relevant documents retrieved (enough to redraw every precision-recall
curve without the run file). A benchmark shows the results of its *current* judgments
version; a new version becomes current only once every live run has been rescored
against it, so readers never see a half-rescored leaderboard.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import re
import secrets

import numpy as np
import pandas as pd
from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models, transaction
from django.db.models import F, Q
from django.urls import reverse
from django.utils import timezone

RUN_NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,40}$")
run_name_validator = RegexValidator(
    RUN_NAME_RE, "Use 1 to 40 letters, digits, dots, underscores or hyphens."
)


def utc_day_start(now: dt.datetime | None = None) -> dt.datetime:
    now = now or timezone.now()
    return now.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)


class BenchmarkQuerySet(models.QuerySet):
    def published(self) -> BenchmarkQuerySet:
        return self.filter(published=True)

    def organised_by(self, user) -> BenchmarkQuerySet:
        if user.is_superuser:
            return self
        return self.filter(organizers=user)

    def visible_to(self, user) -> BenchmarkQuerySet:
        if user.is_authenticated and user.is_superuser:
            return self
        if user.is_authenticated:
            return self.filter(Q(published=True) | Q(organizers=user)).distinct()
        return self.published()


class Benchmark(models.Model):
    slug = models.SlugField(max_length=80, unique=True)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    primary_measure = models.CharField(max_length=40, default="map")
    relevance_level = models.IntegerField(
        default=1, help_text="A document is relevant when its judgment is at least this value."
    )
    max_depth = models.PositiveIntegerField(
        default=1000, help_text="Only the first this many documents of each ranking count."
    )
    is_open = models.BooleanField("open for submissions", default=True)
    daily_limit = models.PositiveIntegerField(
        default=10, help_text="Submissions per participant per UTC day (failed ones do not count)."
    )
    organizers = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="organised_benchmarks"
    )
    published = models.BooleanField(default=True)
    current_judgments = models.ForeignKey(
        "Judgments", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)

    objects = BenchmarkQuerySet.as_manager()

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("leaderboard", args=[self.slug])

    def is_organised_by(self, user) -> bool:
        if not user.is_authenticated:
            return False
        return user.is_superuser or self.organizers.filter(pk=user.pk).exists()

    @property
    def latest_judgments(self) -> Judgments | None:
        return self.judgments.order_by("-version").first()

    def rescoring_in_progress(self) -> bool:
        latest = self.latest_judgments
        return latest is not None and latest.pk != self.current_judgments_id

    def promote_judgments_if_complete(self, judgments: Judgments) -> bool:
        """Make ``judgments`` current once every live run has a result against it.

        Failed and withdrawn runs do not hold the switch back. Returns whether it moved.
        """
        if self.current_judgments_id == judgments.pk:
            return False
        pending = (
            self.submissions.live()
            .exclude(status=Submission.Status.FAILED)
            .exclude(results__judgments=judgments)
        )
        if pending.exists():
            return False
        Benchmark.objects.filter(pk=self.pk).update(current_judgments=judgments)
        self.current_judgments = judgments
        return True


class InformationNeed(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="needs")
    need_id = models.CharField(max_length=100)
    title = models.CharField(max_length=500, blank=True)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["benchmark", "need_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "need_id"], name="unique_need_per_benchmark"
            )
        ]

    def __str__(self) -> str:
        return f"{self.need_id}: {self.title}"


def judgments_path(instance: Judgments, filename: str) -> str:
    return f"judgments/{instance.benchmark.slug}/v{instance.version}-{filename}"


class Judgments(models.Model):
    """One uploaded qrels file; every upload is a new version."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="judgments")
    version = models.PositiveIntegerField()
    file = models.FileField(upload_to=judgments_path, max_length=300)
    sha256 = models.CharField(max_length=64)
    num_needs = models.PositiveIntegerField(default=0)
    num_judged = models.PositiveIntegerField(default=0)
    num_relevant = models.PositiveIntegerField(default=0)
    note = models.CharField(max_length=200, blank=True)
    need_ids = models.JSONField(
        default=list, help_text="The judged needs in trec_eval's order; per-need vectors follow it."
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["benchmark", "-version"]
        verbose_name_plural = "judgments"
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "version"], name="unique_judgments_version"
            )
        ]

    def __str__(self) -> str:
        return f"{self.benchmark.slug} judgments v{self.version}"


class SubmissionQuerySet(models.QuerySet):
    def for_benchmark(self, benchmark: Benchmark) -> SubmissionQuerySet:
        return self.filter(benchmark=benchmark)

    def live(self) -> SubmissionQuerySet:
        return self.exclude(status=Submission.Status.WITHDRAWN)

    def scored(self) -> SubmissionQuerySet:
        return self.filter(status=Submission.Status.SCORED)

    def visible_to(self, user) -> SubmissionQuerySet:
        """Hidden and withdrawn runs only for their owner, the organizers and superusers."""
        public = Q(is_hidden=False) & ~Q(status=Submission.Status.WITHDRAWN)
        if not user.is_authenticated:
            return self.filter(public)
        if user.is_superuser:
            return self
        return self.filter(public | Q(participant=user) | Q(benchmark__organizers=user)).distinct()

    def counted_today(self, user) -> int:
        """Submissions that count against the daily limit: this UTC day, not failed."""
        return (
            self.filter(participant=user, created__gte=utc_day_start())
            .exclude(status=Submission.Status.FAILED)
            .count()
        )

    def rescore(self) -> list[int]:
        """Queue these runs (withdrawn ones excepted) for a fresh scoring, attempts reset.

        One UPDATE for all of them; the tasks are sent once the transaction commits.
        Running ones too: a task that started before, say, a new judgments version finds
        its row re-queued when it finishes, keeps nothing, and the new message scores it.
        """
        from leaderboard.tasks import score_submission

        ids = list(self.live().values_list("pk", flat=True))
        Submission.objects.filter(pk__in=ids).update(
            status=Submission.Status.QUEUED,
            queued_at=timezone.now(),
            task_id="",
            attempts=0,
            failure_reason="",
        )
        for pk in ids:
            transaction.on_commit(lambda pk=pk: score_submission.delay(pk))
        return ids

    def stuck(self, older_than: dt.timedelta) -> SubmissionQuerySet:
        cutoff = timezone.now() - older_than
        return self.filter(
            Q(status=Submission.Status.RUNNING, started__lt=cutoff)
            | Q(status=Submission.Status.QUEUED, queued_at__lt=cutoff)
        )


def submission_path(instance: Submission, filename: str) -> str:
    return f"runs/{instance.benchmark.slug}/{instance.run_name}-{filename}"


class Submission(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SCORED = "scored"
        FAILED = "failed"
        WITHDRAWN = "withdrawn"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="submissions")
    participant = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions"
    )
    run_name = models.CharField(max_length=40, validators=[run_name_validator])
    description = models.TextField(blank=True)
    file = models.FileField(upload_to=submission_path, max_length=300)
    size = models.BigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    failure_reason = models.TextField(blank=True)
    warnings = models.JSONField(default=list, blank=True)
    is_baseline = models.BooleanField("baseline", default=False)
    is_hidden = models.BooleanField("hidden", default=False)
    created = models.DateTimeField(default=timezone.now)
    queued_at = models.DateTimeField(default=timezone.now)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    task_id = models.CharField(max_length=64, blank=True)
    judgments = models.ForeignKey(
        Judgments,
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
            models.UniqueConstraint(fields=["benchmark", "run_name"], name="unique_run_name"),
        ]
        indexes = [models.Index(fields=["status", "queued_at"])]

    def __str__(self) -> str:
        return self.run_name

    def get_absolute_url(self) -> str:
        return reverse("submission", args=[self.pk])

    def is_visible_to(self, user) -> bool:
        if not self.is_hidden and self.status != self.Status.WITHDRAWN:
            return True
        if not user.is_authenticated:
            return False
        return user.pk == self.participant_id or self.benchmark.is_organised_by(user)

    def claim(self, task_id: str) -> bool:
        """Move ``queued`` -> ``running`` atomically; False if another task has it.

        A message redelivered after its worker died carries the same task id, so it may
        take back a row left ``running`` by that same task; a different task never can.
        """
        claimable = Q(status=self.Status.QUEUED) | Q(status=self.Status.RUNNING, task_id=task_id)
        won = Submission.objects.filter(claimable, pk=self.pk).update(
            status=self.Status.RUNNING,
            started=timezone.now(),
            task_id=task_id,
            attempts=F("attempts") + 1,
        )
        if won:
            self.refresh_from_db()
        return bool(won)

    def requeue(self) -> None:
        """Back to ``queued`` (the sweep's retry: attempts are kept and counted)."""
        Submission.objects.filter(pk=self.pk).exclude(status=self.Status.WITHDRAWN).update(
            status=self.Status.QUEUED, queued_at=timezone.now(), task_id="", failure_reason=""
        )
        self.refresh_from_db()

    def fail(self, reason: str) -> None:
        Submission.objects.filter(pk=self.pk).exclude(status=self.Status.WITHDRAWN).update(
            status=self.Status.FAILED, failure_reason=reason, finished=timezone.now()
        )
        self.refresh_from_db()

    def enqueue(self) -> None:
        """Queue scoring once the surrounding transaction commits."""
        from leaderboard.tasks import score_submission

        transaction.on_commit(lambda: score_submission.delay(self.pk))

    def current_result(self) -> Result | None:
        judgments_id = self.benchmark.current_judgments_id
        if judgments_id is None:
            return None
        return self.results.filter(judgments_id=judgments_id).first()


class ResultQuerySet(models.QuerySet):
    def on_leaderboard(self, benchmark: Benchmark, user) -> ResultQuerySet:
        """Results of the current judgments for runs the user may see, with their runs."""
        runs = Submission.objects.for_benchmark(benchmark).live().visible_to(user)
        return (
            self.filter(judgments_id=benchmark.current_judgments_id, submission__in=runs)
            .select_related("submission", "submission__participant")
            .defer("per_need", "ranks")
        )


def _pack(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def _unpack(blob: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(bytes(blob)), allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


class Result(models.Model):
    """Scores of one submission against one judgments version.

    ``per_need`` is a compressed float64 matrix (needs x measures) with its need ids and
    measure names; one blob per run keeps a 7,000-need, 1,000-run benchmark at a thousand
    rows instead of millions, and a comparison reads just two rows. ``ranks`` holds the
    ranks of the relevant documents retrieved per need, for the precision-recall plots.
    """

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="results")
    judgments = models.ForeignKey(Judgments, on_delete=models.CASCADE, related_name="results")
    summary = models.JSONField(default=dict)
    num_needs = models.PositiveIntegerField(default=0)
    per_need = models.BinaryField()
    ranks = models.BinaryField()
    created = models.DateTimeField(auto_now_add=True)

    objects = ResultQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["submission", "judgments"], name="unique_result")
        ]

    def __str__(self) -> str:
        return f"{self.submission} on {self.judgments}"

    @staticmethod
    def pack_per_need(frame: pd.DataFrame) -> bytes:
        return _pack(
            {
                "needs": np.asarray(frame.index.astype(str), dtype=str),
                "measures": np.asarray(frame.columns.astype(str), dtype=str),
                "values": frame.to_numpy(dtype=np.float64),
            }
        )

    @staticmethod
    def pack_ranks(ranks: pd.DataFrame, num_rel: pd.Series) -> bytes:
        """``ranks``: need_id, rank of each relevant retrieved document; ``num_rel``: R per need."""
        return _pack(
            {
                "needs": np.asarray(num_rel.index.astype(str), dtype=str),
                "num_rel": num_rel.to_numpy(dtype=np.int64),
                "rank_needs": np.asarray(ranks["need_id"].astype(str), dtype=str),
                "ranks": ranks["rank"].to_numpy(dtype=np.int64),
            }
        )

    def per_need_frame(self) -> pd.DataFrame:
        data = _unpack(self.per_need)
        return pd.DataFrame(
            data["values"], index=pd.Index(data["needs"], name="need_id"), columns=data["measures"]
        )

    def relevant_ranks(self) -> tuple[dict[str, np.ndarray], dict[str, int]]:
        """Per need: the ranks of relevant retrieved documents, and R."""
        data = _unpack(self.ranks)
        num_rel = dict(zip(data["needs"].tolist(), data["num_rel"].tolist(), strict=True))
        ranks = {need: np.empty(0, dtype=np.int64) for need in num_rel}
        if len(data["ranks"]):
            frame = pd.DataFrame({"need": data["rank_needs"], "rank": data["ranks"]})
            for need, group in frame.groupby("need", sort=False):
                ranks[str(need)] = np.sort(group["rank"].to_numpy())
        return ranks, num_rel


class MeasureVector(models.Model):
    """One measure's per-need values of one result, float64 in ``judgments.need_ids`` order.

    Kept beside the full ``Result.per_need`` blob for the measures significance tests use
    (the primary measure and map): comparing a new run with 300 others then reads 300
    small vectors (56 KB at 7,000 needs) instead of 300 full matrices.
    """

    result = models.ForeignKey(Result, on_delete=models.CASCADE, related_name="vectors")
    measure = models.CharField(max_length=40)
    values = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["result", "measure"], name="unique_measure_vector")
        ]

    def array(self) -> np.ndarray:
        return np.frombuffer(bytes(self.values), dtype=np.float64)


class ComparisonQuerySet(models.QuerySet):
    def between(self, a: Submission, b: Submission) -> ComparisonQuerySet:
        low, high = sorted([a.pk, b.pk])
        return self.filter(submission_a_id=low, submission_b_id=high)


class Comparison(models.Model):
    """Raw per-pair test results (engine's ``compare_pair``); corrections are applied when
    a page asks a family of questions, because the family grows with every new run.

    Stored with ``submission_a.pk < submission_b.pk``; differences are a - b.
    """

    submission_a = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="+")
    submission_b = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="+")
    judgments = models.ForeignKey(Judgments, on_delete=models.CASCADE, related_name="comparisons")
    measure = models.CharField(max_length=40)
    n = models.PositiveIntegerField()
    mean_diff = models.FloatField()
    ci_low = models.FloatField(null=True)
    ci_high = models.FloatField(null=True)
    effect_size = models.FloatField(null=True)
    wins = models.PositiveIntegerField()
    ties = models.PositiveIntegerField()
    losses = models.PositiveIntegerField()
    t_statistic = models.FloatField(null=True)
    t_p = models.FloatField()
    wilcoxon_statistic = models.FloatField(null=True)
    wilcoxon_p = models.FloatField()
    randomization_p = models.FloatField()
    permutations = models.PositiveIntegerField(default=10_000)
    created = models.DateTimeField(auto_now_add=True)

    objects = ComparisonQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["submission_a", "submission_b", "measure", "judgments"],
                name="unique_comparison",
            ),
            models.CheckConstraint(
                condition=Q(submission_a__lt=F("submission_b")), name="comparison_ordered"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.submission_a} vs {self.submission_b} ({self.measure})"


class ApiToken(models.Model):
    """A bearer token for the JSON API (``Authorization: Bearer <token>``).

    Only the SHA-256 of the token is stored: a leaked database does not leak working
    tokens, and a token is shown to its owner once, when it is issued. SHA-256 without a
    salt suffices because the token is 256 random bits, not a guessable password.
    """

    PREFIX = "rrl_"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    sha256 = models.CharField("SHA-256 of the token", max_length=64, unique=True)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.user} / {self.name}"

    @staticmethod
    def digest(raw: str) -> str:
        return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()

    @classmethod
    def issue(cls, user, name: str) -> tuple[ApiToken, str]:
        """Create a token for ``user``; returns the row and the raw token, the only copy."""
        raw = cls.PREFIX + secrets.token_urlsafe(32)
        return cls.objects.create(user=user, name=name, sha256=cls.digest(raw)), raw

    @classmethod
    def authenticate(cls, raw: str):
        """The active user the raw token belongs to, or None; notes when it was used.

        ``last_used`` is written at most once a minute so that polling is not a write per
        request.
        """
        token = (
            cls.objects.select_related("user")
            .filter(sha256=cls.digest(raw), user__is_active=True)
            .first()
        )
        if token is None:
            return None
        now = timezone.now()
        if token.last_used is None or now - token.last_used > dt.timedelta(minutes=1):
            cls.objects.filter(pk=token.pk).update(last_used=now)
        return token.user
