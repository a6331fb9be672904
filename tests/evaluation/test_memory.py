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
