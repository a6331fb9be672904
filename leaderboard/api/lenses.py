"""The API's side of the lens (``reading.lenses``): the ``?judgments=`` and ``?needs=``
query parameters every reading endpoint takes, and their refusals as JSON errors; and
the ``?measure=`` (and ``?correction=``) of those that rank or compare runs."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from evaluation.measures import stored_measures
from leaderboard.api.errors import ApiError
from leaderboard.models import Benchmark, Result, Submission
from leaderboard.reading.exports import EXPORT_CORRECTIONS
from leaderboard.reading.lenses import NEEDS, Lens, lens_for, versions
from leaderboard.reading.visibility import Problem, visible_submission

NEEDS_HELP = (
    "Which needs the scores are on: `public` or `private` (a campaign's split; the private "
    "ones are shown from its reveal, to its organizers before), or `all`."
)


def needs_field(**kwargs) -> serializers.ChoiceField:
    return serializers.ChoiceField(choices=NEEDS, help_text=NEEDS_HELP, **kwargs)


class LensQuerySerializer(serializers.Serializer):
    judgments = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="A judgments version number; the current one by default (an unknown one "
        "is a 404 whose `details.versions` lists them).",
    )
    needs = serializers.ChoiceField(
        choices=NEEDS,
        required=False,
        help_text="public, private or all; by default what the board shows the caller (the "
        "public needs before a campaign's reveal, its final needs after). Before the "
        "reveal, private or all is a 403 but for the organizers; on a benchmark without "
        "a split, anything but all is a 400.",
    )


def api_lens(request, benchmark: Benchmark) -> Lens:
    """The caller's lens on ``benchmark``; a refusal is a JSON error."""
    try:
        return lens_for(request, benchmark)
    except Problem as problem:
        details = {}
        if problem.status == 404:
            details["versions"] = [number for number, _ in versions(benchmark)]
        raise ApiError(problem.status, problem.message, details) from problem


def scored_run(request, submission_id: int) -> tuple[Submission, Result]:
    """The run the caller may see and its result through the caller's lens (the query's
    ``?judgments=``/``?needs=`` checked first); a 404 naming what the lens shows when the
    run has no result there."""
    run = visible_submission(request, submission_id)
    lens = api_lens(request, run.benchmark)
    result = lens.result(run)
    if result is None:
        raise ApiError(
            404,
            f"Run {run.run_name} has no scores yet here: {lens.line()}",
            {"status": run.status},
        )
    return run, result


def measure_names() -> list[str]:
    """The names the schema lists for ``?measure=``: trec_eval's name of every catalog
    measure every run stores that has per-need values and is a score (no count such as
    ``num_ret``, no summary-only ``gm_map``), so each one ranks a board and compares two
    runs; a benchmark's significance matrix takes its tested measures only (a 400 names
    them). The readers' labels (``nDCG@10``) are taken too but not listed: one name per
    measure keeps the list, and the cases a schema-driven test sends, half as long."""
    return [e.column for e in stored_measures() if e.per_need and not e.is_count]


@extend_schema_field({"type": "string", "enum": measure_names()})
class MeasureField(serializers.CharField):
    """A measure's name, read by ``resolve`` (so the readers' labels, any case, and a
    benchmark's own cutoffs such as ``RR@3`` are taken too); the schema lists the
    catalog's trec_eval names."""


class MeasureQuerySerializer(LensQuerySerializer):
    measure = MeasureField(
        required=False,
        max_length=100,
        help_text="trec_eval's name (`ndcg_cut_10`); the readers' label (`nDCG@10`) and a "
        "benchmark's own cutoffs (`RR@3`) are taken too. An unknown name, or a count "
        "(`num_ret`), is a 400 whose `details.suggestions` lists close matches.",
    )


class ExportQuerySerializer(MeasureQuerySerializer):
    correction = serializers.ChoiceField(
        choices=EXPORT_CORRECTIONS,
        default="holm",
        help_text="The correction of the t-test p against #1 over the runs tested against "
        "it (`p_vs_leader_holm`, the page's verdict, or `_bh`); `p_vs_leader_raw` always.",
    )


class SignificanceQuerySerializer(MeasureQuerySerializer):
    correction = serializers.ChoiceField(
        choices=["holm", "bh", "tukey", "none"], required=False, default="holm"
    )
