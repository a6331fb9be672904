"""The synthetic files the platform benches score: seeded qrels and one run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def write_files(folder: Path, needs: int, docs: int, seed: int = 1) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    need_ids = np.array([f"{i:05d}" for i in range(needs)])
    judged = 100
    qrels = pd.DataFrame(
        {
            "need": np.repeat(need_ids, judged),
            "it": 0,
            "doc": np.tile([f"D{j:07d}" for j in range(judged)], needs),
            "rel": (rng.random(needs * judged) < 0.2).astype(int),
        }
    )
    qrels_path = folder / "qrels.txt"
    qrels.to_csv(qrels_path, sep=" ", header=False, index=False)
    doc_pool = np.array([f"D{j:07d}" for j in range(docs * 2)])
    run = pd.DataFrame(
        {
            "need": np.repeat(need_ids, docs),
            "q0": "Q0",
            "doc": doc_pool[(np.arange(needs * docs) % docs) * 2 % (docs * 2)],
            "rank": np.tile(np.arange(1, docs + 1), needs),
            "score": np.round(rng.random(needs * docs) * 100, 6),
            "tag": "bench-new",
        }
    )
    run_path = folder / "run.txt"
    run.to_csv(run_path, sep=" ", header=False, index=False)
    return qrels_path, run_path
