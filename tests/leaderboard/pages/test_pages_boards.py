"""The leaderboard: measure menus (grouped, natural order, no counts to rank
by, change on select), pages and search with global ranks, the leader and the reader's
own runs always findable."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from leaderboard.models import Submission
from leaderboard.pages.menus import measure_groups
from tests.leaderboard import pages_data as data
from tests.leaderboard.pages.test_pages import frame_of, ranks, run_names
from tests.leaderboard.pages_data import add_run, make_benchmark

library, demo_user, reader = data.library, data.demo_user, data.reader
pytestmark = pytest.mark.django_db

NEEDS = {f"n{i}": f"need {i}" for i in range(4)}


def menu(html: str, select_id: str = "measure") -> list[tuple[str, list[str]]]:
    """(optgroup label, [option values]) of a <select>, in page order."""
    select = html.split(f'<select id="{select_id}"', 1)[1].split("</select>", 1)[0]
    return [
        (label, re.findall(r'<option value="([^"]+)"', body))
        for label, body in re.findall(r'<optgroup label="([^"]+)">(.*?)</optgroup>', select)
    ]


@pytest.fixture
def wide_board(db, demo_user):
    """One run with measures from every group, including counts and three P cutoffs."""
    benchmark = make_benchmark("wide", NEEDS)
    benchmark.shown_measures = ["P_100", "P_5", "num_rel_ret"]
    benchmark.save()
    values = [0.1, 0.2, 0.3, 0.4]
    columns = ["map", "P_5", "P_10", "P_100", "recall_10", "ndcg_cut_10", "num_ret"]
    frame = frame_of({m: values for m in columns} | {"num_rel_ret": [1, 2, 3, 4]})
    add_run(benchmark, demo_user, "only", frame)
    return benchmark


def test_rank_by_menu_groups_sorts_naturally_and_leaves_out_counts(client, wide_board):
    html = client.get(reverse("leaderboard", args=["wide"])).content.decode()
    groups = menu(html)
    assert [label for label, _ in groups] == [
        "Primary and shown",
        "More measures: precision",
        "More measures: recall",
        "More measures: graded",
    ]
    # the primary, then the shown ones in the organizer's order (the count left out)
    assert groups[0][1] == ["map", "P_100", "P_5"]
    assert groups[1][1] == ["P_10"]
    options = [value for _, values in groups for value in values]
    assert "num_ret" not in options and "num_rel_ret" not in options
    # A count configured as a column is still shown, but its heading is no ranking link.
    assert '<abbr title="num_rel_ret: a count, not a ranking">' in html
    assert '?measure=num_rel_ret"' not in html
    assert 'href="/benchmarks/wide/?measure=P_100"' in html


def test_menus_change_on_select_and_keep_a_button(client, wide_board, library):
    a, b = (Submission.objects.get(run_name=n).pk for n in ("system-A", "system-B"))
    pages = [
        reverse("leaderboard", args=["wide"]),
        reverse("significance", args=["library"]),
        reverse("compare", args=["library", a, b]),
    ]
    for url in pages:
        html = client.get(url).content.decode()
        assert re.search(r'<select id="measure" name="measure" data-autosubmit', html), url
        assert '<script src="/static/js/autosubmit.js" defer></script>' in html, url
        form = html.split('<select id="measure"', 1)[1].split("</form>", 1)[0]
        assert '<button type="submit"' in form, url  # for readers without JavaScript
        assert "<optgroup" in form, url


def test_no_menu_offers_a_count_to_compare_test_or_rank_by(client, library):
    a, b = (Submission.objects.get(run_name=n).pk for n in ("system-A", "system-B"))
    html = client.get(reverse("compare", args=["library", a, b])).content.decode()
    groups = dict(menu(html))
    # the library's primary and shown measures first, in the organizer's order (those
    # both runs have per-need values of: this fixture stored no nDCG)
    assert groups["Primary and shown"] == ["map", "P_5", "P_10", "recip_rank", "Rprec"]
    # per-need counts are numbers, but no score to test two runs on
    assert "More measures: counts" not in groups
    assert not [m for options in groups.values() for m in options if m.startswith("num_")]
    precision = groups["More measures: precision"]
    levels = [m for m in precision if m.startswith("iprec")]
    assert levels == [f"iprec_at_recall_{i / 10:.2f}" for i in range(11)]
    library.significance_measures = ["map", "num_rel_ret"]
    library.save()
    html = client.get(reverse("significance", args=["library"])).content.decode()
    assert "num_rel_ret" not in dict(menu(html)).get("More measures: counts", [])
    response = client.get(reverse("significance", args=["library"]), {"measure": "num_rel_ret"})
    assert response.status_code == 200 and "All pairs are tested on" in response.content.decode()


def test_measure_groups_come_from_the_catalog():
    groups = measure_groups(["P_100", "ndcg_cut_10", "P_5", "num_q", "map", "xyz", "P_10"])
    assert groups == [
        ("precision", [("P_5", "P@5"), ("P_10", "P@10"), ("P_100", "P@100")]),
        ("rank-based", [("map", "AP")]),
        ("graded", [("ndcg_cut_10", "nDCG@10")]),
        ("other", [("xyz", "xyz")]),
    ]
    assert measure_groups(["num_q", "num_ret", "num_nonrel_judged_ret"]) == []
    first = measure_groups(["P_10", "map", "P_5", "num_ret"], first=["P_10", "num_ret", "xyz"])
    assert first == [
        ("Primary and shown", [("P_10", "P@10")]),
        ("More measures: precision", [("P_5", "P@5")]),
        ("More measures: rank-based", [("map", "AP")]),
    ]


# --- pages, search, the leader and your runs ------------------------------------------


@pytest.fixture
def big_board(db, demo_user, reader):
    """120 runs with distinct MAP (run-000 best); the reader owns run-074 and run-110."""
    benchmark = make_benchmark("big", NEEDS)
    for i in range(120):
        value = 0.9 - i * 0.005
        owner = reader if i in (74, 110) else demo_user
        add_run(
            benchmark,
            owner,
            f"run-{i:03d}",
            frame_of({"map": [value] * 4, "P_10": [value] * 4}),
            description="dense retrieval" if i % 10 == 3 else "bm25 baseline",
        )
    return benchmark


def test_pages_of_fifty_with_global_ranks(client, big_board):
    url = reverse("leaderboard", args=["big"])
    html = client.get(url).content.decode()
    assert run_names(html) == [f"run-{i:03d}" for i in range(50)]
    assert ranks(html) == [str(i) for i in range(1, 51)]
    assert 'aria-current="page" class="current">1<' in html and 'href="?page=2"' in html
    html = client.get(url, {"page": 3}).content.decode()
    assert ranks(html) == [str(i) for i in range(101, 121)]
    assert "runs 101–120 of 120" in html
    # Out of range or not a number: the last or the first page, never an error.
    assert ranks(client.get(url, {"page": 999}).content.decode())[-1] == "120"
    assert ranks(client.get(url, {"page": "x"}).content.decode())[0] == "1"
    # Another measure: page links keep it.
    html = client.get(url, {"measure": "P_10", "page": 2}).content.decode()
    assert 'href="?measure=P_10&amp;page=3"' in html


def test_the_leader_is_pinned_when_not_on_the_page(client, big_board):
    url = reverse("leaderboard", args=["big"])
    assert 'class="pinned"' not in client.get(url).content.decode()
    html = client.get(url, {"page": 2}).content.decode()
    pinned = html.split('<tbody class="pinned">', 1)[1].split("</tbody>", 1)[0]
    assert ">run-000</a>" in pinned and '<td class="num rank">1</td>' in pinned
    assert "#1 is not among the runs below" in html
    assert ranks(html)[0] == "51"  # the page's own rows start after the pinned one


def test_search_keeps_global_ranks_and_pins_the_leader(client, big_board):
    url = reverse("leaderboard", args=["big"])
    html = client.get(url, {"q": "dense"}).content.decode()  # description
    names = [f"run-{i:03d}" for i in range(120) if i % 10 == 3]
    pinned = html.split('<tbody class="pinned">', 1)[1].split("</tbody>", 1)[0]
    assert ">run-000</a>" in pinned
    body = html.split('<tbody class="pinned">', 1)[1].split("</tbody>", 2)[1]
    assert re.findall(r">(run-\d+)</a>", body) == names
    assert ranks(html.replace('<tbody class="pinned">', "<tbody-pinned>")) == [
        str(i + 1) for i in range(120) if i % 10 == 3
    ]
    assert "12 of 120 runs match “dense”" in html
    # Run name and participant, case ignored, every word.
    assert run_names(client.get(url, {"q": "RUN-007"}).content.decode())[-1] == "run-007"
    html = client.get(url, {"q": "reader run-11"}).content.decode()
    assert re.findall(r'id="run-\d+"[^>]*>.*?>(run-\d+)</a>', html) == ["run-110"]
    html = client.get(url, {"q": "nothing like this"}).content.decode()
    assert "No run matches “nothing like this”" in html
    assert client.get(url, {"q": "x" * 5000}).status_code == 200


def test_your_runs_link_to_their_pages(client, big_board, reader):
    url = reverse("leaderboard", args=["big"])
    assert 'id="your-runs"' not in client.get(url).content.decode()
    client.force_login(reader)
    html = client.get(url).content.decode()
    strip = html.split('id="your-runs"', 1)[1].split("</p>", 1)[0]
    ids = dict(Submission.objects.filter(benchmark=big_board).values_list("run_name", "pk"))
    assert f'href="?page=2#run-{ids["run-074"]}">run-074</a> (#75, page 2)' in strip
    assert f'href="?page=3#run-{ids["run-110"]}">run-110</a> (#111, page 3)' in strip
    page = client.get(url, {"page": 2}).content.decode()
    assert f'<tr id="run-{ids["run-074"]}"' in page


def test_a_page_costs_the_same_queries_for_many_runs(
    client, big_board, reader, django_assert_max_num_queries
):
    url = reverse("leaderboard", args=["big"])
    client.force_login(reader)
    # session, user, benchmark, rows, ... + tests, + the lens's versions to choose from,
    # + whether the reader organises it (the summary's link), + the validators (three)
    with django_assert_max_num_queries(14):
        response = client.get(url, {"page": 2, "q": "run"})
    assert len(run_names(response.content.decode())) == 51  # 50 + the pinned leader


# --- Markdown: description, rules, data ----------------------------------------------

HOSTILE = """# Rules

Only **one** run a day; see [the site](https://example.org/rules) and `trec_eval -c`.

- manual runs are *marked*
- 1. numbered

```
python -m evaluation qrels run
```

[click](javascript:alert(1)) <a href="JaVaScRiPt:alert(2)">two</a>
<script>alert(3)</script><img src=x onerror="alert(4)">
<p onclick="alert(5)" style="color:red" onmouseover="alert(6)">para</p>
<iframe src="https://evil.example"></iframe>
"""


def test_description_rules_and_data_render_markdown_safely(client, library):
    library.description = "A **small** benchmark: [seed](https://example.org/seed)."
    library.rules = HOSTILE
    library.data_description = "## Needs\n\n| need | relevant |\n|---|---|\n| atwood | 2 |\n"
    library.save()
    html = client.get(reverse("leaderboard", args=["library"])).content.decode()
    main = html.split('<main id="main"', 1)[1].split("</main>", 1)[0]
    assert '<div class="lede markdown"><p>A <strong>small</strong> benchmark' in main
    rules = main.split('<h2 id="rules-h">Rules</h2>', 1)[1].split("</section>", 1)[0]
    # Ordinary Markdown renders, headings below the page's own.
    assert "<h3>Rules</h3>" in rules
    assert "<strong>one</strong>" in rules and "<code>trec_eval -c</code>" in rules
    assert '<a href="https://example.org/rules" rel="noopener noreferrer nofollow">' in rules
    assert "<li>manual runs are <em>marked</em></li>" in rules
    assert "<pre><code>python -m evaluation qrels run\n</code></pre>" in rules
    # Nothing that runs: no script, no on* attribute, no javascript: link, no iframe.
    lowered = main.lower()
    for bad in ("<script", "onerror", "onclick", "onmouseover", "javascript:alert(2)",
                "<iframe", "style=", 'href="javascript'):  # fmt: skip
        assert bad not in lowered, bad
    assert "alert(3)" not in main  # the script's content goes too
    assert "<p>para</p>" in rules
    data = main.split('<h2 id="data-h">Data</h2>', 1)[1].split("</section>", 1)[0]
    assert "<h4>Needs</h4>" in data and "<td>atwood</td>" in data
    assert 'href="#rules-h">Rules</a>' in main and 'href="#data-h">Data</a>' in main
    # The list of benchmarks shows the description as plain text.
    home = client.get(reverse("home")).content.decode()
    assert "A small benchmark: seed." in home and "**" not in home


def test_no_rules_no_section(client, library):
    html = client.get(reverse("leaderboard", args=["library"])).content.decode()
    assert 'id="rules-h"' not in html and 'id="data-h"' not in html
