"""Run mail from a real Celery worker process (Redis, PostgreSQL): the worker that scores
an uploaded run mails its participant through a real SMTP server (aiosmtpd, here), with
the run page's address on SITE_URL."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import Profile, Submission
from tests.leaderboard.accounts import test_password_reset
from tests.leaderboard.pipeline import test_worker
from tests.leaderboard.workers import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
smtp, queue, start_worker = test_password_reset.smtp, test_worker.queue, test_worker.start_worker


def test_the_worker_that_scores_a_run_mails_its_participant(
    smtp, settings, start_worker, library, client, participant
):
    # The worker is another process: it reads the mail settings from its environment
    # (the smtp fixture pointed this process's EMAIL_PORT at the server).
    start_worker(
        EMAIL_URL=f"smtp://127.0.0.1:{settings.EMAIL_PORT}/?timeout=5",
        DEFAULT_FROM_EMAIL="runs@example.org",
        SITE_URL="https://lb.example.org",
    )
    participant.email = "alice@example.org"
    participant.save()
    Profile.objects.create(user=participant, display_name="Alice A.")
    client.force_login(participant)
    upload = SimpleUploadedFile("run-B.txt", (test_worker.DEMO_DIR / "run-B.txt").read_bytes())
    response = client.post("/benchmarks/library/submit/", {"file": upload, "run_name": "w1"})
    assert response.status_code == 302
    run = Submission.objects.get(run_name="w1")

    assert smtp.arrived.wait(60), "the worker's mail did not reach the SMTP server"
    (sender, recipients, message), *more = smtp.messages
    assert not more
    assert (sender, recipients) == ("runs@example.org", ["alice@example.org"])
    assert message["Subject"] == "Run w1 on Library is scored: AP 0.7397"
    assert f"https://lb.example.org/submissions/{run.pk}/" in message.get_content()

    def told():
        run.refresh_from_db()
        return run.notified_at is not None

    wait_for(told, timeout=10, what="notified_at to be set")
    assert run.status == "scored" and run.task_id != "eager"
