"""``python -m evaluation compare``: significance of every pair of runs, on the command line.

    python -m evaluation compare QRELS RUN RUN [RUN ...] [-m map] [--correction holm|bh|none]
        [--permutations B] [--seed S] [--alpha A] [--format text|json]
    python -m evaluation compare --scores MATRIX.csv [same options]

With QRELS and runs, each run is scored with the engine (``trec_eval -c``: a need of the
qrels the run did not answer scores 0) and named by its file name. With ``--scores``
the matrix has one column per run (the column is the name) and one row per need; a
first column that is not numeric (or is named need_id, need, topic, qid) holds the need
ids, otherwise rows are numbered from 1. Every pair is tested (see
``evaluation.significance``) and each test is corrected over the family of all pairs.

Exit status: 0 done, 1 bad input file, 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from evaluation.significance import (
    CORRECTIONS,
    PAIR_KEYS,
    compare_all_pairs,
    p_text,
    paired_matrix,
    randomization_enumerates,
)

NEED_COLUMNS = ("need_id", "need", "topic", "qid", "query_id")
CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no correction"}
#: The keys of one pair in the JSON output, in this order.
JSON_PAIR_KEYS = (
    "a",
    "b",
    *PAIR_KEYS[:10],  # n ... t_p
    "t_p_adjusted",
    "wilcoxon_statistic",
    "wilcoxon_p",
    "wilcoxon_p_adjusted",
    "randomization_p",
    "randomization_p_adjusted",
)
TESTS = (("t", "paired t"), ("wilcoxon", "Wilcoxon"), ("randomization", "randomization"))


class InputError(Exception):
    """A bad input file, reported as ``file:line: reason``."""


def seed(text: str) -> int:
    """``--seed``: numpy's generator takes a non-negative integer (a usage error otherwise)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a non-negative integer")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evaluation compare",
        description="Paired significance tests (t, Wilcoxon, randomization) for every "
        "pair of runs, corrected for multiple comparisons over all pairs.",
    )
    parser.add_argument(
        "files",
        nargs="*",
        metavar="QRELS RUN",
        help="qrels, then 2+ runs (files, directories, globs)",
    )
    parser.add_argument("--scores", metavar="MATRIX.csv", help="needs x runs score matrix")
    parser.add_argument("-m", "--measure", help="trec_eval measure name (default map)")
    parser.add_argument("--correction", choices=CORRECTIONS, default="holm")
    parser.add_argument("--permutations", type=int, default=10_000, metavar="B")
    parser.add_argument("--seed", type=seed, default=0, metavar="S")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--format", choices=("text", "json"), default="text")
    return parser


def read_scores(path: str) -> pd.DataFrame:
    """Read a needs x runs CSV (gzip accepted); a blank, non-numeric or infinite score is
    an error."""
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as error:
        raise InputError(f"{path}: {error}") from error
    if frame.empty:
        raise InputError(f"{path}: no rows")
    first = frame.columns[0]
    numeric = pd.to_numeric(frame[first], errors="coerce")
    if first.strip().lower() in NEED_COLUMNS or numeric.isna().any():
        frame = frame.set_index(first)
    else:
        frame.index = [str(i) for i in range(1, len(frame) + 1)]
    frame.index.name = "need_id"
    if frame.shape[1] < 2:
        raise InputError(f"{path}: need at least two run columns")
    if frame.index.has_duplicates:
        line = int(np.flatnonzero(frame.index.duplicated())[0]) + 2
        raise InputError(f"{path}:{line}: need {frame.index[line - 2]!r} listed twice")
    values = frame.apply(pd.to_numeric, errors="coerce")
    bad = ~np.isfinite(values.to_numpy(dtype=np.float64))  # "inf", "1e999": no score either
    if bad.any():
        row, col = (int(i[0]) for i in np.nonzero(bad))
        cell = frame.iat[row, col]
        what = "is not a number" if np.isnan(values.iat[row, col]) else "is not a finite number"
        raise InputError(f"{path}:{row + 2}: run {frame.columns[col]!r}: {cell!r} {what}")
    return values.astype(np.float64)


def scores_from_runs(
    qrels_path: str, run_paths: Sequence[str], measure: str
) -> tuple[pd.DataFrame, str]:
    """Score each run with the engine (trec_eval -c) and pair them over the judged needs.

    The needs paired are those of the qrels with at least one relevant document, in
    trec_eval's order; a judged need a run did not answer scores 0. ``measure`` is a
    trec_eval request (``P.10``) or the name trec_eval prints (``P_10``); returns the
    matrix and the printed name. The matrix's ``attrs["qrels_needs"]`` is the number of
    needs in the qrels, with or without a relevant document (``unpaired_note``).
    """
    from evaluation.measures import evaluate, num_relevant
    from evaluation.trec import read_qrels, read_run

    names = [Path(p).name for p in run_paths]
    if len(set(names)) < len(names):
        names = list(run_paths)  # two runs share a file name: use the paths as given
    if len(set(names)) < len(names):
        raise InputError("the same run file is given twice")
    qrels = read_qrels(qrels_path)
    needs = sorted(num_relevant(qrels).index.astype(str), key=str.encode)
    if not needs:
        raise InputError(f"{qrels_path}: no need has a relevant document")
    per_need: dict[str, pd.Series] = {}
    for name, path in zip(names, run_paths, strict=True):
        run = read_run(path)
        try:
            table = evaluate(qrels, run, measures=[measure], complete=True).per_need
        except ValueError:
            cutoff = re.fullmatch(r"(.+)_(\d+(?:\.\d+)?)", measure)
            if cutoff is None:
                raise
            request = f"{cutoff[1]}.{cutoff[2]}"  # P_10 is asked for as P.10
            table = evaluate(qrels, run, measures=[request], complete=True).per_need
        if measure in table.columns:
            column = measure
        elif table.shape[1] == 0:  # gm_map, num_q, runid: printed over all needs only
            raise InputError(
                f"measure {measure!r} has no per-need values (trec_eval prints it for all "
                "needs only): pick a per-need measure such as map or P_10"
            )
        elif table.shape[1] == 1:
            column = table.columns[0]
        else:
            shown = ", ".join(map(str, table.columns[:6]))
            raise InputError(f"measure {measure!r} gives several values ({shown}): name one")
        per_need[name] = table[column]
    matrix = paired_matrix(per_need, needs)
    matrix.attrs["qrels_needs"] = int(qrels["need_id"].nunique())
    return matrix, str(column)


def unpaired_note(scores: pd.DataFrame) -> list[str]:
    """Say that needs of the qrels without a relevant document are not paired, so the
    means here are not trec_eval -c's (which averages over every need of the qrels)."""
    total = scores.attrs.get("qrels_needs", 0)
    left_out = total - len(scores)
    if left_out <= 0:
        return []
    has, are = ("has", "is") if left_out == 1 else ("have", "are")
    return [
        f"{left_out} of the {total} needs of the qrels {has} no relevant document and {are} "
        f"not paired: means and differences are over the {len(scores)} others (trec_eval -c "
        f"averages over all {total})"
    ]


def _number(value: object) -> object:
    """JSON has no NaN or infinity: those become null."""
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


def build_report(
    scores: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    measure: str | None,
    correction: str,
    permutations: int,
    seed: int,
    alpha: float,
    notes: list[str],
) -> dict:
    """The JSON document: :data:`JSON_PAIR_KEYS` per pair, plus alpha, seed and notes."""
    return {
        "measure": measure,
        "correction": correction,
        "permutations": permutations,
        "seed": seed,
        "alpha": alpha,
        "needs": int(scores.shape[0]),
        "runs": [{"name": str(n), "mean": float(scores[n].mean())} for n in scores.columns],
        "pairs": [
            {key: _number(value) for key, value in row.items()}
            for row in pairs[list(JSON_PAIR_KEYS)].to_dict(orient="records")
        ],
        "notes": notes,
    }


def family_notes(
    pairs: int, needs: int, permutations: int, correction: str, alpha: float
) -> list[str]:
    """What the reader must know about the randomization floor for this family."""
    if permutations <= 0:
        return ["randomization test skipped (--permutations 0)"]
    if randomization_enumerates(needs, permutations):
        floor = 2.0 / 2**needs
        notes = [
            f"the randomization test enumerates all 2^{needs} sign flips; with {needs} needs "
            f"its p cannot go below 2/2^{needs} = {floor:.3g}"
        ]
        remedy = "more needs are required"
    else:
        floor = 1.0 / (permutations + 1)
        notes = [
            f"a randomization test with B = {permutations} permutations cannot give p below "
            f"1/(B+1) = {floor:.3g}"
        ]
        remedy = f"use --permutations {math.ceil(pairs / alpha)} or more, or read the raw p"
    if correction == "holm" and pairs * floor > alpha:
        notes.append(
            f"so no randomization p can pass Holm over {pairs} pair{'' if pairs == 1 else 's'} at alpha = {alpha} "
            f"(the smallest adjusted p is {pairs} x {floor:.3g} = {min(1.0, pairs * floor):.3g}); "
            + remedy
        )
    return notes


def _p(value: float, alpha: float) -> str:
    if math.isnan(value):
        return "-"
    return p_text(value, 4, alpha) if value >= 1e-4 else f"{value:.1e}"


def render_text(report: dict) -> str:
    """A table per pair: the tests, alpha and correction named, significant cells starred."""
    alpha, correction = report["alpha"], report["correction"]
    measure = report["measure"] or "score"
    needs, permutations = report["needs"], report["permutations"]
    if permutations <= 0:
        randomization = "randomization skipped"
    elif randomization_enumerates(needs, permutations):
        randomization = f"randomization (exact: all 2^{needs} sign flips)"
    else:
        randomization = f"randomization ({permutations} random sign flips, seed {report['seed']})"
    lines = [
        f"{len(report['runs'])} runs, {measure} over {report['needs']} needs "
        "(a need a run did not answer scores 0)",
        "tests: paired t; Wilcoxon signed-rank (zero differences dropped, no continuity "
        f"correction); {randomization}; two-sided, alpha = {alpha}",
    ]
    if correction == "none":
        lines.append("correction: none; * marks p < alpha")
    else:
        lines.append(
            f"correction: {CORRECTION_NAMES[correction]} over {_family(len(report['pairs']))}; "
            "p shown raw / adjusted, * marks adjusted p < alpha"
        )
    lines += [f"note: {note}" for note in report["notes"]]
    width = max(len(r["name"]) for r in report["runs"])
    lines += ["", f"{'run':<{width}}  mean {measure}"]
    for run in sorted(report["runs"], key=lambda r: -r["mean"]):
        lines.append(f"{run['name']:<{width}}  {run['mean']:.4f}")
    header = [f"{'a':<{width}}", f"{'b':<{width}}", f"{'mean_diff':>9}", f"{'95% CI':<18}"]
    header += [f"{'d_z':>6}", f"{'W/T/L':<8}"] + [f"{title + ' p':<19}" for _, title in TESTS]
    lines += ["", "  ".join(header).rstrip()]
    for pair in report["pairs"]:
        effect = pair["effect_size"]
        cells = [
            f"{pair['a']:<{width}}",
            f"{pair['b']:<{width}}",
            f"{pair['mean_diff']:+9.4f}",
            f"[{_signed(pair['ci_low'])}, {_signed(pair['ci_high'])}]",
            f"{effect:+6.2f}" if effect is not None else f"{_inf(pair):>6}",
            f"{pair['wins']}/{pair['ties']}/{pair['losses']}".ljust(8),
        ]
        for key, _ in TESTS:
            raw, adjusted = pair[f"{key}_p"], pair[f"{key}_p_adjusted"]
            raw = math.nan if raw is None else raw
            adjusted = math.nan if adjusted is None else adjusted
            decided = raw if correction == "none" else adjusted
            star = "*" if decided < alpha else " "
            text = (
                _p(raw, alpha)
                if correction == "none"
                else f"{_p(raw, alpha)} / {_p(adjusted, alpha)}"
            )
            cells.append(f"{text}{star}".ljust(19))
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _family(pairs: int) -> str:
    return "the 1 pair" if pairs == 1 else f"all {pairs} pairs"


def _signed(value: float | None) -> str:
    return "    nan" if value is None else f"{value:+.4f}"


def _inf(pair: dict) -> str:
    """Effect size of a constant nonzero difference (sd = 0) is infinite; with one need
    there is no sd at all (NaN)."""
    if pair["n"] < 2:
        return "-"
    return "+inf" if pair["mean_diff"] > 0 else "-inf"


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``compare`` on ``argv`` (the arguments after the word ``compare``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.scores and args.files:
        parser.error("give either --scores MATRIX.csv or QRELS RUN RUN ..., not both")
    if args.files:  # a run may be a directory or a glob, as for scoring
        from evaluation.cli.score import expand_runs

        args.files = args.files[:1] + expand_runs(args.files[1:])
    if not args.scores and len(args.files) < 3:
        parser.error("need QRELS and at least two runs (or --scores MATRIX.csv)")
    if args.permutations < 0:
        parser.error("--permutations must be >= 0")
    if not 0 < args.alpha < 1:
        parser.error("--alpha must lie in (0, 1)")
    try:
        if args.scores:
            scores = read_scores(args.scores)
            measure = args.measure
        else:
            requested = args.measure or "map"
            scores, measure = scores_from_runs(args.files[0], args.files[1:], requested)
    except (InputError, OSError, ValueError) as error:
        print(f"compare: {error}", file=sys.stderr)
        return 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pairs = compare_all_pairs(
            scores, permutations=args.permutations, seed=args.seed, correction=args.correction
        )
    notes = family_notes(len(pairs), len(scores), args.permutations, args.correction, args.alpha)
    notes += unpaired_note(scores) + [str(w.message) for w in caught]
    report = build_report(
        scores,
        pairs,
        measure=measure,
        correction=args.correction,
        permutations=args.permutations,
        seed=args.seed,
        alpha=args.alpha,
        notes=notes,
    )
    if args.format == "json":
        json.dump(report, sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_text(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
