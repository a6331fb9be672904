"""The demo as `make run` loads it (the platform's `load_demo`, scored by the real engine),
seen through the reader's pages: B (AP 0.740) above A (0.473), and the comparison
page's p-values equal to scipy's on the four per-need APs."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats

from leaderboard.models import Benchmark, Submission

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::UserWarning")]

# The seed chapter's per-need APs: cs-foundations, stage-plays, atwood, russian-novels.
AP_A = {"cs-foundations": 0.4733, "stage-plays": 0.5867, "atwood": 0.8333, "russian-novels": 0.0}
AP_B = {"cs-foundations": 0.3589, "stage-plays": 0.6, "atwood": 1.0, "russian-novels": 1.0}


def test_demo_leaderboard(client, demo):
    html = client.get(reverse("leaderboard", args=["library"])).content.decode()
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    names = re.findall(r'<th scope="row"><a href="/submissions/\d+/"[^>]*>([^<]+)</a>', body)
    assert len(names) == 2 and names[0].endswith("B") and names[1].endswith("A")
    maps = re.findall(
        r'<td class="num ranked">(?:<svg.*?</svg>)?(0\.\d{4})</td>', body
    )  # the MAP column
    assert maps == ["0.7397", "0.4733"]
    home = client.get(reverse("home")).content.decode()
    assert "0.7397" in home  # the library's leader on its primary measure
    facts = Benchmark.objects.get(slug="library-facts")
    html = client.get(reverse("leaderboard", args=[facts.slug])).content.decode()
    assert "0.5083" in html and "0.4792" in html  # MRR of B and A (the chapter's 0.508, 0.479)


def test_demo_comparison_p_values_equal_scipys(client, demo):
    runs = {s.run_name[-1]: s for s in Submission.objects.filter(benchmark=demo)}
    a, b = runs["A"], runs["B"]
    frames = {k: s.current_result().per_need_frame()["map"] for k, s in runs.items()}
    for need, value in AP_A.items():
        assert frames["A"][need] == pytest.approx(value, abs=5e-5)
    for need, value in AP_B.items():
        assert frames["B"][need] == pytest.approx(value, abs=5e-5)
    ap_a = frames["A"].to_numpy()
    ap_b = frames["B"].reindex(frames["A"].index).to_numpy()
    html = client.get(reverse("compare", args=["library", a.pk, b.pk])).content.decode()
    t_p, w_p, _ = (float(p) for p in re.findall(r'data-p="([^"]+)"', html))
    assert t_p == pytest.approx(stats.ttest_rel(ap_a, ap_b).pvalue, rel=1e-9)
    assert w_p == pytest.approx(stats.wilcoxon(ap_a, ap_b).pvalue, rel=1e-9)
    payload = json.loads(client.get(reverse("compare_json", args=["library", b.pk, a.pk])).content)
    assert payload["tests"]["mean_diff"] == pytest.approx(np.mean(ap_b - ap_a))
    assert payload["tests"]["wins"] == 3 and payload["tests"]["losses"] == 1


def test_demo_run_page_figure(client, demo):
    a = Submission.objects.get(benchmark=demo, run_name__endswith="A")
    html = client.get(reverse("submission", args=[a.pk]), {"need": "cs-foundations"}).content
    html = html.decode()
    assert "Precision-recall for need cs-foundations: AP 0.473, Rprec 0.467" in html
    assert "(0.067, 1.000) (0.133, 1.000)" not in html  # points are comma-separated
    assert "(0.067, 1.000), (0.133, 1.000), (0.200, 0.500)" in html
