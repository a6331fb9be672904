"""Bytes to columns for TREC files: the fast pyarrow path, the vectorised
normalisation for irregular whitespace, and the slow line-by-line explainer
that names ``file:line: reason`` when a file is bad. Used by
:mod:`evaluation.trec.readers` (the public readers) and :mod:`evaluation.trec.topics`.

Over 400 lines: the fast path (checked and parsed piece by piece), the normalisation
and the explainer must agree on what a line is, so they stay side by side.
"""

from __future__ import annotations

import contextlib
import math
import mmap
import os
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from evaluation.trec.sources import Source, TrecFormatError, load

_QRELS, _RUN = "qrels", "run"
MAX_LINE_LENGTH = 10_000
_NCOLS = {_QRELS: 4, _RUN: 6}
_WHITESPACE = b" \t\r\v\f"

# --------------------------------------------------------------------------- bytes


def _check_bytes(data: bytes, name: str) -> None:
    """Reject empty and binary files before parsing."""
    if re.search(rb"\S", data) is None:
        raise TrecFormatError(name, 1, "empty file")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise TrecFormatError(name, bytes(data[:nul]).count(b"\n") + 1, "binary file (NUL byte)")


def _content_lines(data: bytes, skip: int = 0):
    """Yield (line number, fields) for every line trec_eval would parse (after the first
    ``skip`` lines: a run's header line)."""
    for number, raw in enumerate(bytes(data).split(b"\n"), start=1):
        if number <= skip:
            continue
        stripped = raw.strip(_WHITESPACE)
        if not stripped or stripped.startswith(b"#"):
            if len(raw) > MAX_LINE_LENGTH:
                yield number, None, raw
            continue
        yield number, stripped.split(), raw


_INT64_MAX = 2**63 - 1  # relevance is read as int64: -2**63 .. 2**63 - 1
# ASCII digits only: Python's float() reads other scripts' digits, pyarrow does not
_NUMBER = re.compile(
    r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|infinity|nan)", re.I | re.ASCII
)


def _explain(
    data: bytes,
    name: str,
    kind: str,
    rows: int | None = None,
    must_fail: bool = False,
    skip: int = 0,
) -> None:
    """Find the first bad line the slow way and raise for it (error path only).

    With ``must_fail`` (the fast readers already failed) and no bad line
    found, raise an error for the file as a whole rather than return.
    """
    ncols = _NCOLS[kind]
    seen: dict[tuple[bytes, bytes], int] = {}
    for count, (number, fields, raw) in enumerate(_content_lines(data, skip)):
        if rows is not None and count >= rows:
            break
        if len(raw) > MAX_LINE_LENGTH:
            raise TrecFormatError(name, number, f"line longer than {MAX_LINE_LENGTH} characters")
        if fields is None:
            continue
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            raise TrecFormatError(name, number, "binary file (not UTF-8 text)") from None
        if kind == _QRELS and len(fields) != ncols:
            raise TrecFormatError(
                name,
                number,
                f"expected 4 columns (need_id iteration doc_id relevance), got {len(fields)}",
            )
        if kind == _RUN and len(fields) < ncols:
            raise TrecFormatError(
                name,
                number,
                f"expected 6 columns (need_id Q0 doc_id rank score tag), got {len(fields)}",
            )
        if kind == _QRELS:
            value = fields[3].decode()
            if not re.fullmatch(r"[+-]?[0-9]+", value):
                raise TrecFormatError(name, number, f"relevance {value!r} is not an integer")
            digits = value.lstrip("+-").lstrip("0") or "0"  # int() refuses > 4,300 digits
            if len(digits) > 19 or int(digits) > _INT64_MAX + value.startswith("-"):
                raise TrecFormatError(
                    name, number, f"relevance {value!r} is out of range (a 64-bit integer)"
                )
        else:
            value = fields[4].decode()
            if not _NUMBER.fullmatch(value):
                raise TrecFormatError(name, number, f"score {value!r} is not a number")
            score = float(value)
            if not math.isfinite(score):
                raise TrecFormatError(name, number, f"score {value!r} is not finite")
        key = (fields[0], fields[2])
        if key in seen:
            raise TrecFormatError(
                name,
                number,
                f"doc_id {fields[2].decode()!r} twice for need {fields[0].decode()!r} "
                f"(first on line {seen[key]})",
            )
        seen[key] = number
    if must_fail:
        raise TrecFormatError(name, 0, "unreadable file (no single bad line found)")


def _line_of_row(data: bytes, row: int, skip: int = 0) -> int:
    """Line number of the ``row``-th content line (0-based), the slow way."""
    for count, (number, _fields, _) in enumerate(
        item for item in _content_lines(data, skip) if item[1] is not None
    ):
        if count == row:
            return number
    return 0


def line_of_row(source: Source, row: int, max_bytes: int | None = None) -> int:
    """The file line (1-based) of the ``row``-th line (0-based) a qrels reader read from
    ``source``: blank and comment lines are no rows. For a line found bad after reading
    (the platform's checks of a judgments file); reads the file again."""
    return _line_of_row(load(source, None, max_bytes)[0], row)


# ------------------------------------------------------------------------ parsing


_DICT = pa.dictionary(pa.int32(), pa.string())


# The run columns the engine uses: need, doc, rank (only for a warning), score and
# tag. Q0 is never converted (materialising it costs as much as the rest together);
# an empty Q0 is still caught, by the layout check in _regular_layout.
_RUN_COLUMNS = ["c0", "c2", "c3", "c4", "c5"]


def _read_csv(buffer: bytes, ncols: int, delimiter: str, kind: str, skip: int = 0) -> pa.Table:
    """One pyarrow.csv pass. Run columns that repeat (need, tag) come back
    dictionary-encoded, the score and the rank as float64 (a rank that is no
    number is read again as text), which keeps the peak memory of a 7M-line
    run near the size of the file (a score that is no number fails the parse
    and the careful path then names the line). Every row must still have
    exactly ``ncols`` fields. The first ``skip`` rows (a run's header) are not read."""
    names = [f"c{i}" for i in range(ncols)]
    types = {n: pa.string() for n in names}
    include = names
    if kind == _RUN:
        types.update(c0=_DICT, c3=pa.float64(), c4=pa.float64(), c5=_DICT)
        include = _RUN_COLUMNS

    def read() -> pa.Table:
        return pcsv.read_csv(
            pa.py_buffer(buffer),
            read_options=pcsv.ReadOptions(column_names=names, block_size=1 << 21, skip_rows=skip),
            parse_options=pcsv.ParseOptions(
                delimiter=delimiter,
                quote_char=False,
                double_quote=False,
                escape_char=False,
                newlines_in_values=False,
                ignore_empty_lines=False,
            ),
            convert_options=pcsv.ConvertOptions(
                column_types=types, strings_can_be_null=False, include_columns=include
            ),
        )

    if kind != _RUN:
        return read()
    try:
        table = read()
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        types["c3"] = pa.string()  # a rank column that is not numeric is only kept as text
        table = read()
    return table.unify_dictionaries()


def _regular_layout(data: bytes, delimiter: bytes, ncols: int, header: bool = False) -> bool:
    """True when no field is empty, no line is blank or too long, and the only bytes
    <= 32 are the delimiter and newlines.

    Two bytes <= 32 side by side (doubled separators, a blank before the end of
    a line, a blank line, CR LF) or a blank at either end of the file make the
    file irregular, as does a line longer than ``MAX_LINE_LENGTH``. One
    vectorised pass over the bytes in 1 MB pieces (the temporaries stay in cache: 0.17 ->
    0.10 s for 292 MB in memory; on a mapped file the page faults cost the same either
    way); it covers the columns the
    reader does not convert (a run's Q0) as well as those it does. The other
    blanks (a tab among spaces, a space among tabs, VT, FF, CR, NUL) are counted,
    not searched for: the parse that follows holds every line to ``ncols`` fields,
    so a regular piece has exactly ``ncols - 1`` delimiters and one newline a line,
    and any other byte <= 32 makes the count larger (one pass fewer than four
    ``find``s: 0.25 s of a 377 MB run). ``header``: the first line is a header
    (skipped by the parse), whatever its blanks.
    """
    raw = np.frombuffer(data, np.uint8)
    n = len(raw)
    if n == 0 or raw[0] <= 32 or raw[-1] == ord(delimiter):
        return False
    step, last_newline, longest, blanks, lines = 1 << 20, -1, 0, 0, 0
    for start in range(0, n, step):
        piece = raw[start : start + step + 1]  # one byte of overlap for the pairs
        blank = piece <= 32
        if np.any(blank[1:] & blank[:-1]):
            return False
        blanks += int(np.count_nonzero(blank[:step]))
        newlines = np.flatnonzero(piece[:step] == 10) + start
        lines += len(newlines)
        if len(newlines):
            longest = max(longest, int(newlines[0]) - last_newline - 1)
            if len(newlines) > 1:
                longest = max(longest, int(np.diff(newlines).max()) - 1)
            last_newline = int(newlines[-1])
    longest = max(longest, n - 1 - last_newline - (raw[-1] == 10))
    expected = ncols * lines + (ncols - 1) * (raw[-1] != 10)  # the last line's newline
    if header:  # whatever blanks the header holds, with its newline
        end = int(np.argmax(raw == 10)) + 1 if lines else n  # its newline, if any
        expected += int(np.count_nonzero(raw[:end] <= 32)) - ncols
    return bool(longest <= MAX_LINE_LENGTH and blanks == expected)


# A regular file is checked and parsed this many bytes at a time (cut after a newline):
# a mapped file's pages are let go once their piece is parsed, so the file and its table
# are never both resident. Two pieces are resident at once (the next one is checked while
# this one is parsed).
PARSE_PIECE = 32 << 20


def _pieces(data: bytes, size: int) -> list[tuple[int, int]]:
    """(start, end) of consecutive pieces of about ``size`` bytes, each ending after a
    newline (the last one at the end of the data)."""
    bounds, start, n = [], 0, len(data)
    while start < n:
        end = data.find(b"\n", min(start + size, n) - 1) + 1 if start + size < n else n
        end = end if end > 0 else n
        bounds.append((start, end))
        start = end
    return bounds


def _checked_ahead(
    view: memoryview, pieces: list[tuple[int, int]], delimiter: bytes, ncols: int, header: bool
):
    """(number, :func:`_regular_layout`) of each piece in turn, the next piece checked in a
    thread while the caller parses this one: the check is numpy on one core, Arrow's
    parse keeps both busy, so the check no longer leaves a core idle between parses
    (0.24 s of a 377 MB run's 0.9 s; numpy lets go of the GIL in its loops). ``header``:
    the first piece opens with a header line."""
    import threading

    found: dict[int, bool] = {}

    def check(number: int) -> None:
        found[number] = False  # should the check fail, the careful path reads the file
        lo, hi = pieces[number]
        found[number] = _regular_layout(view[lo:hi], delimiter, ncols, header and number == 0)

    check(0)
    for number in range(len(pieces)):
        ahead = None
        if number + 1 < len(pieces):
            ahead = threading.Thread(target=check, args=(number + 1,), daemon=True)
            ahead.start()
        try:
            yield number, found.pop(number)
        finally:
            if ahead is not None:
                ahead.join()


def _release(data: bytes, start: int, end: int) -> None:
    """Let the pages of a mapped file's ``[start, end)`` go (they are read again from the
    page cache if an error has to be explained); nothing for bytes in memory."""
    advise = getattr(data, "madvise", None)
    dontneed = getattr(mmap, "MADV_DONTNEED", None)
    if advise is None or dontneed is None:
        return
    first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE  # whole pages inside the range
    last = end // mmap.PAGESIZE * mmap.PAGESIZE if end < len(data) else len(data)
    if last > first:
        advise(dontneed, first, last - first)


def _fast_table(data: bytes, kind: str, skip: int = 0) -> pa.Table | None:
    """Parse a regular file (one delimiter between fields) or return None.

    Regular means: the delimiter of the first line (tab or space) and nothing
    else separates fields, no doubled separators, no blank, comment, indented
    or trailing-blank lines, no line longer than ``MAX_LINE_LENGTH``, no NUL byte.
    Checked piece by piece (:data:`PARSE_PIECE`) with one numpy pass over the bytes
    (:func:`_regular_layout`, which counts the blanks), cheap next to the parse
    itself, and each piece parsed right after its check, then let go (:func:`_release`).
    """
    start = data.find(b"\n") + 1 if skip else 0  # the first line after a header
    end = data.find(b"\n", start)
    first = bytes(data[start : end if end >= 0 else len(data)])
    delimiter = b"\t" if b"\t" in first else b" "
    ncols = len(first.split(delimiter))
    if ncols != _NCOLS[kind]:
        return None  # junk after the sixth run column is truncated by the careful path
    if data[:1] == b"#":
        return None
    tables = []
    view = memoryview(data)
    pieces = _pieces(data, PARSE_PIECE)
    checks = _checked_ahead(view, pieces, delimiter, ncols, bool(skip))
    try:
        for number, regular in checks:
            if not regular:
                return None  # doubled, leading or trailing separators, other blanks, long lines
            lo, hi = pieces[number]
            try:
                tables.append(
                    _read_csv(view[lo:hi], ncols, delimiter.decode(), kind, skip * (number == 0))
                )
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                return None  # ragged rows, a score that is no number ...
            _release(data, lo, hi)
    finally:
        checks.close()  # the check of the next piece, if running, is waited for
        with contextlib.suppress(BufferError):  # a parse that failed may still hold it
            view.release()
    table = _joined(tables)
    first_column = table.column(0)
    if pa.types.is_dictionary(first_column.type):
        first_column = pa.chunked_array(
            [chunk.dictionary for chunk in first_column.chunks[:1]] or [pa.array([], pa.string())]
        )
    if pc.any(pc.starts_with(first_column, "#")).as_py():
        return None  # comment lines
    return table


def _joined(tables: list[pa.Table]) -> pa.Table:
    """The pieces' tables as one (a run's rank column as text if any piece kept it so)."""
    if len(tables) == 1:
        return tables[0]
    names = tables[0].column_names
    if "c3" in names and len({t.schema.field("c3").type for t in tables}) > 1:
        tables = [t.set_column(names.index("c3"), "c3", pc.cast(t.column("c3"), pa.string()))
                  for t in tables]  # fmt: skip
    return pa.concat_tables(tables).unify_dictionaries()


def _normalise_chunk(chunk: np.ndarray, ncols: int, keep_extra: bool) -> tuple[np.ndarray, int]:
    """Collapse blanks to one space, strip lines, drop blank/comment lines and
    (for runs) everything after the ``ncols``-th field; all vectorised.

    Returns the new bytes and the longest line length of the original chunk.
    """
    newline = chunk == 10
    ends = np.flatnonzero(newline)
    starts = np.concatenate(([0], ends[:-1] + 1)) if len(ends) else np.array([0])
    longest = int((ends - starts).max()) if len(ends) else len(chunk)
    blank = np.isin(chunk, np.frombuffer(_WHITESPACE, np.uint8))
    prev_sep = np.empty_like(blank)
    prev_sep[0] = True
    prev_sep[1:] = blank[:-1] | newline[:-1]
    out = chunk[~blank | ~prev_sep].copy()
    is_blank = np.isin(out, np.frombuffer(_WHITESPACE, np.uint8))
    out[is_blank] = 32
    next_nl = np.empty(len(out), bool)
    next_nl[-1] = True
    next_nl[:-1] = out[1:] == 10
    out = out[~(is_blank & next_nl)]
    newline = out == 10
    line_id = np.cumsum(newline, dtype=np.int64) - newline  # the newline belongs to its line
    line_start = np.empty(len(out), bool)
    line_start[0] = True
    line_start[1:] = newline[:-1]
    empty_or_comment = line_start & ((out == 35) | newline)
    drop_line = np.zeros(int(line_id[-1]) + 2, bool)
    drop_line[line_id[empty_or_comment]] = True
    keep = ~drop_line[line_id]
    if not keep_extra:
        space = out == 32
        seps = np.cumsum(space, dtype=np.int64)
        base = np.maximum.accumulate(np.where(newline, seps, 0))
        before = seps - np.concatenate(([0], base[:-1]))
        keep &= newline | (before < ncols)
    return out[keep], longest


def _normalised_table(data: bytes, name: str, kind: str, skip: int = 0) -> pa.Table:
    ncols = _NCOLS[kind]
    raw = np.frombuffer(data if data[-1:] == b"\n" else bytes(data) + b"\n", np.uint8)
    pieces, start, step = [], 0, 1 << 24
    while start < len(raw):
        stop = min(start + step, len(raw))
        while raw[stop - 1] != 10:
            stop += 1
        piece, longest = _normalise_chunk(raw[start:stop], ncols, keep_extra=kind == _QRELS)
        if longest > MAX_LINE_LENGTH:
            _explain(data, name, kind, skip=skip)
        pieces.append(piece)
        start = stop
    buffer = np.concatenate(pieces).tobytes()
    if not buffer.strip():
        raise TrecFormatError(name, 1, "empty file (no content lines)")
    try:  # a header is line 1 and has fields: it is still the buffer's first line
        return _read_csv(buffer, ncols, " ", kind, skip)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        _explain(data, name, kind, must_fail=True, skip=skip)


def _parse(data: bytes, name: str, kind: str, skip: int = 0) -> tuple[pa.Table, bool]:
    """Split a file into string columns; ``fast`` tells whether row i is line i+1
    (line i+2 after a ``skip``ped header)."""
    if re.search(rb"\S", data) is None:  # the rest of _check_bytes runs piece by piece
        raise TrecFormatError(name, 1, "empty file")
    table = _fast_table(data, kind, skip)
    fast = table is not None
    if table is None:
        _check_bytes(data, name)
        table = _normalised_table(data, name, kind, skip)
    if table.num_rows == 0:  # a header and nothing else
        raise TrecFormatError(name, 1, "empty file (no content lines after the header)")
    return table, fast


def run_header(data: bytes) -> str | None:
    """Line 1 of a run when it is a header (``qid Q0 docno rank score tag``): at least six
    fields, the fourth and fifth (rank and score) not numbers; else None. Only line 1 can
    be one: a score that is no number anywhere else stays an error, and so does a data
    line 1 with a garbled score (its rank is a number). trec_eval reads a header as need
    ``qid`` with score 0, a need no qrels has, which is as good as skipping it."""
    first = bytes(data[: MAX_LINE_LENGTH + 1]).split(b"\n", 1)[0]
    try:
        text = first.decode("utf-8").strip(_WHITESPACE.decode())
    except UnicodeDecodeError:
        return None
    fields = text.split()
    if len(first) > MAX_LINE_LENGTH or len(fields) < _NCOLS[_RUN] or text.startswith("#"):
        return None
    if _NUMBER.fullmatch(fields[3]) or _NUMBER.fullmatch(fields[4]):
        return None
    return text


class _Text:
    """The file's bytes for the error path only: a file read from a path is
    dropped once parsed and read again if an error has to be explained."""

    def __init__(
        self,
        data: bytes,
        source: Source,
        name: str,
        fast: bool,
        max_bytes: int | None = None,
        skip: int = 0,
    ) -> None:
        reloadable = isinstance(source, (str, os.PathLike)) and fast
        self._data = None if reloadable else data
        self._source, self._name, self.fast = source, name, fast
        self._max_bytes = max_bytes
        self.skip = skip  # lines before the first row: a run's header

    @property
    def data(self) -> bytes:
        if self._data is None:
            self._data = load(self._source, self._name, self._max_bytes)[0]
        return self._data

    def line(self, row: int) -> int:
        """File line number of a table row."""
        return row + 1 + self.skip if self.fast else _line_of_row(self.data, row, self.skip)
