"""Every response carries the strict Content-Security-Policy, and no template or HTML built
in Python needs an exception from it (no inline script, no style attribute).

The browser half, Chromium reporting no violation on every page family, is
``test_browser_csp.py``.
"""

from __future__ import annotations

import re

import pytest

from leaderboard.models import ApiToken, Submission
from tests import ROOT
from tests.leaderboard import pages_data as data

library, demo_user = data.library, data.demo_user

POLICY = {
    "default-src": ["'self'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
    "object-src": ["'none'"],
}


def policy_of(response) -> dict[str, list[str]]:
    header = response.get("Content-Security-Policy")
    assert header, f"no Content-Security-Policy on {response.request['PATH_INFO']}"
    directives = [part.split() for part in header.split(";") if part.strip()]
    return {name: values for name, *values in directives}


def test_every_page_family_and_the_api_carry_the_policy(client, library, demo_user, organizer):
    a, b = Submission.objects.filter(benchmark=library).order_by("pk")[:2]
    pages = [
        "/",
        "/benchmarks/library/",
        "/benchmarks/library/?measure=P_10",
        f"/submissions/{a.pk}/",
        f"/submissions/{a.pk}/status/",
        f"/submissions/{a.pk}/per-need.csv",
        f"/benchmarks/library/compare/{a.pk}/{b.pk}/",
        "/benchmarks/library/significance/",
        "/benchmarks/library/leaderboard.csv",
        "/accounts/login/",
        "/accounts/signup/",
        "/accounts/password_reset/",
        "/accounts/password_reset/done/",
        "/accounts/reset/done/",
        "/admin/login/",
        "/api/benchmarks/",
        "/api/schema/",
        "/api/nothing-here/",
        "/no-such-page/",
        f"/submissions/{10**15}/",
    ]
    statuses = {}
    for url in pages:
        response = client.get(url)
        statuses[url] = response.status_code
        assert policy_of(response) == POLICY, url
    assert statuses["/no-such-page/"] == 404 and statuses["/api/nothing-here/"] == 404

    client.force_login(demo_user)
    for url in ["/benchmarks/library/submit/", "/accounts/runs/", "/accounts/tokens/"]:
        response = client.get(url)
        assert response.status_code == 200 and policy_of(response) == POLICY, url
    refused = client.post("/benchmarks/library/submit/", {"run_name": "x"})
    assert refused.status_code == 400 and policy_of(refused) == POLICY

    client.force_login(organizer)
    for url in ["/admin/", "/admin/leaderboard/benchmark/", "/admin/leaderboard/benchmark/add/"]:
        response = client.get(url)
        assert response.status_code == 200 and policy_of(response) == POLICY, url

    _, token = ApiToken.issue(demo_user, "script")
    api = client.get("/api/benchmarks/", headers={"Authorization": f"Bearer {token}x"})
    assert api.status_code == 401 and policy_of(api) == POLICY


INLINE = [
    (
        re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>"),
        "inline script",
    ),
    (re.compile(r"""\sstyle\s*=\s*["'{]"""), "style attribute"),
    (re.compile(r"<style[\s>]"), "style element"),
    (re.compile(r"""\son[a-z]+\s*=\s*["']"""), "event-handler attribute"),
    (re.compile(r"""(?:href|src|action)\s*=\s*["']\s*javascript:""", re.I), "javascript: URL"),
]


@pytest.mark.parametrize(
    "path",
    sorted(
        [p for p in (ROOT / "templates").rglob("*.html")]
        + list((ROOT / "leaderboard" / "pages").glob("*.py"))
    ),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_no_template_or_page_module_writes_inline_script_or_style(path):
    text = path.read_text(encoding="utf-8")
    found = [f"{what}: {m.group(0)!r}" for pattern, what in INLINE for m in pattern.finditer(text)]
    assert found == []
