"""The participants' client end to end: ``rrl`` (as a subprocess, ``python -m rrl``) and
``rrl.Client`` against the live server (pytest-django's ``live_server``), PostgreSQL and
a real Celery worker on Redis; the presigned path against moto's S3 server."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

import rrl
from leaderboard.models import PendingUpload, Submission
from tests.leaderboard.workers import ROOT, Worker, end_worker_sessions

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

DEMO = ROOT / "leaderboard" / "demo"
RUN_B = (DEMO / "run-B.txt").read_bytes()


@pytest.fixture
def site(live_server, transactional_db, library, participant):
    library.daily_limit = 100
    library.save()
    return live_server.url


@pytest.fixture
def worker(queue, settings, tmp_path):
    """A real worker on this test's queues, sharing the media folder (one host)."""
    started = Worker(queue, settings.MEDIA_ROOT, tmp_path / "worker.log")
    started.wait_ready()
    yield started
    started.stop()
    end_worker_sessions()


@pytest.fixture
def s3_worker(queue, bucket, tmp_path):
    """A real worker whose files are in the bucket only."""
    media = tmp_path / "worker-media"
    media.mkdir()
    started = Worker(queue, str(media), tmp_path / "worker.log", bucket.env())
    started.wait_ready()
    yield started
    started.stop()
    end_worker_sessions()


def rrl_command(*args: str, config: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(ROOT),
        "XDG_CONFIG_HOME": str(config),
        "HOME": str(config),
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "rrl", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        cwd=config,
        check=False,
    )


def test_the_command_logs_in_submits_waits_and_prints_the_summary(site, worker, tmp_path):
    run_file = tmp_path / "run-B.txt"
    run_file.write_bytes(RUN_B)

    login = rrl_command(
        "--url", site, "login", "--username", "alice", config=tmp_path, RRL_PASSWORD="pw-alice-123"
    )
    assert login.returncode == 0, login.stderr
    stored = tmp_path / "rrl" / "config.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    token = json.loads(stored.read_text())["tokens"][site]
    assert token.startswith("rrl_")

    # No --url: the site and token come from the config file.
    done = rrl_command(
        "submit", "library", str(run_file), "--name", "cli-run", "--wait", config=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Run cli-run" in done.stdout and "is scored on library" in done.stdout
    assert "  AP       0.7397" in done.stdout and "  nDCG@10  0.8562" in done.stdout
    assert "uploading: 100%" in done.stderr and "scoring: scored" in done.stderr
    run = Submission.objects.get(run_name="cli-run")
    assert run.status == "scored" and run.task_id != "eager"

    listed = rrl_command("runs", "--benchmark", "library", config=tmp_path)
    assert listed.returncode == 0 and "cli-run" in listed.stdout and "scored" in listed.stdout
    board = rrl_command("board", "library", config=tmp_path)
    assert board.returncode == 0 and "cli-run" in board.stdout and "0.7397" in board.stdout
    assert "ranked by AP" in board.stdout and "map" not in board.stdout

    # The same file again: the existing run named, a non-zero exit.
    again = rrl_command("submit", "library", str(run_file), config=tmp_path)
    assert again.returncode == 1
    assert f"/api/submissions/{run.pk}/" in again.stderr, again.stderr
    assert Submission.objects.count() == 1

    # A bad line: `file:line: reason` and a non-zero exit, nothing stored.
    bad = tmp_path / "bad.txt"
    bad.write_bytes(RUN_B.replace(b"system-B", b"bad", 1).replace(b" Q0 ", b" ", 2))
    refused = rrl_command("submit", "library", str(bad), "--wait", config=tmp_path)
    assert refused.returncode == 1
    assert "bad.txt:1:" in refused.stderr, refused.stderr
    assert Submission.objects.count() == 1

    # RRL_TOKEN overrides the stored token: a wrong one is refused.
    wrong = rrl_command("runs", config=tmp_path, RRL_TOKEN="rrl_nothing")
    assert wrong.returncode == 1 and "token" in wrong.stderr.lower()


def _rows(data: bytes) -> list[tuple[str, str, float]]:
    rows = []
    for line in data.decode().splitlines():
        need, _, doc, _, score, _ = line.split()
        rows.append((need, doc, float(score)))
    return rows


def test_every_input_shape_gives_the_same_scores(site, worker, tmp_path):
    import pandas as pd
    from ir_measures import ScoredDoc

    rows = _rows(RUN_B)
    nested: dict[str, dict[str, float]] = {}
    for need, doc, score in rows:
        nested.setdefault(need, {})[doc] = score
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    gzipped = tmp_path / "run-B.txt.gz"
    gzipped.write_bytes(rrl.run_gzip(RUN_B.replace(b"system-B", b"system-gz")))  # other bytes
    shapes = {
        "file": str(DEMO / "run-B.txt"),
        "gzip": gzipped,
        "frame": frame,
        "dict": nested,
        "scored-docs": (ScoredDoc(*row) for row in rows),
    }
    try:
        from ranx import Run

        shapes["ranx"] = Run(nested, name="ranx")
    except ImportError:  # pragma: no cover - ranx is a dev dependency
        pass

    client = rrl.Client(site)
    client.login("alice", "pw-alice-123")
    summaries = {}
    for name, run in shapes.items():
        answered = client.submit(
            "library", run, name=f"shape-{name}", wait=True, poll=0.2, timeout=60
        )
        assert answered["status"] == "scored", (name, answered["failure_reason"])
        summaries[name] = answered["summary"]
    first = summaries["file"]
    assert round(first["map"], 3) == 0.740
    for name, summary in summaries.items():
        assert summary == first, name
    assert Submission.objects.filter(status="scored").count() == len(shapes)


class LosesTheFirstAnswer(httpx.BaseTransport):
    """Sends every request, but the first submit's answer is 'lost' on the way back."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.keys: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.url.path.endswith("/submissions/") and request.method == "POST":
            self.keys.append(request.headers["Idempotency-Key"])
            if len(self.keys) == 1:
                response.read()
                raise httpx.ReadError("connection reset")
        return response


def test_a_retried_submit_returns_the_same_run_and_a_duplicate_names_it(site, worker):
    transport = LosesTheFirstAnswer()
    client = rrl.Client(site, transport=transport, backoff=0)
    client.login("alice", "pw-alice-123")
    run = client.submit("library", RUN_B, name="retried")
    assert len(transport.keys) == 2 and transport.keys[0] == transport.keys[1]
    assert Submission.objects.get().pk == run["id"]  # stored once, answered twice

    with pytest.raises(rrl.Conflict) as duplicate:
        client.submit("library", RUN_B)
    existing = duplicate.value.existing
    assert existing["id"] == run["id"] and existing["url"].endswith(
        f"/api/submissions/{run['id']}/"
    )
    assert Submission.objects.count() == 1
    assert client.wait(run["id"], poll=0.2, timeout=60)["status"] == "scored"
    assert client.withdraw(run["id"])["withdrawn"] is True


def test_the_client_uses_the_presigned_upload_when_files_are_in_a_bucket(bucket, site, s3_worker):
    client = rrl.Client(site)
    client.login("alice", "pw-alice-123")
    progress: list[tuple[str, int, int]] = []
    run = client.submit(
        "library",
        str(DEMO / "run-B.txt"),
        name="via-bucket",
        wait=True,
        poll=0.2,
        timeout=60,
        progress=lambda *event: progress.append(event),
    )
    assert run["status"] == "scored" and round(run["summary"]["map"], 3) == 0.740
    upload = PendingUpload.objects.get()
    assert upload.submission_id == run["id"]  # through the bucket, not the multipart form
    assert Submission.objects.get().file.name in bucket.keys()
    assert progress[0][0] == "upload" and progress[-1][0] == "scored"
