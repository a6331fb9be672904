"""The leaderboard in a real browser (Debian's Chromium, headless): the leaderboard read on a
390 px phone, menus that act on select, and the comparison's tests table.

Screenshots land in artifacts/ (gitignored): leaderboard-wide-{1280,390}.png and
compare-tests-390.png.
"""

from __future__ import annotations

import re

import pytest

from leaderboard.models import Submission
from tests.leaderboard import pages_data as data
from tests.leaderboard.browsers import BROWSER_TESTS, log_in
from tests.leaderboard.pages.test_browser import ARTIFACTS, watch

library, demo_user = data.library, data.demo_user
pytestmark = BROWSER_TESTS

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
# Real run names are long: the phone layout has to wrap them, not scroll the page.
LONG_NAMES = ["bm25-rm3-monot5-reranked-v2", "splade++-ensemble-distil", "dense_retrieval_run_3"]


@pytest.fixture
def crowded(library, demo_user):
    """The library board with three more runs with long names, and a baseline badge."""
    frame = Submission.objects.get(run_name="system-B").results.get().per_need_frame()
    for i, name in enumerate(LONG_NAMES):
        data.add_run(library, demo_user, name, frame * (0.9 - 0.1 * i), is_baseline=i == 1)
    return library


# The rank, run, ranking-measure and "vs #1" cells of every body row, with their boxes.
KEY_CELLS = """() => {
  const heads = [...document.querySelectorAll('#board thead th')];
  const at = (test) => heads.findIndex(test);
  const columns = [
    at((h) => h.innerText.trim() === 'Rank'),
    at((h) => h.innerText.trim() === 'Run'),
    at((h) => h.getAttribute('aria-sort') === 'descending'),
    at((h) => h.innerText.trim() === 'vs #1'),
  ];
  const boxes = [];
  for (const row of document.querySelectorAll('#board tbody tr')) {
    for (const i of columns) {
      const r = row.cells[i].getBoundingClientRect();
      boxes.push({left: r.left, right: r.right, text: row.cells[i].innerText.trim()});
    }
  }
  return boxes;
}"""


# The column heading a reader sees above the first run name (what is drawn there, sticky
# or not): its text.
HEADING_ABOVE_RUN_NAMES = """() => {
  const name = document.querySelector('#board tbody th[scope=row]').getBoundingClientRect();
  const head = document.querySelector('#board thead tr').getBoundingClientRect();
  const top = document.elementFromPoint(name.left + name.width / 2, head.top + head.height / 2);
  const cell = top && top.closest('th, td');
  return cell ? cell.innerText.trim() : '';
}"""


def in_view(page, selector: str) -> list[dict]:
    """Bounding boxes of the first body row's cells matching ``selector``."""
    return page.eval_on_selector_all(
        f"#board tbody tr:first-child {selector}",
        "(cells) => cells.map((c) => { const r = c.getBoundingClientRect();"
        " return {left: r.left, right: r.right, text: c.innerText}; })",
    )


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_rank_run_measure_and_vs_1_fit_the_width(
    transactional_db, live_server, crowded, browser, viewport
):
    ARTIFACTS.mkdir(exist_ok=True)
    problems: list[str] = []
    page = browser.new_page(viewport=viewport)
    watch(page, problems)
    page.goto(f"{live_server.url}/benchmarks/library/")
    width = viewport["width"]
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    # Every row's four key cells, found by their column headings (not by class names).
    boxes = page.evaluate(KEY_CELLS)
    assert [b["text"] for b in boxes[:4]] == ["1", "system-B", "0.7397", "#1"]
    assert len(boxes) == 4 * 5
    for box in boxes:
        assert box["left"] >= 0 and box["right"] <= width, box
    page.screenshot(path=str(ARTIFACTS / f"leaderboard-wide-{width}.png"), full_page=True)
    if width == 390:
        # The other measures scroll inside the table's box, with the hint shown.
        wrap = page.locator("#board-wrap")
        assert page.evaluate(
            "() => { const w = document.getElementById('board-wrap');"
            " return w.scrollWidth > w.clientWidth; }"
        )
        assert "more-right" in (wrap.get_attribute("class") or "")
        assert page.locator("#board-scroll-hint").is_visible()
        # Scrolled to the end: rank and run stay in place (sticky), the shadow moves.
        page.evaluate("() => { const w = document.getElementById('board-wrap');"
                      " w.scrollLeft = w.scrollWidth; }")  # fmt: skip
        page.wait_for_function(
            "() => document.getElementById('board-wrap').classList.contains('more-left')"
        )
        run = in_view(page, "th[scope=row]")[0]
        assert run["left"] >= 0 and run["right"] <= width
        # ... and so does their column's heading: "Run" is what is drawn above them.
        page.locator("#board thead").scroll_into_view_if_needed()
        assert page.evaluate(HEADING_ABOVE_RUN_NAMES) == "Run"
    else:
        assert not page.locator("#board-scroll-hint").is_visible()
    page.close()
    assert problems == []


def test_choosing_a_measure_navigates_without_the_button(
    transactional_db, live_server, crowded, browser
):
    problems: list[str] = []
    page = browser.new_page(viewport=PHONE)
    watch(page, problems)
    page.goto(f"{live_server.url}/benchmarks/library/")
    assert page.locator("#measure optgroup").count() >= 2
    page.select_option("#measure", "P_10")
    page.wait_for_url(re.compile(r"measure=P_10"))
    assert page.locator("#board thead th[aria-sort=descending]").inner_text().strip() == "P@10"
    assert page.locator("#measure").input_value() == "P_10"
    # The significance page's menus too (measure and correction).
    page.goto(f"{live_server.url}/benchmarks/library/significance/")
    page.select_option("#correction", "bh")
    page.wait_for_url(re.compile(r"correction=bh"))
    assert "Benjamini-Hochberg" in page.locator("#matrix-caption").inner_text()
    page.close()
    assert problems == []


def test_the_comparison_tests_table_rows_are_short_on_a_phone(
    transactional_db, live_server, library, browser
):
    a, b = (Submission.objects.get(run_name=n).pk for n in ("system-A", "system-B"))
    problems: list[str] = []
    page = browser.new_page(viewport=PHONE)
    watch(page, problems)
    page.goto(f"{live_server.url}/benchmarks/library/compare/{a}/{b}/")
    heights = page.eval_on_selector_all(
        "table.tests tbody tr", "(rows) => rows.map((r) => r.getBoundingClientRect().height)"
    )
    page.locator("table.tests").screenshot(path=str(ARTIFACTS / "compare-tests-390.png"))
    assert len(heights) == 3
    assert max(heights) <= 130, heights  # was ~200 px: a narrow "What it asks" column
    right = page.eval_on_selector("table.tests", "(t) => t.getBoundingClientRect().right")
    assert right <= 390
    page.close()
    assert problems == []


LONGEST = "bm25_rm3_monot5_3b_msmarco_v2_rerank_top"  # 40, the most a run name may have


@pytest.fixture
def longest(library, demo_user):
    """The library with a run of the longest name without a hyphen to break at, its
    participant's display name of 60 characters with no space, a need title of one long
    word, and an API token (the tokens page lists it)."""
    from leaderboard.models import ApiToken, InformationNeed, Profile

    frame = Submission.objects.get(run_name="system-B").results.get().per_need_frame()
    run = data.add_run(library, demo_user, LONGEST, frame * 0.9)
    Profile.objects.filter(user=Profile.of(demo_user).user).update(display_name="x" * 60)
    InformationNeed.objects.filter(benchmark=library, need_id="atwood").update(title="y" * 300)
    ApiToken.issue(demo_user, "laptop")
    return run


def no_sideways_scroll(page, base: str, paths: list[str]) -> None:
    for path in paths:
        page.goto(f"{base}{path}")
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= PHONE["width"], (path, width)


def test_the_longest_names_wrap_on_a_phone_not_the_page(
    transactional_db, live_server, library, longest, browser
):
    """The run page, a comparison and the run's results wrap the longest names (or
    scroll a table inside its box); the page itself never scrolls sideways."""
    other = Submission.objects.get(run_name="system-A").pk
    problems: list[str] = []
    page = browser.new_page(viewport=PHONE)
    watch(page, problems)
    for path in (
        f"/submissions/{longest.pk}/?need=atwood",
        f"/benchmarks/library/compare/{longest.pk}/{other}/?need=atwood",
        f"/submissions/{longest.pk}/results/",
    ):
        no_sideways_scroll(page, live_server.url, [path])
        assert page.locator("h1").inner_text().count(LONGEST) == 1, path
    page.screenshot(path=str(ARTIFACTS / "results-long-name-390.png"))
    page.close()
    assert problems == []


def test_the_owners_pages_keep_the_longest_names_in_a_phone_s_width(
    transactional_db, live_server, library, demo_user, longest, browser
):
    """Its participant's pages: the confirmation pages (whose checkbox label names the
    run), the final runs' table, the tokens table (its hidden "Revoke" text, absolutely
    placed, escaped the table's scrolling box) and My runs."""
    context = browser.new_context(viewport=PHONE)
    log_in(context, live_server, demo_user)
    page = context.new_page()
    problems: list[str] = []
    watch(page, problems)
    no_sideways_scroll(
        page,
        live_server.url,
        [
            f"/submissions/{longest.pk}/hide/",
            f"/submissions/{longest.pk}/withdraw/",
            f"/submissions/{longest.pk}/edit/",
            "/benchmarks/library/final-runs/",
            "/accounts/tokens/",
            "/accounts/runs/",
        ],
    )
    context.close()
    assert problems == []
