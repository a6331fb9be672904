"""Stored files: the content hash that names a run or a judgments file, and the size a
file may expand to (``MAX_UNCOMPRESSED_MB``), which every read of an uploaded file passes
to the engine's readers."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from django.conf import settings


def max_uncompressed_bytes() -> int:
    """The engine readers' ``max_bytes``: what a file may expand to once gunzipped."""
    return settings.MAX_UNCOMPRESSED_MB << 20


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
