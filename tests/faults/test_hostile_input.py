"""Hostile input, through the web form and the API, on PostgreSQL: gzip bombs are refused
with the web process's memory bounded; 1,000 generated malformed run files give no server
error and every line-level refusal names ``file:line: reason`` with the right line; 50
concurrent uploads against a daily limit of 5 store exactly 5.

Each test prints its figures (``FIGURES {...}``; run with ``-s`` to see them) for
docs/reliability.md.
"""

from __future__ import annotations

import html
import json
import os
import re
import threading
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client

from leaderboard.models import ApiToken, Submission
from leaderboard.uploads import receiving
from tests import DEMO
from tests.faults.malformed import malformed
from tests.hostile import gzip_bomb

RUN_B = (DEMO / "run-B.txt").read_bytes()
FORM = "/benchmarks/library/submit/"
API = "/api/benchmarks/library/submissions/"
PAGE = os.sysconf("SC_PAGE_SIZE")


def figures(test: str, **values) -> None:
    print(f"\nFIGURES {test} {json.dumps(values)}")


def token_header(user) -> dict[str, str]:
    _, raw = ApiToken.issue(user, "fault suite")
    return {"Authorization": f"Bearer {raw}"}


def post(client: Client, via: str, content: bytes, name: str, headers: dict, **fields):
    data = {"file": SimpleUploadedFile(name, content), **fields}
    if via == "form":
        return client.post(FORM, data)
    return client.post(API, data, headers=headers)


def message(response) -> str:
    if response["Content-Type"].startswith("application/json"):
        body = response.json()
        return body.get("error") or json.dumps(body)  # a stored run's JSON if accepted
    return html.unescape(response.content.decode())


def stored_files() -> list[Path]:
    return [p for p in Path(settings.MEDIA_ROOT).glob("runs/**/*") if p.is_file()]


class PeakRss:
    """The most this process's resident memory grew above where it started, sampled
    every 2 ms from /proc by a thread (ru_maxrss cannot say: an earlier test's peak
    would hide this one's)."""

    def __enter__(self) -> PeakRss:
        self.start = self.peak = self._rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.peak = max(self.peak, self._rss())

    @property
    def growth(self) -> int:
        return self.peak - self.start

    @staticmethod
    def _rss() -> int:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * PAGE

    def _sample(self) -> None:
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, self._rss())


# --- Gzip bombs ----------------------------------------------------------------------------


def test_gzip_bombs_are_refused_with_the_web_process_memory_bounded(client, library, participant):
    """At the default limits (4 x MAX_UPLOAD_MB = 2,000 MB, MAX_GZIP_RATIO 100): a 30 KB
    bomb of blank lines, and a 2 MB bomb behind 1,000 valid lines, refused by its ratio
    a few MB in."""
    assert settings.MAX_UNCOMPRESSED_MB == 2000
    valid = b"".join(b"stage-plays Q0 d%d 1 %d system-B\n" % (i, 1000 - i) for i in range(1000))
    bombs = {
        "blank": (gzip_bomb(30), "run.txt.gz: expands more than 100 times its compressed size"),
        "behind-valid-lines": (
            gzip_bomb(2010, head=valid, members=True),  # 2,010 one-megabyte gzip members
            "run.txt.gz: expands more than 100 times its compressed size",
        ),
    }
    headers = token_header(participant)
    client.force_login(participant)
    results = {}
    for label, (bomb, expected) in bombs.items():
        for via in ("form", "api"):
            tracemalloc.start()
            started = time.perf_counter()
            with PeakRss() as rss:
                response = post(client, via, bomb, "run.txt.gz", headers, run_name="bomb")
            elapsed = time.perf_counter() - started
            _, traced = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            assert response.status_code == 400, message(response)[:300]
            assert expected in message(response)
            results[f"{label}/{via}"] = {
                "gz_bytes": len(bomb),
                "seconds": round(elapsed, 2),
                "rss_growth_mb": round(rss.growth / 2**20, 1),
                "traced_peak_mb": round(traced / 2**20, 1),
            }
            assert rss.growth < 100 << 20, results  # bounded: far below the 2 GB inflated
            assert traced < 32 << 20, results
            assert elapsed < 30, results
    assert not Submission.objects.exists()
    assert stored_files() == []
    figures("gzip-bombs", **results)


# --- 1,000 malformed run files --------------------------------------------------------------


@pytest.mark.long
def test_a_thousand_malformed_runs_through_the_form_and_the_api(
    library, participant, django_capture_on_commit_callbacks, settings
):
    """Every file goes through both paths and is refused at upload, a bad line past the
    first 1,000 too: 400, the message names ``file:line: reason`` with the generator's
    bad line, nothing stored."""
    library.daily_limit = 100_000
    library.save()
    settings.UPLOAD_REFUSAL_LIMIT = 100_000  # every file is refused: no budget here
    rates = dict.fromkeys(settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"])  # no rate limit
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
    # The API path as another participant: one participant's identical file is a 409.
    headers = token_header(get_user_model().objects.create_user("api-participant"))
    client = Client(raise_request_exception=False)
    client.force_login(participant)
    codes: dict[int, int] = {}
    wrong: list[str] = []
    deep = 0
    started = time.perf_counter()
    with django_capture_on_commit_callbacks(execute=True):
        for i in range(1000):
            case = malformed(i)
            for via in ("form", "api"):
                run_name = f"{via}-{i}"
                response = post(client, via, case.content, case.name, headers, run_name=run_name)
                codes[response.status_code] = codes.get(response.status_code, 0) + 1
                deep += case.deep
                text = message(response)
                if response.status_code != 400 or not case.expected.search(text):
                    found = re.search(rf"{re.escape(case.name)}:\d*:? [^<\n]*", text)
                    wrong.append(
                        f"{run_name} ({case.name}): {response.status_code}, wanted "
                        f"{case.expected.pattern!r}, got {found.group(0) if found else text[:200]!r}"
                    )
    upload_seconds = time.perf_counter() - started
    assert 500 not in codes, codes
    assert wrong == [], "\n".join(wrong[:20])
    assert deep > 0  # bad lines past the first 1,000 were among them
    assert not Submission.objects.exists()  # nothing stored for a refused file
    figures(
        "malformed-runs",
        files=1000,
        uploads=sum(codes.values()),
        status_codes=codes,
        refused_at_upload=codes.get(400, 0),
        past_line_1000=deep,
        server_errors=codes.get(500, 0),
        seconds=round(upload_seconds, 1),
    )


# --- The daily limit under concurrency ------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_fifty_concurrent_uploads_against_a_daily_limit_of_five(library, participant, monkeypatch):
    """25 through the form and 25 through the API at once, on PostgreSQL: the row lock in
    ``receive_run`` lets exactly five through; the others are told 429, none gets a 500."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL's row locks (SQLite serialises writers anyway)")
    library.daily_limit = 5
    library.save()
    # Scoring is not the subject here, and Celery's eager mode keeps a process-global
    # "join would block" flag that concurrent eager tasks in threads can leave set.
    monkeypatch.setattr(receiving, "queue_scoring", lambda submission: None)
    headers = token_header(participant)
    barrier = threading.Barrier(50)

    def upload(i: int) -> int:
        client = Client(raise_request_exception=False)
        via = "form" if i % 2 else "api"
        if via == "form":
            client.force_login(participant)
        try:
            barrier.wait(timeout=60)
            # each its own file: one participant's identical file would be a 409
            content = RUN_B.replace(b"system-B", f"c{i}".encode())
            return post(client, via, content, "run-B.txt", headers, run_name=f"c{i}").status_code
        finally:
            connection.close()

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=50) as pool:
        codes = list(pool.map(upload, range(50), timeout=120))
    elapsed = time.perf_counter() - started
    accepted = [c for c in codes if c in (201, 302)]
    assert len(accepted) == 5, sorted(codes)
    assert sorted(set(codes) - {201, 302}) == [429], sorted(codes)
    assert Submission.objects.filter(participant=participant).count() == 5
    assert len(stored_files()) == 5
    figures(
        "concurrent-uploads",
        uploads=50,
        stored=5,
        refused_429=codes.count(429),
        seconds=round(elapsed, 2),
    )
