"""``python -m evaluation power|discrim|tau|poolbias``: a benchmark's health on the command line.

    python -m evaluation power   (--scores MATRIX.csv | QRELS RUN RUN ...) [-m MEASURE]
        [--alpha A] [--power P] [--delta D ...] [--format text|json]
    python -m evaluation discrim (--scores MATRIX.csv | QRELS RUN RUN ...) [-m MEASURE]
        [--test t|wilcoxon|randomization] [--correction none|holm|bh] [--alpha A]
        [--permutations B] [--seed S] [--format text|json]
    python -m evaluation tau     (--scores A.csv --scores B.csv | QRELS RUN ... -m M1 -m M2)
        [--format text|json]
    python -m evaluation poolbias QRELS RUN RUN ... [-m MEASURE] [--depth K]
        [--participant RUN=NAME ...] [--judged-k K] [--format text|json]

Score matrices are those ``compare --scores`` reads (one column per run, one row per
need); with QRELS and runs each run is scored by the engine (``trec_eval -c``) and named
by its file name, as ``compare`` does. ``tau`` ranks the runs by their mean under each
matrix (or measure), the first being the reference of tau_AP. ``poolbias`` needs the
runs themselves; without ``--participant`` each run is its own participant.
See :mod:`evaluation.health` for the statistics. Exit status: 0 done, 1 bad input, 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from evaluation.cli.compare import InputError, family_notes, read_scores, scores_from_runs, seed
from evaluation.health import (
    DELTAS,
    TESTS,
    asl_curve,
    discriminative_power,
    kendall_tau,
    minimum_detectable_difference,
    pair_p_values,
    pool_bias,
    residual_variance,
    t_test_power,
    tau_ap,
    topic_set_size,
)
from evaluation.significance import CORRECTIONS

COMMANDS = ("power", "discrim", "tau", "poolbias")


def _parser(command: str, description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"python -m evaluation {command}", description=description
    )
    parser.add_argument("files", nargs="*", metavar="QRELS RUN", help="qrels, then runs")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    return parser


def _matrix(args: argparse.Namespace, parser: argparse.ArgumentParser) -> tuple[pd.DataFrame, str]:
    if args.scores and args.files:
        parser.error("give either --scores MATRIX.csv or QRELS RUN RUN ..., not both")
    if args.scores:
        return read_scores(args.scores), args.measure or "score"
    if len(args.files) < 3:
        parser.error("need QRELS and at least two runs (or --scores MATRIX.csv)")
    return scores_from_runs(args.files[0], args.files[1:], args.measure or "map")


def _alpha(parser: argparse.ArgumentParser, value: float, name: str = "--alpha") -> None:
    if not 0 < value < 1:
        parser.error(f"{name} must lie in (0, 1)")


def _finite(value: float | None) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def power_report(scores: pd.DataFrame, measure: str, alpha: float, power: float, deltas) -> dict:
    n = scores.shape[0]
    v_e = residual_variance(scores)
    sigma_d = math.sqrt(2 * v_e) if math.isfinite(v_e) else math.nan
    return {
        "measure": measure,
        "needs": n,
        "runs": int(scores.shape[1]),
        "alpha": alpha,
        "power": power,
        "v_e": _finite(v_e),
        "sigma_d": _finite(sigma_d),
        "mdd": _finite(minimum_detectable_difference(n, sigma_d, alpha, power)),
        "deltas": [
            {
                "delta": delta,
                "power": _finite(float(t_test_power(delta, n, sigma_d, alpha))),
                "topic_set_size": topic_set_size(delta, sigma_d, alpha, power),
            }
            for delta in deltas
        ],
    }


def power_text(r: dict) -> str:
    lines = [
        f"{r['runs']} runs, {r['measure']} over {r['needs']} needs; paired t-test, two-sided, "
        f"alpha = {r['alpha']}",
        f"V_E (two-way ANOVA residual) = {r['v_e']:.6g}, sigma_d = sqrt(2 V_E) = {r['sigma_d']:.6g}",
        f"minimum detectable difference at {r['power']:.0%} power: {r['mdd']:.4f}",
        "",
        f"{'delta':>8}  {'power at ' + str(r['needs']) + ' needs':>18}  needs for {r['power']:.0%} power",
    ]
    for row in r["deltas"]:
        size = row["topic_set_size"]
        lines.append(
            f"{row['delta']:>8.4g}  {row['power']:>18.3f}  {size if size is not None else 'over 1,000,000'}"
        )
    return "\n".join(lines) + "\n"


def run_power(argv: Sequence[str]) -> int:
    parser = _parser("power", "Minimum detectable difference, power and topic set size.")
    parser.add_argument("--scores", metavar="MATRIX.csv")
    parser.add_argument("-m", "--measure")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--power", type=float, default=0.8)
    parser.add_argument("--delta", type=float, action="append", metavar="D")
    args = parser.parse_args(argv)
    _alpha(parser, args.alpha)
    _alpha(parser, args.power, "--power")
    if any(not 0 < d < math.inf for d in args.delta or []):  # NaN fails too
        parser.error("--delta must be a positive number")
    scores, measure = _matrix(args, parser)
    return _emit(
        power_report(scores, measure, args.alpha, args.power, args.delta or DELTAS),
        args,
        power_text,
    )


def run_discrim(argv: Sequence[str]) -> int:
    parser = _parser("discrim", "Discriminative power: the share of run pairs significant.")
    parser.add_argument("--scores", metavar="MATRIX.csv")
    parser.add_argument("-m", "--measure")
    parser.add_argument("--test", choices=TESTS, default="t")
    parser.add_argument("--correction", choices=CORRECTIONS, default="none")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--permutations", type=int, default=10_000, metavar="B")
    parser.add_argument("--seed", type=seed, default=0)
    args = parser.parse_args(argv)
    _alpha(parser, args.alpha)
    if args.permutations < 1 and args.test == "randomization":
        parser.error("--permutations must be >= 1")
    scores, measure = _matrix(args, parser)
    p = pair_p_values(scores, args.test, permutations=args.permutations, seed=args.seed)
    found = discriminative_power(p, alpha=args.alpha, correction=args.correction)
    report = {
        "measure": measure,
        "needs": int(scores.shape[0]),
        "runs": int(scores.shape[1]),
        "test": args.test,
        **found,
        "share": _finite(found["share"]),
        "asl": [[int(k), float(v)] for k, v in asl_curve(p, args.correction)],
        "notes": family_notes(
            found["pairs"], int(scores.shape[0]), args.permutations, args.correction, args.alpha
        )
        if args.test == "randomization"
        else [],
    }
    return _emit(report, args, discrim_text)


def discrim_text(r: dict) -> str:
    share = "-" if r["share"] is None else f"{r['share']:.4f}"
    return (
        f"{r['runs']} runs, {r['measure']} over {r['needs']} needs; {r['test']} test, "
        f"correction {r['correction']}, alpha = {r['alpha']}\n"
        f"discriminative power: {r['significant']} of {r['pairs']} pairs significant ({share})\n"
        + "".join(f"note: {note}\n" for note in r["notes"])
    )


def run_tau(argv: Sequence[str]) -> int:
    parser = _parser("tau", "Kendall's tau and tau_AP between two rankings of the same runs.")
    parser.add_argument("--scores", action="append", metavar="MATRIX.csv")
    parser.add_argument("-m", "--measure", action="append")
    args = parser.parse_args(argv)
    if args.scores and args.files:
        parser.error("give either --scores A.csv --scores B.csv or QRELS RUN ... -m M1 -m M2")
    if args.scores:
        if len(args.scores) != 2:
            parser.error("give exactly two --scores matrices")
        a, b = (read_scores(path) for path in args.scores)
        names = list(args.scores)
        if sorted(map(str, a.columns)) != sorted(map(str, b.columns)):
            raise InputError("the two matrices must have the same run columns")
        b = b[a.columns]
    else:
        if len(args.files) < 3 or len(args.measure or []) != 2:
            parser.error("need QRELS, at least two runs and exactly two -m measures")
        (a, first), (b, second) = (
            scores_from_runs(args.files[0], args.files[1:], m) for m in args.measure
        )
        names = [first, second]
    x, y = a.mean(axis=0).to_numpy(), b.mean(axis=0).to_numpy()
    report = {
        "reference": names[0],
        "other": names[1],
        "runs": int(a.shape[1]),
        "tau": _finite(kendall_tau(x, y)),
        "tau_ap": _finite(tau_ap(x, y)),
    }
    return _emit(report, args, tau_text)


def tau_text(r: dict) -> str:
    return (
        f"{r['runs']} runs ranked by mean: {r['reference']} (reference) vs {r['other']}\n"
        f"Kendall's tau = {r['tau']:.4f}\ntau_AP = {r['tau_ap']:.4f}\n"
    )


def run_poolbias(argv: Sequence[str]) -> int:
    parser = _parser("poolbias", "Pool bias: leave each participant's unique judgments out.")
    parser.add_argument("-m", "--measure", default="map")
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--judged-k", type=int, default=10)
    parser.add_argument("--participant", action="append", default=[], metavar="RUN=NAME")
    args = parser.parse_args(argv)
    if len(args.files) < 3:
        parser.error("need QRELS and at least two runs")
    if args.depth < 1 or args.judged_k < 1:
        parser.error("--depth and --judged-k must be at least 1")
    names = [Path(p).name for p in args.files[1:]]
    if len(set(names)) < len(names):
        parser.error("two runs share a file name")
    participants = dict(zip(names, names, strict=True))
    for item in args.participant:
        run, sep, team = item.partition("=")
        if not sep or run not in participants or not team:
            parser.error(f"--participant {item!r}: use RUN=NAME with RUN one of the run file names")
        participants[run] = team
    result = pool_bias(
        args.files[0],
        dict(zip(names, args.files[1:], strict=True)),
        participants,
        measure=args.measure,
        depth=args.depth,
        judged_k=args.judged_k,
    )
    report = {
        "measure": result["measure"],
        "depth": result["depth"],
        "judged_k": result["judged_k"],
        "max_drop": _finite(result["max_drop"]),
        "runs": result["runs"].to_dict(orient="records"),
        "participants": result["participants"].to_dict(orient="records"),
    }
    return _emit(report, args, poolbias_text)


def poolbias_text(r: dict) -> str:
    width = max(len(str(row["run"])) for row in r["runs"])
    lines = [
        f"leave one participant out, pool depth {r['depth']}, {r['measure']}; "
        f"largest drop {r['max_drop']:.4f}",
        "",
        f"{'run':<{width}}  participant  {'score':>7}  {'loo':>7}  {'drop':>7}  rank  loo  Judged@{r['judged_k']}",
    ]
    for row in r["runs"]:
        lines.append(
            f"{row['run']:<{width}}  {str(row['participant']):<11}  {row['score']:7.4f}  "
            f"{row['loo_score']:7.4f}  {row['drop']:7.4f}  {row['rank']:>4}  {row['loo_rank']:>3}  "
            f"{row['judged']:.3f}"
        )
    return "\n".join(lines) + "\n"


def _emit(report: dict, args: argparse.Namespace, text) -> int:
    if args.format == "json":
        json.dump(report, sys.stdout, indent=1, allow_nan=False, default=_json_value)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(text(report))
    return 0


def _json_value(value: object) -> object:
    """numpy scalars in pandas records."""
    item = getattr(value, "item", None)
    if item is None:
        raise TypeError(f"not JSON: {value!r}")
    value = item()
    return None if isinstance(value, float) and not math.isfinite(value) else value


RUNNERS = {"power": run_power, "discrim": run_discrim, "tau": run_tau, "poolbias": run_poolbias}


def main(command: str, argv: Sequence[str]) -> int:
    """Run one of ``COMMANDS`` on ``argv`` (the arguments after its name)."""
    try:
        return RUNNERS[command](argv)
    except (InputError, OSError, ValueError) as error:
        print(f"{command}: {error}", file=sys.stderr)
        return 1
