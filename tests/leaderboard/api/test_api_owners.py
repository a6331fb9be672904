"""The owner's operations from the API (edit, hide, show again, withdraw), presigned uploads
from the API against a real S3 endpoint (moto's server), and the benchmark's rules and data
description in its read and create shapes."""

from __future__ import annotations

import pytest
import requests
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import Comparison, PendingUpload, Submission
from tests.leaderboard.api.test_api import RUN_B, bearer, error_of, upload, variant


@pytest.fixture
def run(client, library, participant, django_capture_on_commit_callbacks):
    """Alice's scored run on the library benchmark, submitted through the API."""
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(client, bearer(participant), run_name="alice-run", description="first")
    assert response.status_code == 201, response.content
    return Submission.objects.get(pk=response.json()["id"])


def test_the_run_json_has_its_links_and_whether_it_is_withdrawn(client, run, participant):
    body = client.get(f"/api/submissions/{run.pk}/", headers=bearer(participant)).json()
    assert body["paper_url"] == "" and body["code_url"] == ""
    assert body["withdrawn"] is False and body["withdrawn_at"] is None


def test_the_owner_edits_description_and_links_and_a_left_out_field_keeps_its_value(
    client, run, participant
):
    url = f"/api/submissions/{run.pk}/"
    response = client.patch(
        url,
        {"paper_url": "example.org/paper", "code_url": "https://git.example.org/code"},
        content_type="application/json",
        headers=bearer(participant),
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["paper_url"] == "https://example.org/paper"  # the page's form: https assumed
    assert body["code_url"] == "https://git.example.org/code"
    assert body["description"] == "first"  # left out: kept
    run.refresh_from_db()
    assert (run.paper_url, run.description) == ("https://example.org/paper", "first")

    cleared = client.patch(
        url,
        {"description": "", "code_url": ""},
        content_type="application/json",
        headers=bearer(participant),
    )
    assert cleared.status_code == 200
    run.refresh_from_db()
    assert (run.description, run.code_url, run.paper_url) == ("", "", "https://example.org/paper")


def test_editing_refuses_a_bad_link_others_anonymous_and_hidden_runs_one_cannot_see(
    client, run, participant, other_participant
):
    url = f"/api/submissions/{run.pk}/"
    bad = client.patch(
        url,
        {"paper_url": "javascript:alert(1)"},
        content_type="application/json",
        headers=bearer(participant),
    )
    assert "paper_url" in error_of(bad, 400)["details"]
    for value in (0, 1.5, True, ["x"], {"x": 1}):  # the schema's strings only, not "0"
        wrong = client.patch(
            url,
            {"description": value},
            content_type="application/json",
            headers=bearer(participant),
        )
        assert "description" in error_of(wrong, 400)["details"], value
    other = client.patch(
        url,
        {"description": "mine now"},
        content_type="application/json",
        headers=bearer(other_participant),
    )
    error_of(other, 403)
    error_of(client.patch(url, {"description": "x"}, content_type="application/json"), 401)
    run.hide(participant)
    hidden = client.patch(
        url,
        {"description": "x"},
        content_type="application/json",
        headers=bearer(other_participant),
    )
    error_of(hidden, 404)
    run.refresh_from_db()
    assert run.description == "first"


def test_hide_and_unhide_change_the_public_board_and_unhiding_queues_comparisons(
    client, run, participant, django_capture_on_commit_callbacks
):
    other = run.participant.__class__.objects.create_user("carol", password="pw-carol-123")
    with django_capture_on_commit_callbacks(execute=True):
        second = upload(client, bearer(other), content=variant(2), run_name="carol-run")
    assert second.status_code == 201
    headers = bearer(participant)
    hidden = client.post(f"/api/submissions/{run.pk}/hide/", headers=headers)
    assert hidden.status_code == 200 and hidden.json()["hidden"] is True
    board = client.get("/api/benchmarks/library/").json()["leaderboard"]["runs"]
    assert [r["run_name"] for r in board] == ["carol-run"]
    again = client.post(f"/api/submissions/{run.pk}/hide/", headers=headers)
    assert again.status_code == 200 and again.json()["hidden"] is True  # nothing to change

    Comparison.objects.all().delete()  # pairs left untested while hidden
    with django_capture_on_commit_callbacks(execute=True):
        shown = client.post(f"/api/submissions/{run.pk}/unhide/", headers=headers)
    assert shown.status_code == 200 and shown.json()["hidden"] is False
    assert Comparison.objects.exists()  # queued on showing it again, as the page does
    board = client.get("/api/benchmarks/library/").json()["leaderboard"]["runs"]
    assert {r["run_name"] for r in board} == {"carol-run", "alice-run"}


def test_withdraw_is_final_repeats_harmlessly_and_only_for_the_owner(
    client, run, participant, other_participant
):
    error_of(
        client.post(f"/api/submissions/{run.pk}/withdraw/", headers=bearer(other_participant)), 403
    )
    error_of(client.post(f"/api/submissions/{run.pk}/withdraw/"), 401)
    headers = bearer(participant)
    done = client.post(f"/api/submissions/{run.pk}/withdraw/", headers=headers)
    assert done.status_code == 200, done.content
    assert done.json()["withdrawn"] is True and done.json()["status"] == "withdrawn"
    assert done.json()["withdrawn_at"]
    assert client.get("/api/benchmarks/library/").json()["leaderboard"]["runs"] == []
    assert client.post(f"/api/submissions/{run.pk}/withdraw/", headers=headers).status_code == 200
    kept = client.post(f"/api/submissions/{run.pk}/unhide/", headers=headers)
    assert "withdrawn" in error_of(kept, 409)["error"]
    edit = client.patch(
        f"/api/submissions/{run.pk}/",
        {"description": "x"},
        content_type="application/json",
        headers=headers,
    )
    assert "withdrawn" in error_of(edit, 409)["error"]
    # Others no longer see it at all.
    error_of(
        client.post(f"/api/submissions/{run.pk}/hide/", headers=bearer(other_participant)), 404
    )


# --- Presigned uploads ------------------------------------------------------------------


def test_presigned_uploads_are_501_without_a_bucket(client, library, participant):
    body = error_of(
        client.post(
            "/api/benchmarks/library/uploads/",
            {"file_name": "run-B.txt", "size": len(RUN_B)},
            content_type="application/json",
            headers=bearer(participant),
        ),
        501,
    )
    assert "post the file" in body["error"]


def test_a_presigned_upload_through_the_api_is_put_confirmed_and_scored(
    client, bucket, library, participant, django_capture_on_commit_callbacks
):
    headers = bearer(participant)
    started = client.post(
        "/api/benchmarks/library/uploads/",
        {"file_name": "run-B.txt", "size": len(RUN_B), "run_name": "direct"},
        content_type="application/json",
        headers=headers,
    )
    assert started.status_code == 201, started.content
    answer = started.json()
    assert answer["method"] == "PUT" and answer["headers"] == {"Content-Length": str(len(RUN_B))}
    assert answer["confirm_url"].endswith(f"/api/uploads/{answer['token']}/confirm/")

    early = client.post(f"/api/uploads/{answer['token']}/confirm/", headers=headers)
    assert "nothing was uploaded" in error_of(early, 409)["error"]
    put = requests.put(answer["url"], data=RUN_B, headers=answer["headers"], timeout=10)
    assert put.status_code == 200, put.text

    error_of(client.post(f"/api/uploads/{answer['token']}/confirm/"), 401)
    with django_capture_on_commit_callbacks(execute=True):
        confirmed = client.post(f"/api/uploads/{answer['token']}/confirm/", headers=headers)
    assert confirmed.status_code == 201, confirmed.content
    run = confirmed.json()
    assert run["run_name"] == "direct" and confirmed["Location"] == f"/api/submissions/{run['id']}/"
    assert Submission.objects.get(pk=run["id"]).status == "scored"
    twice = client.post(f"/api/uploads/{answer['token']}/confirm/", headers=headers)
    assert twice.status_code == 201 and twice.json()["id"] == run["id"]
    assert Submission.objects.count() == 1


def test_a_presigned_upload_is_refused_with_the_status_and_reasons_of_upload_refused(
    client, bucket, library, participant, other_participant
):
    headers = bearer(participant)
    too_big = client.post(
        "/api/benchmarks/library/uploads/",
        {"file_name": "huge.txt", "size": 10**12},
        content_type="application/json",
        headers=headers,
    )
    assert "the limit is" in error_of(too_big, 413)["error"]
    bad = client.post(
        "/api/benchmarks/library/uploads/",
        {"file_name": "x"},
        content_type="application/json",
        headers=headers,
    )
    assert "size" in error_of(bad, 400)["details"]
    started = client.post(
        "/api/benchmarks/library/uploads/",
        {"file_name": "bad.txt", "size": 9},
        content_type="application/json",
        headers=headers,
    ).json()
    requests.put(started["url"], data=b"not a run", headers=started["headers"], timeout=10)
    error_of(
        client.post(f"/api/uploads/{started['token']}/confirm/", headers=bearer(other_participant)),
        404,
    )
    refused = error_of(
        client.post(f"/api/uploads/{started['token']}/confirm/", headers=headers), 400
    )
    assert refused["error"].startswith("bad.txt:1:"), refused
    assert not PendingUpload.objects.exists()
    assert [k for k in bucket.keys() if k.startswith("runs/")] == []  # the object deleted


# --- Benchmarks' rules and data description -------------------------------------------


def test_a_benchmark_reads_and_creates_with_rules_and_data_description(client, library, organizer):
    library.rules = "One run a day."
    library.data_description = "Ten needs, judged by librarians."
    library.save()
    body = client.get("/api/benchmarks/library/").json()
    assert body["rules"] == "One run a day." and body["data_description"].startswith("Ten needs")
    listed = client.get("/api/benchmarks/").json()["benchmarks"][0]
    assert listed["rules"] == "One run a day."

    created = client.post(
        "/api/benchmarks/",
        {"slug": "new-one", "title": "New", "rules": "No manual runs.", "data_description": "D."},
        content_type="application/json",
        headers=bearer(organizer),
    )
    assert created.status_code == 201, created.content
    assert (
        created.json()["rules"] == "No manual runs." and created.json()["data_description"] == "D."
    )
    from leaderboard.models import Benchmark

    assert Benchmark.objects.get(slug="new-one").rules == "No manual runs."


def test_the_owner_cannot_unhide_a_run_the_organizers_hid(
    client, run, participant, organizer, library, django_capture_on_commit_callbacks
):
    library.organizers.add(organizer)
    hide = client.post(f"/api/submissions/{run.pk}/hide/", headers=bearer(organizer))
    assert hide.status_code == 200, hide.content
    assert (hide.json()["hidden"], hide.json()["hidden_by"]) == (True, "organizers")
    shown = client.get(f"/api/submissions/{run.pk}/", headers=bearer(participant)).json()
    assert shown["hidden_by"] == "organizers"

    refused = client.post(f"/api/submissions/{run.pk}/unhide/", headers=bearer(participant))
    message = error_of(refused, 403)["error"]
    assert "hidden by the benchmark's organizers; ask them" in message
    run.refresh_from_db()
    assert run.is_hidden and run.hidden_by == organizer

    with django_capture_on_commit_callbacks(execute=True):
        undone = client.post(f"/api/submissions/{run.pk}/unhide/", headers=bearer(organizer))
    assert undone.status_code == 200
    assert (undone.json()["hidden"], undone.json()["hidden_by"]) == (False, None)


def test_the_owner_unhides_their_own_hide_and_others_may_do_neither(
    client, run, participant, other_participant
):
    hide = client.post(f"/api/submissions/{run.pk}/hide/", headers=bearer(participant))
    assert hide.json()["hidden_by"] == "participant"
    run.refresh_from_db()
    assert (run.hidden_by, run.hidden_by_organizer) == (participant, False)
    unhide = client.post(f"/api/submissions/{run.pk}/unhide/", headers=bearer(participant))
    assert unhide.status_code == 200 and unhide.json()["hidden"] is False
    error_of(
        client.post(f"/api/submissions/{run.pk}/hide/", headers=bearer(other_participant)), 403
    )
    run.refresh_from_db()
    assert not run.is_hidden


def test_a_retried_start_with_its_key_gets_the_same_upload_not_a_second(
    client, bucket, library, participant
):
    """A start whose answer was lost, sent again with its Idempotency-Key, must not hold
    a second of the day's open uploads (with a daily limit of 1 the retry was a 429
    until the first expired)."""
    library.daily_limit = 1
    library.save()
    headers = {**bearer(participant), "Idempotency-Key": "start-1"}
    body = {"file_name": "run-B.txt", "size": len(RUN_B), "run_name": "direct"}
    first = client.post(
        "/api/benchmarks/library/uploads/", body, content_type="application/json", headers=headers
    )
    again = client.post(
        "/api/benchmarks/library/uploads/", body, content_type="application/json", headers=headers
    )
    assert first.status_code == again.status_code == 201, again.content
    assert again["Idempotent-Replayed"] == "true"
    assert again.json()["token"] == first.json()["token"]
    assert PendingUpload.objects.filter(participant=participant).count() == 1
    other = client.post(
        "/api/benchmarks/library/submissions/",
        {"file": SimpleUploadedFile("run-B.txt", RUN_B)},
        headers=headers,
    )
    assert other.status_code == 422  # the key belongs to the start
