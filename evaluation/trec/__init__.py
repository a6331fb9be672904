"""Reading TREC files: qrels (judgments), runs and needs (topics), plain or gzipped.

- :mod:`evaluation.trec.columnar`: the reader every scoring goes through: ``read_run``
  (a :class:`Run`: columns, its DataFrame built when asked for) and ``read_qrels``
  (a DataFrame; ``read_qrels_columns`` the columns, as the command line scores them).
- :mod:`evaluation.trec.readers`: the formats, ``check_run`` (the check of an upload: its
  first lines, its need ids; ``check_run_head`` the same, returning None), and the
  readers re-exported.
- :mod:`evaluation.trec.inputs`: ``as_run``, ``as_qrels``: a file, or a run or qrels held
  in Python (a DataFrame, a dict, a ranx ``Run``, ir_measures tuples), read as files are.
- :mod:`evaluation.trec.topics`: ``read_needs`` (TSV, TREC ``<top>``, XML ``<topic>``).
- :mod:`evaluation.trec.sources`: a file's bytes (path, stream or bytes; gunzipped,
  within a size limit counted while decompressing), ``TrecFormatError`` and ``Source``.
- :mod:`evaluation.trec.parsing`: bytes to columns (the pyarrow fast path, whitespace
  normalisation, the line-by-line explainer behind every ``file:line: reason``).
- :mod:`evaluation.trec.arrays`: Arrow columns to numpy and back, sorted-array helpers.
- :mod:`evaluation.trec.hashing`: doc-id hashes and the repeated (need, doc) check; also
  used by :mod:`evaluation.measures.ranking`.
- :mod:`evaluation.trec.threads`: work on two threads where the machine has two CPUs.
- :mod:`evaluation.trec.need_ids`: the distinct first fields of lines (a run's need ids).

Imports: numpy, pyarrow (pandas only where a frame is built), these modules and the client's dependency-free
converter :mod:`rrl.trec` (``inputs`` writes runs held in Python as TREC text with it); nothing of
:mod:`evaluation.measures`, :mod:`evaluation.significance` or :mod:`evaluation.cli`,
and no Django. Modules here import each other by module path
(``evaluation.trec.parsing``), never through this package, which re-exports them.
"""

from __future__ import annotations

from evaluation.trec.inputs import (
    as_qrels,
    as_run,
    is_source,
)
from evaluation.trec.parsing import (
    MAX_LINE_LENGTH,
    line_of_row,
    run_header,
)
from evaluation.trec.readers import (
    Run,
    RunCheck,
    check_run,
    check_run_head,
    read_qrels,
    read_run,
)
from evaluation.trec.sources import (
    Source,
    TrecFormatError,
)
from evaluation.trec.topics import (
    read_needs,
)

__all__ = [
    "MAX_LINE_LENGTH",
    "Run",
    "RunCheck",
    "Source",
    "TrecFormatError",
    "as_qrels",
    "as_run",
    "check_run",
    "check_run_head",
    "is_source",
    "line_of_row",
    "read_needs",
    "read_qrels",
    "read_run",
    "run_header",
]
