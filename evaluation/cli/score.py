"""``python -m evaluation [-q] [-c] [-l N] [-M N] [-m MEASURE]... [--interpolation MODE]
[--format text|json|csv] QRELS RUN``

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
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import sys
from collections.abc import Iterator

import numpy as np

from evaluation.measures import MODES, NeedWithoutRun, evaluate
from evaluation.trec import TrecFormatError, read_qrels, read_run


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evaluation",
        description="Score a TREC run against qrels, as trec_eval does.",
    )
    parser.add_argument("-q", action="store_true", help="print per-need values too")
    parser.add_argument(
        "-c", action="store_true", help="average over all qrels needs (missing = 0)"
    )
    parser.add_argument(
        "-l", type=int, default=1, metavar="N", help="relevance threshold (default 1)"
    )
    parser.add_argument("-M", type=int, default=None, metavar="N", help="max documents per need")
    parser.add_argument(
        "-m",
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
    parser.add_argument("qrels")
    parser.add_argument("run")
    return parser


@contextlib.contextmanager
def _without_huge_pages() -> Iterator[None]:
    """Stop numpy asking for transparent huge pages while the command runs.

    numpy ``madvise``s every large array for huge pages. Where the kernel's THP
    defrag setting is ``madvise`` (Debian's default), each fresh 28-56 MB array
    of a 7M-line run then waits for synchronous memory compaction: 0.3-1.6 s of
    kernel time per run on the benchmark machine, against ~0.5 s without
    (docs/engine.md, Speed). The flag is process-wide, so it is restored after.
    """
    multiarray = getattr(getattr(np, "_core", None), "multiarray", None)
    setter = getattr(multiarray, "_set_madvise_hugepage", None)
    if setter is None:  # a numpy without the switch: nothing to do
        yield
        return
    previous = setter(False)
    try:
        yield
    finally:
        setter(previous)


# glibc's mallopt parameters and their defaults (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4
_DEFAULT_TRIM_THRESHOLD, _DEFAULT_MMAP_MAX = 128 * 1024, 65536


@contextlib.contextmanager
def _reusing_freed_memory() -> Iterator[None]:
    """Let glibc keep freed memory for the next array while the command runs.

    By default glibc serves every array above 32 MB (a 7M-line run's scores,
    ranks, keys ...) with a fresh ``mmap`` and returns it on free, so each new
    array pays a page fault per 4 KB again: about half of the 7M-line command's
    time on the benchmark machine, where a fault costs ~5 us (docs/engine.md,
    Speed). With ``mmap`` off and no trimming, freed arrays stay in the heap
    and are reused. Restored after; a C library without ``mallopt`` is left alone.
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        yield
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    mallopt(_M_MMAP_MAX, 0)
    mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)
    try:
        yield
    finally:
        mallopt(_M_MMAP_MAX, _DEFAULT_MMAP_MAX)
        mallopt(_M_TRIM_THRESHOLD, _DEFAULT_TRIM_THRESHOLD)


def main(argv: list[str] | None = None) -> int:
    """Score a run as trec_eval does; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    with _without_huge_pages(), _reusing_freed_memory():
        return _score(argv)


def _score(argv: list[str]) -> int:
    # trec_eval accepts -M100 and -mP.5 glued; argparse does too, and -m may repeat
    args = _parser().parse_args(argv)
    try:
        qrels = read_qrels(args.qrels)
        run = read_run(args.run)
    except TrecFormatError as err:
        print(str(err), file=sys.stderr)
        return 2
    except OSError as err:
        print(f"{err.filename}:0: {err.strerror}", file=sys.stderr)
        return 2
    try:
        result = evaluate(
            qrels,
            run,
            args.m,
            relevance_level=args.l,
            max_depth=args.M,
            complete=args.c,
            interpolation=args.interpolation,
        )
    except NeedWithoutRun as err:
        # trec_eval 10.0 prints the -q lines of the needs before the missing one, then stops
        if err.partial is not None:
            for warning in err.partial.warnings:
                print(f"warning: {warning}", file=sys.stderr)
            if args.format == "text":
                sys.stdout.write(err.partial.to_trec_eval(per_need=args.q, summary=False))
        print(f"trec_eval: {err}", file=sys.stderr)
        return 4
    except ValueError as err:
        print(f"evaluation: {err}", file=sys.stderr)
        return 1
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.format == "json":
        sys.stdout.write(result.to_json() + "\n")
    elif args.format == "csv":
        sys.stdout.write(result.to_csv())
    else:
        sys.stdout.write(result.to_trec_eval(per_need=args.q))
    return 0


if __name__ == "__main__":
    sys.exit(main())
