"""Under the strict Content-Security-Policy every page family still works in Chromium and
reports no violation: the reader's pages, the participant's, the log-in and reset pages,
and the admin (as a superuser and as an organizer).

Violations are caught twice: a ``securitypolicyviolation`` listener installed before any
page script runs, and Chromium's console messages. A first check makes one violation on
purpose to show the listener hears it.
"""

from __future__ import annotations

import re

from tests.leaderboard import pages_data as data
from tests.leaderboard.browsers import BROWSER_TESTS

LISTEN = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber}`);
});
"""

library, demo_user = data.library, data.demo_user
pytestmark = BROWSER_TESTS


class Visit:
    """One browser tab that remembers every CSP violation, console error, page error and
    failed response, page by page."""

    def __init__(self, browser, base: str) -> None:
        self.base = base
        self.page = browser.new_page()
        self.page.set_default_timeout(20_000)
        self.page.add_init_script(LISTEN)
        self.problems: list[str] = []
        self.seen: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.policies: dict[str, str | None] = {}
        self.page.on("response", self._response)

    def _response(self, response) -> None:
        if response.status >= 400:
            self.problems.append(f"HTTP {response.status}: {response.url}")
        if response.request.resource_type == "document":
            self.policies[response.url] = response.headers.get("content-security-policy")

    def _console(self, message) -> None:
        if message.type == "error" or "Content Security Policy" in message.text:
            self.problems.append(f"console {message.type}: {message.text}")

    def violations(self) -> list[str]:
        return self.page.evaluate("window.__csp")

    def open(self, path: str) -> None:
        """Go to ``path`` (or wait for a navigation already under way) and check it."""
        if path:
            self.page.goto(self.base + path)
        self.page.wait_for_load_state("load")
        self.check()

    def check(self) -> None:
        url = self.page.url
        self.seen.append(url)
        header = self.policies.get(url)
        assert header and "default-src 'self'" in header, url
        assert self.violations() == [], url
        assert self.problems == [], url


def test_the_listener_hears_a_violation(live_server, transactional_db, browser):
    visit = Visit(browser, live_server.url)
    visit.open("/accounts/login/")
    visit.page.evaluate("document.body.setAttribute('style', 'color: red')")
    visit.page.wait_for_function("() => window.__csp.length > 0")
    assert visit.violations()[0].startswith("style-src-attr blocked inline")
    assert any("Content Security Policy" in p for p in visit.problems)


def test_every_page_family_works_under_the_policy(
    live_server, transactional_db, library, demo_user, browser, django_user_model
):
    from leaderboard.models import Submission

    visit = Visit(browser, live_server.url)
    page = visit.page
    a, b = Submission.objects.filter(benchmark=library).order_by("pk")[:2]

    # The reader's pages.
    visit.open("/")
    visit.open("/benchmarks/library/")
    visit.open("/benchmarks/library/?measure=P_10")
    visit.open(f"/submissions/{a.pk}/")
    table = page.locator("table.per-need")
    table.locator("thead button", has_text="AP").click()  # sortable.js still sorts
    assert table.locator("tbody tr").first.locator("th").inner_text() == "atwood"
    assert table.locator("thead th[aria-sort=descending]").count() == 1
    visit.check()
    visit.open(f"/benchmarks/library/compare/{a.pk}/{b.pk}/")
    assert page.locator("svg.plot").count() == 4  # bars, scatter, a need, 11-point
    visit.open("/benchmarks/library/significance/")
    visit.open("/accounts/signup/")
    visit.open("/accounts/password_reset/")

    # Log in through the form (form-action 'self'), then the participant's pages.
    visit.open("/accounts/login/")
    page.fill("#id_username", "demo-owner")
    page.fill("#id_password", "pw-demo-123")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/accounts/runs/$"))
    visit.open("")
    visit.open("/benchmarks/library/submit/")
    visit.open("/accounts/tokens/")
    page.fill("#id_name", "laptop")
    page.get_by_role("button", name="Create token").click()
    page.locator("#new-token").wait_for()
    visit.check()

    # A queued run's page polls its status (status.js) and updates in place.
    live = Submission.objects.create(
        benchmark=library, participant=demo_user, run_name="live", file="runs/live.txt"
    )
    visit.open(f"/submissions/{live.pk}/")
    assert page.locator("#run-status").get_attribute("data-status") == "queued"
    Submission.objects.filter(pk=live.pk).update(status=Submission.Status.RUNNING)
    page.wait_for_function(
        "() => document.getElementById('run-status').dataset.status === 'running'"
    )
    assert "Being scored now." in page.locator("#run-status").inner_text()
    visit.check()
    page.locator("form[action='/accounts/logout/'] button").click()
    page.wait_for_url(re.compile(r"/$"))
    visit.check()

    # The admin, as a superuser: log-in form, changelists with actions, change forms with
    # the slug prepopulated from the title and the two-box organizers widget (admin JS).
    django_user_model.objects.create_superuser("root", password="pw-root-123")
    visit.open("/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "pw-root-123")
    page.locator("input[type=submit]").click()
    page.wait_for_url(re.compile(r"/admin/$"))
    visit.check()
    visit.open("/admin/leaderboard/submission/")
    page.locator("#action-toggle").check()  # actions.js selects every row
    assert page.locator("input.action-select:checked").count() == 3
    assert "3 of 3 selected" in page.locator(".action-counter").inner_text()
    visit.check()
    visit.open("/admin/leaderboard/benchmark/add/")
    page.fill("#id_title", "Robust Retrieval 2004")
    page.locator("#id_title").dispatch_event("change")
    assert page.locator("#id_slug").input_value() == "robust-retrieval-2004"
    assert page.locator("#id_organizers_from").count() == 1  # SelectFilter2 built the boxes
    visit.check()
    visit.open(f"/admin/leaderboard/informationneed/{library.needs.first().pk}/change/")
    visit.open("/admin/leaderboard/judgments/")
    visit.open("/admin/axes/accessattempt/")
    page.locator("#logout-form button").click()
    page.wait_for_load_state("load")
    visit.check()

    # As an organizer: the text field for co-organizers, the scoped filters.
    organizer = django_user_model.objects.create_user("olga", password="pw-olga-123", is_staff=True)
    library.organizers.add(organizer)
    visit.open("/admin/login/")
    page.fill("#id_username", "olga")
    page.fill("#id_password", "pw-olga-123")
    page.locator("input[type=submit]").click()
    page.wait_for_url(re.compile(r"/admin/$"))
    visit.check()
    visit.open(f"/admin/leaderboard/benchmark/{library.pk}/change/")
    assert page.locator("#id_co_organizers").input_value() == "olga"
    visit.open("/admin/leaderboard/submission/")
    page.close()
    assert len(visit.seen) >= 25
