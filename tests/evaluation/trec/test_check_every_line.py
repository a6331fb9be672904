"""The upload check of every line (``check_run(..., every_line=True)``) and the gzip ratio
limit (``max_ratio``): a bad line anywhere is refused with the reason and the line
``read_run`` gives it, and a gzip bomb is stopped a few MB in."""

from __future__ import annotations

import gzip
import io
import threading

import pytest

import evaluation.trec.every_line as every_line
from evaluation.trec import TrecFormatError, check_run, read_run
from tests.hostile import gzip_bomb

LIMIT = 1 << 30


def lines(count: int = 2000) -> list[bytes]:
    return [b"n%d Q0 doc-%06d %d %d.5 tag\n" % (i // 100, i, i % 100 + 1, 900 - i % 100)
            for i in range(count)]  # fmt: skip


def refusal(data: bytes, name: str = "run.txt", **options) -> str:
    with pytest.raises(TrecFormatError) as caught:
        check_run(data, name, max_bytes=LIMIT, every_line=True, **options)
    return str(caught.value)


def with_line(number: int, line: bytes, count: int = 2000) -> bytes:
    body = lines(count)
    body[number - 1] = line
    return b"".join(body)


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_a_score_that_is_no_number_on_line_1234_of_2000_is_refused(gzipped):
    data = with_line(1234, b"n12 Q0 doc-x 34 abc tag\n")
    name = "run.txt.gz" if gzipped else "run.txt"
    assert refusal(gzip.compress(data) if gzipped else data, name) == (
        f"{name}:1234: score 'abc' is not a number"
    )
    # only the head is checked without every_line: the line is found later, by read_run
    assert check_run(data, "run.txt", max_bytes=LIMIT).need_ids is not None


@pytest.mark.parametrize(
    "line",
    [
        b"n12 Q0 doc-x 34 abc tag\n",
        b"n12 Q0 doc-x 34 inf tag\n",
        b"n12 Q0 doc-x 34\n",
        b"n12 Q0 doc-\x00 34 1.5 tag\n",
        b"n12 Q0 doc-\xff 34 1.5 tag\n",
        b"n12 Q0 " + b"x" * (1 << 20) + b" 34 1.5 tag\n",
        b"qid Q0 docno rank score tag\n",
    ],
    ids=["score", "infinite", "five-fields", "nul", "not-utf8", "1MB-line", "header-later"],
)
@pytest.mark.parametrize("number", [1500, 60_000])
def test_every_bad_line_gets_read_runs_own_reason_and_line(line, number):
    """The check and the reader agree, wherever the line is (past the head, and past the
    first of the pieces the check reads)."""
    data = with_line(number, line, count=max(2000, number + 10))
    with pytest.raises(TrecFormatError) as read:
        read_run(data, "run.txt")
    assert str(read.value).startswith(f"run.txt:{number}: ")
    assert refusal(data) == str(read.value)


def test_a_doc_id_twice_names_both_lines_of_the_file():
    data = with_line(1600, lines()[1500])
    assert refusal(data) == (
        "run.txt:1600: doc_id 'doc-001500' twice for need 'n15' (first on line 1501)"
    )


def test_a_good_run_passes_with_every_need_and_a_header_on_line_1_only_warns():
    data = b"qid Q0 docno rank score tag\n" + b"".join(lines(5000)) + b"\n\n  \n\n"
    check = check_run(data, "run.txt", max_bytes=LIMIT, every_line=True)
    assert check.need_ids == {f"n{k}" for k in range(50)}
    assert len(check.warnings) == 1 and "header" in check.warnings[0]


def test_a_long_line_with_no_end_is_refused_without_holding_it():
    data = b"".join(lines(1500)) + b"n1 Q0 " + b"y" * (64 << 20)
    assert refusal(data) == "run.txt:1501: line longer than 10000 characters"


class Counting(io.BytesIO):
    """A stream that counts the bytes read from it."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.taken = 0

    def read(self, size: int | None = -1) -> bytes:
        piece = super().read(size)
        self.taken += len(piece)
        return piece


@pytest.mark.parametrize(
    ("filler", "reason"),
    [
        (b"\n", "bomb.gz: expands more than 100 times its compressed size"),
        (b"\n\n\n\n\n\n\n#\n", "bomb.gz: expands more than 100 times its compressed size"),
        # one line with no end: its first megabyte is checked first
        (b" ", "bomb.gz:2001: line longer than 10000 characters"),
        (b"\0", "bomb.gz:2001: binary file (NUL byte)"),
    ],
    ids=["blank-lines", "comments", "spaces", "zeros"],
)
def test_a_gzip_bomb_past_valid_lines_is_refused_a_few_mb_in(filler, reason):
    """1 GB (one gzip member per MB, ~1,000x) behind 2,000 valid lines: refused for
    its ratio (or its first megabyte's bad line) with a small part of the compressed
    file read, long before its size would refuse it."""
    bomb = gzip_bomb(1024, head=b"".join(lines()), filler=filler, members=True)
    stream = Counting(bomb)
    with pytest.raises(TrecFormatError) as caught:
        check_run(stream, "bomb.gz", max_bytes=4 << 30, every_line=True, max_ratio=100)
    assert str(caught.value).startswith(reason)
    assert stream.taken < len(bomb) // 10


def test_a_gzip_bomb_of_zeros_is_refused_in_its_first_megabyte():
    stream = Counting(gzip_bomb(1024, filler=b"\0", members=True))
    with pytest.raises(TrecFormatError, match=r"^bomb\.gz:1: binary file \(NUL byte\)$"):
        check_run(stream, "bomb.gz", max_bytes=4 << 30, every_line=True, max_ratio=100)
    assert stream.taken < 1 << 20


def test_a_run_compressed_as_runs_are_passes_the_ratio_limit():
    data = b"".join(lines(200_000))  # ~8 MB, past the floor the ratio applies from
    packed = gzip.compress(data, 9)
    assert 5 < len(data) / len(packed) < 100
    check = check_run(packed, "run.gz", max_bytes=LIMIT, every_line=True, max_ratio=100)
    assert len(check.need_ids) == 2000


@pytest.mark.parametrize(
    "long", [b" " * (2 << 20), b"#" + b" " * 20_000 + b"\n"], ids=["no-end", "comment"]
)
def test_a_long_blank_or_comment_line_is_refused_as_read_run_refuses_it(long):
    data = b"".join(lines(1500)) + long + b"".join(lines(10))
    with pytest.raises(TrecFormatError) as read:
        read_run(data, "run.txt")
    assert str(read.value) == "run.txt:1501: line longer than 10000 characters"
    assert refusal(data) == str(read.value)


def check_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("run-check")]


def test_the_first_bad_line_is_refused_when_a_later_piece_fails_first(monkeypatch):
    """Pieces are checked two at a time and taken back in file order: here the later
    piece's bad line is found first (the earlier piece's check waits for it), and the
    earlier one is still the line refused, as read_run refuses it."""
    early, late = b"n12 Q0 doc-x 34 abc tag\n", b"n40 Q0 doc-y 34 xyz tag\n"
    body = lines(120_000)  # ~3.6 MB: pieces of 1 MB
    body[39_999], body[79_999] = early, late
    data = b"".join(body)
    later_failed = threading.Event()
    real = every_line.read_run_table

    def read_run_table(body: bytes, name: str):
        if early in body:  # the earlier piece: parsed once the later one has failed
            assert later_failed.wait(timeout=60)
        try:
            return real(body, name)
        finally:
            if late in body:
                later_failed.set()

    monkeypatch.setattr(every_line, "checkers", lambda: 2)
    monkeypatch.setattr(every_line, "read_run_table", read_run_table)
    assert refusal(data) == "run.txt:40000: score 'abc' is not a number"
    assert later_failed.is_set()
    with pytest.raises(TrecFormatError, match=r"^run\.txt:40000: "):
        read_run(data, "run.txt")
    assert not check_threads()


@pytest.mark.parametrize("refused", ["bad-line", "bomb"])
def test_a_refused_run_leaves_no_check_thread_behind(refused):
    """The check's threads end with the check, whether a piece's line or the stream
    (a bomb's ratio, read while pieces are being checked) refused the file."""
    if refused == "bad-line":
        data = with_line(60_000, b"n12 Q0 doc-x 34 abc tag\n", count=150_000)
        assert refusal(data).startswith("run.txt:60000: ")
    else:
        bomb = gzip_bomb(1024, head=b"".join(lines(100_000)), members=True)
        with pytest.raises(TrecFormatError, match="expands more than 100 times"):
            check_run(bomb, "bomb.gz", max_bytes=4 << 30, every_line=True, max_ratio=100)
    assert not check_threads()
