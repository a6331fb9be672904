"""Hostile uploads through the web form and the API: gzip bombs and broken gzip streams
are refused at upload (nothing stored, memory bounded), the worker's reader keeps the
same limit, and any file name is stored under a short safe name with the given one kept."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from evaluation.trec import TrecFormatError
from leaderboard.models import Judgments, Submission
from leaderboard.pipeline.loading import load_judgments
from tests import ROOT
from tests.hostile import gzip_bomb
from tests.leaderboard.api.test_api import bearer

DEMO = ROOT / "leaderboard" / "demo"
RUN_B = (DEMO / "run-B.txt").read_bytes()
FORM = "/benchmarks/library/submit/"
API = "/api/benchmarks/library/submissions/"
# 1,200 valid lines (more than the 1,000 the head check looks at) for the system-B tag
LONG_RUN = b"".join(
    b"stage-plays Q0 extra-%d %d %d.5 system-B\n" % (i, i + 1, 5000 - i) for i in range(1200)
)


def form_post(client, user, content: bytes, name: str, **fields):
    client.force_login(user)
    return client.post(FORM, {"file": SimpleUploadedFile(name, content), **fields})


def api_post(client, user, content: bytes, name: str, **fields):
    data = {"file": SimpleUploadedFile(name, content), **fields}
    return client.post(API, data, headers=bearer(user))


def refusal(response) -> str:
    """The message a refused upload shows: the form's page or the API's JSON error."""
    if response["Content-Type"].startswith("application/json"):
        return response.json()["error"]
    return response.content.decode()


@pytest.fixture
def small_limit(settings):
    """The size limit alone (the ratio limit has tests of its own, test_upload_checks)."""
    settings.MAX_UNCOMPRESSED_MB = 10
    settings.MAX_GZIP_RATIO = 10**9


# --- Gzip bombs and broken gzip at upload ------------------------------------------------


@pytest.mark.parametrize("post", [form_post, api_post], ids=["form", "api"])
def test_a_gzip_bomb_is_refused_at_upload_quickly(client, library, participant, small_limit, post):
    bomb = gzip_bomb(30)  # ~30 KB of blank lines expanding to 30 MB
    started = time.perf_counter()
    response = post(client, participant, bomb, "run.txt.gz", run_name="bomb")
    assert time.perf_counter() - started < 20  # a guard against a hang, not a measurement
    assert response.status_code == 400
    assert "run.txt.gz: expands past 10 MB" in refusal(response)
    assert not Submission.objects.exists()


@pytest.mark.parametrize("post", [form_post, api_post], ids=["form", "api"])
def test_valid_lines_before_a_huge_compressed_tail_are_refused_at_upload(
    client, library, participant, small_limit, post
):
    """The head is fine: only reading the whole stream finds the bomb behind it."""
    upload = gzip_bomb(40, head=RUN_B + LONG_RUN)
    response = post(client, participant, upload, "tail.txt.gz", run_name="tail")
    assert response.status_code == 400
    assert "tail.txt.gz: expands past 10 MB" in refusal(response)
    assert not Submission.objects.exists()


def _broken_gzip() -> dict[str, tuple[bytes, str]]:
    packed = gzip.compress(RUN_B + LONG_RUN)
    lines = (RUN_B + LONG_RUN).count(b"\n")
    return {
        "trailing-garbage": (
            packed + b"PK\x03\x04 not gzip",
            f"run.gz:{lines + 1}: data after the end of the gzip stream (trailing garbage)",
        ),
        "truncated": (packed[: len(packed) * 3 // 4], "truncated gzip data"),
        "bad-crc": (
            packed[:-8] + bytes([packed[-8] ^ 0xFF]) + packed[-7:],
            f"run.gz:{lines + 1}: corrupt gzip data (CRC check failed",
        ),
    }


@pytest.mark.parametrize("case", ["trailing-garbage", "truncated", "bad-crc"])
@pytest.mark.parametrize("post", [form_post, api_post], ids=["form", "api"])
def test_broken_gzip_is_refused_at_upload_not_later(client, library, participant, post, case):
    data, message = _broken_gzip()[case]
    response = post(client, participant, data, "run.gz", run_name="broken")
    assert response.status_code == 400
    assert message in refusal(response)
    assert re.search(r"run\.gz:\d+: ", refusal(response))
    assert not Submission.objects.exists()


def test_the_worker_reads_no_more_than_the_limit(
    client, library, participant, settings, django_capture_on_commit_callbacks
):
    """A run file stored under a larger limit and parsed by scoring under a smaller one
    fails with the reader's own message: scoring passes MAX_UNCOMPRESSED_MB to the
    engine. (A run whose upload check stored its parsed lines is not parsed again: it
    was admitted under the limit of its day, and its lines are what is scored.)"""
    settings.MAX_UNCOMPRESSED_MB = 10
    upload = gzip_bomb(2, head=RUN_B)  # 2 MB of blank lines after the run: valid
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = form_post(client, participant, upload, "wide.txt.gz", run_name="wide")
    assert response.status_code == 302
    assert Submission.objects.get().parsed
    Submission.objects.update(parsed="")  # stored without them: scoring reads the file
    settings.MAX_UNCOMPRESSED_MB = 1
    for callback in callbacks:
        callback()
    submission = Submission.objects.get()
    assert submission.status == "failed"
    assert submission.failure_reason == "wide.txt.gz: expands past 1 MB"
    assert not submission.results.exists()


def test_judgments_past_the_limit_are_refused_and_nothing_stored(library, settings):
    settings.MAX_UNCOMPRESSED_MB = 1
    bomb = gzip_bomb(5, head=(DEMO / "qrels.txt").read_bytes())
    with pytest.raises(TrecFormatError, match=r"^qrels\.txt\.gz: expands past 1 MB$"):
        load_judgments(library, io.BytesIO(bomb), "qrels.txt.gz")
    assert Judgments.objects.filter(benchmark=library).count() == 1


def test_relevance_out_of_range_names_its_line_when_loading(library):
    qrels = b"stage-plays 0 d1 1\nstage-plays 0 d2 99999999999999999999\n"
    with pytest.raises(TrecFormatError) as caught:
        load_judgments(library, io.BytesIO(qrels), "qrels.txt")
    assert str(caught.value) == (
        "qrels.txt:2: relevance '99999999999999999999' is out of range (a 64-bit integer)"
    )
    assert Judgments.objects.filter(benchmark=library).count() == 1


FORM_PEAK = textwrap.dedent(
    """
    import json, os, resource, time
    import django
    os.environ["DJANGO_SETTINGS_MODULE"] = "leaderboard.settings"
    django.setup()
    from django.core.files.uploadedfile import SimpleUploadedFile
    from leaderboard.models import Benchmark
    from leaderboard.uploads.forms import SubmissionForm
    from tests.hostile import gzip_bomb
    rss = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out = {}
    for label, data in [
        ("blank", gzip_bomb(30)),
        ("tail", gzip_bomb(600, head=b"".join(b"q1 Q0 d%d 1 1 t\\n" % i for i in range(1000)))),
    ]:
        upload = SimpleUploadedFile("run.txt.gz", data)
        form = SubmissionForm({"run_name": "bomb"}, {"file": upload}, benchmark=Benchmark())
        before, started = rss(), time.perf_counter()
        valid = form.is_valid()
        out[label] = [valid, form.errors.get("file"), rss() - before, time.perf_counter() - started]
    print(json.dumps(out))
    """
)


def test_the_upload_check_holds_little_whatever_the_bomb():
    """Real RSS of the form's check in a fresh process (no database needed: the file is
    refused before any query), at a 500 MB limit: the 30 KB bomb is read to its end
    (30 MB), the 600 MB tail up to the limit; neither is held."""
    result = subprocess.run(
        [sys.executable, "-c", FORM_PEAK],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "MAX_UNCOMPRESSED_MB": "500",
            "MAX_GZIP_RATIO": str(10**9),  # the size limit alone
        },
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    blank, tail = figures["blank"], figures["tail"]
    assert blank[:2] == [False, ["run.txt.gz:1: empty file"]], figures
    assert tail[:2] == [False, ["run.txt.gz: expands past 500 MB"]], figures
    assert blank[2] < 50 << 20 and tail[2] < 50 << 20, figures
    assert blank[3] < 60 and tail[3] < 60, figures  # a guard against a hang


def test_max_uncompressed_mb_defaults_to_four_times_the_upload_limit_and_is_validated():
    def setting(**env: str) -> subprocess.CompletedProcess:
        code = "import leaderboard.settings as s; print(s.MAX_UNCOMPRESSED_MB)"
        clean = {k: v for k, v in os.environ.items() if not k.startswith("MAX_")}
        return subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
            env={**clean, "PYTHONPATH": str(ROOT), **env},
        )

    assert setting().stdout.strip() == "2000"
    assert setting(MAX_UPLOAD_MB="100").stdout.strip() == "400"
    assert setting(MAX_UPLOAD_MB="5000").stdout.strip() == "10240"  # never above 10 GB
    assert setting(MAX_UNCOMPRESSED_MB="64").stdout.strip() == "64"
    for bad in ("0", "10241", "-5"):
        result = setting(MAX_UNCOMPRESSED_MB=bad)
        assert result.returncode != 0
        assert f"MAX_UNCOMPRESSED_MB must be between 1 and 10240 (10 GB), got {bad}" in (
            result.stderr
        )
    assert "MAX_UNCOMPRESSED_MB must be an integer" in setting(MAX_UNCOMPRESSED_MB="2GB").stderr


# --- File names ----------------------------------------------------------------------------

STORED = re.compile(
    r"runs/library/[A-Za-z0-9._-]{1,40}-[0-9a-f]{12}-[A-Za-z0-9][A-Za-z0-9._-]{0,39}(\.gz)?"
)
NAMES = {
    # given name -> what Django's upload parser leaves of it (the name kept on the row)
    "long": ("r" * 396 + ".txt", "r" * 251 + ".txt"),
    "parent-dirs": ("../../../etc/cron.d/run.txt", "run.txt"),
    "windows-path": ("..\\..\\Windows\\run.txt", "run.txt"),
    "control": ("run\x01\x1b[31m\x7f\u200b.txt", "run[31m.txt"),
    "unicode": ("BM25 (été) 日本語 v2.txt", "BM25 (été) 日本語 v2.txt"),
    "markup": ('"><img src=x onerror=alert(1)>.txt', '"><img src=x onerror=alert(1)>.txt'),
    "dots": ("....txt", "....txt"),
}
BOUNDARY = "hostile-boundary-7MA4YWxkTrZu0gW"


def raw_upload(client, url: str, name: str, content: bytes, headers=None, **fields):
    """A multipart body written by hand, the file name sent as given (RFC 5987
    ``filename*``, so any character arrives), not cleaned first as the test client does."""
    parts = [
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
        for key, value in fields.items()
    ]
    parts.append(
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; '
        f"filename*=UTF-8''{quote(name, safe='')}\r\n"
        "Content-Type: application/octet-stream\r\n\r\n".encode()
        + content
        + f"\r\n--{BOUNDARY}--\r\n".encode()
    )
    return client.post(
        url,
        b"".join(parts),
        content_type=f"multipart/form-data; boundary={BOUNDARY}",
        headers=headers or {},
    )


@pytest.mark.parametrize("case", sorted(NAMES))
@pytest.mark.parametrize("via", ["form", "api"])
def test_any_file_name_is_stored_short_and_safe_with_the_given_one_kept(
    client, library, participant, via, case
):
    given, kept = NAMES[case]
    if via == "form":
        client.force_login(participant)
        response = raw_upload(client, FORM, given, RUN_B, run_name=f"n-{case}")
    else:
        response = raw_upload(
            client, API, given, RUN_B, headers=bearer(participant), run_name=f"n-{case}"
        )
    assert response.status_code in (201, 302), refusal(response)[:300]
    submission = Submission.objects.get()
    assert submission.original_name == kept
    assert STORED.fullmatch(submission.file.name), submission.file.name
    assert submission.file.name.startswith(f"runs/library/n-{case}-{submission.sha256[:12]}-")
    with submission.file.open("rb") as stored:
        assert stored.read() == RUN_B
    media = Path(submission.file.storage.location).resolve()
    assert Path(submission.file.path).resolve().is_relative_to(media)


def test_gzipped_content_is_stored_with_gz_whatever_it_was_called(client, library, participant):
    response = form_post(client, participant, gzip.compress(RUN_B), "run.txt", run_name="gz")
    assert response.status_code == 302
    submission = Submission.objects.get()
    assert submission.file.name.endswith("-run.txt.gz")
    assert submission.original_name == "run.txt"


@pytest.mark.parametrize("post", [form_post, api_post], ids=["form", "api"])
def test_refusals_name_the_file_as_it_was_given(client, library, participant, post):
    given = "BM25 (été) " + "x" * 300 + ".txt"
    kept = given[:251] + ".txt"  # Django keeps 255 characters, the extension included
    bad = RUN_B + b"stage-plays Q0 broken 1 NOTANUMBER system-B\n"
    response = post(client, participant, bad, given, run_name="bad-name")
    assert response.status_code == 400
    line = RUN_B.count(b"\n") + 1
    assert f"{kept}:{line}: score 'NOTANUMBER' is not a number" in refusal(response).replace(
        "&#x27;", "'"
    )
    assert not Submission.objects.exists()


def test_the_worker_names_the_file_as_it_was_given_and_the_run_page_shows_it(
    client, library, participant, django_capture_on_commit_callbacks
):
    """A doc_id twice, further apart than the upload check's 1 MB pieces: only the
    worker, which reads the whole run at once, finds it."""
    first = RUN_B.split(b"\n", 1)[0] + b"\n"
    filler = b"".join(b"stage-plays Q0 filler-%07d 1 1.5 system-B\n" % i for i in range(30_000))
    assert len(filler) > 1 << 20
    deep = RUN_B + filler + first
    line = deep.count(b"\n")
    with django_capture_on_commit_callbacks(execute=True):
        response = form_post(client, participant, deep, "My run <v2>.txt", run_name="deep")
    assert response.status_code == 302
    submission = Submission.objects.get()
    assert submission.status == "failed"
    doc, need = first.split()[2].decode(), first.split()[0].decode()
    assert submission.failure_reason == (
        f"My run <v2>.txt:{line}: doc_id {doc!r} twice for need {need!r} (first on line 1)"
    )
    page = client.get(submission.get_absolute_url()).content.decode()
    assert '<code class="file-name">My run &lt;v2&gt;.txt</code>' in page


def test_judgments_are_stored_short_and_safe_with_the_given_name_kept(library):
    given = "Q" * 400 + " (final).txt"
    judgments = load_judgments(library, io.BytesIO(b"stage-plays 0 d9 1\n"), given)
    assert judgments.original_name == given[:255]
    assert judgments.file.name == f"judgments/library/v{judgments.version}-" + "Q" * 40
    with judgments.file.open("rb") as stored:
        assert stored.read() == b"stage-plays 0 d9 1\n"
