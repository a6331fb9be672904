"""Every page reads through the reader's lens: an older judgments version on asking; on a
split benchmark before the reveal the public needs only (the private values on no page,
in no download), the organizer's choice, and the final board after the reveal."""

from __future__ import annotations

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.urls import reverse
from django.utils import timezone

from leaderboard.models import BenchmarkHealth, Result, Submission
from leaderboard.reading.lenses import default_lens
from tests.leaderboard.pages_data import make_benchmark
from tests.leaderboard.split_data import (
    NEEDS,
    REVEAL,
    mean_text,
    new_version,
    private_texts,
    public_texts,
    score,
    split,
    user,
)

__all__ = ["split"]

AFTER = REVEAL + timezone.timedelta(hours=1)


def surfaces(benchmark) -> list[str]:
    """Every page and download that shows scores of the split benchmark's runs."""
    alpha = benchmark.submissions.get(run_name="alpha").pk
    beta = benchmark.submissions.get(run_name="beta").pk
    slug = benchmark.slug
    return [
        reverse("home"),
        reverse("leaderboard", args=[slug]),
        reverse("leaderboard", args=[slug]) + "?measure=P_10",
        reverse("leaderboard_export", args=[slug, "csv"]),
        reverse("leaderboard_export", args=[slug, "json"]),
        reverse("significance", args=[slug]),
        reverse("benchmark_health", args=[slug]),
        reverse("submission", args=[alpha]),
        reverse("submission", args=[beta]),
        reverse("submission_csv", args=[alpha]),
        reverse("compare", args=[slug, alpha, beta]),
        reverse("compare_json", args=[slug, alpha, beta]),
        reverse("run_results", args=[alpha]),
        reverse("run_results_csv", args=[alpha]),
        reverse("run_results_json", args=[alpha]),
    ]


def log_in(client, who: str) -> None:
    if who != "anonymous":
        client.force_login(user(who))


@pytest.mark.parametrize("who", ["anonymous", "alice", "bob", "reader"])
def test_before_the_reveal_no_page_shows_a_private_value(client, split, who):
    log_in(client, who)
    for url in surfaces(split):
        response = client.get(url)
        assert response.status_code == 200, url
        body = response.content.decode()
        leaked = [text for text in private_texts() if text in body]
        assert not leaked, (url, leaked)
    board = client.get(reverse("leaderboard", args=["split"])).content.decode()
    for text in public_texts():
        assert text in board
    assert "public needs (2 of 4)" in board
    if who == "alice":
        mine = client.get(reverse("my_submissions")).content.decode()
        assert mean_text("alpha", ["n1", "n2"]) in mine
        assert not [text for text in private_texts() if text in mine]


@pytest.mark.parametrize("who", ["anonymous", "alice", "bob"])
@pytest.mark.parametrize("needs", ["private", "all"])
def test_before_the_reveal_asking_for_private_needs_is_a_403(client, split, who, needs):
    log_in(client, who)
    for url in surfaces(split)[1:]:
        response = client.get(url, {"needs": needs})
        assert response.status_code == 403, url
        body = response.content.decode()
        assert "shown from the reveal at 2030-06-01 12:00 UTC" in body
        assert not [text for text in private_texts() if text in body]


def test_the_organizer_sees_public_by_default_and_private_on_asking(client, split):
    client.force_login(user("olga"))
    url = reverse("leaderboard", args=["split"])
    default = client.get(url).content.decode()
    assert mean_text("alpha", ["n1", "n2"]) in default
    assert mean_text("alpha", ["n3", "n4"]) not in default
    assert 'href="?needs=private">private needs</a>' in default
    private = client.get(url, {"needs": "private"}).content.decode()
    assert mean_text("alpha", ["n3", "n4"]) in private
    assert "private needs (2 of 4)" in private
    everything = client.get(url, {"needs": "all"}).content.decode()
    assert mean_text("alpha", list(NEEDS)) in everything
    alpha = split.submissions.get(run_name="alpha").pk
    run = client.get(reverse("submission", args=[alpha]), {"needs": "private"}).content.decode()
    assert "0.9137" in run and "0.6113" not in run


def test_after_the_reveal_the_final_board_is_on_the_private_needs(client, split):
    url = reverse("leaderboard", args=["split"])
    with time_machine.travel(AFTER, tick=False):
        final = client.get(url).content.decode()
        assert mean_text("alpha", ["n3", "n4"]) in final
        assert mean_text("alpha", ["n1", "n2"]) not in final
        public = client.get(url, {"needs": "public"}).content.decode()
        assert mean_text("alpha", ["n1", "n2"]) in public
        assert 'href="?needs=private">private needs</a>' in public
        assert client.get(url, {"needs": "all"}).status_code == 200


def test_a_part_being_prepared_shows_no_scores_at_all(client, split):
    split.judgments.filter(part="public").delete()
    body = client.get(reverse("leaderboard", args=["split"])).content.decode()
    assert "public needs: being prepared, no scores yet" in body
    assert not [text for text in private_texts() if text in body]
    assert "alpha" not in body


def test_an_older_version_is_shown_on_asking(client, db):
    plain = make_benchmark("plain", NEEDS, title="Plain")
    alice = get_user_model().objects.create_user("alice", password=None)
    run = Submission.objects.create(
        benchmark=plain, participant=alice, run_name="alpha", file="runs/plain/alpha.txt",
        status=Submission.Status.SCORED,
    )  # fmt: skip
    score(run, plain.current_judgments, "alpha")
    v2 = new_version(plain, 2)
    score(run, v2, "alpha", shift=0.01)
    plain.current_judgments = v2
    plain.save(update_fields=["current_judgments"])
    url = reverse("leaderboard", args=["plain"])
    v1_mean, v2_mean = mean_text("alpha", list(NEEDS)), "0.7617"
    current = client.get(url).content.decode()
    assert v2_mean in current and v1_mean not in current
    old = client.get(url, {"judgments": 1}).content.decode()
    assert v1_mean in old and v2_mean not in old
    assert "Judgments v1 (not the current v2)" in old
    assert 'href="?">v2 (current)</a>' in old
    page = client.get(reverse("submission", args=[run.pk]), {"judgments": 1}).content.decode()
    assert "0.6113" in page and "0.6213" not in page
    missing = client.get(url, {"judgments": 9})
    assert missing.status_code == 404
    assert "no judgments version 9; versions: v1, v2" in missing.content.decode()
    assert client.get(url, {"needs": "public"}).status_code == 400


def test_the_lens_never_falls_back_to_another_part(split):
    """A run scored on the whole version but not yet on the public part shows nothing to
    a public reader (the rule every page above relies on)."""
    alpha = split.submissions.get(run_name="alpha")
    Result.objects.filter(submission=alpha, judgments__part="public").delete()
    assert default_lens(split, AnonymousUser()).result(alpha) is None


def test_health_is_read_on_the_lens_row(client, split):
    """The stored health of each part: the public reader sees the public part's only."""
    for part, judged in (("public", 2718), ("private", 3141)):
        BenchmarkHealth.objects.create(
            benchmark=split,
            judgments=split.judgments.get(part=part),
            data={"needs": 2, "judged": judged, "runs": 2, "measures": {}},
            computed_at=timezone.now(),
        )
    url = reverse("benchmark_health", args=["split"])
    public = client.get(url).content.decode()
    assert "2718 judged documents" in public and "3141" not in public
    client.force_login(user("olga"))
    private = client.get(url, {"needs": "private"}).content.decode()
    assert "3141 judged documents" in private
