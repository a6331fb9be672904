"""One pair, two families: the leaderboard's "vs #1" column (Holm over the comparisons with
#1) and the all-pairs matrix (Holm over every pair) can disagree on a pair with #1. Each
page names its family and links to the other's verdict; the board's HTML escapes its "<".

Stored raw p-values with known Holm answers (n runs: the board's family n - 1, the
matrix's n(n - 1)/2):

- leader vs weak 0.000001, vs mid 0.01, vs r1 0.5, vs r2 0.6; every other pair 0.7 to 0.95.
- Board (4 comparisons): weak 4e-6 (< 0.0001), mid 0.01 x 3 = 0.03, both below #1.
- Matrix (10 pairs): weak 1e-5 (< 0.0001), mid 0.01 x 9 = 0.09, not significant.
"""

from __future__ import annotations

import itertools
import re
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from leaderboard.models import Comparison
from tests.leaderboard import pages_data as data
from tests.leaderboard.pages.test_pages import frame_of
from tests.leaderboard.pages_data import add_run, make_benchmark

demo_user = data.demo_user

pytestmark = pytest.mark.django_db

RAW_AGAINST_LEADER = {"weak": 0.000001, "mid": 0.01, "r1": 0.5, "r2": 0.6}


@pytest.fixture
def two_families(db, demo_user):
    benchmark = make_benchmark("families", {"n0": "", "n1": ""})
    values = {"leader": 0.9, "r1": 0.8, "r2": 0.7, "mid": 0.6, "weak": 0.5}
    runs = {
        name: add_run(benchmark, demo_user, name, frame_of({"map": [v, v], "P_10": [v, v - 0.1]}))
        for name, v in values.items()
    }
    others = iter([0.7, 0.75, 0.8, 0.85, 0.9, 0.95])
    for x, y in itertools.combinations(values, 2):
        a, b = sorted((runs[x], runs[y]), key=lambda run: run.pk)
        p = RAW_AGAINST_LEADER[y] if x == "leader" else next(others)
        Comparison.objects.create(
            submission_a=a, submission_b=b, judgments=benchmark.current_judgments,
            measure="map", n=2, mean_diff=0.1, wins=2, ties=0, losses=0, t_p=p,
            wilcoxon_p=0.5, randomization_p=0.5,
        )  # fmt: skip
    return benchmark, runs


class Page(HTMLParser):
    """Every start tag with its attributes and every text node, unescaped, as a browser
    reads them."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.texts: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def handle_data(self, data):
        self.texts.append(data)


def sig_cell(html: str, run) -> str:
    """The raw HTML of the run's "vs #1" cell on the board."""
    row = html.split(f'id="run-{run.pk}"', 1)[1].split("</tr>", 1)[0]
    return row.split('<td class="sig">', 1)[1].split("</td>", 1)[0]


def test_the_board_names_its_family_and_links_each_verdict_to_the_matrix(client, two_families):
    benchmark, runs = two_families
    html = client.get(reverse("leaderboard", args=["families"])).content.decode()
    key = html.split('id="board-key"', 1)[1].split("</p>", 1)[0]
    assert "Holm-corrected over the 4 comparisons with #1" in key
    assert "Holm-corrected over all 10 pairs of the top 5 runs" in key
    assert 'href="/benchmarks/families/significance/?measure=map" id="matrix-link"' in key

    leader = runs["leader"].pk
    for name, p_text, p_phrase in (
        ("mid", "p 0.0300", "p = 0.0300"),
        ("weak", "p &lt; 0.0001", "p < 0.0001"),
    ):
        cell = Page(sig_cell(html, runs[name]))
        (mark,) = [attrs for tag, attrs in cell.tags if tag == "span"]
        (link,) = [attrs for tag, attrs in cell.tags if tag == "a"]
        assert "significantly below #1" in mark["title"]
        assert mark["title"].endswith("Holm-corrected over the 4 comparisons with #1")
        assert link["href"] == (
            f"/benchmarks/families/significance/?measure=map#pair-{leader}-{runs[name].pk}"
        )
        assert "Holm-corrected over all 10 pairs of the top 5 runs" in link["title"]
        assert f">{p_text}</a>" in sig_cell(html, runs[name])
        assert mark["title"].startswith(f"significantly below #1: {p_phrase}, Holm")
    # P@10 is not tested for every pair (no matrix of it): tested here, linked to the pair's
    # comparison instead.
    by_p10 = client.get(reverse("leaderboard", args=["families"]), {"measure": "P_10"})
    key = by_p10.content.decode().split('id="board-key"', 1)[1].split("</p>", 1)[0]
    assert "Each p links to the pair's comparison." in key and "matrix-link" not in key
    (link,) = [a for t, a in Page(sig_cell(by_p10.content.decode(), runs["mid"])).tags if t == "a"]
    assert link["href"] == f"/benchmarks/families/compare/{leader}/{runs['mid'].pk}/?measure=P_10"
    # The linked cell is there, with the matrix's own verdict on the pair: not significant.
    matrix = client.get(reverse("significance", args=["families"])).content.decode()
    cell = matrix.split(f'id="pair-{leader}-{runs["mid"].pk}"', 1)[1].split("</td>", 1)[0]
    assert 'class="ns band-3"' in cell and ">0.090</a>" in cell


def test_the_matrix_names_its_family_and_gives_the_boards_verdict_on_pairs_with_1(
    client, two_families
):
    benchmark, runs = two_families
    html = client.get(reverse("significance", args=["families"])).content.decode()
    caption = html.split('<div class="matrix-legend">', 1)[1].split('<div tabindex="0"', 1)[0]
    assert "Holm-corrected over the 10 pairs" in caption
    assert "Holm-corrected over the 4 comparisons with #1" in caption
    assert 'href="/benchmarks/families/?measure=map#board-key"' in caption

    page = Page(html)
    leader, mid, weak = runs["leader"].pk, runs["mid"].pk, runs["weak"].pk
    for a, b in ((leader, mid), (mid, leader)):
        td = html.split(f'<td id="pair-{a}-{b}" class="ns band-3">', 1)[1].split("</td>", 1)[0]
        assert ">0.090</a>" in td  # the matrix's verdict: not significant
        assert f'href="/benchmarks/families/?measure=map&amp;page=1#run-{mid}"' in td
        # the board's: significantly below #1 (its p in the link's title)
        assert ">vs #1: below</a>" in td and "p = 0.0300, Holm-corrected over the 4" in td
    to_weak = [
        attrs
        for tag, attrs in page.tags
        if attrs.get("class") == "vs-leader" and attrs["href"].endswith(f"#run-{weak}")
    ]
    assert len(to_weak) == 2  # from the cells (#1, weak) and (weak, #1)
    assert to_weak[0]["title"] == (
        "On the leaderboard's “vs #1” column, weak is significantly below #1: "
        "p < 0.0001, Holm-corrected over the 4 comparisons with #1"
    )
    r1_cell = html.split(f'<td id="pair-{leader}-{runs["r1"].pk}"', 1)[1].split("</td>", 1)[0]
    assert ">vs #1: tied</a>" in r1_cell and "tied with #1: p = 1.0000" in r1_cell
    # A pair without #1 has no verdict on the board: no such link in its cell.
    r1, r2 = runs["r1"].pk, runs["r2"].pk
    td = html.split(f'<td id="pair-{r1}-{r2}"', 1)[1].split("</td>", 1)[0]
    assert "vs-leader" not in td
    assert html.count('class="vs-leader"') == 2 * 4  # #1's row and column


def test_the_boards_less_than_is_escaped_and_its_title_reads_well(client, two_families):
    benchmark, runs = two_families
    html = client.get(reverse("leaderboard", args=["families"])).content.decode()
    cell = sig_cell(html, runs["weak"])
    assert "p &lt; 0.0001" in cell and "p < 0.0001" not in cell
    assert "p = &lt;" not in cell and "p = <" not in html
    page = Page(html)
    titles = [attrs["title"] for _, attrs in page.tags if "title" in attrs]
    assert (
        "significantly below #1: p < 0.0001, Holm-corrected over the 4 comparisons with #1"
        in titles
    )
    assert not any("p = <" in title for title in titles)
    assert "p < 0.0001" in page.texts  # the cell's text, as a browser shows it
    # No raw "<" in the table's source outside its tags: neither in an attribute value
    # nor in a text node (there "p < 0.0001" would start a bogus tag).
    body = html.split('id="board"', 1)[1].split("</table>", 1)[0]
    for quoted in re.findall(r'="([^"]*)"', body):
        assert "<" not in quoted, quoted
    for text in re.split(r"<(?=[/!a-zA-Z])[^>]*>", body):
        assert "<" not in text, text


def test_a_p_just_below_alpha_is_never_shown_as_alpha():
    from leaderboard.pages.comparisons import _p_short
    from leaderboard.pages.shortcuts import fmt_p, p_phrase

    # the board's "vs #1" p and the comparison's tests: four decimals unless that says 0.0500
    assert (fmt_p(0.04996), fmt_p(0.05), fmt_p(0.0312)) == ("0.04996", "0.0500", "0.0312")
    assert p_phrase(0.04996) == "p = 0.04996"
    # the matrix cells: three decimals unless a significant cell would read 0.050
    assert (_p_short(0.0496), _p_short(0.0504), _p_short(0.012)) == ("0.0496", "0.050", "0.012")


def test_verdict_marks_are_named_in_words(client, two_families):
    """▼, ≈ and ▲ alone are read out as "black down-pointing triangle", "almost equal
    to": each is an image named by its verdict."""
    benchmark, runs = two_families
    html = client.get(reverse("leaderboard", args=["families"])).content.decode()
    for name, words in (("weak", "below #1"), ("r1", "tied with #1")):
        (mark,) = [attrs for tag, attrs in Page(sig_cell(html, runs[name])).tags if tag == "span"]
        assert (mark["role"], mark["aria-label"]) == ("img", words)
    matrix = client.get(reverse("significance", args=["families"])).content.decode()
    body = matrix.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    leader, weak = runs["leader"].pk, runs["weak"].pk
    better = body.split(f'id="pair-{leader}-{weak}"', 1)[1].split("</td>", 1)[0]
    worse = body.split(f'id="pair-{weak}-{leader}"', 1)[1].split("</td>", 1)[0]
    assert '<span role="img" aria-label="significantly better:">▲</span> &lt;0.001' in better
    assert '<span role="img" aria-label="significantly worse:">▼</span> &lt;0.001' in worse
    assert body.count("▲") + body.count("▼") == body.count('role="img"') == 2
