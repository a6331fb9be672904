"""Final runs: which runs of each team count for a phase's pool and results, in order.

A team (a participant without a team is a team of one) marks at most ``N`` of its runs
in a phase as final and orders them by priority (1 first); ``N`` is the phase's
``final_runs`` (the benchmark's when the phase leaves it empty, and the benchmark's on a
benchmark without phases). A team that marks none has its latest ``N`` scored runs
counted, newest first. Only scored runs count: a marked run that failed or was
withdrawn drops out. Marks change until the phase closes (server clock; no grace: the
choice needs no upload); on a benchmark without phases they change at any time.

A run's team is the one it was submitted under (``Submission.team``): a member who
leaves takes no runs along, and any member of that team may set its final runs.

Imports ``submissions`` and ``phases``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q, QuerySet

from leaderboard.models.phases import Phase, timeline, utc
from leaderboard.models.submissions import Submission

TeamKey = tuple[str, int]  # ("team", team id) or ("user", user id): a team of one


def team_key(run: Submission) -> TeamKey:
    return ("team", run.team_id) if run.team_id else ("user", run.participant_id)


def team_name(run: Submission) -> str:
    """What the pages call a run's team: the team's name, or its participant's
    username for a team of one."""
    return run.team.name if run.team_id else run.participant.get_username()


@dataclass(frozen=True)
class FinalRun:
    """A run counted as final: its team, its priority (1 first) in that team, and
    whether the team chose it (False: one of the team's latest runs, chosen for it)."""

    submission: Submission
    team: TeamKey
    team_name: str
    priority: int
    chosen: bool


class PhaseClosed(ValidationError):
    """The phase has closed: its final runs no longer change."""


class RunsRefused(ValidationError):
    """Runs that cannot be final as given: ``run_ids`` names them (the form marks those
    fields, the message says why)."""

    def __init__(self, message: str, run_ids: list[int]) -> None:
        super().__init__(message)
        self.run_ids = list(run_ids)


def limit_for(benchmark, phase: Phase | None) -> int:
    if phase is not None and phase.final_runs is not None:
        return phase.final_runs
    return benchmark.final_runs


def _in_phase(benchmark, phase: Phase | None) -> QuerySet:
    runs = Submission.objects.for_benchmark(benchmark)
    return runs.filter(phase=phase) if phase is not None else runs.filter(phase__isnull=True)


def final_runs(benchmark, phase: Phase | None) -> list[FinalRun]:
    """The effective final runs of every team in ``phase`` (None: the runs submitted
    outside any phase), teams by name, each team's runs in priority order."""
    limit = limit_for(benchmark, phase)
    runs = (
        _in_phase(benchmark, phase)
        .scored()
        .select_related("team", "participant")
        .order_by("-created", "-pk")
    )
    by_team: dict[TeamKey, list[Submission]] = {}
    for run in runs:
        by_team.setdefault(team_key(run), []).append(run)
    out: list[FinalRun] = []
    for key, team_runs in by_team.items():
        marked = sorted(
            (r for r in team_runs if r.final_priority is not None), key=lambda r: r.final_priority
        )
        chosen = bool(marked)
        picked = marked[:limit] if chosen else team_runs[:limit]
        name = team_name(team_runs[0])
        out += [FinalRun(r, key, name, i, chosen) for i, r in enumerate(picked, 1)]
    out.sort(key=lambda f: (f.team_name.lower(), f.team, f.priority))
    return out


def user_team_filter(user) -> Q:
    """The runs whose final marks the user sets: those of the user's current team, and
    the user's own runs submitted without a team (a team of one, whose only member the
    user stays after making or joining a team)."""
    from leaderboard.models.people import Profile

    alone = Q(team__isnull=True, participant=user)
    team = Profile.find(user).team
    return Q(team=team) | alone if team is not None else alone


def phase_for_finals(benchmark, now: dt.datetime, name: str | None = None) -> Phase | None:
    """The phase whose final runs a participant sets or reads: the one named, else the
    one open now, else the one that closed last (None on a benchmark without phases).
    Raises ``ValidationError`` for a name the benchmark has no phase by."""
    phases = benchmark.phase_list
    if name:
        for phase in phases:
            if phase.name == name:
                return phase
        raise ValidationError(f"{benchmark.title} has no phase named {name!r}.")
    if not phases:
        return None
    seen = timeline(benchmark, now)
    return seen.current or seen.last_closed or seen.next


def set_final_runs(
    benchmark, user, run_ids: list[int], now: dt.datetime, phase_name: str | None = None
) -> tuple[Phase | None, list[Submission]]:
    """Mark ``run_ids`` (in priority order) as the final runs of the user's team in the
    phase (see :func:`phase_for_finals`); an empty list clears the marks (the latest
    runs count again). All or nothing: raises ``ValidationError`` (closed phase, too
    many runs, a run twice, a run of another phase, failed or withdrawn) or
    ``PermissionDenied`` (a run of another team), and then changes nothing."""
    phase = phase_for_finals(benchmark, now, phase_name)
    if phase is not None and now >= phase.closes:
        raise PhaseClosed(
            f"The phase {phase.name} closed at {utc(phase.closes)}: its final runs can no "
            "longer change."
        )
    limit = limit_for(benchmark, phase)
    if len(run_ids) != len(set(run_ids)):
        raise ValidationError("A run is listed twice.")
    team_runs = _in_phase(benchmark, phase).filter(user_team_filter(user))
    # a run the user may not see is no run to them: not named, not said to be another's
    seen = Submission.objects.visible_to(user).filter(pk__in=run_ids).values("pk")
    with transaction.atomic():
        runs = {
            r.pk: r
            for r in Submission.objects.select_for_update().filter(pk__in=seen, benchmark=benchmark)
        }
        for run_id in run_ids:
            run = runs.get(run_id)
            if run is None:
                raise RunsRefused(f"{benchmark.title} has no run {run_id}.", [run_id])
            if not team_runs.filter(pk=run_id).exists():
                if run.phase_id != (phase.pk if phase else None):
                    where = f"the phase {phase.name}" if phase else "no phase"
                    raise RunsRefused(
                        f"The run {run.run_name} was not submitted in {where}.", [run_id]
                    )
                raise PermissionDenied(f"The run {run.run_name} is not your team's.")
            if run.status in (Submission.Status.FAILED, Submission.Status.WITHDRAWN):
                raise RunsRefused(
                    f"The run {run.run_name} is {run.status}: it cannot be final.", [run_id]
                )
        # Priorities count within each team the runs were submitted under: the user's
        # team, and the user's runs from before it as a team of one.
        by_team: dict[TeamKey, list[int]] = {}
        for run_id in run_ids:
            by_team.setdefault(team_key(runs[run_id]), []).append(run_id)
        if over := [i for ids in by_team.values() if len(ids) > limit for i in ids]:
            where = f"the phase {phase.name}" if phase else benchmark.title
            raise RunsRefused(f"At most {limit} final runs per team in {where}.", over)
        list(team_runs.select_for_update())  # one writer per team at a time
        team_runs.exclude(final_priority=None).update(final_priority=None)
        for ids in by_team.values():
            for priority, run_id in enumerate(ids, 1):
                Submission.objects.filter(pk=run_id).update(final_priority=priority)
    return phase, [runs[i] for i in run_ids]


@dataclass(frozen=True)
class TeamFinals:
    """A team's view of its final runs in a phase: what the page and the API show."""

    phase: Phase | None
    limit: int
    open: bool  # whether the marks may still change
    finals: list[FinalRun]  # the team's effective final runs, in priority order
    runs: list[Submission]  # the team's live runs in the phase, newest first


def team_finals(benchmark, user, now: dt.datetime, phase_name: str | None = None) -> TeamFinals:
    phase = phase_for_finals(benchmark, now, phase_name)
    mine = user_team_filter(user)
    team_runs = list(
        _in_phase(benchmark, phase)
        .filter(mine)
        .live()
        .exclude(status=Submission.Status.FAILED)
        .select_related("team", "participant")
        .order_by("-created", "-pk")
    )
    ids = {r.pk for r in team_runs}
    finals = [f for f in final_runs(benchmark, phase) if f.submission.pk in ids]
    return TeamFinals(
        phase,
        limit_for(benchmark, phase),
        phase is None or now < phase.closes,
        finals,
        team_runs,
    )
