"""Freed heap memory given back to the system between the stages of a large run.

glibc keeps what ``free`` returns inside its heap for the next allocations (the
command line turns trimming and ``mmap`` off while it scores, so that arrays reuse
it: ``cli.score._reusing_freed_memory``). The heap still grows past what is alive:
the parse frees its columns as ~10 MB blocks, and the next 56 MB array (7M scores)
fits none of the holes, so it extends the heap while the holes stay resident. For
7M lines of MS MARCO ids the heap reached ~770 MB with ~450-510 MB in use, and that
gap was the command's peak memory. ``malloc_trim(0)`` hands the free pages inside
the heap back (they are faulted in again only where memory is reused): called where
a large run's columns have just gone, the command's peak went from ~830-860 to
~680-700 MB (docs/engine.md, "Seventh round"). Elsewhere (another C library) it does
nothing.
"""

from __future__ import annotations

import functools

__all__ = ["TRIM_LINES", "give_back_freed"]

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
