"""Doc-id hashes and the repeated (need, doc) check: 64-bit hashes of Arrow string
columns that find repeated pairs in a file and pick the run lines the qrels join looks
at; candidates are always compared exactly. Vectorised, a chunk at a time.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from evaluation.trec.arrays import all_distinct, run_starts
from evaluation.trec.threads import on_two_threads

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
