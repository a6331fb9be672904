"""Time pooling (:func:`evaluation.pooling.build_pool`) and the assessors' export.

Generates seeded runs (teams x runs per team, each with ``--docs`` documents per need
drawn from a shared collection of ``--collection`` documents per need, so runs
overlap), reads them with ``read_run`` (timed apart), and prints one row per depth:
teams, runs, needs, depth, pool pairs, seconds to pool, seconds to export. Usage::

    python bench/bench_pooling.py [--teams 100] [--runs 3] [--needs 50] [--depths 10,100]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from evaluation.pooling import PoolRun, assessor_file, assessor_pairs, build_pool
from evaluation.trec import read_run


def run_text(rng: np.random.Generator, name: str, needs: int, docs: int, collection: int) -> bytes:
    need = np.repeat(np.arange(needs), docs)
    doc = np.concatenate([rng.choice(collection, docs, replace=False) for _ in range(needs)])
    score = np.round(rng.random(needs * docs) * 100, 2)  # two decimals: ties happen
    rank = np.tile(np.arange(1, docs + 1), needs)
    lines = [
        f"{n} Q0 D{d} {r} {s} {name}"
        for n, d, r, s in zip(
            need.tolist(), doc.tolist(), rank.tolist(), score.tolist(), strict=True
        )
    ]
    return ("\n".join(lines) + "\n").encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teams", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3, help="runs per team (all pooled)")
    parser.add_argument("--needs", type=int, default=50)
    parser.add_argument("--docs", type=int, default=1000, help="documents per need per run")
    parser.add_argument("--collection", type=int, default=20_000)
    parser.add_argument("--depths", default="10,100")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    rng = np.random.default_rng(1)
    started = time.perf_counter()
    runs = []
    for t in range(args.teams):
        for r in range(args.runs):
            name = f"t{t}r{r}"
            text = run_text(rng, name, args.needs, args.docs, args.collection)
            runs.append(PoolRun(name, f"team{t}", r + 1, read_run(text)))
    lines = args.teams * args.runs * args.needs * args.docs
    print(f"generated and read {lines:,} run lines in {time.perf_counter() - started:.1f} s")
    print(f"{'teams':>6} {'runs':>5} {'needs':>6} {'depth':>6} {'pairs':>9} "
          f"{'pool s':>8} {'export s':>9}")  # fmt: skip
    for depth in (int(d) for d in args.depths.split(",")):
        pool_times, export_times = [], []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            pool = build_pool(runs, depth, args.runs)
            t1 = time.perf_counter()
            assessor_file(assessor_pairs(pool, None, seed=1))
            t2 = time.perf_counter()
            pool_times.append(t1 - t0)
            export_times.append(t2 - t1)
        print(
            f"{args.teams:>6} {len(runs):>5} {args.needs:>6} {depth:>6} {len(pool.pairs):>9,} "
            f"{statistics.median(pool_times):>8.2f} {statistics.median(export_times):>9.2f}"
        )


if __name__ == "__main__":
    main()
