"""Comparing a scored run with every other scored run of its benchmark: the new pairs.

What ``compare_submission`` calls after a run is scored. The engine's
``compare_one_against_many`` tests the pairs (t, Wilcoxon, randomization); raw p-values
are stored, one ``Comparison`` row per pair and measure with the lower id as run a;
corrections are applied later by the page that asks a family of questions.

The engine's ``FewNeedsWarning`` (fewer than six paired needs) is for a person at the
command line; here it is one DEBUG log line per run (the pages say it in words), not a warning with a source line that
reads like a traceback in a worker's log or in ``load_demo``'s output.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pandas as pd
from django.db.models import Q

from evaluation.significance import FewNeedsWarning, compare_one_against_many
from leaderboard.models import Comparison, Judgments, MeasureVector, Result, Submission

PERMUTATIONS = 10_000
SEED = 0
logger = logging.getLogger(__name__)


def _clean(value):
    if value is None:
        return None
    value = float(value)
    return None if np.isnan(value) else value


def fill_vectors(benchmark, judgments: Judgments, measure: str) -> int:
    """Store ``measure``'s vector for every result of ``judgments`` that lacks one, from
    its ``per_need`` matrix (which holds every stored measure): a measure an organizer
    starts testing needs no rescoring. Results scored before the measure was stored lack
    the column and are skipped. Returns the number of vectors added."""
    missing = (
        Result.objects.filter(judgments=judgments, submission__benchmark=benchmark)
        .exclude(vectors__measure=measure)
        .only("pk", "per_need")
    )
    vectors = []
    for result in missing.iterator(chunk_size=100):
        frame = result.per_need_frame()
        if measure in frame.columns:
            values = (
                frame[measure].reindex(judgments.need_ids) if judgments.need_ids else frame[measure]
            )
            vectors.append(
                MeasureVector(
                    result=result,
                    measure=measure,
                    values=values.to_numpy(dtype=np.float64).tobytes(),
                )
            )
    MeasureVector.objects.bulk_create(vectors, ignore_conflicts=True)
    return len(vectors)


def compare(submission: Submission, judgments: Judgments) -> int:
    """Test ``submission`` against every other scored, visible run: only the new pairs.

    Pairs over the needs with at least one relevant document; a need a run did not
    answer scores 0 (trec_eval -c). Returns the number of comparisons stored.
    """
    benchmark = submission.benchmark
    mine = (
        Result.objects.filter(submission=submission, judgments=judgments).defer("per_need").first()
    )
    if mine is None:
        return 0
    # Pair over the needs with at least one relevant document: R per need, in the
    # vectors' order, from the small ranks blob (the per-need matrix is ~1.5 MB).
    mask = np.fromiter(mine.num_relevant().values(), dtype=np.int64) > 0
    if not mask.any():  # judgments without a relevant document: no need to pair on
        return 0
    stored = 0
    for measure in benchmark.tested_measures():
        fill_vectors(benchmark, judgments, measure)
        done = set(
            Comparison.objects.filter(judgments=judgments, measure=measure)
            .filter(Q(submission_a=submission) | Q(submission_b=submission))
            .values_list("submission_a_id", "submission_b_id")
        )
        done_ids = {a if b == submission.pk else b for a, b in done}
        vectors = (
            MeasureVector.objects.filter(
                measure=measure,
                result__judgments=judgments,
                result__submission__benchmark=benchmark,
                result__submission__status=Submission.Status.SCORED,
                result__submission__is_hidden=False,
            )
            .exclude(result__submission__in=[submission.pk, *done_ids])
            .values_list("result__submission_id", "values")
        )
        mine_vector = MeasureVector.objects.filter(result=mine, measure=measure).first()
        if mine_vector is None:
            continue
        others = {
            int(pk): np.frombuffer(bytes(values), dtype=np.float64)[mask] for pk, values in vectors
        }
        if not others:
            continue
        new = mine_vector.array()[mask]
        frame = pd.DataFrame(others)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", FewNeedsWarning)
            rows = compare_one_against_many(
                new, frame, name=str(submission.pk), permutations=PERMUTATIONS, seed=SEED
            )
        for warning in caught:
            if issubclass(warning.category, FewNeedsWarning):
                logger.debug("run %s on %s: %s", submission.pk, measure, warning.message)
            else:  # anything else is the engine's to say, as it said it
                warnings.warn_explicit(
                    warning.message, warning.category, warning.filename, warning.lineno
                )
        comparisons = []
        for row in rows.to_dict("records"):
            other = int(row["b"])
            if submission.pk > other:
                row, a, b = Comparison.turned(row), other, submission.pk
            else:
                a, b = submission.pk, other
            comparisons.append(
                Comparison(
                    submission_a_id=a,
                    submission_b_id=b,
                    judgments=judgments,
                    measure=measure,
                    n=int(row["n"]),
                    mean_diff=float(row["mean_diff"]),
                    ci_low=_clean(row["ci_low"]),
                    ci_high=_clean(row["ci_high"]),
                    effect_size=_clean(row["effect_size"]),
                    wins=int(row["wins"]),
                    ties=int(row["ties"]),
                    losses=int(row["losses"]),
                    t_statistic=_clean(row["t_statistic"]),
                    t_p=float(row["t_p"]),
                    wilcoxon_statistic=_clean(row["wilcoxon_statistic"]),
                    wilcoxon_p=float(row["wilcoxon_p"]),
                    randomization_p=float(row["randomization_p"]),
                    permutations=PERMUTATIONS,
                )
            )
        Comparison.objects.bulk_create(comparisons, ignore_conflicts=True, batch_size=1000)
        stored += len(comparisons)
    return stored
