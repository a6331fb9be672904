"""Test data for the reader's pages, built by inserting rows directly.

The pages only read ``Result`` rows, so these fixtures do not need the scoring engine:
per-need values of the seed's library example are computed here by a deliberately slow,
obvious reference (a loop over ranks), from the run and qrels files in
``leaderboard/demo``. ``tests/leaderboard/pages/test_pages_demo.py`` checks the same numbers
through the real ``load_demo`` once the engine is in.
"""

from __future__ import annotations

import hashlib
import itertools
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from evaluation.significance import FewNeedsWarning, compare_pair
from leaderboard.models import (
    Benchmark,
    Comparison,
    InformationNeed,
    Judgments,
    Profile,
    Result,
    Submission,
)
from tests import DEMO

COUNTS = ("num_ret", "num_rel", "num_rel_ret")
_order = itertools.count()


def read_qrels(path: Path) -> dict[str, set[str]]:
    relevant: dict[str, set[str]] = {}
    for line in path.read_text().splitlines():
        need, _, doc, rel = line.split()
        relevant.setdefault(need, set())
        if int(rel) >= 1:
            relevant[need].add(doc)
    return relevant


def read_run(path: Path) -> dict[str, list[str]]:
    """Documents per need in trec_eval's order: score descending, doc_id descending."""
    lines: dict[str, list[tuple[float, str]]] = {}
    for line in path.read_text().splitlines():
        need, _, doc, _, score, _ = line.split()
        lines.setdefault(need, []).append((float(score), doc))
    return {need: [d for _, d in sorted(docs, reverse=True)] for need, docs in lines.items()}


def reference_scores(run: dict[str, list[str]], qrels: dict[str, set[str]]):
    """Per-need measures (trec_eval -c: every judged need, unanswered ones score 0) and
    the ranks of the relevant documents retrieved."""
    rows, ranks = {}, []
    for need, relevant in qrels.items():
        docs = run.get(need, [])
        hits = [i for i, doc in enumerate(docs, start=1) if doc in relevant]
        ranks += [(need, r) for r in hits]
        big_r = len(relevant)
        precisions = [(k + 1) / r for k, r in enumerate(hits)]
        row = {
            "num_ret": len(docs),
            "num_rel": big_r,
            "num_rel_ret": len(hits),
            "map": sum(precisions) / big_r if big_r else 0.0,
            "P_5": sum(1 for r in hits if r <= 5) / 5,
            "P_10": sum(1 for r in hits if r <= 10) / 10,
            "recip_rank": 1 / hits[0] if hits else 0.0,
            "Rprec": sum(1 for r in hits if r <= big_r) / big_r if big_r else 0.0,
        }
        for level in range(11):
            recall = level / 10
            best = [p for k, p in enumerate(precisions) if (k + 1) / big_r >= recall - 1e-12]
            row[f"iprec_at_recall_{recall:.2f}"] = max(best) if best else 0.0
        rows[need] = row
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "need_id"
    ranks_df = pd.DataFrame(ranks, columns=["need_id", "rank"])
    return frame, ranks_df, frame["num_rel"].astype(np.int64)


def summarize(frame: pd.DataFrame) -> dict[str, float]:
    """trec_eval's 'all' line: counts summed, everything else averaged over needs."""
    return {
        m: (float(frame[m].sum()) if m in COUNTS else float(frame[m].mean())) for m in frame.columns
    }


def make_benchmark(slug: str, needs: dict[str, str], primary: str = "map", **kw) -> Benchmark:
    benchmark = Benchmark.objects.create(
        slug=slug, title=kw.pop("title", slug.title()), primary_measure=primary, **kw
    )
    InformationNeed.objects.bulk_create(
        InformationNeed(benchmark=benchmark, need_id=n, title=t) for n, t in needs.items()
    )
    judgments = Judgments.objects.create(
        benchmark=benchmark,
        version=1,
        file=f"judgments/{slug}/v1-qrels.txt",
        sha256=hashlib.sha256(slug.encode()).hexdigest(),
        num_needs=len(needs),
        need_ids=list(needs),
    )
    benchmark.current_judgments = judgments
    benchmark.save(update_fields=["current_judgments"])
    return benchmark


def add_run(
    benchmark: Benchmark,
    user,
    name: str,
    frame: pd.DataFrame,
    ranks: pd.DataFrame | None = None,
    num_rel: pd.Series | None = None,
    *,
    summary: dict | None = None,
    judgments: Judgments | None = None,
    **fields,
) -> Submission:
    """A scored submission with its result on the benchmark's current judgments, under
    the team its participant is in now unless ``team`` says otherwise (as an upload)."""
    if "team" not in fields and "team_id" not in fields:
        fields["team_id"] = Profile.find(user).team_id
    created = fields.pop("created", None) or timezone.now() + timezone.timedelta(
        seconds=next(_order)
    )
    submission = Submission.objects.create(
        benchmark=benchmark,
        participant=user,
        run_name=name,
        file=f"runs/{benchmark.slug}/{name}.txt",
        status=fields.pop("status", Submission.Status.SCORED),
        created=created,
        **fields,
    )
    if ranks is None:
        ranks = pd.DataFrame({"need_id": pd.Series(dtype=str), "rank": pd.Series(dtype=int)})
    if num_rel is None:
        num_rel = pd.Series(1, index=frame.index, dtype=np.int64)
    Result.objects.create(
        submission=submission,
        judgments=judgments or benchmark.current_judgments,
        summary=summary if summary is not None else summarize(frame),
        num_needs=len(frame),
        per_need=Result.pack_per_need(frame),
        ranks=Result.pack_ranks(ranks, num_rel),
    )
    return submission


def store_comparisons(benchmark: Benchmark, measures=("map",)) -> None:
    """What ``compare_submission`` stores: every pair, raw p, a = lower pk."""
    results = list(Result.objects.filter(judgments=benchmark.current_judgments))
    for measure in measures:
        for r1, r2 in itertools.combinations(sorted(results, key=lambda r: r.submission_id), 2):
            f1, f2 = r1.per_need_frame(), r2.per_need_frame()
            if measure not in f1 or measure not in f2:
                continue
            needs = f1.index.union(f2.index)
            a = f1[measure].reindex(needs, fill_value=0.0).to_numpy()
            b = f2[measure].reindex(needs, fill_value=0.0).to_numpy()
            with warnings.catch_warnings():  # the seed example has 4 needs by design
                warnings.simplefilter("ignore", FewNeedsWarning)
                stats = compare_pair(a, b)
            Comparison.objects.get_or_create(
                submission_a_id=r1.submission_id,
                submission_b_id=r2.submission_id,
                judgments=benchmark.current_judgments,
                measure=measure,
                defaults=stats,
            )


def library_frames(folder: Path = DEMO) -> dict[str, tuple]:
    qrels = read_qrels(folder / "qrels.txt")
    return {
        path.stem.split("-")[-1]: reference_scores(read_run(path), qrels)
        for path in sorted(folder.glob("run-*.txt"))
    }


@pytest.fixture
def reader(db):
    return get_user_model().objects.create_user("reader", password="pw-reader-123")


@pytest.fixture
def demo_user(db):
    return get_user_model().objects.create_user("demo-owner", password="pw-demo-123")


@pytest.fixture
def library(db, demo_user) -> Benchmark:
    """The seed's library benchmark with System A (baseline) and B, comparisons stored."""
    needs = dict(
        line.split("\t", 1) for line in (DEMO / "needs.tsv").read_text().strip().splitlines()
    )
    benchmark = make_benchmark("library", needs, title="Library")
    for tag, (frame, ranks, num_rel) in library_frames().items():
        add_run(
            benchmark, demo_user, f"system-{tag}", frame, ranks, num_rel, is_baseline=tag == "A"
        )
    store_comparisons(benchmark)
    return benchmark
