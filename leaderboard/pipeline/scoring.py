"""Scoring a run: read its file and the judgments, call the engine, store the result.

``run_scoring`` is what the ``score_submission`` task calls: claim the row, score, store
in one transaction, or fail it with a readable reason. The engine (``evaluation``) does
all the maths; this module only moves data between files, the engine and rows.

While it scores, a ``Heartbeat`` renews the claim's lease, so the sweep can tell a live
task from a dead one; the result is stored only if this task still holds the claim, and
a task that cannot finish gives the run back (``give_back``).
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from django.conf import settings
from django.db import DatabaseError, connections, transaction
from django.utils import timezone

from evaluation.health import JudgedRanks, QrelsIndex
from evaluation.measures import evaluate, relevant_ranks, stored_requests, summarise_needs
from evaluation.trec import TrecFormatError
from evaluation.trec.arrays import to_numpy
from evaluation.trec.columnar import (
    Qrels,
    Run,
    needs_present,
    read_parsed_run,
    read_qrels_columns,
    read_run,
)
from leaderboard.models import Judgments, MeasureVector, PoolRanks, Result, Submission
from leaderboard.pipeline.coverage import coverage_warnings, depth_warnings, lines_per_need
from leaderboard.pipeline.files import local_copy, max_uncompressed_bytes

log = logging.getLogger(__name__)


class MissingJudgments(Exception):
    """The judgments file is not in the file store: the organizers' to fix, not the
    participant's (their run is not at fault, and the store's paths are not theirs)."""


@functools.lru_cache(maxsize=4)
def _qrels_cached(stored_name: str, sha256: str, name: str, max_bytes: int) -> Qrels:
    # Keyed by the file's hash too, so a replaced file is never served stale; a worker
    # fetches a judgments file from the store once, however many runs it scores with it.
    storage = Judgments._meta.get_field("file").storage
    with local_copy((storage, stored_name)) as path:
        return read_qrels_columns(path, name=name, max_bytes=max_bytes)


@functools.lru_cache(maxsize=4)
def _pool_qrels_cached(
    stored_name: str, sha256: str, name: str, max_bytes: int, needs: tuple[str, ...] | None
) -> QrelsIndex:
    qrels = _qrels_cached(stored_name, sha256, name, max_bytes)
    if needs is not None:  # a part: its needs' lines, in file order
        kept = pc.is_in(qrels.need, pa.array(needs, pa.string()))
        qrels = Qrels(
            qrels.need.filter(kept), qrels.doc.filter(kept), qrels.relevance[to_numpy(kept, bool)]
        )
    return QrelsIndex(qrels)


def pool_qrels(judgments: Judgments) -> QrelsIndex:
    """The judgments as pool bias looks runs up in them (cached as :func:`load_qrels`);
    a public or private part's, the lines of its needs only."""
    return _pool_qrels_cached(
        judgments.file.name,
        judgments.sha256,
        display_name(judgments),
        max_uncompressed_bytes(),
        tuple(judgments.need_ids) if judgments.part else None,
    )


def display_name(stored) -> str:
    """The name a participant or organizer gave the file (errors name it so); the stored
    file's own name for rows from before names were kept."""
    return stored.original_name or os.path.basename(stored.file.name)


def read_submission(submission: Submission) -> Run:
    """The run's lines: read from the columns its upload check parsed (stored with it),
    else parsed from its file (a run stored without them, or columns that cannot be
    read: the file then also names a bad line). From the bucket, a temporary copy."""
    name = display_name(submission)
    if submission.parsed:
        try:
            with local_copy(submission.parsed) as path:
                return read_parsed_run(path, name)
        except (TrecFormatError, OSError, pa.ArrowException) as error:
            log.warning("submission %s: parsing its file (%s)", submission.pk, error)
    with local_copy(submission.file) as path:
        return read_run(path, name=name, max_bytes=max_uncompressed_bytes())


def load_qrels(judgments: Judgments) -> Qrels:
    """The judgments as the reader's columns, read once per worker (keyed by the file's
    hash, so a replaced file is never served stale)."""
    return _qrels_cached(
        judgments.file.name, judgments.sha256, display_name(judgments), max_uncompressed_bytes()
    )


def score(submission: Submission, judgments: Judgments) -> Result | None:
    """Score ``submission`` against ``judgments`` (trec_eval -c semantics) and store it.

    Raises ``TrecFormatError`` for a bad run file; nothing is stored then. Returns None,
    storing nothing, when the run was withdrawn or re-queued while it was being scored.
    """
    benchmark = submission.benchmark
    started = time.perf_counter()
    try:
        qrels = load_qrels(judgments)
    except FileNotFoundError as error:
        raise MissingJudgments(
            f"The benchmark's judgments (v{judgments.version}) are missing from the file "
            "store; contact the organizers."
        ) from error
    run = read_submission(submission)  # the reader's columns: evaluate scores them as they are
    read = time.perf_counter()
    run_needs, run_warnings = needs_present(run), run.warnings
    # the engine cuts each need at max_depth without a word: say how many needs it cut
    deep = depth_warnings(lines_per_need(run.need, len(run.needs)), benchmark.max_depth)
    # Handed over, not kept: evaluate lets the run's columns go once it has ordered
    # them, before the measures (the 7M-line run's peak is ~300 MB lower).
    handed_over = [run]
    del run
    # Every measure of the catalog (and the benchmark's own cutoffs): the leaderboard
    # ranks by any of them without rescoring.
    evaluation = evaluate(
        qrels,
        handed_over.pop(),
        stored_requests(benchmark.catalog_measures()),
        relevance_level=benchmark.relevance_level,
        max_depth=benchmark.max_depth,
        complete=True,
        interpolation=benchmark.interpolation,
    )
    per_need = evaluation.per_need
    ranks = relevant_ranks(evaluation.ranking)  # same flags: reuse the ordering
    # pool bias's judged ranks: the ranking's judged lines (past max_depth too), no
    # second lookup of the run in the qrels nor second ordering
    whole_qrels = pool_qrels(judgments)
    judged = JudgedRanks.of(evaluation.ranking, whole_qrels)
    pool_ranks = judged.to_bytes()
    evaluation.ranking = None  # the ordered run (7M rows) is not kept while storing
    per_need = per_need.reindex(judgments.need_ids) if judgments.need_ids else per_need
    num_rel = per_need["num_rel"].astype(np.int64)
    covered = coverage_warnings(display_name(submission), run_needs, list(per_need.index))
    measured = time.perf_counter()
    with transaction.atomic():
        result, _ = Result.objects.update_or_create(
            submission=submission,
            judgments=judgments,
            defaults={
                "summary": {key: float(value) for key, value in evaluation.summary.items()},
                "num_needs": len(per_need),
                "per_need": Result.pack_per_need(per_need),
                "ranks": Result.pack_ranks(ranks, num_rel),
            },
        )
        PoolRanks.objects.update_or_create(result=result, defaults={"data": pool_ranks})
        store_vectors(result, per_need, benchmark)
        store_parts(  # a split's public and private needs
            [
                PartScores(
                    submission, part, per_need, evaluation.summary, ranks, judged, whole_qrels
                )
                for part in judgments.parts.all()
            ]
        )
        # Only while this task still holds the claim: a run re-queued meanwhile (new
        # judgments, or the sweep after our lease ran out) belongs to another task now.
        updated = Submission.objects.filter(
            pk=submission.pk, status=Submission.Status.RUNNING, task_id=submission.task_id
        ).update(
            status=Submission.Status.SCORED,
            finished=timezone.now(),
            judgments=judgments,
            failure_reason="",
            # evaluate() already carries the reader's warnings (tags, header): each once
            warnings=list(dict.fromkeys([*evaluation.warnings, *run_warnings, *covered, *deep])),
            lease_until=None,
        )
        if updated:
            benchmark.promote_judgments_if_complete(judgments)
        else:  # withdrawn, or re-queued while we worked: keep nothing
            transaction.set_rollback(True)
    submission.refresh_from_db()
    log.info(
        "submission %s: read in %.2f s, measures in %.2f s, stored in %.2f s",
        submission.pk, read - started, measured - read, time.perf_counter() - measured,
    )  # fmt: skip
    return result if updated else None


@dataclass
class PartScores:
    """What a public or private ``part``'s result is made of (``store_parts``): the
    ``submission``'s whole version's ``per_need`` rows (needs in the version's order), the
    whole summary's measure names, relevant ``ranks`` (need_id, rank) and judged ranks on
    the version's ``qrels`` (None: none stored, health reads the run then)."""

    submission: Submission
    part: Judgments
    per_need: pd.DataFrame
    summary_names: Iterable[str]
    ranks: pd.DataFrame
    judged: JudgedRanks | None
    qrels: QrelsIndex | None


def store_parts(scores: Iterable[PartScores]) -> list[Result]:
    """Store (or replace) each run's result on its part, in a few queries however many
    there are (a split's task derives every run's parts at once). Each item is packed as
    it comes, so a generator of them holds one run's frames at a time.

    A result is the whole one's rows of the part's needs, its summary averaged over them
    by the engine (``summarise_needs``: what scoring against the part's qrels alone gives,
    bit for bit), the ranks of its needs, its tested measures' vectors, and its pool ranks
    restricted to it (``JudgedRanks.only``)."""
    results, vectors, pools = [], [], []
    for item in scores:
        rows = item.per_need.reindex(item.part.need_ids)
        benchmark = item.submission.benchmark
        summary = summarise_needs(rows, item.summary_names, benchmark.interpolation, complete=True)
        ranks = item.ranks[item.ranks["need_id"].isin(item.part.need_ids)]
        result = Result(
            submission=item.submission,
            judgments=item.part,
            summary={key: float(value) for key, value in summary.items()},
            num_needs=len(rows),
            per_need=Result.pack_per_need(rows),
            ranks=Result.pack_ranks(ranks, rows["num_rel"].astype(np.int64)),
        )
        results.append(result)
        vectors += _vectors(result, rows, benchmark)
        pooled = item.judged is not None and item.qrels is not None
        pools.append(
            item.judged.only(item.qrels, item.part.need_ids).to_bytes() if pooled else None
        )
    if not results:
        return []
    with transaction.atomic():
        Result.objects.bulk_create(
            results,
            update_conflicts=True,
            unique_fields=["submission", "judgments"],
            update_fields=["summary", "num_needs", "per_need", "ranks"],
        )
        PoolRanks.objects.filter(
            result__in=[r.pk for r, data in zip(results, pools, strict=True) if data is None]
        ).delete()
        PoolRanks.objects.bulk_create(
            [
                PoolRanks(result=r, data=data)
                for r, data in zip(results, pools, strict=True)
                if data is not None
            ],
            update_conflicts=True,
            unique_fields=["result"],
            update_fields=["data"],
        )
        MeasureVector.objects.filter(result__in=results).delete()
        MeasureVector.objects.bulk_create(vectors)  # saving takes each result's new id
    return results


def run_scoring(submission_id: int, task_id: str) -> Submission | None:
    """Claim, score and store one submission; a bad file ends ``failed`` with its reason.

    Returns None when there is nothing to do (no such run, or another task holds it). A
    run this very task already scored (a retry or redelivery after the result was stored,
    e.g. when sending its comparisons failed) is returned as it is, so the caller can
    finish the rest of the work.
    """
    submission = Submission.objects.select_related("benchmark").filter(pk=submission_id).first()
    if submission is None:
        return None
    if not submission.claim(task_id):
        done_by_us = submission.status == Submission.Status.SCORED and submission.task_id == task_id
        return submission if done_by_us else None
    judgments = submission.benchmark.latest_judgments
    if judgments is None:
        submission.fail("The benchmark has no relevance judgments yet.", task_id=task_id)
        return submission
    with Heartbeat(submission, task_id):
        try:
            score(submission, judgments)
        except (TrecFormatError, MissingJudgments) as error:
            if isinstance(error, MissingJudgments):
                log.error("scoring submission %s: %s (%s)", submission.pk, error, error.__cause__)
            submission.fail(str(error), task_id=task_id)
        except (OSError, ValueError) as error:
            log.exception("scoring submission %s failed", submission.pk)
            submission.fail(f"{display_name(submission)}: {error}", task_id=task_id)
    return submission


def give_back(submission_id: int, task_id: str, reason: str) -> str:
    """Best effort, for a task ending without a result: the run it holds goes back to
    ``queued`` (unsent, so the outbox sends it again) or, out of attempts, ``failed``
    with ``reason``. If the database is still down this fails too, and the row stays
    ``running``; its lease then runs out and the sweep takes it back once the database
    answers. Returns the new status, or "" if nothing changed."""
    try:
        return Submission.objects.filter(pk=submission_id).release(task_id, reason)
    except DatabaseError:
        log.warning(
            "could not give back submission %s (database error); the sweep takes it back "
            "once its lease runs out",
            submission_id,
            exc_info=True,
        )
        return ""


class Heartbeat:
    """Renew a claimed run's lease every ``LEASE_SECONDS / 3`` while the task works.

    A thread, not renewal points inside scoring: the long steps (reading a 7M-line run,
    ordering it, computing the measures) are single calls into the engine, which knows
    nothing of Django, and into pyarrow, numpy and pandas, which release the GIL for
    their heavy loops, so the thread gets its turn. It runs on its own database
    connection (Django's are per thread), closed when it stops. A renewal that fails
    (the database restarting) is tried again at the next beat; a renewal that finds the
    run no longer held (withdrawn, re-queued) stops renewing. ``lost`` says so; the
    result is not stored then either (``score`` checks the claim in its transaction).
    """

    def __init__(self, submission: Submission, task_id: str) -> None:
        self.submission, self.task_id = submission, task_id
        self.interval = settings.LEASE_SECONDS / 3
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"lease-{submission.pk}", daemon=True
        )

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                try:
                    if not self.submission.renew_lease(self.task_id):
                        self.lost.set()
                        return
                except DatabaseError:
                    log.warning("lease of submission %s not renewed", self.submission.pk)
                    connections.close_all()  # reconnect at the next beat
        finally:
            connections.close_all()  # this thread's connections only


def store_vectors(result: Result, per_need: pd.DataFrame, benchmark) -> None:
    """The per-need vectors of the benchmark's tested measures, what the significance
    tests read (replacing those the result had)."""
    MeasureVector.objects.filter(result=result).delete()
    MeasureVector.objects.bulk_create(_vectors(result, per_need, benchmark))


def _vectors(result: Result, per_need: pd.DataFrame, benchmark) -> list[MeasureVector]:
    return [
        MeasureVector(
            result=result,
            measure=measure,
            values=per_need[measure].to_numpy(dtype=np.float64).tobytes(),
        )
        for measure in benchmark.tested_measures()
        if measure in per_need.columns
    ]
