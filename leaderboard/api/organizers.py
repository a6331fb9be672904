"""The organizers' side: create a benchmark, load its needs and judgments, rescore it.

The same functions as the admin and the management commands: the admin's
``OrganizerBenchmarkForm`` validates a new benchmark (measures in either name system,
the catalog's names), and ``pipeline.loading`` loads files (validated by the engine; a
bad line is a 400 naming ``file:line: reason``, and nothing is stored) and queues the
rescoring. Creating needs staff status, as in the admin; the rest needs the caller to
organise the benchmark (403 otherwise; 404 when they may not even see it).
"""

from __future__ import annotations

import os

from django.forms.models import model_to_dict
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from evaluation.trec import TrecFormatError
from leaderboard.admin_forms import OrganizerBenchmarkForm
from leaderboard.api import serializers as s
from leaderboard.api.base import ApiView
from leaderboard.api.errors import ApiError
from leaderboard.api.schema import errors
from leaderboard.api.views import BenchmarkList
from leaderboard.models import Benchmark
from leaderboard.pipeline.datasets import load_dataset
from leaderboard.pipeline.loading import load_judgments, load_needs, rescore_benchmark
from leaderboard.reading.visibility import visible_benchmark

# The API's names for the form's fields, where they differ.
API_NAMES = {
    "is_open": "open",
    "significance_measures": "tested_measures",
    "ir_datasets_id": "ir_datasets",
}


class FileUploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="Plain or gzip.")
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


class RescoreSerializer(serializers.Serializer):
    benchmark = serializers.SlugField()
    queued = serializers.IntegerField()


def organised(request: Request, slug: str) -> Benchmark:
    benchmark = visible_benchmark(request, slug)
    if not benchmark.is_organised_by(request.user):
        raise ApiError(403, f"You do not organise {benchmark.title}.")
    return benchmark


def benchmark_form(data: dict) -> OrganizerBenchmarkForm:
    """The admin's form, filled with the model's defaults and then the API's values."""
    fields = [f for f in OrganizerBenchmarkForm._meta.fields if f != "organizers"]
    posted = {k: v for k, v in model_to_dict(Benchmark(), fields=fields).items() if v is not None}
    for name in fields:
        value = data.get(API_NAMES.get(name, name))
        if value is not None:
            posted[name] = value
    for name in ("shown_measures", "significance_measures"):
        if isinstance(posted.get(name), list):
            posted[name] = ", ".join(posted[name])
    if data.get("ir_datasets"):
        posted["ir_datasets_id"] = data["ir_datasets"]
    return OrganizerBenchmarkForm(data=posted)


class BenchmarkListCreate(BenchmarkList):
    parser_classes = [JSONParser]

    @extend_schema(
        operation_id="createBenchmark",
        summary="Create a benchmark (staff only); the caller becomes an organizer",
        description="Then load its needs and judgments. Measures in either name system.",
        request=s.BenchmarkCreateSerializer,
        examples=[
            OpenApiExample(
                "A benchmark ranked by nDCG@10",
                value={
                    "slug": "robust04",
                    "title": "TREC Robust 2004",
                    "primary_measure": "nDCG@10",
                    "shown_measures": ["P@10", "map"],
                    "daily_limit": 5,
                },
                request_only=True,
            )
        ],
        responses={201: s.BenchmarkSerializer, **errors(400, 401, 403, 409, 415, 429)},
    )
    def post(self, request: Request) -> Response:
        if not (request.user.is_authenticated and request.user.is_staff):
            if not request.user.is_authenticated:
                raise ApiError(401, "This endpoint needs a token: 'Authorization: Bearer <token>'.")
            raise ApiError(403, "Only staff members may create benchmarks, as in the admin.")
        body = s.BenchmarkCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        form = benchmark_form(body.validated_data)
        if not form.is_valid():
            details = {
                ("non_field" if f == "__all__" else API_NAMES.get(f, f)): [str(m) for m in ms]
                for f, ms in form.errors.items()
            }
            status = 409 if form.has_error("slug", "unique") else 400
            first = next(iter(details.items()))
            raise ApiError(status, f"{first[0]}: {first[1][0]}", details)
        benchmark = form.save()
        if not request.user.is_superuser:
            benchmark.organizers.add(request.user)
        dataset = form.cleaned_data.get("ir_datasets_files")
        if dataset is not None:  # read while the form was checked, as in the admin
            load_dataset(benchmark, dataset)
            benchmark.refresh_from_db()
        data = s.BenchmarkSerializer(benchmark, context={"request": request}).data
        return Response(data, status=201, headers={"Location": data["url"]})


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
        description="The leaderboard switches to the new version once every run has it. A file "
        "equal to the latest version adds nothing (`created` false).",
        request={"multipart/form-data": FileUploadSerializer},
        responses={
            201: JudgmentsLoadedSerializer,
            200: OpenApiResponse(JudgmentsLoadedSerializer, description="Already loaded."),
            **errors(400, 401, 403, 404, 429),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        benchmark, upload, name, data = self.upload(request, slug)
        before = benchmark.latest_judgments
        try:
            judgments = load_judgments(benchmark, upload, name, note=data.get("note", ""))
        except TrecFormatError as error:
            raise ApiError(400, str(error), {"file": [str(error)]}) from error
        created = before is None or judgments.pk != before.pk
        answer = {
            "benchmark": slug,
            "version": judgments.version,
            "num_needs": judgments.num_needs,
            "num_judged": judgments.num_judged,
            "num_relevant": judgments.num_relevant,
            "created": created,
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
