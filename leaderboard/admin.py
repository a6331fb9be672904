"""The organizers' side: benchmarks, needs, judgments and runs in the Django admin.

An organizer (a staff user) sees and edits only the benchmarks they organise and the
runs submitted to them, and nothing names another benchmark or lists the site's users:
list filters and foreign-key choices hold only their benchmarks, and co-organizers are
named by exact username in a text field. Superusers see everything. Needs and judgments
are uploaded as files on the benchmark's form and validated by the engine with
line-numbered errors, or read from an ir_datasets id given on the same form.
"""

from __future__ import annotations

import os

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest

from leaderboard.admin_forms import BenchmarkForm, OrganizerBenchmarkForm, PhaseForm
from leaderboard.admin_runs import counted
from leaderboard.admin_scoping import BENCHMARK_FILTER, OrganizerScoped, organises
from leaderboard.models import (
    Benchmark,
    InformationNeed,
    Judgments,
    Phase,
)
from leaderboard.models.phases import utc
from leaderboard.pipeline.datasets import load_dataset
from leaderboard.pipeline.files import StorageUnavailable
from leaderboard.pipeline.loading import (
    SCORING_SETTINGS,
    TESTED_SETTINGS,
    load_judgments,
    load_needs,
    rescore_benchmark,
    settings_changed,
)
from leaderboard.pipeline.tasks import (
    queue_split,
)

JUDGMENTS_NOT_STORED = (
    "The file store is not answering, so the judgments file was not stored (the rest "
    "was saved). Upload it again in a few minutes."
)


class PhaseFormSet(BaseInlineFormSet):
    def _construct_form(self, i, **kwargs):
        # Every stored phase of the benchmark is a row here, checked against the others
        # as posted (clean below), not as stored: a boundary moved in one save is no
        # overlap with the stored times it replaces.
        form = super()._construct_form(i, **kwargs)
        form.instance.checked_beside = frozenset(phase.pk for phase in self.get_queryset())
        return form

    def clean(self) -> None:
        super().clean()
        for form in self.deleted_forms:  # a phase that still hides runs stays (the API's 409)
            refusal = form.instance.pk and form.instance.deletion_refusal()
            if refusal:
                raise ValidationError(refusal)
        if any(self.errors):
            return
        # The phases as they will be stored, checked against each other (Phase.clean
        # leaves the stored rows to this check, _construct_form).
        kept = sorted(
            (
                form.cleaned_data
                for form in self.forms
                if form not in self.deleted_forms
                and form.cleaned_data.get("opens")
                and form.cleaned_data.get("closes")
            ),
            key=lambda phase: phase["opens"],
        )
        for earlier, later in zip(kept, kept[1:], strict=False):
            if later["opens"] < earlier["closes"]:
                raise ValidationError(
                    f"The phases {earlier['name']} ({utc(earlier['opens'])} to "
                    f"{utc(earlier['closes'])}) and {later['name']} ({utc(later['opens'])} to "
                    f"{utc(later['closes'])}) overlap: phases may not overlap."
                )


class PhaseInline(admin.TabularInline):
    """A campaign's phases on its benchmark's form (times in UTC); permissions follow the
    benchmark's (``obj`` is the benchmark here)."""

    model = Phase
    form = PhaseForm
    formset = PhaseFormSet
    extra = 0
    fields = [
        "name",
        "opens",
        "closes",
        "daily_limit",
        "total_limit",
        "team_daily_limit",
        "team_total_limit",
        "final_runs",
        "board",
    ]

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return organises(request, obj)

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return organises(request, obj)

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return organises(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return organises(request, obj)


@admin.register(Benchmark)
class BenchmarkAdmin(OrganizerScoped, admin.ModelAdmin):
    benchmark_path = "pk"
    form = BenchmarkForm
    inlines = [PhaseInline]
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
        if change:
            rescored, compared = settings_changed(benchmark, form.changed_data)
            if set(SCORING_SETTINGS) & set(form.changed_data):
                changed = ", ".join(f for f in SCORING_SETTINGS if f in form.changed_data)
                self.message_user(
                    request, f"{changed} changed: {rescored} runs queued for rescoring."
                )
            elif set(TESTED_SETTINGS) & set(form.changed_data):
                self.message_user(request, f"Tests queued: {compared} runs; rescoring: {rescored}.")
        if "reveal_at" in form.changed_data or any(f.has_changed() for f in formsets):
            self._warn_of_an_early_reveal(request, benchmark)
        if "co_organizers" in form.cleaned_data:
            benchmark.organizers.set(form.cleaned_data["co_organizers"])
        if not request.user.is_superuser:
            benchmark.organizers.add(request.user)
        dataset = form.cleaned_data.get("ir_datasets_files")
        if dataset is not None:
            count, judgments = load_dataset(benchmark, dataset)
            self.message_user(
                request,
                f"From ir_datasets {dataset.dataset_id}: {count} needs; judgments "
                f"v{judgments.version}: {judgments.num_judged} judgments of "
                f"{judgments.num_needs} needs; runs queued for rescoring.",
            )
        split = form.cleaned_data.get("split")
        if split is not None:
            try:
                if benchmark.set_split(*split):
                    queue_split(benchmark)
                    self.message_user(
                        request,
                        f"{len(benchmark.private_needs)} private needs; the scored runs' "
                        "public and private scores are being derived.",
                    )
            except ValidationError as error:
                self.message_user(request, " ".join(error.messages), messages.ERROR)
        needs = form.cleaned_data.get("needs_file")
        if needs:
            count = load_needs(benchmark, needs, os.path.basename(needs.name))
            self.message_user(request, f"Loaded {count} information needs.")
        qrels = form.cleaned_data.get("qrels_file")
        if qrels:
            before = benchmark.latest_judgments
            try:
                judgments = load_judgments(benchmark, qrels, os.path.basename(qrels.name))
            except StorageUnavailable:
                self.message_user(request, JUDGMENTS_NOT_STORED, messages.ERROR)
                return
            if before is not None and judgments.pk == before.pk:
                self.message_user(
                    request,
                    f"Judgments v{judgments.version} are {os.path.basename(qrels.name)} "
                    "already (the same judgments): no new version, nothing rescored.",
                    messages.WARNING,
                )
                return
            self.message_user(
                request,
                f"Judgments v{judgments.version}: {judgments.num_judged} judgments of "
                f"{judgments.num_needs} needs; {judgments.queued} runs queued for rescoring.",
            )

    def _warn_of_an_early_reveal(self, request: HttpRequest, benchmark: Benchmark) -> None:
        """A reveal before a phase closes shows that phase's runs' scores on every need
        (and its board, were it hidden) while it still takes runs: allowed (a phase of
        late runs after the official results), but rarely meant."""
        if benchmark.reveal_at is None:
            return
        late = benchmark.phases.filter(closes__gt=benchmark.reveal_at).order_by("closes").last()
        hides = benchmark.has_split or benchmark.anonymous or late and late.board != "public"
        if late is not None and hides:
            self.message_user(
                request,
                f"The reveal at {utc(benchmark.reveal_at)} comes before the phase {late.name} "
                f"closes at {utc(late.closes)}: from the reveal, what it keeps hidden (the "
                "private needs' scores, a hidden board, real names) shows while runs are "
                "still submitted.",
                messages.WARNING,
            )

    @admin.action(description="Rescore all runs against the latest judgments")
    def rescore_all(self, request, queryset) -> None:
        total = sum(rescore_benchmark(benchmark) for benchmark in queryset)
        self.message_user(request, f"Queued {total} runs for rescoring.", messages.SUCCESS)

    @admin.action(description="Open for submissions")
    def open_submissions(self, request, queryset) -> None:
        opened = queryset.filter(is_open=False).update(is_open=True)
        self.message_user(request, f"Opened {counted(opened, 'benchmark')} for submissions.")
        for benchmark in queryset.prefetch_related("phases"):
            window = benchmark.window()
            if benchmark.phase_list and not window.open:  # the switch alone takes no run
                self.message_user(request, f"{benchmark.title}: {window.refusal}", messages.WARNING)

    @admin.action(description="Close for submissions")
    def close_submissions(self, request, queryset) -> None:
        closed = queryset.filter(is_open=True).update(is_open=False)
        self.message_user(request, f"Closed {counted(closed, 'benchmark')} for submissions.")


@admin.register(InformationNeed)
class InformationNeedAdmin(OrganizerScoped, admin.ModelAdmin):
    list_display = ["need_id", "title", "benchmark"]
    list_filter = [BENCHMARK_FILTER]
    search_fields = ["need_id", "title"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return organises(request, None)


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
    exclude = ["need_ids", "part", "parent"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # the uploaded versions; their public and private parts follow the benchmark's split
        return super().get_queryset(request).filter(part="")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # new versions come from the benchmark form's qrels upload

    def delete_model(self, request: HttpRequest, obj: Judgments) -> None:
        self.delete_queryset(request, Judgments.objects.filter(pk=obj.pk))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        # The boards read the current version: once it is gone, the latest version left
        # becomes current if every run has it, else every run is rescored against it (the
        # switch then comes as after an upload).
        benchmarks = list(Benchmark.objects.filter(judgments__in=queryset).distinct())
        super().delete_queryset(request, queryset)
        for benchmark in benchmarks:
            benchmark.refresh_from_db()
            latest = benchmark.latest_judgments
            if benchmark.current_judgments_id is not None or latest is None:
                continue
            if not benchmark.promote_judgments_if_complete(latest):
                queued = rescore_benchmark(benchmark)
                self.message_user(
                    request,
                    f"{benchmark.title}: its current judgments were deleted; {queued} runs "
                    f"queued for rescoring against v{latest.version}, shown once all have it.",
                    messages.WARNING,
                )


# The runs' admin and the participants' side (tokens, names, teams, users) register
# themselves from their modules.
from leaderboard import admin_people, admin_runs  # noqa: E402, F401
