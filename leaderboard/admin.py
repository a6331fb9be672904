"""The organizers' side: benchmarks, needs, judgments and runs in the Django admin.

An organizer (a staff user) sees and edits only the benchmarks they organise and the
runs submitted to them, and nothing names another benchmark or lists the site's users:
list filters and foreign-key choices hold only their benchmarks, and co-organizers are
named by exact username in a text field. Superusers see everything. Needs and judgments
are uploaded as files on the benchmark's form and validated by the engine with
line-numbered errors.
"""

from __future__ import annotations

import os

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.http import HttpRequest

from evaluation.trec import TrecFormatError, read_needs, read_qrels
from leaderboard.measure_fields import MeasureListField, catalog_column
from leaderboard.models import ApiToken, Benchmark, InformationNeed, Judgments, Submission
from leaderboard.pipeline.files import max_uncompressed_bytes
from leaderboard.pipeline.loading import (
    load_judgments,
    load_needs,
    queue_measure_tests,
    rescore_benchmark,
)
from leaderboard.pipeline.tasks import queue_comparisons, queue_rescore


def _organises(request: HttpRequest, benchmark: Benchmark | None) -> bool:
    user = request.user
    if not (user.is_active and user.is_staff):
        return False
    if user.is_superuser or benchmark is None:
        return True
    return benchmark.is_organised_by(user)


class OrganisedBenchmarkFilter(admin.RelatedFieldListFilter):
    """The benchmark list filter, offering only the benchmarks the user organises."""

    def field_choices(self, field, request, model_admin):
        ordering = self.field_admin_ordering(field, request, model_admin)
        mine = Benchmark.objects.organised_by(request.user).values("pk")
        return field.get_choices(
            include_blank=False, ordering=ordering, limit_choices_to={"pk__in": mine}
        )


BENCHMARK_FILTER = ("benchmark", OrganisedBenchmarkFilter)


class OrganizerScoped:
    """Permissions by organisership instead of Django's per-model permissions."""

    benchmark_path = "benchmark"

    def _benchmark_of(self, obj) -> Benchmark | None:
        if obj is None:
            return None
        for part in self.benchmark_path.split("__"):
            obj = getattr(obj, part)
        return obj

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.filter(**{f"{self.benchmark_path}__organizers": request.user}).distinct()

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_staff

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return _organises(request, self._benchmark_of(obj))

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return _organises(request, self._benchmark_of(obj))

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return _organises(request, self._benchmark_of(obj))

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "benchmark" and not request.user.is_superuser:
            kwargs["queryset"] = Benchmark.objects.organised_by(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class BenchmarkForm(forms.ModelForm):
    shown_measures = MeasureListField(
        required=False,
        widget=forms.TextInput(attrs={"size": 60}),
        help_text="The leaderboard's columns besides the primary measure, separated by commas, "
        "in either name system: nDCG@10, RR@10, P@10 or ndcg_cut_10, recip_rank_cut_10, P_10.",
    )
    significance_measures = MeasureListField(
        label="Tested measures",
        required=False,
        widget=forms.TextInput(attrs={"size": 60}),
        help_text="Measures every pair of runs is tested on besides the primary measure "
        "(default AP). Changing them queues the missing tests at once.",
    )
    needs_file = forms.FileField(
        required=False, help_text="TSV need_id<TAB>title[<TAB>description] or TREC topics; gzip ok."
    )
    qrels_file = forms.FileField(
        required=False,
        help_text="need_id iteration doc_id relevance. Each upload is a new judgments version; "
        "every run is rescored and the leaderboard switches when all are done.",
    )

    class Meta:
        model = Benchmark
        fields = [
            "slug",
            "title",
            "description",
            "primary_measure",
            "shown_measures",
            "significance_measures",
            "interpolation",
            "relevance_level",
            "max_depth",
            "is_open",
            "daily_limit",
            "published",
            "organizers",
        ]

    def _validate(self, field: str, reader) -> None:
        upload = self.cleaned_data.get(field)
        if not upload:
            return
        try:
            reader(upload, name=os.path.basename(upload.name), max_bytes=max_uncompressed_bytes())
        except TrecFormatError as error:
            self.add_error(field, str(error))
        finally:
            upload.seek(0)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["interpolation"].required = False

    def _kept(self, field: str):
        """The posted value, or the stored one (the default on a new benchmark) when the
        field was not posted: forms posted before the field existed change nothing."""
        value = self.cleaned_data.get(field)
        if value is None or value == "":
            return getattr(self.instance, field)
        return value

    def clean_shown_measures(self) -> list[str]:
        return self._kept("shown_measures")

    def clean_significance_measures(self) -> list[str]:
        return self._kept("significance_measures")

    def clean_interpolation(self) -> str:
        return self._kept("interpolation")

    def clean_primary_measure(self) -> str:
        return catalog_column(self.cleaned_data["primary_measure"])

    def clean(self) -> dict:
        cleaned = super().clean()
        self._validate("needs_file", read_needs)
        self._validate("qrels_file", read_qrels)
        return cleaned


class OrganizerBenchmarkForm(BenchmarkForm):
    """The benchmark form an organizer gets: co-organizers by exact username instead of a
    list of every user of the site."""

    co_organizers = forms.CharField(
        required=False,
        widget=forms.TextInput(attrs={"size": 60}),
        help_text="Usernames of the benchmark's organizers, separated by commas or spaces, "
        "spelt exactly. You stay one. They need staff status to use the admin.",
    )

    class Meta(BenchmarkForm.Meta):
        fields = [name for name in BenchmarkForm.Meta.fields if name != "organizers"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            names = self.instance.organizers.order_by("username").values_list("username", flat=True)
            self.fields["co_organizers"].initial = ", ".join(names)

    def clean_co_organizers(self) -> list:
        names = list(dict.fromkeys(self.cleaned_data["co_organizers"].replace(",", " ").split()))
        users = list(get_user_model().objects.filter(username__in=names, is_active=True))
        unknown = sorted(set(names) - {user.get_username() for user in users})
        if unknown:
            raise forms.ValidationError(f"No active user is named {', '.join(unknown)}.")
        return users


@admin.register(Benchmark)
class BenchmarkAdmin(OrganizerScoped, admin.ModelAdmin):
    benchmark_path = "pk"
    form = BenchmarkForm
    list_display = ["title", "slug", "primary_measure", "is_open", "published", "judgments_version"]
    list_filter = ["is_open", "published"]
    search_fields = ["title", "slug"]
    prepopulated_fields = {"slug": ["title"]}
    filter_horizontal = ["organizers"]
    actions = ["rescore_all", "open_submissions", "close_submissions"]

    def _benchmark_of(self, obj) -> Benchmark | None:
        return obj

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return Benchmark.objects.organised_by(request.user).select_related("current_judgments")

    def get_form(self, request: HttpRequest, obj=None, change: bool = False, **kwargs):
        if not request.user.is_superuser:
            kwargs["form"] = OrganizerBenchmarkForm
        return super().get_form(request, obj, change, **kwargs)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_staff

    @admin.display(description="judgments")
    def judgments_version(self, obj: Benchmark) -> str:
        return f"v{obj.current_judgments.version}" if obj.current_judgments else "none"

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        benchmark = form.instance
        if change and "interpolation" in form.changed_data:
            count = rescore_benchmark(benchmark)
            self.message_user(request, f"Interpolation changed: {count} runs queued for rescoring.")
        elif change and {"primary_measure", "significance_measures"} & set(form.changed_data):
            rescored, compared = queue_measure_tests(benchmark)
            self.message_user(request, f"Tests queued: {compared} runs; rescoring: {rescored}.")
        if "co_organizers" in form.cleaned_data:
            benchmark.organizers.set(form.cleaned_data["co_organizers"])
        if not request.user.is_superuser:
            benchmark.organizers.add(request.user)
        needs = form.cleaned_data.get("needs_file")
        if needs:
            count = load_needs(benchmark, needs, os.path.basename(needs.name))
            self.message_user(request, f"Loaded {count} information needs.")
        qrels = form.cleaned_data.get("qrels_file")
        if qrels:
            judgments = load_judgments(benchmark, qrels, os.path.basename(qrels.name))
            self.message_user(
                request,
                f"Judgments v{judgments.version}: {judgments.num_judged} judgments of "
                f"{judgments.num_needs} needs; runs queued for rescoring.",
            )

    @admin.action(description="Rescore all runs against the latest judgments")
    def rescore_all(self, request, queryset) -> None:
        total = sum(rescore_benchmark(benchmark) for benchmark in queryset)
        self.message_user(request, f"Queued {total} runs for rescoring.", messages.SUCCESS)

    @admin.action(description="Open for submissions")
    def open_submissions(self, request, queryset) -> None:
        queryset.update(is_open=True)

    @admin.action(description="Close for submissions")
    def close_submissions(self, request, queryset) -> None:
        queryset.update(is_open=False)


@admin.register(InformationNeed)
class InformationNeedAdmin(OrganizerScoped, admin.ModelAdmin):
    list_display = ["need_id", "title", "benchmark"]
    list_filter = [BENCHMARK_FILTER]
    search_fields = ["need_id", "title"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return _organises(request, None)


@admin.register(Judgments)
class JudgmentsAdmin(OrganizerScoped, admin.ModelAdmin):
    list_display = ["benchmark", "version", "num_needs", "num_judged", "num_relevant", "created"]
    list_filter = [BENCHMARK_FILTER]
    readonly_fields = [
        "benchmark",
        "version",
        "file",
        "original_name",
        "sha256",
        "num_needs",
        "num_judged",
        "num_relevant",
        "created",
    ]
    exclude = ["need_ids"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # new versions come from the benchmark form's qrels upload


@admin.register(Submission)
class SubmissionAdmin(OrganizerScoped, admin.ModelAdmin):
    list_display = [
        "run_name",
        "benchmark",
        "participant",
        "status",
        "is_baseline",
        "is_hidden",
        "created",
        "short_failure",
    ]
    list_filter = [BENCHMARK_FILTER, "status", "is_baseline", "is_hidden"]
    search_fields = ["run_name", "participant__username"]
    readonly_fields = [
        "benchmark",
        "participant",
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
        "attempts",
        "task_id",
        "judgments",
    ]
    fields = ["run_name", "description", "is_baseline", "is_hidden", *readonly_fields]
    actions = ["mark_baseline", "unmark_baseline", "hide", "unhide", "withdraw", "rescore"]
    list_select_related = ["benchmark", "participant"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # runs come from participants' uploads

    @admin.display(description="failure")
    def short_failure(self, obj: Submission) -> str:
        return obj.failure_reason[:80]

    @admin.action(description="Mark as baseline")
    def mark_baseline(self, request, queryset) -> None:
        queryset.update(is_baseline=True)

    @admin.action(description="Unmark baseline")
    def unmark_baseline(self, request, queryset) -> None:
        queryset.update(is_baseline=False)

    @admin.action(description="Hide from the leaderboard")
    def hide(self, request, queryset) -> None:
        queryset.update(is_hidden=True)

    @admin.action(description="Show on the leaderboard")
    def unhide(self, request, queryset) -> None:
        queryset.update(is_hidden=False)
        # Hidden runs were left out of comparisons; test them now (only new pairs).
        queue_comparisons(queryset.filter(status=Submission.Status.SCORED))

    @admin.action(description="Withdraw")
    def withdraw(self, request, queryset) -> None:
        queryset.update(status=Submission.Status.WITHDRAWN)

    @admin.action(description="Rescore")
    def rescore(self, request, queryset) -> None:
        count = len(queue_rescore(queryset))
        self.message_user(request, f"Queued {count} runs for rescoring.")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Superusers can see and revoke tokens; the raw token is never stored."""

    list_display = ["user", "name", "created", "last_used"]
    search_fields = ["user__username", "name"]
    readonly_fields = ["user", "name", "sha256", "created", "last_used"]

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # tokens are issued by their owners on /accounts/tokens/

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
