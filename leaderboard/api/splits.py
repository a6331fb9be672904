"""The organizers' public/private split: ``/api/benchmarks/<slug>/split/``.

``GET`` shows which needs are private, and how they were drawn; ``PUT`` sets them, listed
or drawn (``Benchmark.set_split``: the same checks as the admin and ``load_benchmark``),
and queues the parts' results of the runs already scored. Only the benchmark's organizers
may see or change it; for anyone else the endpoint is a 404, as if there were nothing to
see, so it tells no one which needs are private or that there are any.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from leaderboard.api.base import ApiView
from leaderboard.api.errors import ApiError
from leaderboard.api.schema import errors
from leaderboard.models import Benchmark
from leaderboard.pipeline.tasks import queue_split
from leaderboard.reading.visibility import visible_benchmark

# The model's names for what the API calls otherwise, in a ValidationError's fields.
API_NAMES = {"split_fraction": "fraction", "split_seed": "seed", "__all__": "non_field"}


class SplitRequestSerializer(serializers.Serializer):
    private_needs = serializers.ListField(
        child=serializers.CharField(max_length=100),
        required=False,
        max_length=100_000,
        help_text="The private needs' ids (needs of the latest judgments; at least one need "
        "left public). `[]` clears the split.",
    )
    fraction = serializers.FloatField(
        required=False,
        min_value=0.0,
        max_value=1.0,
        help_text="Instead of a list: this share of the judged needs drawn as private.",
    )
    seed = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=2**63 - 1,
        help_text="The draw's seed (with `fraction`); drawn and stored when left out.",
    )

    def validate(self, data: dict) -> dict:
        listed, drawn = "private_needs" in data, "fraction" in data
        if listed == drawn:
            raise serializers.ValidationError(
                {"non_field": ["Give either private_needs or fraction (with an optional seed)."]}
            )
        if "seed" in data and not drawn:
            raise serializers.ValidationError({"seed": ["A seed draws with a fraction only."]})
        return data


class SplitSerializer(serializers.Serializer):
    benchmark = serializers.SlugField()
    private_needs = serializers.ListField(child=serializers.CharField())
    public_needs = serializers.ListField(
        child=serializers.CharField(), help_text="The latest judgments' other needs."
    )
    fraction = serializers.FloatField(allow_null=True, help_text="When drawn: the share.")
    seed = serializers.IntegerField(allow_null=True, help_text="When drawn: the seed.")
    queued = serializers.BooleanField(
        required=False, help_text="PUT: whether the scored runs' parts are being derived."
    )


def organised_or_404(request: Request, slug: str) -> Benchmark:
    benchmark = visible_benchmark(request, slug)
    if not benchmark.is_organised_by(request.user):
        raise ApiError(404, "No such benchmark, or not visible to the caller.")
    return benchmark


def split_of(benchmark: Benchmark) -> dict:
    latest = benchmark.latest_judgments
    private = list(benchmark.private_needs or [])
    hidden = set(private)
    return {
        "benchmark": benchmark.slug,
        "private_needs": private,
        "public_needs": [n for n in (latest.need_ids if latest else []) if n not in hidden],
        "fraction": benchmark.split_fraction,
        "seed": benchmark.split_seed,
    }


class Split(ApiView):
    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]
    serializer_class = SplitSerializer

    def get_object(self):
        """The benchmark (what OPTIONS asks for before it describes the PUT)."""
        return organised_or_404(self.request, self.kwargs["slug"])

    @extend_schema(
        operation_id="getSplit",
        summary="The benchmark's private needs (organizers)",
        description="A 404 for anyone who does not organise the benchmark.",
        responses={200: SplitSerializer, **errors(401, 403, 404, 429)},
    )
    def get(self, request: Request, slug: str) -> Response:
        return Response(SplitSerializer(split_of(organised_or_404(request, slug))).data)

    @extend_schema(
        operation_id="setSplit",
        summary="Set the private needs, listed or drawn (organizers)",
        description="Scores on the private needs are hidden until the benchmark's reveal. "
        "The runs already scored get their public and private results in the background "
        "(from their stored scores). An id that is not a need of the latest judgments, or "
        "a split leaving no public or no private need, is a 400 naming it.",
        request=SplitRequestSerializer,
        examples=[
            OpenApiExample("Listed", value={"private_needs": ["atwood"]}, request_only=True),
            OpenApiExample("Drawn", value={"fraction": 0.5, "seed": 7}, request_only=True),
        ],
        responses={200: SplitSerializer, **errors(400, 401, 403, 404, 415, 429)},
    )
    def put(self, request: Request, slug: str) -> Response:
        benchmark = organised_or_404(request, slug)
        body = SplitRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            with transaction.atomic():
                changed = benchmark.set_split(
                    data.get("private_needs"), data.get("fraction"), data.get("seed")
                )
                if changed:
                    queue_split(benchmark)
        except ValidationError as error:
            fields = getattr(error, "message_dict", {"non_field": error.messages})
            details = {API_NAMES.get(name, name): messages for name, messages in fields.items()}
            raise ApiError(400, error.messages[0], details) from error
        benchmark.refresh_from_db()
        return Response(SplitSerializer({**split_of(benchmark), "queued": changed}).data)
