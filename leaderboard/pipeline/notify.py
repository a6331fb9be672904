"""Mail to a participant when a run of theirs is scored or fails.

Sent by the scoring task once the run's status changed (``tasks.score_submission``, and
the sweep when it gives up on a run). One mail per run, ever: ``Submission.
claim_notification`` sets ``notified_at`` in one conditional UPDATE before sending, so
a redelivered or retried task finds it set and sends nothing. Rescoring (new judgments)
sends no mail: the participant waited for the first result, not for the organizers'
changes. No mail to a participant who opted out (``Profile.notify_runs``) or has no
address. A mail that cannot be sent (the server down, refused) is logged and dropped:
it never fails or retries scoring, and it is not tried again.

Links are absolute with ``SITE_URL``: a worker has no request to take the host from.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.urls import reverse

from leaderboard.models import Profile, Submission

log = logging.getLogger(__name__)


def primary_value(submission: Submission) -> tuple[str, float | None, bool]:
    """The benchmark's primary measure, the run's value of it on its latest scoring, and
    whether that is on the public needs only: before the reveal of a split benchmark
    the mail tells the public part's value, never the private one nor the whole's."""
    benchmark = submission.benchmark
    measure = benchmark.primary_measure
    public = benchmark.has_split and not benchmark.revealed()
    results = submission.results.filter(judgments_id=submission.judgments_id)
    if public:
        results = submission.results.filter(
            judgments__parent_id=submission.judgments_id, judgments__part="public"
        )
    result = results.first()
    value = (result.summary or {}).get(measure) if result else None
    return measure, value if isinstance(value, int | float) else None, public


def message_for(submission: Submission) -> tuple[str, str]:
    """The subject and the plain-text body for a run that was scored or failed."""
    scored = submission.status == Submission.Status.SCORED
    # A hidden phase's scores are the organizers' until the reveal: the mail says when.
    hidden = scored and submission.scores_hidden()
    measure, value, public = (
        primary_value(submission) if scored and not hidden else ("", None, False)
    )
    context = {
        "run": submission,
        "benchmark": submission.benchmark,
        "name": Profile.find(submission.participant).public_name,
        "scored": scored,
        "measure": measure,
        "value": "" if value is None else f"{value:.4f}",
        "public_only": public,
        "scores_note": submission.phase.scores_note() if hidden else "",
        "judgments_version": submission.judgments.version if submission.judgments else None,
        "run_url": settings.SITE_URL + submission.get_absolute_url(),
        "account_url": settings.SITE_URL + reverse("account"),
    }
    subject = render_to_string("mail/run_finished_subject.txt", context)
    body = render_to_string("mail/run_finished.txt", context)
    return " ".join(subject.split()), body


def notify_finished(submission_id: int) -> bool:
    """Mail the participant that the run was scored or failed, once; True if a mail
    went out. Never raises: scoring does not depend on mail."""
    try:
        submission = (
            Submission.objects.select_related("benchmark", "participant", "judgments", "phase")
            .filter(pk=submission_id)
            .first()
        )
        if submission is None or not submission.claim_notification():
            return False
        participant = submission.participant
        profile = Profile.find(participant)
        if not profile.notify_runs or not participant.email or not participant.is_active:
            return False
        subject, body = message_for(submission)
        send_mail(subject, body, None, [participant.email])
    except Exception:  # SMTP refused or down, a template or database error: logged only
        log.exception("could not mail the participant of submission %s", submission_id)
        return False
    return True
