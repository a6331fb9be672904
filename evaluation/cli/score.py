"""``python -m evaluation [-q] [-c] [-J] [-l N] [-M N] [-m MEASURE]... [--interpolation MODE]
[--format text|json|csv] QRELS RUN [RUN ...]``

A drop-in for trec_eval's common use: same flags, same measure names, same
output (``measure<pad>\\tneed\\tvalue``). ``-m`` also takes the catalog's
names (``-m nDCG@10 -m RR@10``); output keeps trec_eval's (``ndcg_cut_10``).
``--interpolation trec_eval-9`` / ``trec_eval-10`` prints what that trec_eval
version prints (:func:`evaluation.measures.evaluate`); where 10.0 aborts (a
qrels need without run lines, no ``-c``) it prints 10.0's partial output and
message and exits 4, as 10.0 does. ``python -m evaluation compare ...``
runs the pairwise comparison tool instead (:mod:`evaluation.cli.compare`; the
dispatch is in :mod:`evaluation.__main__`).
A bad file prints ``file:line: reason`` on stderr and exits 2 with nothing on stdout.

Many runs in one call: a RUN may also be a directory (its files, in name order) or a
glob (``'runs/*.txt'``); the qrels are read once and each run is scored in turn. The
text output is trec_eval's, run after run, each block with its ``runid`` line (added at
the top of the block when the measures asked for leave it out); ``--format csv`` is one
table with a ``run`` column (the file) and a ``runid`` column, ``--format json`` a list
of the single-run objects, each with its ``run``. A bad run is reported on stderr and
skipped, and the exit status is that of the worst failure (1, an unknown measure, stops).

Each run is read into the reader's columns (:mod:`evaluation.trec.columnar`) and scored
by :func:`evaluation.measures.evaluate` against the qrels read once
(:mod:`evaluation.cli.scorer`); with ``-j`` several runs are scored at once by forked
workers that share those qrels.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from evaluation.cli.scorer import Scorer
from evaluation.measures.interpolation import MODES
from evaluation.measures.request import parse_requests
from evaluation.trec.sources import TrecFormatError

# trec_eval's options this command does not have: refused by name, not as unknown
_UNSUPPORTED = {
    "-N": ("--Number_docs_in_coll", "collection size"),
    "-D": ("--Debug_level", "debugging output"),
    "-R": ("--Rel_info_format", "judgment formats other than qrels"),
    "-T": ("--Results_format", "run formats other than TREC's"),
    "-Z": ("--Zscore", "z-scores"),
    "-o": ("--Output_old_results_format", "obsolete output format"),
}


class _Unsupported(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None) -> None:
        short = self.option_strings[0]
        parser.error(f"{option_string} (trec_eval's {_UNSUPPORTED[short][1]}) is not supported")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evaluation",
        description="Score a TREC run against qrels, as trec_eval does.",
    )
    # trec_eval's long names too (--level_for_rel 2 is -l 2)
    parser.add_argument(
        "-q", "--query_eval_wanted", dest="q", action="store_true", help="print per-need values too"
    )
    parser.add_argument(
        "-n", "--nosummary", dest="n", action="store_true", help="no summary (all) lines"
    )
    parser.add_argument(
        "-c",
        "--complete_rel_info_wanted",
        dest="c",
        action="store_true",
        help="average over all qrels needs (missing = 0)",
    )
    parser.add_argument(
        "-l",
        "--level_for_rel",
        dest="l",
        type=int,
        default=1,
        metavar="N",
        help="relevance threshold (default 1)",
    )
    parser.add_argument(
        "-M",
        "--Max_retrieved_per_topic",
        dest="M",
        type=int,
        default=None,
        metavar="N",
        help="max documents per need",
    )
    parser.add_argument(
        "-J",
        "--Judged_docs_only",
        dest="J",
        action="store_true",
        help="keep only judged documents, ranked 1..k in their order (after -M)",
    )
    for short, (long, _) in _UNSUPPORTED.items():
        takes = 0 if short == "-o" else 1
        parser.add_argument(short, long, nargs=takes, action=_Unsupported, help=argparse.SUPPRESS)
    parser.add_argument(
        "-m",
        "--measure",
        dest="m",
        action="append",
        default=None,
        metavar="MEASURE",
        help="measure or set (official, all_trec): trec_eval syntax P.5,10 or a name: nDCG@10",
    )
    parser.add_argument(
        "--interpolation",
        choices=MODES,
        default="exact",
        help="exact (default): the seed's interpolated precision; trec_eval-9, trec_eval-10: "
        "every line as that trec_eval version prints it",
    )
    parser.add_argument("--format", choices=["text", "json", "csv"], default="text")
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="runs scored at once when there are several (default: the CPUs this "
        "process may use); the output is the same, in the order given",
    )
    parser.add_argument("qrels")
    parser.add_argument(
        "run",
        nargs="+",
        help="run files, directories of run files or globs ('runs/*.gz'); - for standard input",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Score a run as trec_eval does; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # trec_eval accepts -M100 and -mP.5 glued; argparse does too, and -m may repeat
    args = _parser().parse_args(argv)
    runs = expand_runs(args.run)
    return _score_files(args, runs)


def expand_runs(paths: list[str]) -> list[str]:
    """Each RUN argument as files: a file as it is, a directory's files (not hidden ones)
    and a glob's matches in name order; a pattern matching nothing is kept as it is, so
    that reading it names it (``runs/*.txt:0: No such file or directory``)."""
    files: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            inside = (os.path.join(path, entry) for entry in os.listdir(path))
            files += sorted(
                f for f in inside if os.path.isfile(f) and not os.path.basename(f).startswith(".")
            )
        elif not os.path.exists(path) and any(c in path for c in "*?["):
            import glob

            files += sorted(f for f in glob.glob(path) if os.path.isfile(f)) or [path]
        else:
            files.append(path)
    return files


_RUNID_LINE = "\n" + f"{'runid':<22}\tall\t"


def _score_files(args: argparse.Namespace, runs: list[str]) -> int:
    many = len(runs) > 1
    try:
        scorer = Scorer(args)
    except TrecFormatError as err:
        print(str(err), file=sys.stderr)
        return 2
    except OSError as err:
        print(_unreadable(err), file=sys.stderr)
        return 2
    try:  # an unknown measure or bad parameters: said once, before any run is read
        parse_requests(args.m, trec_eval_9=args.interpolation == "trec_eval-9")
    except ValueError as err:
        print(f"evaluation: {err}", file=sys.stderr)
        return 1
    status, results = 0, []
    jobs = _jobs(args.jobs, len(runs))
    if jobs > 1 and args.format == "text" and _can_fork():
        for code, out, err in _in_parallel(scorer, runs, args, jobs):
            sys.stdout.write(out)
            sys.stdout.flush()
            sys.stderr.write(err)
            if code == 1:  # an unknown measure or bad parameters: the same for every run
                return 1
            status = max(status, code)
        return status
    for path in runs:
        code, result = _score_run(scorer, path, args, many)
        if code == 1:  # an unknown measure or bad parameters: the same for every run
            return 1
        status = max(status, code)
        if result is not None:
            results.append((path, result))
    if args.format == "json" and results:
        import json

        if many:
            objects = [{"run": path, **json.loads(r.to_json())} for path, r in results]
            sys.stdout.write(json.dumps(objects, indent=1) + "\n")
        else:
            sys.stdout.write(results[0][1].to_json() + "\n")
    elif args.format == "csv" and results:
        sys.stdout.write(_csv_table(results) if many else results[0][1].to_csv())
    return status


def _jobs(asked: int | None, runs: int) -> int:
    """How many runs to score at once: ``-j`` or the CPUs this process may use, at
    most one per run."""
    if asked is None:
        try:
            asked = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            asked = os.cpu_count() or 1
    return max(1, min(asked, runs))


def _can_fork() -> bool:
    """Whether forking workers is possible here (Linux-style ``fork``)."""
    return hasattr(os, "fork")


# what the forked workers score with: set before the pool forks, inherited by each child
_WORK: tuple[Scorer, argparse.Namespace] | None = None


def _score_captured(path: str) -> tuple[int, str, str]:
    """One run scored in a worker: its exit status, its output and its messages."""
    import io

    scorer, args = _WORK
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code, _ = _score_run(scorer, path, args, True)
    return code, out.getvalue(), err.getvalue()


def _in_parallel(scorer: Scorer, runs: list[str], args: argparse.Namespace, jobs: int):
    """Each run's (status, output, messages), in the order given, scored by ``jobs``
    forked workers that share the qrels read once (copy on write). A participant's
    hundred runs take about 1/jobs of the time; the output is byte for byte what
    scoring them one after another prints (tests/evaluation/cli/test_cli_runs.py)."""
    global _WORK
    import multiprocessing

    _WORK = (scorer, args)
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            yield from pool.imap(_score_captured, runs, chunksize=1)
    finally:
        _WORK = None


def _score_run(scorer: Scorer, path: str, args: argparse.Namespace, many: bool):
    """Score one run and print it (text) or return its Evaluation (json, csv):
    (exit status, Evaluation or None)."""
    from evaluation.measures.evaluation import NeedWithoutRun

    prefix = f"{path}: " if many else ""  # among many runs, a warning says whose it is
    try:
        result = scorer.evaluate(path)
    except (TrecFormatError, OSError) as err:
        return _failed(err), None
    except NeedWithoutRun as err:
        # trec_eval 10.0 prints the -q lines of the needs before the missing one, then stops
        if err.partial is not None:
            _warn(err.partial.warnings, prefix)
            if args.format == "text":
                sys.stdout.write(err.partial.to_trec_eval(per_need=args.q, summary=False))
        print(f"trec_eval: {err}", file=sys.stderr)
        return 4, None
    except ValueError as err:
        return _failed(err), None
    _warn(result.warnings, prefix)
    if args.format != "text":
        return 0, result
    text = result.to_trec_eval(per_need=args.q, summary=not args.n)
    _print_text(text, result.run_id, many)
    return 0, None


def _warn(warnings: list[str], prefix: str) -> None:
    for warning in warnings:  # the reader's own name the file already
        named = warning if warning.startswith(prefix) else prefix + warning
        print(f"warning: {named}", file=sys.stderr)


def _failed(err: Exception) -> int:
    """Print why a run could not be scored; the exit status: 2 for a bad or unreadable
    file (``file:line: reason``), 1 for an unknown measure or bad parameters."""
    if isinstance(err, TrecFormatError):
        print(str(err), file=sys.stderr)
        return 2
    if isinstance(err, OSError):
        print(_unreadable(err), file=sys.stderr)
        return 2
    print(f"evaluation: {err}", file=sys.stderr)
    return 1


def _unreadable(err: OSError) -> str:
    """``file:0: reason`` for a file that could not be read (the error's own words
    when it names no file)."""
    if err.filename is None or err.strerror is None:
        return f"evaluation: {err}"
    return f"{err.filename}:0: {err.strerror}"


def _print_text(text: str, run_id: str, many: bool) -> None:
    if many and _RUNID_LINE not in "\n" + text:
        text = f"{'runid':<22}\tall\t{run_id}\n" + text
    sys.stdout.write(text)
    sys.stdout.flush()


def _csv_table(results: list) -> str:
    """Every run's CSV rows in one table, with the run's file and runid in front."""
    import pandas as pd

    from evaluation.measures.evaluation import with_summary_row

    frames = []
    for path, result in results:
        frame = with_summary_row(result.per_need, result.summary).reset_index(names="need_id")
        frame.insert(0, "runid", result.run_id)
        frame.insert(0, "run", path)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True).to_csv(index=False)


if __name__ == "__main__":
    sys.exit(main())
