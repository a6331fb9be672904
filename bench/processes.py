"""The processes the platform benches start: the environment the image gives them, a free
port and whether one answers, and their memory (Linux's /proc)."""

from __future__ import annotations

import socket
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def image_environment() -> dict[str, str]:
    """The environment the Dockerfile's ``ENV`` lines give every process of the image
    (web and workers): the bench's web and worker processes run with it, the command line
    with none of it, as users run each."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    found: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("ENV "):
            found.update(pair.split("=", 1) for pair in line.split()[1:])
    return found


def answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (the prefork pool's process does the work)."""
    found, pids = [], [pid]
    while pids:
        current = pids.pop()
        found.append(current)
        try:
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        pids.extend(int(child) for child in children)
    return found


def _largest(pid: int, field: str) -> int:
    """The largest ``field`` (kB) in /proc's status of ``pid`` and its child processes;
    0 where /proc cannot say."""
    largest = 0
    for current in _process_tree(pid):
        try:
            status = Path(f"/proc/{current}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith(f"{field}:"):
                largest = max(largest, int(line.split()[1]))
    return largest


def peak_memory(pid: int) -> int:
    """The largest peak resident set (VmHWM, kB) of ``pid`` and its child processes."""
    return _largest(pid, "VmHWM")


def resident_memory(pid: int) -> int:
    """The largest resident set now (VmRSS, kB) of ``pid`` and its child processes: what
    a worker holds between tasks."""
    return _largest(pid, "VmRSS")


def reset_peak_memory(pid: int) -> bool:
    """Start ``pid``'s and its children's VmHWM again from their resident set now (Linux's
    ``clear_refs`` 5), so the next peak read is the next task's own; False if refused."""
    try:
        for current in _process_tree(pid):
            Path(f"/proc/{current}/clear_refs").write_text("5")
    except OSError:
        return False
    return True
