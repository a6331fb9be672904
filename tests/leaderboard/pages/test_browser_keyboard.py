"""The pages by keyboard alone in Debian's Chromium (headless): WCAG 2.1's focus visible
(2.4.7), no keyboard trap (2.1.2) and a focus ring that stands out from what is around it
(1.4.11, 3:1), then the two flows a participant walks: submitting a run and choosing the
final runs, with Tab, Space and Enter only.

A walk presses Tab from the top of a page until focus leaves it, and at each stop reads
the focused element's outline, the colour behind it and what lies on top of its centre
(a sticky row or column heading of a table scrolled sideways must not cover it).
"""

from __future__ import annotations

import re

import pytest
from django.utils import timezone

from leaderboard.models import Phase, Submission
from tests.leaderboard import pages_data as data
from tests.leaderboard.browsers import BROWSER_TESTS, log_in
from tests.leaderboard.campaign_data import seed_boards

library, demo_user = data.library, data.demo_user
pytestmark = BROWSER_TESTS

# The focused element: its outline (or box-shadow), the contrast of the outline's colour
# with the first opaque background behind the element, and what is drawn over its centre;
# read two frames after the key press, as a reader sees it.
FOCUS = """async () => {
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  const rgb = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const luminance = ([r, g, b]) => [r, g, b].map((v) => {
    v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  }).reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  let behind = el.parentElement, background = [255, 255, 255];
  while (behind) {
    const c = rgb(getComputedStyle(behind).backgroundColor);
    if (c.length === 3 || (c.length === 4 && c[3] > 0.9)) { background = c.slice(0, 3); break; }
    behind = behind.parentElement;
  }
  const style = getComputedStyle(el);
  const outline = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2;
  const [hi, lo] = [luminance(rgb(style.outlineColor)), luminance(background)].sort((a, b) => b - a);
  const r = el.getBoundingClientRect();
  const x = Math.min(Math.max(r.left + Math.min(r.width, 20) / 2, 0), innerWidth - 1);
  const y = Math.min(Math.max(r.top + r.height / 2, 0), innerHeight - 1);
  const top = document.elementFromPoint(x, y);
  const label = `${el.tagName.toLowerCase()} "${(el.innerText || el.id || '').trim().slice(0, 40)}"`;
  return {
    label, outline, shadow: style.boxShadow !== 'none',
    contrast: outline ? (hi + 0.05) / (lo + 0.05) : 0,
    covered: top && !el.contains(top) && !top.contains(el) ? top.tagName.toLowerCase() : '',
  };
}"""


def walk(page) -> list[dict]:
    """Every focus stop of the page, Tab after Tab from the top; fails on a trap."""
    # From the skip link, the first stop of every page (a field with autofocus would
    # otherwise be where Tab starts).
    page.locator("a.skip").focus()
    stops: list[dict] = [page.evaluate(FOCUS)]
    for _ in range(300):
        page.keyboard.press("Tab")
        stop = page.evaluate(FOCUS)
        if stop is None or stop["label"] == stops[0]["label"]:
            return stops  # out of the page (or round to its first stop again)
        stops.append(stop)
    pytest.fail(f"Tab never leaves the page: a keyboard trap near {stops[-1]['label']}")


def problems(stops: list[dict]) -> list[str]:
    found = []
    for stop in stops:
        if not (stop["outline"] or stop["shadow"]):
            found.append(f"{stop['label']}: no focus indicator")
        elif stop["outline"] and stop["contrast"] < 3:
            found.append(f"{stop['label']}: focus ring contrast {stop['contrast']:.2f}:1")
        if stop["covered"]:
            found.append(f"{stop['label']}: covered by a {stop['covered']}")
    return found


@pytest.fixture
def boards(transactional_db):
    """Four runs with phases and a tested matrix: wide enough to scroll on a phone."""
    return seed_boards()


@pytest.mark.parametrize(
    ("scheme", "width"), [("light", 390), ("dark", 1280)], ids=["light-phone", "dark-desktop"]
)
def test_every_focus_stop_shows_a_ring_nothing_covers(
    transactional_db, live_server, browser, library, boards, scheme, width
):
    runs = sorted(library.submissions.values_list("pk", flat=True))
    context = browser.new_context(
        viewport={"width": width, "height": 800}, color_scheme=scheme, reduced_motion="reduce"
    )
    page = context.new_page()
    found: dict[str, list[str]] = {}
    for path in [
        "/benchmarks/library/",
        f"/submissions/{runs[0]}/",  # the per-need table's sort buttons
        f"/benchmarks/library/compare/{runs[0]}/{runs[1]}/",
        "/benchmarks/boards/",  # a board that scrolls sideways on a phone
        "/benchmarks/boards/significance/",  # the matrix: sticky names on two edges
    ]:
        page.goto(live_server.url + path)
        stops = walk(page)
        assert len(stops) > 10, path
        if bad := problems(stops):
            found[path] = bad
    context.close()
    assert found == {}, "\n".join(f"{p}:\n  " + "\n  ".join(v) for p, v in found.items())


def test_the_walk_sees_a_missing_ring_and_a_trap(transactional_db, live_server, browser):
    """The checks themselves: a link without an outline and a field that sends focus
    back to itself are reported."""
    page = browser.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.evaluate(  # (CSSOM: the Content-Security-Policy refuses a <style> element)
        "() => document.querySelector('a.brand').style.setProperty('outline', 'none', 'important')"
    )
    assert any(p.startswith('a "Ranked retrieval') for p in problems(walk(page)))
    page.evaluate(
        """() => document.getElementById('id_password').addEventListener(
            'keydown', (e) => { if (e.key === 'Tab') e.preventDefault(); })"""
    )
    with pytest.raises(pytest.fail.Exception, match="keyboard trap"):
        walk(page)
    page.close()


def press_tab_to(page, selector: str, limit: int = 60) -> None:
    """Tab until the element ``selector`` names has focus (and only Tab)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement.matches(s)", selector):
            return
    pytest.fail(f"Tab never reaches {selector}")


def test_submit_a_run_by_keyboard(transactional_db, live_server, browser, library, demo_user):
    context = browser.new_context()
    log_in(context, live_server, demo_user)
    page = context.new_page()
    page.goto(f"{live_server.url}/benchmarks/library/submit/")
    press_tab_to(page, "#id_file")
    with page.expect_file_chooser() as chooser:
        page.keyboard.press("Space")  # the file picker opens from the keyboard
    chooser.value.set_files(str(data.DEMO / "run-A.txt"))
    press_tab_to(page, "#id_run_name", limit=3)
    page.keyboard.type("by-keyboard")
    press_tab_to(page, "#id_description", limit=3)
    page.keyboard.type("typed, not clicked")
    press_tab_to(page, "button[type=submit]", limit=3)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/submissions/\d+/$"))
    run = Submission.objects.get(run_name="by-keyboard")
    assert run.description == "typed, not clicked"
    assert page.locator("h1").inner_text() == "Run by-keyboard"
    context.close()


def test_choose_final_runs_by_keyboard(transactional_db, live_server, browser, library, demo_user):
    now = timezone.now()
    phase = Phase.objects.create(
        benchmark=library,
        name="Test",
        opens=now - timezone.timedelta(days=1),
        closes=now + timezone.timedelta(days=7),
        final_runs=2,
    )
    frame = library.submissions.first().results.get().per_need_frame()
    first, second = (
        data.add_run(library, demo_user, name, frame, phase=phase) for name in ("kb-1", "kb-2")
    )
    context = browser.new_context()
    log_in(context, live_server, demo_user)
    page = context.new_page()
    page.goto(f"{live_server.url}/benchmarks/library/final-runs/")
    press_tab_to(page, f"#priority-{second.pk}")
    page.keyboard.type("1")
    press_tab_to(page, f"#priority-{first.pk}")
    page.keyboard.type("2")
    press_tab_to(page, "button[type=submit]")
    page.keyboard.press("Space")
    page.wait_for_load_state("load")
    assert "Your team's final runs are saved." in page.get_by_role("status").inner_text()
    assert page.locator(f"#priority-{second.pk}").input_value() == "1"
    assert page.locator(f"#priority-{first.pk}").input_value() == "2"
    context.close()
