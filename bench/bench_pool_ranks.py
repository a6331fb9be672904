"""Benchmark of the judged ranks kept for pool bias at scoring: ``python bench/bench_pool_ranks.py``.

What building a run's :class:`~evaluation.health.JudgedRanks` adds to scoring it, on a
generated run of 7,000 needs x 1,000 lines (7M lines, 28-byte doc ids, scores with ties)
and 700,000 judgments (100 a need, 60 of them on retrieved lines, relevance -1 to 2),
read from files as the platform reads them. Per repeat: ``evaluate`` as the platform
calls it (``-M``, ``complete``; three measures), then :meth:`JudgedRanks.of` on its
ranking and ``to_bytes`` (what ``score`` stores), and for context
:func:`~evaluation.health.judged_ranks` (the same from the run: the path for a result
stored without them). Medians of ``--repeat`` (wall clock). Target: the judged ranks
add < 0.3 s. The machine may be shared with other jobs: read the figures as upper
bounds. ``--depth 500`` makes ``-M`` cut every need (the judged ranks are not cut).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.health import JudgedRanks, QrelsIndex, judged_ranks  # noqa: E402
from evaluation.measures import evaluate  # noqa: E402
from evaluation.trec import read_qrels  # noqa: E402
from evaluation.trec.columnar import read_run  # noqa: E402

NEEDS, LINES, JUDGED, RETRIEVED = 7_000, 1_000, 100, 60
TARGET = 0.3


def write_campaign(folder: Path) -> tuple[Path, Path]:
    """The run and qrels files (kept in ``folder``: written once)."""
    run_path, qrels_path = folder / "run7m.txt", folder / "qrels700k.txt"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    rng = np.random.default_rng(0)
    number = rng.permutation(NEEDS * LINES).reshape(NEEDS, LINES)  # unique doc numbers
    score = np.sort(np.round(rng.random((NEEDS, LINES)) * 100, 3), axis=1)[:, ::-1]
    need = np.repeat([f"q{i}" for i in range(NEEDS)], LINES)
    docs = pd.Series(number.reshape(-1)).map("msmarco_passage_{:012d}".format)
    rank = np.tile(np.arange(1, LINES + 1), NEEDS)
    frame = pd.DataFrame(
        {"n": need, "q": "Q0", "d": docs, "r": rank, "s": score.reshape(-1), "t": "bench"}
    )
    frame.to_csv(run_path, sep=" ", header=False, index=False)
    picked = np.sort(rng.random((NEEDS, LINES)).argsort(axis=1)[:, :RETRIEVED], axis=1)
    judged = number[np.arange(NEEDS)[:, None], picked]
    outside = NEEDS * LINES + rng.permutation(NEEDS * (JUDGED - RETRIEVED))
    judged = np.hstack([judged, outside.reshape(NEEDS, JUDGED - RETRIEVED)])
    qrels = pd.DataFrame(
        {
            "n": np.repeat([f"q{i}" for i in range(NEEDS)], JUDGED),
            "i": 0,
            "d": pd.Series(judged.reshape(-1)).map("msmarco_passage_{:012d}".format),
            "r": rng.choice([-1, 0, 0, 0, 1, 2], NEEDS * JUDGED),
        }
    )
    qrels.to_csv(qrels_path, sep=" ", header=False, index=False)
    return run_path, qrels_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--depth", type=int, default=1000, help="-M (max_depth)")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    run_path, qrels_path = write_campaign(args.dir)
    qrels = read_qrels(qrels_path)
    run = read_run(run_path)
    index = QrelsIndex(qrels)
    scored, kept, from_run = [], [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        evaluation = evaluate(
            qrels, run, ["map", "P_10", "ndcg_cut_10"], max_depth=args.depth, complete=True
        )
        middle = time.perf_counter()
        blob = JudgedRanks.of(evaluation.ranking, index).to_bytes()
        end = time.perf_counter()
        evaluation = None
        scored.append(middle - start)
        kept.append(end - middle)
        start = time.perf_counter()
        again = judged_ranks(index, run).to_bytes()
        from_run.append(time.perf_counter() - start)
        assert again == blob
    median = statistics.median(kept)
    print(
        f"{len(run.score):,} lines, {len(qrels):,} judgments, -M {args.depth}: "
        f"evaluate {statistics.median(scored):.2f} s; judged ranks from its ranking "
        f"{median:.3f} s ({'ok' if median < TARGET else 'SLOW'}, target < {TARGET} s); "
        f"from the run {statistics.median(from_run):.2f} s; {len(blob) / 1e6:.1f} MB stored"
    )


if __name__ == "__main__":
    main()
