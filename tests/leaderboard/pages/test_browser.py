"""A reader's path through the pages in a real browser: Debian's Chromium, headless.

Leaderboard -> rank by another measure -> a run page with its SVG curve -> pick two runs
-> the comparison (and a sortable table), at desktop and phone widths, with no console
errors. Screenshots land in artifacts/ (gitignored) for a human to look at.
"""

from __future__ import annotations

import re

import pytest

from tests import ROOT
from tests.leaderboard import pages_data as data
from tests.leaderboard.browsers import BROWSER_TESTS, log_in

ARTIFACTS = ROOT / "artifacts"

library, demo_user = data.library, data.demo_user
pytestmark = BROWSER_TESTS


def watch(page, problems: list[str]) -> None:
    page.on(
        "console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on(
        "response",
        lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None,
    )


@pytest.mark.parametrize(
    "viewport",
    [{"width": 1280, "height": 900}, {"width": 390, "height": 844}],
    ids=["desktop", "phone"],
)
def test_reader_path(transactional_db, live_server, library, browser, viewport):
    ARTIFACTS.mkdir(exist_ok=True)
    size = "desktop" if viewport["width"] > 600 else "phone"
    problems: list[str] = []
    page = browser.new_page(viewport=viewport)
    watch(page, problems)

    page.goto(f"{live_server.url}/")
    page.get_by_role("link", name="Library").first.click()
    page.wait_for_url(re.compile(r"/benchmarks/library/$"))
    rows = page.locator("#board tbody th[scope=row] a")
    assert rows.all_inner_texts() == ["system-B", "system-A"]
    page.screenshot(path=str(ARTIFACTS / f"leaderboard-{size}.png"), full_page=True)

    # Rank by another measure: the column heading is a link.
    page.locator("#board thead a", has_text="P@10").click()
    page.wait_for_url(re.compile(r"measure=P_10"))
    assert page.locator("#board thead th[aria-sort=descending]").inner_text().strip() == "P@10"
    assert page.locator("#measure").input_value() == "P_10"

    # A run page with the seed's Figure 1.
    page.locator("#board tbody a", has_text="system-A").click()
    page.wait_for_url(re.compile(r"/submissions/\d+/$"))
    figure = page.locator("svg.plot").first
    figure.wait_for()
    assert figure.is_visible()
    assert "Precision-recall for need" in figure.locator("title").text_content()
    page.select_option("#need", "cs-foundations")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url(re.compile(r"need=cs-foundations"))
    assert "AP 0.473" in page.locator("svg.plot title").first.text_content()
    # The per-need table sorts by a heading (JavaScript) and keeps all rows.
    table = page.locator("table.per-need")
    table.locator("thead button", has_text="AP").click()
    first = table.locator("tbody tr").first.locator("th").inner_text()
    assert first == "atwood"  # AP 0.833, the best of A's four
    assert table.locator("thead th[aria-sort=descending]").count() == 1
    page.screenshot(path=str(ARTIFACTS / f"run-{size}.png"), full_page=True)

    # Pick two runs on the leaderboard and compare them.
    page.goto(f"{live_server.url}/benchmarks/library/")
    page.select_option("#pick-a", label="system-A (#2)")
    page.select_option("#pick-b", label="system-B (#1)")
    page.get_by_role("button", name="Compare").click()
    page.wait_for_url(re.compile(r"/compare/\d+/\d+/$"))
    assert page.locator("h1").inner_text().replace("\n", " ") == "system-A vs system-B"
    assert page.locator("svg.plot").count() == 4  # bars, scatter, a need, 11-point
    assert page.locator("table.tests tbody tr").count() == 3
    page.screenshot(path=str(ARTIFACTS / f"compare-{size}.png"), full_page=True)

    page.goto(f"{live_server.url}/benchmarks/library/significance/")
    page.screenshot(path=str(ARTIFACTS / f"significance-{size}.png"), full_page=True)
    page.close()
    assert problems == []


def test_live_status_updates_without_reload(transactional_db, live_server, library, browser):
    from django.utils import timezone

    from leaderboard.models import Submission

    run = Submission.objects.create(
        benchmark=library,
        participant=library.submissions.first().participant,
        run_name="live",
        file="runs/library/live.txt",
    )
    problems: list[str] = []
    context = browser.new_context()  # the owner: a run not scored yet is theirs alone
    log_in(context, live_server, run.participant)
    page = context.new_page()
    watch(page, problems)
    page.goto(f"{live_server.url}/submissions/{run.pk}/")
    status = page.locator("#run-status")
    assert status.get_attribute("data-status") == "queued"
    page.evaluate("window.notReloaded = true")
    Submission.objects.filter(pk=run.pk).update(status=Submission.Status.RUNNING)
    # A function, not an expression: Playwright evaluates expressions with eval, which
    # the Content-Security-Policy (rightly) refuses.
    page.wait_for_function(
        "() => document.getElementById('run-status').dataset.status === 'running'",
        timeout=20_000,
    )
    assert "Being scored now." in status.inner_text()
    Submission.objects.filter(pk=run.pk).update(
        status=Submission.Status.FAILED,
        failure_reason="run-live.txt:3: score is not a number",
        finished=timezone.now(),
    )
    failure = page.locator("[data-field=failure]")
    failure.wait_for(state="visible", timeout=20_000)
    assert failure.inner_text() == "run-live.txt:3: score is not a number"
    assert page.evaluate("window.notReloaded") is True  # updated in place
    page.screenshot(path=str(ARTIFACTS / "run-failed-live.png"))
    page.close()
    assert problems == []
