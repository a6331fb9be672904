"""The parsed lines an every-line check writes (``check_run(..., parsed=...)``) and
``read_parsed_run``: the run read back from them is the run ``read_run`` gives of the
file, column for column, whatever the file's layout; a bad line they cannot name is
refused without a number, for the file itself to name."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np
import pytest

from evaluation.measures import evaluate
from evaluation.trec import TrecFormatError, check_run, read_qrels, read_run
from evaluation.trec.columnar import read_parsed_run
from tests import DEMO

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LIMIT = 1 << 30


def parsed_run(data: bytes, tmp_path: Path, name: str = "run.txt"):
    sink = io.BytesIO()
    check_run(data, name, max_bytes=LIMIT, every_line=True, parsed=sink)
    path = tmp_path / "parsed.arrow"
    path.write_bytes(sink.getvalue())
    return read_parsed_run(path, name)


def assert_same_run(got, want) -> None:
    assert got.needs == want.needs
    assert np.array_equal(got.need, want.need)
    assert got.doc.to_pylist() == want.doc.to_pylist()
    assert np.array_equal(got.doc_hash, want.doc_hash)
    assert np.array_equal(got.score, want.score)  # bit for bit: the same parse
    assert np.array_equal(got.rank, want.rank, equal_nan=True)
    assert (got.tag, got.warnings) == (want.tag, want.warnings)


def many_lines(count: int, tag: bytes = b"tag", first: int = 0) -> list[bytes]:
    """``count`` lines of 24 needs, ~40 bytes each (50,000 lines: two 1 MB pieces)."""
    return [b"n%02d Q0 doc-%07d %d %.6f %s\n" % (i % 24, i, i // 24 + 1, 1000 - i / 7, tag)
            for i in range(first, first + count)]  # fmt: skip


REAL = sorted((FIXTURES / "trec_eval-adversarial").glob("case_*/run.txt")) + [
    FIXTURES / "trec_eval-suite" / "results.test",  # several blanks between fields
    FIXTURES / "trec_eval-suite" / "results.trunc",
    DEMO / "run-B.txt",
]


@pytest.mark.parametrize("path", REAL, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_real_run_reads_back_as_read_run_reads_its_file(path, tmp_path):
    data = path.read_bytes()
    assert_same_run(parsed_run(data, tmp_path, path.name), read_run(data, path.name))


LAYOUTS = {
    "pieces": b"".join(many_lines(80_000)),
    "header": b"qid Q0 docno rank score tag\n" + b"".join(many_lines(50_000)),
    "blank-and-comment-lines": b"\n\n# a comment\n"
    + b"".join(line + (b"\n" if i % 997 == 0 else b"") for i, line in enumerate(many_lines(60_000)))
    + b"\n\n",
    "tabs-and-spaces": b"".join(
        line.replace(b" ", b"\t") if i % 3 == 0 else line.replace(b" ", b"  ")
        for i, line in enumerate(many_lines(50_000))
    ),
    "extra-fields": b"".join(line[:-1] + b" more fields\n" for line in many_lines(40_000)),
    "a-rank-that-is-no-number-in-the-second-piece": b"".join(
        line.replace(b" 1 ", b" one ", 1) if i == 45_000 else line
        for i, line in enumerate(many_lines(60_000))
    ),
    "tags": b"".join(many_lines(30_000)) + b"".join(many_lines(30_000, b"other", 30_000)),
    "gzip": gzip.compress(b"".join(many_lines(60_000))),
    "small-whole-in-the-head": b"qid Q0 docno rank score tag\n\n# c\nq1 Q0 d1 1 2.5 t\n"
    b"q1 Q0 d2 x 1.5 t\nq2  Q0\td3 1 0.5 u\n\n",
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_layout_reads_back_as_read_run_reads_the_file(layout, tmp_path):
    data = LAYOUTS[layout]
    assert_same_run(parsed_run(data, tmp_path), read_run(data, "run.txt"))


def test_the_scores_of_a_run_read_back_equal_those_of_its_file(tmp_path):
    qrels = read_qrels(DEMO / "qrels.txt")
    data = (DEMO / "run-B.txt").read_bytes()
    got = evaluate(qrels, parsed_run(data, tmp_path), ["map", "ndcg_cut_10", "P_5"])
    want = evaluate(qrels, read_run(data, "run.txt"), ["map", "ndcg_cut_10", "P_5"])
    assert got.summary == want.summary
    assert got.per_need.equals(want.per_need)


def test_a_doc_id_twice_pieces_apart_is_refused_and_the_file_names_its_lines(tmp_path):
    lines = many_lines(60_000)
    lines[55_000] = lines[0]  # the same (need, doc) as line 1, 2 MB later
    data = b"".join(lines)
    with pytest.raises(TrecFormatError) as caught:
        parsed_run(data, tmp_path)
    assert caught.value.line is None
    with pytest.raises(TrecFormatError, match=r"run.txt:55001: doc_id 'doc-0000000' twice"):
        read_run(data, "run.txt")
