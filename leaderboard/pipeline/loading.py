"""Loading needs and judgments into a benchmark, and queueing the rescoring it causes.

Used by the admin, the organizers' API and the management commands (``load_benchmark``,
``load_demo``). Files are validated by the engine first; a bad line raises
``TrecFormatError`` (file:line: reason) and nothing is stored; a file store that does not
answer raises ``StorageUnavailable`` and nothing is stored.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, BinaryIO

from django.core.files import File
from django.db import transaction
from django.db.models import F

from evaluation.trec import TrecFormatError, line_of_row, read_needs, read_qrels
from evaluation.trec.need_ids import NEED_ID_LIMIT
from leaderboard.models import Benchmark, InformationNeed, Judgments, Result, Submission
from leaderboard.models.submissions import keep_name
from leaderboard.pipeline.files import (
    StorageUnavailable,
    chunks_of,
    content_sha256_of,
    discard,
    local_copy,
    max_uncompressed_bytes,
    save,
    sha256_of,
)
from leaderboard.pipeline.tasks import health_changed, queue_comparisons, queue_rescore

if TYPE_CHECKING:
    import pandas as pd

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

    An upload of the latest version's judgments (:func:`unchanged`: the same lines, plain
    or gzipped) adds nothing and returns it. The version returned carries ``queued``, how
    many runs this call queued for rescoring (0 for an unchanged upload): not stored, for
    the caller's message.
    """
    qrels = read_qrels(stream, name=name, max_bytes=max_uncompressed_bytes())
    sha256, _ = sha256_of(chunks_of(stream))
    latest = benchmark.latest_judgments
    if unchanged(latest, stream, name, judged=len(qrels), sha256=sha256):
        latest.queued = 0
        return latest
    need_ids, relevant = check_version(
        qrels,
        stream,
        name,
        needs=dict(benchmark.needs.values_list("need_id", "title")),
        private_needs=benchmark.private_needs or [],
        relevance_level=benchmark.relevance_level,
        title=benchmark.title,
    )
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
            judgments.ensure_parts()  # a split benchmark's new version has its parts too
            known = set(benchmark.needs.values_list("need_id", flat=True))
            InformationNeed.objects.bulk_create(
                [
                    InformationNeed(benchmark=benchmark, need_id=n)
                    for n in need_ids
                    if n not in known
                ],
                batch_size=BATCH,
            )
            queued = rescore_benchmark(benchmark)
            benchmark.refresh_from_db()
            benchmark.promote_judgments_if_complete(judgments)
        except BaseException:
            discard(judgments.file.storage, judgments.file.name)  # no orphan file
            raise
    judgments.queued = queued
    return judgments


def unchanged(
    latest: Judgments | None,
    stream: BinaryIO,
    name: str,
    *,
    judged: int,
    sha256: str | None = None,
) -> bool:
    """Whether the upload ``stream`` (``judged`` qrels rows; ``sha256``, its bytes' hash,
    computed when not given) holds the ``latest`` version's judgments: the same lines
    once gunzipped, so the file plain where it was gzipped, or gzipped at another level,
    is no new version (every run would be rescored for nothing).

    The same bytes are told by the stored hash; other bytes with as many rows by hashing
    both contents, the stored file read once more. ``Judgments.sha256`` stays the stored
    file's hash (the workers' cache key names the file), and judgments are uploaded
    rarely enough that a second hash would not earn a column, a migration and a backfill
    reading every stored file. A stored file that is gone, or a store that does not
    answer, is no match: the upload is loaded as a new version (or refused when it
    cannot be stored)."""
    if latest is None:
        return False
    if latest.sha256 == (sha256 or sha256_of(chunks_of(stream))[0]):
        return True
    if latest.num_judged != judged:
        return False
    try:
        with local_copy(latest.file) as path, open(path, "rb") as stored:
            theirs = content_sha256_of(stored, latest.file.name)
    except (FileNotFoundError, StorageUnavailable, TrecFormatError):
        return False
    return content_sha256_of(stream, name) == theirs


def check_version(
    qrels,
    stream: BinaryIO,
    name: str,
    *,
    needs: dict[str, str],
    private_needs,
    relevance_level: int,
    title: str,
) -> tuple[list[str], pd.Series]:
    """Refuse (``TrecFormatError``, naming the file) judgments that are surely not the next
    version of a benchmark titled ``title`` with ``needs`` (need id to title),
    ``private_needs`` and ``relevance_level``: none of its needs judged, a need its needs
    file did not list (at its line; a benchmark without a needs file takes its needs from
    its judgments), no pair relevant (a pool's export before assessing: every score would
    be 0), or a private need of its split left out (its private board would lose it).
    ``load_judgments`` passes the stored benchmark; the admin's form the benchmark as its
    post will leave it, so a refusal is a form error and nothing is saved. Returns the
    judged need ids in strcmp order and which pairs are relevant. ``qrels`` is read from
    ``stream``, read again for the line of a refused row. A need id longer than the
    platform stores (``NEED_ID_LIMIT``) is refused at its line too."""
    relevant = qrels["relevance"] >= relevance_level
    long = (qrels["need_id"].str.len() > NEED_ID_LIMIT).to_numpy()
    if long.any():
        row = int(long.argmax())
        raise TrecFormatError(
            name,
            _line(stream, row),
            f"need id of {len(qrels['need_id'].iloc[row])} characters (at most {NEED_ID_LIMIT})",
        )
    need_ids = strcmp_sorted(qrels["need_id"].unique())
    judged = set(need_ids)
    if needs and judged.isdisjoint(needs):
        known = strcmp_sorted(needs)
        raise TrecFormatError(
            name,
            None,
            f"judges none of the benchmark's {len(known)} needs ({_few(known)}); "
            f"its needs are {_few(need_ids)}",
        )
    listed = {need for need, heading in needs.items() if heading}
    if listed and not judged <= listed:
        row = int((~qrels["need_id"].astype(str).isin(listed)).to_numpy().argmax())
        raise TrecFormatError(
            name,
            _line(stream, row),
            f"need {qrels['need_id'].iloc[row]!r} is not a need of {title} "
            "(load it with the needs first)",
        )
    if not relevant.any():
        raise TrecFormatError(
            name,
            None,
            f"no pair is judged relevant (relevance {relevance_level} or more): every "
            "score would be 0. A pool's export is loaded once its pairs are assessed, with "
            "the earlier judgments",
        )
    missing = [need for need in private_needs if need not in judged]
    if missing:
        raise TrecFormatError(
            name,
            None,
            f"does not judge the private need(s) {_few(missing)} of the benchmark's split: "
            "change the split first to leave them out",
        )
    return need_ids, relevant


def _line(stream: BinaryIO, row: int) -> int:
    """The file line of the qrels' ``row``-th row (blank and comment lines are no rows)."""
    stream.seek(0)
    try:
        return line_of_row(stream, row, max_uncompressed_bytes())
    finally:
        stream.seek(0)


def _few(needs: list[str], shown: int = 5) -> str:
    more = f" and {len(needs) - shown} more" if len(needs) > shown else ""
    return ", ".join(needs[:shown]) + more


def rescore_benchmark(benchmark: Benchmark) -> int:
    """Queue every live run of the benchmark for scoring against its latest judgments."""
    return len(queue_rescore(benchmark.submissions.all()))


# Settings the stored scores depend on: a change rescores every run.
SCORING_SETTINGS = ("interpolation", "relevance_level", "max_depth")
# Settings that choose which pairs are tested: a change queues the missing tests.
TESTED_SETTINGS = ("primary_measure", "significance_measures")


def settings_changed(benchmark: Benchmark, changed: Iterable[str]) -> tuple[int, int]:
    """Queue what a change of the benchmark's settings (field names, as a form's
    ``changed_data``) calls for: every run rescored when a scoring setting changed, else the
    missing tests when the primary or tested measures did; the health recomputed when the
    reveal moved (its statistics cover the hidden phases' runs once revealed, and no
    longer when the reveal is put back). The admin and the API both call it. Returns
    (runs rescored, runs queued for comparison)."""
    changed = set(changed)
    if "reveal_at" in changed:  # which runs the statistics cover moves with the reveal
        health_changed(benchmark)
    if changed & set(SCORING_SETTINGS):
        return rescore_benchmark(benchmark), 0
    if changed & set(TESTED_SETTINGS):
        return queue_measure_tests(benchmark)
    return 0, 0


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
