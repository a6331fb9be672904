"""A participant's journey with their own run, in Debian's Chromium.

Upload a run with a need the judgments do not have -> its warning on the run page and
a count in My runs -> edit the description and a link -> hide, show again -> withdraw
after the confirmation (the browser will not send it unticked) -> gone from the public
board. Screenshots of the edit and confirmation pages at 1280 and 390 px in artifacts/.
"""

from __future__ import annotations

import re

from tests import DEMO
from tests.leaderboard.browsers import BROWSER_TESTS
from tests.leaderboard.pages.test_browser import ARTIFACTS, watch

pytestmark = BROWSER_TESTS

RUN = (DEMO / "run-A.txt").read_bytes() + b"no-such-need Q0 d1 1 1.0 system-A\n"
WIDTHS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


def shoot(page, name: str) -> None:
    """Full-page screenshots at both widths; back to the desktop width after."""
    for size, viewport in WIDTHS.items():
        page.set_viewport_size(viewport)
        page.screenshot(path=str(ARTIFACTS / f"{name}-{size}.png"), full_page=True)
    page.set_viewport_size(WIDTHS["desktop"])


def public_runs(browser, base: str) -> list[str]:
    reader = browser.new_page()
    reader.goto(f"{base}/benchmarks/library/")
    names = reader.locator("#board tbody th[scope=row] > a").all_inner_texts()
    reader.close()
    return names


def test_owner_journey(transactional_db, live_server, library, participant, browser):
    from leaderboard.models import Submission

    ARTIFACTS.mkdir(exist_ok=True)
    problems: list[str] = []
    page = browser.new_page(viewport=WIDTHS["desktop"])
    watch(page, problems)
    base = live_server.url

    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", "pw-alice-123")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/accounts/runs/$"))

    # Upload a run answering a need the judgments do not have: scored, with a warning.
    page.goto(f"{base}/benchmarks/library/submit/")
    page.set_input_files(
        "#id_file", files=[{"name": "run.txt", "mimeType": "text/plain", "buffer": RUN}]
    )
    page.fill("#id_run_name", "warned-run")
    page.get_by_role("button", name="Upload and score").click()
    page.wait_for_url(re.compile(r"/submissions/\d+/$"))
    run = Submission.objects.get(run_name="warned-run")
    assert run.status == "scored", run.failure_reason
    warnings = page.locator("#warnings")
    assert warnings.is_visible()
    assert "without judgments, ignored: no-such-need" in warnings.inner_text()
    assert "They are not errors." in warnings.inner_text()
    page.screenshot(path=str(ARTIFACTS / "owner-run-warnings.png"), full_page=True)

    # My runs counts it and links to the list.
    page.goto(f"{base}/accounts/runs/")
    badge = page.locator("a.warn-count")
    assert badge.inner_text() == "1 warning"
    page.screenshot(path=str(ARTIFACTS / "owner-my-runs.png"), full_page=True)
    badge.click()
    page.wait_for_url(re.compile(rf"/submissions/{run.pk}/#warnings$"))

    # Edit the description and a link, from My runs.
    page.goto(f"{base}/accounts/runs/")
    page.get_by_role("link", name="Edit warned-run").click()
    page.wait_for_url(re.compile(rf"/submissions/{run.pk}/edit/$"))
    page.fill("#id_description", "BM25, title queries only.")
    page.fill("#id_paper_url", "https://example.org/paper.pdf")
    shoot(page, "owner-edit")
    page.get_by_role("button", name="Save").click()
    page.wait_for_url(re.compile(rf"/submissions/{run.pk}/$"))
    assert "BM25, title queries only." in page.locator(".lede").inner_text()
    assert page.get_by_role("link", name="Paper").get_attribute("href") == (
        "https://example.org/paper.pdf"
    )
    assert public_runs(browser, base) == ["warned-run"]
    page.goto(f"{base}/benchmarks/library/")  # the link, small, after the run's name
    paper = page.locator("#board .run-links a", has_text="paper")
    assert paper.get_attribute("href") == "https://example.org/paper.pdf"
    page.screenshot(path=str(ARTIFACTS / "owner-board-links.png"), full_page=True)
    page.goto(f"{base}/submissions/{run.pk}/")

    # Hide, then show again: each after its confirmation page.
    page.get_by_role("link", name="Hide from the public").click()
    page.wait_for_url(re.compile(r"/hide/$"))
    shoot(page, "owner-confirm-hide")
    page.get_by_label("Hide warned-run from readers").check()
    page.get_by_role("button", name="Hide the run").click()
    page.wait_for_url(re.compile(rf"/submissions/{run.pk}/$"))
    assert page.locator("h1 .badge.hidden").inner_text() == "hidden"
    assert public_runs(browser, base) == []
    page.get_by_role("link", name="Show on the public leaderboard").click()
    page.get_by_label("Show warned-run on the public leaderboard").check()
    page.get_by_role("button", name="Show the run").click()
    page.wait_for_url(re.compile(rf"/submissions/{run.pk}/$"))
    assert public_runs(browser, base) == ["warned-run"]

    # Withdraw: unticked, the browser does not send the form; ticked, it is done.
    page.get_by_role("link", name="Withdraw").click()
    page.wait_for_url(re.compile(r"/withdraw/$"))
    assert "Withdrawing is final." in page.locator("main").inner_text()
    shoot(page, "owner-confirm-withdraw")
    page.get_by_role("button", name="Withdraw the run").click()
    assert page.url.endswith("/withdraw/")
    assert page.evaluate("() => document.getElementById('id_confirm').validity.valueMissing")
    run.refresh_from_db()
    assert run.status == "scored"
    page.get_by_label("I understand that withdrawing warned-run is final").check()
    page.get_by_role("button", name="Withdraw the run").click()
    page.wait_for_url(re.compile(rf"/submissions/{run.pk}/$"))
    assert "kept for the record" in page.locator("#run-status").inner_text()
    assert page.get_by_role("link", name="Withdraw").count() == 0
    page.screenshot(path=str(ARTIFACTS / "owner-withdrawn.png"), full_page=True)
    run.refresh_from_db()
    assert run.status == "withdrawn"
    assert public_runs(browser, base) == []
    page.goto(f"{base}/benchmarks/library/")
    assert page.locator("#board tbody th[scope=row] > a", has_text="warned-run").count() == 0
    page.close()
    assert problems == []
