"""The benchmark form's split: private needs listed or drawn, checked against the latest
judgments (a form error naming unknown ids), applied through ``Benchmark.set_split``."""

from __future__ import annotations

import pytest

from leaderboard.models.splits import draw_private
from tests.leaderboard.test_admin import benchmark_form

NEEDS = ["atwood", "cs-foundations", "russian-novels", "stage-plays"]


@pytest.fixture
def change(client, library, organizer):
    library.organizers.add(organizer)
    client.force_login(organizer)
    url = f"/admin/leaderboard/benchmark/{library.pk}/change/"

    def post(**fields):
        return client.post(url, benchmark_form(slug="library", title="Library", **fields))

    return post


def test_the_form_lists_draws_and_clears_the_split(change, library):
    response = change(private_need_ids="stage-plays, atwood", final_needs="all", anonymous="on")
    assert response.status_code == 302, response.content.decode()[:3000]
    library.refresh_from_db()
    assert library.private_needs == ["atwood", "stage-plays"]
    assert library.final_needs == "all" and library.anonymous
    assert library.latest_judgments.parts.count() == 2
    response = change(private_need_ids="atwood stage-plays", draw_fraction="0.5", draw_seed="7")
    assert response.status_code == 302
    library.refresh_from_db()
    assert library.private_needs == draw_private(NEEDS, 0.5, 7) and library.split_seed == 7
    assert change(private_need_ids="").status_code == 302
    library.refresh_from_db()
    assert not library.has_split and library.latest_judgments.parts.count() == 0


def test_unknown_needs_are_a_form_error_and_nothing_changes(change, library):
    response = change(private_need_ids="atwood nosuch")
    assert response.status_code == 200
    assert "Not needs of the latest judgments: nosuch." in response.content.decode()
    response = change(draw_fraction="0.01")
    assert response.status_code == 200
    assert "at least one public and one private" in response.content.decode()
    library.refresh_from_db()
    assert not library.has_split
