"""The site's own 404, 403, CSRF-failure and 500 pages, rendered as with DEBUG off.

The 500 page is rendered with no request context (Django's ``server_error`` passes an
empty one), so it must not need a user, a session or the database: its test runs without
database access (pytest-django refuses any query outside the ``db`` fixture).
"""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory

from leaderboard import urls as site

pytestmark = pytest.mark.urls("tests.leaderboard.error_urls")


def page(response) -> str:
    assert response["Content-Type"].startswith("text/html")
    text = response.content.decode()
    assert '<link rel="stylesheet" href="/static/css/site.css">' in text  # the site's layout
    assert 'href="#main"' in text and "Ranked retrieval leaderboards" in text
    return text


def test_404_is_the_sites_page(client, db, settings):
    assert settings.DEBUG is False
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    text = page(response)
    assert "<h1>Page not found</h1>" in text
    assert "<title>Page not found · " in text
    assert 'href="/"' in text


def test_404_knows_who_is_logged_in(client, participant):
    client.force_login(participant)
    text = page(client.get("/no/such/page/"))
    assert "Log out" in text and 'href="/accounts/runs/">My runs' in text


def test_403_is_the_sites_page(client, db):
    response = client.get("/test-errors/denied/")
    assert response.status_code == 403
    text = page(response)
    assert "<h1>You may not do this</h1>" in text
    assert 'href="/accounts/login/?next=/test-errors/denied/"' in text


def test_csrf_failure_is_the_sites_page(db, participant):
    client = Client(enforce_csrf_checks=True)
    response = client.post("/accounts/login/", {"username": "alice", "password": "pw-alice-123"})
    assert response.status_code == 403
    text = page(response)
    assert "<h1>This form could not be sent</h1>" in text
    assert "Log in" not in text.split("<main")[0]  # no account links without a request


def test_500_is_the_sites_page_without_the_database():
    """No ``db`` fixture: a query anywhere in the handler or the template would fail."""
    request = RequestFactory().get("/somewhere/")
    response = site_handler500()(request)
    assert response.status_code == 500
    text = page(response)
    assert "<h1>Something went wrong on our side</h1>" in text
    assert "<title>Something went wrong · " in text
    assert "Log out" not in text and "Log in" not in text


def test_a_bug_answers_the_500_page(db):
    client = Client(raise_request_exception=False)
    response = client.get("/test-errors/boom/")
    assert response.status_code == 500
    assert "<h1>Something went wrong on our side</h1>" in page(response)
    # Under /api/ the same bug is JSON, as before.
    api = client.get("/api/test-errors/boom/")
    assert api.status_code == 500 and api["Content-Type"] == "application/json"


def site_handler500():
    from django.utils.module_loading import import_string

    return import_string(site.handler500)


# --- The database not answering: a 503, not a 500 ---------------------------------------
# No ``db`` fixture: the 503 must not need the database it reports missing.

DOWN = "The site's database is not answering; try again in a few minutes."


def one_log_line(caplog, path: str, error: str) -> str:
    """The one line the operator gets: the path and the error, no traceback."""
    records = [r for r in caplog.records if r.name == "django.request"]
    assert len(records) == 1, [r.getMessage() for r in records]
    assert records[0].levelname == "ERROR" and records[0].exc_info is None
    line = records[0].getMessage()
    assert f"Service Unavailable: {path}: the database is not answering ({error}" in line
    assert "\n" not in line
    return line


def test_a_refused_connection_answers_the_503_page(client, caplog):
    response = client.get("/test-errors/database/refused/")
    assert response.status_code == 503
    assert response["Retry-After"] == "60"
    assert "no-cache" in response["Cache-Control"]
    text = page(response)
    assert "<h1>The site's database is not answering</h1>" in text
    assert DOWN in text
    assert "Log out" not in text and "Log in" not in text  # no user: it needs the database
    line = one_log_line(caplog, "/test-errors/database/refused/", "OperationalError")
    assert "Connection refused" in line


@pytest.mark.parametrize("sqlstate", ["refused", "closed", "57P01", "57P03", "53300", "08006"])
def test_under_api_the_503_is_json(client, caplog, sqlstate):
    """Refused, lost, shutting down, starting up, too many clients, connection failure."""
    response = client.get(f"/api/test-errors/database/{sqlstate}/")
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    assert response["Retry-After"] == "60"
    assert response.json() == {"error": DOWN, "details": {"retry_after": 60}}
    error = "InterfaceError" if sqlstate == "closed" else "OperationalError"
    one_log_line(caplog, f"/api/test-errors/database/{sqlstate}/", error)


@pytest.mark.parametrize("sqlstate", ["57014", "40P01"])
def test_a_query_the_database_refused_is_still_a_bug(sqlstate):
    """A cancelled statement or a deadlock: the database answered; a 500, as any bug."""
    client = Client(raise_request_exception=False)
    response = client.get(f"/test-errors/database/{sqlstate}/")
    assert response.status_code == 500 and "Retry-After" not in response
    assert "<h1>Something went wrong on our side</h1>" in page(response)
    api = client.get(f"/api/test-errors/database/{sqlstate}/")
    assert api.status_code == 500 and api["Content-Type"] == "application/json"


def test_a_refused_connection_outside_a_view_answers_503(settings, caplog):
    """Raised in a middleware: Django's handler500 answers, with the same 503."""
    settings.MIDDLEWARE = [
        *settings.MIDDLEWARE,
        "tests.leaderboard.error_urls.refused_before_the_view",
    ]
    client = Client(raise_request_exception=False)
    response = client.get("/")
    assert response.status_code == 503 and response["Retry-After"] == "60"
    assert DOWN in page(response)
    api = client.get("/api/benchmarks/")
    assert api.status_code == 503 and api.json()["error"] == DOWN
    records = [r.getMessage() for r in caplog.records if r.name == "django.request"]
    assert len(records) == 2 and all("the database is not answering" in r for r in records)
