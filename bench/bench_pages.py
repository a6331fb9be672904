"""Server time of the reader's pages on a large benchmark: 1,000 scored runs, 7,000 needs.

    python bench/bench_pages.py                       # SQLite file of its own in /tmp
    python bench/bench_pages.py --database-url postgres://postgres@127.0.0.1:5432/bench_pages

Builds (once; ``--rebuild`` to redo) a benchmark of 7,000 needs with 1,000 scored runs,
inserted directly as ``Result`` rows, plus the stored ``map`` comparison of every pair
(499,500 rows, as ``compare_submission`` leaves them), then times each page through
Django's test client (middleware, view, template: everything but the network) and
prints the median of ``--repeat`` requests after a warm-up, with the query count.

The two runs the comparison page opens carry a full per-need matrix (30 measures, like
the engine's output); the other 998 carry the seed's 8 measures per need, which keeps
the database to a few hundred MB. The leaderboard never reads per-need blobs (they are
deferred), so this does not flatter it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NEEDS = 7_000
RUNS = 1_000
SEED_MEASURES = [
    "map",
    "P_5",
    "P_10",
    "recip_rank",
    "Rprec",
    "ndcg_cut_10",
    "num_rel",
    "num_rel_ret",
]
EXTRA = [f"iprec_at_recall_{i / 10:.2f}" for i in range(11)] + [
    "P_20", "P_30", "P_100", "P_200", "P_1000", "bpref", "ndcg", "num_ret", "num_q", "gm_map",
    "Rprec_mult_1.00",
]  # fmt: skip
COUNTS = {"num_rel", "num_rel_ret", "num_ret", "num_q"}


def setup(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")
    os.environ.setdefault("DEBUG", "1")
    if database_url.startswith("postgres"):
        import psycopg

        base, name = database_url.rsplit("/", 1)
        with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{name}"')
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def per_need(rng: np.random.Generator, quality: float, measures: list[str]) -> pd.DataFrame:
    """Plausible per-need values around a run's quality (AP-like in [0, 1])."""
    ap = np.clip(rng.beta(2, 2, NEEDS) * 0.6 + quality - 0.3, 0, 1)
    cols = {}
    for m in measures:
        if m == "num_rel":
            cols[m] = np.full(NEEDS, 40.0)
        elif m == "num_rel_ret":
            cols[m] = np.round(ap * 40)
        elif m == "num_ret":
            cols[m] = np.full(NEEDS, 1000.0)
        elif m == "num_q":
            cols[m] = np.ones(NEEDS)
        elif m.startswith("P_"):
            k = int(m[2:])
            cols[m] = np.round(np.clip(ap + rng.normal(0, 0.1, NEEDS), 0, 1) * k) / k
        elif m == "recip_rank":
            cols[m] = 1 / rng.integers(1, 6, NEEDS) * (ap > 0.1)
        else:
            cols[m] = np.clip(ap + rng.normal(0, 0.05, NEEDS), 0, 1)
    cols["map"] = ap
    frame = pd.DataFrame(cols, index=pd.Index([f"q{i:05d}" for i in range(NEEDS)], name="need_id"))
    return frame


def summary_of(frame: pd.DataFrame) -> dict[str, float]:
    return {m: float(frame[m].sum() if m in COUNTS else frame[m].mean()) for m in frame.columns}


def build(rebuild: bool) -> tuple[str, int, int]:
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from leaderboard.models import (
        Benchmark,
        Comparison,
        InformationNeed,
        Judgments,
        MeasureVector,
        Result,
        Submission,
    )
    from leaderboard.pipeline.scoring import store_vectors

    slug = "bench-7000"
    benchmark = Benchmark.objects.filter(slug=slug).first()
    vectors = MeasureVector.objects.filter(result__submission__benchmark=benchmark)
    if benchmark and not rebuild and vectors.count() >= RUNS:
        ids = list(benchmark.submissions.order_by("pk").values_list("pk", flat=True)[:2])
        return slug, ids[0], ids[1]
    if benchmark:
        benchmark.delete()
    t0 = time.perf_counter()
    rng = np.random.default_rng(2026)
    user, _ = get_user_model().objects.get_or_create(username="bench")
    with transaction.atomic():
        benchmark = Benchmark.objects.create(slug=slug, title="Bench: 7,000 needs")
        need_ids = [f"q{i:05d}" for i in range(NEEDS)]
        InformationNeed.objects.bulk_create(
            [InformationNeed(benchmark=benchmark, need_id=n, title=f"need {n}") for n in need_ids],
            batch_size=2_000,
        )
        judgments = Judgments.objects.create(
            benchmark=benchmark, version=1, file="judgments/bench/v1.txt", sha256="0" * 64,
            num_needs=NEEDS, need_ids=need_ids,
        )  # fmt: skip
        benchmark.current_judgments = judgments
        benchmark.save()
        ranks = pd.DataFrame(
            {"need_id": np.repeat(need_ids, 5), "rank": np.tile([1, 3, 7, 20, 90], NEEDS)}
        )
        ranks_blob = Result.pack_ranks(ranks, pd.Series(40, index=need_ids))
        maps = {}
        for i in range(RUNS):
            submission = Submission.objects.create(
                benchmark=benchmark, participant=user, run_name=f"run-{i:04d}",
                file=f"runs/bench/run-{i:04d}.txt", status=Submission.Status.SCORED,
                is_baseline=i % 100 == 7,
            )  # fmt: skip
            measures = SEED_MEASURES + EXTRA if i < 2 else SEED_MEASURES
            frame = per_need(rng, rng.uniform(0.2, 0.5), measures)
            maps[submission.pk] = frame["map"]
            result = Result.objects.create(
                submission=submission, judgments=judgments, summary=summary_of(frame),
                num_needs=NEEDS, per_need=Result.pack_per_need(frame), ranks=ranks_blob,
            )  # fmt: skip
            store_vectors(result, frame, benchmark)  # what scoring stores beside the matrix
            if i % 100 == 99:
                print(f"  {i + 1} runs ({time.perf_counter() - t0:.0f} s)", flush=True)
    print("  paired t-tests of all pairs on map ...", flush=True)
    Comparison.objects.bulk_create(comparisons(pd.DataFrame(maps), judgments), batch_size=20_000)
    print(f"  built in {time.perf_counter() - t0:.0f} s", flush=True)
    ids = list(benchmark.submissions.order_by("pk").values_list("pk", flat=True)[:2])
    return slug, ids[0], ids[1]


def comparisons(scores: pd.DataFrame, judgments) -> list:
    """Every pair's stored row, as ``compare_submission`` leaves them (a = lower pk).

    The full engine on 499,500 pairs x 7,000 needs (Wilcoxon ranks, permutations) would
    take hours and the pages only read the rows, so the t-test is computed for all pairs
    from the covariance matrix (var(a - b) = var a + var b - 2 cov(a, b)) and the other
    tests' p-values copy it. The pair the comparison page opens gets ``compare_pair``.
    """
    from scipy import stats

    from evaluation.significance import compare_pair
    from leaderboard.models import Comparison

    x = scores.to_numpy()
    n = x.shape[0]
    ids = scores.columns.to_numpy()
    mean = x.mean(axis=0)
    cov = np.cov(x, rowvar=False)
    left, right = np.triu_indices(len(ids), 1)
    diff = mean[left] - mean[right]
    sd = np.sqrt(np.maximum(cov[left, left] + cov[right, right] - 2 * cov[left, right], 0))
    t = diff / (sd / np.sqrt(n))
    p = 2 * stats.t.sf(np.abs(t), n - 1)
    half = stats.t.ppf(0.975, n - 1) * sd / np.sqrt(n)
    rows = []
    for i, (a, b) in enumerate(zip(ids[left].tolist(), ids[right].tolist(), strict=True)):
        rows.append(
            Comparison(
                submission_a_id=a,
                submission_b_id=b,
                judgments=judgments,
                measure="map",
                n=n,
                mean_diff=diff[i],
                ci_low=diff[i] - half[i],
                ci_high=diff[i] + half[i],
                effect_size=diff[i] / sd[i],
                wins=0,
                ties=0,
                losses=0,
                t_statistic=t[i],
                t_p=p[i],
                wilcoxon_p=p[i],
                randomization_p=p[i],
                permutations=0,
            )  # fmt: skip
        )
    first = compare_pair(x[:, 0], x[:, 1])
    rows[0] = Comparison(
        submission_a_id=ids[0], submission_b_id=ids[1], judgments=judgments, measure="map",
        **first,
    )  # fmt: skip
    return rows


def timed(client, url: str, repeat: int) -> tuple[float, int, int, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.get(url)  # warm-up: connections, templates, caches
    times = []
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as queries:
            start = time.perf_counter()
            response = client.get(url)
            times.append(time.perf_counter() - start)
        assert response.status_code == 200, (url, response.status_code)
    return statistics.median(times) * 1000, min(times) * 1000, len(queries), len(response.content)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", default="sqlite:////tmp/bench_pages.sqlite3")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    setup(args.database_url)
    from django.conf import settings
    from django.test import Client
    from django.urls import reverse

    settings.ALLOWED_HOSTS = ["*"]
    slug, a, b = build(args.rebuild)
    from django.db import connection

    with connection.cursor() as cursor:  # planner statistics, as autovacuum would keep them
        cursor.execute("ANALYZE")
    client = Client()
    pages = [
        ("leaderboard (map, 1,000 runs)", reverse("leaderboard", args=[slug])),
        ("leaderboard ?measure=P_10", reverse("leaderboard", args=[slug]) + "?measure=P_10"),
        ("comparison (AP, 7,000 needs)", reverse("compare", args=[slug, a, b])),
        (
            "comparison ?measure=P_10 (computed)",
            reverse("compare", args=[slug, a, b]) + "?measure=P_10",
        ),
        ("significance matrix (top 50, Holm)", reverse("significance", args=[slug])),
        ("leaderboard.json", reverse("leaderboard_export", args=[slug, "json"])),
        ("a run's results beside 1,000 runs (map)", reverse("run_results", args=[a])),
    ]
    engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    print(f"\n{RUNS} runs x {NEEDS} needs on {engine}; median of {args.repeat} requests\n")
    print("| page | median ms | min ms | queries | KB |\n|---|---:|---:|---:|---:|")
    for name, url in pages:
        median, low, queries, size = timed(client, url, args.repeat)
        print(f"| {name} | {median:.1f} | {low:.1f} | {queries} | {size / 1024:.0f} |")


if __name__ == "__main__":
    main()
