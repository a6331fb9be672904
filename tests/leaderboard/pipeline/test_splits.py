"""A split benchmark's public and private results: stored with the whole one when a run is
scored, or derived from the stored whole results when the split comes later; each equals
scoring against the part's qrels alone, with its own vectors, pool ranks, comparisons and
health."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evaluation.health import QrelsIndex, judged_ranks
from evaluation.measures import evaluate, stored_requests
from evaluation.trec import read_qrels
from leaderboard.models import BenchmarkHealth, Comparison, MeasureVector, PoolRanks, Result
from leaderboard.pipeline import splits, tasks
from tests import DEMO
from tests.leaderboard.pipeline.test_tasks import make_run

PRIVATE = ["atwood", "stage-plays"]
PUBLIC = ["cs-foundations", "russian-novels"]


def _scored(benchmark, participant, name: str):
    run = make_run(benchmark, participant, name, (DEMO / f"run-{name}.txt").read_bytes())
    assert tasks.score_submission.apply(args=[run.pk], task_id=f"t-{name}").get() == "scored"
    return run


def _alone(benchmark, needs: list[str], name: str):
    """The engine's evaluation of the run on the qrels of ``needs`` only."""
    qrels = read_qrels(DEMO / "qrels.txt")
    return evaluate(
        qrels[qrels["need_id"].isin(needs)],
        DEMO / f"run-{name}.txt",
        stored_requests(benchmark.catalog_measures()),
        relevance_level=benchmark.relevance_level,
        max_depth=benchmark.max_depth,
        complete=True,
        interpolation=benchmark.interpolation,
    )


def _check_part(benchmark, run, part, name: str) -> Result:
    result = Result.objects.get(submission=run, judgments=part)
    alone = _alone(benchmark, part.need_ids, name)
    # every stored measure, bit for bit
    assert result.summary == {key: float(value) for key, value in alone.summary.items()}
    assert result.num_needs == len(part.need_ids)
    frame = result.per_need_frame()
    assert list(frame.index) == part.need_ids
    assert np.array_equal(frame["map"].to_numpy(), alone.per_need["map"].to_numpy())
    vector = MeasureVector.objects.get(result=result, measure="map")
    assert np.array_equal(vector.array(), alone.per_need["map"].to_numpy())
    qrels = read_qrels(DEMO / "qrels.txt")
    subset = qrels[qrels["need_id"].isin(part.need_ids)].reset_index(drop=True)
    expected = judged_ranks(QrelsIndex(subset), DEMO / f"run-{name}.txt").to_bytes()
    assert bytes(PoolRanks.objects.get(result=result).data) == expected
    assert set(result.num_relevant()) == set(part.need_ids)
    return result


@pytest.mark.parametrize("interpolation", ["exact", "trec_eval-9"])
def test_scoring_a_split_benchmark_stores_both_parts(
    library, participant, django_capture_on_commit_callbacks, interpolation
):
    library.interpolation = interpolation
    library.save()
    library.set_split(PRIVATE)
    with django_capture_on_commit_callbacks(execute=True):
        runs = [_scored(library, participant, name) for name in ("A", "B")]
    version = library.latest_judgments
    public, private = version.parts.get(part="public"), version.parts.get(part="private")
    for run, name in zip(runs, ("A", "B"), strict=True):
        whole = Result.objects.get(submission=run, judgments=version)
        assert whole.summary["num_q"] == 4
        assert _check_part(library, run, public, name).summary["num_q"] == 2
        _check_part(library, run, private, name)
        assert (
            Result.objects.get(submission=run, judgments=public).summary["map"]
            != whole.summary["map"]
        )
    # the pair is tested on each side's needs apart, and each side has its health
    for judgments, needs in ((version, 4), (public, 2), (private, 2)):
        comparison = Comparison.objects.get(judgments=judgments, measure="map")
        assert comparison.n == needs
        assert BenchmarkHealth.objects.get(judgments=judgments).data["runs"] == 2


def test_a_split_set_after_scoring_derives_the_same_parts(
    library, participant, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        runs = [_scored(library, participant, name) for name in ("A", "B")]
    assert library.set_split(PRIVATE)
    with django_capture_on_commit_callbacks(execute=True):
        tasks.queue_split(library)
    version = library.latest_judgments
    for part in version.parts.all():
        for run, name in zip(runs, ("A", "B"), strict=True):
            _check_part(library, run, part, name)
        assert Comparison.objects.get(judgments=part, measure="map").n == 2
        assert BenchmarkHealth.objects.filter(judgments=part).exists()
    # run again: nothing missing, nothing stored twice
    assert tasks.split_results.apply(args=[library.pk]).get() == 0
    # a changed split: the changed parts are new rows, derived anew
    library.set_split(["atwood"])
    with django_capture_on_commit_callbacks(execute=True):
        tasks.queue_split(library)
    private = version.parts.get(part="private")
    assert private.need_ids == ["atwood"]
    _check_part(library, runs[0], private, "A")
    _check_part(library, runs[1], version.parts.get(part="public"), "B")


def test_deriving_the_parts_costs_the_same_queries_for_twelve_runs_as_for_three(
    library, participant, monkeypatch
):
    """Each run's missing parts were looked up, its pool ranks read and its two results
    stored with queries of their own."""

    def derived() -> tuple[int, list]:
        with CaptureQueriesContext(connection) as queries:
            stored = splits.derive_parts(library.pk)
        return len(queries), stored

    def scored(number: int):
        content = (DEMO / f"run-{'AB'[number % 2]}.txt").read_bytes()
        run = make_run(library, participant, f"run-{number}", content)
        assert tasks.score_submission.apply(args=[run.pk]).get() == "scored"
        return run

    runs = [scored(number) for number in range(3)]
    assert library.set_split(PRIVATE)
    few, stored = derived()
    assert len(stored) == 6
    runs += [scored(number) for number in range(3, 12)]
    Result.objects.filter(judgments__parent__isnull=False).delete()  # scoring stored them
    many, stored = derived()
    assert len(stored) == 24 and many == few
    version = library.latest_judgments
    public, private = version.parts.get(part="public"), version.parts.get(part="private")
    assert sorted(stored) == sorted((run.pk, p.pk) for run in runs for p in (public, private))
    _check_part(library, runs[11], public, "B")
    _check_part(library, runs[10], private, "A")
    assert derived()[1] == []  # nothing missing: nothing stored twice
    # in batches smaller than the runs: the same results
    Result.objects.filter(judgments__parent__isnull=False).delete()
    monkeypatch.setattr(splits, "BATCH", 5)
    assert sorted(derived()[1]) == sorted(stored)
    _check_part(library, runs[5], public, "B")
