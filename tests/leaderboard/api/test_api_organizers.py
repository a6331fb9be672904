"""The organizers' API: create a benchmark, load needs and judgments, rescore; and tokens
from the API (log in with a password, list, revoke) under django-axes' lock."""

from __future__ import annotations

import gzip

from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import ApiToken, Benchmark, Submission
from tests import DEMO
from tests.leaderboard.api.test_api import bearer, error_of, upload


def post_file(client, url: str, headers: dict, content: bytes, name: str, **fields):
    return client.post(url, {"file": SimpleUploadedFile(name, content), **fields}, headers=headers)


# --- Benchmarks ------------------------------------------------------------------------


def test_staff_create_a_benchmark_and_become_its_organizer(client, db, organizer, participant):
    new = {
        "slug": "robust04",
        "title": "Robust 2004",
        "primary_measure": "nDCG@10",
        "shown_measures": ["P@10", "map"],
        "tested_measures": ["RR@10"],
        "daily_limit": 5,
        "open": False,
    }
    error_of(client.post("/api/benchmarks/", new, content_type="application/json"), 401)
    as_participant = client.post(
        "/api/benchmarks/", new, content_type="application/json", headers=bearer(participant)
    )
    error_of(as_participant, 403)
    headers = bearer(organizer)
    created = client.post("/api/benchmarks/", new, content_type="application/json", headers=headers)
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["slug"] == "robust04" and body["primary_measure"] == "ndcg_cut_10"
    assert body["shown_measures"] == ["P_10", "map"] and body["open"] is False
    assert (
        body["tested_measures"][0] == "ndcg_cut_10"
        and "recip_rank_cut_10" in body["tested_measures"]
    )
    assert created["Location"] == body["url"]
    benchmark = Benchmark.objects.get(slug="robust04")
    assert benchmark.is_organised_by(organizer) and benchmark.daily_limit == 5

    again = client.post("/api/benchmarks/", new, content_type="application/json", headers=headers)
    assert "slug" in error_of(again, 409)["details"]
    bad = {**new, "slug": "other", "primary_measure": "ndcg10"}
    body = error_of(
        client.post("/api/benchmarks/", bad, content_type="application/json", headers=headers), 400
    )
    assert "primary_measure" in body["details"]
    error_of(client.post("/api/benchmarks/", {"slug": "x"}, headers=headers), 415)  # not JSON
    body = error_of(
        client.post(
            "/api/benchmarks/",
            {"slug": "no title"},
            content_type="application/json",
            headers=headers,
        ),
        400,
    )
    assert {"slug", "title"} <= set(body["details"])


def test_organizers_load_needs_and_judgments_and_rescore(
    client, db, organizer, participant, django_capture_on_commit_callbacks
):
    benchmark = Benchmark.objects.create(slug="fresh", title="Fresh")
    needs_url, qrels_url = "/api/benchmarks/fresh/needs/", "/api/benchmarks/fresh/judgments/"
    needs, qrels = (DEMO / "needs.tsv").read_bytes(), (DEMO / "qrels.txt").read_bytes()
    error_of(post_file(client, needs_url, bearer(participant), needs, "needs.tsv"), 403)
    error_of(post_file(client, needs_url, {}, needs, "needs.tsv"), 401)
    headers = bearer(organizer)
    error_of(post_file(client, needs_url, headers, needs, "needs.tsv"), 403)  # not theirs yet
    benchmark.organizers.add(organizer)

    loaded = post_file(client, needs_url, headers, needs, "needs.tsv")
    assert loaded.status_code == 200 and loaded.json()["loaded"] == benchmark.needs.count() > 0
    broken = error_of(post_file(client, qrels_url, headers, b"q1 0 d1\n", "qrels.txt"), 400)
    assert "qrels.txt:1:" in broken["error"] and not benchmark.judgments.exists()
    with django_capture_on_commit_callbacks(execute=True):
        first = post_file(client, qrels_url, headers, qrels, "qrels.txt", note="first")
    assert first.status_code == 201
    assert first.json()["version"] == 1 and first.json()["created"] is True
    same = post_file(client, qrels_url, headers, qrels, "qrels.txt")
    assert same.status_code == 200 and same.json()["created"] is False
    same = post_file(client, qrels_url, headers, gzip.compress(qrels), "qrels.txt.gz")
    assert same.status_code == 200 and same.json()["created"] is False  # the same lines
    assert same.json()["queued"] == 0 and benchmark.judgments.count() == 1

    with django_capture_on_commit_callbacks(execute=True):
        assert upload(client, bearer(participant)).status_code == 404  # another benchmark
        response = client.post(
            "/api/benchmarks/fresh/submissions/",
            {"file": SimpleUploadedFile("run.txt", (DEMO / "run-B.txt").read_bytes())},
            headers=bearer(participant),
        )
    assert response.status_code == 201
    Submission.objects.update(status="failed")
    error_of(client.post("/api/benchmarks/fresh/rescore/", headers=bearer(participant)), 403)
    with django_capture_on_commit_callbacks(execute=True):
        rescored = client.post("/api/benchmarks/fresh/rescore/", headers=headers)
    assert rescored.status_code == 202 and rescored.json() == {"benchmark": "fresh", "queued": 1}
    assert Submission.objects.get().status == "scored"
    error_of(client.post("/api/benchmarks/nope/rescore/", headers=headers), 404)


# --- Tokens ----------------------------------------------------------------------------


def log_in(client, username: str, password: str, name: str = "cli", address: str = "127.0.0.1"):
    return client.post(
        "/api/tokens/",
        {"username": username, "password": password, "name": name},
        content_type="application/json",
        REMOTE_ADDR=address,
    )


def test_a_client_logs_in_for_a_token_lists_and_revokes_its_tokens(client, participant):
    created = log_in(client, "alice", "pw-alice-123", name="laptop")
    assert created.status_code == 201 and created["Cache-Control"] == "no-store"
    body = created.json()
    token = ApiToken.objects.get()
    assert body["id"] == token.pk and body["name"] == "laptop"
    assert token.sha256 == ApiToken.digest(body["token"]) and body["token"].startswith("rrl_")
    headers = {"Authorization": f"Bearer {body['token']}"}
    listed = client.get("/api/tokens/", headers=headers).json()
    assert [t["name"] for t in listed] == ["laptop"] and "token" not in listed[0]
    error_of(client.get("/api/tokens/"), 401)

    other, _ = ApiToken.issue(participant, "desktop")
    assert client.delete(f"/api/tokens/{other.pk}/", headers=headers).status_code == 204
    error_of(client.delete(f"/api/tokens/{other.pk}/", headers=headers), 404)
    assert client.delete(f"/api/tokens/{token.pk}/", headers=headers).status_code == 204
    error_of(client.get("/api/tokens/", headers=headers), 401)  # revoked itself


def test_others_tokens_cannot_be_revoked(client, participant, other_participant):
    theirs, _ = ApiToken.issue(other_participant, "bob's")
    error_of(client.delete(f"/api/tokens/{theirs.pk}/", headers=bearer(participant)), 404)
    assert ApiToken.objects.filter(pk=theirs.pk).exists()


def test_wrong_passwords_are_401_then_the_username_is_locked_with_json_429(
    client, participant, settings
):
    settings.AXES_FAILURE_LIMIT = 3
    for _ in range(2):
        assert error_of(log_in(client, "alice", "guess"), 401)["error"] == (
            "Wrong username or password."
        )
    locked = log_in(client, "alice", "guess")
    body = error_of(locked, 429)
    assert int(locked["Retry-After"]) > 0 and body["details"]["retry_after"] > 0
    # While locked even the right password gets no token from this address; the lock is
    # on the (username, address) pair, so alice elsewhere is not locked out.
    error_of(log_in(client, "alice", "pw-alice-123"), 429)
    assert not ApiToken.objects.exists()
    assert log_in(client, "alice", "pw-alice-123", address="10.9.0.1").status_code == 201
    error_of(log_in(client, "", ""), 400)


def test_token_log_ins_are_rate_limited_per_username_and_address(
    client, participant, other_participant, settings
):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "login": "2/hour",
        },
    }
    for _ in range(2):
        assert log_in(client, "alice", "pw-alice-123").status_code == 201
    refused = log_in(client, "alice", "pw-alice-123")
    error_of(refused, 429)
    assert int(refused["Retry-After"]) > 0 and refused["RateLimit-Limit"] == "2"
    error_of(log_in(client, "ALICE", "pw-alice-123"), 429)  # one count, whatever the case
    assert log_in(client, "alice", "pw-alice-123", address="10.9.0.2").status_code == 201
    # Someone else behind the same address still logs in.
    assert log_in(client, "bob", "pw-bob-123").status_code == 201
