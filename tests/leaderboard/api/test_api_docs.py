"""/api/docs/: Swagger UI from this site (no CDN) that works under the strict CSP."""

from __future__ import annotations

import re

from django.conf import settings
from django.contrib.staticfiles import finders

from tests.leaderboard.browsers import BROWSER_TESTS
from tests.leaderboard.pages.test_browser import ARTIFACTS
from tests.leaderboard.pages.test_browser_csp import Visit


def test_the_docs_page_loads_everything_from_this_site(client, db):
    page = client.get("/api/docs/")
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")
    policy = page["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "img-src 'self' data:" in policy
    assert "script-src" not in policy and "unsafe" not in policy
    html = page.content.decode()
    assert "<style" not in html and not re.search(r"<script>|<script [^>]*>[^<]", html)
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources and all(s.startswith("/") for s in sources), sources
    assert any("swagger-ui-bundle.js" in s for s in sources)
    for source in sources:  # files of this project or of drf-spectacular-sidecar
        assert finders.find(source.removeprefix(settings.STATIC_URL).lstrip("/")) or (
            source.startswith("/static/") is False
        ), source
    script = client.get("/api/docs/?script=")
    assert script["Content-Type"].startswith("application/javascript")
    assert "/api/schema/" in script.content.decode()


def test_options_on_the_docs_describe_it_as_json(client, db):
    """OPTIONS is answered wherever GET is: here too, as JSON (no template to render)."""
    answer = client.options("/api/docs/")
    assert answer.status_code == 200 and answer["Content-Type"] == "application/json"
    assert answer.json()["name"] and "GET" in answer["Allow"]


def browser_test(test):
    for mark in BROWSER_TESTS:
        test = mark(test)
    return test


@browser_test
def test_swagger_ui_renders_every_operation_under_the_policy(
    live_server, transactional_db, browser
):
    """Every operation drawn, no CSP violation, no console error, no failed request."""
    visit = Visit(browser, live_server.url)
    visit.open("/api/docs/")
    visit.page.wait_for_function("() => document.querySelectorAll('.opblock').length >= 19")
    ARTIFACTS.mkdir(exist_ok=True)
    visit.page.screenshot(path=str(ARTIFACTS / "api-docs.png"))
    visit.check()
    summaries = visit.page.locator(".opblock-summary-path").all_inner_texts()
    assert any("/api/benchmarks/{slug}/submissions/" in s for s in summaries)
