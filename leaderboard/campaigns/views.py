"""The campaign's pages that change something: a team's final runs, the pool page.

Final runs: one number per run of the team in the phase (its priority; blank: not
final); the model (``leaderboard.models.finals.set_final_runs``) checks the rest and
refuses a closed phase with its close time. Pool (organizers): the statistics of a
built pool (``leaderboard.reading.pools.pool_payload``), its export, a form that queues
another (``leaderboard.pipeline.tasks.queue_pool``). Summary (organizers; a 404 for
anyone else): ``leaderboard.reading.summaries.campaign_summary``, given the pipeline's
cached reader of the judgments (``pool_qrels``) for Judged@k.
"""

from __future__ import annotations

from collections import Counter

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_safe

from leaderboard.campaigns.exports import export_response
from leaderboard.models import Phase, set_final_runs
from leaderboard.models.finals import RunsRefused, TeamKey, limit_for, team_finals, team_key
from leaderboard.models.pooling import MAX_DEPTH, MAX_RUNS_PER_TEAM
from leaderboard.pages.shortcuts import problem_page
from leaderboard.pipeline.scoring import pool_qrels
from leaderboard.pipeline.tasks import queue_pool
from leaderboard.reading.pools import benchmark_pool, pool_payload
from leaderboard.reading.summaries import benchmark_for_organizers, campaign_summary
from leaderboard.reading.visibility import Problem, visible_benchmark


def _priorities(request: HttpRequest, teams: dict[int, TeamKey]) -> list[int]:
    """The run ids given a priority, in priority order; RunsRefused naming the runs with
    a bad one. ``teams``: each run's team (priorities count within a team)."""
    given, bad = [], []
    for run_id in teams:
        text = request.POST.get(f"priority-{run_id}", "").strip()
        if not text:
            continue
        if not (text.isascii() and text.isdigit()) or int(text) < 1:  # "²" is a digit too
            bad.append((run_id, text))
        else:
            given.append((int(text), run_id))
    if bad:
        message = f"A priority is a whole number from 1: {bad[0][1]!r} is not."
        raise RunsRefused(message, [run_id for run_id, _ in bad])
    taken = Counter((teams[r], p) for p, r in given)
    if same := [r for p, r in given if taken[teams[r], p] > 1]:
        raise RunsRefused("Two runs have the same priority.", same)
    return [run_id for _, run_id in sorted(given)]


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def final_runs(request: HttpRequest, slug: str) -> HttpResponse:
    benchmark = visible_benchmark(request, slug)
    now = timezone.now()
    phase_name = request.GET.get("phase") or None
    try:
        seen = team_finals(benchmark, request.user, now, phase_name)
    except ValidationError as error:
        return problem_page(request, Problem(error.messages[0]), benchmark)
    error, at_fault = "", set()
    if request.method == "POST":
        try:
            ids = _priorities(request, {r.pk: team_key(r) for r in seen.runs})
            set_final_runs(
                benchmark, request.user, ids, now, seen.phase.name if seen.phase else None
            )
        except (ValidationError, PermissionDenied) as refusal:
            error = refusal.messages[0] if isinstance(refusal, ValidationError) else str(refusal)
            at_fault = set(getattr(refusal, "run_ids", ()))
        else:
            messages.success(request, "Your team's final runs are saved.")
            return redirect(request.get_full_path())
    priority = {f.submission.pk: f.priority for f in seen.finals if f.chosen}
    counted = {f.submission.pk: f.priority for f in seen.finals}
    # A refused form shows the priorities as typed (nothing was saved), the ones at fault
    # marked; a closed phase's form shows what stands.
    typed = request.POST if error and seen.open else {}
    rows = [
        (
            run,
            typed.get(f"priority-{run.pk}", priority.get(run.pk)),
            counted.get(run.pk),
            run.pk in at_fault,
        )
        for run in seen.runs
    ]
    # Runs from before the participant made or joined a team are a team of one of theirs.
    several = len({team_key(run) for run in seen.runs}) > 1
    context = {
        "benchmark": benchmark,
        "seen": seen,
        "rows": rows,
        "error": error,
        "several": several,
    }
    return render(request, "campaigns/final_runs.html", context, status=400 if error else 200)


class PoolForm(forms.Form):
    phase = forms.ModelChoiceField(
        queryset=Phase.objects.none(), required=False, empty_label="Runs outside any phase"
    )
    depth = forms.IntegerField(min_value=1, max_value=MAX_DEPTH)
    runs_per_team = forms.IntegerField(
        min_value=1, max_value=MAX_RUNS_PER_TEAM, label="Runs per team"
    )

    def __init__(self, benchmark, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["phase"].queryset = benchmark.phases.all()
        if benchmark.phase_list:
            self.fields["phase"].required = True


def organised_benchmark(request: HttpRequest, slug: str):
    benchmark = visible_benchmark(request, slug)
    if not benchmark.is_organised_by(request.user):
        raise PermissionDenied(f"You do not organise {benchmark.title}.")
    return benchmark


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def pool_page(request: HttpRequest, slug: str) -> HttpResponse:
    """``/benchmarks/<slug>/pool/`` (organizers): a pool's statistics, its export, a
    form to build another (``?pool=<id>`` shows an older one)."""
    benchmark = organised_benchmark(request, slug)
    if request.method == "POST":
        form = PoolForm(benchmark, request.POST)
        if form.is_valid():
            data = form.cleaned_data
            pool = queue_pool(
                benchmark, data["phase"], data["depth"], data["runs_per_team"], request.user
            )
            messages.success(request, f"Pool {pool.pk} is queued; this page shows it once built.")
            return redirect(f"{request.path}?pool={pool.pk}")
    else:
        phase = benchmark.timeline().last_closed or benchmark.timeline().current
        initial = {
            "phase": phase,
            "depth": benchmark.pool_depth,
            "runs_per_team": limit_for(benchmark, phase),
        }
        form = PoolForm(benchmark, initial=initial)
    pools = list(benchmark.pools.select_related("phase", "judgments")[:50])
    chosen = request.GET.get("pool", "")
    numbered = chosen.isascii() and chosen.isdigit()  # "²" is a digit too, but no int
    shown = benchmark_pool(benchmark, int(chosen)) if numbered else next(iter(pools), None)
    context = {
        "benchmark": benchmark,
        "form": form,
        "pools": pools,
        "pool": pool_payload(shown) if shown else None,
    }
    return render(request, "campaigns/pool.html", context, status=400 if form.errors else 200)


@require_safe
def summary_page(request: HttpRequest, slug: str) -> HttpResponse:
    """``/benchmarks/<slug>/summary/`` (organizers): runs per team and participant in
    each phase, the latest pool, Judged@10 and Judged@100 of every scored run."""
    benchmark = benchmark_for_organizers(request, slug)
    summary = campaign_summary(benchmark, pool_qrels)
    context = {"benchmark": benchmark, "summary": summary}
    return render(request, "campaigns/summary.html", context)


@login_required
@require_safe
def pool_export(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    return export_response(benchmark_pool(organised_benchmark(request, slug), pk))
