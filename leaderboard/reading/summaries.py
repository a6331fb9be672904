"""A campaign's summary for its organizers: runs per team and participant in each phase,
the latest pool's statistics, and Judged@10 and Judged@100 of every scored run.

Organizers only (:func:`benchmark_for_organizers`: a 404 for anyone else, as for a page that
is not there). The counts come from the runs' rows and ``final_runs``; the pool's
statistics are those stored when it was built; Judged@k of each scored run is computed
from its result's stored :class:`~leaderboard.models.PoolRanks` on the current judgments,
the whole version (the organizers see every need), with the engine's
:func:`evaluation.health.judged_of_ranks`: no run file is read.

Those ranks point at lines of the judgments, so their need is known from the qrels
alone: the caller passes ``qrels``, the pipeline's cached reader of a judgments file
(``leaderboard.pipeline.scoring.pool_qrels``), so this layer reads no stored file
itself. It is asked only when some run has stored ranks.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from django.http import Http404, HttpRequest

from evaluation.health import JudgedRanks, QrelsIndex, judged_of_ranks
from leaderboard.models import Benchmark, Judgments, PoolRanks, Result, Submission, final_runs
from leaderboard.models.finals import team_key, team_name
from leaderboard.reading.visibility import visible_benchmark

#: Judged@k at these depths.
CUTOFFS = (10, 100)
COUNTS = ("submitted", "scored", "failed", "final")


def benchmark_for_organizers(request: HttpRequest, slug: str) -> Benchmark:
    """The benchmark if the reader organises it, else a 404 (anonymous readers too)."""
    benchmark = visible_benchmark(request, slug)
    if not benchmark.is_organised_by(request.user):
        raise Http404("No such page.")
    return benchmark


def _row(name: str) -> dict:
    return {"name": name, **dict.fromkeys(COUNTS, 0)}


def _count(row: dict, run: Submission, final: bool) -> None:
    row["submitted"] += 1
    row["scored"] += run.status == Submission.Status.SCORED
    row["failed"] += run.status == Submission.Status.FAILED
    row["final"] += final


def phase_counts(benchmark: Benchmark, phase) -> dict:
    """Runs of ``phase`` (None: those outside any phase) per team and per participant:
    submitted (every run, withdrawn and failed ones too), scored, failed, and final (the
    effective final runs, ``final_runs``: a team that marked none counts its latest)."""
    runs = Submission.objects.for_benchmark(benchmark).select_related("team", "participant")
    runs = runs.filter(phase=phase) if phase is not None else runs.filter(phase__isnull=True)
    finals = {f.submission.pk for f in final_runs(benchmark, phase)}
    teams: dict = {}
    people: dict = {}
    totals = _row("All")
    for run in runs.order_by("pk"):
        final = run.pk in finals
        _count(teams.setdefault(team_key(run), _row(team_name(run))), run, final)
        name = run.participant.get_username()
        _count(people.setdefault(run.participant_id, _row(name)), run, final)
        _count(totals, run, final)

    def ordered(rows: dict) -> list[dict]:
        return sorted(rows.values(), key=lambda row: (row["name"].lower(), row["name"]))

    return {
        "phase": phase.name if phase is not None else None,
        "opens": phase.opens if phase is not None else None,
        "closes": phase.closes if phase is not None else None,
        "teams": ordered(teams),
        "participants": ordered(people),
        "totals": totals,
    }


def pool_summary(benchmark: Benchmark) -> dict | None:
    """The latest built pool's stored statistics, summed up: runs pooled, depth, pool
    size per need (min, median, max, total), pairs to judge, each team's contribution."""
    pool = benchmark.pools.filter(status="built").select_related("phase", "judgments").first()
    if pool is None:
        return None
    stats = pool.stats
    sizes = np.array([need["pool"] for need in stats.get("needs", [])], dtype=np.int64)
    return {
        "id": pool.pk,
        "phase": pool.phase.name if pool.phase else None,
        "depth": pool.depth,
        "runs_per_team": pool.runs_per_team,
        "finished": pool.finished,
        "judgments_version": pool.judgments.version if pool.judgments else None,
        "runs_offered": stats.get("runs_offered", 0),
        "runs_pooled": len(stats.get("runs", [])),
        "needs": len(sizes),
        "size_min": int(sizes.min()) if len(sizes) else 0,
        "size_median": float(np.median(sizes)) if len(sizes) else 0.0,
        "size_max": int(sizes.max()) if len(sizes) else 0,
        "size_total": int(sizes.sum()),
        "to_judge": stats.get("to_judge", 0),
        "teams": [
            {key: team[key] for key in ("team", "runs", "contributed", "unique")}
            for team in stats.get("teams", [])
        ],
    }


def judged_runs(benchmark: Benchmark, qrels: Callable[[Judgments], QrelsIndex]) -> dict:
    """Judged@10 and Judged@100 of every scored run on the current judgments (hidden
    runs too); None for a run whose result has no stored ranks of these judgments, and
    for every run when the judgments file cannot be read (``problem`` says why)."""
    judgments = benchmark.current_judgments
    if judgments is None:
        return {"judgments_version": None, "runs": [], "problem": ""}
    results = list(
        Result.objects.filter(
            judgments=judgments,
            submission__benchmark=benchmark,
            submission__status=Submission.Status.SCORED,
        )
        .select_related("submission__team", "submission__participant", "submission__phase")
        .order_by("submission__created", "submission_id")
    )
    stored = dict(PoolRanks.objects.filter(result__in=results).values_list("result_id", "data"))
    problem = ""
    try:
        index = qrels(judgments) if stored else None
    except OSError as error:  # a file gone from the store: the counts still show
        stored, index = {}, None
        problem = f"The judgments file could not be read ({error.__class__.__name__})."
    ranks: dict[str, JudgedRanks] = {}
    for result in results:
        blob = stored.pop(result.pk, None)  # each copy held once
        if blob is None:
            continue
        try:
            ranks[str(result.pk)] = JudgedRanks.from_bytes(bytes(blob), index)
        except ValueError:  # ranks of other qrels: shown as not known
            continue
    table = judged_of_ranks(index, ranks, CUTOFFS) if ranks else None
    rows = []
    for result in results:
        run = result.submission
        known = table is not None and str(result.pk) in table.index
        row = {
            "id": run.pk,
            "run": run.run_name,
            "team": team_name(run),
            "participant": run.participant.get_username(),
            "phase": run.phase.name if run.phase else None,
            "hidden": run.is_hidden,
        }
        for k in CUTOFFS:
            value = float(table.at[str(result.pk), f"judged_{k}"]) if known else None
            row[f"judged_{k}"] = value
        rows.append(row)
    return {"judgments_version": judgments.version, "runs": rows, "problem": problem}


def campaign_summary(benchmark: Benchmark, qrels: Callable[[Judgments], QrelsIndex]) -> dict:
    """What the organizers' summary page, the API and ``rrl summary`` show: ``phases``
    (each phase's counts, then the runs outside any phase if there are some, or on a
    benchmark without phases), ``pool`` (None before a pool is built) and ``judged``."""
    phases = list(benchmark.phase_list)
    outside = Submission.objects.for_benchmark(benchmark).filter(phase__isnull=True)
    if not phases or outside.exists():
        phases.append(None)
    return {
        "benchmark": benchmark.slug,
        "title": benchmark.title,
        "phases": [phase_counts(benchmark, phase) for phase in phases],
        "pool": pool_summary(benchmark),
        "judged": judged_runs(benchmark, qrels),
    }
