"""The organizers' side: create and update a benchmark, load its needs and judgments,
rescore it (phases: :mod:`leaderboard.api.phases`).

The same code as the admin and the management commands: the admin's
``OrganizerBenchmarkForm`` validates a benchmark's settings (measures in either name
system, the catalog's names), ``pipeline.loading.settings_changed`` queues what a change
calls for (rescoring, or the missing tests), and ``pipeline.loading`` loads files
(validated by the engine; a bad line is a 400 naming ``file:line: reason``, and nothing is
stored) and queues the rescoring. Creating needs staff status, as in the admin; the rest
needs the caller to organise the benchmark (403 otherwise; 404 when they may not even see
it). A token must have the full scope to change anything (``ApiView``'s ``TokenScope``).
"""

from __future__ import annotations

import os
from typing import NoReturn

from django import forms
from django.db import transaction
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from evaluation.trec import TrecFormatError
from leaderboard.admin_forms import filled_benchmark_form
from leaderboard.api import serializers as s
from leaderboard.api.base import ApiView
from leaderboard.api.errors import ApiError
from leaderboard.api.schema import errors
from leaderboard.api.views import BenchmarkDetail, BenchmarkList
from leaderboard.models import Benchmark
from leaderboard.models.pooling import MAX_DEPTH
from leaderboard.pipeline.datasets import load_dataset
from leaderboard.pipeline.files import StorageUnavailable
from leaderboard.pipeline.loading import (
    load_judgments,
    load_needs,
    rescore_benchmark,
    settings_changed,
)
from leaderboard.reading.visibility import visible_benchmark

# The API's names for the form's fields, where they differ.
API_NAMES = {
    "is_open": "open",
    "significance_measures": "tested_measures",
    "ir_datasets_id": "ir_datasets",
}
FORM_NAMES = {api: form for form, api in API_NAMES.items()}
STORE_DOWN = "The file store is not answering, so nothing was stored. Try again shortly."


def choices(field: str) -> list:
    return Benchmark._meta.get_field(field).choices


class BenchmarkSettingsSerializer(serializers.Serializer):
    """A benchmark's settings; checked again by the admin's own form
    (``OrganizerBenchmarkForm``). In a ``PATCH`` a field left out keeps its value."""

    title = s.TextField(max_length=200)
    description = s.TextField(required=False, allow_blank=True, help_text="Markdown.")
    rules = s.TextField(required=False, allow_blank=True, help_text="Markdown.")
    data_description = s.TextField(required=False, allow_blank=True, help_text="Markdown.")
    primary_measure = s.TextField(
        required=False,
        max_length=40,
        help_text="In either name system (`nDCG@10` or `ndcg_cut_10`).",
    )
    shown_measures = serializers.ListField(
        child=s.TextField(max_length=100), required=False, max_length=100
    )
    tested_measures = serializers.ListField(
        child=s.TextField(max_length=100),
        required=False,
        max_length=100,
        help_text="Every pair of runs is tested on these and the primary measure.",
    )
    interpolation = serializers.ChoiceField(choices=choices("interpolation"), required=False)
    relevance_level = serializers.IntegerField(
        min_value=-1000, max_value=1000, required=False, help_text="trec_eval's `-l`."
    )
    max_depth = serializers.IntegerField(
        min_value=1, max_value=10_000_000, required=False, help_text="trec_eval's `-M`."
    )
    judged_threshold = serializers.FloatField(min_value=0.0, max_value=1.0, required=False)
    pool_depth = serializers.IntegerField(min_value=1, max_value=MAX_DEPTH, required=False)
    daily_limit = serializers.IntegerField(min_value=1, max_value=10_000, required=False)
    final_runs = serializers.IntegerField(
        min_value=1, max_value=1000, required=False, help_text="Per team; a phase may differ."
    )
    open = serializers.BooleanField(required=False, help_text="Open for submissions.")
    published = serializers.BooleanField(required=False)
    reveal_at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        help_text="From then private scores, hidden boards and real names are shown (UTC "
        "without an offset); null: not scheduled.",
    )
    final_needs = serializers.ChoiceField(
        choices=choices("final_needs"),
        required=False,
        help_text="What the final board ranks by once revealed.",
    )
    anonymous = serializers.BooleanField(
        required=False, help_text="Pseudonyms for participants and teams until the reveal."
    )


class BenchmarkCreateSerializer(BenchmarkSettingsSerializer):
    """A new benchmark."""

    slug = serializers.SlugField(max_length=80)
    ir_datasets = s.TextField(
        required=False,
        max_length=200,
        help_text="An ir_datasets id (e.g. `msmarco-passage/trec-dl-2019/judged`): its "
        "queries become the needs and its qrels the first judgments, read through "
        "ir_datasets (downloaded on first use, within this request).",
    )


class BenchmarkUpdatedSerializer(s.BenchmarkSerializer):
    rescoring = serializers.IntegerField(
        help_text="Runs queued for rescoring (a scoring setting changed: interpolation, "
        "relevance level, max depth)."
    )
    testing = serializers.IntegerField(
        help_text="Runs queued for the tests the new primary or tested measures call for."
    )


class FileUploadSerializer(serializers.Serializer):
    # an empty file is the reader's to refuse ("qrels.txt:1: empty file"), by name
    file = serializers.FileField(help_text="Plain or gzip.", allow_empty_file=True)
    note = serializers.CharField(required=False, allow_blank=True, max_length=200)


class NeedsLoadedSerializer(serializers.Serializer):
    benchmark = serializers.SlugField()
    loaded = serializers.IntegerField(help_text="Information needs added or updated.")


class JudgmentsLoadedSerializer(serializers.Serializer):
    benchmark = serializers.SlugField()
    version = serializers.IntegerField()
    num_needs = serializers.IntegerField()
    num_judged = serializers.IntegerField()
    num_relevant = serializers.IntegerField()
    created = serializers.BooleanField(help_text="False when the file equals the latest version.")
    queued = serializers.IntegerField(help_text="Runs queued for rescoring against it.")


class RescoreSerializer(serializers.Serializer):
    benchmark = serializers.SlugField()
    queued = serializers.IntegerField()


def organised(request: Request, slug: str) -> Benchmark:
    if not request.user.is_authenticated:  # where reading needs no token, writing does
        raise ApiError(401, "This endpoint needs a token: 'Authorization: Bearer <token>'.")
    benchmark = visible_benchmark(request, slug)
    if not benchmark.is_organised_by(request.user):
        raise ApiError(403, f"You do not organise {benchmark.title}.")
    return benchmark


def refuse(form: forms.BaseForm, conflict: str) -> NoReturn:
    """The form's errors as a 400 by API field name (a 409 when ``conflict``, a name that
    must be unique, is taken)."""
    details = {
        ("non_field" if f == "__all__" else API_NAMES.get(f, f)): [str(m) for m in ms]
        for f, ms in form.errors.items()
    }
    status = 409 if form.has_error(conflict, "unique") else 400
    field, messages = next(iter(details.items()))
    raise ApiError(
        status, messages[0] if field == "non_field" else f"{field}: {messages[0]}", details
    )


def form_values(data: dict) -> dict:
    """The form's names and values; a null (``reveal_at``) posts as an empty field."""
    return {FORM_NAMES.get(k, k): "" if v is None else v for k, v in data.items()}


class BenchmarkListCreate(BenchmarkList):
    parser_classes = [JSONParser]

    @extend_schema(
        operation_id="createBenchmark",
        summary="Create a benchmark (staff only); the caller becomes an organizer",
        description="Then load its needs and judgments and add its phases. Measures in "
        "either name system.",
        request=BenchmarkCreateSerializer,
        examples=[
            OpenApiExample(
                "A benchmark ranked by nDCG@10",
                value={
                    "slug": "robust04",
                    "title": "TREC Robust 2004",
                    "primary_measure": "nDCG@10",
                    "shown_measures": ["P@10", "map"],
                    "daily_limit": 5,
                    "final_runs": 2,
                },
                request_only=True,
            )
        ],
        responses={201: s.BenchmarkSerializer, **errors(400, 401, 403, 409, 415, 429, 503)},
    )
    def post(self, request: Request) -> Response:
        if not (request.user.is_authenticated and request.user.is_staff):
            if not request.user.is_authenticated:
                raise ApiError(401, "This endpoint needs a token: 'Authorization: Bearer <token>'.")
            raise ApiError(403, "Only staff members may create benchmarks, as in the admin.")
        body = BenchmarkCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        form = filled_benchmark_form(form_values(body.validated_data))
        if not form.is_valid():
            refuse(form, "slug")
        try:
            with transaction.atomic():  # a dataset that fails to load leaves no benchmark
                benchmark = form.save()
                if not request.user.is_superuser:
                    benchmark.organizers.add(request.user)
                dataset = form.cleaned_data.get("ir_datasets_files")
                if dataset is not None:  # read while the form was checked, as in the admin
                    load_dataset(benchmark, dataset)
                    benchmark.refresh_from_db()
        except StorageUnavailable as error:
            raise ApiError(503, STORE_DOWN) from error
        data = s.BenchmarkSerializer(benchmark, context={"request": request}).data
        return Response(data, status=201, headers={"Location": data["url"]})


class BenchmarkDetailUpdate(BenchmarkDetail):
    parser_classes = [JSONParser]

    @extend_schema(
        operation_id="updateBenchmark",
        summary="Change a benchmark's settings (organizers)",
        description="A field left out keeps its value. Changing the interpolation, the "
        "relevance level or the max depth rescores every run; changing the primary or "
        "tested measures queues the missing tests, as the admin does.",
        request=BenchmarkSettingsSerializer,
        responses={200: BenchmarkUpdatedSerializer, **errors(400, 401, 403, 404, 415, 429)},
    )
    def patch(self, request: Request, slug: str) -> Response:
        benchmark = organised(request, slug)
        body = BenchmarkSettingsSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        form = filled_benchmark_form(form_values(body.validated_data), benchmark)
        if not form.is_valid():
            refuse(form, "slug")
        with transaction.atomic():
            benchmark = form.save()
            rescoring, testing = settings_changed(benchmark, form.changed_data)
        benchmark = Benchmark.objects.select_related("current_judgments").get(pk=benchmark.pk)
        benchmark.rescoring, benchmark.testing = rescoring, testing
        return Response(BenchmarkUpdatedSerializer(benchmark, context={"request": request}).data)


class OrganizerUpload(ApiView):
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser]
    serializer_class = FileUploadSerializer

    def upload(self, request: Request, slug: str):
        benchmark = organised(request, slug)
        body = FileUploadSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        upload = body.validated_data["file"]
        return benchmark, upload, os.path.basename(upload.name or "upload"), body.validated_data


class Needs(OrganizerUpload):
    @extend_schema(
        operation_id="loadNeeds",
        summary="Add or update the benchmark's information needs (TSV or TREC topics)",
        request={"multipart/form-data": FileUploadSerializer},
        responses={200: NeedsLoadedSerializer, **errors(400, 401, 403, 404, 429)},
    )
    def post(self, request: Request, slug: str) -> Response:
        benchmark, upload, name, _ = self.upload(request, slug)
        try:
            loaded = load_needs(benchmark, upload, name)
        except TrecFormatError as error:
            raise ApiError(400, str(error), {"file": [str(error)]}) from error
        return Response(NeedsLoadedSerializer({"benchmark": slug, "loaded": loaded}).data)


class JudgmentsUpload(OrganizerUpload):
    @extend_schema(
        operation_id="loadJudgments",
        summary="Upload judgments (qrels): a new version; every run is rescored",
        description="As the admin's upload: every live run is queued for rescoring against "
        "the new version (`queued`). The leaderboard switches to the new version once every run has it. A file "
        "equal to the latest version adds nothing (`created` false).",
        request={"multipart/form-data": FileUploadSerializer},
        responses={
            201: JudgmentsLoadedSerializer,
            200: OpenApiResponse(JudgmentsLoadedSerializer, description="Already loaded."),
            **errors(400, 401, 403, 404, 429, 503),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        benchmark, upload, name, data = self.upload(request, slug)
        before = benchmark.latest_judgments
        try:
            judgments = load_judgments(benchmark, upload, name, note=data.get("note", ""))
        except TrecFormatError as error:
            raise ApiError(400, str(error), {"file": [str(error)]}) from error
        except StorageUnavailable as error:
            raise ApiError(503, STORE_DOWN) from error
        created = before is None or judgments.pk != before.pk
        answer = {
            "benchmark": slug,
            "version": judgments.version,
            "num_needs": judgments.num_needs,
            "num_judged": judgments.num_judged,
            "num_relevant": judgments.num_relevant,
            "created": created,
            "queued": judgments.queued,
        }
        return Response(JudgmentsLoadedSerializer(answer).data, status=201 if created else 200)


class Rescore(ApiView):
    permission_classes = [IsAuthenticated]
    serializer_class = RescoreSerializer

    @extend_schema(
        operation_id="rescoreBenchmark",
        summary="Queue every live run for rescoring against the latest judgments",
        request=None,
        responses={202: RescoreSerializer, **errors(401, 403, 404, 429)},
    )
    def post(self, request: Request, slug: str) -> Response:
        benchmark = organised(request, slug)
        queued = rescore_benchmark(benchmark)
        return Response(RescoreSerializer({"benchmark": slug, "queued": queued}).data, status=202)
