"""Pools as the organizer's page and the organizer API read them: one payload.

A pool's statistics are computed once, when it is built (``pipeline.pooling``), and
stored as JSON; these functions only find a pool and choose what to show.
"""

from __future__ import annotations

from django.http import Http404
from django.urls import reverse

from leaderboard.models import Benchmark, Pool


def benchmark_pool(benchmark: Benchmark, pk: int) -> Pool:
    pool = benchmark.pools.select_related("phase", "judgments").filter(pk=pk).first()
    if pool is None:
        raise Http404("No such pool.")
    return pool


def pool_payload(pool: Pool) -> dict:
    """What the page and the API show of a pool (``stats``: empty until it is built)."""
    slug = pool.benchmark.slug
    built = pool.status == Pool.Status.BUILT
    return {
        "id": pool.pk,
        "benchmark": slug,
        "phase": pool.phase.name if pool.phase else None,
        "depth": pool.depth,
        "runs_per_team": pool.runs_per_team,
        "seed": pool.seed,
        "status": pool.status,
        "failure_reason": pool.failure_reason,
        "created": pool.created,
        "finished": pool.finished,
        "judgments_version": pool.judgments.version if pool.judgments else None,
        "stats": pool.stats,
        "export": reverse("pool_export", args=[slug, pool.pk]) if built else None,
    }
