"""Benchmark the scoring engine against pytrec_eval (and trec_eval, ir_measures if present).

Generates seeded synthetic qrels and runs (needs x 1,000 documents; the
largest is MS MARCO dev scale, 6,980 needs, about 7M run lines) in a temporary
directory, then times whole processes on the same files, tools alternating,
and prints medians of wall time and peak memory (max RSS of the child):

- ``python -m evaluation`` with the seed's measures
  (map, P_5, P_10, recip_rank, Rprec, iprec_at_recall);
- pytrec_eval: a script reading the files into dicts (as its users do) and
  evaluating the same measures;
- ``trec_eval`` when a binary is on PATH or given with ``--trec-eval``;
- ir_measures when importable.

It also prints the engine's in-process breakdown (read, order + join, score)
for the largest size. Usage::

    python bench/bench_engine.py [--sizes 50,200,6980] [--repeats 3] [--trec-eval PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MEASURES = ["map", "P.5,10", "recip_rank", "Rprec", "iprec_at_recall"]
DOCS_PER_NEED = 1000
COLLECTION = 8_841_823  # MS MARCO passages

PYTREC_SCRIPT = """
import sys, pytrec_eval
qrels, run = {}, {}
with open(sys.argv[1]) as f:
    for line in f:
        q, _, d, r = line.split()
        qrels.setdefault(q, {})[d] = int(r)
with open(sys.argv[2]) as f:
    for line in f:
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
measures = {"map", "P_5", "P_10", "recip_rank", "Rprec", "iprec_at_recall"}
result = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
names = sorted(next(iter(result.values())))
for name in names:
    print(name, sum(v[name] for v in result.values()) / len(result))
"""

IR_MEASURES_SCRIPT = """
import sys, ir_measures
from ir_measures import AP, P, RR, Rprec
qrels = ir_measures.read_trec_qrels(sys.argv[1])
run = ir_measures.read_trec_run(sys.argv[2])
print(ir_measures.calc_aggregate([AP, P @ 5, P @ 10, RR, Rprec], qrels, run))
"""


def generate(folder: Path, needs: int, seed: int = 20261130) -> tuple[Path, Path]:
    """Seeded synthetic qrels + run, written as real ones are (need blocks, scores descending)."""
    rng = np.random.default_rng(seed + needs)
    qrels_path, run_path = folder / f"qrels.{needs}.txt", folder / f"run.{needs}.txt"
    with open(qrels_path, "w") as qrels, open(run_path, "w") as run:
        for start in range(0, needs, 500):
            block = min(500, needs - start)
            docs = np.stack(
                [rng.choice(COLLECTION, DOCS_PER_NEED, replace=False) for _ in range(block)]
            )
            # scores with 4 decimals: some ties, broken by doc id as trec_eval does
            scores = -np.sort(
                -np.round(rng.gamma(2.0, 3.0, size=(block, DOCS_PER_NEED)), 4), axis=1
            )
            run_lines, qrels_lines = [], []
            for i in range(block):
                need = 1_000 + start + i
                row_docs, row_scores = docs[i], scores[i]
                run_lines.append(
                    "".join(
                        f"{need} Q0 {d} {r} {s:.4f} bench\n"
                        for r, (d, s) in enumerate(
                            zip(row_docs.tolist(), row_scores.tolist(), strict=True), 1
                        )
                    )
                )
                judged = np.unique(np.concatenate((
                    row_docs[rng.geometric(0.05, size=12).clip(max=DOCS_PER_NEED) - 1],
                    rng.integers(0, COLLECTION, size=8),
                )))  # fmt: skip
                rels = rng.choice([0, 0, 1, 2], size=len(judged))
                qrels_lines.append(
                    "".join(
                        f"{need} 0 {d} {r}\n"
                        for d, r in zip(judged.tolist(), rels.tolist(), strict=True)
                    )
                )
            run.write("".join(run_lines))
            qrels.write("".join(qrels_lines))
    return qrels_path, run_path


TIME = shutil.which("time") or "/usr/bin/time"


def timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child process.

    The RSS comes from ``/usr/bin/time -f %M`` when it exists: a child started
    straight from this (large) Python process would report this process's RSS
    as its own floor, since Linux carries the pre-exec high-water mark over.
    """
    wrapper = [TIME, "-f", "%M"] if os.path.exists(TIME) else []
    start = time.perf_counter()
    done = subprocess.run([*wrapper, *command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed: {done.stderr.decode()[-500:]}")
    if wrapper:
        return elapsed, int(done.stderr.decode().split()[-1]) / 1024
    return elapsed, float("nan")


def tools(qrels: Path, run: Path, folder: Path, trec_eval: str | None) -> dict[str, list[str]]:
    python = sys.executable
    engine = [python, "-m", "evaluation"]
    for m in MEASURES:
        engine += ["-m", m]
    pytrec = folder / "pytrec_bench.py"
    pytrec.write_text(PYTREC_SCRIPT)
    out = {"python -m evaluation": [*engine, str(qrels), str(run)]}
    try:
        import pytrec_eval  # noqa: F401

        out["pytrec_eval"] = [python, str(pytrec), str(qrels), str(run)]
    except ImportError:
        pass
    try:
        import ir_measures  # noqa: F401

        script = folder / "ir_measures_bench.py"
        script.write_text(IR_MEASURES_SCRIPT)
        out["ir_measures"] = [python, str(script), str(qrels), str(run)]
    except ImportError:
        pass
    if trec_eval:
        command = [trec_eval]
        for m in MEASURES:
            command += ["-m", m]
        out["trec_eval"] = [*command, str(qrels), str(run)]
    return out


BREAKDOWN_SCRIPT = """
import json, sys, time
t0 = time.perf_counter()
from evaluation.measures import evaluate
from evaluation.trec import read_qrels, read_run
t1 = time.perf_counter()
q = read_qrels(sys.argv[1])
t2 = time.perf_counter()
r = read_run(sys.argv[2])
t3 = time.perf_counter()
evaluate(q, r, sys.argv[3:])
t4 = time.perf_counter()
print(json.dumps({
    "import numpy, pandas, pyarrow, evaluation": t1 - t0,
    "read qrels": t2 - t1,
    "read run (parse, checks, duplicate hash)": t3 - t2,
    "evaluate (order, qrels join, measures)": t4 - t3,
}))
"""


def breakdown(qrels: Path, run: Path) -> dict[str, float]:
    """Where the command's time goes, measured in a fresh process set up as the CLI."""
    done = subprocess.run(
        [sys.executable, "-c", BREAKDOWN_SCRIPT, str(qrels), str(run), *MEASURES],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="50,200,6980", help="numbers of needs (x 1,000 docs)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--trec-eval", default=shutil.which("trec_eval"), help="trec_eval binary")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp:
        folder = Path(tmp)
        sizes = [int(s) for s in args.sizes.split(",")]
        for needs in sizes:
            qrels, run = generate(folder, needs)
            commands = tools(qrels, run, folder, args.trec_eval)
            results: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
            for _ in range(args.repeats):  # alternate the tools, then take medians
                for name, command in commands.items():
                    results[name].append(timed(command))
            lines = sum(1 for _ in open(run, "rb"))
            for name, values in results.items():
                wall = statistics.median(v[0] for v in values)
                rss = statistics.median(v[1] for v in values)
                rows.append((needs, lines, name, wall, rss))
            if needs == max(sizes):
                parts = breakdown(qrels, run)
    reference = {(n, name): wall for n, _, name, wall, _ in rows}
    print(
        f"| needs | run lines | tool | wall s (median of {args.repeats}) | peak RSS MB | vs pytrec_eval |"
    )
    print("|---:|---:|---|---:|---:|---:|")
    for needs, lines, name, wall, rss in rows:
        base = reference.get((needs, "pytrec_eval"))
        ratio = f"{wall / base:.2f}x" if base else "-"
        print(f"| {needs:,} | {lines:,} | {name} | {wall:.2f} | {rss:,.0f} | {ratio} |")
    print()
    print(f"In-process breakdown, {max(sizes):,} needs:")
    for name, seconds in parts.items():
        print(f"- {name}: {seconds:.2f} s")


if __name__ == "__main__":
    main()
