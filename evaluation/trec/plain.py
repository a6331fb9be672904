"""The smallest regular TREC files read with the standard library alone: the command
line's numpy-free path (:mod:`evaluation.measures.plain`) for one run of a TREC track's
size, where importing numpy (0.08-0.11 s on the benchmark machine) is most of the time
trec_eval takes for the whole job.

Hand-written, not numpy, for that reason alone; the per-line work stays in C (``split``,
``translate``, ``map``, slices, ``itertools.groupby``) and the Python loops run over
needs and over relevant documents. Only what :mod:`evaluation.trec.small` would take
is taken, in its narrowest form: ASCII with no control byte but tab and newline, no
``#``, blanks or tabs between fields and a newline after each line (the last may go
without), none before a line's first field or after its last, exactly four (qrels) or six (run) fields a line, relevances of at most 18
digits, scores and ranks made of digits, ``.``, ``-`` and exponents (what Python's
``float`` and the general reader both read as the nearest double), finite, no (need,
doc) pair twice. Anything else gives None and the caller goes on to the numpy readers,
which read it or hand it on to the general ones (the ``file:line: reason`` errors).
"""

from __future__ import annotations

import itertools
import math
import operator
import re

__all__ = [
    "PLAIN_BYTES",
    "PlainRun",
    "read_plain_qrels",
    "read_plain_run",
    "non_increasing",
    "strictly_increasing",
]

#: Files up to this size (run and qrels) may take the numpy-free path: below it a run is
#: read and scored before numpy would have been imported (docs/engine.md, Tenth round)
PLAIN_BYTES = 5 << 19  # 2.5 MB: 100 x 1,000 (3.3 MB) took as long as the numpy path

_ALLOWED = bytes([9, 10, *range(32, 127)])  # printable ASCII, blank, tab, newline
_NOT_SEPARATOR = bytes(b for b in range(256) if b not in (9, 10, 32))
_TAB_AS_BLANK = bytes.maketrans(b"\t", b" ")
_GAPS = re.compile(rb"[ \t]{2,}")
_NUMBER_BYTES = b"0123456789.-eE+"
_INTEGER_BYTES = b"0123456789-"
_MAX_NUMBER = 40  # longer scores and ranks go to the numpy reader (as it sends them on)
_MAX_LINE = 9_000  # near the general reader's MAX_LINE_LENGTH (10,000): left to it
# The last run's fields, held: freeing 300,000 small bytes objects one by one is ~10 ms
# of a 0.1 s command, which ends with os._exit (evaluation.__main__) and frees nothing.
# One run's at a time, so a library caller holds at most one more small file's fields.
_held: list[list[bytes]] = []


def _tokens(data: bytes, ncols: int) -> list[bytes] | None:
    """The fields of a regular file, line after line (``ncols`` a line), or None."""
    if not data or not data.isascii() or data.translate(None, _ALLOWED) or b"#" in data:
        return None
    tokens = data.split()
    rows, extra = divmod(len(tokens), ncols)
    if rows == 0 or extra:
        return None
    # one separator byte between fields, a newline after each line: the separators
    # alone, tabs as blanks, are the same line pattern repeated (a field not first on
    # its line, a missing or extra field, a doubled blank: a different string)
    expected = (b" " * (ncols - 1) + b"\n") * rows
    separators = data.translate(_TAB_AS_BLANK, _NOT_SEPARATOR)
    if separators != expected and separators + b"\n" != expected:
        # blanks doubled between fields (trec_eval's own results.test pads its scores):
        # the same check with each run of blanks and tabs as one blank
        if not _GAPS.search(data):
            return None
        separators = _GAPS.sub(b" ", data).translate(_TAB_AS_BLANK, _NOT_SEPARATOR)
        if separators != expected and separators + b"\n" != expected:
            return None
    return tokens


def _widest(column: list[bytes]) -> int:
    """The longest field's length; one comparison a line where all are the same field
    (a run's ``Q0`` and its tag)."""
    if column.count(column[-1]) == len(column):
        return len(column[-1])
    return max(map(len, column))


def _numbers(tokens: list[bytes], data: bytes) -> list[float] | None:
    """Scores or ranks as the nearest doubles, or None where one is not a plain finite
    number the general reader reads alike. Python's ``float`` reads more than it does:
    a leading ``+``, ``1_0`` (looked for only when ``data``, the file, holds a ``+`` or
    a ``_``), ``nan`` and ``inf`` (not finite)."""
    if b"+" in data or b"_" in data:
        joined = b"".join(tokens)
        if joined.translate(None, _NUMBER_BYTES):
            return None
        plus = joined.count(b"+")
        if plus and plus != joined.count(b"e+") + joined.count(b"E+"):
            return None  # a '+' only in an exponent: the general reader reads no leading '+'
    try:
        values = list(map(float, tokens))
    except ValueError:  # '1.2.3', 'e5', '--1', '1e' ...
        return None
    # a sum is finite only when every value is (a finite sum past float's range, inf:
    # the numpy reader answers)
    return values if math.isfinite(sum(values)) else None


class PlainRun:
    """A run as the numpy-free scorer reads it: ``needs``, for each need (in order of
    first appearance) its lines' doc ids, scores and file ranks in file order (None: 1,
    2, 3 ...); ``tag`` (the last line's) and ``warnings``, as
    :class:`~evaluation.trec.Run` has them."""

    __slots__ = ("needs", "tag", "warnings")

    def __init__(
        self,
        needs: dict[bytes, tuple[list[bytes], list[float], list[float] | None]],
        tag: str,
        warnings: list[str],
    ) -> None:
        self.needs, self.tag, self.warnings = needs, tag, warnings


def read_plain_run(data: bytes, name: str) -> PlainRun | None:
    """A run ``need Q0 doc rank score tag`` when regular (module docstring), else None.
    ``name``: the file's name as the general reader's warnings show it. A need's ranks
    are None where the file numbers its lines 1, 2, 3 ... (the usual run: nothing to
    read), else the numbers."""
    tokens = _tokens(data, 6)
    if tokens is None:
        return None
    score_text, rank_text = tokens[4::6], tokens[3::6]
    if max(map(len, score_text)) > _MAX_NUMBER:
        return None
    scores = _numbers(score_text, data)
    if scores is None:
        return None
    need_ids, docs, tags = tokens[0::6], tokens[2::6], tokens[5::6]
    blocks: list[tuple[bytes, int, int]] = []
    start = 0
    for need, lines in itertools.groupby(need_ids):  # the blocks of equal needs
        stop = start + len(list(lines))
        blocks.append((need, start, stop))
        start = stop
    longest = max(stop - start for _, start, stop in blocks)
    counting = [str(k).encode() for k in range(1, longest + 1)]
    ranks = None
    if len({need for need, _, _ in blocks}) != len(blocks) or any(
        rank_text[start:stop] != counting[: stop - start] for _, start, stop in blocks
    ):  # a need in several blocks, or ranks other than 1, 2, 3 ...: read them
        ranks = _numbers(rank_text, data) if max(map(len, rank_text)) <= _MAX_NUMBER else None
        if ranks is None:
            return None
    needs: dict[bytes, tuple[list[bytes], list[float], list[float] | None]] = {}
    for need, start, stop in blocks:
        block = (docs[start:stop], scores[start:stop], ranks and ranks[start:stop])
        if need in needs:  # a need in several blocks: its lines in file order
            for kept, more in zip(needs[need], block, strict=True):
                kept += more
        else:
            needs[need] = block
    widest = max(map(len, needs)) + _widest(tokens[1::6]) + max(map(len, docs))
    if widest + _widest(tags) + 2 * _MAX_NUMBER + 5 > _MAX_LINE:
        return None  # a line may be near the general reader's limit
    if any(len(set(doc)) != len(doc) for doc, _, _ in needs.values()):
        return None  # a doc twice for one need: the general reader names the line
    tag = tags[-1].decode()
    distinct = 1 if tags.count(tags[-1]) == len(tags) else len(set(tags))
    warnings = []
    if distinct > 1:
        warnings.append(
            f"{name}: {distinct} different tags in the run; its runid is the last line's, {tag!r}"
        )
    _held[:] = [tokens]
    return PlainRun(needs, tag, warnings)


def read_plain_qrels(data: bytes) -> dict[bytes, dict[bytes, int]] | None:
    """Qrels ``need iteration doc relevance`` when regular (module docstring): each
    need's judged docs and their relevance, needs in order of first appearance; else
    None (a doc judged twice included: the general reader names the line)."""
    tokens = _tokens(data, 4)
    if tokens is None:
        return None
    if len(data) > _MAX_LINE and max(map(len, tokens)) * 4 + 3 > _MAX_LINE:
        return None  # a line may be near the general reader's limit
    relevance = tokens[3::4]
    if b"".join(relevance).translate(None, _INTEGER_BYTES) or _widest(relevance) > 18:
        return None
    try:
        values = list(map(int, relevance))
    except ValueError:  # '-', '1-2' ...
        return None
    judged: dict[bytes, dict[bytes, int]] = {}
    for need, doc, value in zip(tokens[0::4], tokens[2::4], values, strict=True):
        judged.setdefault(need, {})[doc] = value
    if sum(map(len, judged.values())) != len(values):
        return None
    return judged


def non_increasing(values: list[float]) -> bool:
    """Whether no value is above the one before it (C's loop, not Python's)."""
    return all(map(operator.ge, values, values[1:]))


def strictly_increasing(values: list[float]) -> bool:
    """Whether each value is above the one before it."""
    return all(map(operator.lt, values, values[1:]))
