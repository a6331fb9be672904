"""Throwaway Redis and PostgreSQL instances for fault tests that stop a service.

Each runs on a free port, in a temporary folder, and is removed afterwards; the machine's
shared instances (5432, 6379) are never touched. PostgreSQL refuses to run as root, so
as root the cluster belongs to the ``postgres`` user (``runuser``).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.leaderboard.workers import free_port, wait_for


def answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_until(predicate, timeout: float, what: str, interval: float = 0.1):
    """``workers.wait_for`` with the description first, as these tests call it."""
    return wait_for(predicate, timeout, interval=interval, what=what)


class RedisServer:
    """``redis-server`` on a free port, no persistence; stop and start it on the same port."""

    def __init__(self, log_path: Path) -> None:
        if shutil.which("redis-server") is None:
            pytest.fail("redis-server is not installed")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.log_path = log_path
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [
                    "redis-server",
                    "--port",
                    str(self.port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--daemonize",
                    "no",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        wait_until(lambda: answers(self.port), 10, f"redis-server on {self.port}")

    def pause(self) -> None:
        """Hung, not gone: connections open, nothing answered (SIGSTOP)."""
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.terminate()
            self.process.wait(timeout=10)
        wait_until(lambda: not answers(self.port), 10, f"redis-server on {self.port} to stop")


def _pg_binary(name: str) -> str:
    found = shutil.which(name) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None
    )
    if found is None:
        pytest.fail(f"PostgreSQL's {name} is not installed")
    return found


class PostgresCluster:
    """A throwaway cluster (``initdb``, trust authentication) on a free port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="faults-pg-", dir="/tmp"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self._run(
            _pg_binary("initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "--no-sync",
            "-E",
            "UTF8",
        )

    def _run(self, *args: str, timeout: float = 60) -> None:
        result = subprocess.run(
            [*self.as_postgres, *args], capture_output=True, text=True, timeout=timeout
        )
        if result.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {result.stdout}{result.stderr}")

    def url(self, name: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off"
        self._run(_pg_binary("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options,
                  "-w", "start")  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        self._run(_pg_binary("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def remove(self) -> None:
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)
