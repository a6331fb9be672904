"""A TREC file's bytes: from a path, a binary stream or bytes, gunzipped when the file
starts with gzip's magic bytes, and never past a size limit.

A gzip file can expand a thousandfold (30 MB of blank lines fit in 30 KB), so the
decompressed size is what ``max_bytes`` limits, counted while decompressing: a reader
stops at the limit instead of finding out after the memory is gone. The whole gzip
stream is checked as it is read (every member's CRC and length, no truncation, nothing
but zero padding after the last member), by the standard library's ``gzip``.

``TrecFormatError``, the ``file:line: reason`` every reader raises, lives here, the
first module of the chain (``sources`` <- ``parsing`` <- ``readers``, ``topics``).
Imports nothing but the standard library.
"""

from __future__ import annotations

import gzip
import io
import mmap
import os
import zlib
from typing import BinaryIO

GZIP_MAGIC = b"\x1f\x8b"
PIECE = 1 << 20  # bytes decompressed (or read) at a time while streaming

Source = str | os.PathLike | BinaryIO | bytes


class TrecFormatError(ValueError):
    """A bad input file: ``str(err) == f"{path}:{line}: {reason}"``.

    ``line`` is 1-based (the first line of the file is line 1), or None when the
    reason is about the whole file (its size): then ``str(err) == f"{path}: {reason}"``.
    """

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        super().__init__(f"{path}: {reason}" if line is None else f"{path}:{line}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


def size_text(limit: int) -> str:
    """``2,000 MB`` for whole megabytes (MiB, as the settings count them), else bytes."""
    if limit >= 1 << 20 and limit % (1 << 20) == 0:
        return f"{limit >> 20:,} MB"
    return f"{limit:,} bytes"


def too_large(name: str, max_bytes: int, gzipped: bool) -> TrecFormatError:
    """``run.txt.gz: expands past 2,000 MB`` (or ``is larger than`` for a plain file)."""
    verb = "expands past" if gzipped else "is larger than"
    return TrecFormatError(name, None, f"{verb} {size_text(max_bytes)}")


def gzip_error(name: str, line: int, exc: Exception) -> TrecFormatError:
    """The reason a gzip stream could not be read to its end, at the line it broke in."""
    if isinstance(exc, EOFError):
        reason = "truncated gzip data (the file ends inside the gzip stream)"
    elif str(exc).startswith("Not a gzipped file"):
        # the file's first two bytes were gzip's magic, so this is a later "member"
        reason = "data after the end of the gzip stream (trailing garbage)"
    else:
        reason = f"corrupt gzip data ({exc})"
    return TrecFormatError(name, line, reason)


class _Prefixed(io.RawIOBase):
    """A raw stream that replays already-read bytes before the rest of a stream."""

    def __init__(self, prefix: bytes, stream: BinaryIO) -> None:
        self._prefix = prefix
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        if self._prefix:
            n = min(len(buffer), len(self._prefix))
            buffer[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        chunk = self._stream.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)


class Decoded(io.RawIOBase):
    """A binary stream's content, gunzipped if it starts with gzip's magic bytes, as a
    raw stream that raises :class:`TrecFormatError` once more than ``max_bytes`` come
    out (None: no limit) or when the gzip data is corrupt, truncated or followed by
    garbage. Nothing is buffered here beyond what a caller asks for.

    ``gzipped`` says which it was; ``size`` and ``lines`` count the bytes and newlines
    delivered so far (the line a corrupt stream broke in is ``lines + 1``).
    """

    def __init__(self, stream: BinaryIO, name: str, max_bytes: int | None = None) -> None:
        magic = stream.read(2)
        self.gzipped = magic == GZIP_MAGIC
        inner = _Prefixed(magic, stream)
        self._inner: BinaryIO = gzip.GzipFile(fileobj=inner) if self.gzipped else inner
        self.name_, self.max_bytes = name, max_bytes
        self.size = self.lines = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        try:
            # readinto1: one step of the gzip reader at a time, so the bytes before a
            # corrupt spot are delivered (and counted) before the error is raised
            n = self._inner.readinto1(buffer) if self.gzipped else self._inner.readinto(buffer)
        except (OSError, EOFError, zlib.error) as exc:
            raise gzip_error(self.name_, self.lines + 1, exc) from None
        self.size += n
        if self.max_bytes is not None and self.size > self.max_bytes:
            raise too_large(self.name_, self.max_bytes, self.gzipped)
        self.lines += memoryview(buffer)[:n].tobytes().count(b"\n")
        return n


def _gunzip(stream: BinaryIO, name: str, max_bytes: int | None) -> bytes:
    """The whole decompressed content, read in pieces and refused past ``max_bytes``.

    Written to a ``BytesIO``, whose ``getvalue()`` hands over its buffer without a copy,
    so the content is held once.
    """
    decoded = Decoded(stream, name, max_bytes)
    out = io.BytesIO()
    while piece := decoded.read(PIECE):
        out.write(piece)
    return out.getvalue()


def _plain(stream: BinaryIO, name: str, max_bytes: int | None) -> bytes:
    data = stream.read() if max_bytes is None else stream.read(max_bytes + 1)
    if max_bytes is not None and len(data) > max_bytes:
        raise too_large(name, max_bytes, gzipped=False)
    return data


def load(source: Source, name: str | None, max_bytes: int | None = None) -> tuple[bytes, str]:
    """Return the (decompressed) bytes of a path, binary stream or bytes and its display
    name; a file whose content is over ``max_bytes`` (None: no limit) is refused with
    :func:`too_large` before more than that is held."""
    if isinstance(source, bytes):
        name = name or "<bytes>"
        if source[:2] == GZIP_MAGIC:
            return _gunzip(io.BytesIO(source), name, max_bytes), name
        return _plain(io.BytesIO(source), name, max_bytes), name
    if isinstance(source, (str, os.PathLike)):
        name = name or os.fspath(source)
        with open(source, "rb") as f:
            if f.read(2) == GZIP_MAGIC:
                f.seek(0)
                return _gunzip(f, name, max_bytes), name
            size = os.fstat(f.fileno()).st_size
            if max_bytes is not None and size > max_bytes:
                raise too_large(name, max_bytes, gzipped=False)
            if size > 1 << 20:
                # a big plain file is mapped, not copied: pyarrow parses the pages
                # in place and the bytes never sit in memory twice
                return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ), name
            f.seek(0)
            return f.read(), name
    default = getattr(source, "name", None)
    name = name or (default if isinstance(default, str) and default else "<stream>")
    magic = source.read(2)
    if isinstance(magic, str):  # a text stream
        return load((magic + source.read()).encode(), name, max_bytes)
    stream = _rewound(source, magic)
    if magic == GZIP_MAGIC:
        return _gunzip(stream, name, max_bytes), name
    return _plain(stream, name, max_bytes), name


def _rewound(stream: BinaryIO, magic: bytes) -> BinaryIO:
    """The stream from before ``magic`` was read from it: sought back when it can be
    (no copy), else the bytes are replayed in front of the rest."""
    try:
        stream.seek(-len(magic), io.SEEK_CUR)
    except (AttributeError, OSError, ValueError):
        return io.BufferedReader(_Prefixed(magic, stream), PIECE)
    return stream
