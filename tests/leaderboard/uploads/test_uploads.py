"""The upload flow: good files are stored and scored; bad ones are refused before storing."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client

from leaderboard.models import Submission
from leaderboard.uploads import receiving
from tests import DEMO

RUN_B = (DEMO / "run-B.txt").read_bytes()


def variant(n: int) -> bytes:
    """Run B with another tag: other bytes (one participant's identical files are a 409)."""
    return RUN_B.replace(b"system-B", f"system-B{n}".encode())


def post_run(client, content: bytes, name: str = "run.txt", **fields):
    upload = SimpleUploadedFile(name, content)
    return client.post("/benchmarks/library/submit/", {"file": upload, **fields})


def test_anonymous_users_are_sent_to_log_in(client, library):
    response = client.get("/benchmarks/library/submit/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert post_run(client, RUN_B).status_code == 302
    assert not Submission.objects.exists()


def test_form_shows_the_daily_quota_and_when_it_resets(client, library, participant):
    client.force_login(participant)
    response = client.get("/benchmarks/library/submit/")
    assert response.status_code == 200
    text = response.content.decode()
    assert "0</strong> of 3 submissions today" in text
    assert "UTC" in text


def test_a_good_run_is_stored_scored_and_lands_on_its_page(
    client, library, participant, django_capture_on_commit_callbacks
):
    client.force_login(participant)
    with django_capture_on_commit_callbacks(execute=True):
        response = post_run(client, RUN_B, "run-B.txt", description="BM25 + rerank")
    submission = Submission.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/submissions/{submission.pk}/"
    assert submission.run_name == "system-B"  # from the TREC tag
    assert submission.size == len(RUN_B)
    assert submission.file.read() == RUN_B
    assert submission.status == "scored", submission.failure_reason
    assert round(submission.current_result().summary["map"], 3) == 0.740


@pytest.mark.parametrize("as_it_arrives", [True, False], ids=["handler", "form"])
def test_a_large_upload_is_hashed_once(client, library, participant, monkeypatch, as_it_arrives):
    """A run spooled to a temporary file (over FILE_UPLOAD_MAX_MEMORY_SIZE) is hashed as
    it arrives (HashingUploadHandler, 1 MB pieces on a thread) or, with Django's own
    handler, from its own handle while the form checks it: the stored SHA-256 and size
    are the file's either way, and nothing reads the file again to hash it."""
    from leaderboard.uploads import forms as upload_forms

    lines = b"".join(b"x%d Q0 d%d 1 1.5 system-B\n" % (i, i) for i in range(120_000))
    content = RUN_B + lines
    assert len(content) > 2_621_440
    monkeypatch.setattr(receiving, "sha256_of", None)  # must not be called
    if as_it_arrives:
        monkeypatch.setattr(upload_forms, "sha256_of_path", None)  # nor this
    else:
        from django.conf import settings

        monkeypatch.setattr(
            settings,
            "FILE_UPLOAD_HANDLERS",
            ["django.core.files.uploadhandler.TemporaryFileUploadHandler"],
        )
    client.force_login(participant)
    response = post_run(client, content, "big.txt")
    submission = Submission.objects.get()
    assert response.status_code == 302
    assert submission.sha256 == hashlib.sha256(content).hexdigest()
    assert submission.size == len(content)


def test_gzipped_runs_are_accepted(
    client, library, participant, django_capture_on_commit_callbacks
):
    client.force_login(participant)
    with django_capture_on_commit_callbacks(execute=True):
        response = post_run(client, gzip.compress(RUN_B), "run-B.txt.gz", run_name="gz-run")
    assert response.status_code == 302
    submission = Submission.objects.get()
    assert submission.status == "scored", submission.failure_reason
    assert round(submission.current_result().summary["map"], 3) == 0.740


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "run.txt:1: empty file"),
        (b"q1 Q0 d1 1 0.5\n", "run.txt:1:"),
        (RUN_B.splitlines()[0] + b"\nq1 Q0 d1 1 notanumber tag\n", "run.txt:2:"),
        (b"q1 Q0 d1 1 nan tag\n", "run.txt:1:"),
        (b"\x00\x01\x02binary\xff\xfe" * 50, "run.txt"),
        (b"q1 Q0 d1 1 1.0 tag\nq1 Q0 d1 2 0.5 tag\n", "run.txt:2:"),
    ],
    ids=["empty", "five-columns", "bad-score", "nan-score", "binary", "duplicate-doc"],
)
def test_bad_files_are_refused_with_file_line_and_reason(
    client, library, participant, content, reason
):
    client.force_login(participant)
    response = post_run(client, content, run_name="bad")
    assert response.status_code == 400
    assert reason in response.content.decode()
    assert not Submission.objects.exists()


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_an_error_deep_in_the_file_is_refused_at_upload_with_its_line(
    client, library, participant, gzipped
):
    """Every line is checked at upload, not only the first thousand: a score that is no
    number on line 1,234 of 2,000 is a 400 naming the line, and nothing is stored."""
    lines = RUN_B.decode().splitlines()
    body = lines + [f"stage-plays Q0 extra-{i} 1 {i} system-B" for i in range(2000 - len(lines))]
    body[1233] = "stage-plays Q0 broken 1 NOTANUMBER system-B"
    content = ("\n".join(body) + "\n").encode()
    name = "deep.txt.gz" if gzipped else "deep.txt"
    client.force_login(participant)
    response = post_run(
        client, gzip.compress(content) if gzipped else content, name, run_name="deep"
    )
    assert response.status_code == 400
    assert f"{name}:1234: score &#x27;NOTANUMBER&#x27; is not a number" in response.content.decode()
    assert not Submission.objects.exists()


def test_over_the_size_limit_is_refused(client, library, participant, settings):
    settings.MAX_UPLOAD_MB = 0
    client.force_login(participant)
    response = post_run(client, RUN_B)
    assert response.status_code in {400, 413}
    assert "limit" in response.content.decode()
    assert not Submission.objects.exists()


def test_closed_benchmark_refuses_uploads(client, library, participant):
    library.is_open = False
    library.save()
    client.force_login(participant)
    response = post_run(client, RUN_B)
    assert response.status_code == 403
    assert "closed" in response.content.decode()
    assert not Submission.objects.exists()


def test_run_names_are_unique_per_benchmark_and_validated(client, library, participant):
    client.force_login(participant)
    assert post_run(client, RUN_B, run_name="mine").status_code == 302
    again = post_run(client, RUN_B, run_name="mine")
    assert again.status_code == 400 and "already exists" in again.content.decode()
    bad_name = post_run(client, RUN_B, run_name="no spaces/allowed")
    assert bad_name.status_code == 400
    assert Submission.objects.count() == 1


def test_daily_limit_counts_this_utc_day_and_not_failed_runs(client, library, participant):
    client.force_login(participant)
    for i in range(3):
        assert post_run(client, variant(i), run_name=f"r{i}").status_code == 302
    refused = post_run(client, variant(3), run_name="r3")
    assert refused.status_code == 429
    assert "all 3 submissions for today" in refused.content.decode()
    # A run that failed does not count; runs of yesterday do not count.
    Submission.objects.filter(run_name="r0").update(status="failed")
    Submission.objects.filter(run_name="r1").update(
        created=Submission.objects.get(run_name="r1").created - dt.timedelta(days=1)
    )
    assert post_run(client, variant(4), run_name="r4").status_code == 302
    assert post_run(client, variant(5), run_name="r5").status_code == 302
    assert post_run(client, variant(6), run_name="r6").status_code == 429


def test_status_endpoint_reports_state_and_hides_hidden_runs(
    client, library, participant, other_participant, django_capture_on_commit_callbacks
):
    client.force_login(participant)
    with django_capture_on_commit_callbacks(execute=True):
        post_run(client, RUN_B)
    submission = Submission.objects.get()
    data = client.get(f"/submissions/{submission.pk}/status/").json()
    assert data["status"] == "scored" and data["finished"]
    Submission.objects.filter(pk=submission.pk).update(is_hidden=True)
    assert client.get(f"/submissions/{submission.pk}/status/").status_code == 200
    client.force_login(other_participant)
    assert client.get(f"/submissions/{submission.pk}/status/").status_code == 404
    client.logout()
    assert client.get(f"/submissions/{submission.pk}/status/").status_code == 404


def test_my_runs_lists_only_my_runs(client, library, participant, other_participant):
    client.force_login(other_participant)
    post_run(client, RUN_B, run_name="bobs-run")
    client.force_login(participant)
    post_run(client, RUN_B, run_name="alices-run")
    text = client.get("/accounts/runs/").content.decode()
    assert "alices-run" in text and "bobs-run" not in text
    run = Submission.objects.get(run_name="alices-run")
    assert f"{run.created:%Y-%m-%d %H:%M} UTC</time>" in text  # the time says its zone


def test_sign_up_logs_in_and_bad_sign_up_is_a_400(client, db):
    response = client.post(
        "/accounts/signup/",
        {
            "username": "carol",
            "email": "",
            "password1": "a-long-pass-phrase-9",
            "password2": "a-long-pass-phrase-9",
        },
    )
    assert response.status_code == 302
    assert client.get("/accounts/runs/").status_code == 200
    client.logout()
    bad = client.post("/accounts/signup/", {"username": "", "password1": "x", "password2": "y"})
    assert bad.status_code == 400


@pytest.mark.django_db(transaction=True)
def test_concurrent_uploads_cannot_pass_the_daily_limit(library, participant, monkeypatch):
    """Six uploads at once against a limit of 3: the row lock lets exactly three through."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL's row locks (SQLite serialises writers anyway)")
    # Scoring is not the subject here, and Celery's eager mode keeps a process-global
    # "join would block" flag that concurrent eager tasks in threads can leave set.
    monkeypatch.setattr(receiving, "queue_scoring", lambda submission: None)
    barrier = threading.Barrier(6)

    def upload(i: int) -> int:
        client = Client()
        client.force_login(participant)
        barrier.wait()
        try:
            return post_run(client, variant(i), run_name=f"c{i}").status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=6) as pool:
        codes = sorted(pool.map(upload, range(6)))
    assert codes == [302, 302, 302, 429, 429, 429]
    assert Submission.objects.filter(participant=participant).count() == 3


def test_log_out_and_password_change(client, participant):
    client.force_login(participant)
    response = client.post(
        "/accounts/password_change/",
        {
            "old_password": "pw-alice-123",
            "new_password1": "n3w-long-pass-phrase",
            "new_password2": "n3w-long-pass-phrase",
        },
    )
    assert response.status_code == 302
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/accounts/runs/").status_code == 302
    login = {"username": "alice", "password": "n3w-long-pass-phrase"}
    assert client.post("/accounts/login/", login).status_code == 302
    assert client.get("/accounts/runs/").status_code == 200
