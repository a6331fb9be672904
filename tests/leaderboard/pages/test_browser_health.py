"""The benchmark health page in Debian's Chromium: reached from the leaderboard's MDD line,
its ASL curves readable (text >= 12 px) at desktop and phone widths, no horizontal page
scroll on a phone, no console or HTTP errors. Screenshots: artifacts/health-*.png."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from leaderboard.models import Benchmark, Submission
from leaderboard.pipeline import health
from tests.leaderboard.browsers import BROWSER_TESTS
from tests.leaderboard.pages.test_browser import ARTIFACTS, watch
from tests.leaderboard.pages.test_browser_plots import TEXT_SIZES, VIEWPORTS

pytestmark = BROWSER_TESTS


@pytest.fixture
def demo_health(transactional_db) -> Benchmark:
    call_command("load_demo", stdout=io.StringIO())
    benchmark = Benchmark.objects.get(slug="library")
    bob = get_user_model().objects.create_user("bob-b", password="pw-bob-123")
    Submission.objects.filter(benchmark=benchmark, run_name="system-B").update(participant=bob)
    health.compute(benchmark.pk, benchmark.current_judgments_id)
    return benchmark


@VIEWPORTS
def test_health_page_from_the_leaderboard(live_server, demo_health, browser, viewport) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    size = "desktop" if viewport["width"] > 600 else "phone"
    problems: list[str] = []
    page = browser.new_page(viewport=viewport)
    watch(page, problems)
    page.goto(f"{live_server.url}/benchmarks/library/")
    line = page.locator("#mdd-line")
    assert "are unlikely to be detected at 80% power" in line.text_content()
    line.get_by_role("link", name="Benchmark health").click()
    page.wait_for_url("**/benchmarks/library/health/")
    assert page.locator("h1").text_content() == "Benchmark health"
    assert page.get_by_text("computed", exact=False).count() > 0
    sizes = page.evaluate(TEXT_SIZES)
    assert {s["plot"] for s in sizes} == {"asl"}
    small = [s for s in sizes if s["px"] < 12]
    assert small == [], small
    assert page.locator("svg[data-plot=asl] path.series").count() == 1  # map, the one tested
    assert page.locator("#pool-h").is_visible()
    rows = page.locator("section[aria-labelledby=pool-h] tbody tr")
    assert rows.count() == 2
    overflow = page.evaluate("() => document.documentElement.scrollWidth > window.innerWidth")
    assert overflow is False
    page.screenshot(path=str(ARTIFACTS / f"health-{size}.png"), full_page=True)
    page.close()
    assert problems == []
