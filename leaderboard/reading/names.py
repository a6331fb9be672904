"""Who a run is shown as: real names, or a benchmark's stable pseudonyms until its reveal.

On a benchmark with ``anonymous`` set, before its reveal every participant and team is
shown as "Participant 7" or "Team 3" to everyone but the benchmark's organizers (and a
reader sees the real names on the runs they own: their own, and those submitted under
the team they are a member of now, as ``Submission.has_owner`` decides). A run's team is
the one it was submitted under (``Submission.team``; none for a run submitted alone), as
everywhere. The numbers follow each one's first run on the benchmark (every run counts,
failed and withdrawn ones too, so a number does not move when a run is hidden or
withdrawn or when a participant changes team, and a new participant or team takes the
next one): the same name on every page, in the API and in exports, on every load;
another benchmark numbers its own; the number says nothing of the username. From the
reveal on everyone sees the real names.

Every surface that names a participant or team asks :func:`names_for` (boards and their
exports, the API's serializers, run pages); nothing else decides.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from leaderboard.models import Benchmark, Profile, Submission


@dataclass
class Names:
    """The names one reader sees on one benchmark."""

    viewer_id: int | None
    pseudonymous: bool = False
    participants: dict[int, int] = field(default_factory=dict)
    teams: dict[int, int] = field(default_factory=dict)
    viewer_team_id: int | None = None

    def own(self, participant_id: int | None, team_id: int | None) -> bool:
        """Whether the reader owns the run: its participant, or a member now of the team
        ``team_id`` it was submitted under."""
        return participant_id == self.viewer_id or (
            team_id is not None and team_id == self.viewer_team_id
        )

    def participant(self, participant_id: int | None, name: str, team_id: int | None) -> str:
        """The name to show for ``participant_id`` (whose real name is ``name``) on a run
        submitted under the team ``team_id`` (None for none)."""
        if not self.pseudonymous or self.own(participant_id, team_id):
            return name
        return f"Participant {self.participants.get(participant_id, len(self.participants) + 1)}"

    def team(self, team_id: int | None, name: str, participant_id: int | None) -> str:
        """The name to show for a run's team (``name`` real, "" for none) by
        ``participant_id``: the participant and the team's members see its name."""
        if not self.pseudonymous or not name or self.own(participant_id, team_id):
            return name
        return f"Team {self.teams.get(team_id, len(self.teams) + 1)}"


def names_for(benchmark: Benchmark, user, now: dt.datetime | None = None) -> Names:
    """The names ``user`` sees on ``benchmark`` (two queries when pseudonyms apply: the
    reader's team and the benchmark's runs)."""
    viewer = user.pk if user.is_authenticated else None
    if not benchmark.anonymous or benchmark.revealed(now) or benchmark.is_organised_by(user):
        return Names(viewer)
    teams = Profile.objects.filter(user_id=viewer).values_list("team_id", flat=True)
    names = Names(viewer, pseudonymous=True, viewer_team_id=teams.first() if viewer else None)
    runs = (
        Submission.objects.for_benchmark(benchmark)
        .order_by("created", "pk")
        .values_list("participant_id", "team_id")
    )
    for participant, team in runs:
        names.participants.setdefault(participant, len(names.participants) + 1)
        if team is not None:
            names.teams.setdefault(team, len(names.teams) + 1)
    return names


def rename_rows(rows: list, benchmark: Benchmark, user) -> list:
    """Board rows (``boards.Row``) with the names ``user`` sees, in place; returns them."""
    names = names_for(benchmark, user)
    if not names.pseudonymous:
        return rows
    for row in rows:
        kind, _, key = row.group.partition(":")
        team_id = int(key) if kind == "team" else None
        row.team = names.team(team_id, row.team, row.participant_id)
        row.participant = names.participant(row.participant_id, row.participant, team_id)
    return rows


def shown_names(run: Submission, user, cache: dict | None = None) -> tuple[str, str]:
    """A run's participant and team names as ``user`` sees them ("" for no team).
    ``cache`` (per request) keeps one ``Names`` per benchmark over many runs; a list of
    runs selects ``participant__profile`` with them, else each run reads its profile."""
    cache = {} if cache is None else cache
    names = cache.get(run.benchmark_id)
    if names is None:
        names = cache[run.benchmark_id] = names_for(run.benchmark, user)
    try:  # loaded with the run where a list asked for it (``participant__profile``)
        profile = run.participant.profile
    except Profile.DoesNotExist:  # no profile yet: the defaults
        profile = Profile(user=run.participant)
    team = run.team  # the team it was submitted under, not the participant's now
    return (
        names.participant(run.participant_id, profile.public_name, run.team_id),
        names.team(run.team_id, team.name if team is not None else "", run.participant_id),
    )
