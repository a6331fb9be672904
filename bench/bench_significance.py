"""Benchmark of evaluation.significance: ``python bench/bench_significance.py``.

Cases and targets:
- all 8,256 pairs of the 129 TREC-8 ad hoc runs (AP, 50 needs), B = 10,000: <= 10 s;
- one new run against 500 runs at 50 needs: <= 1 s; at 7,000 needs: <= 5 s;
- context (no target): one against 500 at 12 needs with ties (Wilcoxon by enumeration),
  and scipy's Wilcoxon called pair by pair on the 8,256 TREC-8 pairs, the slow way.

Each row is the best of ``--repeat`` runs (wall clock) and splits the time into the
t-test with its interval (matrix operations), Wilcoxon (scipy, grouped by method) and
the randomization test (one shared sign matrix, matrix products). Tukey's HSD blocked by
need is timed on the first 50 TREC-8 runs (1,225 pairs, the significance page) and on all
129 (8,256 pairs): first call (the range table for k is built and cached) and warm; scipy's
``studentized_range.sf``, one numerical integration per p, is timed on 100 pairs and scaled
up, or on every pair with ``--tukey`` (about 10 s and 70 s).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

# BLAS threads must be set before numpy loads: --blas-threads 1 shows the single-threaded
# figures (what a Celery worker process sharing its cores should use, see the docs).
if "--blas-threads" in sys.argv:
    _threads = sys.argv[sys.argv.index("--blas-threads") + 1]
    for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_name] = _threads

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.significance import (  # noqa: E402
    compare_all_pairs,
    compare_one_against_many,
    corrections,
    paired_differences,
    tukey_hsd_blocked,
)
from evaluation.significance import paired as significance  # noqa: E402

TREC8 = ROOT / "tests" / "fixtures" / "trec8-per-topic" / "adhoc8_ap.csv"
B = 10_000


def best(func: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def synthetic(needs: int, runs: int, seed: int, levels: int | None = None) -> pd.DataFrame:
    """AP-like scores (skewed, some zeros), 4 decimals; or ``levels`` grid values (P@k)."""
    rng = np.random.default_rng(seed)
    difficulty = rng.beta(0.8, 1.6, size=(needs, 1))
    quality = rng.uniform(0.6, 1.2, size=(1, runs))
    x = np.clip(difficulty * quality + rng.normal(0, 0.08, size=(needs, runs)), 0, 1)
    x = np.round(x * levels) / levels if levels else np.round(x, 4)
    return pd.DataFrame(x, columns=[f"run{i}" for i in range(runs)])


def parts(d_block: Callable[[], np.ndarray], repeat: int) -> tuple[float, float, float]:
    """Seconds for t + CI (+ differences), Wilcoxon, randomization on one block of pairs."""
    d = d_block()
    n, pairs = d.shape
    t_seconds = best(lambda: significance._t_block(d_block()), repeat)
    w_seconds = best(lambda: significance._wilcoxon(d), repeat)
    r_seconds = best(
        lambda: significance._randomization_p(lambda cols: d[:, cols], pairs, n, B, 0), repeat
    )
    return t_seconds, w_seconds, r_seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--tukey", action="store_true", help="time scipy's Tukey p on every pair (~80 s)"
    )
    parser.add_argument("--no-loop", action="store_true", help="skip the pair-by-pair scipy run")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--blas-threads", help="set OPENBLAS/OMP/MKL_NUM_THREADS (default: all)")
    args = parser.parse_args()
    warnings.simplefilter("ignore", significance.FewNeedsWarning)

    trec8 = pd.read_csv(TREC8)
    x = trec8.to_numpy()
    left, right = np.triu_indices(x.shape[1], 1)
    new50, many50 = synthetic(50, 501, 1).pipe(lambda f: (f.iloc[:, 0], f.iloc[:, 1:]))
    new7k, many7k = synthetic(7000, 501, 2).pipe(lambda f: (f.iloc[:, 0], f.iloc[:, 1:]))
    new12, many12 = synthetic(12, 501, 3, levels=10).pipe(lambda f: (f.iloc[:, 0], f.iloc[:, 1:]))

    cases = [
        (
            "all pairs, 129 TREC-8 runs (AP)",
            len(left),
            50,
            10.0,
            lambda: compare_all_pairs(trec8, permutations=B),
            lambda: paired_differences(x[:, left], x[:, right]),
        ),
        (
            "1 new vs 500 runs, 50 needs",
            500,
            50,
            1.0,
            lambda: compare_one_against_many(new50, many50, permutations=B),
            lambda: paired_differences(new50.to_numpy()[:, None], many50.to_numpy()),
        ),
        (
            "1 new vs 500 runs, 7,000 needs",
            500,
            7000,
            5.0,
            lambda: compare_one_against_many(new7k, many7k, permutations=B),
            lambda: paired_differences(new7k.to_numpy()[:, None], many7k.to_numpy()),
        ),
        (
            "1 new vs 500 runs, 12 needs, P@10-like ties",
            500,
            12,
            None,
            lambda: compare_one_against_many(new12, many12, permutations=B),
            lambda: paired_differences(new12.to_numpy()[:, None], many12.to_numpy()),
        ),
    ]
    rows = []
    for label, pairs, needs, target, run, d_block in cases:
        total = best(run, args.repeat)
        t_s, w_s, r_s = parts(d_block, args.repeat)
        verdict = "-" if target is None else ("ok" if total <= target else "SLOW")
        rows.append(
            (
                label,
                pairs,
                needs,
                f"{total:.2f}",
                f"{t_s:.3f}",
                f"{w_s:.3f}",
                f"{r_s:.2f}",
                "-" if target is None else f"<= {target:g}",
                verdict,
            )
        )

    header = (
        "case",
        "pairs",
        "needs",
        "total s",
        "t+CI s",
        "Wilcoxon s",
        "random. s",
        "target s",
        "",
    )
    print(f"B = {B} permutations, seed 0; best of {args.repeat}; load {os.getloadavg()[0]:.1f}")
    print(
        f"machine: {cpu_model()}, {os.cpu_count()} CPUs; Python {platform.python_version()}, "
        f"numpy {np.__version__}, scipy {__import__('scipy').__version__}; "
        f"BLAS threads {os.environ.get('OPENBLAS_NUM_THREADS', 'default (all cores)')}"
    )
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")

    if not args.no_loop:
        d = paired_differences(x[:, left], x[:, right])
        start = time.perf_counter()
        for j in range(d.shape[1]):
            if d[:, j].any():
                stats.wilcoxon(d[:, j], correction=False)
        loop = time.perf_counter() - start
        grouped = best(lambda: significance._wilcoxon(d), args.repeat)
        print(
            f"\nWilcoxon on the 8,256 TREC-8 pairs: scipy pair by pair {loop:.2f} s, "
            f"grouped by method {grouped:.3f} s (same numbers)"
        )
        small = paired_differences(new12.to_numpy()[:, None], many12.to_numpy()[:, :20])
        start = time.perf_counter()
        for j in range(small.shape[1]):
            if small[:, j].any():
                stats.wilcoxon(small[:, j], correction=False)
        per_pair = (time.perf_counter() - start) / small.shape[1]
        print(
            f"Wilcoxon at 12 needs with ties: scipy {per_pair * 1000:.0f} ms per pair "
            "(permutation_test over 2^12 flips); here one matrix product for all pairs"
        )
    print()
    print("| Tukey HSD blocked by need | pairs | needs | first call s | warm s | scipy sf s |")
    print("|---|---|---|---|---|---|")
    for runs in (50, 129):
        frame = trec8.iloc[:, :runs]
        corrections._range_table.cache_clear()
        first = best(lambda frame=frame: tukey_hsd_blocked(frame), 1)
        warm = best(lambda frame=frame: tukey_hsd_blocked(frame), args.repeat)
        q = tukey_hsd_blocked(frame)["q_statistic"].to_numpy()
        df = (frame.shape[0] - 1) * (runs - 1)
        sample = q if args.tukey else q[:: max(1, q.size // 100)]
        scipy_s = best(lambda s=sample, k=runs, df=df: stats.studentized_range.sf(s, k, df), 1)
        scipy_s *= q.size / sample.size
        scipy_note = f"{scipy_s:.1f}" + ("" if args.tukey else f" (from {sample.size} pairs)")
        print(
            f"| first {runs} TREC-8 runs (AP) | {q.size} | {frame.shape[0]} | {first:.3f} "
            f"| {warm:.3f} | {scipy_note} |"
        )
    missed = [row[0] for row in rows if row[-1] == "SLOW"]
    if missed:
        print(f"\ntarget missed: {', '.join(missed)} (load average {os.getloadavg()[0]:.1f})")
    return 1 if missed and args.strict else 0


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
