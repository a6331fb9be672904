"""The API's side of the lens (``reading.lenses``): the ``?judgments=`` and ``?needs=``
query parameters every reading endpoint takes, and their refusals as JSON errors."""

from __future__ import annotations

from rest_framework import serializers

from leaderboard.api.errors import ApiError
from leaderboard.models import Benchmark, Result, Submission
from leaderboard.reading.lenses import NEEDS, Lens, lens_for, versions
from leaderboard.reading.visibility import Problem, visible_submission

NEEDS_HELP = (
    "Which needs the scores are on: `public` or `private` (a campaign's split; the private "
    "ones are shown from its reveal, to its organizers before), or `all`."
)


def needs_field(**kwargs) -> serializers.ChoiceField:
    return serializers.ChoiceField(choices=NEEDS, help_text=NEEDS_HELP, **kwargs)


class LensQuerySerializer(serializers.Serializer):
    judgments = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="A judgments version number; the current one by default (an unknown one "
        "is a 404 whose `details.versions` lists them).",
    )
    needs = serializers.ChoiceField(
        choices=NEEDS,
        required=False,
        help_text="public, private or all; by default what the board shows the caller (the "
        "public needs before a campaign's reveal, its final needs after). Before the "
        "reveal, private or all is a 403 but for the organizers; on a benchmark without "
        "a split, anything but all is a 400.",
    )


def api_lens(request, benchmark: Benchmark) -> Lens:
    """The caller's lens on ``benchmark``; a refusal is a JSON error."""
    try:
        return lens_for(request, benchmark)
    except Problem as problem:
        details = {}
        if problem.status == 404:
            details["versions"] = [number for number, _ in versions(benchmark)]
        raise ApiError(problem.status, problem.message, details) from problem


def scored_run(request, submission_id: int) -> tuple[Submission, Result]:
    """The run the caller may see and its result through the caller's lens (the query's
    ``?judgments=``/``?needs=`` checked first); a 404 naming what the lens shows when the
    run has no result there."""
    run = visible_submission(request, submission_id)
    lens = api_lens(request, run.benchmark)
    result = lens.result(run)
    if result is None:
        raise ApiError(
            404,
            f"Run {run.run_name} has no scores yet here: {lens.line()}",
            {"status": run.status},
        )
    return run, result
