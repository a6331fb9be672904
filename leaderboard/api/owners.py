"""The owner's operations on a run: edit its description and links (``PATCH``), hide it,
show it again, withdraw it.

The same semantics as the run's pages (``leaderboard/uploads/owners.py``): the model
does the work and checks who may (``Submission.edit``, ``hide``, ``unhide``,
``withdraw``); a run the caller may not see is a 404, one they see but may not change a
403 with the reason; a withdrawn run is kept as it was (409: the request is well formed, the run's state refuses it), except that withdrawing it
again answers it as it is. Editing and withdrawing are the participant's; hiding and
showing again are the participant's and the organizers', and a run the organizers hid
only they may show again. Hiding or showing a run that already is so changes nothing
and answers the run; showing a run again queues the comparisons left untested while it
was hidden. Every answer is the run, as ``GET`` gives it.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from drf_spectacular.utils import extend_schema
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from leaderboard.api import serializers as s
from leaderboard.api.base import ApiView
from leaderboard.api.errors import ApiError
from leaderboard.api.schema import errors
from leaderboard.models import Submission
from leaderboard.pipeline.tasks import health_changed, queue_comparisons
from leaderboard.reading.lenses import default_lens
from leaderboard.reading.visibility import visible_submission
from leaderboard.uploads.forms import RunDetailsForm


def owned_run(request: Request, submission_id: int) -> Submission:
    """The run if the caller submitted it: 404 if they may not see it, 403 if they did
    not (a teammate sees the run but does not change it)."""
    run = visible_submission(request, submission_id, scores=False)
    if not run.is_submitted_by(request.user):
        raise PermissionDenied("Only the participant who submitted this run may change it.")
    return run


def kept_as_it_was(run: Submission) -> ApiError:
    return ApiError(
        409,
        f"Run {run.run_name} is withdrawn: it is kept as it was and cannot be changed.",
        {"status": run.status},
    )


def run_answer(request: Request, run: Submission) -> Response:
    # After a change: the run as its default lens shows the caller (no query to read).
    shown = (
        default_lens(run.benchmark, request.user).result(run)
        if run.scores_visible_to(request.user)
        else None
    )
    context = {"request": request, "results": {run.pk: shown}}
    return Response(s.SubmissionSerializer(run, context=context).data)


def edit(request: Request, submission_id: int) -> Response:
    """``PATCH /api/submissions/<id>/`` (called by ``views.SubmissionDetail``)."""
    run = owned_run(request, submission_id)
    if run.is_withdrawn:
        raise kept_as_it_was(run)
    body = s.RunDetailsSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    current = {name: getattr(run, name) for name in RunDetailsForm.Meta.fields}
    form = RunDetailsForm({**current, **body.validated_data}, instance=run)
    if not form.is_valid():
        details = {field: [str(m) for m in messages] for field, messages in form.errors.items()}
        field, messages = next(iter(details.items()))
        raise ApiError(400, f"{field}: {messages[0]}", details)
    run.edit(request.user, **form.cleaned_data)
    return run_answer(request, run)


class OwnerAction(ApiView):
    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]
    serializer_class = s.SubmissionSerializer
    action = ""

    def post(self, request: Request, submission_id: int) -> Response:
        if self.action == "withdraw":
            run = owned_run(request, submission_id)
        else:  # the model checks who may hide or show it
            run = visible_submission(request, submission_id, scores=False)
        if run.is_withdrawn:
            if self.action == "withdraw":
                return run_answer(request, run)
            raise kept_as_it_was(run)
        if self.action == "withdraw":
            run.withdraw(request.user)
        elif self.action == "hide":
            run.hide(request.user)
        elif run.unhide(request.user):
            queue_comparisons([run])  # the pairs left untested while it was hidden
        health_changed(run.benchmark)
        return run_answer(request, run)


def _schema(operation_id: str, summary: str, description: str):
    return extend_schema(
        operation_id=operation_id,
        summary=summary,
        description=description,
        request=None,
        responses={200: s.SubmissionSerializer, **errors(401, 403, 404, 409, 429)},
    )


class Withdraw(OwnerAction):
    action = "withdraw"

    @_schema(
        "withdrawSubmission",
        "Withdraw one's own run, for good",
        "Off every board, export and significance family; kept for the record (its owners "
        "and the organizers still see it). It still counts against the day's limit. "
        "Withdrawing a withdrawn run answers it as it is.",
    )
    def post(self, request: Request, submission_id: int) -> Response:
        return super().post(request, submission_id)


class Hide(OwnerAction):
    action = "hide"

    @_schema(
        "hideSubmission",
        "Hide a run from the public (its participant or the benchmark's organizers)",
        "Only its owners (its participant and their team) and the organizers see it then; "
        "the run records who hid it "
        "(`hidden_by`). An organizer's hide only the organizers can undo. A withdrawn run "
        "is a 409.",
    )
    def post(self, request: Request, submission_id: int) -> Response:
        return super().post(request, submission_id)


class Unhide(OwnerAction):
    action = "unhide"

    @_schema(
        "unhideSubmission",
        "Show a hidden run to everyone again",
        "Its participant may undo their own hide only: a run the organizers hid is a 403 for "
        "them (the organizers may show any). Queues its comparisons with the runs scored "
        "while it was hidden. A withdrawn run is a 409.",
    )
    def post(self, request: Request, submission_id: int) -> Response:
        return super().post(request, submission_id)
