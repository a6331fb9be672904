"""Upload to leaderboard: a new 7M-line run on a 7,000-need benchmark with 300 scored runs.

Builds the benchmark in a database of its own (PostgreSQL ``bench_platform`` when it
answers on localhost, else SQLite), inserts 300 scored runs (synthetic per-need values,
stored exactly as scoring stores them), then uploads a 7,000 x 1,000 run through the
web form, served by gunicorn (one sync worker) with the file streamed by httpx as a
browser streams it, and times each stage until it is on the leaderboard (scored: the
board's own query lists it) and compared with every run (its significance marks).
With Redis on localhost the run is scored by a real Celery worker process (one worker,
concurrency 1); otherwise in the web process. Web and worker run with the image's
``ENV`` (the Dockerfile's), the command line with none of it, as users run each.

The run is uploaded twice: first to the fresh processes, then, after the machine has
sat idle for ``IDLE`` seconds, again, as the next participant's upload meets a platform
that has been serving. Prints a table, with the worker's own scoring and comparing task
times (from its log) and its peak memory (VmHWM of the worker and its pool process) for
the second upload, and, right after, the command line on the same files with the
worker's measures (plus the worker's storing: what the scoring task is held to).
``BENCH_DATABASE`` (dropped and recreated; default ``bench_platform``) and
``BENCH_REDIS_DB`` (default 13) let sessions sharing a machine keep apart.

    .venv/bin/python bench/bench_platform.py [--runs 300] [--needs 7000] [--docs 1000]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from files import write_files  # noqa: E402 (after the path is set)
from processes import (  # noqa: E402
    answers,
    free_port,
    image_environment,
    peak_memory,
    reset_peak_memory,
    resident_memory,
)


def configure(media: str) -> tuple[str, str]:
    # Sessions sharing a machine each name their own: BENCH_DATABASE (dropped and
    # recreated) and BENCH_REDIS_DB.
    name = os.environ.get("BENCH_DATABASE", "bench_platform")
    if answers(5432):
        import psycopg

        with psycopg.connect(
            "postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True
        ) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name}")
        database = f"postgres://postgres@127.0.0.1:5432/{name}"
    else:
        database = f"sqlite:///{media}/bench.sqlite3".replace("sqlite:///", "sqlite:////", 1)
    redis_db = os.environ.get("BENCH_REDIS_DB", "13")
    broker = f"redis://127.0.0.1:6379/{redis_db}" if answers(6379) else ""
    os.environ.update(
        DATABASE_URL=database,
        MEDIA_ROOT=media,
        CELERY_QUEUE="bench-platform",
        CELERY_SCORE_QUEUE="bench-platform.score",
        CELERY_COMPARE_QUEUE="bench-platform.compare",
    )
    if broker:
        os.environ["CELERY_BROKER_URL"] = broker
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return database, broker


def existing_runs(benchmark, judgments, count: int, seed: int = 2) -> None:
    from django.contrib.auth import get_user_model

    from leaderboard.models import MeasureVector, Result, Submission

    rng = np.random.default_rng(seed)
    user, _ = get_user_model().objects.get_or_create(username="bench")
    needs = judgments.need_ids
    for i in range(count):
        submission = Submission.objects.create(
            benchmark=benchmark,
            participant=user,
            run_name=f"old-{i:03d}",
            status="scored",
            file=f"runs/bench/old-{i:03d}.txt",
            judgments=judgments,
        )
        ap = np.clip(rng.beta(2, 5, len(needs)) + rng.normal(0, 0.02), 0, 1)
        frame = pd.DataFrame(
            {"map": ap, "P_10": np.round(ap * 10) / 10, "num_rel": 20.0}, index=needs
        )
        result = Result.objects.create(
            submission=submission,
            judgments=judgments,
            summary={"map": float(ap.mean())},
            num_needs=len(needs),
            per_need=Result.pack_per_need(frame),
            ranks=Result.pack_ranks(pd.DataFrame({"need_id": [], "rank": []}), frame["num_rel"]),
        )
        MeasureVector.objects.create(
            result=result, measure="map", values=ap.astype(np.float64).tobytes()
        )


def task_times(log: Path) -> list[tuple[str, float]]:
    """(task, seconds) of the scoring and comparing tasks, as the worker logged them:
    its own time, without the upload or the wait for the message."""
    found = re.findall(
        r"leaderboard\.tasks\.(score_submission|compare_submission)\[[^]]+\] "
        r"succeeded in ([0-9.]+)s",
        log.read_text(errors="replace"),
    )
    return [
        (
            task.split("_")[0].replace("score", "scoring").replace("compare", "comparing"),
            float(seconds),
        )
        for task, seconds in found
    ]


def scoring_stages(log: Path, nth: int = 0) -> list[tuple[str, float]]:
    """(stage, seconds) of the ``nth`` scoring task, from the line ``scoring.score`` logs."""
    found = re.findall(
        r"read in ([0-9.]+) s, measures in ([0-9.]+) s, stored in ([0-9.]+) s",
        log.read_text(errors="replace"),
    )
    if len(found) <= nth:
        return []
    names = ("reading the run and qrels", "the measures", "storing the result")
    return [(name, float(value)) for name, value in zip(names, found[nth], strict=True)]


# Seconds between the two uploads: long enough for the machine to reclaim what the first
# one's processes freed, as it has by the time the next participant uploads.
IDLE = 10.0


def upload(http, run_path: Path, name: str, user, benchmark, version: int, pairs: int):
    """Upload ``run_path`` as run ``name`` through the web form and wait until it is on
    the leaderboard (the board's own query lists it) and compared with ``pairs`` runs:
    (stage, seconds from the upload's start) rows."""
    from leaderboard.models import Comparison, Result, Submission

    rows = []
    started = time.perf_counter()
    with open(run_path, "rb") as handle:  # httpx streams it, 64 KB at a time
        response = http.post(
            "/benchmarks/bench/submit/",
            data={"run_name": name},
            files={"file": ("run.txt", handle, "text/plain")},
            headers={"X-CSRFToken": http.cookies["csrftoken"]},
        )
    assert response.status_code == 302, response.text[:500]
    rows.append(("upload: send, receive, validate, store, queue", time.perf_counter() - started))
    submission = Submission.objects.get(run_name=name)
    on_board = Result.objects.on_leaderboard(benchmark, user, version).filter(submission=submission)
    listed = False
    while True:
        submission.refresh_from_db()
        if submission.status == "failed":
            raise SystemExit(f"scoring failed: {submission.failure_reason}")
        # On the leaderboard once scored (the result and the status are stored in one
        # transaction); its significance marks against the other runs come after.
        if not listed and on_board.exists():
            listed = True
            rows.append(("scored, on the leaderboard", time.perf_counter() - started))
        compared = (
            Comparison.objects.filter(submission_b=submission).count()
            + Comparison.objects.filter(submission_a=submission).count()
        )
        if compared >= pairs:
            rows.append(("compared with every run", time.perf_counter() - started))
            return rows
        if time.perf_counter() - started > 600:
            raise SystemExit("timed out")
        time.sleep(0.05)


# The command line's equivalent of what the worker stores (every catalog measure, -c).
WORKER_MEASURES = ["-c", "-m", "all_trec", "-m", "recip_rank_cut", "-m", "judged"]


def command_line(qrels: Path, run: Path, repeats: int = 3) -> float:
    """Median wall seconds of ``python -m evaluation`` scoring the bench's own files with
    the worker's measures (a whole process, imports included), measured right after the
    worker, so that its scoring task is compared with the command line at the same
    moment of a shared machine whose speed drifts within an hour."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "evaluation", *WORKER_MEASURES, str(qrels), str(run)],
            cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        times.append(time.perf_counter() - started)
    return sorted(times)[len(times) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--needs", type=int, default=7000)
    parser.add_argument("--docs", type=int, default=1000)
    args = parser.parse_args()
    media = tempfile.mkdtemp(prefix="bench-platform-")
    try:
        bench(args, media)
    finally:  # the run and its stored copy: ~0.6 GB a bench
        shutil.rmtree(media, ignore_errors=True)


def bench(args: argparse.Namespace, media: str) -> None:
    database, broker = configure(media)
    from django.test import Client

    from leaderboard.celery import app
    from leaderboard.models import Benchmark
    from leaderboard.pipeline.loading import load_judgments

    rows = []
    started = time.perf_counter()
    qrels_path, run_path = write_files(Path(media), args.needs, args.docs)
    (Path(media) / "first").mkdir()  # another run (its own scores) for the first upload
    _, first_path = write_files(Path(media) / "first", args.needs, args.docs, seed=2)
    rows.append(("write qrels + two 7M-line runs (setup)", time.perf_counter() - started))
    benchmark = Benchmark.objects.create(slug="bench", title="Bench", daily_limit=1000)
    with open(qrels_path, "rb") as stream:
        judgments = load_judgments(benchmark, stream, "qrels.txt")
    benchmark.refresh_from_db()
    t0 = time.perf_counter()
    existing_runs(benchmark, judgments, args.runs)
    rows.append((f"insert {args.runs} scored runs (setup)", time.perf_counter() - t0))

    worker = None
    if broker:
        app.conf.task_always_eager = False
        app.conf.task_default_queue = "bench-platform"
        env = {**os.environ, **image_environment(), "CONN_MAX_AGE": "0"}
        log = open(Path(media) / "worker.log", "wb")
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "leaderboard",
                "worker",
                "--concurrency=1",
                "-Q",
                "bench-platform,bench-platform.score,bench-platform.compare",
                "--without-gossip",
                "--without-mingle",
                "--loglevel=INFO",
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        t_ready = time.perf_counter()
        while b"ready." not in (Path(media) / "worker.log").read_bytes():
            if worker.poll() is not None or time.perf_counter() - t_ready > 60:
                raise SystemExit("the worker did not start")
            time.sleep(0.1)
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user("uploader", password="x")
    client = Client()
    client.force_login(user)  # the session the upload carries (a cookie)
    # The web process as production runs it: gunicorn (one sync worker here), receiving
    # the body from a socket while the client streams the file, as a browser does.
    port = free_port()
    web_log = open(Path(media) / "web.log", "wb")
    web = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "leaderboard.wsgi", "-w", "1",
         "-b", f"127.0.0.1:{port}", "--timeout", "600"],
        cwd=ROOT, env={**os.environ, **image_environment(), "CONN_MAX_AGE": "60"}, stdout=web_log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    http = httpx.Client(
        base_url=f"http://127.0.0.1:{port}",
        cookies={"sessionid": client.cookies["sessionid"].value},
        timeout=600,
    )
    try:
        t_warm = time.perf_counter()
        while not answers(port):
            if web.poll() is not None or time.perf_counter() - t_warm > 60:
                raise SystemExit(f"gunicorn did not start: {web_log.name}")
            time.sleep(0.05)
        # A serving process has served pages long before an upload arrives (its URLconf
        # and views imported): one page first. It also sets the CSRF cookie.
        assert http.get("/benchmarks/bench/submit/").status_code == 200
        rows.append(("web server start and first page (setup)", time.perf_counter() - t_warm))
        # The first upload meets a fresh platform (its worker imports the engine and reads
        # the judgments on its first task); the second meets one that has scored a run
        # and then sat idle, as an upload at any hour does.
        first = upload(http, first_path, "first", user, benchmark, judgments.pk, args.runs)
        rows.extend((f"first upload, fresh processes: {label}", s) for label, s in first)
        time.sleep(IDLE)
        if worker is not None:
            held = resident_memory(worker.pid)
            rows.append(("worker memory held while idle (MB, not seconds)", held / 1024))
            reset_peak_memory(worker.pid)
        steady = upload(http, run_path, "new", user, benchmark, judgments.pk, args.runs + 1)
        rows.extend((f"upload after {IDLE:.0f} s idle: {label}", s) for label, s in steady)
        on_board_at = dict(steady)["scored, on the leaderboard"]
        t_page = time.perf_counter()
        assert http.get("/benchmarks/bench/").status_code == 200
        rows.append(("leaderboard page render", time.perf_counter() - t_page))
        if worker is not None:
            time.sleep(0.5)  # the worker logs a task's time just after storing its result
            log.flush()
            times = task_times(Path(media) / "worker.log")
            for task, seconds in times[len(times) // 2 :]:
                rows.append((f"worker, after idle: {task} task alone", seconds))
            for stage, seconds in scoring_stages(Path(media) / "worker.log", 1):
                rows.append((f"worker, after idle: of which {stage}", seconds))
            peak = peak_memory(worker.pid)
            if peak:
                rows.append(("peak worker memory, after idle (MB, not seconds)", peak / 1024))
    finally:
        http.close()
        web.terminate()
        web.wait(30)
        if worker is not None:
            worker.terminate()
            worker.wait(30)
    if worker is not None:  # the web process and the worker stopped: the machine as it scored
        cli = command_line(qrels_path, run_path)
        rows.append(("command line on the same files, the worker's measures (median of 3)", cli))
        rows.append(("first upload on the leaderboard against the command line (ratio)",
                     dict(first)["scored, on the leaderboard"] / cli))  # fmt: skip
        rows.append(("upload after idle on the leaderboard against the command line (ratio)",
                     on_board_at / cli))  # fmt: skip
        stored = dict(rows).get("worker, after idle: of which storing the result")
        if stored is not None:
            rows.append(("the same plus the worker's storing", cli + stored))
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in open("/proc/cpuinfo")
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    print(
        f"machine: {cpu}, {os.cpu_count()} cores; database {database.split(':')[0]}; "
        f"worker: {'Celery on Redis, concurrency 1' if broker else 'in-process'}, "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(
        f"benchmark: {args.needs} needs, {args.runs} scored runs; new run {args.needs * args.docs:,} lines "
        f"({run_path.stat().st_size / 1e6:.0f} MB)"
    )
    print("| stage | seconds (from upload start) |\n|---|---|")
    for label, seconds in rows:
        print(f"| {label} | {seconds:.2f} |")


if __name__ == "__main__":
    main()
