"""The API reads through the caller's lens as the pages do: the answers say which version
and needs they are on; before the reveal no answer carries a private value, asking for
them is a 403 (but for the organizers), and a private change moves no public validator."""

from __future__ import annotations

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from leaderboard.models import ApiToken, Result
from tests.leaderboard.split_data import REVEAL, mean_text, private_texts, split, user

__all__ = ["split"]


def endpoints(benchmark) -> list[str]:
    alpha = benchmark.submissions.get(run_name="alpha").pk
    beta = benchmark.submissions.get(run_name="beta").pk
    slug = benchmark.slug
    return [
        reverse("api_benchmark", args=[slug]),
        reverse("api_leaderboard_json", args=[slug]),
        reverse("api_leaderboard_csv", args=[slug]),
        reverse("api_significance", args=[slug]),
        reverse("api_compare", args=[slug, alpha, beta]),
        reverse("api_submission", args=[alpha]),
        reverse("api_per_need", args=[alpha]),
        reverse("api_per_need_csv", args=[alpha]),
        reverse("api_run_results", args=[alpha]),
    ]


def as_(who: str) -> dict:
    """The request headers of ``who``: a token (the API reads no session), none for anyone."""
    if who == "anonymous":
        return {}
    _, raw = ApiToken.issue(user(who), "tests")
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


@pytest.mark.parametrize("who", ["anonymous", "alice", "bob"])
def test_before_the_reveal_no_answer_carries_a_private_value(client, split, who):
    who = as_(who)
    for url in [*endpoints(split), reverse("api_submissions") + "?benchmark=split"]:
        response = client.get(url, **who)
        assert response.status_code == 200, (url, response.content[:300])
        body = response.content.decode()
        assert not [text for text in private_texts() if text in body], url
    board = client.get(reverse("api_benchmark", args=["split"]), **who).json()["leaderboard"]
    assert (board["judgments_version"], board["needs"]) == (1, "public")
    alpha = split.submissions.get(run_name="alpha").pk
    run = client.get(reverse("api_submission", args=[alpha]), **who).json()
    assert (run["judgments_version"], run["needs"]) == (1, "public")
    assert run["summary"]["map"] == pytest.approx(0.6335)
    compared = client.get(endpoints(split)[4], **who).json()
    assert (compared["judgments_version"], compared["needs"]) == (1, "public")
    per_need = client.get(reverse("api_per_need", args=[alpha]), **who).json()
    assert per_need["judgments_needs"] == "public"
    assert [n["need_id"] for n in per_need["needs"]] == ["n1", "n2"]


@pytest.mark.parametrize("needs", ["private", "all"])
def test_before_the_reveal_private_needs_are_a_403_json_error(client, split, needs):
    alice = as_("alice")
    for url in endpoints(split):
        response = client.get(url, {"needs": needs}, **alice)
        assert response.status_code == 403, url
        assert response.json()["error"] == (
            "Scores on the private needs are shown from the reveal at 2030-06-01 12:00 UTC."
        )


def test_refusals_name_what_is_wrong(client, split):
    url = reverse("api_benchmark", args=["split"])
    missing = client.get(url, {"judgments": 4})
    assert missing.status_code == 404
    assert missing.json()["details"]["versions"] == [1]
    assert client.get(url, {"judgments": "one"}).status_code == 400
    assert client.get(url, {"needs": "hidden"}).status_code == 400


def test_the_organizer_asks_for_the_private_needs(client, split):
    olga = as_("olga")
    url = reverse("api_benchmark", args=["split"])
    board = client.get(url, {"needs": "private"}, **olga).json()["leaderboard"]
    assert board["needs"] == "private"
    assert f"{board['runs'][0]['value']:.4f}" == mean_text("alpha", ["n3", "n4"])
    assert client.get(url, **olga).json()["leaderboard"]["needs"] == "public"


def test_after_the_reveal_the_final_needs_and_public_on_asking(client, split):
    url = reverse("api_benchmark", args=["split"])
    with time_machine.travel(REVEAL + timezone.timedelta(hours=1), tick=False):
        assert client.get(url).json()["leaderboard"]["needs"] == "private"
        assert client.get(url, {"needs": "public"}).json()["leaderboard"]["needs"] == "public"


def test_a_private_change_moves_no_public_validator(client, split):
    url = reverse("api_benchmark", args=["split"])
    olga = as_("olga")
    before = client.get(url)
    private_before = client.get(url, {"needs": "private"}, **olga)
    later = timezone.now() + timezone.timedelta(hours=1)
    changed = Result.objects.get(submission__run_name="alpha", judgments__part="private")
    changed.summary = {**changed.summary, "map": 0.1234}
    changed.save(update_fields=["summary"])
    Result.objects.filter(pk=changed.pk).update(created=later)
    after = client.get(url)
    assert after["ETag"] == before["ETag"]
    assert after["Last-Modified"] == before["Last-Modified"]
    assert client.get(url, HTTP_IF_NONE_MATCH=before["ETag"]).status_code == 304
    private_after = client.get(url, {"needs": "private"}, **olga)
    assert private_after["ETag"] != private_before["ETag"]
    assert private_after["Last-Modified"] != private_before["Last-Modified"]
