"""Read needs (topics): TSV ``need_id<TAB>title[<TAB>description]``, TREC
``<top><num>...<title>...<desc>...`` topic files, or XML ``<topic number=..>``."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from evaluation.trec.need_ids import NEED_ID_LIMIT
from evaluation.trec.parsing import _check_bytes
from evaluation.trec.sources import Source, TrecFormatError, load

if TYPE_CHECKING:  # imported where the frame is built: scoring reads no topics
    import pandas as pd

_TOP = re.compile(rb"<top>(.*?)</top>", re.S | re.I)
_TAG = re.compile(rb"<(num|title|desc|narr)>", re.I)


def _clean(text: str, label: str) -> str:
    text = " ".join(text.split())
    for prefix in (label + ":", "Number:", "Topic:", "Description:"):
        if text.lower().startswith(prefix.lower()):
            text = text[len(prefix) :].strip()
    return text


def read_needs(
    source: Source, name: str | None = None, max_bytes: int | None = None
) -> pd.DataFrame:
    """Read needs (topics): TSV, TREC ``<top>`` topics or ``<topic number=..>`` XML.

    TSV: ``need_id<TAB>title[<TAB>description]``, one need a line. Returns a
    DataFrame with ``need_id``, ``title`` and ``description`` ('' if none).
    Raises :class:`TrecFormatError` for an empty or binary file, a TSV line or a
    topic without a title, a need_id given twice or longer than ``NEED_ID_LIMIT`` (100)
    characters, or content (decompressed) over ``max_bytes`` (None: no limit). An
    error in XML topics names the file without a line.

    >>> read_needs(b"401\\tforeign minorities, Germany\\n").title[0]
    'foreign minorities, Germany'
    """
    data, name = load(source, name, max_bytes)
    data = bytes(data)  # needs files are small; a mapped file becomes plain bytes
    # a UTF-8 byte order mark (a spreadsheet's TSV) is no part of the first need's id,
    # as the qrels and run readers skip it too
    data = data.removeprefix(b"\xef\xbb\xbf")
    _check_bytes(data, name)
    rows: list[tuple[str, str, str, int | None]] = []
    if _TOP.search(data):
        for match in _TOP.finditer(data):
            parts = _TAG.split(match.group(1))
            fields = {parts[i].lower(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}
            line = data.count(b"\n", 0, match.start()) + 1
            decoded = {k: v.decode("utf-8", "replace") for k, v in fields.items()}
            need = _clean(decoded.get(b"num", ""), "Number")
            rows.append(
                (
                    need,
                    _clean(decoded.get(b"title", ""), "Topic"),
                    _clean(decoded.get(b"desc", ""), "Description"),
                    line,
                )
            )
    elif re.search(rb"<topic\b", data):
        import xml.etree.ElementTree as ET

        try:
            root = ET.fromstring(data)
        except ET.ParseError as exc:
            raise TrecFormatError(name, exc.position[0], f"malformed XML ({exc})") from None
        for topic in root.iter("topic"):
            need = topic.get("number") or topic.get("id") or (topic.findtext("number") or "")
            title = topic.findtext("query") or topic.findtext("title") or ""
            rows.append(
                (
                    need.strip(),
                    " ".join(title.split()),
                    " ".join((topic.findtext("description") or "").split()),
                    None,  # the XML parser gives no line: an error names the file
                )
            )
    else:
        for number, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip() or raw.lstrip().startswith(b"#"):
                continue
            try:
                text = raw.decode("utf-8").rstrip("\r")
            except UnicodeDecodeError:
                raise TrecFormatError(name, number, "binary file (not UTF-8 text)") from None
            parts = text.split("\t")
            if len(parts) < 2 or not parts[0].strip() or not parts[1].strip():
                raise TrecFormatError(name, number, "expected need_id<TAB>title")
            rows.append(
                (
                    parts[0].strip(),
                    parts[1].strip(),
                    parts[2].strip() if len(parts) > 2 else "",
                    number,
                )
            )
    seen: dict[str, int | None] = {}
    for need, title, _, line in rows:
        if not need:
            raise TrecFormatError(name, line, "topic without a number")
        if not title:  # as a TSV line without one: a need is known by its title
            raise TrecFormatError(name, line, f"topic {need!r} without a title")
        if len(need) > NEED_ID_LIMIT:
            raise TrecFormatError(
                name, line, f"need id of {len(need)} characters (at most {NEED_ID_LIMIT})"
            )
        if need in seen:
            first = "" if seen[need] is None else f" (first on line {seen[need]})"
            raise TrecFormatError(name, line, f"need {need!r} given twice{first}")
        seen[need] = line
    if not rows:
        raise TrecFormatError(name, 1, "no needs found")
    import pandas as pd

    return pd.DataFrame(
        {
            "need_id": [r[0] for r in rows],
            "title": [r[1] for r in rows],
            "description": [r[2] for r in rows],
        }
    )
