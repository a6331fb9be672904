"""The private needs' scores, across every page, endpoint, export and mail: before the
reveal no reader (anyone, a participant, the runs' owner, an organizer by default) is
shown a private or whole-version value, in a body, a header or an error, and no private
change moves a public validator; the organizers see them on asking; after the reveal the
final board shows them to everyone.

Every named route is either exercised here (``SURFACES``) or listed in ``NOT_SCORES`` with
the reason it shows no score, so a new route has to be classified.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator

import pytest
import time_machine
from django.core import mail as django_mail
from django.db import transaction
from django.test import Client, TestCase, override_settings
from django.urls import reverse

from leaderboard.celery import app
from leaderboard.models import ApiToken, Result
from leaderboard.pipeline import notify
from tests.leaderboard.private_campaign import (
    AFTER,
    BEFORE,
    PRIMARY,
    Campaign,
    build,
    found_in,
    texts,
)
from tests.leaderboard.site_pages import named_routes

LOCAL_CACHE = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
ROLES = ("anonymous", "eve", "alice", "olga")  # eve submitted nothing; olga organizes
A, B, C = "alice-bm25", "bob-rm3", "alice-dense"


def _slug(c: Campaign) -> str:
    return c.benchmark.slug


def _run(name: str) -> Callable[[Campaign], int]:
    return lambda c: c.run(name).pk


def route(name: str, *args, queries=("",)) -> Callable[[Campaign], list[str]]:
    """The URLs of route ``name`` with arguments drawn from the campaign, once per query."""

    def urls(c: Campaign) -> list[str]:
        path = reverse(name, args=[arg(c) if callable(arg) else arg for arg in args])
        pair = {"a": c.run(A).pk, "b": c.run(B).pk}
        return [path + query.format(**pair) for query in queries]

    return urls


LENS = ("", "?judgments=1", "?needs=public", "?needs=private", "?needs=all")
MEASURES = ("?measure=map", "?measure=P_10", "?measure=recip_rank", "?measure=bogus")
NEED = ("?need=q03", "?need=q01", "?need=q03&needs=private")

SURFACES: dict[str, list[Callable[[Campaign], list[str]]]] = {
    "home": [route("home")],
    "leaderboard": [route("leaderboard", _slug, queries=LENS + MEASURES)],
    "leaderboard_export": [
        route("leaderboard_export", _slug, fmt, queries=LENS + MEASURES[:2])
        for fmt in ("csv", "json")
    ],
    "submit": [route("submit", _slug)],
    "final_runs": [route("final_runs", _slug)],
    "pool": [route("pool", _slug)],
    "compare_pick": [route("compare_pick", _slug, queries=("", "?a={a}", "?a={a}&b={b}"))],
    "compare": [
        route("compare", _slug, _run(x), _run(y), queries=LENS + MEASURES[:1] + NEED)
        for x, y in ((A, B), (A, C))
    ],
    "compare_json": [route("compare_json", _slug, _run(A), _run(B), queries=LENS + NEED)],
    "compare_plot": [
        route("compare_plot", _slug, _run(A), _run(B), plot, "svg", queries=("",) + NEED)
        for plot in ("bars", "scatter", "need", "eleven")
    ]
    + [route("compare_plot", _slug, _run(A), _run(B), "bars", "png", queries=LENS[:4])],
    "significance": [route("significance", _slug, queries=LENS + MEASURES[:1])],
    "benchmark_health": [route("benchmark_health", _slug, queries=LENS)],
    "submission": [route("submission", _run(r), queries=LENS + NEED) for r in (A, B)],
    "submission_plot": [
        route("submission_plot", _run(A), plot, fmt, queries=("",) + NEED)
        for plot in ("need", "eleven")
        for fmt in ("svg", "png")
    ],
    "run_results": [
        route("run_results", _run(r), queries=LENS + MEASURES[:1] + NEED) for r in (A, B)
    ],
    "run_results_csv": [route("run_results_csv", _run(A), queries=LENS + NEED)],
    "run_results_json": [route("run_results_json", _run(A), queries=LENS + NEED)],
    "submission_csv": [route("submission_csv", _run(r), queries=LENS) for r in (A, B)],
    "submission_status": [route("submission_status", _run(A))],
    "run_edit": [route("run_edit", _run(A))],
    "run_hide": [route("run_hide", _run(A))],
    "run_unhide": [route("run_unhide", _run(A))],
    "run_withdraw": [route("run_withdraw", _run(A))],
    "my_submissions": [route("my_submissions", queries=LENS)],
    "account": [route("account")],
    "api_benchmarks": [route("api_benchmarks")],
    "api_benchmark": [route("api_benchmark", _slug, queries=LENS + MEASURES)],
    "api_phases": [route("api_phases", _slug)],
    "api_quota": [route("api_quota", _slug)],
    "api_compare": [route("api_compare", _slug, _run(A), _run(B), queries=LENS + NEED[:1])],
    "api_significance": [route("api_significance", _slug, queries=LENS + MEASURES[:1])],
    "api_leaderboard_json": [route("api_leaderboard_json", _slug, queries=LENS + MEASURES[:1])],
    "api_leaderboard_csv": [route("api_leaderboard_csv", _slug, queries=LENS + MEASURES[:1])],
    "api_final_runs": [route("api_final_runs", _slug)],
    "api_pools": [route("api_pools", _slug)],
    "api_split": [route("api_split", _slug)],
    "api_submissions": [
        route(
            "api_submissions", queries=("", *(f"?benchmark=split-campaign&{q[1:]}" for q in LENS))
        )
    ],
    "api_submission": [route("api_submission", _run(r), queries=LENS) for r in (A, B)],
    "api_run_results": [route("api_run_results", _run(A), queries=LENS + MEASURES[:1] + NEED)],
    "api_per_need": [route("api_per_need", _run(r), queries=LENS + NEED) for r in (A, B)],
    "api_per_need_csv": [route("api_per_need_csv", _run(A), queries=LENS)],
    "api_not_found": [route("api_not_found", "benchmarks/split-campaign/private/")],
}

NOT_SCORES = {
    "signup": "the sign-up form",
    "login": "the log-in form",
    "logout": "POST only: logs out and redirects",
    "password_change": "an account form",
    "password_change_done": "an account page",
    "password_reset": "an account form",
    "password_reset_done": "an account page",
    "password_reset_confirm": "an account form reached by a mailed link",
    "password_reset_complete": "an account page",
    "api_tokens": "the user's API tokens",
    "api_token_revoke": "a token's revocation",
    "health": "the load balancer's probe: the services' state",
    "pool_export": "the assessors' qrels of unjudged pairs: need and document ids",
    "api_pool": "a pool's pair counts per run and team",
    "campaign_summary": "organizers only (a 404 for everyone else): runs per team, the pool, "
    "Judged@10/100 on the whole version",
    "api_campaign_summary": "organizers only (a 404 for everyone else), as the page",
    "api_pool_export": "the assessors' qrels of unjudged pairs",
    "api_phase": "a phase's dates and limits (the campaign has none)",
    "api_submit": "POST only: a run's upload",
    "api_uploads": "POST only: a presigned upload",
    "api_upload_confirm": "POST only: a presigned upload's confirmation",
    "api_rescore": "POST only: queues rescoring",
    "api_needs": "POST only: adds needs",
    "api_judgments": "POST only: a judgments version's upload",
    "api_withdraw": "POST only",
    "api_hide": "POST only",
    "api_unhide": "POST only",
    "api_tokens_list": "the user's API tokens",
    "api_token": "one API token",
    "api_schema": "the OpenAPI document: no data",
    "api_docs": "the API's documentation page: no data",
}
# Surfaces whose every answer is a refusal here, and why (all others answer someone 200,
# or a redirect).
REFUSING = {
    "api_not_found": "the API's 404 for an unknown address",
}
NOT_SCORES_UNDER = {"admin/": "Django's admin: staff only, who may see every stored score"}


def test_every_route_is_exercised_or_shows_no_scores():
    names = {name for r, name in named_routes() if not r.startswith(tuple(NOT_SCORES_UNDER))}
    assert names - set(SURFACES) - set(NOT_SCORES) == set()
    assert set(SURFACES) & set(NOT_SCORES) == set()
    assert set(SURFACES) | set(NOT_SCORES) <= names  # no stale entry


@pytest.fixture(scope="module")
def built(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Campaign]:
    """The campaign, scored once for the module's tests in a transaction left open: each
    test runs in a savepoint inside it (pytest-django's ``db``) and rolls back to the
    campaign as built; the transaction is rolled back after the module's last test. Tasks
    run in-process and mail goes to Django's test outbox, as in every other test."""
    media = str(tmp_path_factory.mktemp("campaign-media"))
    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager = app.conf.task_eager_propagates = True
    try:
        with (
            django_db_blocker.unblock(),
            override_settings(MEDIA_ROOT=media, CACHES=LOCAL_CACHE),
            transaction.atomic(),
        ):
            django_mail.outbox = []
            with time_machine.travel(BEFORE - dt.timedelta(hours=6)):
                campaign = build(django_mail.outbox, TestCase.captureOnCommitCallbacks)
            campaign.media_root = media
            yield campaign
            transaction.set_rollback(True)
    finally:
        app.conf.task_always_eager, app.conf.task_eager_propagates = saved


@pytest.fixture
def campaign(built, db, settings) -> Campaign:
    settings.MEDIA_ROOT = built.media_root  # the runs' files, stored by the build
    return built


def reader(campaign: Campaign, role: str) -> Client:
    """A client that is ``role`` on the pages (a session) and in the API (a token)."""
    if role == "anonymous":
        return Client()
    user = campaign.users[role]
    _, raw = ApiToken.issue(user, "permissions")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    client.force_login(user)
    return client


def every_url(campaign: Campaign) -> list[tuple[str, str]]:
    return [(name, url) for name, makers in SURFACES.items() for m in makers for url in m(campaign)]


def validators_of(response) -> tuple[str | None, str | None]:
    return response.get("ETag"), response.get("Last-Modified")


def sweep(campaign: Campaign, role: str) -> tuple[list[str], dict, dict]:
    """Every surface as ``role`` sees it: the leaks found, the status and the validators
    of each URL. The organizers' own choice of the private needs is left out here."""
    client, leaks, statuses, validators = reader(campaign, role), [], {}, {}
    for name, url in every_url(campaign):
        if role == "olga" and ("needs=private" in url or "needs=all" in url):
            continue
        response = client.get(url)
        statuses[url] = (name, response.status_code)
        body = response.content.decode(errors="replace")
        headers = "\n".join(f"{k}: {v}" for k, v in response.headers.items())
        leaks += [f"{role} {url}: {leak}" for leak in found_in(campaign.secrets, body + headers)]
        validators[url] = validators_of(response)
    return leaks, statuses, validators


@pytest.mark.long
def test_before_the_reveal_no_surface_shows_a_private_value(campaign):
    # summaries and per-need values, pages and JSON; the private tests and health
    assert len(campaign.secrets) > 100 and {"a test's", "the health"} <= {
        " ".join(what.split()[:2]) for what in campaign.secrets.values()
    }
    leaks, served = [], {}
    with time_machine.travel(BEFORE, tick=False):
        for role in ROLES:
            found, statuses, validators = sweep(campaign, role)
            leaks += found
            errors = [f"{role} {url}: {s}" for url, (_, s) in statuses.items() if s >= 500]
            assert not errors
            for name, status in statuses.values():
                served.setdefault(name, set()).add(status)
            if role == "anonymous":
                before = validators
    assert not leaks, "\n".join(leaks)
    # nor does the public board's order: it ranks by the public values alone
    with time_machine.travel(BEFORE, tick=False):
        url = reverse("leaderboard_export", args=[campaign.benchmark.slug, "json"])
        ranked = [row["run"] for row in Client().get(url).json()["runs"]]
    by = {
        part: sorted(campaign.runs, key=lambda r, part=part: -campaign.value(r, part))
        for part in ("public", "private")
    }
    assert ranked == by["public"] != by["private"]
    # every surface answered someone with its content (not only refusals)
    assert {name for name, codes in served.items() if not codes & {200, 302}} == set(REFUSING)

    # The organizers see the private values on asking (so the sweep above can fail).
    with time_machine.travel(BEFORE, tick=False):
        olga = reader(campaign, "olga")  # a session opened at the frozen time
        for url in (
            reverse("leaderboard", args=[campaign.benchmark.slug]) + "?needs=private",
            reverse("api_benchmark", args=[campaign.benchmark.slug]) + "?needs=private",
            reverse("submission", args=[campaign.run(A).pk]) + "?needs=private",
        ):
            response = olga.get(url)
            body = response.content.decode()
            private = texts(campaign.value(A, "private"))
            assert any(text in body for text in private), url
            assert found_in(campaign.secrets, body)

    # A private change (a value rescored, a private result added) moves no validator of
    # the public reader's: neither the ETag nor Last-Modified.
    with time_machine.travel(BEFORE + dt.timedelta(hours=1), tick=False):
        for result in Result.objects.filter(judgments__part__in=["private", ""]):
            result.summary[PRIMARY] += 0.001
            Result.objects.filter(pk=result.pk).update(summary=result.summary)
        added = Result.objects.get(submission=campaign.run(A), judgments__part="private")
        added.pk = None
        Result.objects.filter(submission=campaign.run(A), judgments__part="private").delete()
        added.save()
    with_validators = [url for url, v in before.items() if v != (None, None)]
    assert [url for url in with_validators if "api/" in url]  # the API's boards send them
    names = {url: name for name, url in every_url(campaign)}
    sent = {names[url] for url in with_validators}
    assert {"leaderboard", "submission", "compare"} <= sent  # and so do the pages

    def validators() -> dict:
        client = Client()
        return {url: validators_of(client.get(url)) for url in with_validators}

    with time_machine.travel(BEFORE + dt.timedelta(hours=2), tick=False):
        after = validators()
    moved = [url for url in with_validators if before[url] != after[url]]
    assert not moved, moved
    # ... while a public change moves them (so the check above can fail)
    with time_machine.travel(BEFORE + dt.timedelta(hours=3), tick=False):
        public = Result.objects.get(submission=campaign.run(A), judgments__part="public")
        public.summary[PRIMARY] += 0.001
        public.pk = None
        Result.objects.filter(submission=campaign.run(A), judgments__part="public").delete()
        public.save()
        changed = validators()
    assert all(changed[url] != after[url] for url in with_validators)


def test_before_the_reveal_the_scored_mail_tells_no_private_value(campaign):
    assert len(campaign.mails) == len(campaign.runs)
    for mail in campaign.mails:
        assert not found_in(campaign.secrets, mail.subject + mail.body), mail.subject
        run = next(r for name, r in campaign.runs.items() if f"Run {name} " in mail.subject)
        assert texts(campaign.value(run.run_name, "public"))[0] in mail.subject
    with time_machine.travel(BEFORE, tick=False):
        for run in campaign.runs.values():
            subject, body = notify.message_for(run)
            assert not found_in(campaign.secrets, subject + body), run.run_name
    with time_machine.travel(AFTER, tick=False):
        subject, body = notify.message_for(campaign.run(A))
        assert found_in(campaign.secrets, subject + body)


def test_after_the_reveal_the_final_board_shows_the_private_values_to_everyone(campaign):
    slug, run = campaign.benchmark.slug, campaign.run(A).pk
    with time_machine.travel(AFTER, tick=False):
        for role in ("anonymous", "eve"):
            client = reader(campaign, role)
            for url in (
                reverse("leaderboard", args=[slug]),
                reverse("leaderboard_export", args=[slug, "csv"]),
                reverse("leaderboard_export", args=[slug, "json"]),
                reverse("submission", args=[run]),
                reverse("api_benchmark", args=[slug]),
                reverse("api_leaderboard_csv", args=[slug]),
                reverse("api_submission", args=[run]),
            ):
                response = client.get(url)
                assert response.status_code == 200, url
                body = response.content.decode()
                private = texts(campaign.value(A, "private"))
                assert any(text in body for text in private), (role, url)
                assert client.get(url + "?needs=all").status_code == 200, url
