"""What the API reads and writes, as DRF serializers (the schema is generated from them).

Output serializers take the models and the pages' plain objects (``boards.Row``,
dicts) as they are; input ones validate query strings and bodies (a bad value is a 400
naming the field). Numbers that are not finite (NaN, infinity) are ``null``: JSON has
none.
"""

from __future__ import annotations

import math

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from leaderboard.api.lenses import NEEDS_HELP, needs_field
from leaderboard.models import RUN_NAME_RE, Benchmark, Submission, run_name_validator
from leaderboard.reading.boards import measure_labels
from leaderboard.reading.lenses import NEEDS
from leaderboard.reading.names import shown_names

# --- Numbers -------------------------------------------------------------------------


class FiniteFloat(serializers.FloatField):
    def to_representation(self, value):
        value = float(value)
        return value if math.isfinite(value) else None


def summary_field(**kwargs) -> serializers.DictField:
    return serializers.DictField(
        child=FiniteFloat(allow_null=True),
        help_text="Every measure, by trec_eval's name (`map`, `P_10`, `ndcg_cut_10`, ...).",
        **kwargs,
    )


def labels_field(**kwargs) -> serializers.DictField:
    what = "trec_eval's name -> the name the pages, exports and `rrl` show (`nDCG@10`, `AP`)."
    return serializers.DictField(child=serializers.CharField(), help_text=what, **kwargs)


def absolute(request, name: str, *args) -> str:
    return request.build_absolute_uri(reverse(name, args=args))


# --- Benchmarks and leaderboards -----------------------------------------------------


class PhaseSerializer(serializers.Serializer):
    name = serializers.CharField()
    opens = serializers.DateTimeField()
    closes = serializers.DateTimeField()
    daily_limit = serializers.IntegerField(allow_null=True, help_text="Per participant.")
    total_limit = serializers.IntegerField(allow_null=True, help_text="Per participant.")
    team_daily_limit = serializers.IntegerField(allow_null=True)
    team_total_limit = serializers.IntegerField(allow_null=True)


class BenchmarkSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    title = serializers.CharField()
    description = serializers.CharField()
    rules = serializers.CharField(help_text="The organizers' rules for participants (Markdown).")
    data_description = serializers.CharField(
        help_text="What the collection, needs and judgments are (Markdown)."
    )
    primary_measure = serializers.CharField()
    shown_measures = serializers.ListField(child=serializers.CharField())
    tested_measures = serializers.ListField(
        child=serializers.CharField(),
        help_text="Measures every pair of runs is tested on (primary first).",
    )
    interpolation = serializers.ChoiceField(
        choices=Benchmark._meta.get_field("interpolation").choices,
        help_text="How iprec_at_recall and 11pt_avg are computed.",
    )
    open = serializers.BooleanField(source="is_open", help_text="Open for submissions.")
    daily_limit = serializers.IntegerField(
        help_text="Runs per participant per UTC day (failed ones do not count)."
    )
    relevance_level = serializers.IntegerField(help_text="Relevant: a judgment at least this.")
    max_depth = serializers.IntegerField(help_text="Ranks past this are not scored.")
    final_runs = serializers.IntegerField(help_text="Final runs per team (a phase may differ).")
    published = serializers.BooleanField()
    reveal_at = serializers.DateTimeField(
        allow_null=True, help_text="From then private scores and hidden boards are shown."
    )
    final_needs = serializers.CharField(help_text="What the final board ranks by once revealed.")
    anonymous = serializers.BooleanField(help_text="Pseudonyms until the reveal.")
    judgments_version = serializers.IntegerField(
        source="current_judgments.version", allow_null=True, default=None
    )
    num_needs = serializers.IntegerField(source="current_judgments.num_needs", default=0)
    phases = PhaseSerializer(
        many=True, source="phases.all", help_text="A campaign's phases; empty: ever open."
    )
    current_phase = serializers.SerializerMethodField(
        help_text="The name of the phase open now, if any."
    )
    url = serializers.SerializerMethodField()
    page = serializers.SerializerMethodField()

    def to_representation(self, instance: Benchmark) -> dict:
        data = super().to_representation(instance)
        data["tested_measures"] = instance.tested_measures()
        return data

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_current_phase(self, benchmark: Benchmark) -> str | None:
        phase = benchmark.timeline().current
        return phase.name if phase else None

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, benchmark: Benchmark) -> str:
        return absolute(self.context["request"], "api_benchmark", benchmark.slug)

    @extend_schema_field(OpenApiTypes.URI)
    def get_page(self, benchmark: Benchmark) -> str:
        return self.context["request"].build_absolute_uri(benchmark.get_absolute_url())


class LeaderboardRunSerializer(serializers.Serializer):
    """A ``boards.Row``."""

    rank = serializers.IntegerField(
        allow_null=True, help_text="Competition rank on the value rounded to 4 decimals."
    )
    submission_id = serializers.IntegerField()
    run_name = serializers.CharField()
    participant = serializers.CharField()
    team = serializers.CharField(
        allow_blank=True,
        help_text="The team the run was submitted under (empty for none); on a benchmark "
        "with pseudonyms, until its reveal, “Team 3” but to its organizers and owners.",
    )
    submitted = serializers.DateTimeField(source="created")
    baseline = serializers.BooleanField(source="is_baseline")
    hidden = serializers.BooleanField(source="is_hidden")
    num_needs = serializers.IntegerField()
    value = FiniteFloat(allow_null=True, help_text="The `ranked_by` measure.")
    p_vs_leader_holm = FiniteFloat(
        source="p_adjusted",
        allow_null=True,
        help_text="Paired t-test against #1, Holm-corrected over the board.",
    )
    summary = summary_field()


class LeaderboardSerializer(serializers.Serializer):
    """A ``boards.Board``."""

    judgments_version = serializers.IntegerField(source="lens.version", allow_null=True)
    needs = needs_field(source="lens.needs")
    ranked_by = serializers.CharField(source="measure")
    measures = serializers.ListField(child=serializers.CharField())
    labels = labels_field()
    significance = serializers.ChoiceField(
        choices=["stored", "computed", "unavailable", "untested", "none"]
    )
    notes = serializers.ListField(child=serializers.CharField())
    runs = LeaderboardRunSerializer(source="rows", many=True)


class BenchmarkLeaderboardSerializer(BenchmarkSerializer):
    """The benchmark and its leaderboard (``context["board"]``)."""

    leaderboard = serializers.SerializerMethodField()

    @extend_schema_field(LeaderboardSerializer)
    def get_leaderboard(self, benchmark: Benchmark) -> dict:
        return LeaderboardSerializer(self.context["board"]).data


class BenchmarkFilterSerializer(serializers.Serializer):
    """The benchmark list's query string."""

    open = serializers.BooleanField(required=False, allow_null=True, default=None)
    search = serializers.CharField(required=False, max_length=200)
    organised = serializers.BooleanField(
        required=False, default=False, help_text="Only the benchmarks the caller organises."
    )


# --- Runs ---------------------------------------------------------------------------


class SubmissionSerializer(serializers.Serializer):
    """A run; ``context["results"]`` maps its id to the result shown (or None)."""

    id = serializers.IntegerField(source="pk")
    benchmark = serializers.SlugField(source="benchmark.slug")
    run_name = serializers.CharField()
    participant = serializers.SerializerMethodField(
        help_text="The participant's display name (their username if they set none); on a "
        "benchmark with pseudonyms, until its reveal, “Participant 7” but to its organizers "
        "and to the run's owners."
    )
    team = serializers.SerializerMethodField(
        help_text="The team the run was submitted under (empty for none: a run submitted "
        "alone stays its participant's after they join a team); on a benchmark with "
        "pseudonyms, until its reveal, “Team 3” but to its organizers and owners."
    )
    description = serializers.CharField()
    paper_url = serializers.CharField(help_text="A paper describing the run; empty if none.")
    code_url = serializers.CharField(help_text="The code that produced the run; empty if none.")
    status = serializers.ChoiceField(choices=Submission.Status.choices)
    withdrawn = serializers.BooleanField(
        source="is_withdrawn", help_text="Withdrawn by its participant: off every board, for good."
    )
    withdrawn_at = serializers.DateTimeField(allow_null=True)
    waiting_for_queue = serializers.BooleanField(
        help_text="True while a queued run is stored but not yet handed to the scoring queue "
        "(it was not answering); it is sent, and then scored, as soon as the queue answers."
    )
    failure_reason = serializers.CharField(
        help_text="Why scoring failed, as `file:line: reason`; empty otherwise."
    )
    warnings = serializers.ListField(child=serializers.CharField())
    baseline = serializers.BooleanField(source="is_baseline")
    hidden = serializers.BooleanField(source="is_hidden")
    hidden_by = serializers.SerializerMethodField(
        help_text="Who hid the run: `participant` (who may show it again), "
        "`organizers` (only they may), or null while it is public."
    )
    submitted = serializers.DateTimeField(source="created")
    finished = serializers.DateTimeField(allow_null=True)
    judgments_version = serializers.SerializerMethodField()
    needs = serializers.SerializerMethodField(help_text=NEEDS_HELP)
    summary = serializers.SerializerMethodField()
    labels = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()
    per_need_url = serializers.SerializerMethodField()
    page = serializers.SerializerMethodField()

    def _names(self, run: Submission) -> tuple[str, str]:
        """The run's participant and team names as the caller sees them, read once."""
        shown = self.context.setdefault("shown", {})
        if run.pk not in shown:
            user = self.context["request"].user
            shown[run.pk] = shown_names(run, user, self.context.setdefault("names", {}))
        return shown[run.pk]

    def get_participant(self, run: Submission) -> str:
        return self._names(run)[0]

    def get_team(self, run: Submission) -> str:
        return self._names(run)[1]

    @extend_schema_field(
        serializers.ChoiceField(choices=["participant", "organizers"], allow_null=True)
    )
    def get_hidden_by(self, run: Submission) -> str | None:
        if not run.is_hidden:
            return None
        return "organizers" if run.hidden_by_organizer else "participant"

    def _result(self, run: Submission):
        return self.context.get("results", {}).get(run.pk)

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_judgments_version(self, run: Submission) -> int | None:
        result = self._result(run)
        return result.judgments.version if result else None

    @extend_schema_field(serializers.ChoiceField(choices=NEEDS, allow_null=True))
    def get_needs(self, run: Submission) -> str | None:
        result = self._result(run)
        return (result.judgments.part or "all") if result else None

    @extend_schema_field(summary_field(allow_null=True))
    def get_summary(self, run: Submission) -> dict | None:
        result = self._result(run)
        return summary_field().to_representation(result.summary) if result else None

    def get_labels(self, run: Submission) -> dict[str, str]:  # the schema reads the hint
        return measure_labels(getattr(self._result(run), "summary", None) or {})

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, run: Submission) -> str:
        return absolute(self.context["request"], "api_submission", run.pk)

    @extend_schema_field(OpenApiTypes.URI)
    def get_per_need_url(self, run: Submission) -> str:
        return absolute(self.context["request"], "api_per_need", run.pk)

    @extend_schema_field(OpenApiTypes.URI)
    def get_page(self, run: Submission) -> str:
        return self.context["request"].build_absolute_uri(run.get_absolute_url())


class TextField(serializers.CharField):
    """A JSON string, and only a string: DRF's ``CharField`` turns ``0`` into ``"0"``,
    which the schema (``type: string``) does not allow."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class RunDetailsSerializer(serializers.Serializer):
    """``PATCH``: what the owner may change on a run; a field left out keeps its value.
    Checked by the web page's own form (``RunDetailsForm``): http(s) addresses only."""

    description = TextField(required=False, allow_blank=True, trim_whitespace=False)
    paper_url = TextField(
        required=False, allow_blank=True, help_text="An http or https address; empty for none."
    )
    code_url = TextField(
        required=False, allow_blank=True, help_text="An http or https address; empty for none."
    )


class SubmissionFilterSerializer(serializers.Serializer):
    """The run list's query string."""

    mine = serializers.BooleanField(
        required=False, default=False, help_text="Only the caller's runs (needs a token)."
    )
    benchmark = serializers.SlugField(required=False, help_text="A benchmark's slug.")
    status = serializers.ChoiceField(choices=Submission.Status.choices, required=False)


class UploadSerializer(serializers.Serializer):
    """``multipart/form-data``: the run file and its name."""

    file = serializers.FileField(  # empty: refused by the check, with the file's name
        help_text="TREC run: `need_id Q0 doc_id rank score tag`; plain or gzip.",
        allow_empty_file=True,
    )
    run_name = serializers.RegexField(
        RUN_NAME_RE,
        required=False,
        error_messages={"invalid": run_name_validator.message},
        help_text="Defaults to the run's tag; unique on the benchmark.",
    )
    description = serializers.CharField(required=False, allow_blank=True)


class NeedValuesSerializer(serializers.Serializer):
    need_id = serializers.CharField()
    values = summary_field()


class PerNeedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    run_name = serializers.CharField()
    judgments_version = serializers.IntegerField()
    judgments_needs = needs_field()
    measures = serializers.ListField(child=serializers.CharField())
    needs = NeedValuesSerializer(many=True)


class QuotaSerializer(serializers.Serializer):
    benchmark = serializers.SlugField()
    limit = serializers.IntegerField(help_text="Runs per participant per UTC day.")
    used_today = serializers.IntegerField(help_text="Runs counted today (failed ones are not).")
    remaining_today = serializers.IntegerField()
    resets_at = serializers.DateTimeField(help_text="The next UTC midnight.")
    open = serializers.BooleanField(help_text="Whether a run is taken now.")
    refusal = serializers.CharField(help_text="Why not, with the times; empty when open.")
    phase = serializers.CharField(allow_null=True, help_text="The campaign phase open now.")
    phase_closes = serializers.DateTimeField(
        allow_null=True, help_text="When that phase closes (UTC)."
    )


# --- Errors --------------------------------------------------------------------------


class ErrorSerializer(serializers.Serializer):
    error = serializers.CharField(help_text="What went wrong, for a person.")
    details = serializers.DictField(
        help_text="Per field, the list of reasons (`non_field` for the others); `limit` and "
        "`resets_at` with a 429 for the daily limit; `retry_after` with other 429s; "
        "`allowed` with a 405; `existing` with a 409."
    )
