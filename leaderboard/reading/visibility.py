"""What a reader may see: the read layer's ``get_object_or_404``.

``visible_benchmark`` and ``visible_submission`` give a 404 for whatever the reader
(``request.user``: a page's or an API view's request alike) may not see: unpublished
benchmarks, hidden, withdrawn, failed and never-scored runs but to their owners and the
organizers, and the runs of a phase whose board is not public before the reveal
(``Submission.visible_to`` and ``scores_visible_to`` hold that rule). A ``Problem`` is
what a read cannot answer, with the message to show: pages render it as a 400/404 page,
the API as a JSON error.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404

from leaderboard.models import Benchmark, Submission


class Problem(Exception):
    """A request the page cannot answer, with what to tell the reader."""

    def __init__(self, message: str, status: int = 404) -> None:
        super().__init__(message)
        self.message, self.status = message, status


def error_body(message: str, details: dict | None = None) -> dict[str, Any]:
    """The JSON body of a refusal, the API's and the pages' JSON downloads' alike."""
    return {"error": message, "details": details or {}}


def visible_benchmark(request: HttpRequest, slug: str) -> Benchmark:
    return get_object_or_404(
        Benchmark.objects.visible_to(request.user).select_related("current_judgments"), slug=slug
    )


def visible_submission(request: HttpRequest, pk: int, *, scores: bool = True) -> Submission:
    """The run, or a 404. With ``scores`` (reads of its values: per-need tables, plots,
    exports, results) only if the reader may see its scores; without, if they may see it
    exists (its page, its status), the caller leaving its scores out where
    ``Submission.scores_visible_to`` says so."""
    submission = get_object_or_404(
        Submission.objects.select_related("benchmark", "participant", "judgments", "phase", "team"),
        pk=pk,
    )
    if not submission.is_visible_to(request.user) or not (
        submission.benchmark.published or submission.benchmark.is_organised_by(request.user)
    ):
        raise Http404("No such run.")
    if scores and not submission.scores_visible_to(request.user):
        # its owners know it exists: say why its values are not shown, and until when
        raise PermissionDenied(submission.scores_note(request.user))
    return submission
