"""Reading runs and qrels: the file's bytes parsed by Arrow (:mod:`evaluation.trec.parsing`)
into a :class:`Run` or :class:`Qrels` (columns, the frame built when asked for) or a
qrels DataFrame, every bad line named as ``file:line: reason``. Every scoring reads
through these functions; :mod:`evaluation.trec.readers` re-exports them beside the upload
check. pandas is imported only when a frame is built: the command line scores from the
columns and so starts without it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evaluation.trec.arrays import array_values, codes_present, to_numpy
from evaluation.trec.hashing import first_duplicate, string_hash
from evaluation.trec.parsing import _DICT, _QRELS, _RUN, _explain, _parse, _Text, run_header
from evaluation.trec.sources import Source, TrecFormatError, load

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ParsedWriter",
    "Qrels",
    "Run",
    "header_warning",
    "read_parsed_run",
    "read_qrels",
    "read_qrels_columns",
    "read_run",
    "read_run_table",
]


@dataclass
class Run:
    """A parsed run: its lines in file order as columns. The distinct need ids
    (``needs``, Arrow's dictionary order) and each line's index into them (``need``,
    int32), the doc ids (``doc``, Arrow) and their
    :func:`~evaluation.trec.hashing.string_hash` (``doc_hash``), ``score`` and ``rank``
    (float64, the file's rank column, NaN where it is no number; only used to warn),
    the last line's ``tag`` (trec_eval's ``runid``) and the ``warnings`` (a header
    line, several tags). :attr:`frame` is the same lines as a DataFrame, built when
    first asked for.
    """

    needs: list[str]
    need: np.ndarray
    doc: pa.ChunkedArray
    doc_hash: np.ndarray
    score: np.ndarray
    rank: np.ndarray
    tag: str
    warnings: list[str] = field(default_factory=list)

    @cached_property
    def frame(self) -> pd.DataFrame:
        """One row per line, in file order: ``need_id`` (categorical), ``doc_id`` (str),
        ``score`` and ``rank`` (float64)."""
        import pandas as pd

        return pd.DataFrame(
            {
                "need_id": pd.Categorical.from_codes(
                    self.need,
                    categories=pd.Index(self.needs, dtype="str"),
                    validate=False,  # codes of the column's own dictionary
                ),
                "doc_id": pd.Series(self.doc, dtype="str").array,
                "score": self.score,
                "rank": self.rank,
            },
            copy=False,
        )


def needs_present(run: Run) -> list[str]:
    """The need ids with at least one line in ``run`` (in its dictionary's order)."""
    present = codes_present(run.need, len(run.needs)).tolist()
    return [need for need, there in zip(run.needs, present, strict=True) if there]


@dataclass
class Qrels:
    """Parsed qrels: their lines in file order as columns, the need and doc ids (Arrow
    strings) and the relevances (int64). :attr:`frame` is the same lines as
    :func:`read_qrels` gives them, built when first asked for."""

    need: pa.ChunkedArray
    doc: pa.ChunkedArray
    relevance: np.ndarray

    @cached_property
    def frame(self) -> pd.DataFrame:
        """``need_id`` (str), ``doc_id`` (str) and ``relevance`` (int64)."""
        import pandas as pd

        return pd.DataFrame(
            {
                "need_id": pd.Series(self.need, dtype="str").array,
                "doc_id": pd.Series(self.doc, dtype="str").array,
                "relevance": self.relevance,
            }
        )


def read_qrels(
    source: Source, name: str | None = None, max_bytes: int | None = None
) -> pd.DataFrame:
    """Read qrels ``need_id iteration doc_id relevance`` (plain or gzipped).

    Returns a DataFrame with ``need_id`` (str), ``doc_id`` (str) and
    ``relevance`` (int64), in file order: :func:`read_qrels_columns`' frame.

    >>> read_qrels(b"q1 0 d1 1\\nq1 0 d2 0\\n").relevance.tolist()
    [1, 0]
    """
    return read_qrels_columns(source, name, max_bytes).frame


def read_qrels_columns(
    source: Source, name: str | None = None, max_bytes: int | None = None
) -> Qrels:
    """Read qrels ``need_id iteration doc_id relevance`` (plain or gzipped) into
    :class:`Qrels`. Raises :class:`TrecFormatError` for
    an empty or binary file, a line longer than 10,000 characters, a line
    without exactly four fields, a relevance that is not an integer (or not a
    64-bit one), a doc_id judged twice for one need, or content (decompressed)
    over ``max_bytes`` (None: no limit), refused while decompressing.
    """
    data, name = load(source, name, max_bytes)
    table, fast = _parse(data, name, _QRELS)
    text = _Text(data, source, name, fast, max_bytes)
    del data
    column = table.column(3)
    # Arrow's cast reads 0x10 as 16 (trec_eval's atol reads 0: neither is meant) and
    # refuses every other non-integer. Two plain substring searches: a regex over the
    # column costs four times the cast.
    if pa.types.is_string(column.type) and any(
        pc.any(pc.match_substring(column, x)).as_py() for x in ("x", "X")
    ):
        _explain(text.data, name, _QRELS, must_fail=True)
    try:
        relevance = pc.cast(column, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        try:  # Arrow reads no leading '+'; trec_eval's atol does
            unsigned = pc.replace_substring_regex(column, r"^\+", "")
            relevance = pc.cast(unsigned, pa.int64())
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            _explain(text.data, name, _QRELS, must_fail=True)
    need = pc.dictionary_encode(table.column(0)).combine_chunks()
    need_codes = array_values(need.indices)
    duplicate = first_duplicate(need_codes, table.column(2))
    if duplicate is not None:
        first, second = duplicate
        doc, qid = table.column(2)[second].as_py(), table.column(0)[second].as_py()
        raise TrecFormatError(
            name,
            text.line(second),
            f"doc_id {doc!r} judged twice for need {qid!r} (first on line {text.line(first)})",
        )
    return Qrels(table.column(0), table.column(2), to_numpy(relevance, np.int64))


def read_run(source: Source, name: str | None = None, max_bytes: int | None = None) -> Run:
    """Read a run ``need_id Q0 doc_id rank score tag`` (plain or gzipped).

    Fields after the sixth are ignored (as trec_eval does). Raises
    :class:`TrecFormatError` for an empty or binary file, a line longer than
    10,000 characters, fewer than six fields, a score that is not a number or
    not finite, a doc_id twice for one need, or content (decompressed) over
    ``max_bytes`` (None: no limit), refused while decompressing. Warns (``Run.warnings``) when
    the lines carry more than one tag; the run's ``tag`` is the last line's. Line 1 may
    be a header (``qid Q0 docno rank score tag``: a score that is no number, on line 1
    only, see :func:`~evaluation.trec.parsing.run_header`): it is skipped with a warning.

    >>> read_run(b"q1 Q0 d1 1 2.5 bm25\\n").score.tolist()
    [2.5]
    """
    data, name = load(source, name, max_bytes)
    header = run_header(data)
    skip = int(header is not None)
    table, fast = _parse(data, name, _RUN, skip)
    text = _Text(data, source, name, fast, max_bytes, skip)
    del data
    return _run_of(table, text, name, header)


def read_run_table(lines: bytes, name: str) -> tuple[Run, pa.Table]:
    """:func:`read_run` of lines in memory, with the parsed table the run was made from
    (what :class:`ParsedWriter` stores)."""
    header = run_header(lines)
    skip = int(header is not None)
    table, fast = _parse(lines, name, _RUN, skip)
    return _run_of(table, _Text(lines, lines, name, fast, None, skip), name, header), table


def _run_of(
    table: pa.Table, text: _Text | _Unread, name: str, header: str | None, text_ranks: bool = False
) -> Run:
    """The run of a parsed table (its header, if any, already skipped). ``text_ranks``:
    some rank was not a number, so no line's rank is kept (as when the whole file's rank
    column reads as text)."""
    # Each parsed column is let go as soon as it is converted (the table is rebuilt
    # without it): the table (~390 MB for 7M lines of 28-byte ids) and all the numpy
    # columns are never alive at once.
    scores = to_numpy(table.column("c4"), np.float64)
    if not np.isfinite(scores).all():  # names the first nan or inf
        _explain(text.data, name, _RUN, must_fail=True, skip=text.skip)
    table = table.drop_columns(["c4"])
    try:
        if text_ranks:
            raise pa.ArrowInvalid("a rank that is no number")
        rank = to_numpy(pc.cast(table.column("c3"), pa.float64()), np.float64)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        rank = np.full(len(scores), np.nan)
    table = table.drop_columns(["c3"])
    warnings = [] if header is None else [header_warning(name, header)]
    tags = table.column("c5")
    tag = str(tags[len(tags) - 1].as_py())
    # the dictionaries are unified, so one entry means one tag (the usual run)
    distinct = len(tags.chunk(0).dictionary) if tags.num_chunks else 0
    if distinct > 1:
        codes = [array_values(c.indices) for c in tags.chunks]
        distinct = int((np.bincount(np.concatenate(codes)) > 0).sum())
    if distinct > 1:
        warnings.append(
            f"{name}: {distinct} different tags in the run; its runid is the last line's, {tag!r}"
        )
    del tags
    need = table.column("c0")
    need_codes = np.concatenate(
        [np.zeros(0, np.int32)] + [array_values(c.indices) for c in need.chunks]
    )
    dictionary = need.chunk(0).dictionary if need.num_chunks else pa.array([], pa.string())
    docs = table.column("c2")
    del table, need  # the doc ids are all that is left of the parsed table
    doc_hash = string_hash(docs)
    duplicate = first_duplicate(need_codes, docs, doc_hash)
    if duplicate is not None:
        first, second = duplicate
        doc, qid = docs[second].as_py(), dictionary[int(need_codes[second])].as_py()
        raise TrecFormatError(
            name,
            text.line(second),
            f"doc_id {doc!r} twice for need {qid!r} (first on line {text.line(first)})",
        )
    names = [str(need) for need in dictionary.to_pylist()]
    return Run(names, need_codes, docs, doc_hash, scores, rank, tag, warnings)


# The columns a run's parse is stored as (need, doc, rank, score, tag: Q0 is never read).
PARSED_SCHEMA = pa.schema(
    [("c0", _DICT), ("c2", pa.string()), ("c3", pa.float64()), ("c4", pa.float64()), ("c5", _DICT)]
)
_TEXT_RANKS = {"text_ranks": "1"}


class ParsedWriter:
    """A run's parsed tables, piece after piece, written to ``sink`` (a binary file) as
    an Arrow IPC stream, lz4-compressed (~0.3x the size of the file's text): what
    :func:`read_parsed_run` reads back as the run :func:`read_run` gives of the whole
    file, without parsing its text again. ``header``: the file's line 1, when it is a
    header (skipped). A piece whose ranks are not all numbers is stored without them,
    marked so, since one such rank drops every line's (as :func:`read_run` does)."""

    def __init__(self, sink: BinaryIO, header: str | None) -> None:
        schema = PARSED_SCHEMA.with_metadata({"header": header or ""})
        options = pa.ipc.IpcWriteOptions(compression="lz4")
        self._writer = pa.ipc.new_stream(sink, schema, options=options)

    def write(self, table: pa.Table) -> None:
        text_ranks = table.schema.field("c3").type != pa.float64()
        if text_ranks:
            nan = pa.array(np.full(table.num_rows, np.nan))
            table = table.set_column(table.schema.get_field_index("c3"), "c3", nan)
        table = table.select(PARSED_SCHEMA.names)
        for batch in table.to_batches():
            self._writer.write_batch(batch, custom_metadata=_TEXT_RANKS if text_ranks else None)

    def close(self) -> None:
        self._writer.close()


def read_parsed_run(path: str | os.PathLike, name: str) -> Run:
    """The run a :class:`ParsedWriter` stored at ``path``, as :func:`read_run` gives it
    of the file it was parsed from (``name``: that file's, for messages). A bad line
    raises :class:`TrecFormatError` without its number (the columns do not keep the
    text): read the file itself then to name it."""
    batches, text_ranks = [], False
    with pa.OSFile(os.fspath(path), "rb") as stored:
        reader = pa.ipc.open_stream(stored)
        for batch, metadata in reader.iter_batches_with_custom_metadata():
            batches.append(batch)
            text_ranks = text_ranks or bool(metadata and metadata.get(b"text_ranks"))
        schema = reader.schema
    if not batches:
        raise TrecFormatError(name, None, "no content lines in the parsed columns")
    table = pa.Table.from_batches(batches, schema).unify_dictionaries()
    header = (schema.metadata or {}).get(b"header", b"").decode() or None
    return _run_of(table, _Unread(name), name, header, text_ranks)


class _Unread:
    """The stand-in for a run's text when only its parsed columns are at hand."""

    skip = 0

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def data(self) -> bytes:
        raise TrecFormatError(self.name, None, "a bad line (the columns cannot name it)")

    def line(self, row: int) -> int:
        raise TrecFormatError(self.name, None, "a bad line (the columns cannot name it)")


def header_warning(name: str, header: str) -> str:
    """``run.txt: line 1 looks like a header ('qid Q0 docno rank score tag'); skipped``."""
    header = " ".join(header.split())
    shown = header if len(header) <= 80 else header[:77] + "..."
    return f"{name}: line 1 looks like a header ({shown!r}); skipped"
