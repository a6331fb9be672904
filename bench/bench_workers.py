"""Throughput with 1 and 2 Celery workers: runs scored (and compared) per minute and per hour.

Two run sizes, each on a benchmark of its own: 50 needs x 1,000 documents (50,000 lines)
and 7,000 needs x 1,000 documents (7M lines, 292 MB; ``--big-needs`` for a smaller one,
whose rate is then extrapolated and labelled so). For each worker count it starts that
many worker processes (concurrency 1, every queue: what ``make worker`` runs), stores
``--small-runs`` / ``--big-runs`` runs at once (one transaction, the scoring messages sent
on commit, as many uploads landing together would) and times, from the commit, until
every run is scored and until every pair of runs is compared. The data comes from
``files.write_files`` (seeded). Needs PostgreSQL and Redis on localhost: the
database ``$BENCH_DATABASE`` (default ``bench_workers``) is dropped and created, Redis
``$BENCH_BROKER_URL`` (default ``redis://127.0.0.1:6379/12``) carries the queues
``bench-workers*``. Prints a Markdown table (docs/performance.md holds a measured one).

    .venv/bin/python bench/bench_workers.py [--workers 1,2] [--small-runs 40] [--big-runs 4]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from files import write_files  # noqa: E402 (after the path is set)
from processes import answers, image_environment  # noqa: E402

QUEUE = "bench-workers"
QUEUES = {
    "CELERY_QUEUE": QUEUE,
    "CELERY_SCORE_QUEUE": f"{QUEUE}.score",
    "CELERY_COMPARE_QUEUE": f"{QUEUE}.compare",
}


def configure(media: str) -> tuple[str, str]:
    if not (answers(5432) and answers(6379)):
        print("bench_workers: skipped, needs PostgreSQL (5432) and Redis (6379) on localhost")
        raise SystemExit(0)
    import psycopg

    name = os.environ.get("BENCH_DATABASE", "bench_workers")
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    database = f"postgres://postgres@127.0.0.1:5432/{name}"
    broker = os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/12")
    os.environ.update(
        DATABASE_URL=database,
        MEDIA_ROOT=media,
        CELERY_BROKER_URL=broker,
        CELERY_RESULT_BACKEND=broker,
        CONN_MAX_AGE="0",
        **QUEUES,
        **image_environment(),  # the processes' environment, as the image sets it
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from leaderboard.celery import app

    with app.connection_for_write() as conn:  # leftovers of an interrupted bench
        for queue in QUEUES.values():
            conn.default_channel.queue_purge(queue)
    return database, broker


def start_workers(count: int, media: str) -> list[subprocess.Popen]:
    workers = []
    for i in range(count):
        log = Path(media) / f"worker{i}-{time.monotonic_ns()}.log"
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "leaderboard",
                "worker",
                "--concurrency=1",
                f"--hostname=bench{i}@%h",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--loglevel=INFO",
            ],
            cwd=ROOT,
            env=dict(os.environ),
            stdout=open(log, "wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        process.log = log
        workers.append(process)
    deadline = time.monotonic() + 120
    for process in workers:
        while b"ready." not in process.log.read_bytes():
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"worker did not start: {process.log.read_text()[-2000:]}")
            time.sleep(0.2)
    return workers


def stop_workers(workers: list[subprocess.Popen]) -> None:
    for process in workers:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in workers:
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def measure(label: str, qrels: Path, run: Path, runs: int, workers: int, media: str) -> dict:
    """Store ``runs`` copies of ``run`` at once on a fresh benchmark; time scoring and comparing."""
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from leaderboard.models import Benchmark, Comparison, Submission
    from leaderboard.pipeline.loading import load_judgments
    from leaderboard.pipeline.tasks import queue_scoring

    slug = f"{label}-{workers}w"
    benchmark = Benchmark.objects.create(slug=slug, title=slug, daily_limit=10_000)
    with open(qrels, "rb") as stream:
        load_judgments(benchmark, stream, "qrels.txt")
    benchmark.refresh_from_db()
    stored = Path(media) / "runs" / slug / run.name
    stored.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(run, stored)
    user, _ = get_user_model().objects.get_or_create(username="bench")
    pairs = runs * (runs - 1) // 2 * len(benchmark.tested_measures())
    processes = start_workers(workers, media)
    try:
        started = time.perf_counter()
        with transaction.atomic():
            for i in range(runs):
                submission = Submission.objects.create(
                    benchmark=benchmark,
                    participant=user,
                    run_name=f"run-{i:03d}",
                    file=str(stored.relative_to(media)),
                )
                queue_scoring(submission)
        mine = Submission.objects.filter(benchmark=benchmark)
        scored_at = None
        while True:
            if mine.filter(status="failed").exists():
                reason = mine.filter(status="failed").first().failure_reason
                raise SystemExit(f"a run failed: {reason}")
            if scored_at is None and mine.filter(status="scored").count() == runs:
                scored_at = time.perf_counter() - started
            if scored_at is not None:
                compared = Comparison.objects.filter(submission_a__benchmark=benchmark).count()
                if compared >= pairs:
                    compared_at = time.perf_counter() - started
                    break
            if time.perf_counter() - started > 3600:
                raise SystemExit("timed out after an hour")
            time.sleep(0.2)
    finally:
        stop_workers(processes)
    attempts = sorted(set(mine.values_list("attempts", flat=True)))
    return {
        "scored": scored_at,
        "compared": compared_at,
        "pairs": pairs,
        "attempts": attempts,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    parser.add_argument("--small-runs", type=int, default=40)
    parser.add_argument("--big-runs", type=int, default=4)
    parser.add_argument("--big-needs", type=int, default=7000, help="7,000 x 1,000 = 7M lines")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    media = tempfile.mkdtemp(prefix="bench-workers-")
    try:
        database, broker = configure(media)
        folder = Path(media) / "data"
        sizes = [("small", 50, args.small_runs), ("big", args.big_needs, args.big_runs)]
        rows = []
        for label, needs, runs in sizes:
            data = folder / label
            data.mkdir(parents=True)
            t0 = time.perf_counter()
            qrels, run = write_files(data, needs, 1000)
            print(f"# wrote {needs} x 1,000 ({time.perf_counter() - t0:.0f} s)", flush=True)
            for workers in counts:
                result = measure(label, qrels, run, runs, workers, media)
                print(f"# {label}, {workers} worker(s): {result}", flush=True)
                rows.append((needs, runs, workers, result))
    finally:
        shutil.rmtree(media, ignore_errors=True)
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in open("/proc/cpuinfo")
            if line.startswith("model name")
        ),
        "?",
    )
    load = os.getloadavg()[0]
    print(
        f"machine: {cpu}, {os.cpu_count()} cores, load average {load:.1f} at the end; "
        "workers: Celery on Redis, concurrency 1 each, every queue"
    )
    print(
        "| run | runs at once | workers | all scored (s) | runs scored / min | runs scored / h "
        "| all pairs compared (s) | pairs |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for needs, runs, workers, result in rows:
        lines = needs * 1000
        scored, compared = result["scored"], result["compared"]
        per_minute = runs / scored * 60
        extrapolated = ""
        per_hour = per_minute * 60
        if needs != 7000 and needs != 50:
            # A smaller stand-in for the 7M-line run: scoring time grows about linearly
            # with the lines, so a 7M-line run takes 7M / lines times as long.
            per_hour = per_hour * lines / 7_000_000
            extrapolated = f" (extrapolated from {lines:,}-line runs)"
        print(
            f"| {needs:,} x 1,000 ({lines / 1e6:g}M lines) | {runs} | {workers} | {scored:.1f} "
            f"| {per_minute:.1f} | {per_hour:,.0f}{extrapolated} | {compared:.1f} "
            f"| {result['pairs']:,} |"
        )
    print(f"database {database.split('@')[-1]}, broker {broker}")


if __name__ == "__main__":
    main()
