"""The queue's services failing under a real worker: a worker SIGKILLed mid-scoring ten
times, the broker stopped while runs are uploaded, PostgreSQL restarted while a run is
being scored. Nothing is lost, stuck or scored twice, and no request answers 500.

The broker and database that get stopped are this test's own (``tests/faults/services``),
never the machine's shared ones. Each test prints its figures (``-s`` shows them; they
are in docs/reliability.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
import uuid

import psycopg
import pytest
import redis
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from leaderboard.models import ApiToken, Comparison, Result, Submission
from leaderboard.pipeline import tasks
from tests.faults.services import PostgresCluster, RedisServer, answers, wait_until
from tests.leaderboard.workers import (
    ROOT,
    Worker,
    broker_or_skip,
    celery_on,
    free_port,
    purge,
    queue_settings,
    queues_of,
    results_locked,
    scored_lines,
    waiting_on_a_lock,
)

pytestmark = [pytest.mark.worker]

DEMO = ROOT / "leaderboard" / "demo"
RUN_B = (DEMO / "run-B.txt").read_bytes()
RUN_B_TAGGED = RUN_B.replace(b"system-B", b"system-C")  # as long as RUN_B


@pytest.fixture
def queue():
    """A queue of this test's own on the shared test Redis, emptied afterwards."""
    broker = broker_or_skip()
    name = f"faults-{uuid.uuid4().hex[:8]}"
    with celery_on(broker, name):
        yield name
        purge(name)
    # Messages of SIGKILLed workers wait in Redis's "unacked" hash to be restored to this
    # queue after their visibility timeout; nobody will consume them: drop them.
    client = redis.Redis.from_url(broker)
    for tag, entry in client.hgetall("unacked").items():
        if json.loads(entry)[-1] in queues_of(name):
            client.hdel("unacked", tag)
            client.zrem("unacked_index", tag)


@pytest.fixture
def workers(settings, tmp_path):
    """Start workers (``start(queue, wait=..., **env)``); all stopped at the end."""
    started: list[Worker] = []

    def start(queue: str, wait: bool = True, args: list[str] | None = None, **env) -> Worker:
        log = tmp_path / f"worker{len(started)}.log"
        worker = Worker(queue, settings.MEDIA_ROOT, log, env, args)
        started.append(worker)
        if wait:
            worker.wait_ready()
        return worker

    start.all = started
    yield start
    for worker in started:
        worker.stop()


def _end_other_sessions() -> None:
    # A SIGKILLed worker's session can outlive it a moment; end it so the test database
    # can be dropped.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


def _upload(client, name: str):
    """Run B as ``name``: its tag made of the name's hash, so each name sends other bytes
    (the same file twice from one participant is refused) of RUN_B's length."""
    tag = hashlib.sha256(name.encode()).hexdigest()[:8].encode()
    upload = SimpleUploadedFile(f"{name}.txt", RUN_B.replace(b"system-B", tag))
    return client.post("/benchmarks/library/submit/", {"file": upload, "run_name": name})


def _swept_until_done(pk: int) -> bool:
    """Beat's job, done here: the sweep takes back the runs of dead tasks (lease run out)."""
    tasks.sweep_stuck()
    time.sleep(0.4)
    return Submission.objects.values_list("status", flat=True).get(pk=pk) in {"scored", "failed"}


@pytest.mark.long
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_scoring_ten_times_loses_nothing_and_scores_each_run_once(
    queue, workers, library, client, participant
):
    """Each run is caught in its storing transaction (the results table is locked), then
    its worker is SIGKILLed: the whole worker (main process and pool: the sweep takes the
    run back once its lease runs out) or only the pool process running it (the main
    process re-queues the message, and the same task takes its row back)."""
    library.daily_limit = 100
    library.save()
    client.force_login(participant)
    env = {"LEASE_SECONDS": "3", "CELERY_VISIBILITY_TIMEOUT": "20"}
    live = [workers(queue, **env), workers(queue, **env)]  # one takes over from the other
    recovery, runs = [], []
    started = time.monotonic()
    try:
        for i in range(10):
            whole = i % 2 == 0
            with results_locked():
                assert _upload(client, f"kill-{i}").status_code == 302
                run = Submission.objects.get(run_name=f"kill-{i}")
                runs.append(run.pk)
                wait_until(waiting_on_a_lock, 60, "a worker to wait mid-scoring")
                task_id = Submission.objects.values_list("task_id", flat=True).get(pk=run.pk)
                victim = next(w for w in live if task_id in w.log_path.read_text())
                if whole:
                    victim.kill()
                    live.remove(victim)
                    live.append(workers(queue, wait=False, **env))
                else:
                    (child,) = victim.pool_children()
                    os.kill(child, signal.SIGKILL)
                killed = time.monotonic()
            # Back within seconds: the lease (3 s) runs out, the sweep re-queues the run.
            # (Redis would redeliver the dead worker's message only after its visibility
            # timeout, 20 s here and an hour by default.)
            wait_until(lambda pk=run.pk: _swept_until_done(pk), 15, f"run kill-{i} to end")
            recovery.append(time.monotonic() - killed)
            run.refresh_from_db()
            assert run.status == "scored", run.failure_reason
            assert run.results.count() == 1
        total = time.monotonic() - started
        # Nothing lost, nothing stuck, nothing scored twice.
        statuses = dict(Submission.objects.values_list("pk", "status"))
        assert statuses == dict.fromkeys(runs, "scored")
        assert Result.objects.filter(submission__in=runs).count() == 10
        # a worker logs "succeeded" after the task returns, which is after its commit:
        # under load the last line may follow the status the loop saw
        wait_until(lambda: len(scored_lines(*workers.all)) >= 10, 10, "the last success line")
        assert len(scored_lines(*workers.all)) == 10
        attempts = sorted(Submission.objects.values_list("attempts", flat=True))
        print(
            f"\nkill x10: {total:.1f} s in all; back to scored after each kill: "
            f"{min(recovery):.1f}-{max(recovery):.1f} s (whole worker: "
            f"{max(recovery[0::2]):.1f} s at most, pool process: {max(recovery[1::2]):.1f} s"
            f" at most); attempts per run {attempts}"
        )
    finally:
        for worker in workers.all:
            worker.stop()
        _end_other_sessions()


@pytest.mark.long
@pytest.mark.django_db(transaction=True)
def test_uploads_while_the_broker_is_down_are_scored_once_it_is_back(
    workers, library, client, participant, tmp_path
):
    """Our own Redis, stopped while a run is uploaded through the form and another
    through the API: both are answered (no 500), stored whole, and scored within a
    minute of Redis being back (the worker's embedded beat runs the outbox, defaults)."""
    broker_or_skip()
    redis = RedisServer(tmp_path / "redis.log")
    redis.start()
    queue = f"faults-{uuid.uuid4().hex[:8]}"
    env = {"CELERY_BROKER_URL": redis.url, "CELERY_RESULT_BACKEND": redis.url}
    beat = ["--beat", "--schedule", str(tmp_path / "beat-schedule")]
    _, raw = ApiToken.issue(participant, "faults")
    client.force_login(participant)
    try:
        workers(queue, args=beat, **env)
        with celery_on(redis.url, queue):
            redis.stop()
            down = time.monotonic()
            page = client.post(
                "/benchmarks/library/submit/",
                {"file": SimpleUploadedFile("form.txt", RUN_B), "run_name": "form"},
                follow=True,
            )
            form_seconds = time.monotonic() - down
            started = time.monotonic()
            api = client.post(
                "/api/benchmarks/library/submissions/",
                # the same bytes but the tag: one participant's identical file is a 409
                {"file": SimpleUploadedFile("api.txt", RUN_B_TAGGED), "run_name": "api"},
                headers={"Authorization": f"Bearer {raw}"},
            )
            api_seconds = time.monotonic() - started
            # A bad file is still refused cleanly, with nothing stored.
            bad = client.post(
                "/api/benchmarks/library/submissions/",
                {"file": SimpleUploadedFile("bad.txt", b"atwood Q0 d1 1 oops t\n")},
                headers={"Authorization": f"Bearer {raw}"},
            )
            assert page.status_code == 200 and page.redirect_chain == [
                (f"/submissions/{Submission.objects.get(run_name='form').pk}/", 302)
            ]
            assert "will be scored shortly" in page.content.decode()
            assert api.status_code == 201 and api.json()["waiting_for_queue"] is True
            assert bad.status_code == 400 and bad["Content-Type"] == "application/json"
            runs = Submission.objects.order_by("run_name")
            assert [(r.run_name, r.status, r.sent_at) for r in runs] == [
                ("api", "queued", None),
                ("form", "queued", None),
            ]
            assert all(r.file.size == len(RUN_B) for r in runs)
            time.sleep(max(0.0, 5 - (time.monotonic() - down)))  # down for 5 s at least
            with results_locked(Comparison):  # the second run's comparison will wait
                redis.start()
                back = time.monotonic()
                wait_until(
                    lambda: set(runs.values_list("status", flat=True)) == {"scored"},
                    60,
                    "both runs to be scored after Redis came back",
                    interval=0.25,
                )
                scored_after = time.monotonic() - back
                wait_until(waiting_on_a_lock, 30, "the comparison task to wait mid-task")
                # Hung rather than gone, right when the worker will ack that task.
                redis.pause()
            assert [(r.results.count(), r.sent_at is not None) for r in runs.all()] == [
                (1, True)
            ] * 2
            # The socket timeouts bound an upload's wait on a hung broker.
            started = time.monotonic()
            hung = client.post(
                "/api/benchmarks/library/submissions/",
                {
                    "file": SimpleUploadedFile("hung.txt", RUN_B.replace(b"system-B", b"system-H")),
                    "run_name": "hung",
                },
                headers={"Authorization": f"Bearer {raw}"},
            )
            hung_seconds = time.monotonic() - started
            redis.resume()
            resumed = time.monotonic()
            assert hung.status_code == 201, hung.content
            assert hung_seconds < 15, hung_seconds
            # The worker that had to ack during the hang still takes new work.
            wait_until(
                lambda: Submission.objects.get(run_name="hung").status == "scored",
                60,
                "the run uploaded while Redis hung to be scored",
                interval=0.25,
            )
            hung_scored_after = time.monotonic() - resumed
        print(
            f"\nbroker down: form answered in {form_seconds:.2f} s, API in {api_seconds:.2f} s;"
            f" both runs scored {scored_after:.1f} s after Redis came back. Broker hung: API"
            f" answered in {hung_seconds:.1f} s (waiting_for_queue: "
            f"{hung.json()['waiting_for_queue']}), scored {hung_scored_after:.1f} s after"
        )
    finally:
        for worker in workers.all:
            worker.stop()
        redis.stop()
        _end_other_sessions()


SEED = textwrap.dedent(
    """
    import os, sys, django
    os.environ["DJANGO_SETTINGS_MODULE"] = "leaderboard.settings"
    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.files.base import ContentFile
    from django.db import transaction
    from leaderboard.models import Benchmark, Submission
    from leaderboard.pipeline.loading import load_judgments, load_needs
    from leaderboard.pipeline.tasks import queue_scoring

    demo = sys.argv[1]
    user = get_user_model().objects.create_user("alice", password="pw-alice-123")
    benchmark = Benchmark.objects.create(slug="library", title="Library")
    with open(f"{demo}/needs.tsv", "rb") as needs:
        load_needs(benchmark, needs, "needs.tsv")
    with open(f"{demo}/qrels.txt", "rb") as qrels:
        load_judgments(benchmark, qrels, "qrels.txt")
    with transaction.atomic():
        run = Submission(benchmark=benchmark, participant=user, run_name="B")
        with open(f"{demo}/run-B.txt", "rb") as handle:
            run.file.save("run-B.txt", ContentFile(handle.read()), save=False)
        run.save()
        queue_scoring(run)
    run.refresh_from_db()
    print(run.pk, run.sent_at is not None)
    """
)


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def _query(url: str, sql: str, *args):
    """One row, or None while the server is down or restarting."""
    try:
        with psycopg.connect(url, connect_timeout=2, autocommit=True) as conn:
            return conn.execute(sql, args).fetchone()
    except psycopg.OperationalError:
        return None


def _finished(url: str):
    row = _query(url, "SELECT status, attempts FROM leaderboard_submission")
    return row if row and row[0] in {"scored", "failed"} else None


@pytest.mark.long
def test_postgres_restarted_while_a_run_is_scored_the_run_ends_scored(
    queue, workers, tmp_path, settings
):
    """Our own PostgreSQL cluster (the worker's and the web side's database): the worker
    is caught mid-scoring, in its storing transaction; PostgreSQL is stopped (every
    session ends) and started again 5 s later. The task retries with backoff, takes its
    run back under the same task id, and stores it once; the web side's next request
    reconnects rather than answering 500. The web side runs in subprocesses on the same
    cluster (pytest-django's test database is not involved)."""
    cluster = PostgresCluster()
    web = None
    try:
        cluster.start()
        url = cluster.url("faults")
        with psycopg.connect(cluster.url("postgres"), autocommit=True) as admin:
            admin.execute("CREATE DATABASE faults")
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "MEDIA_ROOT": settings.MEDIA_ROOT,
            **queue_settings(queue),
        }
        started = time.monotonic()
        migrate = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert migrate.returncode == 0, migrate.stderr
        migrate_seconds = time.monotonic() - started
        # The production default: persistent connections, which the restart breaks.
        worker = workers(queue, DATABASE_URL=url, CONN_MAX_AGE="60")
        # The web side, as in production: gunicorn, persistent database connections.
        port = free_port()
        web = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "leaderboard.wsgi", "-w", "1",
             "-b", f"127.0.0.1:{port}"],
            cwd=ROOT,
            env={**env, "CONN_MAX_AGE": "60"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        api = f"http://127.0.0.1:{port}/api/benchmarks/"
        wait_until(lambda: answers(port), 30, "gunicorn to listen")
        assert _get(api) == 200
        holder = psycopg.connect(url)  # a transaction holding the lock until the stop
        try:
            holder.execute("LOCK TABLE leaderboard_result IN SHARE MODE")
            seed = subprocess.run(
                [sys.executable, "-c", SEED, str(DEMO)],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert seed.returncode == 0, seed.stderr
            pk, sent = seed.stdout.split()
            assert sent == "True"
            wait_until(
                lambda: _query(
                    url,
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE datname = 'faults' AND wait_event_type = 'Lock'",
                )[0],
                60,
                "the worker to wait mid-scoring",
            )
            assert _query(url, "SELECT status FROM leaderboard_submission")[0] == "running"
            cluster.stop("fast")  # ends every session, the lock holder's too
            down = time.monotonic()
        finally:
            holder.close()
        time.sleep(5)
        cluster.start()
        back = time.monotonic()
        web_after = _get(api)  # the same gunicorn worker, its connection broken by the restart
        row = wait_until(lambda: _finished(url), 120, "the run to end after PostgreSQL is back")
        scored_after = time.monotonic() - back
        results = _query(url, "SELECT count(*) FROM leaderboard_result WHERE submission_id = %s",
                         int(pk))[0]  # fmt: skip
        log = worker.log_path.read_text()
        assert row[0] == "scored", log[-3000:]
        assert results == 1
        assert row[1] >= 2  # claimed again by the retry
        retries = log.count("Retry in")
        assert retries >= 1
        # the worker logs the task's success a moment after the row is stored
        wait_until(lambda: scored_lines(worker), 10, "the success line")
        assert len(scored_lines(worker)) == 1
        assert web_after == 200  # reconnected (CONN_HEALTH_CHECKS), not a 500
        print(
            f"\npostgres restart: migrate {migrate_seconds:.1f} s; down {back - down:.1f} s; "
            f"scored {scored_after:.1f} s after it came back, after {retries} retries, "
            f"{row[1]} claims; {json.dumps({'status': row[0], 'results': results})}"
        )
    finally:
        for worker in workers.all:
            worker.stop()
        if web is not None and web.poll() is None:
            web.terminate()
            web.wait(timeout=20)
        cluster.remove()
