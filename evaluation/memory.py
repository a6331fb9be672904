"""Freed heap memory given back to the system between the stages of a large run.

glibc keeps what ``free`` returns inside its heap for the next allocations (the
command line turns trimming and ``mmap`` off while it scores, so that arrays reuse
it: :func:`reusing_freed_memory`). The heap still grows past what is alive:
the parse frees its columns as ~10 MB blocks, and the next 56 MB array (7M scores)
fits none of the holes, so it extends the heap while the holes stay resident. For
7M lines of MS MARCO ids the heap reached ~770 MB with ~450-510 MB in use, and that
gap was the command's peak memory. ``malloc_trim(0)`` hands the free pages inside
the heap back (they are faulted in again only where memory is reused): called where
a large run's columns have just gone, the command's peak went from ~830-860 to
~680-700 MB (docs/engine.md, "Seventh round"). Once the command had grown lighter
(no pandas, fewer temporaries), the trim after the parse alone kept it there
(650-670 MB) and the two later ones only cost page faults: 0.06-0.1 s of 1.6 s
(docs/engine.md, "Eighth round"). Elsewhere (another C library) it does nothing.

Also here, for the command line and the platform's scoring worker alike: numpy's
huge-page requests switched off for a large run (:func:`without_huge_pages`), glibc's
heap kept for reuse (:func:`reusing_freed_memory`), and both with the heap given back
after (:func:`scoring_a_large_run`, the worker's: a long-lived process).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator

__all__ = [
    "TRIM_LINES",
    "arrow_on_the_heap",
    "give_back_freed",
    "heap_top_padded",
    "keep_heap",
    "reusing_freed_memory",
    "scoring_a_large_run",
    "without_huge_pages",
]

# Below this many lines a run's columns are a few MB: trimming would only cost faults.
TRIM_LINES = 1_000_000


def give_back_freed(lines: int) -> bool:
    """Give the heap's free pages back when a run of ``lines`` lines has just freed
    columns; True when the C library was asked to (glibc, ``lines >= TRIM_LINES``)."""
    if lines < TRIM_LINES:
        return False
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


@functools.cache
def _malloc_trim():
    try:
        import ctypes  # here: a small run never needs it

        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):  # not glibc (musl has it, macOS not)
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


@contextlib.contextmanager
def without_huge_pages() -> Iterator[None]:
    """Stop numpy asking for transparent huge pages while a large run is read and scored.

    numpy ``madvise``s every large array for huge pages. Where the kernel's THP
    defrag setting is ``madvise`` (Debian's default), each fresh 28-56 MB array
    of a 7M-line run then waits for synchronous memory compaction: 0.3-1.6 s of
    kernel time per run on the benchmark machine, against ~0.5 s without
    (docs/engine.md, Speed). The flag is process-wide, so it is restored after.
    """
    import numpy as np  # here: the command line's numpy-free path imports this module

    multiarray = getattr(getattr(np, "_core", None), "multiarray", None)
    setter = getattr(multiarray, "_set_madvise_hugepage", None)
    if setter is None:  # a numpy without the switch: nothing to do
        yield
        return
    previous = setter(False)
    try:
        yield
    finally:
        setter(previous)


# glibc's mallopt parameters and their defaults (malloc.h, mallopt(3))
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_MAX, _M_ARENA_MAX = -1, -2, -4, -8
_DEFAULT_TRIM_THRESHOLD, _DEFAULT_TOP_PAD, _DEFAULT_MMAP_MAX = 128 * 1024, 128 * 1024, 65536


@functools.cache
def _mallopt():
    import ctypes  # here: 4 ms of a small run's start, and only glibc has it

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):  # not glibc
        return None
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt


@contextlib.contextmanager
def reusing_freed_memory() -> Iterator[None]:
    """Let glibc keep freed memory for the next array while a large run is scored.

    By default glibc serves every array above 32 MB (a 7M-line run's scores,
    ranks, keys ...) with a fresh ``mmap`` and returns it on free, so each new
    array pays a page fault per 4 KB again: about half of the 7M-line command's
    time on the benchmark machine, where a fault costs ~5 us (docs/engine.md,
    Speed). With ``mmap`` off and no trimming, freed arrays stay in the heap
    and are reused. One arena for all threads: Arrow's parsing threads otherwise
    allocate from arenas of their own, whose freed memory the main thread's arrays
    cannot reuse (7M lines of MS MARCO ids: peak ~80-100 MB lower). Restored after (the
    arena limit to glibc's own, 8 per CPU); a C library without ``mallopt`` is left
    alone.
    """
    mallopt = _mallopt()
    if mallopt is None:
        yield
        return
    _keep_freed(mallopt)
    try:
        yield
    finally:
        if not _heap_kept:  # a kept heap (keep_heap) stays so
            mallopt(_M_MMAP_MAX, _DEFAULT_MMAP_MAX)
            mallopt(_M_TRIM_THRESHOLD, _DEFAULT_TRIM_THRESHOLD)
            mallopt(_M_ARENA_MAX, 8 * (os.cpu_count() or 1))


def _keep_freed(mallopt) -> None:
    mallopt(_M_MMAP_MAX, 0)
    mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)
    mallopt(_M_ARENA_MAX, 1)


_heap_kept = False  # keep_heap() was called: this process never hands its heap back


def keep_heap(megabytes: int) -> bool:
    """Keep this process's heap for good, ``megabytes`` of it touched now: for a
    long-lived worker that scores large runs, so that they find their memory resident
    instead of faulting it in afresh (the JVM's ``AlwaysPreTouch``, and no uncommit).

    glibc then serves every allocation from its one heap and never trims it by itself
    (no ``mmap``, no trim threshold, one arena; :func:`scoring_a_large_run` skips its
    final trim), and ``megabytes`` are allocated, written and freed here, so the heap
    holds them from the start. The trim after a large run's parse (:func:`give_back_freed`)
    still hands the heap's free pages back, so between runs the resident memory stays
    near what the run's last stage used (640 MB kept: ~870 MB at start, ~1,000 MB after
    a 7M-line run and after each one that follows; without that trim it grew by ~100 MB
    a run: docs/scaling.md, Ninth round).

    Where fresh memory is dear (a VM whose host takes freed pages back: ~2-3 ms per MB on
    the benchmark machine, 4 KB faults at ~0.5 us on bare metal), a 7M-line run scored in
    a fresh worker: 3.8-3.95 -> 2.2-2.6 s with 512 MB (docs/scaling.md, Sixth round); 640
    MB, as docker-compose sets, also holds that run's measures (Ninth round). False,
    doing nothing, where the C library is not glibc or ``megabytes`` is 0."""
    global _heap_kept
    mallopt = _mallopt()
    if mallopt is None or megabytes <= 0:
        return False
    _keep_freed(mallopt)
    _heap_kept = True
    touched = bytearray(megabytes << 20)  # zeroed: every page written
    del touched
    return True


# What glibc keeps above its heap's top while a large body streams in.
BODY_TOP_PAD = 64 * 1024 * 1024


@contextlib.contextmanager
def heap_top_padded(pad: int = BODY_TOP_PAD) -> Iterator[None]:
    """glibc grows its heap ``pad`` bytes at a time, and trims it only down to ``pad``
    free bytes above the top, while a large request body is received.

    A body read from a socket in small pieces (gunicorn's reader, Django's multipart
    parser) allocates and frees its buffers at the heap's top, and by default glibc
    trims the top on each such free and grows it again on the next allocation: a page
    fault per 4 KB every time. A 292 MB upload took ~250,000 faults (1 GB) in the web
    process, 1.9 s of system time on the benchmark machine; with 64 MB of top pad, a few
    thousand (docs/scaling.md, Sixth round). The pad goes back to glibc's default
    after; the next trim returns what is above it. Setting it also ends glibc's dynamic
    mmap threshold for the process (as any mallopt of these does): it stays where it had
    got to. Elsewhere (not glibc) nothing changes.
    """
    mallopt = _mallopt()
    if mallopt is None:
        yield
        return
    mallopt(_M_TOP_PAD, pad)
    try:
        yield
    finally:
        mallopt(_M_TOP_PAD, _DEFAULT_TOP_PAD)


@contextlib.contextmanager
def arrow_on_the_heap() -> Iterator[None]:
    """Arrow allocates from glibc's heap (its system pool) meanwhile, as the command line
    does (``ARROW_DEFAULT_MEMORY_POOL=system``): what the parse frees, numpy's arrays take
    next, where mimalloc kept its own. The platform bench's 7M-line run read in-process:
    1.07-1.26 -> 0.92-0.95 s (docs/scaling.md, Fifth round). The pool before is restored
    after (buffers still alive keep the pool they came from)."""
    import pyarrow as pa

    previous = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(previous)


@contextlib.contextmanager
def scoring_a_large_run() -> Iterator[None]:
    """:func:`without_huge_pages`, :func:`reusing_freed_memory` and
    :func:`arrow_on_the_heap` for a process that goes on after the run (the scoring
    worker), whose freed heap is handed back at the end. The platform bench's 7M-line run
    in-process: 3.0 -> 2.2-2.5 s (docs/scaling.md)."""
    try:
        with without_huge_pages(), reusing_freed_memory(), arrow_on_the_heap():
            yield
    finally:
        if not _heap_kept:  # kept (keep_heap): resident for the next run
            give_back_freed(TRIM_LINES)  # as after a large run, whatever this one's size
