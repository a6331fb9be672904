"""Benchmark of evaluation.health: ``python bench/bench_health.py``.

Cases and target (each < 30 s):
- the 129 TREC-8 ad hoc runs x 50 needs, AP, P@10 and RR (the fixture), paired t + Holm;
- 1,000 runs x 7,000 needs (generated: run effect + need effect + noise, clipped to
  [0, 1]), one measure and three, paired t + Holm (499,500 pairs).

Each row is the best of ``--repeat`` runs (wall clock) of :func:`benchmark_health`,
split into its parts: V_E (the two-way ANOVA residual), MDD and topic set sizes (the
noncentral t), the p of every pair (one Gram matrix for the t-test, the significance
package for Wilcoxon) with the correction, and tau/tau_AP. The Wilcoxon row on TREC-8
is context. The machine these figures come from may be shared with other jobs: read them
as upper bounds.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.health import (  # noqa: E402
    DELTAS,
    benchmark_health,
    discriminative_power,
    kendall_tau,
    minimum_detectable_difference,
    pair_p_values,
    pool_bias,
    residual_variance,
    tau_ap,
    topic_set_size,
)

FIXTURES = ROOT / "tests" / "fixtures" / "trec8-per-topic"
TARGET = 30.0


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def generated(runs: int, needs: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.beta(2, 5, runs)[None, :] + rng.normal(0, 0.15, needs)[:, None]
    x += rng.normal(0, 0.12, (needs, runs))
    return pd.DataFrame(np.clip(x, 0, 1), columns=[f"run{i}" for i in range(runs)])


def campaign(participants: int, per: int, needs: int, depth: int, seed: int):
    """Runs of 1,000 documents per need drawn from a shared collection of 5,000 per need,
    judged to ``depth`` over every run (the pool), 10% of the pooled documents relevant."""
    rng = np.random.default_rng(seed)
    runs, owners = {}, {}
    for p in range(participants):
        for r in range(per):
            docs = np.concatenate([rng.choice(5000, 1000, replace=False) for _ in range(needs)])
            runs[f"p{p}r{r}"] = pd.DataFrame(
                {
                    "need_id": np.repeat([f"n{i}" for i in range(needs)], 1000),
                    "doc_id": [f"d{d}" for d in docs],
                    "score": np.tile(np.arange(1000, 0, -1, dtype=float), needs),
                }
            )
            owners[f"p{p}r{r}"] = f"p{p}"
    pooled = pd.concat(
        [f.groupby("need_id", observed=True).head(depth) for f in runs.values()]
    ).drop_duplicates(["need_id", "doc_id"])
    qrels = pooled[["need_id", "doc_id"]].assign(
        relevance=(rng.random(len(pooled)) < 0.1).astype(np.int64)
    )
    return qrels, runs, owners


def parts(scores: pd.DataFrame, test: str, repeat: int) -> dict[str, float]:
    n = scores.shape[0]
    sigma = float(np.sqrt(2 * residual_variance(scores)))
    means = scores.mean(axis=0).to_numpy()
    return {
        "V_E": best(lambda: residual_variance(scores), repeat),
        "MDD+sizes": best(
            lambda: (
                [minimum_detectable_difference(n, sigma)]
                + [topic_set_size(d, sigma) for d in DELTAS]
            ),
            repeat,
        ),
        f"{test} p+Holm": best(
            lambda: discriminative_power(pair_p_values(scores, test), correction="holm"), repeat
        ),
        "tau+tau_AP": best(
            lambda: (kendall_tau(means, means[::-1]), tau_ap(means, means[::-1])), repeat
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="skip the 1,000 x 7,000 cases")
    args = parser.parse_args()
    print(f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs")
    print("shared machine: other jobs may be running; times are upper bounds\n")
    trec8 = {m: pd.read_csv(FIXTURES / f"adhoc8_{m}.csv") for m in ("ap", "p10", "rr")}
    cases: list[tuple[str, dict[str, pd.DataFrame], str]] = [
        ("TREC-8 129 runs x 50 needs, 3 measures", trec8, "t"),
        ("TREC-8 129 runs x 50 needs, AP (Wilcoxon, context)", {"ap": trec8["ap"]}, "wilcoxon"),
    ]
    if not args.quick:
        big = generated(1000, 7000, 0)
        cases.append(("generated 1,000 runs x 7,000 needs, 1 measure", {"m": big}, "t"))
        three = {f"m{i}": generated(1000, 7000, i) for i in range(3)}
        cases.append(("generated 1,000 runs x 7,000 needs, 3 measures", three, "t"))
    header = f"{'case':<52} {'total s':>8}  {'target':>6}  parts of the first measure (s)"
    print(header)
    failed = False
    for label, matrices, test in cases:
        total = best(
            lambda m=matrices, t=test: benchmark_health(m, test=t, correction="holm"), args.repeat
        )
        split = parts(next(iter(matrices.values())), test, 1)
        ok = total < TARGET or test != "t"
        failed |= not ok
        detail = ", ".join(f"{k} {v:.3f}" for k, v in split.items())
        print(f"{label:<52} {total:8.2f}  {'ok' if ok else 'SLOW':>6}  {detail}")
    qrels, runs, owners = campaign(40, 2, 50, 100, 0)
    label = "pool bias: 80 runs (40 participants) x 50 needs"
    total = best(lambda: pool_bias(qrels, runs, owners, depth=100), 1)
    print(f"{label:<52} {total:8.2f}  {'-':>6}  1,000 documents per need, pool depth 100")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
