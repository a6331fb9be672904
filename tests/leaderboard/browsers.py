"""Debian's Chromium under Playwright for the browser tests (never a downloaded browser)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.test import Client

# Playwright's sync API runs an event loop in this thread; Django's ORM calls made by
# fixtures from it are still synchronous and safe.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# pytestmark of a browser test module.
BROWSER_TESTS = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"
    ),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]


@pytest.fixture(scope="module")
def chromium():
    """One Chromium for a module's tests: starting Playwright's driver and the browser
    takes seconds, a test's own context (``new_page``, ``new_context``) a fraction of one.
    Not for the whole session: while Playwright runs, this thread has an event loop, which
    every other test would then run beside."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=ARGS
        )
        yield launched
        launched.close()


@pytest.fixture
def browser(chromium):
    """The module's Chromium, with every context a test opened (each ``new_page`` opens
    one) closed after it: cookies, storage and pages live in the context, so tests share
    nothing, and no page of a test that failed half-way goes on polling the server."""
    yield chromium
    for context in chromium.contexts:
        context.close()


def log_in(context, live_server, user) -> None:
    """The participant's session cookie in the browser (django-axes: no log-in form)."""
    from django.conf import settings

    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    context.add_cookies(
        [{"name": cookie.key, "value": cookie.value, "url": live_server.url, "httpOnly": True}]
    )
