"""The plots in Debian's Chromium: readable text at desktop and phone widths, bars and dots
that open a need's figure (and scroll to it), and colours that read in either scheme.

Screenshots land in artifacts/ (plots-*.png).
"""

from __future__ import annotations

import re

import pytest

from leaderboard.models import Submission
from tests.leaderboard import pages_data as data
from tests.leaderboard.browsers import BROWSER_TESTS
from tests.leaderboard.pages.test_browser import ARTIFACTS, watch

library, demo_user = data.library, data.demo_user
pytestmark = BROWSER_TESTS

VIEWPORTS = pytest.mark.parametrize(
    "viewport",
    [{"width": 1280, "height": 900}, {"width": 390, "height": 844}],
    ids=["desktop", "phone"],
)
# Each <text> of each plot: its font size as rendered (computed size times the scale of
# its transform to the screen, rotations included).
TEXT_SIZES = """() => Array.from(document.querySelectorAll('svg.plot text')).map(t => {
  const m = t.getScreenCTM();
  return {plot: t.closest('svg').dataset.plot, text: t.textContent,
          px: parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b)};
})"""
FIGURE_IN_VIEW = """() => {
  const r = document.querySelector('#need-figure svg').getBoundingClientRect();
  return r.top >= 0 && r.top < window.innerHeight && r.bottom > 0;
}"""
# The colours a reader sees: each text's fill, each coloured shape's fill or stroke, and
# the background behind the plot (the first ancestor with one).
COLOURS = """() => {
  const svg = document.querySelector('svg.plot');
  let el = svg, bg = 'rgba(0, 0, 0, 0)';
  while (el && (bg === 'rgba(0, 0, 0, 0)' || bg === 'transparent')) {
    bg = getComputedStyle(el).backgroundColor; el = el.parentElement;
  }
  const texts = Array.from(document.querySelectorAll('svg.plot text')).map(t => getComputedStyle(t).fill);
  const marks = Array.from(document.querySelectorAll(
    'svg.plot .bar, svg.plot .dot, svg.plot .interp, svg.plot .series')).map(s => {
      const st = getComputedStyle(s); return st.fill !== 'none' ? st.fill : st.stroke; });
  return {bg: bg, texts: texts, marks: marks};
}"""


def rgb(css: str) -> tuple[int, ...]:
    return tuple(int(v) for v in re.findall(r"\d+", css)[:3])


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two CSS rgb() colours."""

    def luminance(colour: str) -> float:
        c = [v / 255 for v in rgb(colour)]
        c = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def urls(live_server) -> dict[str, str]:
    a, b = (Submission.objects.get(run_name=f"system-{t}").pk for t in "AB")
    return {
        "run": f"{live_server.url}/submissions/{a}/",
        "compare": f"{live_server.url}/benchmarks/library/compare/{a}/{b}/",
    }


@VIEWPORTS
def test_plot_text_is_at_least_12_px(transactional_db, live_server, library, browser, viewport):
    ARTIFACTS.mkdir(exist_ok=True)
    size = "desktop" if viewport["width"] > 600 else "phone"
    problems: list[str] = []
    page = browser.new_page(viewport=viewport)
    watch(page, problems)
    for name, url in urls(live_server).items():
        page.goto(url)
        sizes = page.evaluate(TEXT_SIZES)
        plots = {s["plot"] for s in sizes}
        assert plots == (
            {"need", "eleven"} if name == "run" else {"bars", "scatter", "need", "eleven"}
        )
        small = [s for s in sizes if s["px"] < 12]
        assert small == [], f"{name} at {viewport['width']} px: {small}"
        # and not blown up on a desktop either
        assert max(s["px"] for s in sizes) < 20
        page.locator("section.figures").screenshot(path=str(ARTIFACTS / f"plots-{name}-{size}.png"))
    page.close()
    assert problems == []


@VIEWPORTS
def test_bars_dots_and_rows_open_the_need_figure_in_view(
    transactional_db, live_server, library, browser, viewport
):
    problems: list[str] = []
    page = browser.new_page(viewport=viewport)
    # Instant scrolling (the site scrolls smoothly otherwise): where the page lands, not
    # how it glides there, under a loaded machine's timing.
    page.emulate_media(reduced_motion="reduce")
    watch(page, problems)
    where = urls(live_server)
    clicks = [
        ("compare", "svg[data-plot=bars] a.need", 2, "atwood"),
        ("compare", "svg[data-plot=scatter] a.need", 1, "stage-plays"),
        ("compare", "table.per-need tbody th a", 0, "cs-foundations"),
        ("run", "table.per-need tbody th a", 3, "russian-novels"),
    ]
    for name, selector, index, need in clicks:
        page.goto(where[name])
        target = page.locator(selector).nth(index)
        target.scroll_into_view_if_needed()
        target.click()
        page.wait_for_url(re.compile(rf"need={need}#need-figure$"))
        page.wait_for_function(FIGURE_IN_VIEW)
        title = page.locator("#need-figure svg > title").text_content()
        assert title.startswith(f"Precision-recall for need {need}"), (selector, title)
        assert page.evaluate("() => window.scrollY") > 0  # not back at the top
    # The need menu keeps the place too (the form posts to #need-figure).
    page.select_option("#need", "atwood")
    page.locator("#need-figure").get_by_role("button", name="Show").click()
    page.wait_for_url(re.compile(r"need=atwood#need-figure$"))
    page.wait_for_function(FIGURE_IN_VIEW)
    page.close()
    assert problems == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_plots_read_in_either_colour_scheme(
    transactional_db, live_server, library, browser, scheme
):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.emulate_media(color_scheme=scheme)
    page.goto(urls(live_server)["compare"])
    seen = page.evaluate(COLOURS)
    checks = [("the site's own colours", seen)]
    if scheme == "dark":
        # Whatever the site's stylesheet does, a dark page (GitHub's dark colours) must
        # still show the plots: text follows the page's colour, marks are mid tones.
        page.evaluate(
            "() => { for (const el of [document.documentElement, document.body]) {"
            " el.style.background = '#0d1117'; el.style.color = '#e6edf3'; } }"
        )
        forced = page.evaluate(COLOURS)
        assert set(forced["texts"]) == {"rgb(230, 237, 243)"}
        checks.append(("a dark page", forced))
    for what, colours in checks:
        assert colours["texts"] and colours["marks"]
        for text in set(colours["texts"]):
            assert contrast(text, colours["bg"]) >= 4.5, (what, text, colours["bg"])
        for mark in set(colours["marks"]):
            assert contrast(mark, colours["bg"]) >= 3, (what, mark, colours["bg"])
    page.locator("section.figures").screenshot(path=str(ARTIFACTS / f"plots-compare-{scheme}.png"))
    page.close()
