"""The board at campaign scale (60 runs, 10 teams): one line per run, the ranking
measure first with its bar, names whole in titles, and no claim about ties on a measure
that has no tests."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import AnonymousUser
from django.urls import reverse

from leaderboard.models import Submission
from leaderboard.pages.benchmarks import BAR_WIDTH, _bar
from leaderboard.reading.boards import build_leaderboard
from tests.leaderboard.campaign_data import campaign

__all__ = ["campaign"]


def board_html(client, **query) -> str:
    return client.get(reverse("leaderboard", args=["campaign"]), query).content.decode()


def test_each_row_has_rank_run_measure_vs_1_then_the_rest_and_no_date_column(client, campaign):
    html = board_html(client)
    heads = re.findall(r'<th scope="col"[^>]*>(.*?)</th>', html.split("<thead>")[1])
    texts = [re.sub(r"<[^>]+>", "", h).strip() for h in heads]
    assert texts[:4] == ["Rank", "Run", "nDCG@10", "vs #1"]
    assert texts[4:7] == ["AP", "P@10", "RR"]
    assert "Submitted" not in texts and texts[-1].startswith("Participant")
    rows = re.findall(r'<tr id="run-(\d+)".*?</tr>', html, flags=re.S)
    assert len(rows) == 50  # the first page
    leader = build_leaderboard(campaign, AnonymousUser(), None).leader
    run = Submission.objects.get(pk=leader.submission_id)
    row = re.search(rf'<tr id="run-{run.pk}".*?</tr>', html, flags=re.S).group(0)
    # the whole name and the submission time in the run link's title
    assert f'title="{run.run_name}, submitted {run.created:%Y-%m-%d %H:%M} UTC"' in row
    # the ranking measure's bar (the leader's is full) before its value
    assert '<rect class="fill" width="48" height="8"' in row
    assert re.search(r'<td class="num ranked"><svg class="bar".*?</svg>0\.\d{4}</td>', row)
    # the participant's whole name and team in the cell's title, the team as a label
    owner = run.participant.profile
    whole = f"{owner.display_name or run.participant.username} ({owner.team.name})"
    assert f'<td class="wide who" title="{whole}">' in row
    assert f'<span class="team">{owner.team.name}</span></td>' in row


def test_bars_are_shares_of_the_leaders_value():
    assert 'width="24"' in _bar(0.25, 0.5).split('class="fill"')[1]
    assert _bar(None, 0.5) == "" and _bar(0.3, 0.0) == ""
    assert f'class="fill" width="{BAR_WIDTH}"' in _bar(0.7, 0.7)


def test_a_measure_without_tests_makes_no_claim_about_ties(client, campaign):
    html = board_html(client, measure="GMAP")
    assert "not tested on GMAP" in html
    assert "statistically tied" not in html and "No run is statistically" not in html
    board = build_leaderboard(campaign, AnonymousUser(), "GMAP")
    assert board.significance == "untested" and not board.tested and board.family_size == 0
    # a tested measure still tests every run against #1
    board = build_leaderboard(campaign, AnonymousUser(), None)
    assert board.significance == "stored" and board.family_size == 59


def test_the_run_pages_per_need_table_leads_with_the_benchmarks_measures(client, campaign):
    run = Submission.objects.filter(benchmark=campaign).order_by("pk")[3]
    html = client.get(reverse("submission", args=[run.pk])).content.decode()
    table = html.split('class="sortable per-need"', 1)[1].split("</table>", 1)[0]
    heads = re.findall(r'<abbr title="([^"]+)">([^<]+)</abbr>', table)
    # the primary (nDCG@10, not among the seed's columns) first, then the shown ones
    assert heads[:4] == [("ndcg_cut_10", "nDCG@10"), ("map", "AP"), ("P_10", "P@10"),
                         ("recip_rank", "RR")]  # fmt: skip
    assert [m for m, _ in heads].count("map") == 1
    assert "best nDCG@10 first" in table
    # rows sorted by the primary, best first, matching the stored per-need values
    frame = run.current_result().per_need_frame()
    expected = frame["ndcg_cut_10"].sort_index().sort_values(ascending=False, kind="stable")
    needs = re.findall(r'<tr><th scope="row"><a href="[^"]+">([^<]+)</a>', table)
    assert needs == expected.index.tolist()
    firsts = re.findall(r'</a></th><td>[^<]*</td><td class="num" data-sort="([^"]+)">', table)
    assert [float(v) for v in firsts] == pytest.approx(expected.tolist())
