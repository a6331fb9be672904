"""The task state machine, called directly: claim, score, fail, compare, sweep, rescore."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import io

import numpy as np
import pytest
import scipy.stats
from django.core.files.base import ContentFile
from django.utils import timezone

from leaderboard.models import Comparison, Submission
from leaderboard.pipeline import comparing, scoring, tasks
from leaderboard.pipeline.loading import load_judgments
from tests import DEMO


def make_run(benchmark, participant, name: str, content: bytes) -> Submission:
    submission = Submission(benchmark=benchmark, participant=participant, run_name=name)
    submission.file.save(f"{name}.txt", ContentFile(content), save=False)
    submission.save()
    return submission


def test_score_claims_scores_and_stores_every_measure(library, participant):
    run = make_run(library, participant, "B", (DEMO / "run-B.txt").read_bytes())
    assert tasks.score_submission.apply(args=[run.pk], task_id="t-1").get() == "scored"
    run.refresh_from_db()
    assert run.status == "scored" and run.attempts == 1 and run.started and run.finished
    result = run.current_result()
    assert round(result.summary["map"], 3) == 0.740
    assert result.summary["num_q"] == 4
    per_need = result.per_need_frame()
    assert list(per_need.index) == library.current_judgments.need_ids
    assert round(per_need.loc["cs-foundations", "map"], 3) == 0.359
    ranks, num_rel = result.relevant_ranks()
    assert num_rel["cs-foundations"] == 15
    assert len(ranks["cs-foundations"]) == per_need.loc["cs-foundations", "num_rel_ret"]


def test_scoring_lets_the_run_go_before_the_measures(library, participant, monkeypatch):
    """The worker's peak: the parsed run (7M lines: ~300 MB) is freed once it is ordered,
    before the measures are computed, so scoring must not hold it (it hands the reader's
    columns over)."""
    import gc
    import weakref

    from evaluation.measures import evaluation as engine
    from evaluation.trec.columnar import read_run

    held, freed, events = [], [], []

    def reading(*args, **kwargs):
        run = read_run(*args, **kwargs)
        held.extend([weakref.ref(run), weakref.ref(run.score), weakref.ref(run.doc_hash)])
        events.append("read")
        return run

    def measuring(*args, **kwargs):
        gc.collect()
        freed.append(all(ref() is None for ref in held))
        return real(*args, **kwargs)

    real = engine.score_ranking
    monkeypatch.setattr(scoring, "read_run", reading)
    monkeypatch.setattr(engine, "score_ranking", measuring)
    run = make_run(library, participant, "B", (DEMO / "run-B.txt").read_bytes())
    assert tasks.score_submission.apply(args=[run.pk], task_id="t-1").get() == "scored"
    assert freed == [True] and events == ["read"]
    run.refresh_from_db()
    assert round(run.current_result().summary["map"], 3) == 0.740
    assert run.warnings == []


def test_a_second_task_for_the_same_run_does_nothing(library, participant):
    run = make_run(library, participant, "B", (DEMO / "run-B.txt").read_bytes())
    assert run.claim("first")
    assert tasks.score_submission.apply(args=[run.pk], task_id="second").get() == "skipped"
    run.refresh_from_db()
    assert run.status == "running" and run.task_id == "first"
    # The same task redelivered after its worker died may take it back.
    assert tasks.score_submission.apply(args=[run.pk], task_id="first").get() == "scored"
    assert tasks.score_submission.apply(args=[run.pk], task_id="third").get() == "skipped"
    run.refresh_from_db()
    assert run.attempts == 2 and run.results.count() == 1


def test_a_bad_line_fails_the_run_with_file_line_and_reason(library, participant):
    run = make_run(library, participant, "bad", b"atwood Q0 d1 1 1.0 t\natwood Q0 d2 2 oops t\n")
    assert tasks.score_submission.apply(args=[run.pk]).get() == "failed"
    run.refresh_from_db()
    assert run.status == "failed"
    assert ":2:" in run.failure_reason and "bad" in run.failure_reason
    assert not run.results.exists()


def test_withdrawn_while_scoring_stores_nothing(library, participant):
    run = make_run(library, participant, "B", (DEMO / "run-B.txt").read_bytes())
    assert run.claim("t")
    Submission.objects.filter(pk=run.pk).update(status="withdrawn")
    scoring.score(run, library.current_judgments)
    run.refresh_from_db()
    assert run.status == "withdrawn" and not run.results.exists()


def test_compare_tests_every_pair_once_and_matches_scipy(
    library, participant, django_capture_on_commit_callbacks
):
    a = make_run(library, participant, "A", (DEMO / "run-A.txt").read_bytes())
    b = make_run(library, participant, "B", (DEMO / "run-B.txt").read_bytes())
    for run in (a, b):
        with django_capture_on_commit_callbacks(execute=True):
            tasks.score_submission.apply(args=[run.pk])
    # With eager tasks, scoring B already compared it with A: one row per measure.
    comparisons = Comparison.objects.between(a, b)
    assert comparisons.count() == 1  # primary measure is map: one measure
    assert comparing.compare(b, library.current_judgments) == 0  # nothing new
    row = comparisons.get(measure="map")
    ap_a = a.current_result().per_need_frame()["map"].to_numpy()
    ap_b = b.current_result().per_need_frame()["map"].to_numpy()
    t = scipy.stats.ttest_rel(ap_a, ap_b)
    w = scipy.stats.wilcoxon(ap_a - ap_b, zero_method="wilcox", correction=False)
    assert row.submission_a_id == min(a.pk, b.pk)
    assert row.mean_diff == pytest.approx(np.mean(ap_a - ap_b), abs=1e-12)
    assert row.t_p == pytest.approx(t.pvalue, rel=1e-9)
    assert row.t_statistic == pytest.approx(t.statistic, rel=1e-9)
    assert row.wilcoxon_p == pytest.approx(w.pvalue, rel=1e-9)
    assert (row.wins, row.ties, row.losses) == (1, 0, 3)
    assert 0 < row.randomization_p <= 1


def test_sweep_requeues_stuck_runs_then_fails_them(
    library, participant, settings, django_capture_on_commit_callbacks
):
    settings.STUCK_AFTER_SECONDS = 60
    settings.MAX_SCORING_ATTEMPTS = 2
    run = make_run(library, participant, "B", (DEMO / "run-B.txt").read_bytes())
    long_ago = timezone.now() - dt.timedelta(hours=1)
    Submission.objects.filter(pk=run.pk).update(
        status="running", started=long_ago, attempts=1, task_id="dead"
    )
    with django_capture_on_commit_callbacks(execute=True):
        outcome = tasks.sweep_stuck.apply().get()
    assert outcome == {"requeued": 1, "failed": 0}
    run.refresh_from_db()
    assert run.status == "scored"  # eager: re-queued and scored at once
    Submission.objects.filter(pk=run.pk).update(status="running", started=long_ago, attempts=2)
    assert tasks.sweep_stuck.apply().get() == {"requeued": 0, "failed": 1}
    run.refresh_from_db()
    assert run.status == "failed" and "2 attempts" in run.failure_reason
    # A fresh run is left alone.
    fresh = make_run(library, participant, "fresh", (DEMO / "run-A.txt").read_bytes())
    Submission.objects.filter(pk=fresh.pk).update(status="running", started=timezone.now())
    assert tasks.sweep_stuck.apply().get() == {"requeued": 0, "failed": 0}


def test_new_judgments_rescore_every_run_and_switch_when_done(
    library, participant, django_capture_on_commit_callbacks
):
    a = make_run(library, participant, "A", (DEMO / "run-A.txt").read_bytes())
    b = make_run(library, participant, "B", (DEMO / "run-B.txt").read_bytes())
    for run in (a, b):
        tasks.score_submission.apply(args=[run.pk])
    first = library.current_judgments
    # Judge one more CS foundations book relevant: a new version.
    qrels = (
        (DEMO / "qrels.txt")
        .read_bytes()
        .replace(
            b"cs-foundations 0 cs-foundations-non-A01 0",
            b"cs-foundations 0 cs-foundations-non-A01 1",
        )
    )
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        second = load_judgments(library, io.BytesIO(qrels), "qrels-v2.txt")
    library.refresh_from_db()
    assert second.version == 2
    assert library.current_judgments == first  # old results stay until all are rescored
    assert set(Submission.objects.values_list("status", flat=True)) == {"queued"}
    assert a.results.get(judgments=first)  # still there, still shown
    with django_capture_on_commit_callbacks(execute=True):
        callbacks[0]()
    library.refresh_from_db()
    assert library.current_judgments == first  # one of two done
    with django_capture_on_commit_callbacks(execute=True):
        callbacks[1]()
    library.refresh_from_db()
    assert library.current_judgments == second
    assert a.current_result().summary["num_rel"] == 24
    assert Comparison.objects.filter(judgments=second).count() == 1
    # The same file again adds no version.
    assert load_judgments(library, io.BytesIO(qrels), "again.txt") == second


def test_the_same_judgments_plain_or_gzipped_are_no_new_version(
    library, participant, django_capture_on_commit_callbacks
):
    """The latest version's lines again, gzipped at any level or plain where they were
    gzipped, add no version and rescore nothing; other lines (as many of them) do. The
    version keeps the hash of its stored file (the workers' cache key)."""
    run = make_run(library, participant, "A", (DEMO / "run-A.txt").read_bytes())
    tasks.score_submission.apply(args=[run.pk])
    first = library.latest_judgments
    plain = (DEMO / "qrels.txt").read_bytes()
    fast, best = gzip.compress(plain, compresslevel=1), gzip.compress(plain, compresslevel=9)
    assert fast != best
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        for name, content in [("q.txt.gz", fast), ("q-best.txt.gz", best), ("q.txt", plain)]:
            again = load_judgments(library, io.BytesIO(content), name)
            assert (again, again.queued) == (first, 0), name
    assert not callbacks and library.judgments.count() == 1
    run.refresh_from_db()
    assert run.status == "scored"
    other = plain.replace(
        b"cs-foundations 0 cs-foundations-non-A01 0", b"cs-foundations 0 cs-foundations-non-A01 1"
    )
    gzipped = gzip.compress(other, mtime=0)
    second = load_judgments(library, io.BytesIO(gzipped), "v2.txt.gz")
    assert (second.version, second.queued) == (2, 1)
    assert second.num_judged == first.num_judged
    assert second.sha256 == hashlib.sha256(gzipped).hexdigest() != first.sha256
    # Gzipped latest, plain upload: the same judgments too.
    assert load_judgments(library, io.BytesIO(other), "v2.txt") == second
