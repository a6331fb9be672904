"""Runs and qrels however a caller holds them, read as the engine reads files.

:func:`as_run` and :func:`as_qrels` take what :func:`~evaluation.measures.evaluate`
accepts: a TREC file (path, bytes or binary stream, plain or gzipped); the engine's own
:class:`~evaluation.trec.readers.Run` or qrels frame (``need_id``, ``doc_id``,
``relevance``), passed through; or a run or qrels held in Python (a pandas DataFrame
named as ir_measures, ranx or PyTerrier name its columns, a ``{query: {doc: score}}``
dict, a ranx ``Run``/``Qrels``, ir_measures ``ScoredDoc``/``Qrel`` tuples).

Those held in Python are written as TREC text by the client's own converter,
:mod:`rrl.trec`, and read back with :func:`read_run` / :func:`read_qrels`. So there is
one definition of what each input means (the columns recognised, the checks, the tag),
and a run scored here is, byte for byte, the run ``rrl`` uploads and the platform
scores: the same scores, exactly. The text costs about 1.6 s per million lines (reading
it back 0.3 s). The dependency points from the engine to the client, never back: ``rrl`` must install and import without numpy,
pandas or pyarrow (``tests/test_layout.py`` holds it to the standard library), and
``rrl.trec`` needs nothing of the engine.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from evaluation.trec.columnar import Qrels
from evaluation.trec.readers import Run, read_qrels, read_run
from rrl.trec import qrels_text, run_text

__all__ = ["as_qrels", "as_run", "is_frame", "is_source"]

if TYPE_CHECKING:
    import pandas as pd

QRELS_COLUMNS = ("need_id", "doc_id", "relevance")


def is_frame(value: Any) -> bool:
    """A pandas DataFrame: without pandas imported, nothing is one (so a caller that
    holds only files and columns never pays pandas' import)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(value, pandas.DataFrame)


def is_source(value: Any) -> bool:
    """A file for the readers: a path, its bytes, or a binary stream."""
    return isinstance(value, str | bytes | os.PathLike) or callable(getattr(value, "read", None))


def _label(value: Any) -> str:
    return f"<{type(value).__name__}>"


def as_run(run: Any, tag: str | None = None, name: str | None = None) -> Run:
    """``run`` as a :class:`Run` (see the module's docstring for what it may be).

    ``tag``: the tag of a run held in Python (default: a DataFrame's ``run``/``tag``/
    ``name`` column, a ranx Run's name, else ``"run"``); a file keeps its own.
    ``name``: how a file is named in errors. Raises ``TypeError`` for what is no run,
    ``ValueError`` naming the row or the missing column (from :mod:`rrl.trec`), and
    :class:`~evaluation.trec.TrecFormatError` (``file:line: reason``) for a bad file.
    """
    if isinstance(run, Run) or is_source(run):
        if tag is not None:
            raise ValueError("a TREC file keeps its own tags: tag= is for runs held in Python")
        return run if isinstance(run, Run) else read_run(run, name)
    return read_run(run_text(run, tag).encode("utf-8"), _label(run))


def as_qrels(qrels: Any, name: str | None = None) -> pd.DataFrame | Qrels:
    """``qrels`` as the engine's frame: ``need_id``, ``doc_id``, ``relevance`` (int64).

    A frame with exactly those column names is taken as it is (the engine's own), and so
    are the reader's :class:`~evaluation.trec.columnar.Qrels`; anything else as
    :func:`as_run` takes runs.
    """
    if isinstance(qrels, Qrels):
        return qrels
    if is_frame(qrels) and all(c in qrels.columns for c in QRELS_COLUMNS):
        return qrels
    if is_source(qrels):
        return read_qrels(qrels, name)
    return read_qrels(qrels_text(qrels).encode("utf-8"), _label(qrels))
