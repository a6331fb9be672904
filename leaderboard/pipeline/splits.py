"""The public and private parts' results: derived from a run's result on the whole version.

``scoring.store_part`` makes a part's ``Result`` from the whole result's per-need rows
(see there); ``scoring.score`` stores the parts with the whole result in one
transaction. When a split is set or changed on a benchmark whose runs are scored,
``derive_parts`` (the ``split_results`` task) builds the missing ones from the stored
whole results, reading no run file, and the task queues their comparisons (which queue
their health).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from django.db import transaction

from evaluation.health import JudgedRanks
from leaderboard.models import Benchmark, Judgments, PoolRanks, Result
from leaderboard.pipeline.scoring import pool_qrels, store_part


def _stored_ranks(result: Result) -> pd.DataFrame:
    ranks, _ = result.relevant_ranks()
    needs = [need for need, found in ranks.items() for _ in range(len(found))]
    values = np.concatenate(list(ranks.values())) if ranks else np.zeros(0, np.int64)
    return pd.DataFrame({"need_id": pd.Series(needs, dtype="str"), "rank": values})


def derive_parts(benchmark_id: int) -> list[tuple[int, int]]:
    """Store every missing part result of the benchmark's scored runs, each from its
    stored whole result (no run file read; the judgments file once per version, for the
    pool ranks). Returns the (run, part) pairs stored, for their comparisons."""
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        return []
    stored = []
    parts = Judgments.objects.filter(benchmark=benchmark, parent__isnull=False)
    for version in Judgments.objects.versions().filter(pk__in=parts.values("parent_id")):
        version_parts = list(version.parts.all())
        qrels = None
        wholes = (
            Result.objects.filter(judgments=version, submission__benchmark=benchmark)
            .select_related("submission__benchmark")
            .order_by("submission_id")
        )
        for whole in wholes.iterator(chunk_size=50):
            missing = [
                p
                for p in version_parts
                if not p.results.filter(submission_id=whole.submission_id).exists()
            ]
            if not missing:
                continue
            per_need = whole.per_need_frame()
            ranks = _stored_ranks(whole)
            blob = PoolRanks.objects.filter(result=whole).values_list("data", flat=True).first()
            judged = None
            if blob is not None:
                qrels = qrels or pool_qrels(version)
                try:
                    judged = JudgedRanks.from_bytes(bytes(blob), qrels)
                except ValueError:  # of other qrels: health reads the run for the part
                    judged = None
            with transaction.atomic():
                for part in missing:
                    store_part(
                        whole.submission, part, per_need, whole.summary, ranks, judged, qrels
                    )
                    stored.append((whole.submission_id, part.pk))
    return stored
