"""A benchmark from an ir_datasets id: its queries as needs, its qrels as judgments.

Read through ir_datasets' own API (``ir_datasets.load(id)``, ``queries_iter()``,
``qrels_iter()``; it downloads into its cache, ``IR_DATASETS_HOME``, on first use), then
written as the files an organizer would upload (a TSV of needs, a TREC qrels file) and
stored by :mod:`leaderboard.pipeline.loading`, so a dataset's needs and judgments are
checked, versioned and rescored exactly like uploaded ones.

A need's title is the query's ``text`` field, else its ``title``, else its first text
field; a ``description`` field, where the query has one, is its description. Used by the
``load_benchmark --ir-datasets`` command and the benchmark form in the admin.
"""

from __future__ import annotations

import io
import typing
from dataclasses import dataclass

from leaderboard.models import Benchmark, Judgments
from leaderboard.pipeline.loading import load_judgments, load_needs
from rrl.trec import qrels_text

TITLE_FIELDS = ("text", "title")


class DatasetError(ValueError):
    """An id ir_datasets does not know, a dataset without queries or qrels, or one that
    could not be read (a failed download); the message says which."""


@dataclass(frozen=True)
class DatasetFiles:
    """A dataset's needs (TSV ``need_id<TAB>title<TAB>description``) and qrels (TREC)."""

    dataset_id: str
    needs: bytes
    qrels: bytes
    title_field: str

    @property
    def needs_name(self) -> str:
        return f"{self.dataset_id.replace('/', '-')}-queries.tsv"

    @property
    def qrels_name(self) -> str:
        return f"{self.dataset_id.replace('/', '-')}-qrels.txt"


def _one_line(text: object) -> str:
    return " ".join(str(text or "").split())


def title_field(query_cls: type) -> str:
    """The query field a need's title comes from: ``text``, else ``title``, else the
    first field (after ``query_id``) declared as ``str``, else the first one."""
    fields = [name for name in getattr(query_cls, "_fields", ()) if name != "query_id"]
    for name in TITLE_FIELDS:
        if name in fields:
            return name
    try:
        declared = typing.get_type_hints(query_cls)
    except Exception:  # an annotation that names what cannot be imported: no types then
        declared = {}
    for name in fields:
        if declared.get(name) is str:
            return name
    if not fields:
        raise DatasetError(f"its queries ({query_cls.__name__}) have no field besides query_id")
    return fields[0]


def dataset_files(dataset_id: str) -> DatasetFiles:
    """Read ``dataset_id``'s queries and qrels through ir_datasets. Raises
    :class:`DatasetError` with a message fit for an organizer."""
    import ir_datasets  # a few hundred ms, and only organizers need it

    dataset_id = dataset_id.strip()
    try:
        dataset = ir_datasets.load(dataset_id)
    except KeyError:
        raise DatasetError(
            f"ir_datasets has no dataset {dataset_id!r} (the ids are listed at "
            "ir-datasets.com, e.g. msmarco-passage/trec-dl-2019/judged)"
        ) from None
    lacking = [part for part in ("queries", "qrels") if not getattr(dataset, f"has_{part}", bool)()]
    if lacking:
        raise DatasetError(
            f"ir_datasets' {dataset_id!r} has no {' and no '.join(lacking)}: "
            "a benchmark needs both (pick a sub-dataset that has them, e.g. …/judged)"
        )
    field = title_field(dataset.queries_cls())
    try:
        lines = []
        for query in dataset.queries_iter():
            title = _one_line(getattr(query, field, "")) or _one_line(query.query_id)
            description = _one_line(getattr(query, "description", ""))
            lines.append(f"{_one_line(query.query_id)}\t{title}\t{description}\n")
        qrels = qrels_text(dataset.qrels_iter()).encode("utf-8")
    except (ValueError, TypeError) as error:  # rrl.trec's checks of the qrels
        raise DatasetError(f"ir_datasets' {dataset_id!r}: {error}") from error
    except Exception as error:  # a download or a parse inside ir_datasets failed
        raise DatasetError(
            f"ir_datasets could not read {dataset_id!r}: {type(error).__name__}: {str(error)[:300]}"
        ) from error
    if not lines:
        raise DatasetError(f"ir_datasets' {dataset_id!r} has no queries")
    return DatasetFiles(dataset_id, "".join(lines).encode("utf-8"), qrels, field)


def load_dataset(benchmark: Benchmark, files: DatasetFiles) -> tuple[int, Judgments]:
    """Store the dataset's needs and its qrels (the next judgments version, rescoring
    queued) in ``benchmark``; returns the number of needs and the judgments."""
    count = load_needs(benchmark, io.BytesIO(files.needs), files.needs_name)
    judgments = load_judgments(
        benchmark,
        io.BytesIO(files.qrels),
        files.qrels_name,
        note=f"ir_datasets {files.dataset_id}",
    )
    return count, judgments
