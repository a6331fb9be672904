"""The comparison in one sentence (``reading.comparisons.verdict``): on the comparison
page, in its JSON (download and API) and in ``rrl compare``; and the all-pairs matrix
as a heatmap of corrected p (``reading.pairs.p_band``)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from leaderboard.models import Submission
from leaderboard.reading.comparisons import verdict
from leaderboard.reading.pairs import p_band
from tests.leaderboard.pages_data import demo_user, library

__all__ = ["demo_user", "library"]


def test_the_run_ahead_comes_first_with_its_needs_and_the_t_test():
    test = {"n": 30, "mean_diff": 0.0243, "wins": 20, "ties": 2, "losses": 8, "t_p": 0.6213}
    assert verdict("colbertv2", "monot5-3b", "ndcg_cut_10", test) == (
        "colbertv2 is ahead of monot5-3b by 0.0243 nDCG@10 on 20 of 30 needs; "
        "the difference is not significant (t-test p = 0.62)."
    )
    # a behind b: b is named first, with the needs b wins
    turned = {**test, "mean_diff": -0.0243, "wins": 8, "losses": 20, "t_p": 0.0312}
    assert verdict("monot5-3b", "colbertv2", "map", turned) == (
        "colbertv2 is ahead of monot5-3b by 0.0243 AP on 20 of 30 needs; "
        "the difference is significant (t-test p = 0.0312)."
    )


@pytest.mark.parametrize(
    ("p", "said"),
    [
        (0.0499, "significant (t-test p = 0.0499)"),
        (0.04996, "significant (t-test p = 0.04996)"),  # not "= 0.0500"
        (0.05, "not significant (t-test p = 0.0500)"),
        (0.00001, "significant (t-test p < 0.0001)"),
    ],
)
def test_a_p_near_alpha_is_not_rounded_onto_it(p, said):
    test = {"n": 10, "mean_diff": 0.1, "wins": 7, "ties": 0, "losses": 3, "t_p": p}
    assert verdict("a", "b", "P_10", test).endswith(f"the difference is {said}.")


def test_equal_means_and_uncomputable_p_are_said_as_such():
    same = {"n": 4, "mean_diff": 0.0, "wins": 2, "ties": 0, "losses": 2, "t_p": 1.0}
    assert verdict("a", "b", "map", same) == (
        "a and b have the same mean AP over 4 needs (a ahead on 2, b on 2); "
        "the difference is not significant (t-test p = 1.00)."
    )
    flat = {"n": 3, "mean_diff": 0.1, "wins": 3, "ties": 0, "losses": 0, "t_p": float("nan")}
    assert verdict("a", "b", "map", flat).endswith(
        "the t-test cannot be computed (the same difference on every need)."
    )
    one = {"n": 1, "mean_diff": 0.2, "wins": 1, "ties": 0, "losses": 0, "t_p": float("nan")}
    assert verdict("a", "b", "map", one) == (
        "a is ahead of b by 0.2000 AP on 1 of 1 need; "
        "the t-test cannot be computed (one need has no spread)."
    )
    assert verdict("a", "b", "map", {"n": 0}) == "a and b share no judged need to compare on AP."


def test_the_page_the_download_and_the_api_say_the_same_sentence(client, library):
    a, b = (Submission.objects.get(run_name=n) for n in ("system-B", "system-A"))
    page = client.get(reverse("compare", args=["library", a.pk, b.pk])).content.decode()
    sentence = page.split('<p class="verdict" id="verdict">', 1)[1].split("</p>", 1)[0]
    assert sentence.startswith("system-B is ahead of system-A by ")
    assert " AP on " in sentence and "of 4 needs; the difference is" in sentence
    download = client.get(reverse("compare_json", args=["library", a.pk, b.pk]))
    assert json.loads(download.content)["verdict"] == sentence
    api = client.get(f"/api/benchmarks/library/compare/{a.pk}/{b.pk}/")
    assert api.status_code == 200 and api.json()["verdict"] == sentence


def test_p_bands_of_the_heatmap():
    assert [p_band(p) for p in (0.0005, 0.001, 0.009, 0.03, 0.05, 0.9, None)] == [
        0, 1, 1, 2, 3, 3, None,
    ]  # fmt: skip
    assert p_band(float("nan")) == 3


def test_matrix_cells_are_banded_marked_and_linked(client, library):
    a, b = sorted(Submission.objects.filter(benchmark=library).values_list("pk", flat=True))
    html = client.get(reverse("significance", args=["library"])).content.decode()
    cell = html.split(f'<td id="pair-{a}-{b}" class="', 1)[1].split("</td>", 1)[0]
    classes = cell.split('"', 1)[0].split()
    assert classes[0] in ("better", "worse", "ns") and classes[1].startswith("band-")
    assert f'href="/benchmarks/library/compare/{a}/{b}/?measure=map"' in cell
    # the key is outside the scroll box, the table named by it
    legend, box = html.split('<div class="matrix-legend">', 1)[1].split('id="matrix-wrap"', 1)
    assert 'id="matrix-caption"' in legend and 'id="matrix-key"' in legend
    assert 'aria-labelledby="matrix-caption"' in box and "<caption" not in box
