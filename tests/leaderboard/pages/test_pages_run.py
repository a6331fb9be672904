"""The run page: status, summary, per-need table, the seed's Figure 1, compare links."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.urls import reverse
from django.utils import timezone

from leaderboard.models import Result, Submission
from leaderboard.pages.plots import need_figure, precision_recall_points
from tests.leaderboard import pages_data as data

library, demo_user, reader = data.library, data.demo_user, data.reader
pytestmark = pytest.mark.django_db

# System A on CS foundations (the chapter's Figure 1): relevant at these ranks, R = 15.
A_CS_RANKS = [1, 2, 6, 7, 9, 12, 13, 16, 18, 21, 23, 25]


def page(client, name: str, **params) -> str:
    run = Submission.objects.get(run_name=name)
    response = client.get(reverse("submission", args=[run.pk]), params)
    assert response.status_code == 200
    return response.content.decode()


def test_precision_recall_points_are_the_chapters():
    recall, precision = precision_recall_points(A_CS_RANKS, 15)
    assert [round(r, 3) for r in recall[:3]] == [0.067, 0.133, 0.2]
    assert [round(p, 3) for p in precision] == [
        1.0, 1.0, 0.5, 0.571, 0.556, 0.5, 0.538, 0.5, 0.5, 0.476, 0.478, 0.48,
    ]  # fmt: skip
    svg = str(need_figure(A_CS_RANKS, 15, "cs-foundations"))
    assert svg.startswith("<svg") and 'role="img"' in svg
    assert "AP 0.473" in svg and "Rprec 0.467" in svg  # 7 of the top 15 are relevant
    assert "(0.800, 0.480)" in svg  # the last point, in the text alternative


def test_run_page_summary_table_and_figure(client, library):
    html = page(client, "system-A")
    assert "Run system-A" in html and 'badge baseline">baseline' in html
    assert "Scored" in html
    # Summary over 4 needs with the seed's measures.
    assert "Summary over 4 needs" in html
    assert re.search(r'<abbr title="map">AP</abbr></dt><dd>0.4733</dd>', html)
    # Per-need table: AP, P@5, P@10, RR, Rprec, NumRel, NumRelRet; sortable.
    table = html.split('class="sortable per-need"', 1)[1].split("</table>", 1)[0]
    heads = re.findall(r'<abbr title="([^"]+)">', table)
    assert heads == ["map", "P_5", "P_10", "recip_rank", "Rprec", "num_rel", "num_rel_ret"]
    assert table.count("<tr>") == 1 + 4
    cs = table.split(">cs-foundations<", 1)[1].split("</tr>", 1)[0]
    assert re.findall(r">([^<]+)</td>", cs)[1:] == [
        "0.4733", "0.4000", "0.5000", "1.0000", "0.4667", "15", "12",
    ]  # fmt: skip
    # Figure 1 for the first need with relevant documents, and the 11-point average.
    assert "Precision-recall for need atwood" in html
    assert "11-point interpolated precision, averaged over needs" in html
    assert html.count('<svg class="plot"') == 2
    # Compare links: with the leader (B); A is itself the baseline.
    b = Submission.objects.get(run_name="system-B")
    assert f"/compare/{Submission.objects.get(run_name='system-A').pk}/{b.pk}/" in html
    assert "the leader system-B" in html


def test_choose_a_need_and_unknown_need(client, library):
    html = page(client, "system-A", need="cs-foundations")
    assert "Precision-recall for need cs-foundations: AP 0.473, Rprec 0.467" in html
    assert '<option value="cs-foundations" selected>' in html
    html = page(client, "system-A", need="<nope>")
    assert "No need “&lt;nope&gt;”" in html
    assert "Precision-recall for need atwood" in html


def test_leader_page_links_to_baseline(client, library):
    html = page(client, "system-B")
    assert "baseline system-A" in html and "the leader" not in html


def test_live_status_for_queued_runs_and_failure_reason(client, library, demo_user):
    queued = Submission.objects.create(
        benchmark=library,
        participant=demo_user,
        run_name="waiting",
        file="runs/w.txt",
        sent_at=timezone.now(),  # the broker took its message
    )
    assert client.get(reverse("submission", args=[queued.pk])).status_code == 404  # anonymous
    client.force_login(demo_user)  # the owner sees it
    html = client.get(reverse("submission", args=[queued.pk])).content.decode()
    assert f'data-status-url="{reverse("submission_status", args=[queued.pk])}"' in html
    assert "js/status.js" in html and "Waiting for a worker" in html
    assert "Summary over" not in html
    assert "Judgments v1, not scored yet" in html  # not the board's newest scoring
    # Stored while the broker was down: the outbox sends it later, and the page says so.
    Submission.objects.filter(pk=queued.pk).update(sent_at=None)
    html = client.get(reverse("submission", args=[queued.pk])).content.decode()
    assert "it will be scored shortly" in html and "Waiting for a worker" not in html
    assert "js/status.js" in html
    failed = Submission.objects.create(
        benchmark=library,
        participant=demo_user,
        run_name="broken",
        file="runs/b.txt",
        status=Submission.Status.FAILED,
        failure_reason="run.txt:7: rank is not an integer",
    )
    html = client.get(reverse("submission", args=[failed.pk])).content.decode()
    assert "run.txt:7: rank is not an integer" in html
    assert "data-status-url" not in html and "js/status.js" not in html
    # A run without results: its CSV is a clear 404, not a server error.
    response = client.get(reverse("submission_csv", args=[failed.pk]))
    assert response.status_code == 404 and "no scores yet" in response.content.decode()


def test_the_run_page_says_when_this_run_was_scored(client, library):
    run = Submission.objects.get(run_name="system-A")
    at = dt.datetime(2020, 1, 2, 3, 4, tzinfo=dt.UTC)
    Result.objects.filter(submission=run).update(created=at)
    assert "Judgments v1, scored 2020-01-02 03:04 UTC" in page(client, "system-A")


def test_unknown_run_is_404(client, db):
    assert client.get(reverse("submission", args=[424242])).status_code == 404
    assert client.get(reverse("submission_csv", args=[424242])).status_code == 404


def test_need_without_relevant_documents(client, library, demo_user):
    frame = Submission.objects.get(run_name="system-A").results.get().per_need_frame()
    run = data.add_run(library, demo_user, "zero-r", frame, num_rel=frame["num_rel"] * 0)
    html = client.get(reverse("submission", args=[run.pk])).content.decode()
    assert "No relevant documents judged for this need." in html
    assert Result.objects.filter(submission=run).exists()


def test_a_run_description_is_markdown_rendered_and_sanitised(client, library):
    Submission.objects.filter(run_name="system-A").update(
        description="# BM25\n\n**RM3** expansion, see [the paper](https://example.org)."
        '<script>alert(1)</script><a href="javascript:alert(2)">x</a>'
    )
    html = page(client, "system-A")
    lede = html.split('<div class="lede markdown">', 1)[1].split("</div>", 1)[0]
    assert "<h3>BM25</h3>" in lede  # below the page's h1 and its sections' h2
    assert "<strong>RM3</strong>" in lede
    assert 'href="https://example.org"' in lede
    assert "<script" not in lede and "javascript:" not in lede
