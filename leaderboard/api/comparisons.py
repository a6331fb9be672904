"""Comparisons: two runs compared and the all-pairs significance matrix, as the token's
user sees them.

Their serializers live here (not in ``serializers``, which is long enough). The read
layer computes everything (``reading.comparisons.comparison``, ``reading.pairs``), as it
does for the pages; these views check the input first so that every refusal is a JSON
error.
"""

from __future__ import annotations

import math

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from evaluation.measures import UnknownMeasure
from leaderboard.api.base import ApiView
from leaderboard.api.errors import ApiError
from leaderboard.api.lenses import MeasureQuerySerializer, SignificanceQuerySerializer, needs_field
from leaderboard.api.schema import errors
from leaderboard.api.serializers import FiniteFloat, labels_field
from leaderboard.api.views import board_for
from leaderboard.reading.boards import ALPHA, measure_column, unknown_measure_message
from leaderboard.reading.comparisons import MeasureRefused, asked_comparison
from leaderboard.reading.exports import comparison_payload
from leaderboard.reading.pairs import significance_matrix
from leaderboard.reading.visibility import Problem, visible_benchmark

# --- What the comparisons answer ------------------------------------------------------


class ComparedRunSerializer(serializers.Serializer):
    submission_id = serializers.IntegerField()
    run = serializers.CharField()
    mean = FiniteFloat(allow_null=True)


class PairedNeedSerializer(serializers.Serializer):
    need_id = serializers.CharField()
    a = FiniteFloat()
    b = FiniteFloat()
    diff = FiniteFloat()


class ComparisonSerializer(serializers.Serializer):
    """``reading.exports.comparison_payload``: the same JSON as the page's download."""

    benchmark = serializers.SlugField()
    judgments_version = serializers.IntegerField()
    needs = needs_field()
    measure = serializers.CharField()
    labels = labels_field()
    a = ComparedRunSerializer()
    b = ComparedRunSerializer()
    difference = serializers.CharField()
    verdict = serializers.CharField(
        help_text="The comparison in one sentence: which run is ahead, by how much, on how "
        "many needs, and whether the paired t-test finds the difference significant."
    )
    stored = serializers.BooleanField(help_text="The tests were stored when the run was scored.")
    correction = serializers.CharField()
    tests = serializers.DictField(
        child=serializers.JSONField(),
        help_text="t-test, Wilcoxon and randomization p-values, mean difference, CI, effect size.",
    )
    per_need = PairedNeedSerializer(many=True)


class MatrixCellSerializer(serializers.Serializer):
    a = serializers.IntegerField(help_text="The row's run.")
    b = serializers.IntegerField(help_text="The column's run.")
    p = FiniteFloat(allow_null=True, help_text="Adjusted p-value; null when not tested yet.")
    significant = serializers.BooleanField()
    better = serializers.BooleanField(help_text="The row's run has the higher value.")


MATRIX_CELL = {
    "type": "object",
    "nullable": True,
    "properties": {
        "a": {"type": "integer", "description": "The row's run."},
        "b": {"type": "integer", "description": "The column's run."},
        "p": {
            "type": "number",
            "nullable": True,
            "description": "Adjusted p-value; null when not tested yet.",
        },
        "significant": {"type": "boolean"},
        "better": {"type": "boolean", "description": "The row's run has the higher value."},
    },
    "required": ["a", "b", "p", "significant", "better"],
}


class MatrixRunSerializer(serializers.Serializer):
    submission_id = serializers.IntegerField()
    run_name = serializers.CharField()
    value = FiniteFloat(allow_null=True)


class SignificanceSerializer(serializers.Serializer):
    measure = serializers.CharField()
    correction = serializers.CharField()
    alpha = serializers.FloatField()
    family_size = serializers.IntegerField()
    missing = serializers.IntegerField(help_text="Pairs not tested yet.")
    runs = MatrixRunSerializer(many=True, source="rows")
    cells = serializers.SerializerMethodField(
        help_text="cells[i][j]: row run i against column run j; null on the diagonal."
    )

    @extend_schema_field(
        {"type": "array", "items": {"type": "array", "items": MATRIX_CELL}},
    )
    def get_cells(self, matrix: dict) -> list:
        # One serializer for every cell: DRF copies a serializer's fields each time one is
        # made, which for 50 x 50 cells took longer than the rest of the request.
        cell_serializer = MatrixCellSerializer()
        return [
            [None if cell is None else cell_serializer.to_representation(cell) for cell in line]
            for line in matrix["cells"]
        ]


def _finite(value):
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _checked_measure(name: str | None, default: str) -> str:
    try:
        return measure_column(name, default)
    except UnknownMeasure as error:
        raise ApiError(
            400, unknown_measure_message(error), {"suggestions": error.suggestions}
        ) from error


class Compare(ApiView):
    serializer_class = ComparisonSerializer

    @extend_schema(
        operation_id="compareRuns",
        summary="Two runs compared need by need, with paired significance tests",
        description="Differences are a - b on the judged needs with a relevant document; "
        "raw p-values (one comparison, no correction). The stored tests when the runs were "
        "compared at scoring time, else computed now. Without `measure`: the benchmark's "
        "primary measure (AP for runs scored before it was chosen), as on the page; a "
        "measure these runs have no per-need values of, or a count (`num_ret`), is a 400 "
        "whose `details.measures` lists those they can be compared on.",
        parameters=[MeasureQuerySerializer],
        responses={200: ComparisonSerializer, **errors(400, 401, 403, 404, 429)},
    )
    def get(self, request: Request, slug: str, a: int, b: int) -> Response:
        asked = self.query(MeasureQuerySerializer).get("measure")
        try:
            context = asked_comparison(request, slug, a, b, asked)
        except MeasureRefused as refused:
            raise ApiError(400, refused.message, refused.details) from refused
        except Problem as problem:
            raise ApiError(problem.status, problem.message) from problem
        payload = comparison_payload(context)
        payload["tests"] = {k: _finite(v) for k, v in payload["tests"].items()}
        return Response(ComparisonSerializer(payload).data)


class Significance(ApiView):
    serializer_class = SignificanceSerializer

    @extend_schema(
        operation_id="getSignificanceMatrix",
        summary="Every pair of the top runs: adjusted p-values",
        description="Stored paired t-tests corrected over the family (Holm, Benjamini-Hochberg "
        "or none), or Tukey's HSD on the per-need scores; only the benchmark's tested "
        "measures.",
        parameters=[SignificanceQuerySerializer],
        responses={200: SignificanceSerializer, **errors(400, 401, 403, 404, 429)},
    )
    def get(self, request: Request, slug: str) -> Response:
        query = self.query(SignificanceQuerySerializer)
        benchmark = visible_benchmark(request, slug)
        tested = benchmark.tested_measures()
        primary = benchmark.primary_measure
        # the primary measure, unless it is a summary over needs (GMAP): the first tested one
        default = primary if primary in tested or not tested else tested[0]
        measure = _checked_measure(query.get("measure"), default)
        if measure not in tested:
            raise ApiError(
                400,
                f"All pairs are tested on {', '.join(tested)} only.",
                {"measure": [f"One of {', '.join(tested)}."]},
            )
        matrix = significance_matrix(board_for(request, benchmark, measure), query["correction"])
        data = {
            "measure": matrix.measure,
            "correction": matrix.correction,
            "alpha": ALPHA,
            "family_size": matrix.family_size,
            "missing": matrix.missing,
            "rows": matrix.rows,
            "cells": matrix.cells,
        }
        return Response(SignificanceSerializer(data).data)
