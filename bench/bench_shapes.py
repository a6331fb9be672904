"""The cases users have, side by side: ``python -m evaluation``, trec_eval built from
its source, pytrec_eval and ir_measures on the same files, alternating, medians.

Cases (seeded synthetic qrels and runs, needs x 1,000 documents, the seed's measures:
map, P_5, P_10, recip_rank, Rprec, iprec_at_recall):

- ``50 x 1,000`` and ``250 x 1,000``: one run, a whole process each;
- ``100 runs of 50 x 1,000``: one qrels, 100 runs (the same pool, different rankings):
  ``python -m evaluation QRELS DIR`` in one call, trec_eval once per run in a shell
  loop (as a participant scores runs), pytrec_eval and ir_measures in one process;
- ``7M lines`` (6,980 needs, MS MARCO dev's size) with short doc ids,
  MS MARCO v2 style ids (``msmarco_passage_12_345678901``, 28 bytes) and UUIDs (36).

Wall time is measured around each child; CPU time (user + system) and peak RSS come
from ``/usr/bin/time`` (for the shell loop: its children's, the largest child's RSS). trec_eval: ``--trec-eval PATH``, else
``$TREC_EVAL``, else ``trec_eval`` on PATH, else built from ``--trec-eval-source`` (a
checkout or a git URL; default usnistgov/trec_eval's default branch) with its own ``make`` into ``~/.cache/rrl-bench``. The machine (``lscpu``'s model, cores)
and the load average before and after are printed: on a shared machine, read the
ratios to trec_eval, measured in the same loop, not the seconds. Usage::

    python bench/bench_shapes.py [--repeats 5] [--cases small,many,large] [--large-needs 6980]
        [--styles short,msmarco,uuid]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_engine import IR_MEASURES_SCRIPT, PYTREC_SCRIPT, TIME, generate  # noqa: E402

MEASURES = ["map", "P.5,10", "recip_rank", "Rprec", "iprec_at_recall"]
TREC_EVAL_GIT = "https://github.com/usnistgov/trec_eval"
CACHE = Path.home() / ".cache" / "rrl-bench"

MANY_PYTREC = """
import sys, pytrec_eval
qrels = {}
with open(sys.argv[1]) as f:
    for line in f:
        q, _, d, r = line.split()
        qrels.setdefault(q, {})[d] = int(r)
measures = {"map", "P_5", "P_10", "recip_rank", "Rprec", "iprec_at_recall"}
evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures)
for path in sys.argv[2:]:
    run = {}
    with open(path) as f:
        for line in f:
            q, _, d, _, s, _ = line.split()
            run.setdefault(q, {})[d] = float(s)
    result = evaluator.evaluate(run)
    names = sorted(next(iter(result.values())))
    for name in names:
        print(path, name, sum(v[name] for v in result.values()) / len(result))
"""

MANY_IR_MEASURES = """
import sys, ir_measures
from ir_measures import AP, P, RR, Rprec
qrels = list(ir_measures.read_trec_qrels(sys.argv[1]))
evaluator = ir_measures.evaluator([AP, P @ 5, P @ 10, RR, Rprec], qrels)
for path in sys.argv[2:]:
    print(path, evaluator.calc_aggregate(ir_measures.read_trec_run(path)))
"""


def timed(command: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system, children included) and peak RSS (MB)
    of one child, from ``/usr/bin/time``: CPU time moves less than wall time when other
    work shares the cores."""
    start = time.perf_counter()
    done = subprocess.run(
        [TIME, "-f", "%U %S %M", *command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed: {done.stderr.decode()[-500:]}")
    user, system, rss = done.stderr.decode().split()[-3:]
    return elapsed, float(user) + float(system), int(rss) / 1024


# ------------------------------------------------------------------------ trec_eval


def find_trec_eval(path: str | None, source: str) -> str | None:
    """A trec_eval binary: given, on PATH, cached, or built from ``source``."""
    for candidate in (path, os.environ.get("TREC_EVAL"), shutil.which("trec_eval")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    built = CACHE / "trec_eval" / "trec_eval"
    if built.exists():
        return str(built)
    checkout = CACHE / "trec_eval"
    try:
        if checkout.exists():
            shutil.rmtree(checkout)
        CACHE.mkdir(parents=True, exist_ok=True)
        if os.path.isdir(source):
            shutil.copytree(source, checkout)
        else:
            subprocess.run(
                ["git", "clone", "--depth", "1", source, str(checkout)],
                check=True,
                capture_output=True,
            )
        subprocess.run(["make"], cwd=checkout, check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as err:
        print(f"(trec_eval not built from {source}: {err}; left out)", file=sys.stderr)
        return None
    return str(built)


# ------------------------------------------------------------------------ inputs


def doc_namer(style: str):
    if style == "short":
        return str
    if style == "msmarco":  # MS MARCO v2 passages: msmarco_passage_<shard>_<offset>, 28 bytes
        return lambda d: f"msmarco_passage_{d % 70:02d}_{d * 37 % 10**9:09d}"
    if style == "uuid":
        return lambda d: str(uuid.UUID(int=(d * 0x9E3779B97F4A7C15 + 1) % (1 << 128)))
    raise ValueError(style)


def generate_named(folder: Path, needs: int, style: str) -> tuple[Path, Path]:
    """:func:`bench_engine.generate`'s files with the doc ids renamed (same pool, ranks)."""
    qrels, run = generate(folder, needs)
    if style == "short":
        return qrels, run
    name = doc_namer(style)
    out_q, out_r = folder / f"qrels.{needs}.{style}.txt", folder / f"run.{needs}.{style}.txt"
    with open(qrels) as src, open(out_q, "w") as dst:
        dst.writelines(
            f"{q} {i} {name(int(d))} {r}\n" for q, i, d, r in (line.split() for line in src)
        )
    with open(run) as src, open(out_r, "w") as dst:
        for block in iter(lambda: src.readlines(1 << 24), []):
            dst.write(
                "".join(
                    f"{q} Q0 {name(int(d))} {k} {s} {t}\n"
                    for q, _, d, k, s, t in (line.split() for line in block)
                )
            )
    return out_q, out_r


def generate_many(folder: Path, needs: int, count: int) -> tuple[Path, Path]:
    """One qrels and ``count`` runs over the same documents, ranked differently."""
    qrels, run = generate(folder, needs)
    lines = [line.split() for line in open(run)]
    folder_runs = folder / "runs"
    folder_runs.mkdir()
    rng = np.random.default_rng(16)
    for i in range(count):
        scores = np.round(rng.gamma(2.0, 3.0, size=len(lines)), 4)
        rows = {}
        for (q, _, d, *_), s in zip(lines, scores.tolist(), strict=True):
            rows.setdefault(q, []).append((s, d))
        out = []
        for q, docs in rows.items():
            docs.sort(reverse=True)
            out += [f"{q} Q0 {d} {k} {s:.4f} run{i:03d}\n" for k, (s, d) in enumerate(docs, 1)]
        (folder_runs / f"run{i:03d}.txt").write_text("".join(out))
    return qrels, folder_runs


# ------------------------------------------------------------------------ commands


def commands(qrels: Path, runs: list[Path], folder: Path, trec_eval: str | None, many: bool):
    python = sys.executable
    flags = [a for m in MEASURES for a in ("-m", m)]
    target = [str(runs[0].parent)] if many else [str(runs[0])]
    out = {"python -m evaluation": [python, "-m", "evaluation", *flags, str(qrels), *target]}
    if trec_eval:
        if many:
            loop = f'for f in "$@"; do {trec_eval} {" ".join(flags)} {qrels} "$f"; done'
            out["trec_eval"] = ["sh", "-c", loop, "sh", *map(str, runs)]
        else:
            out["trec_eval"] = [trec_eval, *flags, str(qrels), str(runs[0])]
    scripts = {
        "pytrec_eval": (PYTREC_SCRIPT, MANY_PYTREC),
        "ir_measures": (IR_MEASURES_SCRIPT, MANY_IR_MEASURES),
    }
    for tool, (single, several) in scripts.items():
        try:
            __import__(tool)
        except ImportError:
            continue
        script = folder / f"{tool}_bench.py"
        script.write_text(several if many else single)
        out[tool] = [python, str(script), str(qrels), *map(str, runs)]
    return out


def measure(cases, repeats: int, trec_eval: str | None, folder: Path) -> list[tuple]:
    rows = []
    for label, qrels, runs, many in cases:
        todo = commands(qrels, runs, folder, trec_eval, many)
        results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in todo}
        for _ in range(repeats):  # alternate the tools, then take medians
            for name, command in todo.items():
                results[name].append(timed(command))
        walls = {n: statistics.median(v[0] for v in vs) for n, vs in results.items()}
        cpus = {n: statistics.median(v[1] for v in vs) for n, vs in results.items()}
        for name, values in results.items():
            rss = statistics.median(v[2] for v in values)
            ratio = walls[name] / walls["trec_eval"] if "trec_eval" in walls else float("nan")
            cpu_ratio = cpus[name] / cpus["trec_eval"] if "trec_eval" in cpus else float("nan")
            rows.append((label, name, walls[name], ratio, cpus[name], cpu_ratio, rss))
            print(
                f"  {label}: {name} {walls[name]:.3f} s ({ratio:.2f}x trec_eval), "
                f"cpu {cpus[name]:.3f} s ({cpu_ratio:.2f}x), {rss:,.0f} MB",
                file=sys.stderr,
            )
    return rows


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--cases", default="small,many,large", help="small, many, large (the 7M-line cases)"
    )
    parser.add_argument("--large-needs", type=int, default=6980)
    parser.add_argument("--styles", default="short,msmarco,uuid", help="doc ids of the large cases")
    parser.add_argument("--runs", type=int, default=100, help="runs in the 'many' case")
    parser.add_argument("--trec-eval", default=None, help="trec_eval binary")
    parser.add_argument("--trec-eval-source", default=TREC_EVAL_GIT, help="checkout or git URL")
    args = parser.parse_args()
    wanted = set(args.cases.split(","))
    os.chdir(HERE.parent)  # python -m evaluation from this checkout
    # the engine's bytecode written once, as installing a wheel does: with
    # PYTHONDONTWRITEBYTECODE set (as some CI images do) every child would
    # otherwise compile the engine's modules again (~0.06 s of a small run)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "evaluation"], check=True)
    trec_eval = find_trec_eval(args.trec_eval, args.trec_eval_source)
    before = machine()
    with tempfile.TemporaryDirectory(prefix="bench-shapes-") as tmp:
        folder = Path(tmp)
        cases = []
        if "small" in wanted:
            for needs in (50, 250):
                sub = folder / f"small{needs}"
                sub.mkdir()
                qrels, run = generate(sub, needs)
                cases.append((f"{needs} x 1,000", qrels, [run], False))
        if "many" in wanted:
            sub = folder / "many"
            sub.mkdir()
            qrels, runs = generate_many(sub, 50, args.runs)
            cases.append((f"{args.runs} runs of 50 x 1,000", qrels, sorted(runs.iterdir()), True))
        if "large" in wanted:
            for style in args.styles.split(","):
                sub = folder / f"large-{style}"
                sub.mkdir()
                qrels, run = generate_named(sub, args.large_needs, style)
                size = run.stat().st_size >> 20
                label = f"{args.large_needs * 1000 / 1e6:.2g}M lines, {style} ids ({size} MB)"
                cases.append((label, qrels, [run], False))
        rows = measure(cases, args.repeats, trec_eval, folder)
    print(f"Machine: {before} (before), {machine().split(', ')[-1]} (after)")
    print(f"trec_eval: {trec_eval or 'not found'}; medians of {args.repeats}, tools alternating")
    print()
    print("| case | tool | wall s | vs trec_eval | CPU s | vs trec_eval | peak RSS MB |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for label, name, wall, ratio, cpu, cpu_ratio, rss in rows:
        shown = f"{ratio:.2f}x" if ratio == ratio else "-"
        shown_cpu = f"{cpu_ratio:.2f}x" if cpu_ratio == cpu_ratio else "-"
        print(f"| {label} | {name} | {wall:.3f} | {shown} | {cpu:.3f} | {shown_cpu} | {rss:,.0f} |")


if __name__ == "__main__":
    main()
