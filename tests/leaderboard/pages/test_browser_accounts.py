"""A participant's first evening in a real browser (Debian's Chromium, headless):

sent from a page that needs an account to log in, they sign up instead (with a display
name), land back on that page, upload a run, it is scored (in-process, as in
development), the leaderboard shows their display name, the mail reaches a real SMTP
server (aiosmtpd), and they make a team and look at the best-run-per-team board. At
desktop and phone widths; the new pages' screenshots land in artifacts/.
"""

from __future__ import annotations

import re

import pytest

from leaderboard.models import Submission
from tests import DEMO
from tests.leaderboard.accounts import test_password_reset
from tests.leaderboard.browsers import BROWSER_TESTS
from tests.leaderboard.pages.test_browser import ARTIFACTS, watch

smtp = test_password_reset.smtp
pytestmark = BROWSER_TESTS
PASSWORD = "a-long-pass-phrase-9"


@pytest.mark.parametrize(
    "viewport",
    [{"width": 1280, "height": 900}, {"width": 390, "height": 844}],
    ids=["desktop", "phone"],
)
def test_sign_up_from_a_next_page_upload_scored_named_and_mailed(
    transactional_db, live_server, library, browser, smtp, settings, viewport
):
    settings.SITE_URL = live_server.url
    ARTIFACTS.mkdir(exist_ok=True)
    size = "desktop" if viewport["width"] > 600 else "phone"
    problems: list[str] = []
    page = browser.new_page(viewport=viewport)
    watch(page, problems)

    # A page that needs an account sends the visitor to log in; they sign up instead.
    page.goto(f"{live_server.url}/benchmarks/library/submit/")
    page.wait_for_url(re.compile(r"/accounts/login/\?next="))
    page.locator("main").get_by_role("link", name="Sign up").click()
    page.wait_for_url(re.compile(r"/accounts/signup/\?next=/benchmarks/library/submit/$"))
    page.fill("#id_username", "ada")
    page.fill("#id_display_name", "Ada Lovelace")
    page.fill("#id_email", "ada@example.org")
    page.fill("#id_password1", PASSWORD)
    page.fill("#id_password2", PASSWORD)
    page.screenshot(path=str(ARTIFACTS / f"signup-{size}.png"), full_page=True)
    page.get_by_role("button", name="Create account").click()
    page.wait_for_url(re.compile(r"/benchmarks/library/submit/$"))

    # Upload a run; it is scored in-process once the upload commits.
    page.set_input_files("#id_file", str(DEMO / "run-B.txt"))
    page.fill("#id_run_name", "engine-1")
    page.get_by_role("button", name="Upload and score").click()
    page.wait_for_url(re.compile(r"/submissions/\d+/$"))
    run = Submission.objects.get(run_name="engine-1")
    assert run.status == "scored"
    assert page.locator("p.facts .who").inner_text() == "Ada Lovelace"

    # The leaderboard names her by her display name, never her username.
    page.goto(f"{live_server.url}/benchmarks/library/")
    # (text_content: at phone width the participant column is hidden by the CSS.)
    who = page.locator("#board tbody tr", has_text="engine-1").locator("td.wide").first
    assert who.text_content() == "Ada Lovelace"

    # The mail reached the SMTP server, with the run's page on this site.
    assert smtp.arrived.wait(10), "no mail reached the SMTP server"
    (_, recipients, message), *more = smtp.messages
    assert not more and recipients == ["ada@example.org"]
    assert message["Subject"] == "Run engine-1 on Library is scored: AP 0.7397"
    link = re.search(r"The run's page: (\S+)", message.get_content()).group(1)
    assert link == f"{live_server.url}/submissions/{run.pk}/"
    page.goto(link)
    assert page.locator("h1").inner_text().startswith("Run engine-1")

    # The account page (from the header): make a team, see its join code.
    page.get_by_role("link", name="Account").click()
    page.wait_for_url(re.compile(r"/accounts/profile/$"))
    page.screenshot(path=str(ARTIFACTS / f"account-no-team-{size}.png"), full_page=True)
    page.fill("#id_team_name", "Analytical Engines")
    page.get_by_role("button", name="Make the team").click()
    page.wait_for_url(re.compile(r"/accounts/profile/$"))
    assert page.locator("#join-code").inner_text().strip()
    page.screenshot(path=str(ARTIFACTS / f"account-{size}.png"), full_page=True)

    # Best run per team: ticking the box re-ranks at once (static/js/autosubmit.js) ...
    page.goto(f"{live_server.url}/benchmarks/library/")
    page.check("#best")
    page.wait_for_url(re.compile(r"best=team"))
    # ... and without JavaScript the form's button sends the same request.
    assert page.locator("#best").is_checked()
    assert page.get_by_role("button", name="Show").is_visible()
    assert page.locator("#board tbody tr").count() == 1
    # the run was submitted before the team was made: it stays with Ada alone
    shown = page.locator("#board tbody tr").text_content()
    assert "Ada Lovelace" in shown and "Analytical Engines" not in shown
    assert page.locator(".best-note").is_visible()
    page.screenshot(path=str(ARTIFACTS / f"leaderboard-best-{size}.png"), full_page=True)
    page.close()
    assert problems == []
