"""docs/formats.md quotes the reader's own messages: each bad example in its tables gives
exactly that message from the engine, so the page cannot drift from the code."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from evaluation.trec import TrecFormatError, read_needs, read_qrels, read_run

DOC = (Path(__file__).resolve().parents[1] / "docs" / "formats.md").read_text()

CASES = [
    (read_run, "run.txt", b"q1 Q0 d1 1 12.5\n"),
    (
        read_run,
        "run.txt",
        b"".join(f"q1 Q0 d{i} {i} 1 a\n".encode() for i in range(1233)) + b"q1 Q0 dx 1 high a\n",
    ),
    (read_run, "run.txt", b"q1 Q0 d1 1 nan bm25\n"),
    (read_run, "run.txt", b"q1 Q0 d1 1 12.5 bm25\nq1 Q0 d1 2 11.5 bm25\n"),
    (read_run, "run.txt", b""),
    (read_run, "run.txt", b"q1 Q0 d1 1 1\0 a\n"),
    (read_run, "run.txt", b"q1 Q0 " + b"d" * 10_001 + b" 1 1 a\n"),
    (read_needs, "needs.tsv", b"q1 no tab\n"),
    (
        read_needs,
        "topics.txt",
        b"<top>\n<num> 401\n<title> A\n</top>\n\n<top>\n<num> 402\n<title>\n<desc> B\n</top>\n",
    ),
    (read_needs, "needs.tsv", b"q1\tA\nq1\tB\n"),
    (read_needs, "needs.tsv", b"q1\tA\n" + b"q" * 101 + b"\tB\n"),
    (read_qrels, "qrels.txt", b"q1 0 d1\n"),
    (read_qrels, "qrels.txt", b"q1 0 d1 1.5\n"),
    (read_qrels, "qrels.txt", b"q1 0 d1 1\nq1 0 d1 0\n"),
]


@pytest.mark.parametrize(("reader", "name", "content"), CASES)
def test_each_documented_message_is_the_readers(reader, name, content):
    with pytest.raises(TrecFormatError) as refused:
        reader(io.BytesIO(content), name=name)
    message = str(refused.value)
    assert f"`{message}`" in DOC, f"docs/formats.md does not quote: {message}"
