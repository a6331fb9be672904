"""Every HTML page of the site, by URL name, and how the accessibility test reaches it.

``tests/leaderboard/pages/test_accessibility.py`` loads each page in Chromium and runs axe-core
on it; ``test_every_named_page_is_checked`` walks Django's URL patterns and fails when a
named route is neither here nor in ``NOT_PAGES``/``NOT_PAGES_UNDER``. So a new page is one
line in ``PAGES``: its name, the path (built from ``Site``, the test's objects), and
whether it needs a logged-in participant.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from django.contrib.auth.tokens import default_token_generator
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode


@dataclass
class Site:
    """What the pages are about: the library benchmark, its two runs and a hidden third
    (the logged-in participant owns all three), one API token, and the participant (for a password-reset link,
    made when the page is visited: logging in changes last_login, which voids older ones)."""

    slug: str
    run_a: int
    run_b: int
    run_hidden: int
    token: int
    user: object

    @property
    def reset_uid(self) -> str:
        return urlsafe_base64_encode(force_bytes(self.user.pk))

    @property
    def reset_token(self) -> str:
        self.user.refresh_from_db()
        return default_token_generator.make_token(self.user)


@dataclass(frozen=True)
class Page:
    path: Callable[[Site], str]
    login: bool = False
    heading: str | None = None  # the <h1>, where the page could show another one


def url(
    name: str, *args: Callable[[Site], object], login: bool = False, heading: str | None = None
) -> Page:
    """A page reached by reversing ``name`` with arguments taken from the Site."""
    return Page(lambda site: reverse(name, args=[arg(site) for arg in args]), login, heading)


def slug(site: Site) -> str:
    return site.slug


PAGES: dict[str, Page] = {
    "home": url("home"),
    "leaderboard": url("leaderboard", slug),
    "submit": url("submit", slug, login=True),
    "compare_pick": url("compare_pick", slug),  # without two runs: the 400 problem page
    "compare": url("compare", slug, lambda s: s.run_a, lambda s: s.run_b),
    "significance": url("significance", slug),
    "benchmark_health": url("benchmark_health", slug),
    "final_runs": url("final_runs", slug, login=True),
    "pool": url("pool", slug, login=True),  # the participant organises the benchmark
    "campaign_summary": url("campaign_summary", slug, login=True),  # organizers only
    "run_results": url("run_results", lambda s: s.run_a),
    "submission": url("submission", lambda s: s.run_a),
    "run_edit": url("run_edit", lambda s: s.run_a, login=True),
    "run_hide": url("run_hide", lambda s: s.run_a, login=True),
    "run_unhide": url("run_unhide", lambda s: s.run_hidden, login=True),
    "run_withdraw": url("run_withdraw", lambda s: s.run_a, login=True),
    "signup": url("signup"),
    "my_submissions": url("my_submissions", login=True),
    "account": url("account", login=True),
    "api_tokens": url("api_tokens", login=True),
    "api_token_revoke": url("api_token_revoke", lambda s: s.token, login=True),
    "login": url("login"),
    "password_change": url("password_change", login=True),
    "password_change_done": url("password_change_done", login=True),
    "password_reset": url("password_reset"),
    "password_reset_done": url("password_reset_done"),
    # Django answers the emailed link with a redirect to .../set-password/ and its form.
    "password_reset_confirm": url(
        "password_reset_confirm",
        lambda s: s.reset_uid,
        lambda s: s.reset_token,
        heading="Set a new password",
    ),
    "password_reset_complete": url("password_reset_complete"),
}

# Pages that no named route serves; the test reaches them its own way.
OTHER_PAGES = {
    "404": "an unknown address",
    "403": "a view that raises PermissionDenied (tests/leaderboard/error_urls.py)",
    "403_csrf": "a form sent without its CSRF cookie",
    "500": "a view that raises (tests/leaderboard/error_urls.py)",
    "locked_out": "a failed log-in past LOGIN_FAILURE_LIMIT (django-axes)",
}

# Named routes that are not HTML pages, and why.
NOT_PAGES = {
    "leaderboard_export": "CSV and JSON downloads",
    "compare_json": "a JSON download",
    "submission_csv": "a CSV download",
    "run_results_csv": "a CSV download",
    "run_results_json": "a JSON download",
    "pool_export": "the assessors' qrels file, a download",
    "submission_plot": "an SVG or PNG plot (shown inside the run page)",
    "compare_plot": "an SVG or PNG plot (shown inside the comparison page)",
    "submission_status": "JSON polled by static/js/status.js",
    "logout": "POST only: logs out and redirects",
    "health": "JSON for load balancers and compose healthchecks",
}
# Whole trees that are not the site's own HTML pages.
NOT_PAGES_UNDER = {
    "admin/": "Django's admin (its own templates, organizers only)",
    "api/": "the JSON API (and its OpenAPI document)",
}


def named_routes(patterns=None, prefix: str = "", namespace: str = "") -> Iterator[tuple]:
    """(route, name) for every URL pattern, with namespaces as Django reverses them."""
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from named_routes(entry.url_patterns, route, inner)
        elif isinstance(entry, URLPattern):
            yield route, f"{namespace}{entry.name}" if entry.name else None


def unlisted_routes() -> list[str]:
    """Routes that are neither a listed page nor a documented exclusion."""
    return [
        f"{route} ({name or 'unnamed'})"
        for route, name in named_routes()
        if not route.startswith(tuple(NOT_PAGES_UNDER)) and name not in PAGES | NOT_PAGES
    ]
