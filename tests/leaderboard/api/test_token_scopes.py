"""API tokens' scopes (full, submit, read) and expiry: what each scope may do through the
API, the 403 that names the scope needed, the 401 "token expired", and choosing both when
a token is made on the tokens page or with ``POST /api/tokens/``."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.utils import timezone

from leaderboard.models import ApiToken, Submission
from tests.leaderboard.api.test_api import error_of, upload, variant


def headers_for(user, scope: str = ApiToken.FULL, expires=None) -> dict[str, str]:
    _, raw = ApiToken.issue(user, f"{scope} token", scope=scope, expires=expires)
    return {"Authorization": f"Bearer {raw}"}


@pytest.fixture
def run(client, library, participant, django_capture_on_commit_callbacks):
    """Alice's run, submitted with a full token."""
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(client, headers_for(participant), run_name="alice-run")
    assert response.status_code == 201, response.content
    return Submission.objects.get(pk=response.json()["id"])


def test_existing_and_default_tokens_are_full_and_never_expire(participant):
    row, raw = ApiToken.issue(participant, "laptop")
    assert (row.scope, row.expires) == (ApiToken.FULL, None)
    assert ApiToken.authenticate(raw) == row and not row.expired
    with pytest.raises(ValueError, match="Unknown token scope 'admin'"):
        ApiToken.issue(participant, "x", scope="admin")


def test_a_read_token_reads_but_cannot_submit_edit_withdraw_or_manage_tokens(
    client, run, participant
):
    read = headers_for(participant, ApiToken.READ)
    assert client.get(f"/api/submissions/{run.pk}/", headers=read).status_code == 200
    assert client.get("/api/submissions/?mine=1", headers=read).status_code == 200

    refused = error_of(upload(client, read, variant(1), run_name="other"), 403)
    assert "scope is 'read'" in refused["error"] and "submit or full" in refused["error"]
    assert refused["details"] == {"scope": "read", "needs": "submit or full"}
    edit = client.patch(
        f"/api/submissions/{run.pk}/",
        {"description": "changed"},
        content_type="application/json",
        headers=read,
    )
    assert error_of(edit, 403)["details"] == {"scope": "read", "needs": "full"}
    withdraw = client.post(f"/api/submissions/{run.pk}/withdraw/", headers=read)
    assert error_of(withdraw, 403)["details"]["needs"] == "full"
    assert error_of(client.get("/api/tokens/", headers=read), 403)["details"]["needs"] == "full"
    run.refresh_from_db()
    assert run.description != "changed" and run.withdrawn_at is None
    assert Submission.objects.count() == 1


def test_a_submit_token_submits_and_reads_its_runs_but_cannot_undo_them(
    client, run, participant, django_capture_on_commit_callbacks
):
    submit = headers_for(participant, ApiToken.SUBMIT)
    with django_capture_on_commit_callbacks(execute=True):
        made = upload(client, submit, variant(2), run_name="from-ci")
    assert made.status_code == 201, made.content
    new = made.json()["id"]
    mine = client.get("/api/submissions/?mine=1", headers=submit).json()
    assert {r["id"] for r in mine["submissions"]} == {run.pk, new}
    assert client.get(f"/api/submissions/{new}/", headers=submit).status_code == 200

    withdraw = client.post(f"/api/submissions/{new}/withdraw/", headers=submit)
    assert error_of(withdraw, 403)["details"] == {"scope": "submit", "needs": "full"}
    hide = client.post(f"/api/submissions/{new}/hide/", headers=submit)
    assert error_of(hide, 403)["details"]["needs"] == "full"
    theirs = ApiToken.objects.filter(user=participant).first()
    revoke = client.delete(f"/api/tokens/{theirs.pk}/", headers=submit)
    assert error_of(revoke, 403)["details"]["needs"] == "full"
    assert ApiToken.objects.filter(pk=theirs.pk).exists()
    assert Submission.objects.get(pk=new).withdrawn_at is None

    # The full token may do all of it.
    full = headers_for(participant)
    assert client.post(f"/api/submissions/{new}/withdraw/", headers=full).status_code == 200
    assert client.get("/api/tokens/", headers=full).status_code == 200


def test_an_expired_token_is_401_token_expired_and_not_counted_as_unknown(
    client, library, participant, settings
):
    settings.API_TOKEN_FAILURE_LIMIT = 2
    soon = timezone.now() + dt.timedelta(minutes=5)
    headers = headers_for(participant, expires=soon)
    assert client.get("/api/benchmarks/", headers=headers).status_code == 200
    ApiToken.objects.update(expires=timezone.now() - dt.timedelta(seconds=1))
    for _ in range(3):  # an owner's stale token is not a guess: never a 429
        response = client.get("/api/benchmarks/", headers=headers)
        body = error_of(response, 401)
        assert "token expired" in body["error"].lower()
        assert response["WWW-Authenticate"] == (
            'Bearer error="invalid_token", error_description="token expired"'
        )
    assert error_of(upload(client, headers), 401)
    assert ApiToken.objects.get().last_used is not None  # from the one good use only


def test_the_tokens_page_makes_a_scoped_expiring_token(client, library, participant):
    client.force_login(participant)
    page = client.get("/accounts/tokens/").content.decode()
    assert 'name="scope"' in page and 'name="expires_in_days"' in page
    created = client.post(
        "/accounts/tokens/", {"name": "ci", "scope": "submit", "expires_in_days": "30"}
    )
    assert created.status_code == 200
    raw = re.search(r'<code id="new-token">([^<]+)</code>', created.content.decode()).group(1)
    token = ApiToken.objects.get()
    assert token.scope == "submit" and token.sha256 == ApiToken.digest(raw)
    left = token.expires - timezone.now()
    assert dt.timedelta(days=29, hours=23) < left <= dt.timedelta(days=30)
    listed = client.get("/accounts/tokens/").content.decode()
    assert "<td>submit</td>" in listed
    bad = client.post("/accounts/tokens/", {"name": "x", "scope": "admin"})
    assert bad.status_code == 400 and ApiToken.objects.count() == 1
    bad = client.post("/accounts/tokens/", {"name": "x", "expires_in_days": "2"})
    assert bad.status_code == 400 and ApiToken.objects.count() == 1


def test_post_api_tokens_takes_scope_and_expiry(client, participant, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    participant.set_password("pw-alice-123")
    participant.save()
    login = {"username": "alice", "password": "pw-alice-123", "name": "ci"}
    body = client.post(
        "/api/tokens/",
        {**login, "scope": "read", "expires_in_days": 7},
        content_type="application/json",
    ).json()
    assert body["scope"] == "read" and body["expires"]
    row = ApiToken.objects.get(pk=body["id"])
    assert row.scope == "read" and row.sha256 == ApiToken.digest(body["token"])
    assert dt.timedelta(days=6, hours=23) < row.expires - timezone.now() <= dt.timedelta(days=7)
    # Left out: full, never expiring (what rrl asks for). A read token may still log in.
    read = {"Authorization": f"Bearer {body['token']}"}
    plain = client.post("/api/tokens/", login, content_type="application/json", headers=read)
    assert plain.status_code == 201
    assert (plain.json()["scope"], plain.json()["expires"]) == ("full", None)
    bad = client.post("/api/tokens/", {**login, "scope": "admin"}, content_type="application/json")
    assert "scope" in error_of(bad, 400)["details"]
    bad = client.post(
        "/api/tokens/", {**login, "expires_in_days": 0}, content_type="application/json"
    )
    assert "expires_in_days" in error_of(bad, 400)["details"]
    assert ApiToken.objects.count() == 2
