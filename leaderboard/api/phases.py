"""A campaign's phases, for its organizers: list, add, change, delete.

Checked by the admin's own ``PhaseForm`` (closes after opens, no overlap with another phase
of the benchmark, a name not taken on it), so a phase the API accepts is one the admin
would. Times are ISO 8601; one without an offset is UTC, and answers are in UTC.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from leaderboard.admin_forms import phase_form
from leaderboard.api.base import ApiView
from leaderboard.api.errors import ApiError
from leaderboard.api.organizers import organised, refuse
from leaderboard.api.schema import errors
from leaderboard.api.serializers import PhaseSerializer
from leaderboard.models import Benchmark, Phase

LIMIT = 1_000_000  # within the database's integers; far above any campaign's


def limit(help_text: str) -> serializers.IntegerField:
    return serializers.IntegerField(
        min_value=0, max_value=LIMIT, required=False, allow_null=True, help_text=help_text
    )


class OrganizerPhaseSerializer(PhaseSerializer):
    """A phase as its organizers see it."""

    id = serializers.IntegerField()
    board = serializers.ChoiceField(choices=Phase._meta.get_field("board").choices)
    final_runs = serializers.IntegerField(
        allow_null=True, help_text="Final runs per team; null: the benchmark's."
    )


class PhaseBodySerializer(serializers.Serializer):
    """A phase to add, or (``PATCH``) the fields to change."""

    name = serializers.CharField(max_length=80)
    opens = serializers.DateTimeField(help_text="UTC unless an offset is given.")
    closes = serializers.DateTimeField(help_text="After `opens`.")
    daily_limit = limit("Runs per participant per UTC day; null: the benchmark's.")
    total_limit = limit("Runs per participant in the phase; null: none.")
    team_daily_limit = limit("Runs per team per UTC day; null: none.")
    team_total_limit = limit("Runs per team in the phase; null: none.")
    board = serializers.ChoiceField(
        choices=Phase._meta.get_field("board").choices,
        required=False,
        help_text="Who sees the phase's runs before the reveal (default public).",
    )
    final_runs = serializers.IntegerField(
        min_value=1, max_value=1000, required=False, allow_null=True
    )


def phase_of(benchmark: Benchmark, phase_id: int) -> Phase:
    phase = benchmark.phases.filter(pk=phase_id).first()
    if phase is None:
        raise ApiError(404, f"{benchmark.title} has no phase {phase_id}.")
    return phase


def saved(phase: Phase, values: dict) -> Phase:
    """``phase`` with ``values``, checked by the admin's form and saved (400 or 409 else)."""
    form = phase_form(phase, values)
    if not form.is_valid():
        refuse(form, "name")
    try:
        with transaction.atomic():
            return form.save()
    except IntegrityError as error:  # a phase of the same name saved meanwhile
        raise ApiError(409, "name: The benchmark has a phase of that name already.") from error


def answer(phase: Phase) -> dict:
    return OrganizerPhaseSerializer(phase).data


class Phases(ApiView):
    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]
    serializer_class = OrganizerPhaseSerializer

    @extend_schema(
        operation_id="listPhases",
        summary="The benchmark's phases, by opening time (organizers)",
        responses={200: OrganizerPhaseSerializer(many=True), **errors(401, 403, 404, 429)},
    )
    def get(self, request: Request, slug: str) -> Response:
        benchmark = organised(request, slug)
        return Response([answer(p) for p in benchmark.phases.order_by("opens")])

    @extend_schema(
        operation_id="addPhase",
        summary="Add a phase (organizers)",
        description="Refused (400) when it closes before it opens or overlaps another "
        "phase; a name the benchmark already has is a 409.",
        request=PhaseBodySerializer,
        examples=[
            OpenApiExample(
                "A test phase of two weeks, two final runs per team",
                value={
                    "name": "Test",
                    "opens": "2026-12-01T00:00Z",
                    "closes": "2026-12-15T00:00Z",
                    "daily_limit": 2,
                    "final_runs": 2,
                },
                request_only=True,
            )
        ],
        responses={201: OrganizerPhaseSerializer, **errors(400, 401, 403, 404, 409, 415, 429)},
    )
    def post(self, request: Request, slug: str) -> Response:
        benchmark = organised(request, slug)
        body = PhaseBodySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        phase = saved(Phase(benchmark=benchmark), body.validated_data)
        return Response(answer(phase), status=201)


class PhaseDetail(ApiView):
    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]
    serializer_class = OrganizerPhaseSerializer

    @extend_schema(
        operation_id="getPhase",
        summary="One phase (organizers)",
        responses={200: OrganizerPhaseSerializer, **errors(401, 403, 404, 429)},
    )
    def get(self, request: Request, slug: str, phase_id: int) -> Response:
        return Response(answer(phase_of(organised(request, slug), phase_id)))

    @extend_schema(
        operation_id="updatePhase",
        summary="Change a phase (organizers); a field left out keeps its value",
        description="Checked as a new phase is (400, or 409 for a name taken).",
        request=PhaseBodySerializer,
        responses={200: OrganizerPhaseSerializer, **errors(400, 401, 403, 404, 409, 415, 429)},
    )
    def patch(self, request: Request, slug: str, phase_id: int) -> Response:
        phase = phase_of(organised(request, slug), phase_id)
        body = PhaseBodySerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        return Response(answer(saved(phase, body.validated_data)))

    @extend_schema(
        operation_id="deletePhase",
        summary="Delete a phase (organizers)",
        description="As in the admin: its runs stay, outside any phase; its pools go. "
        "Refused (409) while its board hides runs or scores that it holds, before the "
        "reveal: outside any phase they would show.",
        request=None,
        responses={
            204: OpenApiResponse(description="Deleted."),
            **errors(401, 403, 404, 409, 429),
        },
    )
    def delete(self, request: Request, slug: str, phase_id: int) -> Response:
        phase = phase_of(organised(request, slug), phase_id)
        refusal = phase.deletion_refusal()
        if refusal:
            raise ApiError(409, refusal)
        phase.delete()
        return Response(status=204)
