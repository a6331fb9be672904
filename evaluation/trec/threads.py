"""Work on a second thread where the machine has two CPUs: numpy's loops and Arrow's
kernels let go of the GIL, so a command whose Arrow parse is done uses both cores.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TypeVar

import numpy as np

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


def checkers() -> int:
    """Threads that check a streamed file's pieces at once: two where the machine has
    two CPUs (Arrow's parse and numpy's passes let go of the GIL), else one."""
    return min(_cpus(), 2)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
