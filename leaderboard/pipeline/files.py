"""Stored files: the content hash that names a run or a judgments file."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import BinaryIO


def sha256_of(chunks: Iterable[bytes]) -> tuple[str, int]:
    """SHA-256 (hex) and size in bytes of a file given as chunks."""
    digest = hashlib.sha256()
    size = 0
    for chunk in chunks:
        digest.update(chunk)
        size += len(chunk)
    return digest.hexdigest(), size


def chunks_of(stream: BinaryIO, size: int = 1 << 20) -> Iterator[bytes]:
    """A seekable stream read in chunks from its start, and rewound after."""
    stream.seek(0)
    while chunk := stream.read(size):
        yield chunk
    stream.seek(0)
