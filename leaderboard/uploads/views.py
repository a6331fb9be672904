"""The participant's side: upload a run, watch its status, list one's own runs."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_safe

from leaderboard.models import Benchmark, Result, Submission
from leaderboard.reading.lenses import default_lenses
from leaderboard.reading.visibility import visible_submission
from leaderboard.uploads.forms import SubmissionForm
from leaderboard.uploads.receiving import receive_run

WAITING_FOR_QUEUE = (
    "Your run is stored. The scoring queue is not answering right now; "
    "the run will be sent for scoring as soon as it does, and scored shortly."
)


def _limit_context(benchmark: Benchmark, user) -> dict:
    return {"quota": benchmark.quota(user), "timeline": benchmark.timeline()}


@login_required
def submit(request: HttpRequest, slug: str) -> HttpResponse:
    benchmark = get_object_or_404(Benchmark.objects.visible_to(request.user), slug=slug)
    status = 200
    form = None
    refusal = ""
    existing = None
    if request.method == "POST":
        outcome = receive_run(request, benchmark, request.user, refuse_identical=True)
        if outcome.submission is not None:
            if outcome.submission.waiting_for_queue:
                messages.info(request, WAITING_FOR_QUEUE)
            return redirect(outcome.submission)
        form, status, refusal = outcome.form, outcome.status, outcome.refusal
        existing = outcome.existing
    if form is None:
        form = SubmissionForm(benchmark=benchmark)
    context = {
        "benchmark": benchmark,
        "form": form,
        "refusal": refusal,
        "existing": existing,
        **_limit_context(benchmark, request.user),
    }
    return render(request, "leaderboard/submit.html", context, status=status)


@require_safe
def submission_status(request: HttpRequest, pk: int) -> JsonResponse:
    # The run page's rule: hidden runs and runs on unpublished benchmarks are a 404
    # for whoever may not see them.
    submission = visible_submission(request, pk, scores=False)
    return JsonResponse(
        {
            "status": submission.status,
            "failure_reason": submission.failure_reason,
            "finished": submission.finished.isoformat() if submission.finished else None,
        }
    )


@login_required
def my_submissions(request: HttpRequest) -> HttpResponse:
    submissions = (
        Submission.objects.filter(participant=request.user)
        .select_related("benchmark", "benchmark__current_judgments", "phase")
        .prefetch_related(
            Prefetch(
                "results",
                queryset=Result.objects.select_related("judgments").defer("per_need", "ranks"),
            )
        )
    )
    rows = []
    # what each benchmark's board shows this participant, resolved for all at once
    lenses = default_lenses([s.benchmark for s in submissions], request.user)
    for submission in submissions:
        result = lenses[submission.benchmark_id].pick(submission.results.all())
        if submission.scores_hidden():  # a hidden phase's: the organizers' until the reveal
            result = None
        value = result.summary.get(submission.benchmark.primary_measure) if result else None
        rows.append({"submission": submission, "value": value})
    return render(request, "leaderboard/my_submissions.html", {"rows": rows})
