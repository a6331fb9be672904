"""A pool built for assessors: which runs went in, how deep, its statistics and export.

An organizer asks for a pool of a phase's final runs (``leaderboard.models.finals``) to
a ``depth`` from the top ``runs_per_team`` of each team; a Celery task builds it with
the engine (:mod:`evaluation.pooling`) and stores the statistics (``stats``) and the
assessors' file (``file``: the pairs not judged in ``judgments``, the benchmark's
latest version when it was built, per need in the order ``seed`` draws). The status
moves ``queued -> running -> built | failed``; ``claim`` makes the task safe to
redeliver. The seed is drawn when the row is made and kept, so the same pool exports
the same file again.

Imports nothing else of ``models``.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

MAX_DEPTH = 10_000
MAX_RUNS_PER_TEAM = 100


def new_seed() -> int:
    return secrets.randbits(31)


def pool_path(instance: Pool, filename: str) -> str:
    return f"pools/{instance.benchmark.slug}/pool-{instance.pk}-{filename}"


class Pool(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        BUILT = "built"
        FAILED = "failed"

    benchmark = models.ForeignKey(
        "leaderboard.Benchmark", on_delete=models.CASCADE, related_name="pools"
    )
    phase = models.ForeignKey(
        "leaderboard.Phase",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="pools",
        help_text="Whose final runs are pooled (none: the runs outside any phase).",
    )
    depth = models.PositiveIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(MAX_DEPTH)],
        help_text="The top this many documents of each pooled run, per need.",
    )
    runs_per_team = models.PositiveIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(MAX_RUNS_PER_TEAM)],
        help_text="The top this many final runs of each team, by priority.",
    )
    seed = models.BigIntegerField(
        default=new_seed, help_text="Draws the export's order within each need."
    )
    created = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    failure_reason = models.TextField(blank=True)
    task_id = models.CharField(max_length=64, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    judgments = models.ForeignKey(
        "leaderboard.Judgments",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The judgments whose judged pairs the export leaves out.",
    )
    stats = models.JSONField(default=dict, blank=True)
    file = models.FileField(upload_to=pool_path, max_length=300, blank=True)

    class Meta:
        ordering = ["-created", "-pk"]

    def __str__(self) -> str:
        return f"{self.benchmark.slug} pool {self.pk} (depth {self.depth}, {self.runs_per_team})"

    def claim(self, task_id: str) -> bool:
        """Take a queued pool (or one a redelivered task ``task_id`` already held)."""
        held = models.Q(status=self.Status.QUEUED) | models.Q(
            status=self.Status.RUNNING, task_id=task_id
        )
        return bool(
            Pool.objects.filter(held, pk=self.pk).update(
                status=self.Status.RUNNING, task_id=task_id
            )
        )

    def export_name(self) -> str:
        return f"{self.benchmark.slug}-pool-{self.pk}.qrels"
