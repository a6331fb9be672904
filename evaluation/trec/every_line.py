"""The upload's check of every line of a run, as it streams in (``check_run(...,
every_line=True)``): whole lines a megabyte at a time, each piece parsed by the reader's
own rules (:func:`~evaluation.trec.columnar.read_run_table`) on two threads where the
machine has two cores, refusals named by their line in the file.

May import the rest of ``evaluation.trec``; nothing outside the engine.
"""

from __future__ import annotations

import re
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from evaluation.trec.columnar import ParsedWriter, read_run_table
from evaluation.trec.parsing import (
    _RUN,
    _WHITESPACE,
    MAX_LINE_LENGTH,
    _check_bytes,
    _explain,
    run_header,
)
from evaluation.trec.sources import PIECE, TrecFormatError
from evaluation.trec.threads import checkers

# every_line checks whole lines this many bytes at a time (a line with no end within them
# is longer than any line may be: its first bytes are checked, and fail). Small, since a
# piece of irregular lines (blank lines between them) goes through the normalisation,
# which holds ~50 bytes per byte of it; pieces of blank lines only are not parsed.
LINES_BYTES = PIECE
_FIRST_ON_LINE = re.compile(r"\(first on line (\d+)\)")


class EveryLine:
    """A run's lines, its head first, checked as :func:`read_run` checks a file
    (:func:`~evaluation.trec.columnar.read_run_table`, on :data:`LINES_BYTES` at a
    time), with the errors' line numbers counted from the start of the file; each
    piece's table written to ``parsed`` when given. A piece's lines are copied once,
    from the pieces read (a run's 292 MB pass through memory fewer times).

    Pieces are checked on :func:`~evaluation.trec.threads.checkers` threads at once
    (a piece's line numbers are known before its check: its newlines are counted as it
    is handed over) and taken back in file order, so the first bad line of the file is
    the one refused and the parse is written in order. Call :meth:`finish` at the end,
    or :meth:`close` on the way out of a failure."""

    def __init__(self, name: str, head: bytes, parsed: ParsedWriter | None = None) -> None:
        self.name, self.before = name, 0  # lines of the file before the pending ones
        self.pending = bytearray(head)
        self.needs: set[str] = set()  # the need ids of the lines checked so far
        self.parsed = parsed
        threads = checkers()
        self._checking = ThreadPoolExecutor(threads, thread_name_prefix="run-check")
        self._checked: deque[Future] = deque()
        self._ahead = threads  # pieces checked while the oldest is taken back

    def add(self, piece: bytes) -> None:
        if len(self.pending) + len(piece) < LINES_BYTES:
            self.pending += piece
            return
        end = piece.rfind(b"\n") + 1
        if end == 0:  # no line ends in this piece: what is pending holds the lines
            self.pending += piece
            end = self.pending.rfind(b"\n") + 1
            if end == 0:  # one line, longer than any may be: the explainer says so (raises)
                self._take_back(0)  # a bad line before it is named first
                line = bytes(self.pending[: MAX_LINE_LENGTH + 1]) + b"\n"
                self._check(line, self.before, explain=True)
            lines = bytes(self.pending[:end])
            del self.pending[:end]
        else:
            lines = b"".join((self.pending, memoryview(piece)[:end]))
            self.pending = bytearray(memoryview(piece)[end:])
        self._hand_over(lines)

    def finish(self) -> None:
        self._hand_over(bytes(self.pending))
        self.pending.clear()
        self._take_back(0)
        self.close()

    def close(self) -> None:
        """Stop checking: pieces not started are dropped, the threads end."""
        for check in self._checked:
            check.cancel()
        self._checked.clear()
        self._checking.shutdown(wait=True)

    def _hand_over(self, lines: bytes) -> None:
        self._checked.append(self._checking.submit(self._check, lines, self.before))
        # numpy counts a megabyte of newlines several times faster than bytes.count
        self.before += int(np.count_nonzero(np.frombuffer(lines, np.uint8) == 10))
        self._take_back(self._ahead)

    def _take_back(self, keep: int) -> None:
        """Take back checked pieces, oldest first, until ``keep`` are left (raising the
        oldest piece's refusal)."""
        try:
            while len(self._checked) > keep:
                found = self._checked.popleft().result()
                if found is not None:
                    needs, table = found
                    self.needs.update(needs)
                    if self.parsed is not None:
                        self.parsed.write(table)
        except BaseException:
            self.close()
            raise

    def _check(self, lines: bytes, before: int, explain: bool = False):
        """The need ids and parsed table of ``lines`` (None for blank or comment lines
        only), the file's first ``before`` lines before them."""
        # Bare newlines before and after the other lines (a bomb's filler, a run's
        # trailing blank lines) are counted, not parsed: the rest then usually takes
        # the reader's fast path, not its normalisation (~50 bytes held per byte).
        body = lines
        if lines[:1] == b"\n" or lines[-2:] == b"\n\n" or lines[-1:] != b"\n":
            body = lines.rstrip(b"\n")
            lead = len(body) - len(body.lstrip(b"\n"))
            body, before = body[lead:] + b"\n", before + lead
        try:
            if body == b"\n":
                pass
            elif explain and b"\0" in body:  # the reader looks for NUL bytes first
                _check_bytes(body, self.name)
            elif explain or (before and run_header(body) is not None):  # a header is
                _explain(body, self.name, _RUN, must_fail=True)  # line 1 of the file only
            elif _has_content(body):
                run, table = read_run_table(body, self.name)
                return run.needs, table
            elif _longest_line(body) > MAX_LINE_LENGTH:  # blank or comment lines only
                _explain(body, self.name, _RUN, must_fail=True)
        except TrecFormatError as error:
            if error.line is None:
                raise
            reason = _FIRST_ON_LINE.sub(
                lambda m: f"(first on line {int(m.group(1)) + before})", error.reason
            )
            raise TrecFormatError(self.name, error.line + before, reason) from None
        return None


def _has_content(lines: bytes) -> bool:
    """Whether some line is neither blank nor a comment (vectorised: a piece of blank
    lines costs a few numpy passes, not a parse; a piece whose first line has content,
    as nearly every piece of a run does, costs none)."""
    first = lines.lstrip(_WHITESPACE + b"\n")[:1]
    if first and first != b"#":
        return True
    if not first:
        return False
    squeezed = np.frombuffer(b"\n" + lines.translate(None, _WHITESPACE), np.uint8)
    after_newline = squeezed[1:][squeezed[:-1] == 10]
    return bool(((after_newline != 10) & (after_newline != 35)).any())


def _longest_line(lines: bytes) -> int:
    ends = np.flatnonzero(np.frombuffer(lines + b"\n", np.uint8) == 10)
    return int(np.diff(ends, prepend=-1).max()) - 1
