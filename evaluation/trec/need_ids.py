"""A block of lines' distinct first fields, vectorised: a run's need ids, read while an
upload is streamed through (``readers.check_run``).
"""

from __future__ import annotations

import numpy as np

NEED_ID_LIMIT = 100  # the platform stores need ids of at most 100 characters
LEADING_BLANKS = 64  # blanks before a line's first field that first_fields steps over


def first_fields(lines: bytes) -> set[bytes]:
    """The distinct first fields of complete lines (``lines`` ends with a newline),
    vectorised: a run's need ids, read while an upload is streamed through. A field is
    found a column at a time (one gather per character of the longest field), and only
    the lines whose field differs from the previous line's are kept, so a run grouped
    by need costs a few numpy passes per megabyte; blank lines cost one boolean pass. A
    field after more than ``LEADING_BLANKS`` blanks, or longer than ``NEED_ID_LIMIT``,
    is left out (no need has such an id); nothing else is: comment words come back too.
    """
    raw = np.frombuffer(lines, np.uint8)
    if not len(raw):
        return set()
    last = len(raw) - 1
    newline = raw == 10
    if np.count_nonzero(newline) * 8 <= len(raw):  # run lines: work on line starts only
        starts = np.flatnonzero(newline[:-1]).astype(np.int32)
        del newline
        starts = np.concatenate(([0], starts + 1)).astype(np.int32)
        first = raw[starts]
        indented = starts[(first <= 32) & (first != 10)]
        starts = starts[first > 32]
    else:  # short lines (blank ones...): boolean passes, so memory stays bounded
        line_start = np.empty(len(raw), bool)
        line_start[0] = True
        line_start[1:] = newline[:-1]
        del newline
        starts = np.flatnonzero(line_start & (raw > 32)).astype(np.int32)
        indented = np.flatnonzero(line_start & (raw <= 32) & (raw != 10)).astype(np.int32)
        del line_start
    if len(indented):  # rare: step over the leading blanks, a column at a time
        for _ in range(LEADING_BLANKS):
            byte = raw[np.minimum(indented, last)]
            blank = (byte <= 32) & (byte != 10)
            if not blank.any():
                break
            indented += blank
        indented = indented[raw[np.minimum(indented, last)] > 32]
        starts = np.sort(np.concatenate([starts, indented]))
    found: set[bytes] = set()
    if not len(starts):
        return found
    alive = np.ones(len(starts), bool)
    length = np.zeros(len(starts), np.int32)
    columns = []
    for k in range(NEED_ID_LIMIT + 1):
        byte = raw[np.minimum(starts + k, last)]
        ended = alive & (byte <= 32)
        length[ended] = k
        alive &= ~ended
        if not alive.any():
            break
        columns.append(np.where(alive, byte, 0))
    keep = ~alive  # a field past the limit matches no need
    if columns:
        table = np.stack(columns, axis=1)
        changed = np.ones(len(starts), bool)
        changed[1:] = (table[1:] != table[:-1]).any(axis=1)
        keep &= changed
        if keep.sum() > 64:  # an unsorted run: a set entry per distinct field, not per line
            rows = np.flatnonzero(keep)
            with np.errstate(over="ignore"):  # a 64-bit polynomial hash, wrapping
                weights = np.uint64(1099511628211) ** np.arange(table.shape[1], dtype=np.uint64)
                hashes = (table[rows].astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64)
            keep[:] = False
            keep[rows[np.unique(hashes, return_index=True)[1]]] = True
    kept = zip(starts[keep].tolist(), length[keep].tolist(), strict=True)
    found.update(lines[start : start + size] for start, size in kept)
    return found
