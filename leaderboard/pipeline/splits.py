"""The public and private parts' results: derived from a run's result on the whole version.

``scoring.store_parts`` makes the parts' ``Result`` rows from the whole results' per-need
rows (see there); ``scoring.score`` stores the parts with the whole result in one
transaction. When a split is set or changed on a benchmark whose runs are scored,
``derive_parts`` (the ``split_results`` task) builds the missing ones from the stored
whole results, reading no run file, and the task queues their comparisons (which queue
their health).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evaluation.health import JudgedRanks
from leaderboard.models import Benchmark, Judgments, Result
from leaderboard.pipeline.scoring import PartScores, pool_qrels, store_parts


def _stored_ranks(result: Result) -> pd.DataFrame:
    ranks, _ = result.relevant_ranks()
    needs = [need for need, found in ranks.items() for _ in range(len(found))]
    values = np.concatenate(list(ranks.values())) if ranks else np.zeros(0, np.int64)
    return pd.DataFrame({"need_id": pd.Series(needs, dtype="str"), "rank": values})


# Runs whose parts are derived together: a few queries a batch; their whole results'
# rows are held meanwhile (a few MB each on thousands of needs).
BATCH = 50


def derive_parts(benchmark_id: int) -> list[tuple[int, int]]:
    """Store every missing part result of the benchmark's scored runs, each from its
    stored whole result (no run file read; the judgments file once per version, for the
    pool ranks), in a few queries per version and per ``BATCH`` runs, however many parts.
    Returns the (run, part) pairs stored, for their comparisons."""
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        return []
    parts: dict[int, list[Judgments]] = {}
    for part in Judgments.objects.filter(benchmark=benchmark, parent__isnull=False):
        parts.setdefault(part.parent_id, []).append(part)
    versions = Judgments.objects.in_bulk(list(parts))
    done = Result.objects.filter(judgments__parent__in=list(parts))
    have = set(done.values_list("submission_id", "judgments_id"))
    stored = []
    for version_id, version_parts in parts.items():
        wholes = Result.objects.filter(
            judgments_id=version_id, submission__benchmark=benchmark
        ).order_by("submission_id")
        lacking = {}
        for pk, run in wholes.values_list("pk", "submission_id"):
            if missing := [p for p in version_parts if (run, p.pk) not in have]:
                lacking[pk] = missing
        order, qrels = list(lacking), None
        for start in range(0, len(order), BATCH):
            batch = wholes.filter(pk__in=order[start : start + BATCH]).select_related(
                "submission__benchmark", "pool_ranks"
            )
            if qrels is None and any(hasattr(whole, "pool_ranks") for whole in batch):
                qrels = pool_qrels(versions[version_id])
            # one run's frames at a time: store_parts packs each item as it comes
            results = store_parts(
                item for whole in batch for item in _part_scores(whole, lacking[whole.pk], qrels)
            )
            stored += [(result.submission_id, result.judgments_id) for result in results]
    return stored


def _part_scores(whole: Result, parts: list[Judgments], qrels) -> list[PartScores]:
    """What ``store_parts`` needs to store ``parts``' results from the ``whole`` result,
    its pool ranks read on the version's ``qrels``."""
    judged = None
    pool = getattr(whole, "pool_ranks", None)
    if pool is not None:
        try:
            judged = JudgedRanks.from_bytes(bytes(pool.data), qrels)
        except ValueError:  # of other qrels: health reads the run for the part
            judged = None
    per_need, ranks = whole.per_need_frame(), _stored_ranks(whole)
    return [
        PartScores(whole.submission, part, per_need, whole.summary, ranks, judged, qrels)
        for part in parts
    ]
