"""The owner's operations on a run, from its page and from My runs: edit the description
and links, hide it from the public board or show it again, withdraw it.

Thin views: the model does the work and checks who may (``Submission.edit``, ``hide``,
``unhide``, ``withdraw``). Editing and withdrawing are the participant's (organizers
have the admin); hiding and showing again are the participant's and the organizers',
and a run the organizers hid only they may show again. A run the user may not see is a
404, one they see but may not change a 403 page with the reason, and an anonymous user
is sent to log in. A page shows the form (GET); only a POST
with the CSRF token changes anything. Hiding, showing and withdrawing each have a
confirmation page with a required checkbox, so the step holds without JavaScript; a
POST without the tick shows the page again with the error (400).

What happens to significance (decided here, documented in docs/pages.md):

- hidden: the stored comparisons stay; a board forms its families (tests against #1,
  the matrix) from the runs it shows, so a hidden run is in none of the public ones.
  New runs are not tested against it while it is hidden, so showing it again queues
  its missing pairs (``queue_comparisons``, new pairs only), as the admin does.
- withdrawn: final. Stored comparisons stay for the record, read by no family; pending
  work on the run stops (scoring keeps nothing, a queued comparison does nothing).
- neither gives back a submission of the day's limit (see ``counted_today``).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from leaderboard.models import Submission, utc_day_start
from leaderboard.pages.shortcuts import problem_page
from leaderboard.pipeline.tasks import health_changed, queue_comparisons
from leaderboard.reading.visibility import Problem, visible_submission
from leaderboard.uploads.forms import ConfirmForm, RunDetailsForm


def owned_run(request: HttpRequest, pk: int) -> Submission:
    """The run, if the user submitted it: 404 if they may not see it, 403 if they did
    not (a teammate sees the run but does not change it)."""
    run = visible_submission(request, pk, scores=False)
    if not run.is_submitted_by(request.user):
        raise PermissionDenied("Only the participant who submitted this run may change it.")
    return run


def _kept_as_it_was(request: HttpRequest, run: Submission) -> HttpResponse:
    message = f"Run {run.run_name} is withdrawn: it is kept as it was and cannot be changed."
    return problem_page(request, Problem(message, 400), run.benchmark)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def edit_run(request: HttpRequest, pk: int) -> HttpResponse:
    run = owned_run(request, pk)
    if run.is_withdrawn:
        return _kept_as_it_was(request, run)
    form = RunDetailsForm(request.POST if request.method == "POST" else None, instance=run)
    if form.is_bound and form.is_valid():
        run.edit(request.user, **form.cleaned_data)
        messages.success(request, f"Saved the description and links of {run.run_name}.")
        return redirect(run)
    context = {"run": run, "benchmark": run.benchmark, "form": form}
    return render(
        request, "leaderboard/run_edit.html", context, status=400 if form.is_bound else 200
    )


@dataclass(frozen=True)
class Action:
    title: str  # "Hide run {name}?"
    checkbox: str
    button: str
    done: str


ACTIONS = {
    "hide": Action(
        "Hide run {name} from the public?",
        "Hide {name} from readers",
        "Hide the run",
        "{name} is hidden: only you, your team and the organizers see it.",
    ),
    "unhide": Action(
        "Show run {name} to everyone again?",
        "Show {name} on the public leaderboard",
        "Show the run",
        "{name} is on the public leaderboard again.",
    ),
    "withdraw": Action(
        "Withdraw run {name}?",
        "I understand that withdrawing {name} is final",
        "Withdraw the run",
        "{name} is withdrawn: off the leaderboard, kept for the record.",
    ),
}


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def confirm_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    """Hide, show or withdraw a run, after its confirmation page."""
    run = (
        owned_run(request, pk)
        if action == "withdraw"
        else visible_submission(request, pk, scores=False)
    )
    spec = ACTIONS[action]
    name = run.run_name
    if run.is_withdrawn:
        if action == "withdraw":
            messages.info(request, f"{name} was already withdrawn.")
            return redirect(run)
        return _kept_as_it_was(request, run)
    if action in ("hide", "unhide"):
        refusal = (
            run.why_not_hide(request.user) if action == "hide" else run.why_not_unhide(request.user)
        )
        if refusal:
            return problem_page(request, Problem(refusal, 403), run.benchmark)
    if action in ("hide", "unhide") and run.is_hidden == (action == "hide"):
        messages.info(request, f"{name} is {'hidden' if run.is_hidden else 'public'} already.")
        return redirect(run)
    label = spec.checkbox.format(name=name)
    form = ConfirmForm(request.POST if request.method == "POST" else None, label=label)
    if form.is_bound and form.is_valid():
        if action == "withdraw":
            run.withdraw(request.user)
        elif action == "hide":
            run.hide(request.user)
        elif run.unhide(request.user):
            queue_comparisons([run])  # the pairs left untested while it was hidden
        health_changed(run.benchmark)
        messages.success(request, spec.done.format(name=name))
        return redirect(run)
    # The day's count the submit form shows; a run of another day or phase is not in it.
    quota = run.benchmark.quota(request.user)
    phase = quota.window.phase
    in_today = run.created >= utc_day_start() and run.phase_id == (phase.pk if phase else None)
    context = {
        "run": run,
        "benchmark": run.benchmark,
        "form": form,
        "action": action,
        "title": spec.title.format(name=name),
        "button": spec.button,
        "quota": quota if in_today else None,
        "is_participant": run.is_submitted_by(request.user),
    }
    return render(
        request, "leaderboard/run_confirm.html", context, status=400 if form.is_bound else 200
    )
