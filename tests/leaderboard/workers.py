"""Start and stop real Celery worker processes for tests (not eager mode)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def _skip(reason: str) -> None:
    if os.environ.get("REQUIRE_REAL_SERVICES"):
        pytest.fail(reason)
    pytest.skip(reason)


def broker_or_skip() -> str:
    if connection.vendor != "postgresql":
        _skip("needs PostgreSQL: a worker process cannot see SQLite's in-memory test database")
    broker = settings.CELERY_BROKER_URL
    if not broker.startswith("redis://"):
        _skip("needs Redis: set CELERY_BROKER_URL=redis://... (make test does when Redis answers)")
    import redis

    try:
        redis.Redis.from_url(broker).ping()
    except redis.RedisError as error:
        _skip(f"Redis at {broker} does not answer: {error}")
    return broker


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def database_url() -> str:
    """The URL of the database this test runs in (pytest-django's test database)."""
    db = connection.settings_dict
    user = db["USER"] or "postgres"
    host = db["HOST"] or "127.0.0.1"
    return f"postgres://{user}:{db['PASSWORD']}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


class Worker:
    def __init__(
        self,
        queue: str,
        media_root: str,
        log_path: Path,
        extra_env: dict | None = None,
        extra_args: list[str] | None = None,
    ):
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "CELERY_RESULT_BACKEND": settings.CELERY_BROKER_URL,
            "CELERY_QUEUE": queue,
            "MEDIA_ROOT": media_root,
            "CONN_MAX_AGE": "0",
            **(extra_env or {}),
        }
        self.log_path = log_path
        self.log = open(log_path, "ab")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "leaderboard",
                "worker",
                "--loglevel=INFO",
                "--concurrency=1",
                "--pool=prefork",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-Q",
                queue,
                *(extra_args or []),
            ],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"worker exited: {self.log_path.read_text()[-3000:]}")
            if b"ready." in self.log_path.read_bytes():
                return
            time.sleep(0.2)
        raise TimeoutError(f"worker not ready: {self.log_path.read_text()[-3000:]}")

    def pool_children(self) -> list[int]:
        """The prefork pool's processes (the ones that run tasks)."""
        path = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in path.read_text().split()] if path.exists() else []

    def kill(self) -> None:
        """SIGKILL the whole worker: main process and pool children, no chance to clean up."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


def wait_for(predicate, timeout: float, interval: float = 0.05, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout} s waiting for {what}")
