"""A header on line 1 of a run (``qid Q0 docno rank score tag``) is skipped with a
warning, as trec_eval effectively does; anywhere else a score that is no number stays an
error naming file:line. And the need ids the upload check collects."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from evaluation.trec import TrecFormatError, check_run, check_run_head, read_run, run_header
from evaluation.trec.need_ids import first_fields

HEADER = b"qid Q0 docno rank score tag\n"
BODY = b"q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\nq2 Q0 d1 1 0.5 bm25\n"
WARNING = "run.txt: line 1 looks like a header ('qid Q0 docno rank score tag'); skipped"


def big_run(lines: int = 60_000) -> bytes:
    """Over a megabyte (read from a path it is memory-mapped; streamed, several pieces)."""
    return b"".join(
        b"n%d Q0 doc-%07d %d %d.5 big\n" % (i // 1000, i, i % 1000 + 1, 5000 - i % 1000)
        for i in range(lines)
    )


@pytest.mark.parametrize(
    "header",
    [
        HEADER,
        b"qid\tQ0\tdocno\trank\tscore\ttag\n",  # tabs, the body spaces: the careful path
        b"query_id Q0 doc_id rank score run_id extra\n",  # more fields
        b"  qid  Q0 docno rank score tag  \n",  # blanks around
    ],
)
def test_a_header_on_line_1_is_skipped_with_a_warning(header):
    run = read_run(header + BODY, name="run.txt")
    assert run.frame["doc_id"].tolist() == ["d1", "d2", "d1"]
    assert run.frame["score"].tolist() == [2.5, 1.5, 0.5]
    assert run.tag == "bm25"
    assert len(run.warnings) == 1
    assert run.warnings[0].startswith("run.txt: line 1 looks like a header (")
    assert run.warnings[0].endswith("); skipped")
    assert run.frame.equals(read_run(BODY).frame)


def test_without_a_header_nothing_is_skipped_or_warned():
    run = read_run(BODY, name="run.txt")
    assert len(run.frame) == 3 and run.warnings == []
    assert run_header(BODY) is None
    assert run_header(b"# qid Q0 docno rank score tag\n") is None  # a comment is a comment
    assert run_header(b"qid Q0 docno rank score\n") is None  # five fields: a bad line
    assert run_header(HEADER) == "qid Q0 docno rank score tag"


@pytest.mark.parametrize("gzipped", [False, True])
def test_errors_after_a_header_name_the_right_line(tmp_path, gzipped):
    bad = HEADER + BODY + b"q3 Q0 d1 1 abc bm25\n"
    duplicate = HEADER + BODY + b"q1 Q0 d2 3 0.1 bm25\n"
    for content, reason in [
        (bad, "run.txt:5: score 'abc' is not a number"),
        (duplicate, "run.txt:5: doc_id 'd2' twice for need 'q1' (first on line 3)"),
        (HEADER + b"q1 Q0 d1 1 inf bm25\n", "run.txt:2: score 'inf' is not finite"),
        (BODY + HEADER, "run.txt:4: score 'score' is not a number"),  # not on line 1
        (b"\n" + HEADER + BODY, "run.txt:2: score 'score' is not a number"),
        (HEADER, "run.txt:1: empty file (no content lines after the header)"),
    ]:
        data = gzip.compress(content) if gzipped else content
        with pytest.raises(TrecFormatError) as error:
            read_run(data, name="run.txt")
        assert str(error.value) == reason
        with pytest.raises(TrecFormatError) as error:
            check_run_head(data, name="run.txt", max_bytes=1 << 20)
        assert str(error.value) == reason


def test_a_big_run_with_a_header_from_a_path_and_its_error_lines(tmp_path):
    """The fast path (pyarrow, rows to lines by arithmetic) skips the header too."""
    path = tmp_path / "run.txt"
    path.write_bytes(HEADER + big_run())
    run = read_run(path, name="run.txt")
    assert len(run.frame) == 60_000 and run.warnings == [WARNING]
    assert run.frame["doc_id"].iloc[0] == "doc-0000000"
    path.write_bytes(HEADER + big_run() + b"n0 Q0 doc-0000007 3 1.0 big\n")
    with pytest.raises(TrecFormatError) as error:
        read_run(path, name="run.txt")
    assert (
        str(error.value)
        == "run.txt:60002: doc_id 'doc-0000007' twice for need 'n0' (first on line 9)"
    )


def test_the_upload_check_skips_the_header_and_collects_the_need_ids():
    assert check_run_head(HEADER + BODY, name="run.txt", max_bytes=1 << 20) is None
    check = check_run(HEADER + BODY, name="run.txt", max_bytes=1 << 20)
    assert check.warnings == [WARNING]
    assert check.need_ids == {"q1", "q2"}
    content = HEADER + big_run() + b"  indented Q0 d 1 1 big\n\n# comment\nlast Q0 d 1 1 big"
    for data in (content, gzip.compress(content)):
        check = check_run(data, name="run.txt", max_bytes=1 << 30)
        expected = {f"n{i}" for i in range(60)} | {"indented", "last", "#"}
        assert check.need_ids == expected
    head_only = check_run(content, name="run.txt")  # no max_bytes: the head only
    assert head_only.need_ids is None and head_only.warnings == [WARNING]


def test_first_fields_is_exact_on_unsorted_lines():
    rng = np.random.default_rng(7)
    ids = [f"need-{i}".encode() * int(rng.integers(1, 4)) for i in range(500)]
    lines = [ids[i] + b" Q0 d 1 1 t\n" for i in rng.integers(0, len(ids), 20_000)]
    assert first_fields(b"".join(lines)) == {line.split()[0] for line in lines}
    assert first_fields(b"x" * 101 + b" Q0 d 1 1 t\ny Q0\n") == {b"y"}  # past 100: no need
    assert first_fields(b"") == set()


def test_a_data_line_1_with_a_bad_score_is_still_an_error():
    """Its rank is a number: a garbled line, not a header."""
    for content in (b"q1 Q0 d1 1 abc bm25\n" + BODY, b"q1 Q0 d1 1 abc bm25\n"):
        with pytest.raises(TrecFormatError, match=r"^run\.txt:1: score 'abc' is not a number$"):
            read_run(content, name="run.txt")
        with pytest.raises(TrecFormatError, match=r"^run\.txt:1: score 'abc' is not a number$"):
            check_run_head(content, name="run.txt", max_bytes=1 << 20)


def test_first_fields_steps_over_leading_blanks_and_blank_lines():
    lines = b"\n\n  a x\n\t\tb y\n" + b" " * 70 + b"far x\nc\n   \n"
    assert first_fields(lines) == {b"a", b"b", b"c"}
