"""Hostile files at the engine: gzip bombs stop at ``max_bytes``, broken gzip streams and
out-of-range numbers are named by file and line, and checking a file holds little."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
import textwrap
import time
import tracemalloc
import zlib

import pytest

from evaluation.trec import TrecFormatError, check_run_head, read_needs, read_qrels, read_run
from evaluation.trec.readers import HEAD_LINES
from tests import ROOT
from tests.hostile import gzip_bomb

RUN = b"".join(b"q%d Q0 d%d %d %d.5 tag\n" % (i // 100, i, i % 100, 1000 - i) for i in range(1200))
QRELS = b"q1 0 d1 1\nq1 0 d2 0\n"
NEEDS = b"q1\tfirst need\nq2\tsecond need\n"
BLANK_BOMB = gzip_bomb(30)  # ~30 KB expanding to 30 MB of blank lines


def test_the_bomb_is_what_the_issue_measured():
    assert 25_000 < len(BLANK_BOMB) < 35_000


@pytest.mark.parametrize(
    "reader, content",
    [(read_run, RUN), (read_qrels, QRELS), (read_needs, NEEDS)],
    ids=["run", "qrels", "needs"],
)
def test_readers_refuse_content_past_max_bytes(tmp_path, reader, content):
    packed = gzip.compress(content)
    path = tmp_path / "file.gz"
    path.write_bytes(packed)
    for source in (path, packed, io.BytesIO(packed)):
        with pytest.raises(TrecFormatError) as caught:
            reader(source, name="file.gz", max_bytes=len(content) - 1)
        assert str(caught.value) == f"file.gz: expands past {len(content) - 1:,} bytes"
        assert caught.value.line is None
        reader(
            source if not isinstance(source, io.BytesIO) else io.BytesIO(packed),
            name="file.gz",
            max_bytes=len(content),
        )  # exactly at the limit: fine
    plain = tmp_path / "file.txt"
    plain.write_bytes(content)
    for source in (plain, content, io.BytesIO(content)):
        with pytest.raises(TrecFormatError, match=r"^file\.txt: is larger than 10 bytes$"):
            reader(source, name="file.txt", max_bytes=10)


def test_the_limit_is_written_in_megabytes_when_it_is_whole_ones():
    with pytest.raises(TrecFormatError) as caught:
        read_run(BLANK_BOMB, name="run.txt.gz", max_bytes=2 << 20)
    assert str(caught.value) == "run.txt.gz: expands past 2 MB"


def test_a_bomb_is_refused_while_decompressing_not_after(tmp_path):
    """30 MB of blank lines against a 1 MB limit: decompression stops near the limit (the
    memory held says so; the time bound only catches a hang)."""
    path = tmp_path / "bomb.gz"
    path.write_bytes(BLANK_BOMB)
    tracemalloc.start()
    try:
        started = time.perf_counter()
        with pytest.raises(TrecFormatError, match="expands past 1 MB"):
            read_run(path, name="bomb.gz", max_bytes=1 << 20)
        with pytest.raises(TrecFormatError, match="expands past 1 MB"):
            check_run_head(path, name="bomb.gz", max_bytes=1 << 20)
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"{peak / 1048576:.1f} MB held"
    assert elapsed < 20  # a guard against a hang, not a measurement


def test_the_whole_file_is_checked_only_with_max_bytes():
    """Past the head, only ``max_bytes`` makes check_run_head read on (the form's use)."""
    tail = gzip_bomb(20, head=RUN)
    assert check_run_head(tail, name="run.gz") is None  # the head is fine
    with pytest.raises(TrecFormatError, match=r"^run\.gz: expands past 10 MB$"):
        check_run_head(tail, name="run.gz", max_bytes=10 << 20)
    assert check_run_head(tail, name="run.gz", max_bytes=30 << 20) is None


def _broken() -> dict[str, tuple[bytes, str]]:
    packed = gzip.compress(RUN)
    half = len(packed) // 2
    crc = packed[:-8] + bytes([packed[-8] ^ 1]) + packed[-7:]
    return {
        "trailing garbage": (
            packed + b"<html>oops</html>",
            "run.gz:1201: data after the end of the gzip stream (trailing garbage)",
        ),
        "truncated": (packed[:half], "truncated gzip data (the file ends inside the gzip stream)"),
        "bad crc": (crc, "run.gz:1201: corrupt gzip data (CRC check failed"),
    }


@pytest.mark.parametrize("case", ["trailing garbage", "truncated", "bad crc"])
def test_broken_gzip_streams_are_refused_by_the_check_and_the_reader(case):
    data, message = _broken()[case]
    for check in (
        lambda: check_run_head(io.BytesIO(data), name="run.gz", max_bytes=1 << 30),
        lambda: read_run(data, name="run.gz"),
    ):
        with pytest.raises(TrecFormatError) as caught:
            check()
        assert message in str(caught.value)
        assert str(caught.value).startswith("run.gz:")
        assert caught.value.line >= 1


def test_the_check_names_the_line_a_truncated_stream_breaks_in():
    data = gzip.compress(RUN)
    with pytest.raises(TrecFormatError) as caught:
        check_run_head(io.BytesIO(data[: len(data) // 2]), name="run.gz", max_bytes=1 << 30)
    full = read_run(data).frame  # the lines before the break were all delivered
    assert 1 < caught.value.line <= len(full)


def test_gzip_members_and_zero_padding_stay_valid():
    """Concatenated gzip members (``cat a.gz b.gz``) and zero padding are valid gzip."""
    first, second = RUN[: RUN.index(b"q1 ")], RUN[RUN.index(b"q1 ") :]
    joined = gzip.compress(first) + gzip.compress(second)
    padded = gzip.compress(RUN) + b"\0" * 512
    for data in (joined, padded):
        assert check_run_head(io.BytesIO(data), name="r.gz", max_bytes=1 << 30) is None
        assert len(read_run(data).frame) == 1200


def test_a_huge_line_is_refused_without_holding_it():
    """One 100 MB line with no newline (100 KB gzipped): named at line 2, never held."""
    data = gzip_bomb(100, head=b"q1 Q0 d1 1 1.0 t\n", filler=b"x")
    tracemalloc.start()
    try:
        with pytest.raises(TrecFormatError) as caught:
            check_run_head(io.BytesIO(data), name="long.gz", max_bytes=1 << 30)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(caught.value) == "long.gz:2: line longer than 10000 characters"
    assert peak < 8 << 20, f"{peak / 1048576:.1f} MB held"


def test_an_earlier_bad_line_is_named_before_a_later_long_one():
    data = b"q1 Q0 d1 1 1.0 t\nq1 Q0 d2 1 abc t\n" + b"y" * 20_000 + b"\n"
    with pytest.raises(TrecFormatError, match=r"^r:2: score 'abc' is not a number$"):
        check_run_head(data, name="r")


def test_blank_lines_in_the_head_keep_their_line_numbers():
    data = b"\n" * 5000 + b"   \t\n" * 5000 + b"q1 Q0 d1 1 1.0 t\nq1 Q0 d1 2 0.5 t\n"
    with pytest.raises(TrecFormatError, match=r"^r:10002: doc_id 'd1' twice .*line 10001"):
        check_run_head(gzip.compress(data), name="r", max_bytes=1 << 20)
    # a file that only opens with more blank lines than the head keeps is not "empty"
    many = b"\n" * (HEAD_LINES + 10) + b"q1 Q0 d1 1 1.0 t\n"
    assert check_run_head(gzip.compress(many), name="r", max_bytes=1 << 30) is None
    with pytest.raises(TrecFormatError, match=r"^r:1: empty file$"):
        check_run_head(gzip.compress(b"\n" * (HEAD_LINES + 10)), name="r", max_bytes=1 << 30)


def test_relevance_out_of_the_int64_range_is_named_by_line():
    """pyarrow cannot read these as int64; the explainer must still name the line."""
    for value in ("99999999999999999999", "9223372036854775808", "-9223372036854775809"):
        data = f"q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 {value}\n".encode()
        with pytest.raises(TrecFormatError) as caught:
            read_qrels(data, name="qrels.txt")
        assert str(caught.value) == (
            f"qrels.txt:3: relevance '{value}' is out of range (a 64-bit integer)"
        )
    edges = b"q1 0 d1 9223372036854775807\nq1 0 d2 -9223372036854775808\nq1 0 d3 +007\n"
    assert read_qrels(edges).relevance.tolist() == [2**63 - 1, -(2**63), 7]
    huge = b"q1 0 d1 1\nq1 0 d2 " + b"9" * 5000 + b"\n"  # past int()'s 4,300-digit limit
    with pytest.raises(TrecFormatError, match=r"^qrels\.txt:2: relevance '9+' is out of range"):
        read_qrels(huge, name="qrels.txt")


def test_digits_of_other_scripts_are_not_numbers():
    """Python's float() and int() read Arabic-Indic digits; pyarrow does not."""
    with pytest.raises(TrecFormatError, match=r"^r:2: score '\u0661' is not a number$"):
        read_run("q1 Q0 d1 1 1 t\nq1 Q0 d2 2 \u0661 t\n".encode(), name="r")
    with pytest.raises(TrecFormatError, match=r"^q:1: relevance '\u0661' is not an integer$"):
        read_qrels("q1 0 d1 \u0661\n".encode(), name="q")


PEAK_SCRIPT = textwrap.dedent(
    """
    import io, json, resource, time
    from evaluation.trec import TrecFormatError, check_run_head, read_run
    from tests.hostile import gzip_bomb
    bomb = gzip_bomb(30)
    tail = gzip_bomb(300, head=b"q1 Q0 d1 1 1.0 t\\n")
    rss = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out = {}
    for label, data, check in [
        ("head", bomb, lambda d: check_run_head(io.BytesIO(d), "bomb.gz", max_bytes=10 << 20)),
        ("tail", tail, lambda d: check_run_head(io.BytesIO(d), "tail.gz", max_bytes=200 << 20)),
        ("read", tail, lambda d: read_run(d, "tail.gz", max_bytes=100 << 20)),
    ]:
        before, started = rss(), time.perf_counter()
        try:
            check(data)
            error = None
        except TrecFormatError as exc:
            error = str(exc)
        out[label] = [error, rss() - before, time.perf_counter() - started]
    print(json.dumps(out))
    """
)


def test_peak_memory_of_checking_and_reading_bombs_in_a_fresh_process():
    """Real RSS, in a process of its own: the check holds next to nothing whatever the
    limit (200 MB of blank lines streamed through); the reader holds at most the limit."""
    result = subprocess.run(
        [sys.executable, "-c", PEAK_SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    head, tail, read = figures["head"], figures["tail"], figures["read"]
    assert head[0] == "bomb.gz: expands past 10 MB"
    assert tail[0] == "tail.gz: expands past 200 MB"
    assert read[0] == "tail.gz: expands past 100 MB"
    assert head[1] < 40 << 20 and tail[1] < 40 << 20, figures
    assert read[1] < 160 << 20, figures  # the 100 MB allowed, no more
    # The seconds only guard against a hang (the figures are bench/bench_gzip.py's).
    assert head[2] < 60 and tail[2] < 60 and read[2] < 60, figures


def test_gzip_streams_are_accepted_exactly_when_pythons_gzip_accepts_them():
    """The zlib-driven reader against the standard library's ``gzip.decompress`` (an
    independent reading of the format) on 400 damaged copies of a two-member file:
    flipped bytes, cuts, appended bytes. Same content when both accept; a
    ``TrecFormatError`` naming the file whenever gzip refuses. (Byte 3, the header
    flags, is left alone: zlib refuses reserved flags, as gzip(1) does, where Python's
    reader ignores them.)"""
    import random

    from evaluation.trec.sources import load

    rng = random.Random(11)
    split = RUN.index(b"\n", 20_000) + 1  # two members, each whole lines
    packed = gzip.compress(RUN[:split]) + b"\0" * 7 + gzip.compress(RUN[split:])
    for _ in range(400):
        data = bytearray(packed)
        kind = rng.choice(["flip", "cut", "append"])
        if kind == "flip":
            at = rng.choice([i for i in range(len(data)) if i != 3])
            data[at] ^= 1 << rng.randrange(8)
        elif kind == "cut":
            del data[rng.randrange(2, len(data)) :]
        else:
            data += bytes(rng.choice([0, 0x1F, 0x8B, rng.randrange(256)]) for _ in range(3))
        data = bytes(data)
        try:
            expected = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            expected = None
        if expected is None:
            with pytest.raises(TrecFormatError, match=r"^damaged\.gz:\d+: "):
                load(data, "damaged.gz")
            with pytest.raises(TrecFormatError, match=r"^damaged\.gz:\d+: "):
                check_run_head(data, "damaged.gz", max_bytes=1 << 30)
        else:  # a flip in a header (time, OS) or a cut between members
            assert load(data, "damaged.gz")[0] == expected
            assert expected in (RUN, RUN[:split])
            assert check_run_head(data, "damaged.gz", max_bytes=1 << 30) is None
