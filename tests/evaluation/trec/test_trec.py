"""Reading TREC files: formats, gzip, and every bad input named by file and line."""

from __future__ import annotations

import contextlib
import gzip
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.trec import (
    TrecFormatError,
    check_run_head,
    read_needs,
    read_qrels,
    read_run,
)
from tests import FIXTURES

RUN = b"q1 Q0 d1 1 3.0 tagA\nq1 Q0 d2 2 2.0 tagA\nq2 Q0 d1 1 1.5 tagA\n"
QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d9 2\n"


def write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_error_carries_path_line_reason():
    err = TrecFormatError("run.txt", 3, "bad")
    assert (err.path, err.line, err.reason) == ("run.txt", 3, "bad")
    assert str(err) == "run.txt:3: bad"
    assert isinstance(err, ValueError)


def test_read_run_plain(tmp_path):
    run = read_run(write(tmp_path, "run.txt", RUN))
    assert run.frame.need_id.astype(str).tolist() == ["q1", "q1", "q2"]
    assert run.frame.doc_id.tolist() == ["d1", "d2", "d1"]
    assert run.frame.score.dtype == "float64"
    assert run.frame.score.tolist() == [3.0, 2.0, 1.5]
    assert run.tag == "tagA" and run.warnings == []


def test_read_run_gzip_path_and_stream(tmp_path):
    path = write(tmp_path, "run.txt.gz", gzip.compress(RUN))
    assert read_run(path).frame.score.tolist() == [3.0, 2.0, 1.5]
    assert read_run(io.BytesIO(gzip.compress(RUN)), name="up.gz").frame.shape[0] == 3
    assert read_qrels(io.BytesIO(gzip.compress(QRELS))).relevance.tolist() == [1, 0, 2]


def test_read_run_messy_whitespace_extra_columns_comments(tmp_path):
    data = b"# a comment\n  q1\tQ0  d1 1\t  3.0 tagA junk after\n\nq1 Q0 d2 2 2e0 tagB \r\n"
    run = read_run(write(tmp_path, "run.txt", data))
    assert run.frame.doc_id.tolist() == ["d1", "d2"]
    assert run.frame.score.tolist() == [3.0, 2.0]
    assert run.tag == "tagB"  # the last line's, as trec_eval
    assert any("2 different tags" in w for w in run.warnings)


def test_read_qrels_types_and_tabs(tmp_path):
    qrels = read_qrels(write(tmp_path, "q.txt", b"q1\t0\td1\t1\nq1\t0\td2\t-1\n"))
    assert list(qrels.columns) == ["need_id", "doc_id", "relevance"]
    assert qrels.relevance.dtype == "int64"
    assert qrels.relevance.tolist() == [1, -1]
    assert qrels.need_id.tolist() == ["q1", "q1"]


@pytest.mark.parametrize(
    ("data", "line", "reason"),
    [
        (b"q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0\n", 2, "expected 6 columns"),
        (b"q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 abc t\n", 2, "score 'abc' is not a number"),
        (b"q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 nan t\n", 2, "score 'nan' is not finite"),
        (b"q1 Q0 d1 1 inf t\n", 1, "score 'inf' is not finite"),
        (
            b"q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq1 Q0 d1 3 1.0 t\n",
            3,
            "doc_id 'd1' twice for need 'q1' (first on line 1)",
        ),
        (b"", 1, "empty file"),
        (b"  \n\n", 1, "empty file"),
        (b"q1 Q0 d1 1 3.0 t\nq1 Q0 d\x002 2 2.0 t\n", 2, "binary file"),
        (b"q1 Q0 d1 1 3.0 t\nq1 Q0 d\xff\xfe 2 2.0 t\n", 2, "binary file (not UTF-8"),
        (b"q1 Q0 d1 1 3.0 t\nq1 Q0 " + b"x" * 10_001 + b" 2 2.0 t\n", 2, "line longer than 10000"),
    ],
    ids=["columns", "score", "nan", "inf", "duplicate", "empty", "blank", "nul", "utf8", "long"],
)
def test_bad_runs(tmp_path, data, line, reason):
    path = write(tmp_path, "bad.run", data)
    with pytest.raises(TrecFormatError) as info:
        read_run(path)
    assert info.value.line == line
    assert info.value.path == str(path)
    assert reason in info.value.reason
    assert str(info.value).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize(
    ("data", "line", "reason"),
    [
        (b"q1 Q0 d1 1 3.0 t\nq1  d2 2 2.0 t\n", 2, "expected 6 columns"),
        (b"q1 Q0 d1 1 3.0 t\nq1 Q0 d2  2.0 t\n", 2, "expected 6 columns"),
        (b"q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 \n", 2, "expected 6 columns"),
        (b"q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 ", 2, "expected 6 columns"),
        (b"q1\tQ0\td1\t1\t3.0\tt\nq1\t\td2\t2\t2.0\tt\n", 2, "expected 6 columns"),
        (b"q1 Q0 d1 1 3.0 t\nq1 " + b"Q" * 10_001 + b" d2 2 2.0 t\n", 2, "line longer than"),
        (b"q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 " + b"t" * 10_001 + b"\n", 2, "line longer than"),
        (b"q1 Q0 d1 1 3.0 t\nq1 Q0 d1 R2 2.0 t\n", 2, "doc_id 'd1' twice"),
    ],
    ids=["empty-q0", "empty-rank", "trailing", "trailing-eof", "tab-q0", "long-q0", "long-tag",
         "text-rank"],
)  # fmt: skip
def test_bad_runs_in_columns_the_fast_path_skips(tmp_path, data, line, reason):
    """Q0 is not converted, the rank is read as a number and the tag as a
    dictionary: the byte-level layout check still names these lines."""
    with pytest.raises(TrecFormatError) as info:
        read_run(write(tmp_path, "bad.run", data))
    assert (info.value.line, reason in info.value.reason) == (line, True)


def test_run_rank_column_text_or_crlf(tmp_path):
    text_rank = read_run(write(tmp_path, "a.run", b"q1 Q0 d1 R1 3.0 t\nq1 Q0 d2 R2 2.0 t\n"))
    assert text_rank.frame["rank"].isna().all() and text_rank.frame.score.tolist() == [3.0, 2.0]
    numbers = read_run(write(tmp_path, "b.run", b"q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2e0 2.0 t\n"))
    assert numbers.frame["rank"].tolist() == [1.0, 2.0]
    crlf = read_run(write(tmp_path, "c.run", RUN.replace(b"\n", b"\r\n")))
    assert crlf.frame.doc_id.tolist() == ["d1", "d2", "d1"] and crlf.tag == "tagA"


def test_bad_run_line_numbers_count_comments_and_blanks(tmp_path):
    data = b"# header\n\nq1 Q0 d1 1 3.0 t\n   \nq1 Q0 d2 2 x t\n"
    with pytest.raises(TrecFormatError) as info:
        read_run(write(tmp_path, "bad.run", data))
    assert info.value.line == 5


def test_duplicate_with_messy_whitespace_reports_true_line(tmp_path):
    data = b"# c\nq1  Q0 d1 1 3.0 t\n\nq1 Q0 d1 2 2.0 t\n"
    with pytest.raises(
        TrecFormatError, match=r":4: doc_id 'd1' twice for need 'q1' \(first on line 2\)"
    ):
        read_run(write(tmp_path, "bad.run", data))


@pytest.mark.parametrize(
    ("data", "line", "reason"),
    [
        (b"q1 0 d1 1\nq1 0 d2\n", 2, "expected 4 columns"),
        (b"q1 0 d1 1\nq1 0 d2 1 extra\n", 2, "expected 4 columns"),
        (b"q1 0 d1 1\nq1 0 d2 high\n", 2, "relevance 'high' is not an integer"),
        # Arrow's cast would read 16, trec_eval's atol 0: refused as any non-integer
        (b"q1 0 d1 +1\nq1 0 d2 0x10\n", 2, "relevance '0x10' is not an integer"),
        (
            b"q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 0\n",
            3,
            "doc_id 'd1' judged twice for need 'q1' (first on line 1)",
        ),
        (b"", 1, "empty file"),
        (b"q1 0 d1 1\n\x00\x01\x02", 2, "binary file"),
        (b"q1 0 " + b"d" * 10_001 + b" 1\n", 1, "line longer than 10000"),
    ],
    ids=["short", "long-row", "relevance", "hex", "duplicate", "empty", "binary", "long"],
)
def test_bad_qrels(tmp_path, data, line, reason):
    with pytest.raises(TrecFormatError) as info:
        read_qrels(write(tmp_path, "bad.qrels", data))
    assert info.value.line == line
    assert reason in info.value.reason


@pytest.mark.parametrize("blank", [b" ", b"\t  "], ids=["regular", "normalised"])
def test_a_byte_order_mark_is_skipped(blank):
    """A UTF-8 BOM before line 1 (Windows editors write one) is not part of the first
    need's id, on the fast path and the normalising one (docs/formats.md)."""
    from evaluation.trec.columnar import read_qrels_columns

    run = read_run(b"\xef\xbb\xbf1" + blank + b"Q0 d1 1 3 t\n1 Q0 d2 2 2 t\n")
    assert run.needs == ["1"]
    qrels = read_qrels_columns(b"\xef\xbb\xbf1" + blank + b"0 d1 1\n1 0 d2 0\n")
    assert qrels.need.to_pylist() == ["1", "1"]


def test_name_overrides_path_in_messages():
    with pytest.raises(TrecFormatError, match=r"^upload\.txt:1: expected 6 columns"):
        read_run(io.BytesIO(b"q1 Q0 d1\n"), name="upload.txt")


def test_gzip_errors_report_decompressed_lines(tmp_path):
    path = write(tmp_path, "bad.gz", gzip.compress(b"q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 two t\n"))
    with pytest.raises(TrecFormatError, match=r"bad\.gz:2: score 'two' is not a number"):
        read_run(path)


def test_check_run_head(tmp_path):
    good = write(tmp_path, "good.run", RUN)
    assert check_run_head(good) is None
    bad = write(tmp_path, "bad.run", RUN + b"q3 Q0 d1 1 x t\n")
    with pytest.raises(TrecFormatError, match=r"bad\.run:4: score 'x'"):
        check_run_head(bad)
    # only the head is looked at
    assert check_run_head(bad, max_lines=3) is None
    gz = write(tmp_path, "bad.run.gz", gzip.compress(RUN + b"q3 Q0 d1\n"))
    with pytest.raises(TrecFormatError, match=r":4: expected 6 columns"):
        check_run_head(gz)
    with pytest.raises(TrecFormatError, match=r"^form:1: empty file"):
        check_run_head(io.BytesIO(b""), name="form")


def test_read_needs_tsv(tmp_path):
    needs = read_needs(
        write(tmp_path, "needs.tsv", b"n1\tCS foundations\nn2\tPlays\tabout plays\n")
    )
    assert needs.to_dict("list") == {
        "need_id": ["n1", "n2"],
        "title": ["CS foundations", "Plays"],
        "description": ["", "about plays"],
    }


def test_read_needs_tsv_from_a_spreadsheet(tmp_path):
    """A byte order mark and CRLF line ends (a spreadsheet's TSV export) are no part of
    the ids and titles, as the qrels reader reads them."""
    data = b"\xef\xbb\xbf301\tTopic one\r\n302\tTopic two\r\n"
    needs = read_needs(write(tmp_path, "needs.tsv", data))
    assert needs.need_id.tolist() == ["301", "302"]
    assert needs.title.tolist() == ["Topic one", "Topic two"]
    assert (
        needs.need_id.tolist()
        == read_qrels(b"\xef\xbb\xbf301 0 d 1\r\n302 0 d 1\r\n")["need_id"].astype(str).tolist()
    )


def test_read_needs_trec_topics(tmp_path):
    data = b"""<top>
<num> Number: 401
<title> foreign minorities, Germany
<desc> Description:
What language and cultural differences impede integration?
<narr> Narrative:
A relevant document will focus on ...
</top>
<top>
<num> Number: 402 <title> behavioral genetics
<desc> Description: What is known?
</top>
"""
    needs = read_needs(write(tmp_path, "topics.401-402", data))
    assert needs.need_id.tolist() == ["401", "402"]
    assert needs.title.tolist() == ["foreign minorities, Germany", "behavioral genetics"]
    assert needs.description[0] == "What language and cultural differences impede integration?"


def test_read_needs_xml(tmp_path):
    data = b'<topics><topic number="1"><query>obama family tree</query><description>Find info</description></topic></topics>'
    needs = read_needs(write(tmp_path, "topics.xml", data))
    assert needs.iloc[0].tolist() == ["1", "obama family tree", "Find info"]


@pytest.mark.parametrize(
    ("data", "line", "reason"),
    [
        (b"n1\tok\nn2\n", 2, "expected need_id<TAB>title"),
        (b"n1\tok\nn1\tagain\n", 2, "need 'n1' given twice (first on line 1)"),
        (b"", 1, "empty file"),
        (b"n1\tok\n" + b"n" * 101 + b"\tlong\n", 2, "need id of 101 characters (at most 100)"),
        (b"<top><num> 1 <title> t </top>\n<top><num> 1 <title> u </top>", 2, "given twice"),
        (
            b"<top><num> 1 <title> t </top>\n<top><num> 2 <title>\n<desc> d </top>",
            2,
            "topic '2' without a title",
        ),
        # the XML parser gives no line: the error names the file alone
        (
            b'<topics><topic number="1"><query>a</query></topic><topic number="1"><query>b</query></topic></topics>',
            None,
            "given twice",
        ),
    ],
)
def test_bad_needs(tmp_path, data, line, reason):
    with pytest.raises(TrecFormatError) as info:
        read_needs(write(tmp_path, "needs.tsv", data))
    assert (info.value.line, info.value.reason) == (line, reason) or reason in info.value.reason
    assert info.value.line == line


def test_seed_needs_fixture():
    seed = FIXTURES / "seed-library"
    needs = read_needs(seed / "needs.tsv")
    assert needs.need_id.tolist() == ["cs-foundations", "stage-plays", "atwood", "russian-novels"]


def big_run(lines: int = 40_000) -> bytes:
    """Over 1 MB: big files are memory-mapped instead of read."""
    return b"".join(
        b"q%d Q0 doc%06d %d %d.5 tag\n" % (i // 1000, i, i % 1000 + 1, 1000 - i % 1000)
        for i in range(lines)
    )


def test_big_files_mapped_read_and_errors(tmp_path):
    data = big_run()
    assert len(data) > 1 << 20
    run = read_run(write(tmp_path, "big.run", data))
    assert len(run.frame) == 40_000 and run.frame.score.iloc[-1] == 1.5
    messy = write(tmp_path, "messy.run", data.replace(b" Q0 ", b"\tQ0  "))
    assert read_run(messy).frame.doc_id.tolist() == run.frame.doc_id.tolist()
    bad_score = write(tmp_path, "bad1.run", data + b"q9 Q0 x 1 oops tag\n")
    with pytest.raises(TrecFormatError, match=r"bad1\.run:40001: score 'oops' is not a number"):
        read_run(bad_score)
    duplicate = write(tmp_path, "bad2.run", data + b"q39 Q0 doc039999 9 0.1 tag\n")
    with pytest.raises(
        TrecFormatError,
        match=r":40001: doc_id 'doc039999' twice for need 'q39' \(first on line 40000\)",
    ):
        read_run(duplicate)
    with_nul = write(tmp_path, "bad3.run", data + b"\x00")
    with pytest.raises(TrecFormatError, match=r":40001: binary file"):
        read_run(with_nul)


def test_doc_hash_is_the_same_whatever_the_chunk_or_slice():
    """The duplicate check hashes doc ids 8 bytes at a time; equal ids must hash
    equal across chunks with different longest ids, and in sliced arrays."""
    import pyarrow as pa

    from evaluation.trec.hashing import string_hash

    ids = ["", "a", "ab", "abcdefgh", "abcdefghi", "x" * 16, "x" * 17, "é-ü"]
    chunked = pa.chunked_array([ids, ["ab", "zz"], pa.array(["q", *ids]).slice(1)])
    hashed = string_hash(chunked).tolist()
    assert hashed[10:] == hashed[:8] and hashed[8] == hashed[2]
    assert len(set(hashed[:8] + [hashed[9]])) == 9


@settings(max_examples=60, deadline=None)
@given(
    width=st.integers(1, 70),
    count=st.integers(1, 40),
    seed=st.integers(0, 2**32 - 1),
    cut=st.integers(0, 40),
)
def test_ids_of_one_length_hash_as_any_ids_do(width, count, seed, cut):
    """The fixed-width fast path (every id of a chunk one length, read as rows) gives
    span_hash's values: a mixed chunk, a sliced one and the spans themselves agree."""
    import numpy as np
    import pyarrow as pa

    from evaluation.trec.hashing import span_hash, string_hash

    rng = np.random.default_rng(seed)
    ids = ["".join(map(chr, rng.integers(33, 127, width))) for _ in range(count)]
    fixed = string_hash(pa.chunked_array([ids, pa.array(["?", *ids]).slice(1)])).tolist()
    mixed = string_hash(pa.chunked_array([[*ids, "x" * (width + 1)]])).tolist()[:-1]
    data = np.frombuffer("".join(ids).encode(), np.uint8)
    spans = span_hash(data, np.arange(count) * width, np.full(count, width)).tolist()
    assert fixed == mixed + mixed == spans + spans
    assert len(set(fixed[:count])) == len(set(ids))  # distinct ids, distinct hashes here
    assert string_hash(pa.chunked_array([ids[: cut % count]])).tolist() == spans[: cut % count]


def test_to_numpy_matches_pyarrow_for_chunks_nulls_and_empty():
    import numpy as np
    import pyarrow as pa

    from evaluation.trec.arrays import to_numpy

    floats = pa.chunked_array([[1.5, None], [], [-0.0, 3.0, float("inf")]], pa.float64())
    got = to_numpy(floats, np.float64)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, floats.to_numpy())
    assert np.signbit(got[2])  # -0.0 kept bit for bit
    ints = pa.chunked_array([[3, 1], [7]], pa.int32())
    assert to_numpy(ints, np.int64).tolist() == [3, 1, 7]
    assert to_numpy(ints, np.int64).dtype == np.int64
    assert to_numpy(pa.array([4, 5], pa.int32()), np.int64).dtype == np.int64
    assert to_numpy(pa.chunked_array([], pa.float64()), np.float64).shape == (0,)


def _first_duplicate_by_hand(needs, docs):
    seen, found = {}, None
    for row, pair in enumerate(zip(needs, docs, strict=True)):
        if pair in seen:
            return seen[pair], row
        seen[pair] = row
    return found


@pytest.mark.parametrize("layout", ["equal blocks", "uneven blocks", "split needs", "one need"])
def test_first_duplicate_matches_a_reader_going_down_the_file(layout):
    """The per-need grid (blocks of a need's lines) and the whole-file sort find
    the same first repeated (need, doc) pair a line-by-line reader does."""
    import numpy as np
    import pyarrow as pa

    from evaluation.trec.hashing import blocks_with_repeats, first_duplicate, string_hash

    rng, found = np.random.default_rng(7), 0
    for case in range(60):
        if layout == "equal blocks":
            needs = np.repeat(np.arange(20), 30)
        elif layout == "uneven blocks":
            needs = np.repeat(np.arange(20), rng.integers(1, 60, 20))
        elif layout == "split needs":
            needs = np.repeat(rng.integers(0, 5, 40), 10)
        else:
            needs = np.zeros(300, np.int64)
        docs = [f"d{i}" for i in rng.permutation(len(needs))]
        for _ in range(case % 4):  # 0-3 repeats of a doc, in its need or (split) anywhere
            a = int(rng.integers(len(needs)))
            same = np.flatnonzero(needs == needs[a])
            b = int(rng.choice(same)) if layout != "split needs" else int(rng.integers(len(needs)))
            docs[b] = docs[a]
            needs[b] = needs[a]
        codes = needs.astype(np.int32)
        expected = _first_duplicate_by_hand(codes.tolist(), docs)
        grid = blocks_with_repeats(codes, string_hash(pa.chunked_array([docs])))
        assert (grid is None) == (layout == "split needs")
        assert first_duplicate(codes, pa.chunked_array([docs])) == expected, (layout, case)
        found += expected is not None
    assert found >= 30


def test_first_duplicate_survives_folded_hash_collisions_and_padding():
    """Hashes equal in their folded 32 bits (or equal to the padding value) are
    only candidates: the exact check decides."""
    import numpy as np
    import pyarrow as pa

    from evaluation.trec.hashing import blocks_with_repeats, first_duplicate

    needs = np.array([0, 0, 0, 1, 1, 2], np.int32)
    docs = pa.chunked_array([["a", "b", "c", "a", "b", "z"]])
    top = np.uint64(0xFFFFFFFF)
    # rows 0 and 1 fold to the same 32 bits; rows 3 and 4 fold to the padding value
    hashes = np.array([1 << 32, 1, 7, top, top << np.uint64(32), 9], np.uint64)
    rows = blocks_with_repeats(needs, hashes)
    assert rows.tolist() == [0, 1, 2, 3, 4]  # blocks of needs 0 and 1: candidates
    assert first_duplicate(needs, docs, hashes) is None
    docs = pa.chunked_array([["a", "b", "c", "a", "a", "z"]])
    hashes[4] = hashes[3]
    assert first_duplicate(needs, docs, hashes) == (3, 4)


def test_take_picks_as_arrow_does_without_joining_chunks():
    import numpy as np
    import pyarrow as pa

    from evaluation.trec.arrays import take

    column = pa.chunked_array(
        [
            ["a", "b", "c"],
            [],
            pa.array(["x", "d", "e"], pa.large_string()).slice(1),
            ["f"],
            ["g", "h"],
        ],
        pa.large_string(),
    )
    rng = np.random.default_rng(3)
    for rows in (
        np.arange(len(column)),
        np.array([7, 0, 3, 3, 1, 6]),  # out of chunk order, repeats
        np.sort(rng.integers(0, len(column), 20)),
        rng.integers(0, len(column), 20),
        np.zeros(0, np.int64),
    ):
        picked = take(column, rows)
        assert picked.type == column.type
        assert picked.to_pylist() == column.take(pa.array(rows, pa.int64())).to_pylist()
    assert take(pa.chunked_array([["a", "b"]]), np.array([1])).to_pylist() == ["b"]


@pytest.mark.parametrize(
    ("text", "header", "regular"),
    [
        (b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\n", False, True),
        (b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t", False, True),  # no newline at the end
        (b"qid\tQ0 docno rank score tag\nq1 Q0 d1 1 2.5 t\n", True, True),  # any header
        (b"q1 Q0 d1\t1 2.5 t x\nq1 Q0 d2 2 1.5 t\n", False, False),  # a tab among spaces
        (b"q1 Q0 d1 1 2.5 t\nq1 Q0 d\x0b2 2 1.5 t\n", False, False),  # VT inside a field
        (b"q1 Q0 d1 1 2.5 t\nq1 Q0 d\x002 2 1.5 t\n", False, False),  # NUL
        (b"q1 Q0 d1 1 2.5 t\rq1 Q0 d2 2 1.5 t\n", False, False),  # a lone CR
        (b"q1 Q0 d1 1 2.5 t\n\x0cq1 Q0 d2 2 1.5 t\n", False, False),  # FF
    ],
)
def test_layout_check_counts_every_blank_that_is_no_delimiter(text, header, regular):
    from evaluation.trec.parsing import _regular_layout

    assert _regular_layout(text, b" ", 6, header=header) is regular
    if not regular:  # and the reader still answers, by the careful path
        with pytest.raises(TrecFormatError) if b"\x00" in text else contextlib.nullcontext():
            read_run(text)


def test_a_tab_in_place_of_a_space_is_left_to_the_careful_path():
    """Blanks are counted, not searched for: a tab standing for a space keeps the count,
    and the parse (every line six fields) refuses the line, so the careful path reads it."""
    from evaluation.trec.parsing import _fast_table, _regular_layout

    text = b"q1 Q0 d1\t1 2.5 t\nq1 Q0 d2 2 1.5 t\n"
    assert _regular_layout(text, b" ", 6) is True
    assert _fast_table(text, "run") is None
    assert read_run(text).frame.doc_id.tolist() == ["d1", "d2"]
