"""The comparison page, its JSON, and the all-pairs significance matrix."""

from __future__ import annotations

import json
import re
from html import unescape

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats

from leaderboard.models import Comparison, Submission
from tests.leaderboard import pages_data as data
from tests.leaderboard.pages_data import add_run, make_benchmark

library, demo_user, reader = data.library, data.demo_user, data.reader
pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::UserWarning")]

# The seed chapter's per-need APs (cs-foundations, stage-plays, atwood, russian-novels).
AP_A = [0.47332647, 0.58666667, 0.83333333, 0.0]
AP_B = [0.35888889, 0.6, 1.0, 1.0]


def runs() -> tuple[Submission, Submission]:
    return Submission.objects.get(run_name="system-A"), Submission.objects.get(run_name="system-B")


def p_values(html: str) -> list[float]:
    return [float(p) for p in re.findall(r'data-p="([^"]+)"', html)]


def exact_aps(library) -> tuple[np.ndarray, np.ndarray]:
    a, b = runs()
    frames = [s.results.get().per_need_frame()["map"] for s in (a, b)]
    return frames[0].to_numpy(), frames[1].to_numpy()


def test_four_aps_are_the_seeds(library):
    ap_a, ap_b = exact_aps(library)
    np.testing.assert_allclose(ap_a, AP_A, atol=1e-7)
    np.testing.assert_allclose(ap_b, AP_B, atol=1e-7)


@pytest.mark.parametrize("stored", [True, False], ids=["stored", "computed"])
def test_comparison_p_values_equal_scipys(client, library, stored):
    if not stored:
        Comparison.objects.all().delete()
    a, b = runs()
    ap_a, ap_b = exact_aps(library)
    response = client.get(reverse("compare", args=["library", a.pk, b.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    t_p, w_p, r_p = p_values(html)
    assert t_p == pytest.approx(stats.ttest_rel(ap_a, ap_b).pvalue, rel=1e-9)
    assert w_p == pytest.approx(stats.wilcoxon(ap_a, ap_b).pvalue, rel=1e-9)
    # Four needs: all 16 sign flips enumerated, so the randomization p is exact.
    d = ap_a - ap_b
    signs = np.array([[1 - 2 * ((k >> i) & 1) for i in range(4)] for k in range(16)])
    exact = np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-12)
    assert r_p == pytest.approx(exact)
    # ... and the page says so, not "at random (10,000 times)"
    assert "swapped on each need in each of the 16 possible ways" in html
    assert "at random" not in html
    # Means, mean difference, wins/ties/losses (A wins cs-foundations only).
    assert '<dd class="mean-a">0.4733</dd>' in html
    assert '<dd class="mean-b">0.7397</dd>' in html
    assert '<dd class="mean-diff">-0.2664</dd>' in html
    assert "1 / 0 / 3" in html
    assert "Paired t-test" in html and "Wilcoxon signed-rank test" in html
    assert "Randomization test" in html
    # The plots: bars, scatter, the need the runs differ most on (russian-novels, 0 vs 1),
    # both 11-point curves; each an accessible SVG.
    assert html.count('<svg class="plot"') == 4
    assert html.count('role="img"') == 2  # the bars and dots link needs: role="group"
    assert html.count('role="group" aria-labelledby') == 2
    assert "Precision-recall for need russian-novels" in html
    assert "<title" in html


def test_turned_round_comparison_flips_the_difference(client, library):
    a, b = runs()
    html = client.get(reverse("compare", args=["library", b.pk, a.pk])).content.decode()
    assert '<dd class="mean-diff">0.2664</dd>' in html
    assert "3 / 0 / 1" in html
    ap_a, ap_b = exact_aps(library)
    assert p_values(html)[0] == pytest.approx(stats.ttest_rel(ap_a, ap_b).pvalue, rel=1e-9)


def test_measure_selector_and_bad_measure(client, library):
    a, b = runs()
    url = reverse("compare", args=["library", a.pk, b.pk])
    html = client.get(url, {"measure": "P_10"}).content.decode()
    assert '<option value="P_10" selected>' in html
    assert "P@10 over 4 needs" in html
    html = client.get(url, {"measure": "nonsense"}).content.decode()
    assert "showing AP" in html and "AP over 4 needs" in html


def test_bad_pairs_give_clear_404s_not_500s(client, library, demo_user):
    a, b = runs()
    other = make_benchmark("other", {"cs-foundations": ""})
    stranger = add_run(
        other, demo_user, "stranger", a.results.get().per_need_frame().iloc[:1], num_rel=None
    )
    cases = [
        (["library", a.pk, 999999], 404),
        (["library", a.pk, stranger.pk], 404),  # a run of another benchmark
        (["nope", a.pk, b.pk], 404),
        (["library", a.pk, a.pk], 400),
    ]
    for args, status in cases:
        response = client.get(reverse("compare", args=args))
        assert response.status_code == status, args
        json_response = client.get(reverse("compare_json", args=args))
        assert json_response.status_code == status
    queued = Submission.objects.create(
        benchmark=library, participant=demo_user, run_name="waiting", file="runs/x.txt"
    )
    response = client.get(reverse("compare", args=["library", a.pk, queued.pk]))
    assert response.status_code == 404  # a never-scored run is its owner's only
    assert f"There is no run {queued.pk}" in response.content.decode()
    client.force_login(demo_user)  # its owner learns why
    response = client.get(reverse("compare", args=["library", a.pk, queued.pk]))
    assert response.status_code == 404
    assert "no scores" in response.content.decode()


def test_hidden_run_comparison_only_for_owner(client, library, demo_user, reader):
    a, b = runs()
    Submission.objects.filter(pk=b.pk).update(is_hidden=True)
    url = reverse("compare", args=["library", a.pk, b.pk])
    assert client.get(url).status_code == 404
    client.force_login(reader)
    assert client.get(url).status_code == 404
    client.force_login(demo_user)
    assert client.get(url).status_code == 200


def test_comparison_json_equals_stored_values(client, library):
    a, b = runs()
    stored = Comparison.objects.get(measure="map")
    assert (stored.submission_a_id, stored.submission_b_id) == (a.pk, b.pk)
    payload = json.loads(client.get(reverse("compare_json", args=["library", a.pk, b.pk])).content)
    assert payload["measure"] == "map" and payload["stored"] is True
    for key in ("mean_diff", "ci_low", "ci_high", "effect_size", "t_p", "wilcoxon_p"):
        assert payload["tests"][key] == getattr(stored, key)
    assert payload["tests"]["wins"] == stored.wins == 1
    ap_a, ap_b = exact_aps(library)
    assert [row["a"] for row in payload["per_need"]] == ap_a.tolist()
    assert [row["b"] for row in payload["per_need"]] == ap_b.tolist()
    assert payload["a"]["mean"] == pytest.approx(0.47333158)
    turned = json.loads(client.get(reverse("compare_json", args=["library", b.pk, a.pk])).content)
    assert turned["tests"]["mean_diff"] == -stored.mean_diff
    assert turned["tests"]["ci_low"] == -stored.ci_high
    assert turned["tests"]["losses"] == stored.wins


def test_significance_matrix(client, library, demo_user):
    frame = a_frame = runs()[0].results.get().per_need_frame()
    add_run(library, demo_user, "system-C", frame * 0.5)
    data.store_comparisons(library)
    url = reverse("significance", args=["library"])
    for correction in ("holm", "bh", "none", "tukey"):
        response = client.get(url, {"correction": correction})
        assert response.status_code == 200, correction
        html = response.content.decode()
        assert html.count('href="/benchmarks/library/compare/') == 6  # 3 runs, 6 cells
    html = client.get(url, {"correction": "holm"}).content.decode()
    assert "Holm-corrected over the 3 pairs" in html
    # Unknown choices fall back with a note rather than fail.
    html = client.get(url, {"correction": "bonferroni!", "measure": "P_77"}).content.decode()
    assert "Unknown correction" in html and "All pairs are tested on" in html
    assert a_frame is frame


def test_significance_matrix_tooltips_name_both_runs(client, library):
    # The cells' titles read "system-B vs " (the column run was missing).
    html = client.get(reverse("significance", args=["library"])).content.decode()
    titles = re.findall(
        r'<td id="pair-\d+-\d+" class="[a-z]+(?: band-\d)?"><a href="[^"]+" title="([^"]+)"', html
    )
    assert sorted(t.split(":")[0] for t in titles) == [
        "system-A vs system-B",
        "system-B vs system-A",
    ]
    titles = [unescape(t) for t in titles]  # "p &lt; 0.0001" reads "p < 0.0001"
    assert all(re.search(r": p (= \d\.\d{4}|< 0\.0001)$", t) for t in titles), titles


def test_two_runs_on_judgments_without_a_relevant_document_compare_without_a_500(
    client, django_capture_on_commit_callbacks, participant, other_participant
):
    """Grades all below the benchmark's relevance level (raised after the judgments were
    loaded): no need has a relevant document, so there is nothing to pair on. The page,
    its JSON, its plot and the API say so; the worker's comparing stores nothing and
    raises nothing."""
    import io

    from django.core.files.uploadedfile import SimpleUploadedFile

    from leaderboard.models import ApiToken, Benchmark
    from leaderboard.pipeline.loading import load_judgments, load_needs

    benchmark = Benchmark.objects.create(slug="tiny", title="Tiny")
    load_needs(benchmark, io.BytesIO(b"t1\tOne\nt2\tTwo\n"), "needs.tsv")
    load_judgments(benchmark, io.BytesIO(b"t1 0 d1 1\nt1 0 d2 0\nt2 0 d3 1\n"), "qrels.txt")
    Benchmark.objects.filter(pk=benchmark.pk).update(relevance_level=2)
    ids = []
    for user, body in (
        (participant, b"t1 Q0 d1 1 2 a\nt2 Q0 d3 1 2 a\n"),
        (other_participant, b"t1 Q0 d2 1 2 b\nt2 Q0 d9 1 2 b\n"),
    ):
        _, raw = ApiToken.issue(user, "t")
        with django_capture_on_commit_callbacks(execute=True):  # scored and compared
            made = client.post(
                "/api/benchmarks/tiny/submissions/",
                {"file": SimpleUploadedFile("r.txt", body)},
                headers={"Authorization": f"Bearer {raw}"},
            )
        assert made.status_code == 201, made.content
        ids.append(made.json()["id"])
    a, b = ids
    assert Submission.objects.get(pk=b).status == "scored" and not Comparison.objects.exists()
    said = "share no judged need to compare on"
    page = client.get(f"/benchmarks/tiny/compare/{a}/{b}/")
    assert page.status_code == 200 and said in unescape(page.content.decode())
    for url in (
        f"/benchmarks/tiny/compare/{a}/{b}/comparison.json",
        f"/api/benchmarks/tiny/compare/{a}/{b}/",
    ):
        answer = client.get(url)
        assert answer.status_code == 200, (url, answer.content[:300])
        assert said in answer.json()["verdict"] and answer.json()["tests"]["n"] == 0
    plot = client.get(f"/benchmarks/tiny/compare/{a}/{b}/plots/bars.svg")
    assert plot.status_code < 500
    assert client.get("/benchmarks/tiny/health/").status_code == 200


def test_randomization_question_names_random_swaps_past_enumeration():
    from leaderboard.pages.comparisons import _randomization_question

    assert "at random (10,000 times)" in _randomization_question(14, 10_000)
    assert "each of the 8,192 possible ways" in _randomization_question(13, 10_000)


def test_the_json_download_refuses_a_measure_it_cannot_give_as_the_api_does(client, library):
    """The page shows its default measure with a note; its JSON download (for programs)
    answered the primary measure's numbers with a 200 and no word of the measure asked."""
    a, b = (Submission.objects.get(run_name=n).pk for n in ("system-A", "system-B"))
    url = reverse("compare_json", args=["library", a, b])
    api = f"/api/benchmarks/library/compare/{a}/{b}/"
    for asked, says, detail in (
        ("bogus", "There is no measure “bogus”", "suggestions"),
        ("P@7", "no per-need values of P_7", "measures"),
        ("num_ret", "num_ret is a count", "measures"),
    ):
        download, answer = client.get(url, {"measure": asked}), client.get(api, {"measure": asked})
        assert download.status_code == answer.status_code == 400, asked
        assert download["Content-Type"] == "application/json"
        assert download.json() == answer.json(), asked
        assert says in download.json()["error"] and detail in download.json()["details"], asked
    assert client.get(url, {"measure": "P@10"}).json()["measure"] == "P_10"
    assert client.get(url).json()["measure"] == "map"
