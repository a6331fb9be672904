"""The pages at campaign scale in a real browser (Debian's Chromium, headless): a seeded
benchmark of 60 runs from 10 teams at 1280 x 800 and 390 x 844.

The board: at least 20 runs in the first 1280 x 800 screen, each on one line (every
row's height measured), the header row stuck to the top of the table's box as it
scrolls; the progress plot; the measure menu led by the primary and shown measures.
The matrix: its run names stuck to the top and left edges while it scrolls both ways,
its key outside the scroll box. The comparison page: the verdict sentence. Screenshots
of each page family go to artifacts/pages/<name>-<width>.png.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import AnonymousUser

from leaderboard.models import Submission
from leaderboard.reading.boards import build_leaderboard
from tests.leaderboard.browsers import BROWSER_TESTS
from tests.leaderboard.campaign_data import campaign
from tests.leaderboard.pages.test_browser import ARTIFACTS, watch

__all__ = ["campaign"]
pytestmark = BROWSER_TESTS

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
PAGES = ARTIFACTS / "pages"

ROWS = """() => [...document.querySelectorAll('#board tbody tr')].map((row) => {
  const r = row.getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, height: r.height};
})"""
# One line of the board's text: the height of a row whose cells hold a single line.
LINE = """() => {
  const cell = document.querySelector('#board tbody td.rank');
  const style = getComputedStyle(cell);
  return parseFloat(style.lineHeight) + parseFloat(style.paddingTop)
    + parseFloat(style.paddingBottom);
}"""


def shoot(page, name: str, width: int) -> None:
    PAGES.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(PAGES / f"{name}-{width}.png"), full_page=True)


def test_twenty_runs_on_one_line_each_fill_the_first_desktop_screen(
    transactional_db, live_server, campaign, browser
):
    problems: list[str] = []
    page = browser.new_page(viewport=DESKTOP)
    watch(page, problems)
    page.goto(f"{live_server.url}/benchmarks/campaign/")
    rows = page.evaluate(ROWS)
    assert len(rows) == 50  # the first page of 60 runs
    in_first_screen = [r for r in rows if r["bottom"] <= DESKTOP["height"]]
    assert len(in_first_screen) >= 20, rows[:3]
    line = page.evaluate(LINE)
    # no wrapped row: each is one line of text (+1 px of border), about 30 px
    assert max(r["height"] for r in rows) <= line + 2, (line, rows)
    assert 24 <= line <= 34
    assert page.evaluate("() => document.documentElement.scrollWidth") <= DESKTOP["width"]
    # names are cut, not wrapped, with the whole name in the title
    first = page.locator("#board tbody tr").first.locator("a.run-name")
    assert re.fullmatch(r"team\d-dense-monot5-rerank-ensemble-v\d, submitted .+ UTC",
                        first.get_attribute("title"))  # fmt: skip
    # the ranking measure is the column after rank and run, and the first one emphasised
    heads = page.eval_on_selector_all(
        "#board thead th", "(hs) => hs.map((h) => h.innerText.trim())"
    )
    assert heads[:4] == ["Rank", "Run", "nDCG@10", "vs #1"]
    # the measure menu: the benchmark's measures first, then "More measures: ..."
    groups = page.eval_on_selector_all(
        "#measure optgroup",
        "(gs) => gs.map((g) => [g.label, [...g.children].map((o) => o.value)])",
    )
    assert groups[0] == ["Primary and shown", ["ndcg_cut_10", "map", "P_10", "recip_rank"]]
    assert len(groups) > 1 and all(g.startswith("More measures: ") for g, _ in groups[1:])
    # the progress plot: one dot per run, the running best as a step line
    plot = page.locator("#progress-h + figure svg")
    assert plot.count() == 1 and plot.is_visible()
    shoot(page, "leaderboard", 1280)

    # The header row stays at the top of the table's box while the runs scroll.
    wrap = page.locator("#board-wrap")
    wrap.hover()
    page.mouse.wheel(0, 600)
    page.wait_for_function("() => document.getElementById('board-wrap').scrollTop > 100")
    box_top = page.evaluate(
        "() => document.getElementById('board-wrap').getBoundingClientRect().top"
    )
    head_top = page.evaluate(
        "() => document.querySelector('#board thead th').getBoundingClientRect().top"
    )
    assert abs(head_top - max(box_top, 0)) <= 2, (head_top, box_top)
    page.close()
    assert problems == []


def test_rank_run_measure_and_vs_1_stay_on_a_phone(
    transactional_db, live_server, campaign, browser
):
    problems: list[str] = []
    page = browser.new_page(viewport=PHONE)
    watch(page, problems)
    page.goto(f"{live_server.url}/benchmarks/campaign/")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    shoot(page, "leaderboard", 390)
    for selector in ("td.rank", "th[scope=row]", "td.ranked", "td.sig"):
        box = page.locator(f"#board tbody tr >> nth=1 >> {selector}").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (selector, box)
    # a row without badges is one line on a phone too (a badge may wrap under the name)
    plain = page.eval_on_selector_all(
        "#board tbody tr:not(:has(.badge))", "(rows) => rows.map((r) => r.offsetHeight)"
    )
    assert len(plain) >= 45 and max(plain) <= page.evaluate(LINE) + 2
    page.close()
    assert problems == []


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_the_matrix_keeps_its_run_names_in_view_as_it_scrolls(
    transactional_db, live_server, campaign, browser, viewport
):
    problems: list[str] = []
    page = browser.new_page(viewport=viewport)
    watch(page, problems)
    page.goto(f"{live_server.url}/benchmarks/campaign/significance/")
    assert page.locator("#matrix tbody tr").count() == 50
    # the key is outside the scroll box and visible without scrolling it
    assert page.locator("#matrix-wrap #matrix-caption").count() == 0
    assert "Holm-corrected over the 1225 pairs" in page.locator("#matrix-caption").inner_text()
    shoot(page, "significance", viewport["width"])
    page.evaluate(
        "() => { const w = document.getElementById('matrix-wrap');"
        " w.scrollTop = 400; w.scrollLeft = 600; }"
    )
    page.wait_for_function("() => document.getElementById('matrix-wrap').scrollLeft > 100")
    edges = page.evaluate(
        """() => {
          const w = document.getElementById('matrix-wrap').getBoundingClientRect();
          const col = document.querySelector('#matrix thead th.col-run').getBoundingClientRect();
          const row = document.querySelector('#matrix tbody tr:nth-child(30) th').getBoundingClientRect();
          return {wrapTop: w.top, wrapLeft: w.left, colTop: col.top, rowLeft: row.left,
                  rowTop: row.top, wrapBottom: w.bottom};
        }"""
    )
    assert abs(edges["colTop"] - edges["wrapTop"]) <= 2, edges  # the column names stick
    assert abs(edges["rowLeft"] - edges["wrapLeft"]) <= 2, edges  # the row names stick
    # a heat cell: a band class, a mark or p as text, linking to the pair's comparison
    cell = page.locator("#matrix tbody td.band-0").first
    assert re.fullmatch(r"[▲▼] (<0\.001|0\.\d{3})", cell.locator("a").first.inner_text())
    assert "/compare/" in cell.locator("a").first.get_attribute("href")
    page.close()
    assert problems == []


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_the_comparison_and_run_pages_say_it_in_a_sentence(
    transactional_db, live_server, campaign, browser, viewport
):
    board = build_leaderboard(campaign, AnonymousUser())
    a, b = board.rows[0], board.rows[5]
    problems: list[str] = []
    page = browser.new_page(viewport=viewport)
    watch(page, problems)
    page.goto(f"{live_server.url}/benchmarks/campaign/compare/{a.submission_id}/{b.submission_id}/")
    sentence = page.locator("#verdict")
    assert sentence.is_visible()
    assert re.fullmatch(
        rf"{re.escape(a.run_name)} is ahead of {re.escape(b.run_name)} by 0\.\d{{4}} nDCG@10 "
        r"on \d+ of 30 needs; the difference is (not )?significant \(t-test p [=<] [\d.]+\)\.",
        sentence.inner_text(),
    )
    shoot(page, "compare", viewport["width"])
    run = Submission.objects.get(pk=b.submission_id)
    page.goto(f"{live_server.url}/submissions/{run.pk}/")
    first_head = page.locator("table.per-need thead th").nth(2).inner_text().strip()
    assert first_head.startswith("nDCG@10")
    shoot(page, "run", viewport["width"])
    page.close()
    assert problems == []


@pytest.mark.long
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_campaign_pages_pass_axe(transactional_db, live_server, campaign, browser, scheme):
    """axe-core on what the library's two runs do not show: the heatmap's coloured bands,
    team labels, bars and cut names, at both widths."""
    from tests.leaderboard.pages.test_accessibility import axe_script, axe_violations

    board = build_leaderboard(campaign, AnonymousUser())
    a, b = board.rows[0].submission_id, board.rows[-1].submission_id
    paths = [
        "/benchmarks/campaign/",
        "/benchmarks/campaign/significance/",
        f"/benchmarks/campaign/compare/{a}/{b}/",
        f"/submissions/{b}/",
    ]
    failures = {}
    for viewport in (DESKTOP, PHONE):
        context = browser.new_context(viewport=viewport, color_scheme=scheme)
        context.add_init_script(path=str(axe_script()))
        page = context.new_page()
        for path in paths:
            page.goto(live_server.url + path)
            if found := axe_violations(page):
                failures[f"{path} {viewport['width']}"] = found
        context.close()
    assert failures == {}, failures
