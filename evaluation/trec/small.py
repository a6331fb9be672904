"""Small, regular TREC files read with the standard library and numpy, no pandas or
pyarrow: the command line's fast path for the usual run (a TREC track's 50 needs x
1,000 documents), where importing pandas and pyarrow costs several times the scoring.

Only files the general readers (:mod:`evaluation.trec.readers`) would read without a
question are taken: ASCII, no control bytes but tab and newline, no ``#`` anywhere,
exactly four (qrels) or six (run) blank-separated fields on every line, a relevance of
at most 18 digits, scores and ranks in plain decimal or exponent notation, finite, no
(need, doc) pair twice. Anything else (a header line, a comment, a blank line, CRs,
UTF-8 ids, a bad line ...) gives None and the caller uses the general readers, which
give the same values or the ``file:line: reason`` error. The values are the same: a
decimal string is read as the nearest double by both Python's ``float`` and Arrow's
parser, and the tests compare both paths byte for byte on generated files
(``tests/evaluation/test_small.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from evaluation.trec.columns import blocks_with_repeats, span_hash

__all__ = ["SMALL_BYTES", "Fields", "SmallQrels", "SmallRun", "read_small_qrels", "read_small_run"]

# Files up to this size go through this module first (run and qrels). Below it, reading
# with numpy beats importing pandas and pyarrow (0.3 s on the benchmark machine) and
# parsing with them (docs/engine.md, Speed).
SMALL_BYTES = 16 << 20

# every byte but these makes the file irregular: printable ASCII, blank, tab, newline
_ALLOWED = bytes([9, 10, *range(32, 127)])
# what a score or rank may hold: numpy's bytes-to-double cast, Python's float and Arrow
# read such tokens alike (the nearest double) or all refuse them ('1.2.3', 'e5')
_NUMBER_BYTE = np.zeros(256, bool)
_NUMBER_BYTE[np.frombuffer(b"\x000123456789.eE-+", np.uint8)] = True  # 0: padding
_MAX_NUMBER = 40  # longer scores go to the general reader


@dataclass
class Fields:
    """A regular file's fields where they lie: ``raw`` (the bytes, uint8), ``start`` and
    ``length`` (lines x columns)."""

    raw: np.ndarray
    start: np.ndarray
    length: np.ndarray
    _slack: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8), repr=False)

    def text(self, row: int, column: int) -> str:
        s = int(self.start[row, column])
        return self.raw[s : s + int(self.length[row, column])].tobytes().decode("ascii")

    def span(self, row: int, column: int) -> bytes:
        s = int(self.start[row, column])
        return self.raw[s : s + int(self.length[row, column])].tobytes()

    def all_equal(self, column: int, row: int) -> bool:
        """Whether every line's field in ``column`` is the one on ``row``: lengths, then
        one gather of the bytes at each offset (a run's one tag: ~3x cheaper than
        :meth:`values`)."""
        value = self.span(row, column)
        start = self.start[:, column]
        if not bool(np.all(self.length[:, column] == len(value))):
            return False
        return all(bool(np.all(self.raw[start + k] == byte)) for k, byte in enumerate(value))

    def hashes(self, column: int) -> np.ndarray:
        """The column's :func:`~evaluation.trec.columns.span_hash`, over the padded copy
        the numbers were read from (no second copy of the file)."""
        start, length = self.start[:, column], self.length[:, column]
        return span_hash(self.raw, start, length, self._padded(8))

    def matrix(self, column: int, width: int | None = None, rows=None) -> np.ndarray:
        """The column's fields (of ``rows``: all by default) as rows of ``width`` bytes
        (the longest), zero padded: one gather of rows from a sliding window."""
        start, length = self.start[:, column], self.length[:, column]
        if rows is not None:
            start, length = start[rows], length[rows]
        width = (int(length.max()) if len(length) else 0) if width is None else width
        padded = self._padded(width)
        window = np.lib.stride_tricks.as_strided(
            padded, shape=(len(padded) - width + 1, width), strides=(1, 1), writeable=False
        )
        out = window[start]
        out *= np.arange(width) < length[:, None]  # zero past each field's end
        return out

    def columns(self, column: int) -> np.ndarray:
        """:meth:`matrix` transposed (width x lines), built a byte position at a time:
        each row one contiguous gather, what reading numbers digit by digit wants."""
        start, length = self.start[:, column], self.length[:, column]
        width = int(length.max()) if len(length) else 0
        padded = self._padded(width)
        out = np.empty((width, len(start)), np.uint8)
        for k in range(width):
            np.take(padded, start + k, out=out[k])
            out[k] *= length > k  # zero past each field's end
        return out

    def _padded(self, width: int) -> np.ndarray:
        """The bytes with at least ``width`` zeros after them (kept for the next call)."""
        if len(self._slack) < len(self.raw) + width:
            self._slack = np.zeros(len(self.raw) + max(width, 64), np.uint8)
            self._slack[: len(self.raw)] = self.raw
        return self._slack

    def blocks(self, column: int) -> np.ndarray:
        """Rows where the column's value differs from the previous row's (0 first): a
        length or a byte at some position differs (:meth:`columns`' contiguous rows)."""
        length = self.length[:, column]
        differs = np.empty(len(length), bool)
        differs[:1] = True
        np.not_equal(length[1:], length[:-1], out=differs[1:])
        for row in self.columns(column):
            differs[1:] |= row[1:] != row[:-1]
        return np.flatnonzero(differs)

    def values(self, column: int) -> tuple[list[str], np.ndarray]:
        """The distinct values of a column (in order of appearance) and each row's
        index into them, one Python string per block of equal rows."""
        starts = self.blocks(column)
        codes: dict[str, int] = {}
        block_code = np.array(
            [codes.setdefault(self.text(int(b), column), len(codes)) for b in starts],
            dtype=np.int32,
        )
        lengths = np.diff(np.append(starts, len(self.start)))
        return list(codes), np.repeat(block_code, lengths)

    def numbers(self, column: int) -> np.ndarray | None:
        """The column as float64 (the nearest double of each decimal string), or None
        when a field is not a plain finite number."""
        if int(self.length[:, column].max()) > _MAX_NUMBER:
            return None
        columns = self.columns(column)
        values = _decimals(columns)  # plain decimals, the usual scores and ranks
        if values is not None:
            return values
        if not bool(_NUMBER_BYTE[columns].all()):  # (padding is 0, allowed there)
            return None
        plus = columns == ord("+")  # only in an exponent: Arrow reads no leading '+'
        if plus.any():
            before = np.zeros_like(plus)
            before[1:] = (columns[:-1] | 32) == ord("e")
            if not bool(before[plus].all()):
                return None
        matrix = np.ascontiguousarray(columns.T)
        width = matrix.shape[1]
        try:
            values = matrix.view(f"S{width}").ravel().astype(np.float64)
        except ValueError:  # '1.2.3', 'e5', '--1' ...: the general reader's error
            return None
        return values if bool(np.isfinite(values).all()) else None


_POWERS = np.array([float(10**k) for k in range(23)])  # exact doubles up to 1e22


def _decimals(columns: np.ndarray) -> np.ndarray | None:
    """Fields ``[-]digits[.digits]`` of at most 15 digits (:meth:`Fields.columns`: a
    row per byte position, zero padded), read as the nearest double, or None when some
    field is not one. Exact: the digits make an integer m < 2**53 and the value is
    m / 10**k, one correctly rounded division of two exact doubles (Clinger's fast
    path, what strtod does for such numbers). The byte checks and the digit counts are
    matrix-wide; the mantissa and the digits after the dot go a byte position at a
    time, updated in place where the byte is a digit."""
    width, rows = columns.shape
    digit = columns - np.uint8(48)  # wraps for bytes below '0'
    is_digit = digit < 10
    dot = columns == 46
    other = ~is_digit & ~dot & (columns != 0)
    other[0] &= columns[0] != 45  # a leading '-'
    if bool(other.any()):
        return None  # an exponent, '+' ...: numpy's cast reads those
    digits = is_digit.sum(axis=0, dtype=np.int8)  # at most 40 bytes a field
    if not bool(np.all((digits > 0) & (digits <= 15))) or int(dot.sum(axis=0).max()) > 1:
        return None
    mantissa = np.zeros(rows, np.int64)
    fraction = np.zeros(rows, np.int8)
    seen_dot = np.zeros(rows, bool)
    for k in range(width):
        np.multiply(mantissa, 10, out=mantissa, where=is_digit[k])
        np.add(mantissa, digit[k], out=mantissa, where=is_digit[k])
        fraction += is_digit[k] & seen_dot
        seen_dot |= dot[k]
    values = mantissa.astype(np.float64) / _POWERS[fraction]
    return np.where(columns[0] == 45, -values, values)


def fields(data: bytes, ncols: int) -> Fields | None:
    """A regular file's fields (``ncols`` on every line), or None."""
    if not data or not data.isascii() or b"\x7f" in data or b"#" in data:
        return None
    raw = np.frombuffer(data, np.uint8)
    separator = raw <= 32  # blank, tab, newline or a control byte
    if not separator[0] and not bool(np.any(separator[1:] & separator[:-1])):
        return _single_gap_fields(raw, separator, ncols)  # checks the separators' bytes
    if data.translate(None, _ALLOWED):
        return None  # a control byte
    return _any_gap_fields(data, raw, separator, ncols)


def _single_gap_fields(raw: np.ndarray, separator: np.ndarray, ncols: int) -> Fields | None:
    """:func:`fields` of the usual file, one separator byte between fields and lines:
    each separator ends a field and the next one starts after it, so the separators'
    positions (half :func:`_any_gap_fields`' edges) give every column's starts and
    lengths directly, written column by column into 32-bit column-major arrays."""
    sep = np.flatnonzero(separator).astype(np.int32)  # a small file is < 2 GB
    trailing = bool(separator[-1])  # the last field ends at a separator, else at the end
    count = len(sep) + (not trailing)
    if count == 0 or count % ncols:
        return None
    rows = count // ncols
    byte = raw[sep]
    newline = byte == 10
    if not bool(np.all(newline | (byte == 32) | (byte == 9))):
        return None  # a control byte (the file is ASCII: no other byte is <= 32)
    # the separator after each line's last field is its newline, the others are not; the
    # file may end after a last field, a newline or one blank
    last = newline[ncols - 1 :: ncols]
    if any(newline[c::ncols].any() for c in range(ncols - 1)):
        return None  # a line with more fields
    if not last[: rows - 1].all():
        return None  # a line with fewer fields
    start = np.empty((rows, ncols), np.int32, order="F")
    length = np.empty((rows, ncols), np.int32, order="F")
    start[0, 0] = 0
    np.add(sep[ncols - 1 :: ncols][: rows - 1], 1, out=start[1:, 0])
    for c in range(1, ncols):
        np.add(sep[c - 1 :: ncols], 1, out=start[:, c])
    for c in range(ncols):
        ends = sep[c::ncols]
        np.subtract(ends, start[: len(ends), c], out=length[: len(ends), c])
    if not trailing:  # the file's last field runs to its end
        length[-1, -1] = len(raw) - start[-1, -1]
    if int((start[:, -1] + length[:, -1] - start[:, 0]).max()) > 9_000:
        return None  # near MAX_LINE_LENGTH (10,000): leave it to the general reader
    return Fields(raw, start, length)


def _any_gap_fields(data: bytes, raw: np.ndarray, separator: np.ndarray, ncols: int):
    """:func:`fields` where blanks may be doubled: fields begin and end where runs of
    separators start and stop, the newlines counted in each gap."""
    edges = np.flatnonzero(separator[1:] != separator[:-1]) + 1
    if not separator[0]:
        edges = np.concatenate(([0], edges))
    if not separator[-1]:
        edges = np.append(edges, len(raw))
    starts, ends = edges[0::2], edges[1::2]
    if len(starts) == 0 or len(starts) % ncols:
        return None
    start = starts.reshape(-1, ncols)
    end = ends.reshape(-1, ncols)
    # every line holds ncols fields: the gap after a line's last field holds one newline
    # (more: a blank line), the gaps between its fields none, the file's end at most one
    if b"\n" in data[: int(starts[0])]:
        return None  # a blank line first
    after = np.append(starts[1:], len(raw))  # each gap runs to the next field
    if bool(np.all(after[:-1] - ends[:-1] == 1)):  # one separator byte: the usual file
        newlines = (raw[ends[:-1]] == 10).reshape(-1)
        newlines = np.append(newlines, data.count(b"\n", int(ends[-1])))
    else:  # wider gaps (several blanks): counted one by one
        if int((after - ends).max()) > 64:
            return None  # long runs of blanks: leave them to the general reader
        newlines = np.array(
            [data.count(b"\n", int(e), int(f)) for e, f in zip(ends, after, strict=True)]
        )
    newlines = newlines.reshape(-1, ncols)
    if newlines[:, :-1].any() or not newlines[:-1, -1].all() or newlines[-1, -1] > 1:
        return None  # a blank line, a missing or extra field
    if bool(np.any(newlines[:-1, -1] != 1)):
        return None
    if int((end[:, -1] - start[:, 0]).max()) > 9_000:
        return None  # near MAX_LINE_LENGTH (10,000): leave it to the general reader
    # column-major: each column's offsets contiguous, ~8x faster to gather by than a
    # strided column of the (lines x fields) matrix; 32-bit (a small file is < 2 GB)
    length = np.asfortranarray(end - start, dtype=np.int32)
    return Fields(raw, np.asfortranarray(start, dtype=np.int32), length)


def repeated_pair(need: np.ndarray, doc_hash: np.ndarray, rows: Fields, column: int) -> bool:
    """Whether some (need code, doc) pair occurs twice: equal 64-bit keys of the need
    code and the doc's hash (sorted within need blocks when the file keeps each need's
    lines together, :func:`~evaluation.trec.columns.blocks_with_repeats`), checked exactly."""
    candidates = blocks_with_repeats(need, doc_hash)
    if candidates is not None and len(candidates) == 0:
        return False
    if candidates is None:
        candidates = np.arange(len(need))
    key = doc_hash[candidates] ^ (
        need[candidates].astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F)
    )
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    for i in np.flatnonzero(ordered[1:] == ordered[:-1]).tolist():
        a, b = int(candidates[order[i]]), int(candidates[order[i + 1]])
        if need[a] == need[b] and rows.span(a, column) == rows.span(b, column):
            return True
    return False


@dataclass
class SmallQrels:
    """Qrels where they lie in the file: ``rows`` (:class:`Fields`), the distinct need
    ids (``needs``) and each line's index into them (``need``), ``relevance`` (int64)."""

    rows: Fields
    needs: list[str]
    need: np.ndarray
    relevance: np.ndarray
    doc_hash: np.ndarray


@dataclass
class SmallRun:
    """A run where it lies in the file, file order: ``rows`` (:class:`Fields`), the
    distinct need ids (``needs``) and each line's index into them (``need``), ``score``
    and ``rank`` (float64), the doc ids' hashes; ``tag`` (the last line's) and
    ``warnings``, as :class:`~evaluation.trec.Run` has them."""

    rows: Fields
    needs: list[str]
    need: np.ndarray
    score: np.ndarray
    rank: np.ndarray
    doc_hash: np.ndarray
    tag: str
    warnings: list[str] = field(default_factory=list)


_INTEGERS = re.compile(r"(?:-?[0-9]{1,18}\n)*-?[0-9]{1,18}")


def read_small_qrels(data: bytes) -> SmallQrels | None:
    """Qrels ``need iteration doc relevance`` when regular (module docstring), else None."""
    rows = fields(data, 4)
    if rows is None:
        return None
    relevance = [token.decode() for token in data.split()[3::4]]  # 4 fields a line
    if not _INTEGERS.fullmatch("\n".join(relevance)):
        return None
    needs, need = rows.values(0)
    doc_hash = rows.hashes(2)
    if repeated_pair(need, doc_hash, rows, 2):
        return None  # a doc judged twice: the general reader names the line
    values = np.array(list(map(int, relevance)), dtype=np.int64)
    return SmallQrels(rows, needs, need, values, doc_hash)


def read_small_run(data: bytes, name: str) -> SmallRun | None:
    """A run ``need Q0 doc rank score tag`` when regular (module docstring), else None.

    ``name`` is the file's name as the general reader's warnings show it.
    """
    rows = fields(data, 6)
    if rows is None:
        return None
    score = rows.numbers(4)
    rank = rows.numbers(3) if score is not None else None
    if score is None or rank is None:
        return None  # a header line, a score that is no number, nan, inf ...
    needs, need = rows.values(0)
    doc_hash = rows.hashes(2)
    if repeated_pair(need, doc_hash, rows, 2):
        return None  # a doc twice for one need: the general reader names the line
    last = len(rows.start) - 1
    tag = rows.text(last, 5)
    distinct = 1 if rows.all_equal(5, last) else len(rows.values(5)[0])
    warnings = []
    if distinct > 1:
        warnings.append(
            f"{name}: {distinct} different tags in the run; its runid is the last line's, {tag!r}"
        )
    return SmallRun(rows, needs, need, score, rank, doc_hash, tag, warnings)
