"""Start and stop real Celery worker processes for tests (not eager mode); point this
process's Celery app at a broker; hold a worker mid-scoring with a table lock.

A test's queue ``name`` is three queues on the broker (``queues_of``): ``name`` (the
default queue: beat's jobs), ``name.score`` and ``name.compare``; a worker consumes all
three unless told otherwise, as ``make worker`` does."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import kombu.pools
import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test import override_settings

from leaderboard.celery import app
from leaderboard.models import Result
from tests import ROOT


def _skip(reason: str) -> None:
    if os.environ.get("REQUIRE_REAL_SERVICES"):
        pytest.fail(reason)
    pytest.skip(reason)


def broker_or_skip() -> str:
    if connection.vendor != "postgresql":
        _skip("needs PostgreSQL: a worker process cannot see SQLite's in-memory test database")
    return redis_or_skip()


def redis_or_skip() -> str:
    """The Redis URL of CELERY_BROKER_URL once it answers; skip (fail in CI) otherwise."""
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


# The application name of worker processes' database sessions: what end_worker_sessions ends.
WORKER_SESSIONS = "test-celery-worker"


def database_url() -> str:
    """The URL of the database this test runs in (pytest-django's test database), for a
    worker process: its sessions carry ``WORKER_SESSIONS`` as their application name."""
    db = connection.settings_dict
    user = db["USER"] or "postgres"
    host = db["HOST"] or "127.0.0.1"
    return (
        f"postgres://{user}:{db['PASSWORD']}@{host}:{db['PORT'] or 5432}/{db['NAME']}"
        f"?application_name={WORKER_SESSIONS}"
    )


def end_worker_sessions() -> None:
    """End the sessions stopped workers left: a SIGKILLed worker's session can outlive it
    a moment, and the test database cannot be dropped while it lives. Only workers'
    sessions: this process's others (a live server's thread) are this run's to keep."""
    _end_sessions("application_name = %s", [WORKER_SESSIONS])


def end_other_sessions() -> None:
    """End every session on the test database but this connection's, before it is dropped:
    a test server's request threads and the threads a test starts keep their own
    connections, and PostgreSQL waits 5 s for them and then refuses the drop."""
    if connection.vendor == "postgresql":
        _end_sessions("pid <> pg_backend_pid()", [])


def _end_sessions(which: str, params: list) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            f" WHERE datname = current_database() AND {which}",
            params,
        )


def queue_settings(queue: str) -> dict[str, str]:
    """The queue settings of a test's queue ``queue``: its default, score and compare queues."""
    return {
        "CELERY_QUEUE": queue,
        "CELERY_SCORE_QUEUE": f"{queue}.score",
        "CELERY_COMPARE_QUEUE": f"{queue}.compare",
    }


def queues_of(queue: str) -> list[str]:
    return list(queue_settings(queue).values())


def purge(queue: str) -> None:
    """Empty a test's three queues."""
    with app.connection_for_write() as conn:
        for name in queues_of(queue):
            conn.default_channel.queue_purge(name)


class Worker:
    """A worker process on the test database, consuming ``queue``'s three queues (or
    only those named in ``consume``, e.g. ``[f"{queue}.score"]``)."""

    def __init__(
        self,
        queue: str,
        media_root: str,
        log_path: Path,
        extra_env: dict | None = None,
        extra_args: list[str] | None = None,
        consume: list[str] | None = None,
    ):
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "CELERY_RESULT_BACKEND": settings.CELERY_BROKER_URL,
            **queue_settings(queue),
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
                ",".join(consume or queues_of(queue)),
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


@contextlib.contextmanager
def celery_on(url: str, queue: str):
    """Point this process's Celery app (the web side) at the broker ``url``, tasks sent
    for real (not eager) to ``queue``'s three queues, on fresh connections; everything
    restored afterwards."""
    conf = app.conf  # broker_url gives way to $CELERY_BROKER_URL; the write URL does not
    saved = conf.broker_write_url, conf.task_default_queue, conf.task_always_eager

    def fresh_connections() -> None:  # what Celery itself does after a fork
        kombu.pools.reset()
        app._pool = None
        app.amqp._producer_pool = None

    fresh_connections()
    conf.broker_write_url, conf.task_default_queue, conf.task_always_eager = url, queue, False
    routes = {k: v for k, v in queue_settings(queue).items() if k != "CELERY_QUEUE"}
    try:
        with override_settings(**routes):
            yield
    finally:
        fresh_connections()
        conf.broker_write_url, conf.task_default_queue, conf.task_always_eager = saved


@contextlib.contextmanager
def results_locked(model=Result):
    """Lock the results table (or ``model``'s) against writes from another connection
    while the block runs: a worker storing a result waits there, mid-scoring, before it
    touches its run's row (a slow database, made deterministic). Released at the end."""
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(f"LOCK TABLE {model._meta.db_table} IN SHARE MODE")
                locked.set()
                release.wait(60)
        finally:
            connection.close()  # this thread's own connection

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert locked.wait(10), f"could not lock {model._meta.db_table}"
    try:
        yield
    finally:
        release.set()
        holder.join(30)


def waiting_on_a_lock() -> int:
    """Sessions of this database (the worker's) waiting for a row lock."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


def scored_lines(*workers: Worker) -> list[str]:
    """Every 'task succeeded: scored' line in the workers' logs."""
    return [
        line
        for worker in workers
        for line in worker.log_path.read_text().splitlines()
        if "score_submission" in line and "succeeded" in line and "'scored'" in line
    ]


@pytest.fixture
def queue():
    """A test's own queues on the test Redis (``celery_on``), emptied afterwards; skipped
    (failed under REQUIRE_REAL_SERVICES) without a broker. Imported by conftest.py."""
    broker = broker_or_skip()
    name = f"test-{uuid.uuid4().hex[:8]}"
    with celery_on(broker, name):
        yield name
        purge(name)
