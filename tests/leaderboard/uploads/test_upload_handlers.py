"""leaderboard.uploads.handlers: a file hashed as it arrives, in 1 MB pieces."""

from __future__ import annotations

import hashlib
import os

from django.conf import settings

from leaderboard.uploads.handlers import CHUNK_SIZE, HashingUploadHandler, MemoryUploadHandler


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
    assert os.path.exists(path)
    handler.upload_interrupted()
    assert not os.path.exists(path)
    assert handler._hashing._shutdown


def test_the_settings_use_both_handlers_with_1_mb_pieces():
    assert settings.FILE_UPLOAD_HANDLERS == [
        "leaderboard.uploads.handlers.MemoryUploadHandler",
        "leaderboard.uploads.handlers.HashingUploadHandler",
    ]
    assert MemoryUploadHandler.chunk_size == HashingUploadHandler.chunk_size == 1 << 20
