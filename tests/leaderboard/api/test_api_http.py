"""HTTP that API clients rely on: 409 instead of a second copy, Idempotency-Key, rate-limit
headers, conditional GET on leaderboards, HEAD and OPTIONS."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.db.models import F
from django.test import Client

from leaderboard.models import Benchmark, IdempotencyKey, Judgments, Result, Submission
from tests.leaderboard.api.test_api import RUN_B, bearer, error_of, upload, variant

# --- 409 ---------------------------------------------------------------------------------


def test_an_identical_file_from_the_same_participant_is_a_409_naming_the_first_run(
    client, library, participant, other_participant
):
    headers = bearer(participant)
    first = upload(client, headers, run_name="first").json()
    again = error_of(upload(client, headers, run_name="again", name="renamed.txt"), 409)
    assert "already submitted this file" in again["error"]
    assert again["details"]["existing"]["id"] == first["id"]
    assert again["details"]["existing"]["url"] == first["url"]
    # Another participant may submit the same bytes; a changed file is a new run.
    assert upload(client, bearer(other_participant), run_name="theirs").status_code == 201
    assert upload(client, headers, variant(1), run_name="changed").status_code == 201
    assert Submission.objects.count() == 3


def test_a_taken_run_name_is_a_409_naming_the_run_only_if_the_caller_may_see_it(
    client, library, participant, other_participant
):
    mine = upload(client, bearer(participant), run_name="taken").json()
    retry = error_of(upload(client, bearer(participant), variant(1), run_name="taken"), 409)
    assert "already exists" in retry["details"]["run_name"][0]
    assert retry["details"]["existing"] == {
        "run_name": "taken",
        "id": mine["id"],
        "url": mine["url"],
        "page": mine["page"],
    }
    Submission.objects.filter(pk=mine["id"]).update(is_hidden=True)
    theirs = error_of(upload(client, bearer(other_participant), variant(2), run_name="taken"), 409)
    assert theirs["details"]["existing"] == {"run_name": "taken"}  # hidden: no id, no URL
    assert Submission.objects.count() == 1


# --- Idempotency-Key -----------------------------------------------------------------------


def test_a_retry_with_the_same_idempotency_key_returns_the_first_answer(
    client, library, participant, other_participant
):
    headers = {**bearer(participant), "Idempotency-Key": "4f1c-retry-1"}
    first = upload(client, headers, run_name="once")
    assert first.status_code == 201
    retry = upload(client, headers, run_name="once")
    assert retry.status_code == 201 and retry.json() == first.json()
    assert retry["Location"] == first["Location"] and retry["Idempotent-Replayed"] == "true"
    # A different file under the same key still gets the first answer, not a second run.
    assert upload(client, headers, variant(1), run_name="other").json() == first.json()
    assert Submission.objects.count() == 1
    # Keys are per user: the same key from someone else is their own first request.
    theirs = upload(client, {**bearer(other_participant), "Idempotency-Key": "4f1c-retry-1"})
    assert theirs.status_code == 201 and theirs.json()["id"] != first.json()["id"]
    # A new key is a new request (here: the same file again, so a 409).
    assert upload(client, {**bearer(participant), "Idempotency-Key": "k2"}).status_code == 409


def test_idempotent_refusals_are_replayed_but_429s_are_not(client, library, participant, settings):
    headers = {**bearer(participant), "Idempotency-Key": "bad-file"}
    refused = error_of(upload(client, headers, b"q1 Q0 d1 1 0.5\n", "run.txt"), 400)
    assert error_of(upload(client, headers), 400) == refused  # replayed, though RUN_B is fine
    library.daily_limit = 0
    library.save()
    headers["Idempotency-Key"] = "over-the-limit"
    error_of(upload(client, headers), 429)
    assert not IdempotencyKey.objects.filter(key="over-the-limit").exists()
    library.daily_limit = 3
    library.save()
    assert upload(client, headers).status_code == 201  # the retry, once allowed, submits


def test_an_idempotency_key_on_another_benchmark_or_badly_formed(client, library, participant):
    headers = {**bearer(participant), "Idempotency-Key": "k"}
    assert upload(client, headers).status_code == 201
    library.pk, library.slug = None, "second"
    library.save()
    other = client.post(
        "/api/benchmarks/second/submissions/",
        {"file": SimpleUploadedFile("run.txt", variant(1))},
        headers=headers,
    )
    error_of(other, 422)
    for key in ["", "x" * 256, "caf\u00e9"]:
        error_of(upload(client, {**bearer(participant), "Idempotency-Key": key}), 400)


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_with_one_key_make_one_run(library, participant):
    """Two uploads with the same key at once: one run; the other request gets the
    first answer or a 409 saying it is still being answered."""
    headers = {**bearer(participant), "Idempotency-Key": "together"}
    answers = []
    start = threading.Barrier(2)

    def post():
        start.wait()
        try:
            answers.append(upload(Client(), headers).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=post) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) in ([201, 201], [201, 409])
    assert Submission.objects.count() == 1


# --- Rate limits -----------------------------------------------------------------------


def test_rate_limit_headers_and_429_per_token(client, library, participant, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"token": "3/minute", "anonymous": "5/minute", "login": "1/hour"},
    }
    headers = bearer(participant)
    seen = []
    for _ in range(3):
        response = client.get("/api/benchmarks/", headers=headers)
        assert response.status_code == 200
        seen.append(response["RateLimit-Remaining"])
        assert response["RateLimit-Limit"] == "3"
        assert 0 < int(response["RateLimit-Reset"]) <= 60
    assert seen == ["2", "1", "0"]
    refused = client.get("/api/benchmarks/library/", headers=headers)
    body = error_of(refused, 429)
    assert 0 < int(refused["Retry-After"]) <= 60 and refused["RateLimit-Remaining"] == "0"
    assert body["details"]["retry_after"] == int(refused["Retry-After"])
    # Another token of the same user has its own count; anonymous callers theirs.
    assert client.get("/api/benchmarks/", headers=bearer(participant)).status_code == 200
    anonymous = client.get("/api/benchmarks/")
    assert anonymous.status_code == 200 and anonymous["RateLimit-Limit"] == "5"


# --- Conditional GET, HEAD, OPTIONS ------------------------------------------------------


def test_leaderboards_answer_304_while_unchanged(
    client, demo, participant, django_capture_on_commit_callbacks
):
    board = client.get("/api/benchmarks/library/")
    etag, modified = board["ETag"], board["Last-Modified"]
    assert etag.startswith('"') and modified.endswith("GMT")
    assert "Authorization" in board["Vary"]
    again = client.get("/api/benchmarks/library/", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again["ETag"] == etag
    # Last-Modified follows scores, not an edited description: the ETag alone decides
    since = client.get("/api/benchmarks/library/", headers={"If-Modified-Since": modified})
    assert since.status_code == 200 and since["ETag"] == etag
    other = client.get("/api/benchmarks/library/?measure=P_10", headers={"If-None-Match": etag})
    assert other.status_code == 200  # another ranking is another representation

    # A new run changes the board: the old ETag no longer matches.
    with django_capture_on_commit_callbacks(execute=True):
        upload(client, bearer(participant), variant(1), run_name="new")
    changed = client.get("/api/benchmarks/library/", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed["ETag"] != etag
    export = client.get("/api/benchmarks/library/leaderboard.csv")
    assert export.status_code == 200 and export["ETag"]
    cached = client.get(
        "/api/benchmarks/library/leaderboard.csv", headers={"If-None-Match": export["ETag"]}
    )
    assert cached.status_code == 304


BOARD_URLS = [
    "/api/benchmarks/library/",
    "/api/benchmarks/library/leaderboard.csv",
    "/api/benchmarks/library/leaderboard.json",
]


def _validators(client, headers=None) -> list[tuple[str, str]]:
    answers = [client.get(url, headers=headers or {}) for url in BOARD_URLS]
    assert all(answer.status_code == 200 for answer in answers)
    return [(answer["ETag"], answer["Last-Modified"]) for answer in answers]


def _a_day_ago() -> None:
    """Every stored moment a day back, so that a validator moved by what happens next
    shows (Last-Modified counts whole seconds)."""
    day = dt.timedelta(days=1)
    Benchmark.objects.update(created=F("created") - day)
    Judgments.objects.update(created=F("created") - day)
    Result.objects.update(created=F("created") - day)
    Submission.objects.update(
        created=F("created") - day,
        finished=F("finished") - day,
        visibility_changed_at=F("visibility_changed_at") - day,
    )


def test_scoring_a_hidden_run_moves_no_validator_a_reader_gets(
    client, demo, participant, django_capture_on_commit_callbacks
):
    """A reader's ETag and Last-Modified of the board and its exports depend only on the
    runs they can see: a run uploaded, hidden while queued, scored and rescored changes
    neither, while its owner's move; showing it again moves the reader's."""
    owner = bearer(participant)
    _a_day_ago()
    anonymous, owners = _validators(client), _validators(client, owner)

    with django_capture_on_commit_callbacks() as scoring:  # stored and queued, not scored
        assert upload(client, owner, variant(1), run_name="secret").status_code == 201
    secret = Submission.objects.get(run_name="secret")
    secret.hide(participant)
    assert _validators(client) == anonymous
    with django_capture_on_commit_callbacks(execute=True):
        for callback in scoring:
            callback()
    secret.refresh_from_db()
    assert secret.status == "scored" and secret.is_hidden
    assert _validators(client) == anonymous
    # the owner sees the run: their validators move (the check above can fail)
    assert all(new != old for new, old in zip(_validators(client, owner), owners, strict=True))

    from leaderboard.pipeline.tasks import queue_rescore

    with django_capture_on_commit_callbacks(execute=True):
        queue_rescore(Submission.objects.filter(pk=secret.pk))
    secret.refresh_from_db()
    assert secret.status == "scored"
    assert _validators(client) == anonymous

    # showing it again changes the public board, and Last-Modified moves with it
    _a_day_ago()
    anonymous = _validators(client)
    secret.unhide(participant)
    shown = _validators(client)
    assert all(new != old for new, old in zip(shown, anonymous, strict=True))


def test_head_and_options_are_answered(client, demo, participant):
    run = Submission.objects.get(run_name="system-B")
    for url in [
        "/api/benchmarks/",
        "/api/benchmarks/library/",
        f"/api/submissions/{run.pk}/",
        "/api/benchmarks/library/leaderboard.csv",
        "/api/schema/",
    ]:
        get, head = client.get(url), client.head(url)
        assert head.status_code == 200 and head.content == b"", url
        assert head["Content-Type"] == get["Content-Type"], url
        options = client.options(url)
        assert options.status_code == 200, url
        assert "GET" in options["Allow"] and "OPTIONS" in options["Allow"], url
    submit = client.options("/api/benchmarks/library/submissions/", headers=bearer(participant))
    assert submit.status_code == 200 and submit["Allow"] == "POST, OPTIONS"
    assert "multipart/form-data" in submit.json()["parses"]


def test_a_file_sent_as_a_text_field_is_a_400_naming_the_field(client, library, participant):
    """What a client generated from a schema without `format: binary` did."""
    response = client.post(
        "/api/benchmarks/library/submissions/",
        {"file": RUN_B.decode(), "run_name": "text-field"},
        headers=bearer(participant),
    )
    body = error_of(response, 400)  # a text field, not a file: what a bad client sends
    assert "file" in body["details"], body


def test_query_values_the_schema_does_not_allow_are_400s(client, demo, participant):
    """What Schemathesis found accepted: empty values and page sizes DRF would ignore."""
    for url in [
        "/api/benchmarks/?page_size=abc",
        "/api/benchmarks/?page_size=0",
        "/api/benchmarks/?page_size=201",
        "/api/benchmarks/?search=",
        "/api/benchmarks/library/?measure=",
        "/api/submissions/?status=",
        "/api/benchmarks/library/leaderboard.csv?measure=",
    ]:
        body = error_of(client.get(url), 400)
        assert body["details"], url
    assert client.get("/api/benchmarks/?page_size=200").status_code == 200
