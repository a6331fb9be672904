"""Reading TREC files: qrels (judgments), runs and needs (topics), plain or gzipped.

- :mod:`evaluation.trec.readers`: ``read_qrels``, ``read_run`` (a :class:`Run`),
  ``check_run`` (the check of an upload: its first lines, its need ids; ``check_run_head``
  the same, returning None),
  ``run_header`` (whether line 1 is a header, skipped with a warning).
- :mod:`evaluation.trec.inputs`: ``as_run``, ``as_qrels``: a file, or a run or qrels held
  in Python (a DataFrame, a dict, a ranx ``Run``, ir_measures tuples), read as files are.
- :mod:`evaluation.trec.topics`: ``read_needs`` (TSV, TREC ``<top>``, XML ``<topic>``).
- :mod:`evaluation.trec.sources`: a file's bytes (path, stream or bytes; gunzipped,
  within a size limit counted while decompressing), ``TrecFormatError`` and ``Source``.
- :mod:`evaluation.trec.parsing`: bytes to columns (the pyarrow fast path, whitespace
  normalisation, the line-by-line explainer behind every ``file:line: reason``).
- :mod:`evaluation.trec.columns`: Arrow columns to numpy, doc-id hashes, the repeated
  (need, doc) check; also used by :mod:`evaluation.measures.ranking`.

Imports: numpy, pandas, pyarrow, these modules and the client's dependency-free
converter :mod:`rrl.trec` (``inputs`` writes runs held in Python as TREC text with it); nothing of
:mod:`evaluation.measures`, :mod:`evaluation.significance` or :mod:`evaluation.cli`,
and no Django. Modules here import each other by module path
(``evaluation.trec.parsing``), never through this package, which re-exports them.

Names are imported on first use (module ``__getattr__``), so importing one light
module (``evaluation.trec.small``, ``columns``) loads neither pandas nor pyarrow:
the command line's small-file path needs only numpy.
"""

from __future__ import annotations

from evaluation.lazy import lazy_names

TYPE_CHECKING = False  # typing's, without importing typing (~3 ms of a small run)

if TYPE_CHECKING:
    from evaluation.trec.inputs import (
        as_qrels,
        as_run,
        is_source,
    )
    from evaluation.trec.parsing import (
        MAX_LINE_LENGTH,
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

# name -> module that defines it: imported on first use (PEP 562)
_HOME = {
    "as_qrels": "evaluation.trec.inputs",
    "as_run": "evaluation.trec.inputs",
    "is_source": "evaluation.trec.inputs",
    "MAX_LINE_LENGTH": "evaluation.trec.parsing",
    "run_header": "evaluation.trec.parsing",
    "Run": "evaluation.trec.readers",
    "RunCheck": "evaluation.trec.readers",
    "check_run": "evaluation.trec.readers",
    "check_run_head": "evaluation.trec.readers",
    "read_qrels": "evaluation.trec.readers",
    "read_run": "evaluation.trec.readers",
    "Source": "evaluation.trec.sources",
    "TrecFormatError": "evaluation.trec.sources",
    "read_needs": "evaluation.trec.topics",
}


__getattr__, __dir__ = lazy_names(__name__, _HOME)


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
    "read_needs",
    "read_qrels",
    "read_run",
    "run_header",
]
