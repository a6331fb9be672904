"""Phases of a campaign: when a benchmark accepts runs, and how many.

A benchmark with no phases is an ever-open leaderboard: ``Benchmark.is_open`` alone says
whether it takes runs, and its daily limit counts per participant. A benchmark with phases
takes runs only while one of them is open (``opens <= t < closes`` on the server's
clock), and only while ``is_open`` too (the organizer's switch stays the emergency stop).
An upload whose request began before the close is still taken for
``UPLOAD_GRACE_SECONDS`` after it, so the participant who presses "submit" at 23:59 is
not refused for the minutes the file takes to arrive.

A phase may bound submissions per participant and per team, per UTC day and in the whole
phase; runs that failed do not count (nothing was scored), withdrawn and hidden ones do
(their scores were seen). A run's team is the one its participant was in when it was
submitted (``Submission.team``), so leaving a team does not give its runs back.

Imports ``submissions`` only, as ``benchmarks`` does.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q

from leaderboard.models.submissions import Submission, utc_day_start


def grace() -> dt.timedelta:
    return dt.timedelta(seconds=settings.UPLOAD_GRACE_SECONDS)


def utc(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


class PhaseQuerySet(models.QuerySet):
    def open_at(self, moment: dt.datetime) -> PhaseQuerySet:
        return self.filter(opens__lte=moment, closes__gt=moment)


class Phase(models.Model):
    benchmark = models.ForeignKey(
        "leaderboard.Benchmark", on_delete=models.CASCADE, related_name="phases"
    )
    name = models.CharField(max_length=80, help_text="For example “Development” or “Test”.")
    opens = models.DateTimeField(help_text="UTC. Runs are taken from this moment.")
    closes = models.DateTimeField(
        help_text="UTC. Runs are refused from this moment, but for an upload that began "
        "before it (taken within the grace period)."
    )
    daily_limit = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Runs per participant per UTC day in this phase; empty: the benchmark's.",
    )
    total_limit = models.PositiveIntegerField(
        null=True, blank=True, help_text="Runs per participant in the whole phase; empty: none."
    )
    team_daily_limit = models.PositiveIntegerField(
        null=True, blank=True, help_text="Runs per team per UTC day; empty: none."
    )
    team_total_limit = models.PositiveIntegerField(
        null=True, blank=True, help_text="Runs per team in the whole phase; empty: none."
    )
    board = models.CharField(
        max_length=10,
        choices=[
            ("public", "public"),
            ("owners", "each owner sees their own runs"),
            ("hidden", "hidden until the reveal"),
        ],
        default="public",
        help_text="Who sees this phase's runs and scores before the benchmark's reveal: "
        "everyone, each participant their own, or only the organizers.",
    )
    final_runs = models.PositiveIntegerField(
        "final runs per team",
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Runs each team may mark final in this phase; empty: the benchmark's.",
    )

    objects = PhaseQuerySet.as_manager()

    # Stored phases ``clean`` leaves out of its overlap check: those a caller checks this
    # one against as they will be stored (the admin's phase rows, saved together).
    checked_beside: frozenset[int] = frozenset()

    class Meta:
        ordering = ["benchmark", "opens"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "name"], name="unique_phase_name"),
            models.CheckConstraint(
                condition=Q(closes__gt=F("opens")), name="phase_closes_after_it_opens"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({utc(self.opens)} to {utc(self.closes)})"

    def clean(self) -> None:
        if self.opens and self.closes and self.closes <= self.opens:
            raise ValidationError({"closes": "A phase must close after it opens."})
        if self.opens and self.closes and self.benchmark_id:
            overlapping = (
                Phase.objects.filter(benchmark_id=self.benchmark_id)
                .exclude(pk=self.pk)
                .exclude(pk__in=self.checked_beside)
                .filter(opens__lt=self.closes, closes__gt=self.opens)
                .first()
            )
            if overlapping is not None:
                raise ValidationError(f"This phase overlaps the phase {overlapping}.")

    def is_open_at(self, moment: dt.datetime) -> bool:
        return self.opens <= moment < self.closes

    def board_open(self, now: dt.datetime | None = None) -> bool:
        """Whether everyone sees this phase's runs and scores: a public board, or the
        benchmark revealed (``Submission.visible_to`` holds the rule for many runs)."""
        return self.board == "public" or self.benchmark.revealed(now)

    def board_note(self, now: dt.datetime | None = None) -> str:
        """The phase's board policy in one sentence ("" while everyone sees it)."""
        if self.board_open(now):
            return ""
        reveal = self.benchmark.reveal_at
        until = f"the reveal at {utc(reveal)}" if reveal else "the reveal (not yet scheduled)"
        if self.board == "owners":
            return (
                f"{self.name} phase: each participant sees only their own and their team's "
                f"runs until {until}."
            )
        return f"{self.name} phase: scores hidden until {until}."

    def deletion_refusal(self, now: dt.datetime | None = None) -> str:
        """Why the phase may not be deleted now ("" if it may): its runs would leave it
        for no phase, whose board is open, and so show what its board still hides."""
        if self.board_open(now):
            return ""
        held = self.runs().count()
        if not held:
            return ""
        what = "scores" if self.board == "hidden" else "runs"
        return (
            f"The phase {self.name} holds {held} run(s) whose {what} are hidden until the "
            f"reveal; deleted, its runs would be outside any phase and shown to everyone. "
            f"Set its board to public first if that is meant."
        )

    def scores_note(self) -> str:
        """What a run page says in place of a hidden phase's scores."""
        reveal = self.benchmark.reveal_at
        at = f"at {utc(reveal)}" if reveal else "(not yet scheduled)"
        return f"Scores of the {self.name} phase are shown from the reveal {at}."

    def runs(self) -> models.QuerySet:
        """The runs that count against this phase's limits: submitted in it, not failed."""
        return Submission.objects.filter(phase=self).exclude(status=Submission.Status.FAILED)

    def limit_reached(self, user, team, now: dt.datetime) -> LimitReached | None:
        """The limit ``user`` (in ``team``, or None) has reached in this phase, if any.
        The caller holds the user's row lock, so two uploads cannot both take the last
        slot."""
        today = self.runs().filter(created__gte=utc_day_start(now))
        tomorrow = utc_day_start(now) + dt.timedelta(days=1)
        daily = self.daily_limit if self.daily_limit is not None else self.benchmark.daily_limit
        checks = [(daily, today.filter(participant=user), "You have", tomorrow)]
        checks.append((self.total_limit, self.runs().filter(participant=user), "You have", None))
        if team is not None:
            checks.append(
                (self.team_daily_limit, today.filter(team=team), "Your team has", tomorrow)
            )
            checks.append(
                (self.team_total_limit, self.runs().filter(team=team), "Your team has", None)
            )
        for limit, runs, who, resets in checks:
            if limit is not None and runs.count() >= limit:
                text = f"{who} used all {limit} submissions"
                if resets:
                    text += f" today of the phase {self.name}; the count resets at {utc(resets)}."
                else:
                    text += f" of the phase {self.name}."
                return LimitReached(text, limit, resets)
        return None


@dataclass(frozen=True)
class LimitReached:
    """A submission limit that refuses one more run: the message, the limit, and when
    it resets (the next UTC midnight; None for a limit on the whole phase)."""

    message: str
    limit: int
    resets_at: dt.datetime | None


@dataclass(frozen=True)
class Window:
    """Whether a benchmark takes a run now: the phase it goes to (None on a benchmark
    without phases) or the refusal, with the times a participant needs."""

    phase: Phase | None
    refusal: str = ""

    @property
    def open(self) -> bool:
        return not self.refusal

    def limit_reached(self, benchmark, user, team, now: dt.datetime) -> LimitReached | None:
        """The limit that keeps ``user`` from submitting one more run to ``benchmark``
        now: the phase's, or without phases the benchmark's daily limit; None if none."""
        if self.phase is not None:
            return self.phase.limit_reached(user, team, now)
        used = Submission.objects.for_benchmark(benchmark).counted_today(user)
        if used >= benchmark.daily_limit:
            resets = utc_day_start(now) + dt.timedelta(days=1)
            return LimitReached(
                f"You have used all {benchmark.daily_limit} submissions for today; "
                f"the count resets at {utc(resets)}.",
                benchmark.daily_limit,
                resets,
            )
        return None


def window(benchmark, started: dt.datetime, now: dt.datetime) -> Window:
    """The phase a run whose upload began at ``started`` and arrives at ``now`` belongs to.

    Without phases, ``is_open`` decides. With phases: the phase open at ``started``, as
    long as ``now`` is within the grace after its close; an upload that began between
    phases, the phase open when it arrives. Otherwise a refusal that says why: the
    upload outlasted its phase's grace (and which phase is open now), or the phase that
    closed (and when) and the next one (and when it opens)."""
    if not benchmark.is_open:
        return Window(None, "This benchmark is closed for submissions.")
    phases = benchmark.phase_list
    if not phases:
        return Window(None)
    for phase in phases:
        if phase.is_open_at(started) and now < phase.closes + grace():
            return Window(phase)
    began = next((p for p in phases if p.is_open_at(started)), None)
    arrived = next((p for p in phases if p.is_open_at(now)), None)
    if began is None and arrived is not None:  # began before a phase opened, ends in it
        return Window(arrived)
    if began is not None:  # began in a phase, arrived after its close and the grace
        seconds = int(grace().total_seconds())
        lasts = f"{seconds // 60} minutes" if seconds and not seconds % 60 else f"{seconds} seconds"
        late = (
            f"Your upload began in the phase {began.name}, which closed at {utc(began.closes)}; "
            f"it arrived at {utc(now)}, after the grace of {lasts}."
        )
        if arrived is not None:
            late += f" The phase {arrived.name} is open: submit the run again to enter it there."
        return Window(None, late)
    upcoming = [p for p in phases if p.opens > now]
    closed = [p for p in phases if p.closes <= now]
    if upcoming:
        nxt = min(upcoming, key=lambda p: p.opens)
        ended = (
            f" The phase {closed[-1].name} closed at {utc(closed[-1].closes)}." if closed else ""
        )
        return Window(
            None,
            f"Submissions are not open now.{ended} The phase {nxt.name} opens at {utc(nxt.opens)}.",
        )
    last = max(phases, key=lambda p: p.closes)
    return Window(
        None, f"Submissions are closed: the phase {last.name} closed at {utc(last.closes)}."
    )


@dataclass(frozen=True)
class Quota:
    """A participant's submissions on a benchmark today: what the submit form and the
    API's quota show. ``limit`` is the phase's daily limit (the benchmark's without
    phases); ``window`` says whether a run is taken now, and into which phase."""

    window: Window
    limit: int
    used_today: int
    resets_at: dt.datetime

    @property
    def remaining_today(self) -> int:
        return max(self.limit - self.used_today, 0)


def quota(benchmark, user, now: dt.datetime) -> Quota:
    taken = window(benchmark, now, now)
    phase = taken.phase
    if phase is None:
        used = Submission.objects.for_benchmark(benchmark).counted_today(user)
        limit = benchmark.daily_limit
    else:
        used = phase.runs().filter(participant=user, created__gte=utc_day_start(now)).count()
        limit = phase.daily_limit if phase.daily_limit is not None else benchmark.daily_limit
    return Quota(taken, limit, used, utc_day_start(now) + dt.timedelta(days=1))


@dataclass(frozen=True)
class Timeline:
    """A benchmark's phases seen at ``now``: the one open, the next, the last closed."""

    phases: list[Phase]
    now: dt.datetime

    @property
    def current(self) -> Phase | None:
        return next((p for p in self.phases if p.is_open_at(self.now)), None)

    @property
    def next(self) -> Phase | None:
        return min(
            (p for p in self.phases if p.opens > self.now), key=lambda p: p.opens, default=None
        )

    @property
    def last_closed(self) -> Phase | None:
        closed = [p for p in self.phases if p.closes <= self.now]
        return max(closed, key=lambda p: p.closes, default=None)


def timeline(benchmark, now: dt.datetime) -> Timeline:
    return Timeline(benchmark.phase_list, now)
