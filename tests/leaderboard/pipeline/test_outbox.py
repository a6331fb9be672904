"""The broker down at upload: the run is stored, the participant told it will be scored
shortly, and the outbox sends it once the broker answers; the API answers JSON, even for
a bug. The broker here is real: a port where nothing listens, then the test Redis."""

from __future__ import annotations

import datetime as dt
import time
import uuid

import pytest
import redis
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from leaderboard.models import ApiToken, Submission
from leaderboard.pipeline import tasks
from tests import DEMO
from tests.leaderboard.workers import broker_or_skip, celery_on, free_port, queues_of

RUN_B = (DEMO / "run-B.txt").read_bytes()


def upload_form(client, name: str):
    upload = SimpleUploadedFile(f"{name}.txt", RUN_B)
    return client.post(
        "/benchmarks/library/submit/", {"file": upload, "run_name": name}, follow=True
    )


def upload_api(client, user, name: str):
    _, raw = ApiToken.issue(user, name)
    return client.post(
        "/api/benchmarks/library/submissions/",
        {"file": SimpleUploadedFile(f"{name}.txt", RUN_B), "run_name": name},
        headers={"Authorization": f"Bearer {raw}"},
    )


@pytest.mark.django_db(transaction=True)
def test_uploads_while_the_broker_is_down_are_stored_then_sent_by_the_outbox(
    client, library, participant, other_participant
):
    broker = broker_or_skip()
    queue = f"test-outbox-{uuid.uuid4().hex[:8]}"
    client.force_login(participant)
    with celery_on(f"redis://127.0.0.1:{free_port()}/0", queue):  # nothing listens there
        started = time.monotonic()
        page = upload_form(client, "form-run")
        form_seconds = time.monotonic() - started
        started = time.monotonic()
        # another participant: the same file twice from one participant is a 409
        response = upload_api(client, other_participant, "api-run")
        api_seconds = time.monotonic() - started

    # Both answered normally, promptly, and said the run will be scored shortly.
    assert page.status_code == 200 and page.redirect_chain[-1][1] == 302
    text = page.content.decode()
    assert "Your run is stored" in text and "will be scored shortly" in text
    assert response.status_code == 201 and response["Content-Type"] == "application/json"
    body = response.json()
    assert body["status"] == "queued" and body["waiting_for_queue"] is True
    assert form_seconds < 10 and api_seconds < 10, (form_seconds, api_seconds)
    # Stored, whole, and waiting in the outbox.
    runs = Submission.objects.order_by("run_name")
    assert [(r.run_name, r.status, r.sent_at) for r in runs] == [
        ("api-run", "queued", None),
        ("form-run", "queued", None),
    ]
    assert all(r.file.size == len(RUN_B) for r in runs)

    # The broker is back: the outbox leaves runs younger than its grace period to the
    # request that stored them, then sends the rest and records that the broker took them.
    with celery_on(broker, queue):
        assert tasks.send_unsent() == 0
        Submission.objects.update(queued_at=timezone.now() - dt.timedelta(minutes=1))
        assert tasks.send_unsent() == 2
        assert tasks.send_unsent() == 0  # sent once
        client_redis = redis.Redis.from_url(broker)
        try:  # on the scoring queue
            assert client_redis.llen(f"{queue}.score") == 2
        finally:
            client_redis.delete(*queues_of(queue))
    assert all(r.sent_at is not None and not r.waiting_for_queue for r in runs.all())


@pytest.mark.django_db(transaction=True)
def test_an_upload_the_broker_takes_is_marked_sent(client, library, participant):
    broker = broker_or_skip()
    queue = f"test-outbox-{uuid.uuid4().hex[:8]}"
    client.force_login(participant)
    with celery_on(broker, queue):
        page = upload_form(client, "sent-run")
    redis.Redis.from_url(broker).delete(*queues_of(queue))
    assert "Waiting for a worker" in page.content.decode()
    assert "Your run is stored" not in page.content.decode()
    run = Submission.objects.get()
    assert run.status == "queued" and run.sent_at is not None


@pytest.mark.django_db(transaction=True)
def test_requeued_runs_go_through_the_outbox(library, participant):
    broker_or_skip()
    run = Submission.objects.create(
        benchmark=library, participant=participant, run_name="r", sent_at=timezone.now()
    )
    with celery_on(f"redis://127.0.0.1:{free_port()}/0", "nowhere"):
        assert tasks.queue_rescore(Submission.objects.all()) == [run.pk]
    run.refresh_from_db()
    assert run.status == "queued" and run.waiting_for_queue  # cleared, and not taken


@pytest.fixture
def api_bug(monkeypatch):
    """A bug in a view: something it calls raises."""

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr("leaderboard.api.views.build_leaderboard", broken)
    monkeypatch.setattr("leaderboard.pages.benchmarks.build_leaderboard", broken)


def test_a_bug_answers_json_under_api_and_html_elsewhere(client, library, api_bug):
    client.raise_request_exception = False
    response = client.get("/api/benchmarks/library/")
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"].startswith("Internal error")
    page = client.get("/benchmarks/library/")
    assert page.status_code == 500 and page["Content-Type"].startswith("text/html")


def test_a_bad_request_answers_json_under_api(client, db):
    response = client.get("/api/benchmarks/", headers={"host": "evil.example"})
    assert response.status_code == 400
    assert response.json() == {"error": "Bad request.", "details": {}}
    page = client.get("/", headers={"host": "evil.example"})
    assert page.status_code == 400 and page["Content-Type"].startswith("text/html")
