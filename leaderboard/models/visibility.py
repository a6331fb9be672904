"""Who sees which run, and whose scores: the one rule every board, list, page, export,
comparison, matrix, plot and statistic reads.

Anyone sees a run that is neither hidden, withdrawn nor failed, scored at least once (a
run being rescored keeps its place), and on an open board (``open_board``). Its owners,
the benchmark's organizers and superusers see every run, whatever its state. A campaign
phase's board narrows this until the benchmark's reveal (``Benchmark.reveal_at``): an
"owners" phase's runs are shown to their owners and the organizers only; a "hidden"
phase's runs to the same people, but their scores to the organizers only (owners see
the run and its status).

A run's owners are its participant and the members of the team it was submitted under
(``Submission.team``) as that team is now (``Profile.team`` equal to the run's team):
the team's runs are each member's own, as its final runs are (``finals``). So a member
who joins sees the team's earlier runs, and one who leaves stops seeing the team's runs
but their own. Owners see; changing a run (edit, hide as its participant, withdraw)
stays its participant's (``Submission.is_submitted_by``).

``VisibilityQuerySet`` (many runs) and ``RunVisibility`` (one run) are mixed into
``SubmissionQuerySet`` and ``Submission``, so ``Submission.objects.visible_to(user)``
and ``run.scores_visible_to(user)`` are where callers ask; the two agree on every run.

Imports ``people``; reaches ``Submission`` through ``self`` and ``Result`` through the
app registry (``submissions`` imports this module).
"""

from __future__ import annotations

import datetime as dt

from django.apps import apps
from django.db import models
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from leaderboard.models.people import Profile


def _public() -> Q:
    """Runs anyone may see on a public board (the condition, not the phase's board)."""
    Result = apps.get_model("leaderboard", "Result")
    return (
        Q(is_hidden=False)
        & ~Q(status__in=["withdrawn", "failed"])
        & Q(Exists(Result.objects.filter(submission=OuterRef("pk"))))
    )


def open_board(now: dt.datetime | None = None) -> Q:
    """Runs whose phase shows them to everyone: no phase, a public board, or the benchmark
    revealed. Before the reveal an "owners" phase's runs are their owners' and the
    organizers' only, and a "hidden" phase's scores the organizers' only."""
    now = now or timezone.now()
    return (
        Q(phase__isnull=True)
        | Q(phase__board="public")
        | Q(benchmark__reveal_at__isnull=False, benchmark__reveal_at__lte=now)
    )


def owned_by(user) -> Q:
    """Runs ``user`` (signed in) owns: submitted by them, or under the team they are a
    member of now."""
    team = Profile.objects.filter(user=user, team__isnull=False).values("team")
    return Q(participant=user) | Q(team__in=team)


class VisibilityQuerySet(models.QuerySet):
    """The rule over many runs (mixed into ``SubmissionQuerySet``)."""

    def visible_to(self, user) -> VisibilityQuerySet:
        """Runs ``user`` may see exist (on boards, lists and their pages): anyone the
        public ones on an open board; their owners, the organizers and superusers all of
        them. Whether their scores are shown is ``scores_visible_to``."""
        public = _public() & open_board()
        if not user.is_authenticated:
            return self.filter(public)
        if user.is_superuser:
            return self
        return self.filter(public | owned_by(user) | Q(benchmark__organizers=user)).distinct()

    def scores_visible_to(self, user) -> VisibilityQuerySet:
        """The runs of ``visible_to`` whose scores ``user`` may see: all but their owners'
        runs of a hidden phase before the reveal (only organizers see those scores).
        Every read of scores (boards, comparisons, exports, matrices, plots, the field of
        a run's results, health) lists runs through this."""
        if not user.is_authenticated:
            return self.visible_to(user)
        if user.is_superuser:
            return self
        hidden_phase = (
            self.model.objects.filter(phase__board="hidden")
            .exclude(benchmark__reveal_at__lte=timezone.now())
            .values("pk")
        )
        shown = (
            (_public() & open_board())
            | Q(benchmark__organizers=user)
            | (owned_by(user) & ~Q(pk__in=hidden_phase))
        )
        return self.filter(shown).distinct()


class RunVisibility:
    """The rule for one run (mixed into ``Submission``): the same answers as
    ``VisibilityQuerySet`` for that run."""

    def has_owner(self, user) -> bool:
        """Whether ``user`` owns the run: its participant, or a member now of the team it
        was submitted under (``owned_by`` for one run)."""
        if not user.is_authenticated:
            return False
        if user.pk == self.participant_id:
            return True
        return (
            self.team_id is not None
            and Profile.objects.filter(user=user, team_id=self.team_id).exists()
        )

    def is_visible_to(self, user) -> bool:
        """One run's ``VisibilityQuerySet.visible_to``."""
        public = not self.is_hidden and self.status not in (
            self.Status.WITHDRAWN,
            self.Status.FAILED,
        )
        if (
            public
            and self.board_open()
            and (self.status == self.Status.SCORED or self.results.exists())
        ):
            return True
        return self.has_owner(user) or self.benchmark.is_organised_by(user)

    def board_open(self) -> bool:
        """Whether the run's phase shows it to everyone (``open_board`` for one run)."""
        if self.phase_id is None or self.benchmark.revealed():
            return True
        return self.phase.board == "public"

    def scores_hidden(self) -> bool:
        """Whether the run's scores are the organizers' only: a hidden phase's, before the
        reveal."""
        return self.phase_id is not None and self.phase.board == "hidden" and not self.board_open()

    def scores_visible_to(self, user) -> bool:
        """One run's ``VisibilityQuerySet.scores_visible_to``."""
        if not self.is_visible_to(user):
            return False
        return not self.scores_hidden() or self.benchmark.is_organised_by(user)

    def scores_note(self, user) -> str:
        """Why ``user``, who may see the run, sees no scores of it ("" if they do)."""
        if self.scores_visible_to(user) or not self.scores_hidden():
            return ""
        return self.phase.scores_note()
