"""Loading needs and judgments into a benchmark, and queueing the rescoring it causes.

Used by the admin and by the management commands (``load_benchmark``, ``load_demo``). Files are validated by the engine
first; a bad line raises ``TrecFormatError`` (file:line: reason) and nothing is stored;
a file store that does not answer raises ``StorageUnavailable`` and nothing is stored.
"""

from __future__ import annotations

import os
from typing import BinaryIO

from django.core.files import File
from django.db import transaction
from django.db.models import F

from evaluation.trec import read_needs, read_qrels
from leaderboard.models import Benchmark, InformationNeed, Judgments, Result, Submission
from leaderboard.models.submissions import keep_name
from leaderboard.pipeline.files import (
    chunks_of,
    discard,
    max_uncompressed_bytes,
    save,
    sha256_of,
)
from leaderboard.pipeline.tasks import queue_comparisons, queue_rescore

BATCH = 2000


def load_needs(benchmark: Benchmark, stream: BinaryIO, name: str) -> int:
    """Add or update the benchmark's information needs from a TSV or TREC topics file."""
    frame = read_needs(stream, name=name, max_bytes=max_uncompressed_bytes())
    rows = [
        InformationNeed(
            benchmark=benchmark,
            need_id=str(row.need_id),
            title=str(row.title)[:500],
            description=str(getattr(row, "description", "") or ""),
        )
        for row in frame.itertuples(index=False)
    ]
    with transaction.atomic():
        InformationNeed.objects.bulk_create(
            rows,
            batch_size=BATCH,
            update_conflicts=True,
            unique_fields=["benchmark", "need_id"],
            update_fields=["title", "description"],
        )
    return len(rows)


def strcmp_sorted(values) -> list[str]:
    """trec_eval orders needs by strcmp: byte order, not locale or numeric order."""
    return sorted({str(v) for v in values}, key=lambda v: v.encode("utf-8"))


def load_judgments(benchmark: Benchmark, stream: BinaryIO, name: str, note: str = "") -> Judgments:
    """Store a qrels file as the benchmark's next judgments version and queue rescoring.

    An upload identical (same sha256) to the latest version adds nothing and returns it.
    """
    qrels = read_qrels(stream, name=name, max_bytes=max_uncompressed_bytes())
    sha256, _ = sha256_of(chunks_of(stream))
    latest = benchmark.latest_judgments
    if latest is not None and latest.sha256 == sha256:
        return latest
    relevant = qrels["relevance"] >= benchmark.relevance_level
    need_ids = strcmp_sorted(qrels["need_id"].unique())
    with transaction.atomic():
        Benchmark.objects.select_for_update().get(pk=benchmark.pk)
        version = (
            benchmark.judgments.versions()
            .order_by("-version")
            .values_list("version", flat=True)
            .first()
            or 0
        ) + 1
        judgments = Judgments(
            benchmark=benchmark,
            version=version,
            sha256=sha256,
            num_needs=len(need_ids),
            num_judged=len(qrels),
            num_relevant=int(relevant.sum()),
            note=note,
            need_ids=need_ids,
            original_name=keep_name(name),
        )
        stream.seek(0)
        # judgments_path makes the stored name short and safe
        save(judgments.file, os.path.basename(name), File(stream))
        try:
            judgments.save()
            known = set(benchmark.needs.values_list("need_id", flat=True))
            InformationNeed.objects.bulk_create(
                [
                    InformationNeed(benchmark=benchmark, need_id=n)
                    for n in need_ids
                    if n not in known
                ],
                batch_size=BATCH,
            )
            rescore_benchmark(benchmark)
            benchmark.refresh_from_db()
            benchmark.promote_judgments_if_complete(judgments)
        except BaseException:
            discard(judgments.file.storage, judgments.file.name)  # no orphan file
            raise
    return judgments


def rescore_benchmark(benchmark: Benchmark) -> int:
    """Queue every live run of the benchmark for scoring against its latest judgments."""
    return len(queue_rescore(benchmark.submissions.all()))


def queue_measure_tests(benchmark: Benchmark) -> tuple[int, int]:
    """After the primary or tested measures changed: queue the missing comparisons of every
    scored run at once (``compare`` fills the new measure's vectors from the stored
    per-need matrices and tests only the pairs not stored yet). A run scored before the
    measure was stored has no values for it and is rescored instead (its comparisons
    follow). Returns (runs rescored, runs queued for comparison)."""
    tested = benchmark.tested_measures()
    runs = benchmark.submissions.live().filter(status=Submission.Status.SCORED)
    summaries = Result.objects.filter(
        submission__in=runs, judgments_id=F("submission__judgments_id")
    ).values_list("submission_id", "summary")
    lacking = [pk for pk, summary in summaries if any(m not in summary for m in tested)]
    rescored = len(queue_rescore(runs.filter(pk__in=lacking))) if lacking else 0
    compared = queue_comparisons(runs.exclude(pk__in=lacking).only("pk", "status", "judgments_id"))
    return rescored, compared
