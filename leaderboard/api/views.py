"""Reading: benchmarks, a leaderboard, runs (one, a list, the caller's), per-need values,
and the caller's submissions left today.

Visibility comes from the same querysets and helpers as the pages (``visible_benchmark``,
``visible_submission``, ``build_leaderboard``), so the API never shows what the page
would not. Hidden runs only for their owners and the organizers; unpublished benchmarks
only for their organizers; anything else is a 404.
"""

from __future__ import annotations

from django.db.models import Prefetch
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from evaluation.measures import UnknownMeasure
from leaderboard.api import owners
from leaderboard.api import serializers as s
from leaderboard.api.base import ApiView, BenchmarkPages, SubmissionPages, conditional
from leaderboard.api.errors import ApiError
from leaderboard.api.lenses import LensQuerySerializer, MeasureQuerySerializer, api_lens, scored_run
from leaderboard.api.schema import errors
from leaderboard.models import Benchmark, Result, Submission
from leaderboard.reading.boards import Board, build_leaderboard, unknown_measure_message
from leaderboard.reading.lenses import default_lenses
from leaderboard.reading.visibility import visible_benchmark, visible_submission


def board_for(request: Request, benchmark: Benchmark, measure: str | None) -> Board:
    """The leaderboard as the page ranks it for the caller, on the judgments row the
    caller's lens shows (``?judgments=``, ``?needs=``); an unknown measure is a 400."""
    lens = api_lens(request, benchmark)
    try:
        return build_leaderboard(benchmark, request.user, measure, lens=lens)
    except UnknownMeasure as error:
        raise ApiError(
            400, unknown_measure_message(error), {"suggestions": error.suggestions}
        ) from error


class BenchmarkList(ApiView):
    pagination_class = BenchmarkPages
    serializer_class = s.BenchmarkSerializer

    @extend_schema(
        operation_id="listBenchmarks",
        summary="Benchmarks the caller may see",
        parameters=[s.BenchmarkFilterSerializer],
        responses={200: s.BenchmarkSerializer(many=True), **errors(400, 401, 404, 429)},
    )
    def get(self, request: Request) -> Response:
        query = self.query(s.BenchmarkFilterSerializer)
        benchmarks = (
            Benchmark.objects.visible_to(request.user)
            .select_related("current_judgments")
            .prefetch_related("phases")
        )
        if query["open"] is not None:
            benchmarks = benchmarks.filter(is_open=query["open"])
        if query.get("search"):
            found = benchmarks.filter(title__icontains=query["search"])
            benchmarks = found | benchmarks.filter(slug__icontains=query["search"])
        if query["organised"] and not request.user.is_authenticated:
            benchmarks = benchmarks.none()
        elif query["organised"]:
            benchmarks = benchmarks.filter(pk__in=Benchmark.objects.organised_by(request.user))
        page = self.paginate_queryset(benchmarks.order_by("title", "slug"))
        data = s.BenchmarkSerializer(page, many=True, context={"request": request}).data
        return self.get_paginated_response(data)


class BenchmarkDetail(ApiView):
    serializer_class = s.BenchmarkLeaderboardSerializer

    @extend_schema(
        operation_id="getBenchmark",
        summary="A benchmark and its leaderboard",
        description="Runs the caller may see (hidden ones only for their owners and the "
        "organizers), each with every summary measure. Sends `ETag` and `Last-Modified`; "
        "`If-None-Match` answers 304 while the board is unchanged (`Last-Modified` is "
        "informative: `If-Modified-Since` alone always gets the board).",
        parameters=[MeasureQuerySerializer],
        responses={
            200: s.BenchmarkLeaderboardSerializer,
            304: OpenApiResponse(description="Not modified."),
            **errors(400, 401, 403, 404, 429),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        measure = self.query(MeasureQuerySerializer).get("measure")
        benchmark = visible_benchmark(request, slug)
        board = board_for(request, benchmark, measure)
        context = {"request": request, "board": board}
        data = s.BenchmarkLeaderboardSerializer(benchmark, context=context).data
        return conditional(request, data, board.lens)


class SubmissionList(ApiView):
    pagination_class = SubmissionPages
    serializer_class = s.SubmissionSerializer

    @extend_schema(
        operation_id="listSubmissions",
        summary="Runs: the caller's own (`mine=true`) or every run the caller may see",
        description="Newest first. Filter by benchmark and status; `mine=true` needs a token "
        "and is how a client finds a run whose 201 it lost.",
        parameters=[s.SubmissionFilterSerializer],
        responses={200: s.SubmissionSerializer(many=True), **errors(400, 401, 404, 429)},
    )
    def get(self, request: Request) -> Response:
        query = self.query(s.SubmissionFilterSerializer)
        runs = Submission.objects.visible_to(request.user).filter(
            benchmark__in=Benchmark.objects.visible_to(request.user)
        )
        if query["mine"]:
            if not request.user.is_authenticated:
                raise exceptions.NotAuthenticated()
            runs = runs.filter(participant=request.user)
        if "benchmark" in query:  # a benchmark the caller cannot see is none: a 404
            runs = runs.filter(benchmark=visible_benchmark(request, query["benchmark"]))
        if "status" in query:
            runs = runs.filter(status=query["status"])
        runs = runs.select_related(
            "benchmark",
            "benchmark__current_judgments",
            "participant__profile",
            "phase",
            "team",
        ).prefetch_related(
            Prefetch(
                "results",
                queryset=Result.objects.select_related("judgments").defer("per_need", "ranks"),
            )
        )
        page = self.paginate_queryset(runs.order_by("-created", "-pk"))
        # The caller's own runs of a hidden phase are listed without their scores.
        seen = Submission.objects.filter(pk__in=[run.pk for run in page])
        scores = set(seen.scores_visible_to(request.user).values_list("pk", flat=True))
        shown = {pk: r for pk, r in _default_results(request, page).items() if pk in scores}
        context = {"request": request, "results": shown}
        return self.get_paginated_response(
            s.SubmissionSerializer(page, many=True, context=context).data
        )


def _default_results(request: Request, runs) -> dict[int, Result | None]:
    """Each run's result its benchmark's default lens shows the caller (``Lens.pick``),
    the lenses of all the page's benchmarks resolved at once (``?judgments=`` names a
    version of one benchmark, so a list that may span benchmarks takes none)."""
    lenses = default_lenses([run.benchmark for run in runs], request.user)
    return {run.pk: lenses[run.benchmark_id].pick(run.results.all()) for run in runs}


class SubmissionDetail(ApiView):
    parser_classes = [JSONParser]
    serializer_class = s.SubmissionSerializer

    @extend_schema(
        operation_id="getSubmission",
        summary="A run's status, failure reason and summary",
        parameters=[LensQuerySerializer],
        responses={200: s.SubmissionSerializer, **errors(400, 401, 403, 404, 429)},
    )
    def get(self, request: Request, submission_id: int) -> Response:
        self.query(LensQuerySerializer)
        run = visible_submission(request, submission_id, scores=False)
        lens = api_lens(request, run.benchmark)  # the ?judgments= and ?needs= asked
        results = run.results.select_related("judgments").defer("per_need", "ranks")
        shown = {run.pk: lens.pick(results)} if run.scores_visible_to(request.user) else {}
        context = {"request": request, "results": shown}
        return Response(s.SubmissionSerializer(run, context=context).data)

    @extend_schema(
        operation_id="editSubmission",
        summary="Edit one's own run: its description, paper and code links",
        description="A field left out keeps its value; an empty one clears it. Only the "
        "run's participant (403 otherwise); a withdrawn run is kept as it was (409).",
        request=s.RunDetailsSerializer,
        responses={200: s.SubmissionSerializer, **errors(400, 401, 403, 404, 409, 415, 429)},
    )
    def patch(self, request: Request, submission_id: int) -> Response:
        if not request.user.is_authenticated:
            raise exceptions.NotAuthenticated()
        return owners.edit(request, submission_id)


class PerNeed(ApiView):
    serializer_class = s.PerNeedSerializer

    @extend_schema(
        operation_id="getPerNeed",
        summary="A scored run's value of every measure on every need",
        parameters=[LensQuerySerializer],
        responses={200: s.PerNeedSerializer, **errors(400, 401, 403, 404, 429)},
    )
    def get(self, request: Request, submission_id: int) -> Response:
        self.query(LensQuerySerializer)
        run, result = scored_run(request, submission_id)
        frame = result.per_need_frame()
        measures = [str(m) for m in frame.columns]
        needs = [
            {"need_id": need, "values": dict(zip(measures, line, strict=True))}
            for need, line in zip(frame.index.tolist(), frame.to_numpy().tolist(), strict=True)
        ]
        data = {
            "id": run.pk,
            "run_name": run.run_name,
            "judgments_version": result.judgments.version,
            "judgments_needs": result.judgments.part or "all",
            "measures": measures,
            "needs": needs,
        }
        return Response(s.PerNeedSerializer(data).data)


class Quota(ApiView):
    permission_classes = [IsAuthenticated]
    serializer_class = s.QuotaSerializer

    @extend_schema(
        operation_id="getQuota",
        summary="The caller's submissions left today on a benchmark",
        responses={200: s.QuotaSerializer, **errors(401, 404, 429)},
    )
    def get(self, request: Request, slug: str) -> Response:
        benchmark = visible_benchmark(request, slug)
        quota = benchmark.quota(request.user)
        phase = quota.window.phase
        data = {
            "benchmark": benchmark.slug,
            "limit": quota.limit,
            "used_today": quota.used_today,
            "remaining_today": quota.remaining_today,
            "resets_at": quota.resets_at,
            "open": quota.window.open,
            "refusal": quota.window.refusal,
            "phase": phase.name if phase else None,
            "phase_closes": phase.closes if phase else None,
        }
        return Response(s.QuotaSerializer(data).data)
