"""The plots: the comparison's default measure, needs linked to their figure, SVG files.

The plots' sizes and colours in a real browser are in ``test_browser_plots.py``.
"""

from __future__ import annotations

import re
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pytest
import resvg_py
from django.urls import reverse

from leaderboard.models import Benchmark, Submission
from leaderboard.pages.pair_plots import BARS_UP_TO, DOTS_UP_TO, difference_bars, scatter
from leaderboard.pages.plots import FONT_SIZE, need_figure
from tests.leaderboard import pages_data as data

library, demo_user, reader = data.library, data.demo_user, data.reader
pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::UserWarning")]

SVG = "{http://www.w3.org/2000/svg}"
NEEDS = ["cs-foundations", "stage-plays", "atwood", "russian-novels"]


def runs() -> tuple[Submission, Submission]:
    return Submission.objects.get(run_name="system-A"), Submission.objects.get(run_name="system-B")


def compare_html(client, **params) -> str:
    a, b = runs()
    response = client.get(reverse("compare", args=["library", a.pk, b.pk]), params)
    assert response.status_code == 200
    return response.content.decode()


def plot(html: str, kind: str) -> str:
    return re.search(rf'<svg class="plot" data-plot="{kind}".*?</svg>', html, re.S).group(0)


# --- The comparison's measure -------------------------------------------------------


def test_comparison_defaults_to_the_primary_measure(client, library):
    Benchmark.objects.filter(pk=library.pk).update(primary_measure="P_10")
    html = compare_html(client)
    assert '<option value="P_10" selected>' in html
    assert "P@10 over 4 needs" in html
    assert "Per-need difference in P@10" in html
    # the JSON download of the same comparison, too
    a, b = runs()
    body = client.get(reverse("compare_json", args=["library", a.pk, b.pk])).json()
    assert body["measure"] == "P_10"
    # a measure asked for still wins, and a missing one falls back to the primary
    assert '<option value="map" selected>' in compare_html(client, measure="map")
    html = compare_html(client, measure="ndcg_cut_20")
    assert "showing P@10" in html and '<option value="P_10" selected>' in html


# --- Needs linked to their figure ----------------------------------------------------


def test_run_page_links_each_need_to_its_figure(client, library):
    a, _ = runs()
    html = client.get(reverse("submission", args=[a.pk])).content.decode()
    table = html.split('class="sortable per-need"', 1)[1]
    for need in NEEDS:
        assert f'<a href="?need={need}#need-figure">{need}</a>' in table
    assert '<figure id="need-figure"' in html
    assert '<form method="get" action="#need-figure"' in html


def test_comparison_bars_dots_and_rows_link_to_the_need_figure(client, library):
    a, b = runs()
    html = compare_html(client)
    base = ""  # relative to the page
    for kind in ("bars", "scatter"):
        links = re.findall(
            r'<a class="need" href="([^"]+)"><title>([^<]+)</title>', plot(html, kind)
        )
        # (the table's order, which is also the bars' order by difference here)
        assert [href for href, _ in links] == [
            f"{base}?measure=map&amp;need={n}#need-figure" for n in NEEDS
        ]
        assert [title.split(":")[0] for _, title in links] == NEEDS
    # Bars sorted by a - b: A's one win first, then the losses, largest last.
    bars = plot(html, "bars")
    titles = re.findall(r"<title>([^<]+)</title>", bars)
    assert titles == [
        "cs-foundations: +0.1144",
        "stage-plays: -0.0133",
        "atwood: -0.1667",
        "russian-novels: -1.0000",
    ]
    # With four needs each bar has room for its visible label.
    assert re.findall(r'<text class="need-label"[^>]*>([^<]+)</text>', bars) == [
        "cs-foundations", "stage-plays", "atwood", "russian-novels",
    ]  # fmt: skip
    # The per-need table's need ids link the same way.
    table = html.split('class="sortable per-need"', 1)[1]
    assert f'<a href="{base}?measure=map&amp;need=atwood#need-figure">atwood</a>' in table


def test_comparison_shows_the_chosen_need(client, library):
    html = compare_html(client)
    assert "Precision-recall for need russian-novels" in html  # they differ most: 0 vs 1
    assert "where the runs differ most" in html
    html = compare_html(client, need="atwood")
    figure = plot(html, "need")
    assert "Precision-recall for need atwood: system-A: AP 0.833, system-B: AP 1.000" in figure
    assert '<figure id="need-figure"' in html and "where the runs differ most" not in html
    assert '<option value="atwood" selected>' in html
    html = compare_html(client, need="no-such-need")
    assert "No need “no-such-need” among these runs" in html
    assert "Precision-recall for need russian-novels" in html


def test_many_needs_are_one_path_without_links():
    n = max(BARS_UP_TO, DOTS_UP_TO) + 1
    needs = [f"q{i}" for i in range(n)]
    values = np.linspace(0, 1, n)
    for svg in (
        difference_bars(values - 0.5, needs, "AP", "a", "b", lambda need: f"?need={need}"),
        scatter(values, values[::-1], needs, "AP", "a", "b", lambda need: f"?need={need}"),
    ):
        assert "<a " not in svg and svg.count("<path") >= 1
        ElementTree.fromstring(str(svg))


# --- SVG files -----------------------------------------------------------------------


def check_self_contained(text: str) -> ElementTree.Element:
    """Well-formed, and carrying its own fonts and colours: no class the page styles,
    no custom property; text in currentColor at FONT_SIZE, never smaller."""
    root = ElementTree.fromstring(text.encode())
    assert root.tag == f"{SVG}svg"
    assert root.get("font-size") == str(FONT_SIZE) and "sans-serif" in root.get("font-family")
    assert root.get("fill") == "currentColor"
    assert "var(--" not in text
    for element in root.iter(f"{SVG}text"):
        assert element.get("font-size") is None and element.get("fill") is None
    return root


@pytest.mark.parametrize("name", ["bars", "scatter", "need", "eleven"])
def test_comparison_plots_download_as_svg_files(client, library, name):
    a, b = runs()
    url = reverse("compare_plot", args=["library", a.pk, b.pk, name, "svg"])
    response = client.get(url, {"measure": "P_10", "need": "atwood"})
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml; charset=utf-8"
    assert "Content-Disposition" not in response
    response = client.get(url, {"measure": "P_10", "need": "atwood", "download": "1"})
    suffix = "-atwood" if name == "need" else ""
    assert response["Content-Disposition"] == (
        f'attachment; filename="system-a-vs-system-b-{name}-p_10{suffix}.svg"'
    )
    text = response.content.decode()
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<svg')
    root = check_self_contained(text)
    title = root.find(f"{SVG}title").text
    if name in ("bars", "scatter"):
        assert "P@10" in title
        # links in a file of its own are absolute, to the comparison's need figure
        hrefs = [el.get("href") for el in root.iter(f"{SVG}a")]
        assert len(hrefs) == 4 and all(h.startswith("http://testserver/") for h in hrefs)
    if name == "need":
        assert title.startswith("Precision-recall for need atwood")
    # the page links each plot's download
    html = compare_html(client, measure="P_10", need="atwood")
    assert f'href="{url}?measure=P_10&amp;download=1' in html


@pytest.mark.parametrize("name", ["need", "eleven"])
def test_run_plots_download_as_svg_files(client, library, name):
    a, _ = runs()
    url = reverse("submission_plot", args=[a.pk, name, "svg"])
    response = client.get(url, {"need": "cs-foundations", "download": "1"})
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml; charset=utf-8"
    expected = "system-a-need-cs-foundations" if name == "need" else "system-a-11-point"
    assert response["Content-Disposition"] == f'attachment; filename="{expected}.svg"'
    root = check_self_contained(response.content.decode())
    if name == "need":
        assert "AP 0.473" in root.find(f"{SVG}title").text
    html = client.get(reverse("submission", args=[a.pk]), {"need": "cs-foundations"})
    assert f'href="{url}?' in html.content.decode()


def test_plot_files_answer_bad_requests_with_404s(client, library):
    a, b = runs()

    def status(view: str, *args) -> int:
        return client.get(reverse(view, args=args)).status_code

    assert status("compare_plot", "library", a.pk, b.pk, "pie", "svg") == 404
    assert status("compare_plot", "library", a.pk, b.pk, "bars", "gif") == 404
    assert status("submission_plot", a.pk, "pie", "svg") == 404
    assert status("submission_plot", a.pk, "need", "gif") == 404
    assert status("compare_plot", "library", a.pk, a.pk, "bars", "svg") == 400
    Submission.objects.filter(pk=b.pk).update(is_hidden=True)
    assert status("compare_plot", "library", a.pk, b.pk, "bars", "svg") == 404
    assert status("submission_plot", b.pk, "need", "png") == 404


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.mark.parametrize("page", ["run", "compare"])
def test_plots_download_as_png_with_their_text(client, library, page):
    a, b = runs()
    if page == "run":
        url = reverse("submission_plot", args=[a.pk, "need", "png"])
        svg_url = reverse("submission_plot", args=[a.pk, "need", "svg"])
        expected = "system-a-need-cs-foundations.png"
    else:
        url = reverse("compare_plot", args=["library", a.pk, b.pk, "bars", "png"])
        svg_url = reverse("compare_plot", args=["library", a.pk, b.pk, "bars", "svg"])
        expected = "system-a-vs-system-b-bars-map.png"
    response = client.get(url, {"need": "cs-foundations", "download": "1"})
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert response["Content-Disposition"] == f'attachment; filename="{expected}"'
    assert png_size(response.content) == (2 * 400, 2 * 300)  # twice the view box
    # The text is drawn (a machine without any font would draw none): the same SVG
    # without its text elements gives another picture.
    svg = client.get(svg_url, {"need": "cs-foundations"}).content.decode()
    textless = re.sub(r"<text[^>]*>.*?</text>", "", svg.split("\n", 1)[1])
    assert resvg_py.svg_to_bytes(svg_string=textless, background="#ffffff", zoom=2) != (
        response.content
    )
    html = client.get(
        reverse("submission", args=[a.pk])
        if page == "run"
        else reverse("compare", args=["library", a.pk, b.pk])
    ).content.decode()
    assert f'href="{url}?' in html and ">Download PNG<" in html


DEJAVU = Path("/usr/share/fonts/truetype/dejavu")


@pytest.mark.skipif(not DEJAVU.is_dir(), reason="needs Debian's fonts-dejavu-core")
def test_png_text_needs_only_the_docker_images_font():
    """The Docker image has DejaVu Sans only (fonts-dejavu-core): the plots name it, so
    resvg draws their text with it (it maps no generic family through fontconfig)."""
    svg = str(need_figure([1, 2, 6], 15, "cs-foundations"))
    textless = re.sub(r"<text[^>]*>.*?</text>", "", svg)
    only_dejavu = {"skip_system_fonts": True, "font_dirs": [str(DEJAVU)]}
    assert resvg_py.svg_to_bytes(svg_string=svg, **only_dejavu) != resvg_py.svg_to_bytes(
        svg_string=textless, **only_dejavu
    )


def test_one_needs_ranks_equal_the_grouped_ones(library):
    """The pages read one need's ranks (``need_ranks``) instead of grouping every need."""
    for run in runs():
        result = run.results.get()
        ranks, num_rel = result.relevant_ranks()
        assert result.num_relevant() == num_rel and len(num_rel) == 4
        for need in num_rel:
            got, r = result.need_ranks(need)
            assert r == num_rel[need] and got.tolist() == ranks[need].tolist()
        assert result.need_ranks("no-such-need") is None
