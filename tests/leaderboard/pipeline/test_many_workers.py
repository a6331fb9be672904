"""Three real worker processes, 60 runs stored at once: each run scored exactly once (one
claim, one attempt, one result, one 'succeeded' log line), none left queued or running,
every pair of runs compared once. The waits are bounded only against a hang; the
throughput is measured by ``bench/bench_workers.py``."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.files.base import ContentFile
from django.db import transaction

from leaderboard.models import Comparison, Result, Submission
from leaderboard.pipeline.tasks import queue_scoring
from tests.leaderboard.workers import (
    ROOT,
    Worker,
    scored_lines,
    wait_for,
)

RUNS = 60
WORKERS = 3


def _runs(count: int) -> list[bytes]:
    """``count`` different runs: the demo's run B with seeded random scores."""
    lines = (ROOT / "leaderboard" / "demo" / "run-B.txt").read_text().splitlines()
    rng = np.random.default_rng(15)
    runs = []
    for i in range(count):
        scores = rng.random(len(lines)) * 100
        runs.append(
            "".join(
                " ".join([*line.split()[:4], f"{score:.4f}", f"sys-{i}"]) + "\n"
                for line, score in zip(lines, scores, strict=True)
            ).encode()
        )
    return runs


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_three_workers_score_sixty_runs_submitted_at_once_each_exactly_once(
    queue, library, participant, settings, tmp_path
):
    workers = [
        Worker(
            queue,
            settings.MEDIA_ROOT,
            tmp_path / f"worker{i}.log",
            extra_args=[f"--hostname=many{i}@%h"],
        )
        for i in range(WORKERS)
    ]
    try:
        for worker in workers:
            worker.wait_ready()
        with transaction.atomic():  # stored together; the 60 messages leave on commit
            for i, content in enumerate(_runs(RUNS)):
                submission = Submission(benchmark=library, participant=participant)
                submission.run_name = f"run-{i:02d}"
                submission.file.save(f"run-{i:02d}.txt", ContentFile(content), save=False)
                submission.save()
                queue_scoring(submission)
        runs = Submission.objects.filter(benchmark=library)

        def all_scored() -> bool:
            return runs.filter(status="scored").count() == RUNS or runs.filter(status="failed")

        wait_for(all_scored, timeout=300, interval=0.2, what="60 runs to be scored")
        pairs = RUNS * (RUNS - 1) // 2 * len(library.tested_measures())
        wait_for(
            lambda: Comparison.objects.filter(judgments=library.current_judgments).count() >= pairs,
            timeout=300,
            interval=0.2,
            what="every pair to be compared",
        )
        # Each worker logs its last success a moment after storing it.
        wait_for(lambda: len(scored_lines(*workers)) >= RUNS, timeout=30, what="the logs")
    finally:
        for worker in workers:
            worker.stop()

    rows = list(runs.values_list("status", "attempts", "lease_until", "task_id"))
    assert [row[0] for row in rows] == ["scored"] * RUNS, runs.filter(status="failed").first()
    assert {row[1] for row in rows} == {1}, "a run was claimed more than once"
    assert all(row[2] is None for row in rows), "a lease was left behind"
    assert len({row[3] for row in rows}) == RUNS, "one task per run"
    assert Result.objects.filter(submission__benchmark=library).count() == RUNS
    assert sorted(
        Result.objects.filter(submission__benchmark=library).values_list("submission_id", flat=True)
    ) == sorted(runs.values_list("pk", flat=True))
    lines = scored_lines(*workers)
    assert len(lines) == RUNS, "a scoring task succeeded twice"
    per_worker = [len(scored_lines(worker)) for worker in workers]
    assert all(count > 0 for count in per_worker), f"a worker scored nothing: {per_worker}"
    # Every pair exactly once (the unique constraint holds "at most"; the count "at least").
    assert Comparison.objects.filter(judgments=library.current_judgments).count() == pairs
