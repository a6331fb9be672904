"""Links keep the reader's lens: every in-benchmark link and GET form of the pages that
read through a lens (board, run page, comparison, matrix, health, a run's results per
need) carries ``?judgments=`` and ``?needs=`` when the reader chose them, and neither
when they did not (clean URLs)."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import resolve, reverse

from leaderboard.models import BenchmarkHealth
from tests.leaderboard.split_data import split, user

__all__ = ["split"]

# The routes that read through a lens: a link to one of them keeps it.
LENS_ROUTES = {
    "leaderboard",
    "leaderboard_export",
    "significance",
    "benchmark_health",
    "submission",
    "submission_csv",
    "submission_plot",
    "compare",
    "compare_json",
    "compare_plot",
    "run_results",
    "run_results_csv",
    "run_results_json",
}
CHOSEN = {"judgments": "1", "needs": "private"}


class Links(HTMLParser):
    """The ``href`` of every ``<a>`` (in SVG too) but the lens line's choices (links to
    another lens) and every GET form's action with the names and values of its hidden
    fields."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.forms: list[tuple[str, dict[str, str]]] = []
        self.in_choices = 0  # depth of <span>s inside the lens line's choices

    def handle_starttag(self, tag: str, attrs) -> None:
        attrs = dict(attrs)
        if tag == "span" and (self.in_choices or attrs.get("class") == "lens-choices"):
            self.in_choices += 1
        elif tag == "a" and attrs.get("href") is not None and not self.in_choices:
            self.hrefs.append(attrs["href"])
        elif tag == "form" and attrs.get("method", "get").lower() == "get":
            self.forms.append((attrs.get("action") or "", {}))
        elif tag == "input" and attrs.get("type") == "hidden" and self.forms:
            self.forms[-1][1][attrs["name"]] = attrs.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "span" and self.in_choices:
            self.in_choices -= 1


def lens_links(page: str, body: str) -> list[tuple[str, dict[str, str]]]:
    """(link, its query) of each link and GET form of ``body`` that leads to a page
    reading through a lens; a relative "?..." link or form is the page itself."""
    parser = Links()
    parser.feed(body)
    found = []
    for href in parser.hrefs:
        parts = urlsplit(href)
        if parts.netloc or not (parts.path or parts.query):
            continue  # another site, or an anchor on this page
        if resolve(parts.path or page).url_name in LENS_ROUTES:
            found.append((href, {k: v[-1] for k, v in parse_qs(parts.query).items()}))
    for action, hidden in parser.forms:
        path = urlsplit(action).path or page
        if resolve(path).url_name in LENS_ROUTES | {"compare_pick"}:
            found.append((f"form {action or '(this page)'}", hidden))
    return found


def pages(benchmark) -> list[str]:
    alpha = benchmark.submissions.get(run_name="alpha").pk
    beta = benchmark.submissions.get(run_name="beta").pk
    slug = benchmark.slug
    return [
        reverse("leaderboard", args=[slug]),
        reverse("leaderboard", args=[slug]) + "?best=team&q=a",
        reverse("submission", args=[beta]),  # "compare with the leader"
        reverse("compare", args=[slug, alpha, beta]),
        reverse("significance", args=[slug]),
        reverse("benchmark_health", args=[slug]),
        reverse("run_results", args=[alpha]),
    ]


def with_health(benchmark) -> None:
    """Stored health on the private row, with a pool-bias table that links to runs."""
    alpha = benchmark.submissions.get(run_name="alpha")
    row = {"id": alpha.pk, "run": "alpha", "participant": "alice", "score": 0.8,
           "loo_score": 0.7, "drop": 0.1, "rank": 1, "loo_rank": 1, "judged": 1.0}  # fmt: skip
    for judgments in benchmark.judgments.all():
        BenchmarkHealth.objects.create(
            benchmark=benchmark,
            judgments=judgments,
            data={"needs": 2, "judged": 8, "runs": 2, "measures": {},
                  "pool_bias": {"depth": 10, "runs": [row], "participants": 2}},
            computed_at=benchmark.created,
        )  # fmt: skip


def test_every_link_keeps_the_lens_the_reader_chose(client, split):
    with_health(split)
    client.force_login(user("olga"))  # an organizer may ask for the private needs
    checked = 0
    for page in pages(split):
        sep = "&" if "?" in page else "?"
        response = client.get(f"{page}{sep}judgments=1&needs=private")
        assert response.status_code == 200, page
        links = lens_links(page.split("?")[0], response.content.decode())
        dropped = [href for href, query in links if not CHOSEN.items() <= query.items()]
        assert not dropped, (page, dropped)
        checked += len(links)
    assert checked > 50  # the pages have such links (so the check above can fail)


def test_the_default_lens_gives_clean_links(client, split):
    with_health(split)
    client.force_login(user("olga"))
    for page in pages(split):
        body = client.get(page).content.decode()
        links = lens_links(page.split("?")[0], body)
        assert links, page
        carried = [href for href, query in links if query.keys() & CHOSEN.keys()]
        assert not carried, (page, carried)


@pytest.mark.parametrize("who", ["anonymous", "olga"])
def test_the_run_page_compares_on_the_lens(client, split, who):
    """The run page's "compare with the leader" link keeps the lens, and the comparison
    it leads to is on that lens (the private needs' values for the organizer)."""
    if who == "olga":
        client.force_login(user("olga"))
    lens = "judgments=1&needs=private" if who == "olga" else "judgments=1"
    beta = split.submissions.get(run_name="beta").pk
    alpha = split.submissions.get(run_name="alpha").pk
    page = reverse("submission", args=[beta])
    body = client.get(f"{page}?{lens}").content.decode()
    target = reverse("compare", args=["split", beta, alpha])
    [href] = [h for h, _ in lens_links(page, body) if urlsplit(h).path == target]
    assert urlsplit(href).query == lens
    compared = client.get(href).content.decode()
    assert ("private needs (2 of 4)" in compared) == (who == "olga")
    assert "Judgments v1" in compared


def test_the_compare_form_keeps_the_lens(client, split):
    client.force_login(user("olga"))
    alpha = split.submissions.get(run_name="alpha").pk
    beta = split.submissions.get(run_name="beta").pk
    url = reverse("compare_pick", args=["split"])
    asked = {"a": alpha, "b": beta, "judgments": 1, "needs": "private"}
    response = client.get(url, asked)
    assert response.status_code == 302
    target = reverse("compare", args=["split", alpha, beta])
    assert response["Location"] == f"{target}?judgments=1&needs=private"
    assert client.get(url, {"a": alpha, "b": beta})["Location"] == target
    client.logout()
    refused = client.get(url, asked)  # the lens is checked before the redirect
    assert refused.status_code == 403


def choice_links(body: str) -> list[dict[str, str]]:
    """The query of each link of the lens line's choices (links to another lens)."""
    choices = body.split('class="lens-choices"', 1)[1].split("</span>", 1)[0]
    parser = Links()
    parser.feed(choices)
    return [{k: v[-1] for k, v in parse_qs(urlsplit(h).query).items()} for h in parser.hrefs]


def test_a_switch_of_lens_keeps_the_pages_measure_and_need(client, split):
    client.force_login(user("olga"))
    alpha = split.submissions.get(run_name="alpha").pk
    beta = split.submissions.get(run_name="beta").pk
    asked = {"measure": "P_5", "need": "n2"}
    for page, kept in [
        (reverse("compare", args=["split", alpha, beta]), asked),
        (reverse("leaderboard", args=["split"]), {"measure": "P_5", "best": "team"}),
        (reverse("submission", args=[alpha]), {"need": "n2"}),
    ]:
        body = client.get(page, {**kept, "needs": "private", "page": "2"}).content.decode()
        links = choice_links(body)
        assert len(links) >= 2, page  # the other needs to switch to
        for query in links:
            assert kept.items() <= query.items(), (page, query)
            assert "page" not in query, (page, query)
        assert "public" in {q.get("needs") for q in links}, (page, links)
