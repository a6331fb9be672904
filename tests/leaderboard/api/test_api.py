"""The JSON API: tokens, every endpoint, every error code, and the schema held to the routes."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern

from leaderboard.api import urls as api
from leaderboard.models import ApiToken, Benchmark, Submission
from tests import DEMO

RUN_B = (DEMO / "run-B.txt").read_bytes()
SUBMIT = "/api/benchmarks/library/submissions/"


def bearer(user) -> dict[str, str]:
    _, raw = ApiToken.issue(user, "test")
    return {"Authorization": f"Bearer {raw}"}


def variant(n: int) -> bytes:
    """Run B with another tag: other bytes (one participant's identical files are a 409)."""
    return RUN_B.replace(b"system-B", f"system-B{n}".encode())


def upload(client, headers, content: bytes = RUN_B, name: str = "run-B.txt", **fields):
    data = {"file": SimpleUploadedFile(name, content), **fields}
    return client.post(SUBMIT, data, headers=headers)


def error_of(response, status: int) -> dict:
    """The JSON error body, after checking the status and the shape every error has."""
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"error", "details"}
    assert isinstance(body["error"], str) and body["error"]
    assert isinstance(body["details"], dict)
    return body


# --- Tokens ----------------------------------------------------------------------------


def test_the_tokens_page_shows_a_new_token_once_and_revokes_it(client, library, participant):
    assert client.get("/accounts/tokens/").status_code == 302  # log in first
    client.force_login(participant)
    assert 'href="/accounts/tokens/"' in client.get("/accounts/runs/").content.decode()
    assert client.get("/accounts/tokens/").status_code == 200

    created = client.post("/accounts/tokens/", {"name": "laptop"})
    assert created.status_code == 200
    assert "no-store" in created["Cache-Control"]
    raw = re.search(r'<code id="new-token">([^<]+)</code>', created.content.decode()).group(1)
    token = ApiToken.objects.get()
    assert token.name == "laptop" and token.user == participant
    assert token.sha256 == ApiToken.digest(raw) and raw not in token.sha256
    page = client.get("/accounts/tokens/").content.decode()
    assert "laptop" in page and raw not in page  # shown once only
    assert f"{token.created:%Y-%m-%d %H:%M} UTC</time>" in page  # the time says its zone

    headers = {"Authorization": f"Bearer {raw}"}
    assert client.get("/api/benchmarks/", headers=headers).status_code == 200
    token.refresh_from_db()
    assert token.last_used is not None

    # Revoking asks first, on a page that needs no JavaScript; only its POST revokes.
    revoke = f"/accounts/tokens/{token.pk}/revoke/"
    assert f'href="{revoke}"' in page
    confirm = client.get(revoke)
    assert confirm.status_code == 200 and "Revoke the token “laptop”?" in confirm.content.decode()
    assert "no-store" in confirm["Cache-Control"]
    assert ApiToken.objects.exists()
    assert client.post("/accounts/tokens/", {"revoke": str(token.pk)}).status_code == 400
    assert ApiToken.objects.exists()  # the list's POST no longer revokes unasked
    done = client.post(revoke, follow=True)
    assert done.redirect_chain == [("/accounts/tokens/", 302)]
    assert "Token “laptop” revoked" in done.content.decode()
    assert not ApiToken.objects.exists()
    error_of(client.get("/api/benchmarks/", headers=headers), 401)


def test_tokens_page_refuses_empty_names_and_others_tokens(client, participant, other_participant):
    client.force_login(participant)
    assert client.post("/accounts/tokens/", {"name": "  "}).status_code == 400
    assert client.get("/accounts/tokens/not-a-number/revoke/").status_code == 404
    theirs, _ = ApiToken.issue(other_participant, "bob's")
    assert client.get(f"/accounts/tokens/{theirs.pk}/revoke/").status_code == 404
    assert client.post(f"/accounts/tokens/{theirs.pk}/revoke/").status_code == 404
    assert ApiToken.objects.filter(pk=theirs.pk).exists()
    client.logout()
    assert client.post(f"/accounts/tokens/{theirs.pk}/revoke/").status_code == 302  # log in
    assert ApiToken.objects.filter(pk=theirs.pk).exists()
    client.force_login(participant)
    for _ in range(ApiToken.MAX_PER_USER):
        ApiToken.issue(participant, "many")
    assert client.post("/accounts/tokens/", {"name": "one more"}).status_code == 400


def test_issued_tokens_are_distinct_and_only_their_hash_is_stored(participant):
    first, raw_1 = ApiToken.issue(participant, "a")
    second, raw_2 = ApiToken.issue(participant, "b")
    assert raw_1 != raw_2 and len(raw_1) > 40
    stored = json.dumps(list(ApiToken.objects.values()), default=str)
    assert raw_1 not in stored and raw_2 not in stored
    assert ApiToken.authenticate(raw_1).user == participant
    assert ApiToken.authenticate(raw_1 + "x") is None


@pytest.mark.parametrize(
    "header",
    [
        "Bearer nonsense",
        "Bearer ",
        "Bearer",
        "Basic YWxpY2U6cHc=",
        "rrl_abc",
        "Bearer \u00e9\u00e8",
    ],
)
def test_bad_tokens_are_401_on_every_endpoint(client, library, header):
    for url in ["/api/benchmarks/", "/api/benchmarks/library/", "/api/submissions/1/"]:
        response = client.get(url, headers={"Authorization": header})
        error_of(response, 401)
        assert response["WWW-Authenticate"].startswith("Bearer")
    error_of(upload(client, {"Authorization": header}), 401)
    assert not Submission.objects.exists()


def test_submitting_needs_a_token_even_when_logged_in(client, library, participant):
    client.force_login(participant)  # the session is ignored by the API
    body = error_of(upload(client, {}), 401)
    assert "Bearer" in body["error"]
    assert not Submission.objects.exists()


def test_tokens_of_inactive_users_are_refused(client, library, participant):
    headers = bearer(participant)
    participant.is_active = False
    participant.save()
    error_of(client.get("/api/benchmarks/", headers=headers), 401)


# --- Reading ---------------------------------------------------------------------------


def test_benchmarks_lists_what_the_caller_may_see(client, library, participant, organizer):
    hidden = Benchmark.objects.create(slug="draft", title="Draft", published=False)
    hidden.organizers.add(organizer)
    body = client.get("/api/benchmarks/").json()
    assert [b["slug"] for b in body["benchmarks"]] == ["library"]
    entry = body["benchmarks"][0]
    assert entry["primary_measure"] == "map" and entry["open"] is True
    assert entry["interpolation"] == "exact" and entry["tested_measures"] == ["map"]
    assert entry["shown_measures"][:2] == ["map", "P_5"]
    assert entry["judgments_version"] == 1 and entry["num_needs"] > 0
    assert entry["url"].endswith("/api/benchmarks/library/")
    assert entry["page"].endswith("/benchmarks/library/")
    mine = client.get("/api/benchmarks/", headers=bearer(participant)).json()
    assert [b["slug"] for b in mine["benchmarks"]] == ["library"]
    theirs = client.get("/api/benchmarks/", headers=bearer(organizer)).json()
    assert sorted(b["slug"] for b in theirs["benchmarks"]) == ["draft", "library"]
    error_of(client.get("/api/benchmarks/draft/"), 404)
    assert client.get("/api/benchmarks/draft/", headers=bearer(organizer)).status_code == 200


def test_benchmark_gives_the_leaderboard_with_every_summary_measure(client, demo):
    body = client.get("/api/benchmarks/library/").json()
    assert body["slug"] == "library"
    board = body["leaderboard"]
    assert board["ranked_by"] == "map"
    runs = board["runs"]
    assert [run["rank"] for run in runs] == [1, 2]
    assert runs[0]["run_name"] == "system-B" and round(runs[0]["value"], 3) == 0.740
    stored = Submission.objects.get(run_name="system-B").current_result().summary
    assert runs[0]["summary"] == stored and len(stored) > 20
    assert set(board["measures"]) == set(stored)
    by_p10 = client.get("/api/benchmarks/library/?measure=P_10").json()["leaderboard"]
    assert by_p10["ranked_by"] == "P_10"
    by_ndcg = client.get("/api/benchmarks/library/?measure=nDCG@10").json()["leaderboard"]
    assert by_ndcg["ranked_by"] == "ndcg_cut_10"
    unknown = error_of(client.get("/api/benchmarks/library/?measure=ndcg10"), 400)
    assert "ndcg10" in unknown["error"] and "nDCG@10" in unknown["details"]["suggestions"]
    error_of(client.get("/api/benchmarks/no-such-benchmark/"), 404)


# --- Submitting and polling ------------------------------------------------------------


def test_a_run_submitted_through_the_api_is_scored(
    client, library, participant, django_capture_on_commit_callbacks
):
    headers = bearer(participant)
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(client, headers, description="BM25 + rerank")
    assert response.status_code == 201, response.content
    created = response.json()
    submission = Submission.objects.get()
    assert response["Location"] == f"/api/submissions/{submission.pk}/"
    assert created["id"] == submission.pk and created["run_name"] == "system-B"
    assert created["status"] == "queued" and created["summary"] is None
    assert submission.participant == participant and submission.description == "BM25 + rerank"

    polled = client.get(response["Location"], headers=headers).json()
    assert polled["status"] == "scored", polled["failure_reason"]
    assert polled["failure_reason"] == "" and polled["finished"]
    assert round(polled["summary"]["map"], 3) == 0.740
    assert polled["judgments_version"] == 1
    assert client.get(response["Location"]).json()["status"] == "scored"  # public run

    per_need = client.get(polled["per_need_url"]).json()
    result = submission.current_result()
    frame = result.per_need_frame()
    assert per_need["measures"] == list(frame.columns)
    assert [n["need_id"] for n in per_need["needs"]] == list(frame.index)
    first = per_need["needs"][0]
    assert first["values"]["map"] == frame.iloc[0]["map"]
    assert "system-B" in client.get("/api/benchmarks/library/").content.decode()


def test_a_bad_line_deep_in_the_file_is_a_400_naming_it(client, library, participant):
    """Every line is checked at upload: a score that is no number past the first
    thousand lines is refused with its file:line: reason, not failed later."""
    lines = RUN_B.decode().splitlines()
    deep = lines + [f"stage-plays Q0 x-{i} 1 {i} system-B" for i in range(1200)]
    deep.append("stage-plays Q0 broken 1 NOTANUMBER system-B")
    content = ("\n".join(deep) + "\n").encode()
    body = error_of(upload(client, bearer(participant), content, "deep.txt"), 400)
    reason = f"deep.txt:{len(deep)}: score 'NOTANUMBER' is not a number"
    assert body["error"] == reason and body["details"]["file"] == [reason]
    assert not Submission.objects.exists()


def test_a_run_that_fails_scoring_reports_its_reason(
    client, library, participant, settings, django_capture_on_commit_callbacks
):
    """What only the worker can find (here: the file outgrew a limit lowered after it
    was stored) fails the run, with the reason on the API."""
    headers = bearer(participant)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = upload(client, headers, RUN_B, "run.txt")
    assert response.status_code == 201
    settings.MAX_UNCOMPRESSED_MB = 0
    for callback in callbacks:
        callback()
    polled = client.get(response["Location"], headers=headers).json()
    assert polled["status"] == "failed" and polled["summary"] is None
    assert polled["failure_reason"].endswith(".txt: is larger than 0 bytes")
    body = error_of(client.get(polled["per_need_url"], headers=headers), 404)
    assert body["details"] == {"status": "failed"}


def test_a_run_name_refused_says_the_rule(client, library, participant):
    """The name given, or the tag taken for one: the refusal says what a name may be."""
    rule = "1 to 40 letters, digits, dots, underscores or hyphens"
    body = error_of(upload(client, bearer(participant), run_name="ünïcødé run"), 400)
    assert body["error"] == f"Use {rule}."
    tagged = RUN_B.replace(b"system-B", "ünïcødé".encode())
    body = error_of(upload(client, bearer(participant), tagged), 400)
    assert body["error"] == f"Give the run a name: its tag is not a valid run name ({rule})."
    assert not Submission.objects.exists()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "run.txt:1: empty file"),
        (b"q1 Q0 d1 1 0.5\n", "run.txt:1:"),
        (b"q1 Q0 d1 1 1.0 tag\nq1 Q0 d1 2 0.5 tag\n", "run.txt:2:"),
        (b"\x00\x01\x02binary\xff\xfe" * 50, "run.txt"),
    ],
    ids=["empty", "five-columns", "duplicate-doc", "binary"],
)
def test_bad_files_are_400_with_the_engines_file_line_reason(
    client, library, participant, content, reason
):
    body = error_of(upload(client, bearer(participant), content, "run.txt", run_name="x"), 400)
    assert reason in body["error"]
    assert reason in body["details"]["file"][0]
    assert not Submission.objects.exists()


def test_other_invalid_submissions_are_400(client, library, participant):
    headers = bearer(participant)
    body = error_of(client.post(SUBMIT, {"run_name": "no-file"}, headers=headers), 400)
    assert "file" in body["details"]
    body = error_of(upload(client, headers, run_name="no spaces/allowed"), 400)
    assert "run_name" in body["details"]
    assert upload(client, headers, run_name="mine").status_code == 201
    as_json = client.post(SUBMIT, {"file": "x"}, content_type="application/json", headers=headers)
    error_of(as_json, 400)
    no_boundary = client.generic(
        "POST", SUBMIT, b"--x\r\n", content_type="multipart/form-data", headers=headers
    )
    error_of(no_boundary, 400)
    garbage = client.generic(
        "POST",
        SUBMIT,
        b"\xff\x00 not multipart at all",
        content_type="multipart/form-data; boundary=zz",
        headers=headers,
    )
    error_of(garbage, 400)
    assert Submission.objects.count() == 1


def test_closed_benchmark_is_403(client, library, participant):
    library.is_open = False
    library.save()
    body = error_of(upload(client, bearer(participant)), 403)
    assert "closed" in body["error"]
    assert not Submission.objects.exists()


def test_too_large_is_413(client, library, participant, settings):
    headers = bearer(participant)
    settings.MAX_UPLOAD_MB = 0  # the file itself is over the limit
    body = error_of(upload(client, headers), 413)
    assert "limit" in body["error"] and body["details"]["limit_bytes"] == 0
    settings.MAX_UPLOAD_MB = 1  # a declared body over the limit is refused unread
    claimed = client.post(
        SUBMIT,
        {"file": SimpleUploadedFile("run.txt", RUN_B)},
        headers=headers,
        CONTENT_LENGTH=str(50 * 1048576),
    )
    assert "larger than the limit" in error_of(claimed, 413)["error"]
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000  # form fields over Django's own limit
    error_of(upload(client, headers, description="x" * 5000), 413)
    assert not Submission.objects.exists()


def test_the_daily_limit_is_shared_with_the_web_form(client, library, participant):
    client.force_login(participant)
    web = Client()
    web.force_login(participant)
    for i in range(2):
        data = {"file": SimpleUploadedFile("run.txt", variant(10 + i)), "run_name": f"web-{i}"}
        assert web.post("/benchmarks/library/submit/", data).status_code == 302
    headers = bearer(participant)
    assert upload(client, headers, variant(0), run_name="api-0").status_code == 201
    refused = upload(client, headers, variant(1), run_name="api-1")
    body = error_of(refused, 429)
    assert "all 3 submissions for today" in body["error"]
    assert body["details"]["limit"] == 3 and body["details"]["resets_at"]
    assert 0 < int(refused["Retry-After"]) <= 86400
    data = {"file": SimpleUploadedFile("run.txt", variant(12)), "run_name": "web-2"}
    assert web.post("/benchmarks/library/submit/", data).status_code == 429
    assert Submission.objects.count() == 3


def test_token_posts_need_no_csrf_token(client, library, participant):
    strict = Client(enforce_csrf_checks=True)
    assert upload(strict, bearer(participant)).status_code == 201


# --- Who sees what ---------------------------------------------------------------------


def test_hidden_runs_only_for_their_owner_and_the_organizers(
    client, library, participant, other_participant, organizer, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        created = upload(client, bearer(participant))
    run = Submission.objects.get()
    Submission.objects.filter(pk=run.pk).update(is_hidden=True)
    library.organizers.add(organizer)
    urls = [f"/api/submissions/{run.pk}/", f"/api/submissions/{run.pk}/per-need/"]
    for who in [participant, organizer]:
        headers = bearer(who)
        for url in urls:
            assert client.get(url, headers=headers).status_code == 200, (who, url)
        board = client.get("/api/benchmarks/library/", headers=headers).json()["leaderboard"]
        assert [r["run_name"] for r in board["runs"]] == ["system-B"]
        assert board["runs"][0]["hidden"] is True
    assert client.get(created["Location"], headers=bearer(participant)).json()["hidden"] is True
    for headers in [bearer(other_participant), {}]:
        for url in urls:
            error_of(client.get(url, headers=headers), 404)
        board = client.get("/api/benchmarks/library/", headers=headers).json()["leaderboard"]
        assert board["runs"] == []


def test_runs_of_unpublished_benchmarks_are_404_to_outsiders(
    client, library, participant, other_participant
):
    assert upload(client, bearer(participant)).status_code == 201
    run = Submission.objects.get()
    library.published = False
    library.save()
    error_of(client.get(f"/api/submissions/{run.pk}/", headers=bearer(other_participant)), 404)
    error_of(upload(client, bearer(other_participant), run_name="x"), 404)


# --- 404, 405, never 500 ---------------------------------------------------------------


def test_unknown_things_are_json_404s(client, library, participant):
    headers = bearer(participant)
    assert upload(client, headers).status_code == 201
    queued = Submission.objects.get()
    body = error_of(client.get(f"/api/submissions/{queued.pk}/per-need/", headers=headers), 404)
    assert body["details"] == {"status": "queued"}  # its owner learns why
    error_of(client.get(f"/api/submissions/{queued.pk}/per-need/"), 404)  # others: no such run
    for url in [
        "/api/submissions/999999/",
        f"/api/submissions/{10**30}/",
        f"/api/submissions/{10**30}/per-need/",
        "/api/nope/",
        "/api/",
        "/api/benchmarks",  # no slash: a JSON 404, not an HTML redirect
        "/api/benchmarks/library/submissions/extra/",
        "/api/benchmarks/not a slug/",
        "/api/submissions/?benchmark=nope",  # not an empty list: no such benchmark
    ]:
        error_of(client.get(url), 404)
    listed = client.get("/api/submissions/?benchmark=library", headers=headers).json()
    assert [r["id"] for r in listed["submissions"]] == [queued.pk]
    error_of(client.post("/api/benchmarks/library/submissions"), 404)


def test_wrong_methods_are_405_with_allow(client, library, participant):
    headers = bearer(participant)
    response = client.delete("/api/benchmarks/library/", headers=headers)
    assert error_of(response, 405)["details"] == {"allowed": ["GET", "PATCH", "HEAD", "OPTIONS"]}
    assert response["Allow"] == "GET, PATCH, HEAD, OPTIONS"
    strict = Client(enforce_csrf_checks=True)  # a 405, not the CSRF page
    assert strict.post("/api/benchmarks/library/").status_code == 405
    response = client.get(SUBMIT, headers=headers)
    error_of(response, 405)
    assert response["Allow"] == "POST, OPTIONS"
    error_of(client.put("/api/submissions/1/"), 405)
    error_of(client.patch("/api/schema/"), 405)


@pytest.mark.parametrize("method", ["get", "post", "put", "delete", "options", "head"])
def test_odd_requests_never_500(client, demo, participant, method):
    run = Submission.objects.get(run_name="system-B")
    headers_variants = [{}, bearer(participant), {"Authorization": "Bearer \x7f\t x"}]
    urls = [
        "/api/benchmarks/",
        "/api/benchmarks/library/?measure=%00",
        "/api/benchmarks/library/?measure=map&measure=P_10",
        SUBMIT,
        f"/api/submissions/{run.pk}/",
        f"/api/submissions/{run.pk}/per-need/",
        "/api/submissions/0/",
        "/api/schema/?x=%ff",
        "/api/%ff/",
    ]
    for headers in headers_variants:
        for url in urls:
            response = getattr(client, method)(url, headers=headers)
            assert response.status_code < 500, (method, url, headers)
            if response.status_code >= 400 and method != "head":
                error_of(response, response.status_code)


# --- The schema ------------------------------------------------------------------------


PRESIGNED = ("api_uploads", "api_upload_confirm")  # documented only with a bucket


def documented_routes(presigned: bool = False) -> dict[str, URLPattern]:
    """Every route of api.urlpatterns but the catch-all 404 and the docs page (and the
    presigned uploads unless ``presigned``), by its OpenAPI path ('<slug:slug>' ->
    '{slug}'): a route added there and not documented fails."""
    left_out = {"api_not_found", "api_docs", "api_schema", *([] if presigned else PRESIGNED)}
    found = {}
    for pattern in api.urlpatterns:
        assert isinstance(pattern, URLPattern)
        if pattern.name not in left_out:
            route = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern))
            found["/api/" + route] = pattern
    return found


def test_the_schema_is_generated_openapi_3_and_documents_every_route(client, db):
    response = client.get("/api/schema/")
    assert response.status_code == 200
    schema = json.loads(response.content)
    assert schema["openapi"].startswith("3.0")
    routes = documented_routes()
    assert set(schema["paths"]) == set(routes) and len(routes) == 29
    for openapi_path, pattern in routes.items():
        documented = schema["paths"][openapi_path]
        view = pattern.callback.cls
        methods = {m for m in view.http_method_names if hasattr(view, m)} - {"options"}
        assert set(documented) == methods, pattern
        for operation in documented.values():
            codes = set(operation["responses"])
            assert codes & {"200", "201", "202", "204"} and "429" in codes, pattern
            declared = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
            assert declared == set(pattern.pattern.converters), pattern
    assert schema["components"]["securitySchemes"]["bearer"] == {
        **schema["components"]["securitySchemes"]["bearer"],
        "type": "http",
        "scheme": "bearer",
    }
    post = schema["paths"]["/api/benchmarks/{slug}/submissions/"]["post"]
    assert post["security"] == [{"bearer": []}]
    assert {"201", "400", "401", "403", "404", "409", "413", "429"} <= set(post["responses"])
    assert schema["components"]["schemas"]["Error"]["required"] == ["details", "error"]
    assert {p["name"] for p in post["parameters"] if p["in"] == "header"} == {"Idempotency-Key"}


def test_the_upload_is_declared_as_a_binary_file(client, db):
    """Generated clients send a file part only for `format: binary` (a text field gets 400)."""
    schema = client.get("/api/schema/").json()
    for route in ["/api/benchmarks/{slug}/submissions/", "/api/benchmarks/{slug}/judgments/"]:
        body = schema["paths"][route]["post"]["requestBody"]
        assert set(body["content"]) == {"multipart/form-data"}
        ref = body["content"]["multipart/form-data"]["schema"]["$ref"]
        upload = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
        assert upload["properties"]["file"] == {
            **upload["properties"]["file"],
            "type": "string",
            "format": "binary",
        }
        assert "file" in upload["required"]


def test_every_schema_reference_resolves(client, db):
    schema = client.get("/api/schema/").json()

    def refs(node):
        if isinstance(node, dict):
            if "$ref" in node:
                yield node["$ref"]
            for value in node.values():
                yield from refs(value)
        elif isinstance(node, list):
            for value in node:
                yield from refs(value)

    found = list(refs(schema))
    assert found
    for ref in found:
        assert ref.startswith("#/")
        target = schema
        for part in ref[2:].split("/"):
            target = target[part]
        assert isinstance(target, dict)


def test_options_answers_on_every_route_with_a_token_and_without(client, demo, participant):
    """OPTIONS describes a view's methods; for a PUT, DRF asks the view for its object
    first: a view without one answered 500."""
    headers = bearer(participant)
    values = {
        "slug": "library",
        "submission_id": 1,
        "a": 1,
        "b": 2,
        "token_id": 1,
        "pool_id": 1,
        "phase_id": 1,
    }
    for openapi_path in documented_routes():
        url = openapi_path.format(**values)
        for sent in ({}, headers):
            response = client.options(url, headers=sent)
            assert response.status_code < 500, (url, response.status_code)
