"""Benchmark of evaluation.health: ``python bench/bench_health.py``.

Cases and targets (each < 30 s; pool bias of 1,000 runs <= 10 s):
- the 129 TREC-8 ad hoc runs x 50 needs, AP, P@10 and RR (the fixture), paired t + Holm;
- 1,000 runs x 7,000 needs (generated: run effect + need effect + noise, clipped to
  [0, 1]), one measure and three, paired t + Holm (499,500 pairs);
- pool bias recomputed from each run's stored judged ranks, as the platform does it,
  for 17, 107 and 1,000 runs x 100 needs of 1,000 documents (a table: runs, needs,
  seconds), with what building a run's judged ranks costs when it is scored.

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
    JudgedRanks,
    QrelsIndex,
    benchmark_health,
    discriminative_power,
    judged_ranks,
    kendall_tau,
    minimum_detectable_difference,
    pair_p_values,
    pool_bias,
    pool_bias_of_ranks,
    residual_variance,
    tau_ap,
    topic_set_size,
)

FIXTURES = ROOT / "tests" / "fixtures" / "trec8-per-topic"
TARGET = 30.0
#: Pool bias of 1,000 runs x 100 needs recomputed from stored judged ranks.
POOL_TARGET = 10.0


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


#: Popularity exponent of the generated runs' documents: pools of about 2,000 judged
#: documents a need from 100 runs at depth 100, near TREC-8 ad hoc's 1,736.
ZIPF = 1.0


def pooled_campaign(needs: int, seed: int, documents: int = 1000, collection: int = 20_000):
    """A benchmark's runs as they arrive: run i ranks ``documents`` of a ``collection``
    per need, drawn by popularity (Zipf weights, Gumbel top-k), so runs share their top
    documents as real ones do; judged to depth 100 over the first 100 runs, 10% of the
    pool relevant (a tenth of those grade 2). Returns the qrels and ``run(i)``, a frame."""
    weights = -ZIPF * np.log(np.arange(1, collection + 1))

    def run(i: int) -> pd.DataFrame:
        rng = np.random.default_rng([seed, i])
        keys = weights + rng.gumbel(size=(needs, collection))
        top = np.argpartition(-keys, documents, axis=1)[:, :documents]
        ranked = np.take_along_axis(top, np.argsort(-np.take_along_axis(keys, top, 1), axis=1), 1)
        return pd.DataFrame(
            {
                "need_id": np.repeat([f"n{j}" for j in range(needs)], documents),
                "doc_id": [f"d{d}" for d in ranked.ravel()],
                "score": np.tile(np.arange(documents, 0, -1, dtype=float), needs),
            }
        )

    pooled = pd.concat(
        [run(i).groupby("need_id", sort=False).head(100) for i in range(100)]
    ).drop_duplicates(["need_id", "doc_id"])
    rng = np.random.default_rng(seed)
    grade = rng.random(len(pooled))
    qrels = pooled[["need_id", "doc_id"]].assign(
        relevance=np.where(grade < 0.01, 2, grade < 0.1).astype(np.int64)
    )
    return qrels, run


def pool_rows(counts: list[int], needs: int, repeat: int) -> None:
    """Pool bias recomputed from stored judged ranks (what the platform's health task
    does): unpack each run's bytes and leave each team (two runs) out, depth 100, AP.
    Seconds: the best of ``repeat`` (wall clock); CPU s: the mean CPU time of one."""
    qrels, run = pooled_campaign(needs, 0)
    index = QrelsIndex(qrels)
    stored, built = [], []
    for i in range(max(counts)):
        frame = run(i)
        start = time.perf_counter()
        stored.append(judged_ranks(index, frame).to_bytes())
        built.append(time.perf_counter() - start)
    print(
        f"\npool bias from stored judged ranks ({len(qrels) / needs:,.0f} judged a need; "
        f"built once per run when it is scored: {np.median(built) * 1000:.0f} ms, "
        f"{np.median([len(b) for b in stored]) / 1024:,.0f} KiB a run of "
        "1,000 documents a need)"
    )
    print(f"{'runs':>6} {'needs':>6} {'seconds':>8} {'CPU s':>7}  {'target':>6}")
    for count in counts:
        owners = {str(i): f"team{i // 2}" for i in range(count)}

        def recompute(count: int = count, owners: dict = owners) -> dict:
            ranks = {str(i): JudgedRanks.from_bytes(stored[i], index) for i in range(count)}
            return pool_bias_of_ranks(index, ranks, owners, depth=100)

        cpu = time.process_time()
        seconds = best(recompute, repeat)
        cpu = (time.process_time() - cpu) / repeat
        target = "ok" if seconds <= POOL_TARGET else "SLOW"
        print(f"{count:>6,} {needs:>6} {seconds:>8.2f} {cpu:>7.2f}  {target:>6}")


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
    label = "pool bias from the runs: 80 runs (40 teams) x 50 needs"
    total = best(lambda: pool_bias(qrels, runs, owners, depth=100), 1)
    print(f"{label:<52} {total:8.2f}  {'-':>6}  1,000 documents per need, pool depth 100")
    pool_rows([17, 107] if args.quick else [17, 107, 1000], 100, args.repeat)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
