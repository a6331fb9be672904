"""Upload handlers: a file is hashed and checked while it arrives, in pieces of 1 MB.

Django's own handlers read a multipart body 64 KB at a time (the smallest of their chunk
sizes), and the upload form then read the spooled file again to hash and check it. Here
each piece, as it is written to the temporary file, is also hashed on one thread and
checked on another (``check_run``, every line, as the form would check it, two pieces
at a time on a machine with two cores): hashlib, Arrow's parse and the write let the GIL
go, so the check ends soon after the last byte arrives instead of starting then, and
the file is read from the socket only. A file
that is no run (a qrels or needs file posted to another form) fails the check on its
first lines, and the rest of it is then not parsed.
"""

from __future__ import annotations

import hashlib
import io
import os
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import BinaryIO

from django.conf import settings
from django.core.files.uploadedfile import TemporaryUploadedFile
from django.core.files.uploadhandler import (
    MemoryFileUploadHandler,
    TemporaryFileUploadHandler,
)

from evaluation.trec import RunCheck, TrecFormatError, check_run
from leaderboard.pipeline.files import max_uncompressed_bytes

CHUNK_SIZE = 1 << 20
# Pieces received but not yet checked: past this many the receiving waits for the check
# (the memory an upload holds stays a few MB, whatever the file).
PIECES_AHEAD = 8


def check_upload(
    stream: BinaryIO, name: str, parsed: TemporaryUploadedFile | None = None
) -> RunCheck | TrecFormatError:
    """The check of an uploaded run, streamed to its end (1 MB at a time, a few MB of
    lines kept): every line by the engine's own rules, a gzip bomb refused once it
    expands past the size or the ratio limit, a broken gzip stream: what the worker
    would refuse is refused at upload. Returns the refusal rather than raising it, so
    that a check run on a thread hands it over as it hands over a result.

    ``parsed`` (:func:`parsed_file`): the parsed lines are written there, for scoring to
    read instead of parsing the file again (it is stored with the run)."""
    try:
        return check_run(
            stream,
            name=name,
            max_bytes=max_uncompressed_bytes(),
            every_line=True,
            max_ratio=settings.MAX_GZIP_RATIO,
            parsed=parsed.file if parsed is not None else None,
        )
    except TrecFormatError as error:
        return error


def parsed_file() -> TemporaryUploadedFile:
    """A temporary file for a run's parsed lines (in ``FILE_UPLOAD_TEMP_DIR``; stored by
    moving it, on local disk, and deleted when closed)."""
    return TemporaryUploadedFile("parsed.arrow", "application/vnd.apache.arrow.stream", 0, None)


def keep_parsed(upload, parsed: TemporaryUploadedFile, check: RunCheck | TrecFormatError) -> None:
    """Hand ``parsed`` over with ``upload`` (``upload.parsed``) once the check passed;
    a refused file's is deleted now."""
    if isinstance(check, TrecFormatError):
        parsed.close()
        return
    parsed.file.flush()
    parsed.size = parsed.file.tell()
    parsed.seek(0)
    upload.parsed = parsed


class MemoryUploadHandler(MemoryFileUploadHandler):
    """Django's in-memory handler (files up to FILE_UPLOAD_MAX_MEMORY_SIZE), reading
    pieces as large as the hashing handler's: the parser reads the smallest size any
    handler asks for."""

    chunk_size = CHUNK_SIZE


class Pieces(io.RawIOBase):
    """A raw stream of the pieces one thread ``feed``\\s while another reads them (until
    ``end``). Once the reader is done (``abandon``: it refused the file early, say), the
    pieces fed after are dropped, so the feeder never waits on a reader that is gone."""

    def __init__(self) -> None:
        self._pieces: deque[memoryview] = deque()
        self._ended = self._abandoned = False
        self._changed = threading.Condition()

    def readable(self) -> bool:
        return True

    def feed(self, piece: bytes) -> None:
        with self._changed:
            self._changed.wait_for(lambda: len(self._pieces) < PIECES_AHEAD or self._abandoned)
            if not self._abandoned and piece:
                self._pieces.append(memoryview(piece))
                self._changed.notify_all()

    def end(self) -> None:
        with self._changed:
            self._ended = True
            self._changed.notify_all()

    def abandon(self) -> None:
        with self._changed:
            self._abandoned = True
            self._pieces.clear()
            self._changed.notify_all()

    def read(self, size: int = -1) -> bytes:
        """The next piece itself when it fits in ``size`` (no copy), else its first bytes."""
        if size is None or size < 0:
            return super().read(size)
        with self._changed:
            self._changed.wait_for(lambda: self._pieces or self._ended or self._abandoned)
            if not self._pieces:
                return b""
            piece = self._pieces[0]
            if len(piece) <= size:
                self._pieces.popleft()
                self._changed.notify_all()
                whole = isinstance(piece.obj, bytes) and len(piece) == len(piece.obj)
                return piece.obj if whole else bytes(piece)
            self._pieces[0] = piece[size:]
            return bytes(piece[:size])

    def readinto(self, buffer) -> int:  # type: ignore[override]
        piece = self.read(len(buffer))
        buffer[: len(piece)] = piece
        return len(piece)


class HashingUploadHandler(TemporaryFileUploadHandler):
    """Django's temporary-file handler that also hashes and checks the file as it
    arrives: the uploaded file carries ``digest``, its ``(SHA-256 hex, size)``, as
    :func:`leaderboard.pipeline.files.sha256_of` gives it, and ``check``, what
    ``check_run(..., every_line=True)`` returned (a :class:`RunCheck`, with every need
    id) or raised (a :class:`TrecFormatError`), with the limits the form passes it."""

    chunk_size = CHUNK_SIZE

    def new_file(self, *args, **kwargs) -> None:
        super().new_file(*args, **kwargs)
        self._digest = hashlib.sha256()
        self._size = 0
        self._hashing = ThreadPoolExecutor(1, thread_name_prefix="upload-hash")
        self._pending: Future | None = None
        self._pieces = Pieces()
        self._parsed = parsed_file()
        self._checking = ThreadPoolExecutor(1, thread_name_prefix="upload-check")
        # the name the form gives the file (UploadedFile.name: the base name, cut short)
        name = os.path.basename(self.file.name or "run")
        self._check = self._checking.submit(self._check_pieces, name)

    def _check_pieces(self, name: str) -> RunCheck | TrecFormatError:
        try:
            return check_upload(self._pieces, name, self._parsed)
        finally:
            self._pieces.abandon()  # whatever is still sent is not waited on

    def receive_data_chunk(self, raw_data: bytes, start: int) -> None:
        if self._pending is not None:
            self._pending.result()  # one piece in flight: the order is kept, memory bounded
        self._pending = self._hashing.submit(self._digest.update, raw_data)
        self._pieces.feed(raw_data)
        self._size += len(raw_data)
        return super().receive_data_chunk(raw_data, start)

    def file_complete(self, file_size: int):
        self._finish()
        upload = super().file_complete(file_size)
        upload.digest = (self._digest.hexdigest(), self._size)
        upload.check = self._check.result()
        keep_parsed(upload, self._parsed, upload.check)
        return upload

    def upload_interrupted(self) -> None:
        if hasattr(self, "_pieces"):
            self._pieces.abandon()  # the check sees the end now, not the pieces queued
        self._finish()
        if hasattr(self, "_parsed"):
            self._parsed.close()
        super().upload_interrupted()

    def _finish(self) -> None:
        if not hasattr(self, "_hashing"):  # interrupted before any file began
            return
        self._pieces.end()
        pending, self._pending = self._pending, None
        try:
            if pending is not None:
                pending.result()
        finally:
            self._hashing.shutdown(wait=True)
            self._checking.shutdown(wait=True)
