"""Every HTML page of the site through axe-core in Debian's Chromium, light and dark.

axe-core comes from the PyPI package ``axe-playwright-python`` (a dev dependency, so
``make test`` and ``.ci/run`` install it; nothing is committed and there is no npm step):
its bundled ``axe.min.js`` is added as an init script, which the Content-Security-Policy
does not apply to, and ``axe.run`` is called as a function (Playwright evaluates
expressions with eval, which the CSP refuses). Each page is checked at 1280 and 390 px,
in the light and the dark scheme, and saved as a full-page screenshot in
``artifacts/a11y/`` for a person to look at. The pages come from ``site_pages.PAGES``,
which ``test_every_named_page_is_checked`` holds to Django's URL patterns.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from leaderboard.models import ApiToken, Pool
from leaderboard.pipeline import health
from tests import ROOT
from tests.leaderboard import pages_data as data
from tests.leaderboard import site_pages
from tests.leaderboard.browsers import BROWSER_TESTS, log_in

ARTIFACTS = ROOT / "artifacts" / "a11y"
VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}

library, demo_user = data.library, data.demo_user

# The computed background of <body>'s root in each scheme: (r, g, b) summed below 150 is dark.
RGB = re.compile(r"rgba?\((\d+), (\d+), (\d+)")


def browser_test(test):
    """The browser tests' marks (Debian's Chromium, else skipped) on one test."""
    for mark in BROWSER_TESTS:
        test = mark(test)
    return test


def axe_script() -> Path:
    base = pytest.importorskip(
        "axe_playwright_python.base", reason="pip install axe-playwright-python (a dev extra)"
    )
    return Path(base.AXE_FILE_PATH)


def axe_violations(page) -> list[str]:
    """axe-core's violations on the page as it is now, one readable line per element."""
    result = page.evaluate(
        """async () => {
            const result = await axe.run(document, {resultTypes: ['violations']});
            return {violations: result.violations, passed: result.passes.length};
        }"""
    )
    assert result["passed"] > 10  # axe did run its rules (colour contrast, labels, ...)
    return [
        f"{rule['id']} ({rule['impact']}): {rule['help']} -- {node['target']} {node['html'][:160]}"
        for rule in result["violations"]
        for node in rule["nodes"]
    ]


@pytest.fixture
def site(library, demo_user) -> site_pages.Site:
    runs = sorted(library.submissions.values_list("pk", flat=True))
    frame = library.submissions.get(pk=runs[0]).results.get().per_need_frame()
    hidden = data.add_run(library, demo_user, "system-C", frame, is_hidden=True)
    health.compute(library.pk, library.current_judgments_id)  # the health page, filled
    token, _ = ApiToken.issue(demo_user, "laptop")
    library.organizers.add(demo_user)  # the pool page is the organizers'
    team = {"team": demo_user.username, "runs": 1, "contributed": 3, "unique": 3}
    Pool.objects.create(  # a built pool: its tables on the pool page and the summary
        benchmark=library,
        depth=10,
        runs_per_team=1,
        status=Pool.Status.BUILT,
        stats={
            "runs_offered": 2,
            "pairs": 3,
            "to_judge": 1,
            "needs": [{"need_id": "atwood", "pool": 3, "to_judge": 1}],
            "runs": [{"id": runs[0], "run": "system-A", "priority": 1, **team}],
            "teams": [team],
        },
    )
    return site_pages.Site(
        slug=library.slug,
        run_a=runs[0],
        run_b=runs[1],
        run_hidden=hidden.pk,
        token=token.pk,
        user=demo_user,
    )


def test_every_named_page_is_checked():
    """A named route that is neither a page in PAGES nor excluded (with its reason) fails
    here: add the new page to tests/leaderboard/site_pages.py."""
    assert site_pages.unlisted_routes() == []
    routes = {name for _, name in site_pages.named_routes()}
    assert set(site_pages.PAGES) | set(site_pages.NOT_PAGES) <= routes  # no stale names


def test_a_new_page_without_a_line_fails_the_check(monkeypatch):
    pages = dict(site_pages.PAGES)
    del pages["significance"]
    monkeypatch.setattr(site_pages, "PAGES", pages)
    assert site_pages.unlisted_routes() == ["benchmarks/<slug:slug>/significance/ (significance)"]


def visit(page, url: str) -> int:
    response = page.goto(url)
    page.wait_for_load_state("load")
    return response.status if response else 0


def other_pages(page, live_server) -> Iterator[tuple[str, int]]:
    """The pages no named route serves (site_pages.OTHER_PAGES), each reached in turn:
    (name, the status it came with), checked by its heading."""
    for name, path, heading in [
        ("404", "/no/such/page/", "Page not found"),
        ("403", "/test-errors/denied/", "You may not do this"),
        ("500", "/test-errors/boom/", "Something went wrong on our side"),
    ]:
        status = visit(page, live_server.url + path)
        assert page.locator("h1").inner_text() == heading
        yield name, status
    visit(page, f"{live_server.url}/accounts/login/")
    page.context.clear_cookies()
    page.fill("#id_username", "demo-owner")
    page.fill("#id_password", "pw-demo-123")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state("load")
    assert page.locator("h1").inner_text() == "This form could not be sent"
    yield "403_csrf", 403  # (a POST's answer: no response object to read it from)
    visit(page, f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "demo-owner")
    page.fill("#id_password", "wrong-password")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state("load")
    assert page.locator("h1").inner_text() == "Too many failed log-ins"
    yield "locked_out", 429


@browser_test
@pytest.mark.urls("tests.leaderboard.error_urls")
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_every_page_passes_axe(
    transactional_db, live_server, browser, site, demo_user, settings, size, scheme
):
    settings.AXES_FAILURE_LIMIT = 1  # the locked-out page after one failed log-in
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport=VIEWPORTS[size], color_scheme=scheme)
    context.add_init_script(path=str(axe_script()))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    failures: dict[str, list[str]] = {}

    def check(name: str, status: int) -> None:
        title = page.title()
        assert title.endswith("Ranked retrieval leaderboards"), (name, status, title)
        background = page.evaluate(
            "() => getComputedStyle(document.documentElement).backgroundColor"
        )
        shade = sum(int(c) for c in RGB.match(background).groups())
        assert (shade < 150) == (scheme == "dark"), (name, background)
        page.screenshot(path=str(ARTIFACTS / f"{name}-{size}-{scheme}.png"), full_page=True)
        if found := axe_violations(page):
            failures[name] = found

    for name, spec in site_pages.PAGES.items():
        if spec.login:
            log_in(context, live_server, demo_user)
        else:
            context.clear_cookies()
        status = visit(page, live_server.url + spec.path(site))
        assert status in (200, 400), (name, status, page.url)
        if spec.heading:
            assert page.locator("h1").inner_text() == spec.heading, name
        check(name, status)
    context.clear_cookies()
    checked = []
    for name, status in other_pages(page, live_server):
        checked.append(name)
        check(name, status)
    assert sorted(checked) == sorted(site_pages.OTHER_PAGES)
    context.close()
    assert errors == []
    assert failures == {}, "\n".join(f"{n}:\n  " + "\n  ".join(v) for n, v in failures.items())


@browser_test
def test_axe_reports_what_it_finds(transactional_db, live_server, browser):
    """The checker itself: an unlabelled input and grey-on-white text are reported."""
    context = browser.new_context()
    context.add_init_script(path=str(axe_script()))
    page = context.new_page()
    visit(page, f"{live_server.url}/")
    assert axe_violations(page) == []
    page.evaluate(
        """() => {
            const input = document.createElement('input');
            const faint = document.createElement('p');
            faint.textContent = 'faint';
            faint.style.color = '#bbb';
            document.querySelector('main').append(input, faint);
        }"""
    )
    found = {line.split(" ", 1)[0] for line in axe_violations(page)}
    assert {"label", "color-contrast"} <= found
    context.close()


@browser_test
def test_link_and_danger_buttons_keep_their_style(
    transactional_db, live_server, browser, participant
):
    """button.link and .danger against button[type=submit]: theirs must win."""
    context = browser.new_context()
    log_in(context, live_server, participant)
    page = context.new_page()
    visit(page, f"{live_server.url}/")
    style = page.locator("header.site button.link").evaluate(
        """button => {
            const s = getComputedStyle(button), link = getComputedStyle(document.querySelector('header.site ul a'));
            return {background: s.backgroundColor, line: s.textDecorationLine, border: s.borderTopWidth,
                    color: s.color, linkColor: link.color};
        }"""
    )
    assert style["background"] == "rgba(0, 0, 0, 0)"
    assert style["line"] == "underline" and style["border"] == "0px"
    assert style["color"] == style["linkColor"]
    # A danger button (revoking a token) is red, not the primary blue.
    token, _ = ApiToken.issue(participant, "laptop")
    visit(page, f"{live_server.url}/accounts/tokens/{token.pk}/revoke/")
    danger = page.get_by_role("button", name="Revoke").evaluate(
        """button => [getComputedStyle(button).backgroundColor,
                      getComputedStyle(document.documentElement).getPropertyValue('--bad')]"""
    )
    assert danger == ["rgb(164, 48, 27)", "#a4301b"]
    context.close()


# --- Invalid forms: aria-invalid on the bad fields, aria-describedby naming real ids ---

DANGLING = """() => [...document.querySelectorAll('[aria-describedby]')].flatMap(element =>
    element.getAttribute('aria-describedby').split(/\\s+/).filter(id => id && !document.getElementById(id))
        .map(id => `${element.id || element.tagName}: ${id}`))"""
INVALID = "() => [...document.querySelectorAll('[aria-invalid=true]')].map(element => element.id)"


def submitted(page, button: str) -> None:
    page.get_by_role("button", name=button).click()
    page.wait_for_load_state("load")


@browser_test
def test_invalid_forms_mark_and_describe_their_fields(
    transactional_db, live_server, browser, library, participant, demo_user
):
    context = browser.new_context()
    context.add_init_script(path=str(axe_script()))
    page = context.new_page()
    seen: dict[str, list[str]] = {}

    def check(name: str, invalid: list[str]) -> None:
        seen[name] = page.evaluate(INVALID)
        assert seen[name] == invalid, name
        assert page.evaluate(DANGLING) == [], name
        for field in invalid:  # the error is the field's description, in words
            described = page.locator(f"#{field}").get_attribute("aria-describedby").split()
            assert f"{field}_error" in described, name
            assert page.locator(f"#{field}_error").inner_text().startswith("Error:"), name
        assert page.get_by_role("alert").first.inner_text().startswith("Error:"), name
        assert axe_violations(page) == [], name
        page.screenshot(path=str(ARTIFACTS / f"invalid-{name}.png"), full_page=True)

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    visit(page, f"{live_server.url}/accounts/signup/")
    page.fill("#id_username", "carol")
    page.fill("#id_password1", "a-long-password-1")
    page.fill("#id_password2", "a-different-one-2")
    submitted(page, "Create account")
    check("signup", ["id_password2"])
    # static/js/forms.js: focus on the summary, and its link focuses the field it names.
    assert page.evaluate("() => document.activeElement.classList.contains('error-summary')")
    page.get_by_role("link", name="Password confirmation").click()
    assert page.evaluate("() => document.activeElement.id") == "id_password2"
    assert "id_password2_helptext" in page.locator("#id_password2").get_attribute(
        "aria-describedby"
    )

    visit(page, f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", "not-her-password")
    submitted(page, "Log in")
    check("login", [])  # a wrong pair belongs to neither field: the alert says it
    assert "Please enter a correct username and password" in page.get_by_role("alert").inner_text()

    log_in(context, live_server, participant)
    visit(page, f"{live_server.url}/benchmarks/library/submit/")
    submitted(page, "Upload and score")
    check("submit", ["id_file"])

    visit(page, f"{live_server.url}/accounts/tokens/")
    submitted(page, "Create token")
    check("tokens", ["id_name"])

    visit(page, f"{live_server.url}/accounts/profile/")
    page.fill("#id_join_code", "NOT-A-CODE")
    submitted(page, "Join")
    check("account", ["id_join_code"])

    visit(page, f"{live_server.url}/accounts/password_change/")
    page.fill("#id_old_password", "wrong")
    page.fill("#id_new_password1", "x")
    page.fill("#id_new_password2", "y")
    submitted(page, "Change password")
    check("password_change", ["id_old_password", "id_new_password2"])

    # Withdrawing without ticking the box (the browser would not send it: unrequire it).
    run = library.submissions.get(run_name="system-A")
    log_in(context, live_server, demo_user)
    visit(page, f"{live_server.url}/submissions/{run.pk}/withdraw/")
    page.evaluate("() => { document.getElementById('id_confirm').required = false; }")
    submitted(page, "Withdraw the run")
    check("run_withdraw", ["id_confirm"])
    context.close()


def test_every_scrolling_table_wrapper_takes_keyboard_focus():
    """A .table-wrap scrolls sideways on a phone: focusable (tabindex 0), its table can be
    scrolled with the arrow keys (axe: scrollable-region-focusable)."""
    templates = ROOT / "templates"
    wrappers = [
        (path.name, tag)
        for path in templates.rglob("*.html")
        for tag in re.findall(r"<div[^>]*class=\"table-wrap[^>]*>", path.read_text())
    ]
    assert len(wrappers) >= 10
    assert [w for w in wrappers if 'tabindex="0"' not in w[1]] == []


def test_every_table_is_named():
    """A screen reader lists a page's tables by name: each has a <caption> (its first
    child) or an aria-labelledby naming a heading (WCAG 1.3.1)."""
    templates = ROOT / "templates"
    tables = [
        (path.name, match)
        for path in templates.rglob("*.html")
        for match in re.findall(r"<table[^>]*>\s*(?:<caption|)", path.read_text())
    ]
    assert len(tables) >= 15
    assert [t for t in tables if "<caption" not in t[1] and "aria-label" not in t[1]] == []
    # The box a table scrolls in is a focus stop of its own: a screen reader announces it
    # as a region by the name of the table in it (its caption or heading, on the page).
    unnamed = []
    for path in templates.rglob("*.html"):
        text = path.read_text()
        for tag in re.findall(r"<div[^>]*class=\"table-wrap[^>]*>", text):
            attributes = dict(re.findall(r'([\w-]+)="([^"]*)"', tag))
            names = attributes.get("aria-labelledby", "").split()
            named = bool(attributes.get("aria-label", "").strip()) or (
                names != [] and all(f'id="{name}"' in text for name in names)
            )
            if attributes.get("role") != "region" or not named:
                unnamed.append((path.name, tag))
    assert unnamed == []
