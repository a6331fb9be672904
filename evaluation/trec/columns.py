"""Arrow columns as numpy arrays, and the doc-id hashes that find repeated
(need, doc) pairs in a file and pick the run lines the qrels join looks at.

Used by :mod:`evaluation.trec.readers` (reading) and
:mod:`evaluation.measures.ranking` (ordering and the qrels join); everything
here is vectorised.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import pyarrow as pa


def to_numpy(
    column: pa.ChunkedArray | pa.Array, dtype: type, fill: float | None = None
) -> np.ndarray:
    """``column.to_numpy()`` (nulls as NaN, or as ``fill``), built chunk by chunk into one
    array.

    ``ChunkedArray.to_numpy`` is several times slower than copying the chunks
    one by one: 0.13-0.16 s against 0.02 s for a 7M-row float64 column of 14
    chunks (pyarrow 26). ``dtype`` is the numpy type of the column's values.
    """
    if isinstance(column, pa.Array):
        return array_values(column, fill).astype(dtype, copy=False)
    out = np.empty(len(column), dtype)
    at = 0
    for chunk in column.chunks:
        out[at : at + len(chunk)] = array_values(chunk, fill)
        at += len(chunk)
    return out


def array_values(array: pa.Array, fill: float | None = None) -> np.ndarray:
    """An Arrow array's values as numpy, nulls as NaN (float64, as pyarrow's ``to_numpy``
    gives them) or as ``fill``: for integers and floats without nulls a read-only view of
    the buffer, as ``to_numpy`` gives too, but without importing pandas as it does (0.12-0.19
    s of a command that needs no pandas); other types through ``to_numpy``."""
    kind = array.type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        return array.to_numpy(zero_copy_only=False)
    letter = "f" if pa.types.is_floating(kind) else "i" if pa.types.is_signed_integer(kind) else "u"
    dtype = np.dtype(f"{letter}{kind.bit_width // 8}")
    out = np.frombuffer(array.buffers()[1], dtype, len(array), array.offset * dtype.itemsize)
    if not array.null_count:
        return out
    bits = np.frombuffer(array.buffers()[0], np.uint8)
    valid = np.unpackbits(bits, bitorder="little")[array.offset : array.offset + len(array)]
    out = out.astype(np.float64) if fill is None else out.copy()
    out[valid == 0] = np.nan if fill is None else fill
    return out


def arrow_array(values: np.ndarray) -> pa.Array:
    """A numeric numpy array as an Arrow array over the same memory, without importing
    pandas as ``pa.array`` does."""
    values = np.ascontiguousarray(values)
    kind = pa.from_numpy_dtype(values.dtype)
    return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(values)])


def take(column: pa.ChunkedArray, rows: np.ndarray) -> pa.ChunkedArray:
    """``column.take(rows)`` without joining the chunks first.

    Arrow's take on a chunked string column concatenates every chunk before
    picking (a copy of all 7M doc ids of a large run, ~0.17 s in fresh
    memory) even to pick a few thousand rows. Here each chunk gives its own
    rows; the picks are put back in the order asked for when that differs.
    """
    rows = np.asarray(rows, dtype=np.int64)
    if column.num_chunks <= 1 or len(rows) == 0:
        return column.take(arrow_array(rows))
    bounds = np.cumsum([len(chunk) for chunk in column.chunks])
    chunk_of = np.searchsorted(bounds, rows, side="right")
    grouped = bool(np.all(chunk_of[1:] >= chunk_of[:-1]))
    order = None if grouped else np.argsort(chunk_of, kind="stable")
    if order is not None:
        rows, chunk_of = rows[order], chunk_of[order]
    cuts = np.searchsorted(chunk_of, np.arange(column.num_chunks + 1))
    starts = np.concatenate(([0], bounds[:-1]))
    pieces = [
        column.chunk(c).take(arrow_array(rows[cuts[c] : cuts[c + 1]] - starts[c]))
        for c in range(column.num_chunks)
        if cuts[c + 1] > cuts[c]
    ]
    picked = pa.chunked_array(pieces, type=column.type)
    if order is None:
        return picked
    back = np.empty(len(order), np.int64)
    back[order] = np.arange(len(order))
    return picked.combine_chunks().take(arrow_array(back)).cast(column.type)


# ------------------------------------------------------------------------ hashing


# _KEEP[r]: the top r bytes of a big-endian 64-bit word (r = 0..8)
_KEEP = np.array([((1 << (8 * r)) - 1) << (8 * (8 - r)) for r in range(9)], dtype=np.uint64)


def string_hash(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A 64-bit hash of every string, folded over its bytes 8 at a time.

    Used only to find duplicate doc ids (candidates are then compared exactly);
    one numpy gather per 8 bytes of the longest id, chunk by chunk, beats
    building a dictionary of millions of distinct doc ids. Each step reads an
    unaligned big-endian word at the string's offset and masks the bytes past
    its end (ids hold no NUL byte, so zero padding is unambiguous).
    """
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    out = np.empty(sum(len(chunk) for chunk in chunks), np.uint64)  # no concatenated copy
    starts = np.cumsum([0] + [len(chunk) for chunk in chunks]).tolist()

    def hash_chunks(numbers: list[int]) -> None:
        for number in numbers:
            chunk, at = chunks[number], starts[number]
            if len(chunk) == 0:
                continue
            width = np.int64 if chunk.type == pa.large_string() else np.int32
            offsets = np.frombuffer(chunk.buffers()[1], width)[
                chunk.offset : chunk.offset + len(chunk) + 1
            ]
            first, end = int(offsets[0]), int(offsets[-1])
            data = np.frombuffer(chunk.buffers()[2], np.uint8, end - first, first)
            lengths = np.diff(offsets)
            width = int(lengths[0])
            if 0 < width <= 64 and int(lengths.min()) == int(lengths.max()):
                # ids of one length (MS MARCO's, UUIDs ...) lie as rows of a matrix
                out[at : at + len(chunk)] = _fixed_width_hash(data.reshape(len(chunk), width))
            else:
                out[at : at + len(chunk)] = span_hash(data, offsets[:-1] - first, lengths)

    on_two_threads(hash_chunks, list(range(len(chunks))), [len(chunk) for chunk in chunks])
    return out


T = TypeVar("T")

# from this many rows, work that splits (string_hash's chunks) goes on two threads
THREAD_ROWS = 1 << 20


def on_two_threads(work: Callable[[list], None], items: list, weights: list[int]) -> None:
    """``work(items)``, or, from :data:`THREAD_ROWS` of weight on a machine with two
    CPUs, ``work`` of each half of ``items`` (cut by weight) at once, one on a second
    thread: numpy lets go of the GIL in its loops, so a command whose Arrow parse is
    done uses both cores (a 7M-line run's doc-id hashes, for one). An error on
    either thread is raised here, once both are done."""
    total = sum(weights)
    if total < THREAD_ROWS or len(items) < 2 or _cpus() < 2:
        work(items)
        return
    cut = int(np.searchsorted(np.cumsum(weights), total / 2)) + 1
    cut = min(max(cut, 1), len(items) - 1)
    failed: list[BaseException] = []

    def second() -> None:
        try:
            work(items[cut:])
        except BaseException as err:  # raised on the caller's thread below
            failed.append(err)

    thread = threading.Thread(target=second, daemon=True)
    thread.start()
    try:
        work(items[:cut])
    finally:
        thread.join()
    if failed:
        raise failed[0]


def in_background(work: Callable[[], T]) -> Callable[[], T]:
    """``work()`` started on a second thread (for work that lets go of the GIL: Arrow's
    kernels, numpy's loops) where the machine has two CPUs, else run here; returns the
    function that waits for its result (raising its error, if any)."""
    if _cpus() < 2:
        result = work()
        return lambda: result
    box: list = []

    def run() -> None:
        try:
            box.append((True, work()))
        except BaseException as err:  # raised by the waiting function
            box.append((False, err))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()

    def wait() -> T:
        thread.join()
        done, value = box[0]
        if not done:
            raise value
        return value

    return wait


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _fixed_width_hash(rows: np.ndarray) -> np.ndarray:
    """:func:`span_hash` of strings of one length, the rows of ``rows`` (n x width
    uint8): the same values, each 8-byte word read in place as a strided big-endian
    view (no gathers, no masks but the last word's): a third of the general hash's time
    on 7M MS MARCO ids. A slice of rows at a time, so the temporaries (the words, the
    shifted hash) stay in cache and no 7M-entry one is made at the command's peak."""
    n, width = rows.shape
    prime, shift = np.uint64(0x100000001B3), np.uint64(29)
    out = np.empty(n, np.uint64)
    step = _HASH_SLICE
    word = np.empty(min(n, step), np.uint64)
    mixed = np.empty(min(n, step), np.uint64)
    for lo in range(0, n, step):
        part = rows[lo : lo + step]
        m = len(part)
        hashed = out[lo : lo + m]
        hashed[:] = width * 0x9E3779B97F4A7C15 % 2**64  # as span_hash's
        for j in range(0, width, 8):
            if width - j >= 8:
                view = np.ndarray((m,), ">u8", part, offset=j, strides=(width,))
            else:  # the last, partial word: its bytes at the top, zeros below
                tail = np.zeros((m, 8), np.uint8)
                tail[:, : width - j] = part[:, j:]
                view = tail.view(">u8").ravel()
            word[:m] = view  # to native order
            hashed ^= word[:m]
            hashed *= prime
            np.right_shift(hashed, shift, out=mixed[:m])
            hashed ^= mixed[:m]
    return out


# rows hashed at a time by _fixed_width_hash (2 MB of 64-bit temporaries)
_HASH_SLICE = 1 << 18


def span_hash(
    data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, padded: np.ndarray | None = None
) -> np.ndarray:
    """:func:`string_hash` of the byte spans ``data[start : start + length]`` (uint8
    ``data``, no NUL byte in a span): the Arrow columns' hash for ids of mixed lengths. ``padded``: ``data``
    followed by at least 8 zeros, when the caller has such a copy (else one is made)."""
    end = len(data)
    if padded is None or len(padded) < end + 8:
        padded = np.zeros(end + 8, np.uint8)
        padded[:end] = data
    words = np.ndarray((end + 1,), ">u8", padded, strides=(1,))
    prime = np.uint64(0x100000001B3)
    hashed = lengths.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    for j in range(0, int(lengths.max()) if len(lengths) else 0, 8):
        word = words[np.minimum(starts + j, end)] & _KEEP[np.clip(lengths - j, 0, 8)]
        mixed = (hashed ^ word.astype(np.uint64)) * prime
        mixed ^= mixed >> np.uint64(29)
        # strings already finished keep their hash, whatever the longest one
        hashed = mixed if j == 0 else np.where(lengths > j, mixed, hashed)
    return hashed


def pair_key(need_codes: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """A 64-bit key of (need code, doc hash): equal pairs give equal keys."""
    key = need_codes.astype(np.uint64)
    key *= np.uint64(0xC2B2AE3D27D4EB4F)
    key ^= hashes  # in place: one 7M-entry array for a run's keys, not three
    return key


def first_duplicate(
    need_codes: np.ndarray, docs: pa.ChunkedArray, hashes: np.ndarray | None = None
) -> tuple[int, int] | None:
    """Rows (first, second) of the first repeated (need, doc) pair in file order, if any.

    ``hashes``: :func:`string_hash` of ``docs``, when the caller has it.
    Candidates come from :func:`blocks_with_repeats` when the file keeps each
    need's lines together (every run and qrels file seen in practice), else
    from one sort of all (need, doc) hashes; either way they are compared exactly.
    """
    if hashes is None:
        hashes = string_hash(docs)
    rows = blocks_with_repeats(need_codes, hashes)
    if rows is not None:
        if len(rows) == 0:
            return None
        need_codes, hashes = need_codes[rows], hashes[rows]
    key = pair_key(need_codes, hashes)
    ordered = np.sort(key)
    if not (ordered[1:] == ordered[:-1]).any():
        return None
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    found = []
    for i in np.flatnonzero(ordered[1:] == ordered[:-1]):  # candidates only; collisions checked
        a, b = int(order[i]), int(order[i + 1])
        if need_codes[a] != need_codes[b]:
            continue
        if rows is not None:
            a, b = int(rows[a]), int(rows[b])  # back to rows of the whole file
        if docs[a].as_py() == docs[b].as_py():
            found.append((min(a, b), max(a, b)))
    if not found:
        return None
    # the first line that repeats an earlier one, as a reader going down the file sees it
    second = min(b for _, b in found)
    first = min(a for a, b in found if b == second)
    return first, second


def codes_present(codes: np.ndarray, count: int) -> np.ndarray:
    """Which of ``count`` codes occur in ``codes`` (flags; -1, a missing value, is
    skipped): set by code, not ``np.unique``, so no sort of 7M codes, and a slice at a time,
    so no 7M-entry temporary (``bincount``'s would be 56 MB of int64 at a command's peak)."""
    present = np.zeros(count, bool)
    for start in range(0, len(codes), 1 << 20):
        piece = codes[start : start + (1 << 20)]
        present[piece[piece >= 0]] = True
    return present


def run_starts(values: np.ndarray) -> np.ndarray:
    """Positions where a run of equal values begins (0 first; empty for no values)."""
    if len(values) == 0:
        return np.zeros(0, np.int64)
    start = np.empty(len(values), bool)
    start[0] = True
    np.not_equal(values[1:], values[:-1], out=start[1:])
    return np.flatnonzero(start)


def all_distinct(values: np.ndarray) -> bool:
    """Whether no value occurs twice: a sort and one comparison of neighbours."""
    ordered = np.sort(values)
    return not bool(np.any(ordered[1:] == ordered[:-1]))


def blocks_with_repeats(need_codes: np.ndarray, hashes: np.ndarray) -> np.ndarray | None:
    """Rows of the need blocks holding a repeated 32-bit doc hash, or None.

    When every need's lines form one block, a repeated pair lies inside one
    block: the blocks become the rows of a (needs x longest block) grid of
    32-bit folded hashes (padded), each grid row is sorted on its own (cache
    sized, ~10x faster than one sort of all 7M keys of a large run), and only
    the blocks with two equal neighbours go on to the exact check. None when
    a need's lines are split or the blocks are too uneven for a grid.
    """
    n = len(need_codes)
    if n == 0:
        return np.zeros(0, np.int64)
    starts = run_starts(need_codes)
    blocks = len(starts)
    if blocks > 1 and not all_distinct(need_codes[starts]):
        return None  # some need's lines are split over several blocks
    lengths = np.diff(np.append(starts, n))
    width = int(lengths.max())
    if blocks * width > 2 * n + 4096:
        return None  # a few long blocks among many short ones: the grid would be mostly padding
    folded = np.empty(n, np.uint32)  # a slice at a time: no 7M-entry 64-bit temporaries
    for lo in range(0, n, _HASH_SLICE):
        part = hashes[lo : lo + _HASH_SLICE]
        folded[lo : lo + len(part)] = part ^ (part >> np.uint64(32))
    if blocks * width == n:
        grid = folded.reshape(blocks, width)
    else:
        grid = np.full(blocks * width, np.iinfo(np.uint32).max, np.uint32)
        grid[np.arange(n) + np.repeat(np.arange(blocks) * width - starts, lengths)] = folded
        grid = grid.reshape(blocks, width)
    grid.sort(axis=1)
    equal = grid[:, 1:] == grid[:, :-1]
    if blocks * width != n:
        equal &= np.arange(1, width) < lengths[:, None]  # not the padding
    flagged = np.flatnonzero(equal.any(axis=1))
    if len(flagged) == 0:
        return np.zeros(0, np.int64)
    return np.concatenate([np.arange(starts[b], starts[b] + lengths[b]) for b in flagged])


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
