"""A benchmark's health, computed in the background and stored per judgments version.

``BenchmarkHealth`` holds what :func:`evaluation.health.benchmark_health` returned for
one benchmark and one judgments version (the MDD, topic set sizes, discriminative power
and ASL curve, tau per measure) plus the pool-bias table, as JSON, and when it was
computed. Pages only read it: it is never computed on a request.

Debouncing: each request to recompute bumps ``requested`` in one UPDATE and sends the
task with that number; a task whose number is no longer the row's skips, since a newer
one is queued behind it. So a batch of sixty scored runs computes the health once,
a few seconds after the last.
"""

from __future__ import annotations

import datetime as dt

from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from leaderboard.models.submissions import Submission

__all__ = ["BenchmarkHealth", "PoolRanks"]


class HealthQuerySet(models.QuerySet):
    def computed_before_reveal(self, now: dt.datetime | None = None) -> HealthQuerySet:
        """Health of the current judgments (or one of their parts) of a benchmark revealed
        since it was computed, when it has a phase whose board was not public: that
        phase's runs were left out of the statistics until the reveal."""
        return self.filter(
            Q(judgments_id=F("benchmark__current_judgments_id"))
            | Q(judgments__parent_id=F("benchmark__current_judgments_id")),
            computed_at__lt=F("benchmark__reveal_at"),
            benchmark__reveal_at__lte=now or timezone.now(),
            benchmark__phases__board__in=["owners", "hidden"],
        ).distinct()


class BenchmarkHealth(models.Model):
    benchmark = models.ForeignKey(
        "leaderboard.Benchmark", on_delete=models.CASCADE, related_name="health"
    )
    judgments = models.ForeignKey(
        "leaderboard.Judgments", on_delete=models.CASCADE, related_name="health"
    )
    #: bumped by each request to recompute; a task computes only for the latest
    requested = models.PositiveIntegerField(default=0)
    data = models.JSONField(default=dict)
    computed_at = models.DateTimeField(null=True, blank=True)

    objects = HealthQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "judgments"], name="unique_health")
        ]
        verbose_name_plural = "benchmark health"

    def __str__(self) -> str:
        return f"health of {self.benchmark} on {self.judgments}"

    @classmethod
    def request(cls, benchmark_id: int, judgments_id: int) -> int:
        """Ask for a recomputation; returns the number the task must still hold to run."""
        row, _ = cls.objects.get_or_create(benchmark_id=benchmark_id, judgments_id=judgments_id)
        cls.objects.filter(pk=row.pk).update(requested=F("requested") + 1)
        return cls.objects.values_list("requested", flat=True).get(pk=row.pk)

    @classmethod
    def is_latest_request(cls, benchmark_id: int, judgments_id: int, number: int) -> bool:
        return cls.objects.filter(
            benchmark_id=benchmark_id, judgments_id=judgments_id, requested=number
        ).exists()

    def computed_before_reveal(self) -> bool:
        """Whether the statistics leave out the runs the reveal has since shown (the sweep
        queues their recomputation: ``HealthQuerySet.computed_before_reveal``)."""
        return type(self).objects.computed_before_reveal().filter(pk=self.pk).exists()

    def pool_bias_for(self, user) -> dict | None:
        """The stored pool-bias section with only the runs ``user`` may see now: a run
        hidden or withdrawn since the health was computed is neither named nor linked,
        before the recomputation its change queued has run."""
        pool = self.data.get("pool_bias")
        if not pool or not pool.get("runs"):
            return pool
        ids = [row["id"] for row in pool["runs"]]
        seen = set(
            Submission.objects.filter(pk__in=ids, benchmark_id=self.benchmark_id)
            .live()
            .scores_visible_to(user)
            .values_list("pk", flat=True)
        )
        return {**pool, "runs": [row for row in pool["runs"] if row["id"] in seen]}

    def measure(self, name: str) -> dict | None:
        return (self.data.get("measures") or {}).get(name)

    def mdd_line(self, measure: str, label: str) -> str | None:
        """The leaderboard's one line: 'With 50 needs, AP differences below 0.031 ...'."""
        stats = self.measure(measure)
        if not stats or stats.get("mdd") is None:
            return None
        needs = self.data.get("needs", 0)
        power = self.data.get("power", 0.8)
        return (
            f"With {needs} need{'s' if needs != 1 else ''}, {label} differences below "
            f"{stats['mdd']:.3f} are unlikely to be detected at {power:.0%} power."
        )


class PoolRanks(models.Model):
    """One result's judged documents and their ranks, what pool bias reads of a run."""

    result = models.OneToOneField(
        "leaderboard.Result", on_delete=models.CASCADE, related_name="pool_ranks"
    )
    #: :meth:`evaluation.health.JudgedRanks.to_bytes`: int32 arrays, 8 bytes a
    #: judged document retrieved plus 4 a need
    data = models.BinaryField()

    class Meta:
        verbose_name_plural = "pool ranks"

    def __str__(self) -> str:
        return f"pool ranks of result {self.result_id}"
