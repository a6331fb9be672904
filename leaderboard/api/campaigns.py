"""The campaign's endpoints: a team's final runs (participants), the pool and the
campaign's summary (organizers).

The work is in the models (``leaderboard.models.finals``) and the pipeline
(``leaderboard.pipeline.pooling``); these views parse, check who asks, and answer.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from leaderboard.api.base import ApiView
from leaderboard.api.errors import ApiError
from leaderboard.api.lenses import LensQuerySerializer, needs_field, scored_run
from leaderboard.api.organizers import organised
from leaderboard.api.schema import errors
from leaderboard.api.serializers import labels_field
from leaderboard.campaigns.exports import export_response
from leaderboard.models import set_final_runs
from leaderboard.models.finals import PhaseClosed, TeamFinals, phase_for_finals, team_finals
from leaderboard.models.pooling import MAX_DEPTH, MAX_RUNS_PER_TEAM
from leaderboard.pipeline.scoring import pool_qrels
from leaderboard.pipeline.tasks import queue_pool
from leaderboard.reading.pools import benchmark_pool, pool_payload
from leaderboard.reading.results import NoResults, results_payload, run_results
from leaderboard.reading.summaries import benchmark_for_organizers, campaign_summary
from leaderboard.reading.visibility import visible_benchmark


class FinalRunSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="submission.pk")
    run_name = serializers.CharField(source="submission.run_name")
    priority = serializers.IntegerField(help_text="1 first.")
    chosen = serializers.BooleanField(
        help_text="Marked by the team (false: one of its latest runs, counted for it)."
    )


class FinalRunsSerializer(serializers.Serializer):
    benchmark = serializers.SlugField()
    phase = serializers.CharField(allow_null=True)
    closes = serializers.DateTimeField(allow_null=True, help_text="Marks change until then.")
    open = serializers.BooleanField(help_text="Whether the final runs may still change.")
    limit = serializers.IntegerField(help_text="Final runs per team.")
    runs = FinalRunSerializer(many=True)


class FinalRunsBodySerializer(serializers.Serializer):
    runs = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        allow_empty=True,
        help_text="Run ids in priority order; empty: the latest runs count.",
    )
    phase = serializers.CharField(required=False, help_text="Default: the phase open now.")


def final_runs_answer(slug: str, seen: TeamFinals) -> dict:
    return FinalRunsSerializer(
        {
            "benchmark": slug,
            "phase": seen.phase.name if seen.phase else None,
            "closes": seen.phase.closes if seen.phase else None,
            "open": seen.open,
            "limit": seen.limit,
            "runs": seen.finals,
        }
    ).data


class FinalRuns(ApiView):
    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]
    serializer_class = FinalRunsSerializer

    def get_object(self):
        """The benchmark (what OPTIONS asks for before it describes the PUT)."""
        return visible_benchmark(self.request, self.kwargs["slug"])

    @extend_schema(
        operation_id="getFinalRuns",
        summary="The caller's team's final runs in a phase, in priority order",
        responses={200: FinalRunsSerializer, **errors(400, 401, 404, 429)},
    )
    def get(self, request: Request, slug: str) -> Response:
        benchmark = visible_benchmark(request, slug)
        try:
            seen = team_finals(benchmark, request.user, timezone.now(), request.GET.get("phase"))
        except ValidationError as error:
            raise ApiError(400, error.messages[0]) from error
        return Response(final_runs_answer(slug, seen))

    @extend_schema(
        operation_id="setFinalRuns",
        summary="Mark the caller's team's final runs, in priority order",
        description="Refused once the phase has closed (409, with the close time).",
        request=FinalRunsBodySerializer,
        responses={200: FinalRunsSerializer, **errors(400, 401, 403, 404, 409, 429)},
    )
    def put(self, request: Request, slug: str) -> Response:
        benchmark = visible_benchmark(request, slug)
        body = FinalRunsBodySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        now = timezone.now()
        phase_name = body.validated_data.get("phase")
        try:
            phase, _ = set_final_runs(
                benchmark, request.user, body.validated_data["runs"], now, phase_name
            )
        except ValidationError as error:
            status = 409 if isinstance(error, PhaseClosed) else 400
            raise ApiError(status, error.messages[0]) from error
        seen = team_finals(benchmark, request.user, now, phase.name if phase else None)
        return Response(final_runs_answer(slug, seen))


class NeedResultSerializer(serializers.Serializer):
    need_id = serializers.CharField()
    run = serializers.FloatField()
    best = serializers.FloatField(allow_null=True)
    median = serializers.FloatField(allow_null=True)
    worst = serializers.FloatField(allow_null=True)


class RunResultsSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    run_name = serializers.CharField()
    benchmark = serializers.SlugField()
    judgments_version = serializers.IntegerField()
    judgments_needs = needs_field()
    measure = serializers.CharField()
    measures = serializers.ListField(
        child=serializers.CharField(), help_text="The stored scores to pick from (no counts)."
    )
    labels = labels_field()
    field = serializers.CharField(help_text="The runs compared: final runs of the phase, or all.")
    field_runs = serializers.IntegerField()
    needs = NeedResultSerializer(many=True)


class RunResults(ApiView):
    serializer_class = RunResultsSerializer

    @extend_schema(
        operation_id="getRunResults",
        summary="A run's per-need value beside the best, median and worst of the field",
        description="`?measure=` any stored score, not a count (default: the primary one).",
        parameters=[LensQuerySerializer],
        responses={200: RunResultsSerializer, **errors(400, 401, 403, 404, 429)},
    )
    def get(self, request: Request, submission_id: int) -> Response:
        self.query(LensQuerySerializer)
        run, result = scored_run(request, submission_id)
        try:
            results = run_results(
                run, result, request.GET.get("measure") or None, viewer=request.user
            )
        except NoResults as error:
            raise ApiError(400, str(error)) from error
        return Response(RunResultsSerializer(results_payload(results)).data)


class PoolSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    benchmark = serializers.SlugField()
    phase = serializers.CharField(allow_null=True)
    depth = serializers.IntegerField()
    runs_per_team = serializers.IntegerField()
    seed = serializers.IntegerField(help_text="Draws the export's order within each need.")
    status = serializers.ChoiceField(choices=["queued", "running", "built", "failed"])
    failure_reason = serializers.CharField()
    created = serializers.DateTimeField()
    finished = serializers.DateTimeField(allow_null=True)
    judgments_version = serializers.IntegerField(
        allow_null=True, help_text="The judgments whose pairs the export leaves out."
    )
    stats = serializers.JSONField(
        help_text="pairs, to_judge, runs_offered; needs (need_id, pool, to_judge); runs (id, "
        "run, team, priority, contributed, unique); teams (team, runs, contributed, unique)."
    )
    export = serializers.CharField(allow_null=True, help_text="The assessors' file, once built.")


class PoolRequestSerializer(serializers.Serializer):
    depth = serializers.IntegerField(min_value=1, max_value=MAX_DEPTH)
    runs_per_team = serializers.IntegerField(min_value=1, max_value=MAX_RUNS_PER_TEAM)
    phase = serializers.CharField(
        required=False, help_text="Whose final runs (default: the phase open now, else the last)."
    )


class Pools(ApiView):
    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]
    serializer_class = PoolSerializer

    @extend_schema(
        operation_id="listPools",
        summary="The benchmark's pools, newest first (organizers)",
        responses={200: PoolSerializer(many=True), **errors(401, 403, 404, 429)},
    )
    def get(self, request: Request, slug: str) -> Response:
        benchmark = organised(request, slug)
        pools = benchmark.pools.select_related("phase", "judgments", "benchmark")[:100]
        return Response([PoolSerializer(pool_payload(p)).data for p in pools])

    @extend_schema(
        operation_id="buildPool",
        summary="Build a pool of the final runs in the background (organizers)",
        request=PoolRequestSerializer,
        responses={202: PoolSerializer, **errors(400, 401, 403, 404, 429)},
    )
    def post(self, request: Request, slug: str) -> Response:
        benchmark = organised(request, slug)
        body = PoolRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            phase = phase_for_finals(benchmark, timezone.now(), data.get("phase"))
        except ValidationError as error:
            raise ApiError(400, error.messages[0]) from error
        pool = queue_pool(benchmark, phase, data["depth"], data["runs_per_team"], request.user)
        return Response(PoolSerializer(pool_payload(pool)).data, status=202)


class PoolDetail(ApiView):
    permission_classes = [IsAuthenticated]
    serializer_class = PoolSerializer

    @extend_schema(
        operation_id="getPool",
        summary="A pool: its status and statistics (organizers)",
        responses={200: PoolSerializer, **errors(401, 403, 404, 429)},
    )
    def get(self, request: Request, slug: str, pool_id: int) -> Response:
        pool = benchmark_pool(organised(request, slug), pool_id)
        return Response(PoolSerializer(pool_payload(pool)).data)


class PoolExport(ApiView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="exportPool",
        summary="The pool's pairs to judge: `need_id 0 doc_id -1` per line (organizers)",
        responses={(200, "text/plain"): bytes, **errors(401, 403, 404, 429)},
    )
    def get(self, request: Request, slug: str, pool_id: int):
        return export_response(benchmark_pool(organised(request, slug), pool_id))


class RunCountsSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="The team (or a participant without one), or 'All'.")
    submitted = serializers.IntegerField(help_text="Every run, failed and withdrawn ones too.")
    scored = serializers.IntegerField()
    failed = serializers.IntegerField()
    final = serializers.IntegerField(help_text="Its effective final runs.")


class PhaseCountsSerializer(serializers.Serializer):
    phase = serializers.CharField(allow_null=True, help_text="None: runs outside any phase.")
    opens = serializers.DateTimeField(allow_null=True)
    closes = serializers.DateTimeField(allow_null=True)
    teams = RunCountsSerializer(many=True)
    participants = RunCountsSerializer(many=True)
    totals = RunCountsSerializer()


class PoolTeamSerializer(serializers.Serializer):
    team = serializers.CharField()
    runs = serializers.IntegerField(help_text="Runs pooled.")
    contributed = serializers.IntegerField(help_text="Pairs in its runs' top depth.")
    unique = serializers.IntegerField(help_text="Pairs no other team contributed.")


class PoolSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    phase = serializers.CharField(allow_null=True)
    depth = serializers.IntegerField()
    runs_per_team = serializers.IntegerField()
    finished = serializers.DateTimeField(allow_null=True)
    judgments_version = serializers.IntegerField(allow_null=True)
    runs_offered = serializers.IntegerField(help_text="Final runs of the phase.")
    runs_pooled = serializers.IntegerField()
    needs = serializers.IntegerField()
    size_min = serializers.IntegerField(help_text="Pairs of the smallest need's pool.")
    size_median = serializers.FloatField()
    size_max = serializers.IntegerField()
    size_total = serializers.IntegerField(help_text="Pairs over all needs.")
    to_judge = serializers.IntegerField(help_text="Pairs the judgments did not judge yet.")
    teams = PoolTeamSerializer(many=True)


class JudgedRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    run = serializers.CharField()
    team = serializers.CharField()
    participant = serializers.CharField()
    phase = serializers.CharField(allow_null=True)
    hidden = serializers.BooleanField()
    judged_10 = serializers.FloatField(allow_null=True, help_text="Judged@10; null: not stored.")
    judged_100 = serializers.FloatField(allow_null=True, help_text="Judged@100.")


class JudgedSerializer(serializers.Serializer):
    judgments_version = serializers.IntegerField(
        allow_null=True, help_text="The current version, all its needs."
    )
    runs = JudgedRunSerializer(many=True)
    problem = serializers.CharField(help_text="Why no run has values, if the file is unread.")


class CampaignSummarySerializer(serializers.Serializer):
    benchmark = serializers.SlugField()
    title = serializers.CharField()
    phases = PhaseCountsSerializer(many=True)
    pool = PoolSummarySerializer(allow_null=True, help_text="The latest built pool, if any.")
    judged = JudgedSerializer()


class CampaignSummary(ApiView):
    serializer_class = CampaignSummarySerializer

    @extend_schema(
        operation_id="getCampaignSummary",
        summary="Runs per team and participant, the latest pool, Judged@10/100 (organizers)",
        description="A 404 for anyone but the benchmark's organizers.",
        responses={200: CampaignSummarySerializer, **errors(401, 404, 429)},
    )
    def get(self, request: Request, slug: str) -> Response:
        benchmark = benchmark_for_organizers(request, slug)
        summary = campaign_summary(benchmark, pool_qrels)
        return Response(CampaignSummarySerializer(summary).data)
