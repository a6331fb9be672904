"""The pages' validators: the board, a run page and a comparison, and their downloads,
send an ETag (the page's bytes, its lens and its viewer) and the API's Last-Modified,
``Cache-Control: private, no-cache``, and answer 304 to a current ``If-None-Match``."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from leaderboard.models import Result, Submission
from tests.leaderboard.split_data import score, split, user

__all__ = ["split"]


def urls(benchmark) -> list[str]:
    alpha = benchmark.submissions.get(run_name="alpha").pk
    beta = benchmark.submissions.get(run_name="beta").pk
    return [
        reverse("leaderboard", args=[benchmark.slug]),
        reverse("submission", args=[alpha]),
        reverse("compare", args=[benchmark.slug, alpha, beta]),
        reverse("significance", args=[benchmark.slug]),
        reverse("benchmark_health", args=[benchmark.slug]),
        reverse("run_results", args=[alpha]),
        reverse("run_results_csv", args=[alpha]),
        reverse("run_results_json", args=[alpha]),
        reverse("leaderboard_export", args=[benchmark.slug, "csv"]),
        reverse("leaderboard_export", args=[benchmark.slug, "json"]),
        reverse("submission_csv", args=[alpha]),
        reverse("compare_json", args=[benchmark.slug, alpha, beta]),
    ]


def tags(client: Client, pages: list[str]) -> dict[str, str]:
    return {url: client.get(url)["ETag"] for url in pages}


@pytest.mark.parametrize("who", ["anonymous", "alice", "olga"])
def test_a_repeat_with_the_etag_is_a_304(split, who):
    client = Client()
    if who != "anonymous":
        client.force_login(user(who))  # the page has a log-out form with a CSRF token
    for url in urls(split):
        first = client.get(url)
        assert first.status_code == 200, url
        etag, modified = first["ETag"], first["Last-Modified"]
        assert etag.startswith('"') and modified.endswith("GMT"), url
        assert first["Cache-Control"] == "private, no-cache", url
        assert "Cookie" in first["Vary"], url
        again = client.get(url, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b"", url
        assert again["ETag"] == etag and again["Last-Modified"] == modified, url
        assert client.get(url, headers={"If-None-Match": '"other"'}).status_code == 200


def test_if_modified_since_alone_never_answers_304(client, split):
    """Last-Modified follows the scores only (a description edit does not move it), so
    the ETag decides."""
    url = reverse("leaderboard", args=["split"])
    modified = client.get(url)["Last-Modified"]
    assert client.get(url, headers={"If-Modified-Since": modified}).status_code == 200


def test_the_lens_and_the_viewer_change_the_etag(split):
    board = reverse("leaderboard", args=["split"])
    anonymous, alice, olga = Client(), Client(), Client()
    alice.force_login(user("alice"))
    olga.force_login(user("olga"))
    default = anonymous.get(board)["ETag"]
    for other in (
        anonymous.get(board, {"judgments": 1})["ETag"],  # the same scores, other links
        anonymous.get(board, {"needs": "public"})["ETag"],
        olga.get(board, {"needs": "private"})["ETag"],
        alice.get(board)["ETag"],  # another viewer, whatever the page holds
        olga.get(board)["ETag"],
    ):
        assert other != default
    # Another viewer's tag is no copy of this viewer's page.
    stale = alice.get(board)["ETag"]
    assert anonymous.get(board, headers={"If-None-Match": stale}).status_code == 200
    # A new log-in (a new CSRF secret): the page's log-out form has a new token.
    alice.logout()
    alice.force_login(user("alice"))
    assert alice.get(board, headers={"If-None-Match": stale}).status_code == 200


def test_a_new_scored_run_and_an_edit_change_the_etag(client, split):
    pages = urls(split)
    before = tags(client, pages)
    assert before == tags(client, pages)  # stable while nothing changes
    gamma = Submission.objects.create(
        benchmark=split,
        participant=user("reader"),
        run_name="gamma",
        file="runs/split/gamma.txt",
        status=Submission.Status.SCORED,
    )
    score(gamma, split.judgments.get(part="public"), "beta", shift=0.05)
    scored = tags(client, pages)
    board, run, *_ = pages
    assert scored[board] != before[board] and scored[run] != before[run]
    # An edit no timestamp records moves it too: the tag hashes the page's bytes.
    split.submissions.filter(run_name="alpha").update(description="Now with *BM25*.")
    assert tags(client, [run])[run] != scored[run]


def test_before_the_reveal_a_private_change_moves_no_public_validator(client, split):
    """The private row rescored (a value changed, a result stored again): the public
    reader's pages keep their ETag and Last-Modified; the organizer's private view moves."""
    pages = urls(split)
    olga = Client()
    olga.force_login(user("olga"))
    private_board = reverse("leaderboard", args=["split"]) + "?needs=private"

    def validators() -> dict:
        seen = {}
        for url in pages:
            response = client.get(url)
            seen[url] = (response["ETag"], response["Last-Modified"])
        return {**seen, "private": olga.get(private_board)["ETag"]}

    before = validators()
    for result in Result.objects.filter(judgments__part__in=["private", ""]):
        result.summary["map"] += 0.01
        Result.objects.filter(pk=result.pk).update(summary=result.summary)
    alpha = split.submissions.get(run_name="alpha")
    Result.objects.filter(submission=alpha, judgments__part="private").delete()
    score(alpha, split.judgments.get(part="private"), "alpha", shift=0.02)
    after = validators()
    assert after["private"] != before["private"]
    assert {url: after[url] for url in pages} == {url: before[url] for url in pages}
    # ... while a public change moves them (so the check above can fail)
    public = Result.objects.get(submission=alpha, judgments__part="public")
    public.summary["map"] += 0.01
    Result.objects.filter(pk=public.pk).update(summary=public.summary)
    assert validators()[pages[0]] != after[pages[0]]
