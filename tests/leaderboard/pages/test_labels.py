"""One name per measure on every page: the catalog's label (``nDCG@10``, ``AP``), never
trec_eval's column (``ndcg_cut_10``, ``map``) in the text a reader sees; the column
stays in URLs, option values and ``title`` attributes. Counts (``num_ret`` ...) are
offered in no menu, to rank, compare, test or plot by."""

from __future__ import annotations

import csv
import html
import io
import re

import pytest
from django.urls import reverse

from evaluation.measures import resolve, stored_measures
from leaderboard.models import Submission
from leaderboard.pipeline import health

# trec_eval's columns whose label differs (Rprec and bpref-like names are their own label)
RENAMED = [e.column for e in stored_measures() if e.label != e.column]


def visible_text(page: str) -> str:
    """What a reader sees: no scripts or styles, no tags (so no attributes), entities read."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def raw_columns(text: str) -> list[str]:
    return [c for c in RENAMED if re.search(rf"(?<![\w@.]){re.escape(c)}(?![\w@])", text)]


def test_the_scan_finds_a_raw_column_and_ignores_attributes():
    assert raw_columns(visible_text("<p>ranked by ndcg_cut_10</p>")) == ["ndcg_cut_10"]
    quiet = '<a href="?measure=ndcg_cut_10" title="map"><option value="P_10">P@10</option></a>'
    assert raw_columns(visible_text(quiet)) == []
    assert "map" in RENAMED and "num_rel_ret" in RENAMED and "Rprec" not in RENAMED


@pytest.fixture
def pages(client, demo):
    a, b = Submission.objects.filter(benchmark=demo).order_by("pk")[:2]
    health.compute(demo.pk, demo.current_judgments_id)
    client.force_login(a.participant)  # for "my runs" and the submit page
    ndcg = {"measure": "ndcg_cut_10"}
    return {
        "home": (reverse("home"), {}),
        "my runs": (reverse("my_submissions"), {}),
        "submit": (reverse("submit", args=["library"]), {}),
        "board": (reverse("leaderboard", args=["library"]), {}),
        "board by nDCG@10": (reverse("leaderboard", args=["library"]), ndcg),
        "board by RR": (reverse("leaderboard", args=["library"]), {"measure": "recip_rank"}),
        "comparison": (reverse("compare", args=["library", a.pk, b.pk]), ndcg),
        "significance": (reverse("significance", args=["library"]), {}),
        "health": (reverse("benchmark_health", args=["library"]), {}),
        "run": (reverse("submission", args=[a.pk]), {}),
        "results": (reverse("run_results", args=[a.pk]), ndcg),
    }


def test_no_page_of_the_demo_shows_a_raw_column_name(client, pages):
    for name, (url, query) in pages.items():
        response = client.get(url, query)
        assert response.status_code == 200, name
        text = visible_text(response.content.decode())
        found = raw_columns(text)
        assert found == [], f"{name} shows {found}"
        assert name not in ("my runs", "submit") or "AP" in text, name


def test_board_run_and_comparison_pages_name_measures_by_their_labels(client, demo):
    a, b = Submission.objects.filter(benchmark=demo).order_by("pk")[:2]
    board = client.get(reverse("leaderboard", args=["library"]), {"measure": "ndcg_cut_10"})
    board = board.content.decode()
    assert 'ranked by <strong><abbr title="ndcg_cut_10">nDCG@10</abbr></strong>' in board
    assert "Best nDCG@10 over time" in board  # the progress plot's title
    assert '<option value="ndcg_cut_10" selected>nDCG@10</option>' in board

    run = client.get(reverse("submission", args=[a.pk])).content.decode()
    table = run.split('class="sortable per-need"', 1)[1].split("</table>", 1)[0]
    heads = re.findall(r'<abbr title="[^"]+">([^<]+)</abbr>', table)
    assert heads == ["AP", "P@5", "P@10", "RR", "Rprec", "nDCG@10", "NumRel", "NumRelRet"]
    assert '<abbr title="num_ret">NumRet</abbr></th>' in run  # "All measures" table

    compare = client.get(reverse("compare", args=["library", a.pk, b.pk]), {"measure": "P@10"})
    compare = compare.content.decode()
    assert " P@10 on " in compare  # the verdict
    assert "Per-need difference in P@10" in compare and raw_columns(visible_text(compare)) == []


def test_csv_headers_use_labels_and_json_keeps_columns_with_labels(client, demo):
    a, b = Submission.objects.filter(benchmark=demo).order_by("pk")[:2]
    export = client.get(reverse("leaderboard_export", args=["library", "csv"]))
    head = next(csv.reader(io.StringIO(export.content.decode())))
    assert {"AP", "P@10", "nDCG@10", "RR@10", "NumRelRet"} <= set(head)
    assert not {"map", "P_10", "ndcg_cut_10", "num_rel_ret"} & set(head)
    assert all(resolve(h).label == h for h in head[head.index("p_vs_leader_holm") + 1 :])

    per_need = client.get(reverse("submission_csv", args=[a.pk])).content.decode()
    assert per_need.splitlines()[0].startswith("need_id,title,NumRet,NumRel,NumRelRet,AP,")
    results = client.get(reverse("run_results_csv", args=[a.pk]), {"measure": "ndcg_cut_10"})
    assert results.content.decode().splitlines()[0] == "need_id,nDCG@10,best,median,worst"

    data = client.get(reverse("leaderboard_export", args=["library", "json"])).json()
    assert "map" in data["runs"][0]["summary"] and data["labels"]["map"] == "AP"
    compared = client.get(reverse("compare_json", args=["library", a.pk, b.pk])).json()
    assert compared["measure"] == "map" and compared["labels"] == {"map": "AP"}


def test_counts_are_offered_nowhere_to_compare_test_or_plot_by(client, demo):
    a, b = Submission.objects.filter(benchmark=demo).order_by("pk")[:2]
    # a count among the tested measures (stored before the form refused it) stays unoffered
    type(demo).objects.filter(pk=demo.pk).update(significance_measures=["P_10", "num_rel_ret"])
    for url in (
        reverse("leaderboard", args=["library"]),
        reverse("compare", args=["library", a.pk, b.pk]),
        reverse("significance", args=["library"]),
        reverse("run_results", args=[a.pk]),
    ):
        options = re.findall(r'<option value="([^"]+)"', client.get(url).content.decode())
        assert "map" in options and "P_10" in options, url
        assert [m for m in options if m.startswith("num_")] == [], url

    compare = client.get(reverse("compare", args=["library", a.pk, b.pk]), {"measure": "num_ret"})
    text = compare.content.decode()
    assert compare.status_code == 200
    assert "“NumRet” is a count, not a score to compare runs on; showing AP." in text
    compared = client.get(
        reverse("compare_json", args=["library", a.pk, b.pk]), {"measure": "num_ret"}
    )  # a program asked for it: refused, as the API does, not answered on AP
    assert compared.status_code == 400 and "is a count" in compared.json()["error"]
    assert "map" in compared.json()["details"]["measures"]
    refused = client.get(reverse("run_results", args=[a.pk]), {"measure": "num_rel"})
    assert refused.status_code == 400
    assert "NumRel is a count" in refused.content.decode()
    api = client.get(f"/api/submissions/{a.pk}/results/", {"measure": "num_rel"})
    assert api.status_code == 400 and "is a count" in api.json()["error"]
    assert "num_rel" not in client.get(f"/api/submissions/{a.pk}/results/").json()["measures"]
