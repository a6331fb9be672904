"""Reading runs and qrels: the file's bytes parsed by Arrow (:mod:`evaluation.trec.parsing`)
into a :class:`Run` or :class:`Qrels` (columns, the frame built when asked for) or a
qrels DataFrame, every bad line named as ``file:line: reason``. Every scoring reads
through these functions; :mod:`evaluation.trec.readers` re-exports them beside the upload
check. pandas is imported only when a frame is built: the command line scores from the
columns and so starts without it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evaluation.trec.arrays import array_values, codes_present, to_numpy
from evaluation.trec.hashing import first_duplicate, string_hash
from evaluation.trec.parsing import _QRELS, _RUN, _explain, _parse, _Text, run_header
from evaluation.trec.sources import Source, TrecFormatError, load

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Qrels", "Run", "header_warning", "read_qrels", "read_qrels_columns", "read_run"]


@dataclass
class Run:
    """A parsed run: its lines in file order as columns. The distinct need ids
    (``needs``, Arrow's dictionary order) and each line's index into them (``need``,
    int32), the doc ids (``doc``, Arrow) and their
    :func:`~evaluation.trec.hashing.string_hash` (``doc_hash``), ``score`` and ``rank``
    (float64, the file's rank column, NaN where it is no number; only used to warn),
    the last line's ``tag`` (trec_eval's ``runid``) and the ``warnings`` (a header
    line, several tags). :attr:`frame` is the same lines as a DataFrame, built when
    first asked for.
    """

    needs: list[str]
    need: np.ndarray
    doc: pa.ChunkedArray
    doc_hash: np.ndarray
    score: np.ndarray
    rank: np.ndarray
    tag: str
    warnings: list[str] = field(default_factory=list)

    @cached_property
    def frame(self) -> pd.DataFrame:
        """One row per line, in file order: ``need_id`` (categorical), ``doc_id`` (str),
        ``score`` and ``rank`` (float64)."""
        import pandas as pd

        return pd.DataFrame(
            {
                "need_id": pd.Categorical.from_codes(
                    self.need,
                    categories=pd.Index(self.needs, dtype="str"),
                    validate=False,  # codes of the column's own dictionary
                ),
                "doc_id": pd.Series(self.doc, dtype="str").array,
                "score": self.score,
                "rank": self.rank,
            },
            copy=False,
        )


def needs_present(run: Run) -> list[str]:
    """The need ids with at least one line in ``run`` (in its dictionary's order)."""
    present = codes_present(run.need, len(run.needs)).tolist()
    return [need for need, there in zip(run.needs, present, strict=True) if there]


@dataclass
class Qrels:
    """Parsed qrels: their lines in file order as columns, the need and doc ids (Arrow
    strings) and the relevances (int64). :attr:`frame` is the same lines as
    :func:`read_qrels` gives them, built when first asked for."""

    need: pa.ChunkedArray
    doc: pa.ChunkedArray
    relevance: np.ndarray

    @cached_property
    def frame(self) -> pd.DataFrame:
        """``need_id`` (str), ``doc_id`` (str) and ``relevance`` (int64)."""
        import pandas as pd

        return pd.DataFrame(
            {
                "need_id": pd.Series(self.need, dtype="str").array,
                "doc_id": pd.Series(self.doc, dtype="str").array,
                "relevance": self.relevance,
            }
        )


def read_qrels(
    source: Source, name: str | None = None, max_bytes: int | None = None
) -> pd.DataFrame:
    """Read qrels ``need_id iteration doc_id relevance`` (plain or gzipped).

    Returns a DataFrame with ``need_id`` (str), ``doc_id`` (str) and
    ``relevance`` (int64), in file order: :func:`read_qrels_columns`' frame.

    >>> read_qrels(b"q1 0 d1 1\\nq1 0 d2 0\\n").relevance.tolist()
    [1, 0]
    """
    return read_qrels_columns(source, name, max_bytes).frame


def read_qrels_columns(
    source: Source, name: str | None = None, max_bytes: int | None = None
) -> Qrels:
    """Read qrels ``need_id iteration doc_id relevance`` (plain or gzipped) into
    :class:`Qrels`. Raises :class:`TrecFormatError` for
    an empty or binary file, a line longer than 10,000 characters, a line
    without exactly four fields, a relevance that is not an integer (or not a
    64-bit one), a doc_id judged twice for one need, or content (decompressed)
    over ``max_bytes`` (None: no limit), refused while decompressing.
    """
    data, name = load(source, name, max_bytes)
    table, fast = _parse(data, name, _QRELS)
    text = _Text(data, source, name, fast, max_bytes)
    del data
    try:
        relevance = pc.cast(table.column(3), pa.int64())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        try:  # Arrow reads no leading '+'; trec_eval's atol does
            unsigned = pc.replace_substring_regex(table.column(3), r"^\+", "")
            relevance = pc.cast(unsigned, pa.int64())
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            _explain(text.data, name, _QRELS, must_fail=True)
    need = pc.dictionary_encode(table.column(0)).combine_chunks()
    need_codes = array_values(need.indices)
    duplicate = first_duplicate(need_codes, table.column(2))
    if duplicate is not None:
        first, second = duplicate
        doc, qid = table.column(2)[second].as_py(), table.column(0)[second].as_py()
        raise TrecFormatError(
            name,
            text.line(second),
            f"doc_id {doc!r} judged twice for need {qid!r} (first on line {text.line(first)})",
        )
    return Qrels(table.column(0), table.column(2), to_numpy(relevance, np.int64))


def read_run(source: Source, name: str | None = None, max_bytes: int | None = None) -> Run:
    """Read a run ``need_id Q0 doc_id rank score tag`` (plain or gzipped).

    Fields after the sixth are ignored (as trec_eval does). Raises
    :class:`TrecFormatError` for an empty or binary file, a line longer than
    10,000 characters, fewer than six fields, a score that is not a number or
    not finite, a doc_id twice for one need, or content (decompressed) over
    ``max_bytes`` (None: no limit), refused while decompressing. Warns (``Run.warnings``) when
    the lines carry more than one tag; the run's ``tag`` is the last line's. Line 1 may
    be a header (``qid Q0 docno rank score tag``: a score that is no number, on line 1
    only, see :func:`~evaluation.trec.parsing.run_header`): it is skipped with a warning.

    >>> read_run(b"q1 Q0 d1 1 2.5 bm25\\n").score.tolist()
    [2.5]
    """
    data, name = load(source, name, max_bytes)
    header = run_header(data)
    skip = int(header is not None)
    table, fast = _parse(data, name, _RUN, skip)
    text = _Text(data, source, name, fast, max_bytes, skip)
    del data
    # Each parsed column is let go as soon as it is converted (the table is rebuilt
    # without it): the table (~390 MB for 7M lines of 28-byte ids) and all the numpy
    # columns are never alive at once.
    scores = to_numpy(table.column("c4"), np.float64)
    if not np.isfinite(scores).all():  # names the first nan or inf
        _explain(text.data, name, _RUN, must_fail=True, skip=skip)
    table = table.drop_columns(["c4"])
    try:
        rank = to_numpy(pc.cast(table.column("c3"), pa.float64()), np.float64)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        rank = np.full(len(scores), np.nan)
    table = table.drop_columns(["c3"])
    warnings = [] if header is None else [header_warning(name, header)]
    tags = table.column("c5")
    tag = str(tags[len(tags) - 1].as_py())
    # the dictionaries are unified, so one entry means one tag (the usual run)
    distinct = len(tags.chunk(0).dictionary) if tags.num_chunks else 0
    if distinct > 1:
        codes = [array_values(c.indices) for c in tags.chunks]
        distinct = int((np.bincount(np.concatenate(codes)) > 0).sum())
    if distinct > 1:
        warnings.append(
            f"{name}: {distinct} different tags in the run; its runid is the last line's, {tag!r}"
        )
    del tags
    need = table.column("c0")
    need_codes = np.concatenate(
        [np.zeros(0, np.int32)] + [array_values(c.indices) for c in need.chunks]
    )
    dictionary = need.chunk(0).dictionary if need.num_chunks else pa.array([], pa.string())
    docs = table.column("c2")
    del table, need  # the doc ids are all that is left of the parsed table
    doc_hash = string_hash(docs)
    duplicate = first_duplicate(need_codes, docs, doc_hash)
    if duplicate is not None:
        first, second = duplicate
        doc, qid = docs[second].as_py(), dictionary[int(need_codes[second])].as_py()
        raise TrecFormatError(
            name,
            text.line(second),
            f"doc_id {doc!r} twice for need {qid!r} (first on line {text.line(first)})",
        )
    names = [str(need) for need in dictionary.to_pylist()]
    return Run(names, need_codes, docs, doc_hash, scores, rank, tag, warnings)


def header_warning(name: str, header: str) -> str:
    """``run.txt: line 1 looks like a header ('qid Q0 docno rank score tag'); skipped``."""
    header = " ".join(header.split())
    shown = header if len(header) <= 80 else header[:77] + "..."
    return f"{name}: line 1 looks like a header ({shown!r}); skipped"
