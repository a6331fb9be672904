"""The organizers' split endpoint: set the private needs (listed or drawn), read them
back; a 404 for anyone else, so no one else learns which needs are private."""

from __future__ import annotations

import pytest

from leaderboard.models import ApiToken, Result
from leaderboard.models.splits import draw_private
from leaderboard.pipeline import tasks
from tests import DEMO
from tests.leaderboard.api.test_api import bearer, error_of
from tests.leaderboard.pipeline.test_tasks import make_run

URL = "/api/benchmarks/library/split/"
NEEDS = ["atwood", "cs-foundations", "russian-novels", "stage-plays"]


@pytest.fixture
def organised(library, organizer):
    library.organizers.add(organizer)
    return library


def put(client, body, user):
    return client.put(URL, body, content_type="application/json", headers=bearer(user))


def test_an_organizer_lists_draws_reads_and_clears_the_split(client, organised, organizer):
    answer = put(client, {"private_needs": ["stage-plays", "atwood"]}, organizer)
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["private_needs"] == ["atwood", "stage-plays"]
    assert body["public_needs"] == ["cs-foundations", "russian-novels"]
    assert body["fraction"] is None and body["queued"] is True
    assert client.get(URL, headers=bearer(organizer)).json()["private_needs"] == [
        "atwood",
        "stage-plays",
    ]
    drawn = put(client, {"fraction": 0.5, "seed": 7}, organizer).json()
    assert drawn["private_needs"] == draw_private(NEEDS, 0.5, 7)
    assert drawn["fraction"] == 0.5 and drawn["seed"] == 7
    cleared = put(client, {"private_needs": []}, organizer).json()
    assert cleared["private_needs"] == [] and len(cleared["public_needs"]) == 4
    organised.refresh_from_db()
    assert not organised.has_split and organised.latest_judgments.parts.count() == 0


def test_scored_runs_get_their_parts_when_the_split_is_put(
    client, organised, organizer, participant, django_capture_on_commit_callbacks
):
    run = make_run(organised, participant, "A", (DEMO / "run-A.txt").read_bytes())
    assert tasks.score_submission.apply(args=[run.pk], task_id="t-A").get() == "scored"
    with django_capture_on_commit_callbacks(execute=True):
        assert put(client, {"private_needs": ["atwood"]}, organizer).status_code == 200
    parts = Result.objects.filter(submission=run, judgments__part__in=["public", "private"])
    assert sorted(r.num_needs for r in parts) == [1, 3]


def test_bad_splits_are_400s_naming_the_reason(client, organised, organizer):
    body = error_of(put(client, {"private_needs": ["atwood", "nosuch"]}, organizer), 400)
    assert "nosuch" in body["error"] and "private_needs" in body["details"]
    body = error_of(put(client, {"private_needs": NEEDS}, organizer), 400)
    assert "at least one public" in body["error"]
    body = error_of(put(client, {"fraction": 0.01, "seed": 1}, organizer), 400)
    assert "fraction" in body["details"]
    error_of(put(client, {"private_needs": ["atwood"], "fraction": 0.5}, organizer), 400)
    error_of(put(client, {"private_needs": ["atwood"], "seed": 3}, organizer), 400)
    error_of(put(client, {}, organizer), 400)
    error_of(put(client, {"private_needs": "atwood"}, organizer), 400)
    error_of(put(client, {"fraction": 2}, organizer), 400)
    organised.refresh_from_db()
    assert not organised.has_split


def test_anyone_else_gets_a_404_and_learns_nothing(client, organised, organizer, participant):
    put(client, {"private_needs": ["atwood"]}, organizer)
    for answer in (
        client.get(URL, headers=bearer(participant)),
        put(client, {"private_needs": ["stage-plays"]}, participant),
    ):
        body = error_of(answer, 404)
        assert "atwood" not in answer.content.decode()
        assert body["error"]
    error_of(client.get(URL), 401)
    for user in (organizer, participant):  # OPTIONS describes the PUT to organizers only
        options = client.options(URL, headers=bearer(user))
        assert options.status_code == 200
        assert ("PUT" in options.json().get("actions", {})) is (user == organizer)
    organised.refresh_from_db()
    assert organised.private_needs == ["atwood"]


def test_a_read_token_reads_but_does_not_set(client, organised, organizer):
    _, raw = ApiToken.issue(organizer, "read", scope="read")
    headers = {"Authorization": f"Bearer {raw}"}
    assert client.get(URL, headers=headers).status_code == 200
    answer = client.put(
        URL, {"private_needs": ["atwood"]}, content_type="application/json", headers=headers
    )
    error_of(answer, 403)
