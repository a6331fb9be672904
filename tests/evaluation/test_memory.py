"""evaluation.memory: a large run's freed heap pages go back to the system."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from evaluation.memory import TRIM_LINES, give_back_freed

# In a child process: the heap kept as the command keeps it while it scores (no mmap,
# no trimming), 300 MB of arrays freed below a live one, then given back.
CHILD = """
import numpy as np
from evaluation.memory import reusing_freed_memory
from evaluation.memory import TRIM_LINES, give_back_freed

def anon():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) // 1024

with reusing_freed_memory():
    arrays = [np.ones(1 << 17) for _ in range(300)]  # 1 MB each, from the heap
    pinned = np.ones(1 << 17)  # above them: the heap's top stays in use
    del arrays
    before = anon()
    small = give_back_freed(TRIM_LINES - 1)
    after_small = anon()
    large = give_back_freed(TRIM_LINES)
    after = anon()
print(before, small, after_small, large, after, int(pinned.sum()))
"""


@pytest.mark.skipif(
    sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc_trim"
)
def test_a_large_run_s_freed_heap_goes_back_to_the_system_and_a_small_run_s_stays():
    out = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    before, small, after_small, large, after = int(out[0]), out[1], int(out[2]), out[3], int(out[4])
    assert small == "False" and after_small > before - 50  # nothing asked for a small run
    assert large == "True"
    assert before - after >= 250  # the 300 MB freed below the live array went back
    assert int(out[5]) == 1 << 17  # the live array is intact


def test_nothing_is_asked_below_the_threshold():
    assert give_back_freed(0) is False
    assert give_back_freed(TRIM_LINES - 1) is False


GLIBC = pytest.mark.skipif(
    sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="glibc's mallopt"
)


def _child(code: str) -> list[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()


# A body received in pieces: 64 KB buffers made and dropped, as gunicorn's reader and
# Django's multipart parser make them; page faults counted.
CHURN = """
import resource
from evaluation.memory import heap_top_padded

def churn():
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    pieces = []
    for _ in range(300):
        pieces.append(bytearray(1 << 16))
        if len(pieces) > 16:
            pieces.clear()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults

plain = churn()
with heap_top_padded():
    churn()  # the padded top grows once
    padded = churn()
print(plain, padded, churn())
"""


@GLIBC
def test_a_padded_heap_top_stops_the_faults_of_buffers_made_and_dropped():
    plain, padded, after = map(int, _child(CHURN))
    assert plain > 1000  # each piece at the top faulted in again: ~18 MB
    assert padded < plain / 10
    assert after > plain / 4  # glibc's default again after


# keep_heap in a child process: resident after, and no large run hands it back.
KEPT = """
import numpy as np
from evaluation.memory import TRIM_LINES, give_back_freed, keep_heap, scoring_a_large_run

def anon():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) // 1024

start = anon()
kept = keep_heap(200)
after_keep = anon()
with scoring_a_large_run():
    arrays = [np.ones(1 << 17) for _ in range(150)]  # 150 MB, from the kept heap
    during = anon()
    del arrays
after_run = anon()
print(kept, after_keep - start, during - after_keep, after_run - start, keep_heap(0))
"""


@GLIBC
def test_a_kept_heap_is_resident_from_the_start_and_stays_after_a_large_run():
    kept, touched, grown, held, again = _child(KEPT)
    assert kept == "True" and again == "False"  # 0 MB: nothing asked
    assert int(touched) >= 190  # the 200 MB are resident now
    assert int(grown) < 40  # the run's arrays took the kept pages, not new ones
    assert int(held) >= 190  # not handed back at the end of the run
