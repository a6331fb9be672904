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

import io
import os
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import BinaryIO

from evaluation.trec.columnar import ParsedWriter, Run, header_warning, read_qrels, read_run
from evaluation.trec.every_line import EveryLine
from evaluation.trec.need_ids import first_fields
from evaluation.trec.parsing import (
    _RUN,
    _WHITESPACE,
    MAX_LINE_LENGTH,
    _check_bytes,
    _explain,
    run_header,
)
from evaluation.trec.sources import PIECE, Decoded, Source, TrecFormatError

__all__ = [
    "MAX_LINE_LENGTH",
    "Run",
    "RunCheck",
    "TrecFormatError",
    "check_run",
    "check_run_head",
    "read_qrels",
    "read_run",
]


# ------------------------------------------------------------------------- public


# The head check holds at most this much: 1,000 content lines of the longest allowed
# length fit; blank lines are kept as one byte each, and past HEAD_LINES lines of any
# kind the head ends (a file that opens with 100,000 blank lines is read, not kept).
HEAD_BYTES = 16 << 20
HEAD_LINES = 100_000


@dataclass
class RunCheck:
    """What :func:`check_run` found in a run that passed: ``need_ids``, the first
    field of every content line (None when not every line was read: only the head, or
    a judged need seen), ``warnings`` (a header line), as :func:`read_run` will report
    them, and ``answers`` whether some line's need is among ``judged`` (None when no
    ``judged`` were given, or only the head was read and none was in it)."""

    need_ids: frozenset[str] | None
    warnings: list[str] = field(default_factory=list)
    answers: bool | None = None


def check_run_head(
    source: Source, name: str | None = None, max_lines: int = 1000, max_bytes: int | None = None
) -> None:
    """:func:`check_run`, for when only a refusal matters: returns None when it passes."""
    check_run(source, name, max_lines, max_bytes)


def check_run(
    source: Source,
    name: str | None = None,
    max_lines: int = 1000,
    max_bytes: int | None = None,
    judged: Collection[str] | None = None,
    every_line: bool = False,
    max_ratio: float | None = None,
    parsed: BinaryIO | None = None,
) -> RunCheck:
    """Check the first ``max_lines`` content lines of a run (for an upload form).

    Raises :class:`TrecFormatError` with the line number of the first bad line
    (same reasons as :func:`read_run`); returns a :class:`RunCheck` when the head
    looks fine (a header on line 1 is skipped with a warning, as ``read_run`` does).
    Only the head is kept (streamed, gzip included; at most ~16 MB, whatever the
    file), so this is cheap. With ``max_bytes``, the rest of the file is read
    through too, 1 MB at a time and nothing kept, to refuse content that expands
    past ``max_bytes`` and a gzip stream that is truncated, fails its CRC or has
    garbage after its end: what :func:`read_run` would refuse later; the need ids
    are collected on the way (vectorised, a few ms per MB: :func:`first_fields`).

    ``judged``: the need ids the run will be scored on. Need ids are then collected only
    until a line answers one of them (``RunCheck.answers``), and a plain file no larger
    than ``max_bytes`` is not read past that point: it cannot expand, so nothing more of
    it would be refused here, and its first lines usually answer a judged need (a 7M-line
    run: ~10 ms instead of 0.7-0.9 s). A gzip stream is still read to its end.

    ``every_line`` (with ``max_bytes``): every line is checked, by :func:`read_run`'s
    own rules (fields, score, NUL bytes, line length; a doc_id twice within 1 MB of
    lines), 1 MB of whole lines at a time, so the first bad line anywhere is refused
    here as ``file:line: reason``; the whole file is then read, and the need ids are
    those of the parsed lines (the parse is the whole cost of the check).

    ``max_ratio``: a gzip stream whose content grows past ``max_ratio`` times the
    compressed bytes read so far (once past :data:`~evaluation.trec.sources.RATIO_FLOOR`)
    is refused there, without inflating the rest (see :class:`Decoded`).

    ``parsed`` (with ``every_line``): a binary file the parsed lines are written to
    (:class:`~evaluation.trec.columnar.ParsedWriter`), so that scoring reads them with
    :func:`~evaluation.trec.columnar.read_parsed_run` instead of parsing the file again.
    """
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            return check_run(
                f,
                name or os.fspath(source),
                max_lines,
                max_bytes,
                judged,
                every_line,
                max_ratio,
                parsed,
            )
    stream: BinaryIO = io.BytesIO(source) if isinstance(source, bytes) else source
    name = name or getattr(stream, "name", None) or "<stream>"
    if not isinstance(name, str):
        name = "<stream>"
    plain_size = _remaining(stream)
    decoded = Decoded(stream, name, max_bytes, max_ratio)
    reader = io.BufferedReader(decoded, PIECE)
    head, ended, content = _read_head(reader, max_lines)
    blank = not head.strip(_WHITESPACE + b"\n")
    if ended or not blank:
        _check_bytes(head, name)
    header = run_header(head)
    skip = int(header is not None)
    _explain(head, name, _RUN, skip=skip)
    if ended and content <= skip:  # comment lines (or a header) only: as read_run says
        after = " after the header" if skip else ""
        raise TrecFormatError(name, 1, f"empty file (no content lines{after})")
    check = RunCheck(None, [] if header is None else [header_warning(name, header)])
    body = head.split(b"\n", 1)[1] if skip and b"\n" in head else b"" if skip else head
    answered = _Answered(judged)
    writer = ParsedWriter(parsed, header) if every_line and parsed is not None else None
    if ended:
        fields = first_fields(body + b"\n")
        check.need_ids = _decoded(fields)
        answered.add(fields)
        if writer is not None:  # the head is the whole file: its lines parsed, as any
            EveryLine(name, head, writer).finish()
            writer.close()
    elif max_bytes is not None:
        # past its head, a plain file within the limit has nothing to be refused for:
        # once a judged need is seen, the rest is not read (a gzip stream always is)
        may_stop = not decoded.gzipped and plain_size is not None and plain_size <= max_bytes
        may_stop = may_stop and not every_line
        needs, carry = first_fields(body), b""
        answered.add(needs)
        rest = EveryLine(name, head, writer) if every_line else None
        try:
            piece = b"" if answered.found and may_stop else reader.read1(PIECE)
            while piece:  # Decoded counts and checks every byte; what the head left, first
                if rest is not None:
                    rest.add(piece)  # the parse of every line gives the need ids too
                blank = blank and piece.isspace()  # the same six bytes, 8x faster than strip
                if rest is None and not answered.found:
                    lines = carry + piece
                    end = lines.rfind(b"\n") + 1
                    found = first_fields(lines[:end])
                    answered.add(found - needs)
                    needs |= found
                    carry = lines[end:][: MAX_LINE_LENGTH + 1]  # a longer line fails read_run
                    if answered.found and may_stop:
                        break
                piece = decoded.read(PIECE)
            if blank:  # more blank lines than the head keeps, and nothing else
                _check_bytes(head, name)
            if rest is not None:
                rest.finish()
        finally:  # a refusal, a bomb, a broken stream: the check threads end too
            if rest is not None:
                rest.close()
        if rest is not None:
            if writer is not None:
                writer.close()
            seen = frozenset(rest.needs)
            answered.found = answered.judged is not None and not answered.judged.isdisjoint(seen)
            if not answered.found:
                check.need_ids = seen
        elif not answered.found:  # every need id: none judged, or no judged given
            last = first_fields(carry + b"\n")
            answered.add(last)
            check.need_ids = _decoded(needs | last)
    elif answered.judged is not None:  # the head only: does it answer one?
        answered.add(first_fields(body))
        if not answered.found:
            answered.judged = None  # the rest might: not known
    check.answers = None if answered.judged is None else answered.found
    return check


class _Answered:
    """Whether a line answering a judged need has been seen (``judged`` None: none looked for)."""

    def __init__(self, judged: Collection[str] | None) -> None:
        self.judged = None if judged is None else frozenset(judged)
        self.found = False

    def add(self, fields: set[bytes]) -> None:
        """Look among more first fields, as :func:`first_fields` gives them."""
        if self.judged is not None and not self.found and fields:
            self.found = not self.judged.isdisjoint(_decoded(fields))


def _remaining(stream: BinaryIO) -> int | None:
    """How many bytes are left in a seekable stream (None when it cannot say)."""
    try:
        at = stream.tell()
        stream.seek(0, io.SEEK_END)
        end = stream.tell()
        stream.seek(at)
    except (AttributeError, OSError, ValueError):
        return None
    return end - at


def _decoded(fields: set[bytes]) -> frozenset[str]:
    return frozenset(f.decode("utf-8", "replace") for f in fields)


def _read_head(reader: io.BufferedReader, max_lines: int) -> tuple[bytes, bool, int]:
    """The first ``max_lines`` content lines, with the skipped lines before and between
    them (blank ones as a bare newline), whether the file ended there, and how many
    content lines there were.

    No line is read past ``MAX_LINE_LENGTH`` + 1 bytes: a longer line ends the head,
    cut to that length, so that :func:`_explain` names it (after any earlier bad line).
    """
    head = bytearray()
    count = lines = 0
    while count < max_lines and lines < HEAD_LINES and len(head) < HEAD_BYTES:
        raw = reader.readline(MAX_LINE_LENGTH + 2)
        if not raw:
            return bytes(head), True, count
        lines += 1
        if len(raw) - raw.endswith(b"\n") > MAX_LINE_LENGTH:
            head += raw.rstrip(b"\n")
            return bytes(head), False, count
        if not raw.strip(_WHITESPACE + b"\n"):
            head += b"\n"
            continue
        head += raw
        if not raw.lstrip().startswith(b"#"):
            count += 1
    return bytes(head), False, count
