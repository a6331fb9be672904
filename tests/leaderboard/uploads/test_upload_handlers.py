"""leaderboard.uploads.handlers: a file hashed and checked as it arrives, in 1 MB pieces."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import threading

import pytest
from django.conf import settings

from evaluation.trec import RunCheck, TrecFormatError
from leaderboard.uploads.handlers import (
    CHUNK_SIZE,
    PIECES_AHEAD,
    HashingUploadHandler,
    MemoryUploadHandler,
    Pieces,
    check_upload,
)


def _handler(name: str = "run.txt") -> HashingUploadHandler:
    handler = HashingUploadHandler()
    handler.new_file("file", name, "text/plain", 0)
    return handler


def test_the_pieces_hash_to_the_file_s_sha256_in_order():
    pieces = [os.urandom(CHUNK_SIZE), os.urandom(17), b"", os.urandom(CHUNK_SIZE - 1)]
    handler = _handler()
    start = 0
    for piece in pieces:
        assert handler.receive_data_chunk(piece, start) is None  # the last handler
        start += len(piece)
    upload = handler.file_complete(start)
    content = b"".join(pieces)
    assert upload.digest == (hashlib.sha256(content).hexdigest(), len(content))
    assert upload.read() == content  # written as it came
    upload.close()


def test_an_interrupted_upload_leaves_no_file_and_no_thread():
    HashingUploadHandler().upload_interrupted()  # before any file began: nothing to do
    handler = _handler()
    handler.receive_data_chunk(b"q1 Q0 d1 1 2.5 bm25\n", 0)
    path = handler.file.temporary_file_path()
    parsed = handler._parsed.temporary_file_path()  # where the check writes its parse
    assert os.path.exists(path) and os.path.exists(parsed)
    handler.upload_interrupted()
    assert not os.path.exists(path) and not os.path.exists(parsed)
    assert handler._hashing._shutdown and handler._checking._shutdown


def test_the_settings_use_both_handlers_with_1_mb_pieces():
    assert settings.FILE_UPLOAD_HANDLERS == [
        "leaderboard.uploads.handlers.MemoryUploadHandler",
        "leaderboard.uploads.handlers.HashingUploadHandler",
    ]
    assert MemoryUploadHandler.chunk_size == HashingUploadHandler.chunk_size == 1 << 20


# --- the check of every line, on the pieces as they arrive ------------------------------


def _run(count: int = 60_000) -> bytes:
    return b"".join(
        b"n%d Q0 doc-%06d %d %d.5 tag\n" % (i // 1000, i, i % 1000 + 1, 2000 - i % 1000)
        for i in range(count)
    )  # ~2.4 MB: three pieces


def _received(data: bytes, name: str = "run.txt", piece: int = CHUNK_SIZE):
    handler = _handler(name)
    for start in range(0, len(data), piece):
        handler.receive_data_chunk(data[start : start + piece], start)
    return handler.file_complete(len(data))


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_the_pieces_are_checked_as_check_run_checks_the_file(gzipped):
    data = _run()
    data = gzip.compress(data) if gzipped else data
    upload = _received(data, piece=CHUNK_SIZE // 3 + 7)  # pieces cut mid-line
    assert isinstance(upload.check, RunCheck)
    assert upload.check.need_ids == {f"n{k}" for k in range(60)}
    assert upload.check.need_ids == check_upload(io.BytesIO(data), "run.txt").need_ids
    upload.close()


@pytest.mark.parametrize(
    "line, reason",
    [
        (b"n40 Q0 doc-x 34 abc tag\n", "score 'abc' is not a number"),
        (b"n40 Q0 doc-x 34\n", "expected 6 columns"),
    ],
)
def test_a_bad_line_is_refused_with_the_reader_s_message(line, reason):
    lines = _run().splitlines(keepends=True)
    lines[40_001] = line  # line 40,002, in the second piece
    data = b"".join(lines)
    upload = _received(data, name="my run.txt")
    assert isinstance(upload.check, TrecFormatError)
    expected = check_upload(io.BytesIO(data), "my run.txt")
    assert str(upload.check) == str(expected)
    assert str(upload.check).startswith("my run.txt:40002: ")
    assert reason in str(upload.check)
    upload.close()


def test_a_refusal_early_on_does_not_hold_up_the_rest_of_the_upload():
    # line 1 is refused at once; the 3 * PIECES_AHEAD pieces after it are dropped, not
    # queued for a check that has ended (receiving would wait on it forever)
    handler = _handler()
    handler.receive_data_chunk(b"q1 Q0 d1 1 abc bm25\n", 0)
    received = threading.Thread(
        target=lambda: [
            handler.receive_data_chunk(b"q1 Q0 d2 1 2.5 bm25\n" * 50_000, 1)
            for _ in range(3 * PIECES_AHEAD)
        ]
    )
    received.start()
    received.join(timeout=60)
    assert not received.is_alive()
    upload = handler.file_complete(0)
    assert str(upload.check) == "run.txt:1: score 'abc' is not a number"
    upload.close()


def test_a_gzip_bomb_is_refused_while_it_arrives():
    bomb = gzip.compress(b"\n" * (64 << 20), 9)  # 64 MB of newlines in ~64 KB
    upload = _received(bomb, name="bomb.gz")
    assert isinstance(upload.check, TrecFormatError)
    assert "expands more than" in str(upload.check)
    upload.close()


def test_pieces_read_in_any_size_give_the_bytes_fed_in_order():
    pieces = Pieces()
    fed = [b"abc", b"", b"defgh", b"ij"]
    for piece in fed:
        pieces.feed(piece)
    pieces.end()
    assert io.BufferedReader(pieces, 2).read() == b"".join(fed)
    abandoned = Pieces()
    abandoned.abandon()
    abandoned.feed(b"dropped")  # returns at once: nobody reads any more
    assert abandoned.read(10) == b""
