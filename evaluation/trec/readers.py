"""Read TREC files: qrels (judgments) and runs, plain or gzipped.

The hot path never loops over lines in Python: the bytes go to ``pyarrow.csv``
with one delimiter; only when that is not enough (several blanks between
fields as in trec_eval's own ``results.test``, tabs mixed with spaces, comment
lines, junk after the sixth run column) are the bytes normalised first, still
vectorised with numpy. Line-by-line Python code runs only to *explain* a file
that failed, so every error names ``file:line: reason``.

Formats (as trec_eval reads them):

- qrels: ``need_id iteration doc_id relevance``; exactly four fields; the
  relevance an integer (negative means "in the pool but unjudged").
- run: ``need_id Q0 doc_id rank score tag``; fields after the sixth are
  ignored; the rank column is kept but never trusted; the run's id is the tag
  of the *last* line, as trec_eval reports it.
- needs (read by :mod:`evaluation.trec.topics`): TSV
  ``need_id<TAB>title[<TAB>description]`` or TREC topics
  (``<top><num>...<title>...<desc>...``) or XML ``<topic number="..">``.

Blank lines and lines starting with ``#`` are skipped, as trec_eval does.
"""

from __future__ import annotations

import gzip
import io
import os
from dataclasses import dataclass, field
from typing import BinaryIO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evaluation.trec.columns import first_duplicate, string_hash, to_numpy
from evaluation.trec.parsing import (
    _QRELS,
    _RUN,
    _WHITESPACE,
    MAX_LINE_LENGTH,
    Source,
    TrecFormatError,
    _check_bytes,
    _explain,
    _load,
    _parse,
    _Text,
)

__all__ = [
    "MAX_LINE_LENGTH",
    "Run",
    "TrecFormatError",
    "check_run_head",
    "read_qrels",
    "read_run",
]


@dataclass
class Run:
    """A parsed run.

    ``frame`` has one row per run line, in file order: ``need_id``
    (categorical), ``doc_id`` (str), ``score`` (float64) and ``rank`` (float64,
    the file's rank column, NaN if it is not numeric; only used to warn).
    ``tag`` is the tag of the last line (trec_eval's ``runid``).
    """

    frame: pd.DataFrame
    tag: str
    warnings: list[str] = field(default_factory=list)
    # (the doc_id column as read, its 64-bit hashes): kept for the qrels join
    _doc_hash: tuple[object, np.ndarray] | None = field(default=None, repr=False, compare=False)

    def doc_hashes(self) -> np.ndarray | None:
        """The 64-bit hashes of ``frame.doc_id`` computed while reading, or None
        when the column is no longer the one read (replaced, edited, reordered)."""
        if self._doc_hash is None or "doc_id" not in self.frame.columns:
            return None
        column, hashes = self._doc_hash
        return hashes if _arrow_data(self.frame["doc_id"]) is column else None


def _arrow_data(column: pd.Series) -> object:
    """The Arrow data behind a pandas column (the same object until the column
    changes: Arrow arrays are immutable), or None for a column not backed by Arrow."""
    to_arrow = getattr(column.array, "__arrow_array__", None)
    return to_arrow() if to_arrow is not None else None


# ------------------------------------------------------------------------- public


def read_qrels(source: Source, name: str | None = None) -> pd.DataFrame:
    """Read qrels ``need_id iteration doc_id relevance`` (plain or gzipped).

    Returns a DataFrame with ``need_id`` (str), ``doc_id`` (str) and
    ``relevance`` (int64), in file order. Raises :class:`TrecFormatError` for
    an empty or binary file, a line longer than 10,000 characters, a line
    without exactly four fields, a relevance that is not an integer, or a
    doc_id judged twice for one need.

    >>> read_qrels(b"q1 0 d1 1\\nq1 0 d2 0\\n").relevance.tolist()
    [1, 0]
    """
    data, name = _load(source, name)
    table, fast = _parse(data, name, _QRELS)
    text = _Text(data, source, name, fast)
    del data
    try:
        relevance = pc.cast(table.column(3), pa.int64())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        _explain(text.data, name, _QRELS, must_fail=True)
    need = pc.dictionary_encode(table.column(0)).combine_chunks()
    need_codes = need.indices.to_numpy(zero_copy_only=False)
    duplicate = first_duplicate(need_codes, table.column(2))
    if duplicate is not None:
        first, second = duplicate
        doc, qid = table.column(2)[second].as_py(), table.column(0)[second].as_py()
        raise TrecFormatError(
            name,
            text.line(second),
            f"doc_id {doc!r} judged twice for need {qid!r} (first on line {text.line(first)})",
        )
    return pd.DataFrame(
        {
            "need_id": pd.Series(table.column(0), dtype="str").array,
            "doc_id": pd.Series(table.column(2), dtype="str").array,
            "relevance": relevance.to_numpy(),
        }
    )


def read_run(source: Source, name: str | None = None) -> Run:
    """Read a run ``need_id Q0 doc_id rank score tag`` (plain or gzipped).

    Fields after the sixth are ignored (as trec_eval does). Raises
    :class:`TrecFormatError` for an empty or binary file, a line longer than
    10,000 characters, fewer than six fields, a score that is not a number or
    not finite, or a doc_id twice for one need. Warns (``Run.warnings``) when
    the lines carry more than one tag; the run's ``tag`` is the last line's.

    >>> read_run(b"q1 Q0 d1 1 2.5 bm25\\n").frame.score.tolist()
    [2.5]
    """
    data, name = _load(source, name)
    table, fast = _parse(data, name, _RUN)
    text = _Text(data, source, name, fast)
    del data
    scores = to_numpy(table.column("c4"), np.float64)
    if not np.isfinite(scores).all():
        _explain(text.data, name, _RUN, must_fail=True)  # names the first nan or inf
    need = table.column("c0")
    need_codes = np.concatenate(
        [np.zeros(0, np.int32)] + [c.indices.to_numpy(zero_copy_only=False) for c in need.chunks]
    )
    dictionary = need.chunk(0).dictionary if need.num_chunks else pa.array([], pa.string())
    docs = table.column("c2")
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
    try:
        rank = to_numpy(pc.cast(table.column("c3"), pa.float64()), np.float64)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        rank = np.full(len(scores), np.nan)
    warnings: list[str] = []
    tags = table.column("c5")
    tag = str(tags[len(tags) - 1].as_py())
    # the dictionaries are unified, so one entry means one tag (the usual run)
    distinct = len(tags.chunk(0).dictionary) if tags.num_chunks else 0
    if distinct > 1:
        codes = [c.indices.to_numpy(zero_copy_only=False) for c in tags.chunks]
        distinct = int((np.bincount(np.concatenate(codes)) > 0).sum())
    if distinct > 1:
        warnings.append(
            f"{name}: {distinct} different tags in the run; its runid is the last line's, {tag!r}"
        )
    frame = pd.DataFrame(
        {
            "need_id": pd.Categorical.from_codes(
                need_codes,
                categories=pd.Index(dictionary.to_pylist(), dtype="str"),
                validate=False,  # codes of the column's own dictionary
            ),
            "doc_id": pd.Series(docs, dtype="str").array,
            "score": scores,
            "rank": rank,
        }
    )
    column = _arrow_data(frame["doc_id"])
    return Run(frame, tag, warnings, None if column is None else (column, doc_hash))


def check_run_head(source: Source, name: str | None = None, max_lines: int = 1000) -> None:
    """Check the first ``max_lines`` content lines of a run (for an upload form).

    Raises :class:`TrecFormatError` with the line number of the first bad line
    (same reasons as :func:`read_run`); returns None when the head looks fine.
    Only the head is read (streamed, gzip included), so this is cheap.
    """
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            return check_run_head(f, name or os.fspath(source), max_lines)
    if isinstance(source, bytes):
        stream: BinaryIO = io.BytesIO(source)
    else:
        stream = source
    name = name or getattr(stream, "name", None) or "<stream>"
    if not isinstance(name, str):
        name = "<stream>"
    magic = stream.read(2)
    rest = io.BufferedReader(_Prefixed(magic, stream))
    if magic == b"\x1f\x8b":
        rest = gzip.GzipFile(fileobj=rest)  # type: ignore[assignment]
    head = []
    count = 0
    try:
        for raw in rest:
            head.append(raw)
            if raw.strip(_WHITESPACE + b"\n") and not raw.lstrip().startswith(b"#"):
                count += 1
            if count >= max_lines:
                break
    except (OSError, EOFError) as exc:
        raise TrecFormatError(name, len(head) + 1, f"corrupt gzip data ({exc})") from None
    data = b"".join(head)
    _check_bytes(data, name)
    _explain(data, name, _RUN)


class _Prefixed(io.RawIOBase):
    """A raw stream that replays already-read bytes before the rest of a stream."""

    def __init__(self, prefix: bytes, stream: BinaryIO) -> None:
        self._prefix = prefix
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        if self._prefix:
            n = min(len(buffer), len(self._prefix))
            buffer[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        chunk = self._stream.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)
