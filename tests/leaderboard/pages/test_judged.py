"""Judged@10 on the leaderboard: runs whose top 10 the pool barely judged are flagged, in
words, against the threshold the benchmark's organizers set."""

from __future__ import annotations

import re

import pytest

from leaderboard.models import Benchmark, Result
from tests import DEMO
from tests.leaderboard.pipeline.test_coverage import stored_and_scored

RUN_B = (DEMO / "run-B.txt").read_bytes()


def unjudged_run() -> bytes:
    """Per judged need: 8 documents nobody judged, then 2 judged ones (Judged@10 = 0.2)."""
    judged: dict[str, list[str]] = {}
    for line in (DEMO / "qrels.txt").read_text().splitlines():
        need, _, doc, _ = line.split()
        judged.setdefault(need, []).append(doc)
    lines = []
    for need, docs in judged.items():
        names = [f"never-pooled-{need}-{i}" for i in range(8)] + docs[:2]
        lines += [f"{need} Q0 {doc} {r} {100 - r} unpooled" for r, doc in enumerate(names, 1)]
    return ("\n".join(lines) + "\n").encode()


def row_of(html: str, run_name: str) -> str:
    return re.search(rf"<tr[^>]*>(?:(?!</tr>).)*>{run_name}</a>.*?</tr>", html, re.S).group(0)


@pytest.fixture
def board(client, library, participant, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        stored_and_scored(library, participant, "system-B", RUN_B)
        stored_and_scored(library, participant, "unpooled", unjudged_run())

    def page() -> str:
        response = client.get("/benchmarks/library/")
        assert response.status_code == 200
        return response.content.decode()

    return page


def test_scoring_stores_judged_at_10(board):
    values = {
        r.submission.run_name: r.summary["judged_10"]
        for r in Result.objects.select_related("submission")
    }
    assert values == {"system-B": 1.0, "unpooled": pytest.approx(0.2)}


def test_a_run_with_mostly_unjudged_documents_is_flagged(board):
    html = board()
    assert ">Judged@10</abbr></th>" in html
    flagged, judged = row_of(html, "unpooled"), row_of(html, "system-B")
    assert 'class="badge underjudged"' in flagged and "few judged" in flagged
    assert "0.2000" in flagged
    assert "underjudged" not in judged and "1.0000" in judged
    note = html.split('id="judged-note"', 1)[1].split("</p>", 1)[0]
    assert "unpooled has less than 50% of its top 10 judged" in note
    assert "underestimates" in note and "system-B" not in note


def test_the_organizers_threshold_moves_the_flag(board, library):
    Benchmark.objects.filter(pk=library.pk).update(judged_threshold=0.1)
    html = board()
    assert "few judged" not in html and 'id="judged-note"' not in html
    Benchmark.objects.filter(pk=library.pk).update(judged_threshold=0.25)
    html = board()
    assert "few judged" in row_of(html, "unpooled") and "25%" in html


def test_the_organizer_sets_the_threshold_in_the_admin(client, library, organizer):
    library.organizers.add(organizer)
    client.force_login(organizer)
    url = f"/admin/leaderboard/benchmark/{library.pk}/change/"
    page = client.get(url).content.decode()
    assert "Judged@10 threshold" in page and 'name="judged_threshold"' in page
    data = {
        "slug": "library",
        "title": "Library",
        "primary_measure": "map",
        "relevance_level": 1,
        "max_depth": 1000,
        "daily_limit": 3,
        "is_open": "on",
        "published": "on",
        "phases-TOTAL_FORMS": 0,
        "phases-INITIAL_FORMS": 0,
    }
    response = client.post(url, {**data, "judged_threshold": "1.5"})
    assert response.status_code == 200  # the form again, with the error
    assert "Ensure this value is less than or equal to 1.0" in response.content.decode()
    response = client.post(url, {**data, "judged_threshold": "0.3"})
    assert response.status_code == 302, response.content.decode()[:3000]
    library.refresh_from_db()
    assert library.judged_threshold == 0.3
    assert client.post(url, data).status_code == 302  # left empty: the default
    library.refresh_from_db()
    assert library.judged_threshold == 0.5
