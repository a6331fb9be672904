"""A TREC file's bytes: from a path, a binary stream or bytes, gunzipped when the file
starts with gzip's magic bytes, and never past a size limit.

A gzip file can expand a thousandfold (30 MB of blank lines fit in 30 KB), so the
decompressed size is what ``max_bytes`` limits, counted while decompressing: a reader
stops at the limit instead of finding out after the memory is gone. The whole gzip
stream is checked as it is read (every member's CRC and length, no truncation, nothing
but zero padding after the last member), with the standard library's ``zlib``.

``TrecFormatError``, the ``file:line: reason`` every reader raises, lives here, the
first module of the chain (``sources`` <- ``parsing`` <- ``readers``, ``topics``).
Imports numpy (to count lines) and the standard library.
"""

from __future__ import annotations

import io
import mmap
import os
import stat
import zlib
from typing import BinaryIO

import numpy as np

GZIP_MAGIC = b"\x1f\x8b"
PIECE = 1 << 20  # bytes decompressed (or read) at a time while streaming
# Below this much content, a gzip stream may expand by any ratio (a small file of
# repeated lines compresses far better than a run); past it, ``max_ratio`` holds.
RATIO_FLOOR = 8 << 20

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


class GzipError(Exception):
    """The gzip stream cannot be read to its end (the reason is for a person)."""


def _zlib_reason(exc: zlib.error) -> str:
    reason = str(exc).split(": ", 1)[-1]  # "Error -3 while decompressing data: ..."
    return {
        "incorrect data check": "CRC check failed",
        "incorrect length check": "length check failed",
    }.get(reason, reason)


class _Prefixed(io.RawIOBase):
    """A raw stream that replays already-read bytes before the rest of a stream."""

    def __init__(self, prefix: bytes, stream: BinaryIO) -> None:
        self._prefix = prefix
        self._stream = stream

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        """The stream's own bytes, without the copy ``RawIOBase.read`` makes."""
        if self._prefix or size is None or size < 0:
            return super().read(size)
        return self._stream.read(size)

    def readinto(self, buffer) -> int:  # type: ignore[override]
        if self._prefix:
            n = min(len(buffer), len(self._prefix))
            buffer[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        chunk = self._stream.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)


class _Gunzip:
    """Every member of a gzip stream, inflated by zlib a bounded piece at a time.

    zlib's gzip mode parses each member's header and checks its CRC-32 and length;
    here only what lies between members is decided, as gzip(1) and Python's ``gzip``
    do: another member, or zero padding to the end; anything else is garbage. (The
    ``gzip`` module's reader does the same but feeds zlib 8 KB at a time and is ~2x
    slower on a bomb, which is all the check of an upload does.)
    """

    def __init__(self, stream: BinaryIO, started: bytes) -> None:
        self._stream, self._input = stream, started
        self.taken = len(started)  # compressed bytes read from the stream so far
        self._inflater = None
        self._error: GzipError | None = None

    def _read_more(self) -> bytes:
        more = self._stream.read(1 << 16)
        self._input += more
        self.taken += len(more)
        return more

    def _next_member(self) -> bool:
        """Start the next member; False at the end (nothing but zero padding left)."""
        while True:
            self._input = self._input.lstrip(b"\0")
            if len(self._input) >= 2 or self._input[:1] not in (b"", GZIP_MAGIC[:1]):
                break
            if not self._read_more():
                if self._input:
                    break
                return False
        if self._input[:2] != GZIP_MAGIC:
            raise GzipError("data after the end of the gzip stream (trailing garbage)")
        self._inflater = zlib.decompressobj(31)  # 31: a gzip header and trailer
        return True

    def inflate(self, size: int) -> bytes:
        """Up to ``size`` decompressed bytes; b"" once the stream has ended well."""
        if self._error is not None:
            raise self._error
        while True:
            if self._inflater is None and not self._next_member():
                return b""
            before = self._inflater.copy()
            try:
                out = self._inflater.decompress(self._input, size)
            except zlib.error as exc:
                # zlib drops the output of a call that fails: inflate again what comes
                # before the bad byte, so the lines before it are delivered (and counted)
                self._error = GzipError(f"corrupt gzip data ({_zlib_reason(exc)})")
                out = _salvage(before, self._input, size)
                if not out:  # b"" would read as the end of the stream
                    raise self._error from None
                return out
            self._input = self._inflater.unconsumed_tail
            if self._inflater.eof:
                self._input, self._inflater = self._inflater.unused_data, None
            if out:
                return out
            if self._inflater is not None and not self._input and not self._read_more():
                raise GzipError("truncated gzip data (the file ends inside the gzip stream)")


def _salvage(state, data: bytes, size: int) -> bytes:
    """What ``state`` inflates from the longest prefix of ``data`` that is not corrupt
    (a binary search: a prefix holding the bad byte fails, and so does any longer one)."""
    good, bad = 0, len(data)
    while bad - good > 1:
        middle = (good + bad) // 2
        try:
            state.copy().decompress(data[:middle], size)
            good = middle
        except zlib.error:
            bad = middle
    return state.copy().decompress(data[:good], size)


class Decoded(io.RawIOBase):
    """A binary stream's content, gunzipped if it starts with gzip's magic bytes, as a
    raw stream that raises :class:`TrecFormatError` once more than ``max_bytes`` come
    out (None: no limit) or when the gzip data is corrupt, truncated or followed by
    garbage. Nothing is held beyond the piece a caller asks for.

    ``max_ratio`` (None: none): a gzip stream is refused as soon as its content, past
    :data:`RATIO_FLOOR`, is more than ``max_ratio`` times the compressed bytes read so
    far. zlib inflates a piece of at most 1 MB per call and the stream is read 64 KB at
    a time, so a bomb is stopped a few MB in, whatever it would expand to.

    ``gzipped`` says which it was; ``size`` and ``lines`` count the bytes and newlines
    delivered so far (the line a broken stream breaks in is ``lines + 1``).
    """

    def __init__(
        self,
        stream: BinaryIO,
        name: str,
        max_bytes: int | None = None,
        max_ratio: float | None = None,
    ) -> None:
        magic = stream.read(2)
        self.gzipped = magic == GZIP_MAGIC
        self._gunzip = _Gunzip(stream, magic) if self.gzipped else None
        self._plain = None if self.gzipped else _Prefixed(magic, stream)
        self.name_, self.max_bytes = name, max_bytes
        self.max_ratio = max_ratio if self.gzipped else None
        self.size = self.lines = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (all the rest for -1), without the copy RawIOBase makes."""
        if size is None or size < 0:
            return self.readall()
        if size == 0:
            return b""  # zlib would read max_length 0 as "no limit"
        if self._plain is not None:
            piece = self._plain.read(size)
        else:
            try:
                piece = self._gunzip.inflate(size)
            except GzipError as exc:
                raise TrecFormatError(self.name_, self.lines + 1, str(exc)) from None
        self.size += len(piece)
        if self.max_bytes is not None and self.size > self.max_bytes:
            raise too_large(self.name_, self.max_bytes, self.gzipped)
        if (
            self.max_ratio is not None
            and self.size > RATIO_FLOOR
            and self.size > self.max_ratio * self._gunzip.taken
        ):
            raise TrecFormatError(
                self.name_,
                None,
                f"expands more than {self.max_ratio:g} times its compressed size "
                f"({size_text(self.size)} from {self._gunzip.taken:,} bytes read; "
                "a run compresses 5-15 times)",
            )
        # numpy counts a megabyte of newlines ~6x faster than bytes.count
        self.lines += int(np.count_nonzero(np.frombuffer(piece, np.uint8) == 10))
        return piece

    def readinto(self, buffer) -> int:  # type: ignore[override]
        piece = self.read(len(buffer))
        buffer[: len(piece)] = piece
        return len(piece)

    def readall(self) -> bytes:
        out = io.BytesIO()
        while piece := self.read(PIECE):
            out.write(piece)
        return out.getvalue()


def _gunzip(stream: BinaryIO, name: str, max_bytes: int | None) -> bytes:
    """The whole decompressed content, read in pieces and refused past ``max_bytes``
    (written to a ``BytesIO``, whose ``getvalue()`` hands over its buffer without a
    copy, so the content is held once)."""
    return Decoded(stream, name, max_bytes).readall()


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
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                # a pipe, a FIFO, /dev/stdin, <(zcat run.gz): read as it comes, unsought
                return load(f, name, max_bytes)
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
