"""An organizer's admin names only their own benchmarks and no other user of the site.

Olga organises "Olga's Cup" and "Olga's Plate"; Oscar organises "Zebra Secret Trophy", which Petra and
Quentin submitted to; Rita is a user with no part in either. Nothing Olga's admin sends
her (changelists, their filters, add and change forms, the autocomplete) may contain the
other benchmark's title or those usernames. Superusers still see everything.
"""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt
from django.contrib.contenttypes.models import ContentType

from leaderboard.models import Benchmark, InformationNeed, Judgments, Submission

SECRET_TITLE = "Zebra Secret Trophy"
OTHER_USERS = ("oscar-owner", "petra-participant", "quentin-participant", "rita-bystander")


@pytest.fixture
def two_benchmarks(db, organizer, django_user_model):
    users = {name: django_user_model.objects.create_user(name) for name in OTHER_USERS}
    users["oscar-owner"].is_staff = True
    users["oscar-owner"].save()
    mine = Benchmark.objects.create(slug="olgas-cup", title="Olga's Cup")
    mine.organizers.add(organizer)
    Benchmark.objects.create(slug="olgas-plate", title="Olga's Plate").organizers.add(organizer)
    theirs = Benchmark.objects.create(slug="zebra", title=SECRET_TITLE)
    theirs.organizers.add(users["oscar-owner"])
    for benchmark in (mine, theirs):
        InformationNeed.objects.create(benchmark=benchmark, need_id="n1", title="first")
        Judgments.objects.create(benchmark=benchmark, version=1, file="q.txt", sha256="0" * 64)
    for name in ("petra-participant", "quentin-participant"):
        Submission.objects.create(
            benchmark=theirs, participant=users[name], run_name=f"run-{name}", file="r.txt"
        )
    Submission.objects.create(benchmark=mine, participant=organizer, run_name="mine", file="r.txt")
    return mine, theirs


def pages_of_an_organizer(mine: Benchmark) -> list[str]:
    need = InformationNeed.objects.get(benchmark=mine)
    run = Submission.objects.get(benchmark=mine)
    judgments = Judgments.objects.get(benchmark=mine)
    autocomplete = "/admin/autocomplete/?app_label=leaderboard&field_name=benchmark&term="
    return [
        "/admin/",
        "/admin/leaderboard/",
        "/admin/leaderboard/benchmark/",
        "/admin/leaderboard/benchmark/?is_open__exact=1",
        "/admin/leaderboard/benchmark/add/",
        f"/admin/leaderboard/benchmark/{mine.pk}/change/",
        "/admin/leaderboard/informationneed/",
        f"/admin/leaderboard/informationneed/?benchmark__id__exact={mine.pk}",
        "/admin/leaderboard/informationneed/add/",
        f"/admin/leaderboard/informationneed/{need.pk}/change/",
        "/admin/leaderboard/judgments/",
        f"/admin/leaderboard/judgments/{judgments.pk}/change/",
        "/admin/leaderboard/submission/",
        "/admin/leaderboard/submission/?status__exact=queued",
        f"/admin/leaderboard/submission/{run.pk}/change/",
        autocomplete + "&model_name=informationneed",
        autocomplete + "&model_name=judgments",
    ]


def test_nothing_in_an_organizers_admin_names_other_benchmarks_or_users(
    client, organizer, two_benchmarks
):
    mine, _ = two_benchmarks
    client.force_login(organizer)
    for url in pages_of_an_organizer(mine):
        response = client.get(url)
        assert response.status_code == 200, url
        text = response.content.decode()
        assert SECRET_TITLE not in text and "zebra" not in text, url
        for name in OTHER_USERS:
            assert name not in text, f"{name} on {url}"
    # The filters and the autocomplete still offer the organizer's own benchmarks.
    plate = Benchmark.objects.get(slug="olgas-plate")
    listing = client.get("/admin/leaderboard/submission/").content.decode()
    assert f"?benchmark__id__exact={mine.pk}" in listing
    assert f"?benchmark__id__exact={plate.pk}" in listing
    found = client.get(pages_of_an_organizer(mine)[-2]).json()
    assert found["results"] == [
        {"id": str(mine.pk), "text": "Olga's Cup"},
        {"id": str(plate.pk), "text": "Olga's Plate"},
    ]
    # The users' lists stay closed to organizers.
    for url in ("/admin/auth/user/", "/admin/axes/accessattempt/"):
        assert client.get(url).status_code == 403, url
    user_autocomplete = "/admin/autocomplete/?app_label=leaderboard&model_name=submission"
    assert client.get(user_autocomplete + "&field_name=participant&term=").status_code == 403


def test_organizers_name_co_organizers_by_exact_username(client, organizer, two_benchmarks):
    mine, _ = two_benchmarks
    client.force_login(organizer)
    form = client.get(f"/admin/leaderboard/benchmark/{mine.pk}/change/").content.decode()
    assert 'name="co_organizers"' in form and 'value="olga"' in form
    assert 'name="organizers"' not in form

    data = {
        "slug": "olgas-cup",
        "title": "Olga's Cup",
        "description": "",
        "primary_measure": "map",
        "relevance_level": 1,
        "max_depth": 1000,
        "daily_limit": 5,
        "published": "on",
        "phases-TOTAL_FORMS": 0,
        "phases-INITIAL_FORMS": 0,
    }
    change = f"/admin/leaderboard/benchmark/{mine.pk}/change/"
    refused = client.post(change, {**data, "co_organizers": "rita-bystander, Rita, nobody"})
    assert refused.status_code == 200
    assert "No active user is named Rita, nobody." in refused.content.decode()
    assert set(mine.organizers.values_list("username", flat=True)) == {"olga"}

    saved = client.post(change, {**data, "co_organizers": "rita-bystander  oscar-owner"})
    assert saved.status_code == 302
    assert set(mine.organizers.values_list("username", flat=True)) == {
        "olga",  # the organizer stays one even when not named
        "rita-bystander",
        "oscar-owner",
    }
    # A new benchmark: the organizer and the named co-organizers.
    added = client.post(
        "/admin/leaderboard/benchmark/add/",
        {**data, "slug": "second", "title": "Second", "co_organizers": "rita-bystander"},
    )
    assert added.status_code == 302
    second = Benchmark.objects.get(slug="second")
    assert set(second.organizers.values_list("username", flat=True)) == {"olga", "rita-bystander"}


def test_superusers_keep_the_full_view(client, two_benchmarks, django_user_model):
    root = django_user_model.objects.create_superuser("root", password="pw-root-123")
    client.force_login(root)
    needs = client.get("/admin/leaderboard/informationneed/").content.decode()
    assert SECRET_TITLE in needs and "Olga&#x27;s Cup" in needs
    add = client.get("/admin/leaderboard/benchmark/add/").content.decode()
    assert 'name="organizers"' in add
    assert all(name in add for name in OTHER_USERS)


def test_view_on_site_leads_only_to_what_the_organizer_may_view(
    client, organizer, two_benchmarks, django_user_model
):
    """The admin's "view on site" redirect names the object's page, a benchmark's slug:
    for another benchmark's objects it is a 404, as for objects that do not exist."""
    mine, theirs = two_benchmarks
    benchmark_type = ContentType.objects.get_for_model(Benchmark).pk
    run_type = ContentType.objects.get_for_model(Submission).pk
    user_type = ContentType.objects.get_for_model(django_user_model).pk
    run = Submission.objects.filter(benchmark=theirs).first()
    client.force_login(organizer)
    for url in (
        f"/admin/r/{benchmark_type}/{theirs.pk}/",
        f"/admin/r/{run_type}/{run.pk}/",
        f"/admin/r/{user_type}/{run.participant_id}/",
        f"/admin/r/{benchmark_type}/not-an-id/",
        "/admin/r/999999/1/",
    ):
        response = client.get(url)
        assert response.status_code == 404, url
        assert "zebra" not in response.get("Location", ""), url
    own = client.get(f"/admin/r/{benchmark_type}/{mine.pk}/")
    assert own.status_code == 302 and own["Location"].endswith("/benchmarks/olgas-cup/")
    root = django_user_model.objects.create_superuser("root", password="pw-root-123")
    client.force_login(root)
    theirs_page = client.get(f"/admin/r/{benchmark_type}/{theirs.pk}/")
    assert theirs_page.status_code == 302 and theirs_page["Location"].endswith("/benchmarks/zebra/")


def test_malformed_filters_terms_and_selections_are_refused_not_server_errors(
    client, organizer, two_benchmarks, django_user_model
):
    """PostgreSQL refuses a null character in a query and the id column a selection that
    is no id: the admin answers as for an unusable filter or an empty selection."""
    mine, _ = two_benchmarks
    client.force_login(organizer)
    for url in (
        "/admin/leaderboard/submission/?status__exact=%00",
        "/admin/leaderboard/submission/?run_name=a%00b",
        "/admin/leaderboard/informationneed/?need_id=%00",
    ):
        refused = client.get(url)
        assert refused.status_code == 302 and refused["Location"].endswith("/?e=1"), url
    autocomplete = client.get(
        "/admin/autocomplete/?app_label=leaderboard&model_name=submission"
        "&field_name=benchmark&term=a%00"
    )
    assert autocomplete.status_code == 200 and autocomplete.json()["results"] == []
    run = Submission.objects.get(benchmark=mine)
    for selection in (["abc"], [str(run.pk), "\x00"]):
        answer = client.post(
            "/admin/leaderboard/submission/",
            {"action": "hide", "_selected_action": selection},
            follow=True,
        )
        assert answer.status_code == 200, selection
        assert "the selection was not a list of ids" in answer.content.decode()
    assert not Submission.objects.get(pk=run.pk).is_hidden
    root = django_user_model.objects.create_superuser("root", password="pw-root-123")
    client.force_login(root)
    for url in ("/admin/auth/user/?username=%00", "/admin/leaderboard/team/?name=%00"):
        refused = client.get(url)
        assert refused.status_code == 302 and refused["Location"].endswith("/?e=1"), url


def test_null_characters_in_the_log_in_attempts_lists_are_refused(client, django_user_model):
    """django-axes' lists (superusers): a null character in a filter or the search is
    refused as an unusable filter, as in the platform's own lists; the lists still work."""
    AccessAttempt.objects.create(
        username="alice", ip_address="203.0.113.9", user_agent="curl", failures_since_start=3
    )
    client.force_login(django_user_model.objects.create_superuser("root", password="pw-root-123"))
    for model in ("accessattempt", "accesslog", "accessfailurelog"):
        listed = client.get(f"/admin/axes/{model}/")
        assert listed.status_code == 200, model
        for query in ("username=a%00b", "ip_address=%00", "path_info__exact=%00", "q=a%00"):
            refused = client.get(f"/admin/axes/{model}/?{query}")
            assert refused.status_code == 302, (model, query)
            assert refused["Location"].endswith("/?e=1"), (model, query)
    found = client.get("/admin/axes/accessattempt/?q=alice&locked_out=no")
    assert found.status_code == 200 and "203.0.113.9" in found.content.decode()
