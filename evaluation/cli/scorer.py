"""The command line's scorer: the qrels read once (the small reader's, the general
reader's columns, or its frame, as the inputs ask) and each run scored by the fastest path
that can answer it, the others after it: the small-file path (numpy alone), the
large-file columns (no pandas), the general :func:`evaluation.measures.evaluate`."""

from __future__ import annotations

import argparse
import os

__all__ = ["Scorer", "evaluate", "small_plain"]


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return -1  # read by the general path, which names the error


def small_plain(path: str) -> bool:
    """Whether a file is at most ``SMALL_BYTES`` on disk and not gzipped (which may hold
    far more); a file that cannot be read counts as small (reading it names it)."""
    if _size(path) > _small_bytes():
        return False
    try:
        with open(path, "rb") as f:
            return f.read(2) != b"\x1f\x8b"
    except OSError:
        return True


def evaluate(qrels, run, measures=None, **flags):
    """Score one run: the small path's result (:func:`evaluation.measures.small.score_small`,
    None when it cannot answer) for the small readers' qrels and run, else
    :func:`evaluation.measures.evaluate`'s :class:`~evaluation.measures.Evaluation`.
    Both print with ``to_trec_eval`` and carry ``warnings`` and ``run_id``."""
    from evaluation.trec.small import SmallRun

    if isinstance(run, SmallRun):
        from evaluation.measures.small import score_small

        return score_small(qrels, run, measures, **flags)
    from evaluation.measures.evaluation import evaluate as evaluate_files

    return evaluate_files(qrels, run, measures, **flags)


class Scorer:
    """The qrels, read once (the small reader's, the general reader's columns and/or its
    frame), and each run scored by the small path when it can, else from the general
    reader's columns (text output), else by :func:`evaluation.measures.evaluate`."""

    def __init__(self, args: argparse.Namespace, runs: list[str]) -> None:
        self.args = args
        self.small = None
        self._frame = None
        self._columns = None
        limit = _small_bytes()
        wanted = args.format == "text" and any(0 <= _size(r) <= limit for r in runs)
        if wanted and 0 <= _size(args.qrels) <= limit:
            from evaluation.measures.small import prepare_qrels
            from evaluation.trec.small import read_small_qrels

            data, _ = _content(args.qrels)
            qrels = read_small_qrels(data) if len(data) <= limit else None
            self.small = prepare_qrels(qrels) if qrels is not None else None
        if self.small is None and args.format == "text":
            self.columns()  # a bad qrels file fails before any run is read
        elif self.small is None:
            self.frame()

    def columns(self):
        """The qrels as the general reader's columns (no pandas), read once."""
        if self._columns is None:
            from evaluation.trec.columnar import read_qrels_columns

            self._columns = read_qrels_columns(self.args.qrels)
        return self._columns

    def frame(self):
        """The qrels frame (the general path's), made once (from the columns if read)."""
        if self._frame is None:
            from evaluation.trec.readers import qrels_frame, read_qrels

            columns = self._columns
            self._frame = read_qrels(self.args.qrels) if columns is None else qrels_frame(columns)
        return self._frame

    def _flags(self) -> dict:
        args = self.args
        return {
            "relevance_level": args.l,
            "max_depth": args.M,
            "complete": args.c,
            "interpolation": args.interpolation,
        }

    def score_small(self, path: str):
        """The small path's result for one run, or None (the general path answers)."""
        if self.small is None or not 0 <= _size(path) <= _small_bytes():
            return None
        from evaluation.trec.small import read_small_run

        data, name = _content(path)
        if len(data) > _small_bytes():  # a gzip file that expands past the limit
            return None
        run = read_small_run(data, name)
        if run is None:
            return None
        return evaluate(self.small, run, self.args.m, **self._flags())

    def score_columns(self, path: str):
        """The large-file path's result for one run (text output: the general readers'
        columns scored without pandas), or None (the general path answers)."""
        if self.args.format != "text":
            return None
        from evaluation.measures.small import score_columns
        from evaluation.trec.columnar import read_run_columns

        args = self.args
        # the run is handed straight over (held by no name here): its columns go as
        # they are ranked, as in evaluate below
        return score_columns(
            self.columns(),
            read_run_columns(path),
            args.m,
            relevance_level=args.l,
            max_depth=args.M,
            complete=args.c,
            interpolation=args.interpolation,
        )

    def evaluate(self, path: str):
        from evaluation.measures.evaluation import evaluate as evaluate_files
        from evaluation.trec.readers import read_run

        args = self.args
        # the run goes straight into evaluate, held by no frame here (keyword arguments,
        # no ** tuple), so evaluate frees its columns once it has ordered them
        return evaluate_files(
            self.frame(),
            read_run(path),
            args.m,
            relevance_level=args.l,
            max_depth=args.M,
            complete=args.c,
            interpolation=args.interpolation,
        )


def _content(path: str) -> tuple[bytes, str]:
    """A small file's bytes (decompressed) and its name as the readers show it: a plain
    file read straight into one ``bytes`` (``load`` maps a file past 1 MB, and the
    small readers then copy it: a third more pages touched and 5-30 ms more for a
    250 x 1,000 run's 8 MB)."""
    from evaluation.trec.sources import GZIP_MAGIC, load

    with open(path, "rb", buffering=0) as f:  # unbuffered: read() fills one buffer
        if f.read(2) != GZIP_MAGIC:
            f.seek(0)
            return f.read(), path
    data, name = load(path, None)
    return bytes(data), name


def _small_bytes() -> int:
    from evaluation.trec.small import SMALL_BYTES

    return SMALL_BYTES
