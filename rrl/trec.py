"""A run or qrels held in Python, written as TREC text (gzipped for an upload).

A run may be given as:

- a TREC run file: a path (``str`` or ``os.PathLike``, plain or gzipped) or its bytes;
  its content is kept as it is (its own tags, its own order: the platform reads it);
- a pandas DataFrame with a query column (``query_id``, ``qid``, ``need_id`` or ranx's
  ``q_id``), a document column (``doc_id`` or ``docno``) and a ``score`` column, as
  ir_measures, ranx (``Run.to_dataframe()``) and PyTerrier name them; a ``rank`` column
  is ignored (trec_eval ignores it too); a ``run``, ``tag`` or ``name`` column holding
  one value is the run's tag;
- a ``{query_id: {doc_id: score}}`` dict (any mapping of mappings);
- a ranx ``Run`` (its ``name`` is the tag);
- an iterable of ir_measures ``ScoredDoc(query_id, doc_id, score)`` (any object with
  those attributes, or a ``(query_id, doc_id, score)`` tuple).

Qrels likewise: a qrels file; a DataFrame with a query column, a document column and a
relevance column (``relevance``, PyTerrier's ``label``, or ranx's ``score``); a
``{query_id: {doc_id: relevance}}`` dict; a ranx ``Qrels``; an iterable of ir_measures or
ir_datasets ``Qrel(query_id, doc_id, relevance, iteration)``.

The text written for a run is ``query_id Q0 doc_id rank score tag``, each query's
documents in trec_eval's order (score descending, ties by doc_id descending in byte
order: ``evaluation.measures.ranking.trec_order``), ranks 1..n, queries in byte order,
scores as Python's ``repr`` (the shortest text that reads back as the same 64-bit
float), so that the platform, which re-orders every run trec_eval's way, scores exactly
these numbers and sees ranks that agree with them. Refused, with the row named: a
missing column, an id that is empty, holds whitespace or (for a query) starts with
``#`` (trec_eval reads such a line as a comment), a score that is not a finite number, a
relevance that is not an integer, a document twice for one query, an empty run.

The rows are checked and ordered in Python (1.6 s for a million-line DataFrame, measured
on 2 busy cores); pandas and ranx are recognised by their attributes, never imported.
"""

from __future__ import annotations

import gzip
import math
import operator
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_TAG",
    "DOC_COLUMNS",
    "QUERY_COLUMNS",
    "RELEVANCE_COLUMNS",
    "TAG_COLUMNS",
    "qrels_text",
    "run_gzip",
    "run_text",
    "write_run",
]

# zlib's fastest level: a 5 MB run compresses ~10x faster than at gzip's default 9 for
# ~15% more bytes, which pays off on any link faster than ~0.1 MB/s (bench/bench_gzip.py,
# docs/performance.md).
GZIP_LEVEL = 1

QUERY_COLUMNS = ("query_id", "qid", "need_id", "q_id")
DOC_COLUMNS = ("doc_id", "docno")
RELEVANCE_COLUMNS = ("relevance", "label", "score")
TAG_COLUMNS = ("run", "tag", "name")
DEFAULT_TAG = "run"

GZIP_MAGIC = b"\x1f\x8b"


def run_text(run: Any, tag: str | None = None) -> str:
    """The run as TREC text (see the module's docstring for what ``run`` may be).

    ``tag``: the run's tag (default: the DataFrame's tag column, the ranx Run's name,
    else ``"run"``); not allowed with a file, which keeps its own.

    >>> run_text({"q1": {"d1": 0.5, "d2": 0.5, "d3": 2}}, tag="bm25")
    'q1 Q0 d3 1 2.0 bm25\\nq1 Q0 d2 2 0.5 bm25\\nq1 Q0 d1 3 0.5 bm25\\n'
    """
    if _is_file(run):
        _no_tag_for_a_file(tag)
        return _file_bytes(run).decode("utf-8")
    by_need, found_tag = _run_rows(run)
    tag = _checked_tag(tag if tag is not None else found_tag or DEFAULT_TAG)
    return "".join(
        f"{need} Q0 {doc} {rank} {score!r} {tag}\n"
        for need in sorted(by_need)
        for rank, (doc, score) in enumerate(_ordered(by_need[need]), 1)
    )


def run_gzip(run: Any, tag: str | None = None) -> bytes:
    """:func:`run_text` gzipped at :data:`GZIP_LEVEL` (a file given already gzipped is
    returned as it is). The bytes are the same for the same run (no timestamp in the
    gzip header)."""
    if _is_file(run):
        _no_tag_for_a_file(tag)
        data = _raw_bytes(run)
        return data if data.startswith(GZIP_MAGIC) else _gzip(data)
    return _gzip(run_text(run, tag).encode("utf-8"))


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0)


def write_run(run: Any, path: str | os.PathLike[str], tag: str | None = None) -> Path:
    """Write :func:`run_gzip`'s bytes to ``path`` and return it (as a ``Path``)."""
    path = Path(path)
    path.write_bytes(run_gzip(run, tag))
    return path


def qrels_text(qrels: Any) -> str:
    """Qrels as TREC text ``query_id iteration doc_id relevance``, in the order given
    (a file is returned as it is, gunzipped).

    >>> qrels_text({"q1": {"d1": 1, "d2": 0}})
    'q1 0 d1 1\\nq1 0 d2 0\\n'
    """
    if _is_file(qrels):
        return _file_bytes(qrels).decode("utf-8")
    lines = []
    seen: set[tuple[str, str]] = set()
    needs: dict[Any, str] = {}
    rows, describe = _qrels_rows(qrels)
    for at, need, doc, relevance, iteration in rows:
        where = _Where(describe, at)
        need = needs.get(need) or needs.setdefault(need, _need_id(need, where))
        doc = _doc_id(doc, where)
        if (need, doc) in seen:
            raise ValueError(f"{where}: document {doc!r} judged twice for query {need!r}")
        seen.add((need, doc))
        iteration = "0" if iteration is None else _token(str(iteration), "iteration", where)
        lines.append(f"{need} {iteration} {doc} {_relevance(relevance, where)}\n")
    if not lines:
        raise ValueError("the qrels are empty (no judgments)")
    return "".join(lines)


# ------------------------------------------------------------------------- files


def _is_file(value: Any) -> bool:
    return isinstance(value, str | bytes | os.PathLike)


def _no_tag_for_a_file(tag: str | None) -> None:
    if tag is not None:
        raise ValueError("a TREC file keeps its own tags: tag= is for runs held in Python")


def _raw_bytes(source: str | bytes | os.PathLike[str]) -> bytes:
    if isinstance(source, bytes):
        return source
    path = Path(source)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {os.fspath(source)}")
    return path.read_bytes()


def _file_bytes(source: str | bytes | os.PathLike[str]) -> bytes:
    data = _raw_bytes(source)
    return gzip.decompress(data) if data.startswith(GZIP_MAGIC) else data


# ------------------------------------------------------------------- recognition


class _Where:
    """Where a row came from, worded only when an error names it (no string per row)."""

    __slots__ = ("at", "describe")

    def __init__(self, describe: Callable[[Any], str], at: Any) -> None:
        self.describe, self.at = describe, at

    def __str__(self) -> str:
        return self.describe(self.at)


def _is_frame(value: Any) -> bool:
    return hasattr(value, "columns") and hasattr(value, "itertuples")


def _is_ranx(value: Any) -> bool:
    return type(value).__module__.split(".")[0] == "ranx" and callable(
        getattr(value, "to_dict", None)
    )


def _describe(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}".removeprefix("builtins.")


def _column(frame: Any, names: tuple[str, ...], what: str) -> str:
    for name in names:
        if name in frame.columns:
            return name
    has = ", ".join(map(str, frame.columns)) or "none"
    raise ValueError(
        f"the DataFrame has no {what} column: expected one of {', '.join(names)} "
        f"(its columns: {has})"
    )


def _frame_tag(frame: Any) -> str | None:
    for name in TAG_COLUMNS:
        if name in frame.columns:
            tags = list(dict.fromkeys(map(str, frame[name].tolist())))
            if len(tags) > 1:
                shown = ", ".join(map(repr, tags[:3])) + (" ..." if len(tags) > 3 else "")
                raise ValueError(
                    f"the DataFrame's {name!r} column holds {len(tags)} runs ({shown}): "
                    "select one run's rows, or pass tag= to name them as one run"
                )
            return tags[0] if tags else None
    return None


# Each source gives rows (where, query, doc, value[, item]) and how to word a ``where``.


def _frame_rows(frame: Any, value_columns: tuple[str, ...], what: str) -> tuple[Iterator, Callable]:
    need = _column(frame, QUERY_COLUMNS, "query")
    doc = _column(frame, DOC_COLUMNS, "document")
    value = _column(frame, value_columns, what)
    columns = (frame.index.tolist(), frame[need].tolist(), frame[doc].tolist())
    rows = zip(*columns, frame[value].tolist(), strict=True)
    return rows, lambda label: f"DataFrame row {label!r}"


def _nested_rows(mapping: Mapping, kind: str, what: str) -> tuple[Iterator, Callable]:
    def rows() -> Iterator[tuple]:
        for need, docs in mapping.items():
            if not isinstance(docs, Mapping):
                raise TypeError(
                    f"{kind}[{need!r}] is a {_describe(docs)}: "
                    f"expected a {{doc_id: {what}}} mapping"
                )
            for doc, value in docs.items():
                yield (need, doc), need, doc, value

    return rows(), lambda at: f"{kind}[{at[0]!r}][{at[1]!r}]"


def _tuple_rows(
    items: Iterable, fields: tuple[str, str, str], kind: str
) -> tuple[Iterator, Callable]:
    def describe(number: int) -> str:
        return f"{kind} item {number}"

    def rows() -> Iterator[tuple]:
        for number, item in enumerate(items, 1):
            try:
                yield (number, *map(getattr, (item,) * 3, fields), item)
            except AttributeError:
                if not (isinstance(item, tuple) and len(item) == 3):
                    raise TypeError(
                        f"{describe(number)} is a {_describe(item)}: expected an object with "
                        f"{', '.join(fields)} (as ir_measures' tuples have) or a 3-tuple"
                    ) from None
                yield (number, *item, item)

    return rows(), describe


def _run_rows(run: Any) -> tuple[dict[str, dict[str, float]], str | None]:
    """The run's checked rows, ``{query: {doc: score}}``, and its tag if it names one."""
    tag = None
    if _is_frame(run):
        (rows, describe), tag = _frame_rows(run, ("score",), "score"), _frame_tag(run)
    elif _is_ranx(run):
        if type(run).__name__ == "Qrels":
            raise TypeError("a ranx Qrels is not a run: pass a ranx Run")
        rows, describe = _nested_rows(run.to_dict(), "Run", "score")
        tag = getattr(run, "name", None)
    elif isinstance(run, Mapping):
        rows, describe = _nested_rows(run, "run", "score")
    elif isinstance(run, Iterable):
        found, describe = _tuple_rows(run, ("query_id", "doc_id", "score"), "run")
        rows = (row[:4] for row in found)
    else:
        raise TypeError(
            f"cannot read a run from a {_describe(run)}: give a TREC file path, a DataFrame, "
            "a {query_id: {doc_id: score}} dict, a ranx Run or ir_measures ScoredDoc tuples"
        )
    by_need: dict[str, dict[str, float]] = {}
    needs: dict[Any, str] = {}  # each distinct query id is checked once
    for at, need, doc, score in rows:
        if need in needs:
            docs = by_need[needs[need]]
        else:
            needs[need] = checked = _need_id(need, _Where(describe, at))
            docs = by_need.setdefault(checked, {})
        if type(doc) is not str or not doc or _SPACE.search(doc):
            doc = _doc_id(doc, _Where(describe, at))
        if doc in docs:
            where = _Where(describe, at)
            raise ValueError(f"{where}: document {doc!r} twice for query {needs[need]!r}")
        if type(score) is not float or not math.isfinite(score):
            score = _score(score, _Where(describe, at))
        docs[doc] = score
    if not by_need:
        raise ValueError(f"the run ({_describe(run)}) is empty: no (query, document, score)")
    return by_need, None if tag is None else str(tag)


def _qrels_rows(qrels: Any) -> tuple[Iterator, Callable]:
    """Rows (where, query, doc, relevance, iteration or None) and how to word a where."""
    if _is_frame(qrels):
        rows, describe = _frame_rows(qrels, RELEVANCE_COLUMNS, "relevance")
        return ((*row, None) for row in rows), describe
    if _is_ranx(qrels) or isinstance(qrels, Mapping):
        mapping = qrels.to_dict() if _is_ranx(qrels) else qrels
        rows, describe = _nested_rows(mapping, "qrels", "relevance")
        return ((*row, None) for row in rows), describe
    if isinstance(qrels, Iterable):
        found, describe = _tuple_rows(qrels, ("query_id", "doc_id", "relevance"), "qrels")
        return ((*row[:4], getattr(row[4], "iteration", None)) for row in found), describe
    raise TypeError(
        f"cannot read qrels from a {_describe(qrels)}: give a TREC qrels file path, a "
        "DataFrame, a {query_id: {doc_id: relevance}} dict, a ranx Qrels or ir_measures "
        "Qrel tuples"
    )


# ---------------------------------------------------------------------- values

_SPACE = re.compile(r"\s")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _token(text: str, what: str, where: object) -> str:
    if not text or _SPACE.search(text):
        problem = "is empty" if not text.strip() else "holds whitespace"
        raise ValueError(f"{where}: the {what} {text!r} {problem} (a TREC field cannot)")
    return text


def _need_id(value: Any, where: object) -> str:
    if _missing(value):
        raise ValueError(f"{where}: no query id")
    text = _token(str(value), "query id", where)
    if text.startswith("#"):
        raise ValueError(f"{where}: the query id {text!r} starts with '#' (a comment in TREC)")
    return text


def _doc_id(value: Any, where: object) -> str:
    if _missing(value):
        raise ValueError(f"{where}: no document id")
    return _token(str(value), "document id", where)


def _score(value: Any, where: object) -> float:
    try:
        score = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: the score {value!r} is not a number") from None
    if not math.isfinite(score):
        raise ValueError(f"{where}: the score {value!r} is not finite")
    return score


def _relevance(value: Any, where: object) -> int:
    try:
        return operator.index(value)
    except TypeError:
        if isinstance(value, float) and value.is_integer():
            return int(value)
    raise ValueError(f"{where}: the relevance {value!r} is not an integer")


def _checked_tag(tag: Any) -> str:
    return _token(str(tag), "tag", "the run")


def _ordered(docs: dict[str, float]) -> list[tuple[str, float]]:
    """One query's documents in trec_eval's order: score descending, ties by doc_id
    descending (Python compares str by code point, which is UTF-8's byte order:
    trec_eval's strcmp; ``-0.0 == 0.0`` ties, as in C). Two stable sorts (``reverse``
    keeps a sort stable): doc_id first, then score."""
    ranked = sorted(docs.items(), key=operator.itemgetter(0), reverse=True)
    ranked.sort(key=operator.itemgetter(1), reverse=True)
    return ranked
