"""The command line's scorer: the qrels read once and each run read and scored through
:func:`evaluation.measures.evaluate`."""

from __future__ import annotations

import argparse
import sys

from evaluation.measures.evaluation import Evaluation, evaluate
from evaluation.trec.columnar import read_qrels_columns, read_run

__all__ = ["Scorer"]

STDIN = "<stdin>"  # the name standard input is given in messages


class Scorer:
    """The qrels of ``args`` (read when made: a bad qrels file fails before any run is
    read; kept as the reader's columns, no frame) and the flags every run is scored with."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.qrels = read_qrels_columns(args.qrels)

    def evaluate(self, path: str) -> Evaluation:
        """One run scored; raises as :func:`~evaluation.measures.evaluate` and the reader do."""
        args = self.args
        # "-": standard input, as trec_eval reads its results file
        source, name = (sys.stdin.buffer, STDIN) if path == "-" else (path, None)
        # the run is handed straight over (held by no name here): evaluate lets its
        # columns go once it has ordered them, before the measures
        return evaluate(
            self.qrels,
            read_run(source, name=name),
            args.m,
            relevance_level=args.l,
            max_depth=args.M,
            complete=args.c,
            interpolation=args.interpolation,
            judged_only=args.J,
        )
