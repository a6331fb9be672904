"""The runs in the organizers' admin: their list (scoped to the user's benchmarks), the
actions on them (baseline, hide, show, withdraw, rescore), each saying what it changed,
and their form (a name another run of the benchmark holds is refused, as on upload).
Registered when ``leaderboard.admin`` imports it."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest

from leaderboard.admin_scoping import BENCHMARK_FILTER, OrganizerScoped
from leaderboard.models import Benchmark, Submission
from leaderboard.pipeline.tasks import health_changed, queue_comparisons, queue_rescore


def counted(count: int, noun: str = "run") -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _others(queryset: QuerySet, done: list[int]) -> str:
    """How many of the selected runs the action left as they were (already so, or
    withdrawn), for its message."""
    left = queryset.count() - len(done)
    if not left:
        return ""
    return " (1 left as it was)" if left == 1 else f" ({left} left as they were)"


class SubmissionForm(forms.ModelForm):
    """A run as the organizers edit it. A new name another run of the benchmark holds is
    a form error, as on upload: the database's constraint (``unique_live_run_name``) is
    not checked by the form itself, since the benchmark and the status are not fields
    of it."""

    def clean_run_name(self) -> str:
        name = self.cleaned_data["run_name"]
        run = self.instance
        holds = Submission.objects.filter(pk=run.pk).holding_names().exists()
        others = Submission.objects.for_benchmark(run.benchmark).holding_name(name)
        if holds and others.exclude(pk=run.pk).exists():
            raise forms.ValidationError(f"A run named {name!r} already exists on this benchmark.")
        return name


@admin.register(Submission)
class SubmissionAdmin(OrganizerScoped, admin.ModelAdmin):
    form = SubmissionForm
    # "example.org/paper" means https://, as on the upload form
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    list_display = [
        "run_name",
        "benchmark",
        "participant",
        "team",  # the one it was submitted under: its final runs' and pool's team
        "status",
        "is_baseline",
        "is_hidden",
        "created",
        "short_failure",
    ]
    list_filter = [BENCHMARK_FILTER, "status", "is_baseline", "is_hidden"]
    search_fields = ["run_name", "participant__username", "team__name"]
    readonly_fields = [
        "benchmark",
        "participant",
        "team",
        "file",
        "size",
        "sha256",
        "status",
        "failure_reason",
        "warnings",
        "created",
        "queued_at",
        "started",
        "finished",
        "withdrawn_at",
        "attempts",
        "task_id",
        "judgments",
        # Hidden and shown through the actions, which record who hid the run.
        "is_hidden",
        "hidden_by",
        "hidden_by_organizer",
    ]
    fields = [
        "run_name",
        "description",
        "paper_url",
        "code_url",
        "is_baseline",
        *readonly_fields,
    ]
    actions = ["mark_baseline", "unmark_baseline", "hide", "unhide", "withdraw", "rescore"]
    list_select_related = ["benchmark", "participant", "team"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # runs come from participants' uploads

    @admin.display(description="failure")
    def short_failure(self, obj: Submission) -> str:
        return obj.failure_reason[:80]

    @admin.action(description="Mark as baseline")
    def mark_baseline(self, request, queryset) -> None:
        marked = queryset.filter(is_baseline=False).update(is_baseline=True)
        self.message_user(request, f"Marked {counted(marked)} as baseline.")

    @admin.action(description="Unmark baseline")
    def unmark_baseline(self, request, queryset) -> None:
        unmarked = queryset.filter(is_baseline=True).update(is_baseline=False)
        self.message_user(request, f"Unmarked {counted(unmarked)} as baseline.")

    @admin.action(description="Hide from the leaderboard")
    def hide(self, request, queryset) -> None:
        # An organizer's hide: the participant cannot show the run again.
        hidden = queryset.hide(request.user, by_organizer=True)
        health_changed(*Benchmark.objects.filter(submissions__in=queryset).distinct())
        self.message_user(request, f"Hid {counted(len(hidden))}{_others(queryset, hidden)}.")

    @admin.action(description="Show on the leaderboard")
    def unhide(self, request, queryset) -> None:
        shown = queryset.unhide(by_organizer=True)
        # Hidden runs were left out of comparisons; test them now (only new pairs).
        queue_comparisons(Submission.objects.filter(pk__in=shown).scored())
        health_changed(*Benchmark.objects.filter(submissions__in=queryset).distinct())
        self.message_user(request, f"Showed {counted(len(shown))}{_others(queryset, shown)}.")

    @admin.action(description="Withdraw")
    def withdraw(self, request, queryset) -> None:
        withdrawn = queryset.withdraw()  # records withdrawn_at, as the owner's does
        health_changed(*Benchmark.objects.filter(submissions__in=queryset).distinct())
        self.message_user(
            request, f"Withdrew {counted(len(withdrawn))}{_others(queryset, withdrawn)}."
        )

    @admin.action(description="Rescore")
    def rescore(self, request, queryset) -> None:
        count = len(queue_rescore(queryset))
        self.message_user(request, f"Queued {count} runs for rescoring.")
