"""Mail when a run is scored or fails, through a real SMTP server (aiosmtpd): once per
run, not to those who opted out or have no address, and never failing the scoring."""

from __future__ import annotations

import datetime as dt
import logging
import re

import pytest
import time_machine
from django.utils import timezone

from leaderboard.models import Profile, Submission
from leaderboard.pipeline import notify, tasks
from tests import DEMO
from tests.leaderboard.accounts import test_password_reset
from tests.leaderboard.campaign_data import (
    AFTER_REVEAL,
    BEFORE_REVEAL,
    HIDDEN_MAP,
    PUBLIC_MAP,
    seed_boards,
)
from tests.leaderboard.pipeline.test_tasks import make_run

smtp = test_password_reset.smtp


@pytest.fixture
def mail_site(settings):
    settings.SITE_URL = "https://lb.example.org"


@pytest.fixture
def alice(participant):
    participant.email = "alice@example.org"
    participant.save()
    Profile.objects.create(user=participant, display_name="Alice A.")
    return participant


def test_a_scored_run_is_mailed_with_its_primary_value_and_page(smtp, mail_site, library, alice):
    run = make_run(library, alice, "B", (DEMO / "run-B.txt").read_bytes())
    assert tasks.score_submission.apply(args=[run.pk], task_id="t-1").get() == "scored"
    assert smtp.arrived.wait(10), "no mail reached the SMTP server"
    assert len(smtp.messages) == 1
    sender, recipients, message = smtp.messages[0]
    assert sender == "leaderboard@example.org" and recipients == ["alice@example.org"]
    assert message["Subject"] == "Run B on Library is scored: AP 0.7397"
    body = message.get_content()
    assert "Hello Alice A.," in body
    assert "AP (the benchmark's primary measure): 0.7397" in body
    assert "map" not in body  # the catalog's label, never trec_eval's column
    assert f"The run's page: https://lb.example.org/submissions/{run.pk}/" in body
    assert "https://lb.example.org/accounts/profile/" in body
    run.refresh_from_db()
    assert run.notified_at is not None

    # The same task redelivered (its result already stored) mails nothing more.
    assert tasks.score_submission.apply(args=[run.pk], task_id="t-1").get() == "scored"
    assert len(smtp.messages) == 1


def test_a_failed_run_is_mailed_with_file_line_and_reason(smtp, mail_site, library, alice):
    run = make_run(library, alice, "bad", b"atwood Q0 d1 1 1.0 t\natwood Q0 d2 2 oops t\n")
    assert tasks.score_submission.apply(args=[run.pk]).get() == "failed"
    assert smtp.arrived.wait(10)
    (_, recipients, message), *more = smtp.messages
    assert not more and recipients == ["alice@example.org"]
    assert message["Subject"] == "Run bad on Library failed"
    run.refresh_from_db()
    body = message.get_content()
    assert re.search(r"bad\S*:2: ", run.failure_reason)
    assert run.failure_reason in body
    assert f"https://lb.example.org/submissions/{run.pk}/" in body


def test_no_mail_when_opted_out_or_without_an_address(
    smtp, mail_site, library, alice, other_participant
):
    Profile.objects.filter(user=alice).update(notify_runs=False)
    quiet = make_run(library, alice, "quiet", (DEMO / "run-A.txt").read_bytes())
    nobody = make_run(library, other_participant, "nobody", (DEMO / "run-B.txt").read_bytes())
    for run in (quiet, nobody):
        assert tasks.score_submission.apply(args=[run.pk]).get() == "scored"
    # A third run that does mail, so the test waits for something that arrives.
    Profile.objects.filter(user=alice).update(notify_runs=True)
    loud = make_run(library, alice, "loud", (DEMO / "run-A.txt").read_bytes())
    assert tasks.score_submission.apply(args=[loud.pk]).get() == "scored"
    assert smtp.arrived.wait(10)
    assert [m["Subject"] for _, _, m in smtp.messages] == [
        "Run loud on Library is scored: AP 0.4733"
    ]
    # Opted out and address-less runs are settled too: turning mail on later sends nothing.
    assert not Submission.objects.filter(notified_at__isnull=True).exists()


def test_a_mail_server_that_refuses_never_fails_scoring(settings, library, alice, caplog):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", test_password_reset.free_port()
    settings.EMAIL_TIMEOUT = 2
    run = make_run(library, alice, "B", (DEMO / "run-B.txt").read_bytes())
    with caplog.at_level(logging.ERROR, logger="leaderboard.pipeline.notify"):
        assert tasks.score_submission.apply(args=[run.pk]).get() == "scored"
    run.refresh_from_db()
    assert run.status == "scored" and run.notified_at is not None
    assert f"could not mail the participant of submission {run.pk}" in caplog.text


def test_only_finished_runs_are_claimed_for_mail_and_only_once(library, alice, mailoutbox):
    run = make_run(library, alice, "B", (DEMO / "run-B.txt").read_bytes())
    assert not run.claim_notification()  # queued: nothing to tell yet
    assert notify.notify_finished(run.pk) is False and mailoutbox == []
    Submission.objects.filter(pk=run.pk).update(status="failed", failure_reason="x.txt:1: bad")
    assert notify.notify_finished(run.pk) is True
    assert notify.notify_finished(run.pk) is False
    assert [m.subject for m in mailoutbox] == ["Run B on Library failed"]
    assert notify.notify_finished(10**12) is False  # no such run


def test_the_sweep_mails_a_run_it_gives_up_on(settings, library, alice, mailoutbox):
    import datetime as dt

    from django.utils import timezone

    run = make_run(library, alice, "stuck", (DEMO / "run-B.txt").read_bytes())
    Submission.objects.filter(pk=run.pk).update(
        status="running",
        attempts=settings.MAX_SCORING_ATTEMPTS,
        lease_until=timezone.now() - dt.timedelta(minutes=5),
    )
    assert tasks.sweep_stuck() == {"requeued": 0, "failed": 1}
    assert [m.subject for m in mailoutbox] == ["Run stuck on Library failed"]
    assert "Scoring did not finish after 3 attempts" in mailoutbox[0].body


def test_before_the_reveal_a_split_benchmark_mails_the_public_score_only(
    smtp, mail_site, library, alice
):
    library.set_split(["atwood", "stage-plays"])
    run = make_run(library, alice, "B", (DEMO / "run-B.txt").read_bytes())
    assert tasks.score_submission.apply(args=[run.pk], task_id="t-1").get() == "scored"
    assert smtp.arrived.wait(10), "no mail reached the SMTP server"
    (_, _, message), *more = smtp.messages
    assert not more
    version = library.latest_judgments
    maps = {
        part: f"{run.results.get(judgments__part=part, judgments__version=version.version).summary['map']:.4f}"
        for part in ("", "public", "private")
    }
    assert len(set(maps.values())) == 3  # the fixture tells them apart
    body = message.get_content()
    assert f"AP (the benchmark's primary measure, on the public needs): {maps['public']}" in body
    assert "Scores on the public needs only" in body
    assert maps[""] not in body and maps["private"] not in body
    assert message["Subject"] == f"Run B on Library is scored: AP {maps['public']} (public needs)"
    assert maps[""] not in message["Subject"] and maps["private"] not in message["Subject"]


def test_after_the_reveal_the_mail_tells_the_whole_score(mail_site, library, alice):
    library.set_split(["atwood", "stage-plays"])
    library.reveal_at = timezone.now() - dt.timedelta(minutes=1)
    library.save()
    run = make_run(library, alice, "B", (DEMO / "run-B.txt").read_bytes())
    assert tasks.score_submission.apply(args=[run.pk], task_id="t-1").get() == "scored"
    run.refresh_from_db()
    _, body = notify.message_for(run)
    assert "AP (the benchmark's primary measure): 0.7397" in body
    assert "public needs" not in body


def test_a_hidden_phase_run_is_mailed_without_its_score(db, mailoutbox, mail_site):
    """The owner of a hidden phase's run learns it is scored and when its scores show;
    a public phase's run carries its score (the same mail, so the test can fail)."""
    boards = seed_boards()
    User = type(boards.ada)
    User.objects.filter(pk__in=[boards.ada.pk, boards.bob.pk]).update(email="p@example.org")
    with time_machine.travel(BEFORE_REVEAL, tick=False):
        assert notify.notify_finished(boards.hidden_run.pk)
        assert notify.notify_finished(boards.bob_public.pk)
    hidden, public = mailoutbox
    assert f"{HIDDEN_MAP:.4f}" not in hidden.subject + hidden.body
    assert hidden.subject == "Run alpha-hidden on Boards is scored"
    assert "Scores of the Test phase are shown from the reveal at 2026-05-10 12:00 UTC." in (
        hidden.body
    )
    assert f"AP {PUBLIC_MAP:.4f}" in public.subject
    with time_machine.travel(AFTER_REVEAL, tick=False):
        subject, body = notify.message_for(Submission.objects.get(pk=boards.hidden_run.pk))
    assert f"{HIDDEN_MAP:.4f}" in subject and "shown from the reveal" not in body
