"""Hiding a run from readers and showing it again: who may, and what the row records,
mixed into ``SubmissionQuerySet`` (``HidingQuerySet``: many runs, one UPDATE) and
``Submission`` (``RunHiding``: one run, its permission checked).

A run is hidden by its participant or by the benchmark's organizers, and the row records
which (``hidden_by``, ``hidden_by_organizer``). The participant may show again only a
run they hid themselves; the organizers may show any. Its teammates, who see the run as
theirs (``visibility``), neither hide nor show it. Every change of the hidden flag goes
through ``HidingQuerySet.hide`` and ``unhide`` (the run's own ``hide`` and ``unhide`` and
the admin's actions call them), so work that follows a change of what readers see has
one place to hook into.

Imports nothing else of ``models``: the mixins reach the model through ``self.model``
(a QuerySet) and ``type(self)`` (a run).
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import Case, F, When
from django.db.models.functions import Now


class HidingQuerySet(models.QuerySet):
    def hide(self, by, *, by_organizer: bool) -> list[int]:
        """Hide these runs (withdrawn ones excepted), recording that ``by`` hid them and
        whether as an organizer; returns the ids of those that were public.

        An organizer's hide takes over a run its participant hid (so the participant can
        no longer show it); a participant's hide leaves an organizer's as it is. Permission
        is the caller's to check (``Submission.hide``, the admin's organizer scoping).
        ``visibility_changed_at`` moves only for runs that were public."""
        runs = self.model.objects.filter(pk__in=self.values("pk")).live()
        public = list(runs.filter(is_hidden=False).values_list("pk", flat=True))
        if by_organizer:
            runs = runs.exclude(is_hidden=True, hidden_by_organizer=True)
        else:
            runs = runs.filter(is_hidden=False)
        runs.update(
            is_hidden=True,
            hidden_by=by if by is not None and by.is_authenticated else None,
            hidden_by_organizer=by_organizer,
            visibility_changed_at=Case(
                When(is_hidden=False, status=self.model.Status.SCORED, then=Now()),
                default=F("visibility_changed_at"),
            ),
        )
        return public

    def unhide(self, *, by_organizer: bool) -> list[int]:
        """Show these hidden runs to everyone again (withdrawn ones excepted); returns the
        ids shown. Without ``by_organizer`` only the runs their participant hid: an
        organizer's hide is the organizers' to undo. The caller queues the comparisons
        left untested while they were hidden (``pipeline.tasks.queue_comparisons``)."""
        hidden = self.model.objects.filter(pk__in=self.values("pk")).live().filter(is_hidden=True)
        if not by_organizer:
            hidden = hidden.filter(hidden_by_organizer=False)
        ids = list(hidden.values_list("pk", flat=True))
        hidden.filter(pk__in=ids).update(
            is_hidden=False,
            hidden_by=None,
            hidden_by_organizer=False,
            visibility_changed_at=Case(
                When(status=self.model.Status.SCORED, then=Now()),
                default=F("visibility_changed_at"),
            ),
        )
        return ids


class RunHiding:
    """One run's hiding and showing (mixed into ``Submission``)."""

    def why_not_hide(self, user) -> str:
        """Why ``user`` may not hide the run, or "" if they may: its participant and the
        benchmark's organizers may."""
        if self.is_submitted_by(user) or self.benchmark.is_organised_by(user):
            return ""
        return (
            "Only the participant who submitted a run, or the benchmark's organizers, may hide it."
        )

    def why_not_unhide(self, user) -> str:
        """Why ``user`` may not show the run again, or "" if they may: the organizers may
        show any hidden run, its participant only one they hid themselves."""
        if self.benchmark.is_organised_by(user):
            return ""
        if not self.is_submitted_by(user):
            return (
                "Only the participant who submitted a run, or the benchmark's organizers, "
                "may show it again."
            )
        if self.is_hidden and self.hidden_by_organizer:
            return (
                f"Run {self.run_name} was hidden by the benchmark's organizers; ask them to "
                "show it again."
            )
        return ""

    def hide(self, by) -> bool:
        """Hide the run from the public board; True if it was public.

        Its participant or the benchmark's organizers may (``why_not_hide``, else
        ``PermissionDenied`` with the reason); the row records which, and a participant's
        own hide is theirs to undo while an organizer's is not (an organizer hiding their
        own run hides it as its participant).

        Hiding keeps the stored comparisons (raw p-values; the board forms its families
        from the runs it shows, so a hidden run is in none of the public ones) and new
        runs are not tested against a hidden one. So showing it again leaves pairs to
        test: the caller queues them (``pipeline.tasks.queue_comparisons``). A withdrawn
        run stays as it is: ``ValueError``."""
        if reason := self.why_not_hide(by):
            raise PermissionDenied(reason)
        if self.is_withdrawn:
            raise ValueError(f"Run {self.run_name} is withdrawn; it is off the board for good.")
        organizer = not self.is_submitted_by(by)
        changed = type(self).objects.filter(pk=self.pk).hide(by, by_organizer=organizer)
        self.refresh_from_db()
        return bool(changed)

    def unhide(self, by) -> bool:
        """Show the hidden run to everyone again; True if it was hidden.

        ``PermissionDenied`` with the reason (``why_not_unhide``) for a participant whose
        run the organizers hid, or anyone neither its participant nor an organizer. A
        withdrawn run stays as it is: ``ValueError``. The caller queues the comparisons
        left untested while it was hidden."""
        if reason := self.why_not_unhide(by):
            raise PermissionDenied(reason)
        if self.is_withdrawn:
            raise ValueError(f"Run {self.run_name} is withdrawn; it is off the board for good.")
        organizer = self.benchmark.is_organised_by(by)
        shown = type(self).objects.filter(pk=self.pk).unhide(by_organizer=organizer)
        self.refresh_from_db()
        return bool(shown)
