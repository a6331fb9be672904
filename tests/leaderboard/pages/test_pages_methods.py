"""HEAD is answered wherever GET is: every page of the site and every download answers a
HEAD with the GET's status and headers and no body (link checkers, monitors and proxies
ask with HEAD before, or instead of, a GET)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from leaderboard.models import ApiToken
from tests.leaderboard import pages_data as data
from tests.leaderboard import site_pages

library, demo_user = data.library, data.demo_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def site(library, demo_user) -> site_pages.Site:
    runs = sorted(library.submissions.values_list("pk", flat=True))
    frame = library.submissions.get(pk=runs[0]).results.get().per_need_frame()
    hidden = data.add_run(library, demo_user, "system-C", frame, is_hidden=True)
    token, _ = ApiToken.issue(demo_user, "laptop")
    library.organizers.add(demo_user)
    return site_pages.Site(library.slug, runs[0], runs[1], hidden.pk, token.pk, demo_user)


def downloads(site: site_pages.Site) -> list[str]:
    a, b, slug = site.run_a, site.run_b, site.slug
    return [
        reverse("leaderboard_export", args=[slug, "csv"]),
        reverse("leaderboard_export", args=[slug, "json"]),
        reverse("compare_json", args=[slug, a, b]),
        reverse("compare_plot", args=[slug, a, b, "bars", "svg"]),
        reverse("compare_plot", args=[slug, a, b, "eleven", "png"]),
        reverse("submission_csv", args=[a]),
        reverse("run_results_csv", args=[a]),
        reverse("run_results_json", args=[a]),
        reverse("submission_plot", args=[a, "eleven", "svg"]),
        reverse("submission_status", args=[a]),
        reverse("health"),
    ]


def test_every_page_and_download_answers_head_as_get(site):
    pages = [(page.path(site), page.login) for page in site_pages.PAGES.values()]
    checked = 0
    for url, login in pages + [(url, False) for url in downloads(site)]:
        client = Client()
        if login:
            client.force_login(site.user)
        got = client.get(url)
        head = client.head(url)
        assert head.status_code == got.status_code, (url, head.status_code, got.status_code)
        assert head.content == b"", url
        assert head.get("Content-Type") == got.get("Content-Type"), url
        if got.status_code == 200 and got.has_header("ETag"):
            assert head["ETag"] == got["ETag"], url
            checked += 1
    assert checked >= 10  # the board, run, comparison, matrix, health and their downloads


def test_a_head_of_a_page_one_may_not_see_is_a_404_as_its_get(client, site):
    url = reverse("submission", args=[site.run_hidden])
    assert client.get(url).status_code == 404
    assert client.head(url).status_code == 404
