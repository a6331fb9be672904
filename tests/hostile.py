"""Hostile files for the tests: gzip bombs built without ever holding what they expand to.

(The malformed-run generators of the fault suite live in tests/faults/malformed.py.)
"""

from __future__ import annotations

import zlib

GZIP = 31  # zlib's wbits for a gzip header and trailer


def gzip_bomb(
    megabytes: int, head: bytes = b"", filler: bytes = b"\n", members: bool = False
) -> bytes:
    """``head`` then ``megabytes`` MB of ``filler`` (blank lines by default), gzipped at
    level 9 one megabyte at a time: ~1 KB per MB, and never more than 1 MB in memory.

    ``members``: one gzip member per megabyte, all the same (valid gzip, as ``cat
    a.gz b.gz`` makes), built in no time however large: for bombs of gigabytes.
    """
    piece = (filler * ((1 << 20) // len(filler) + 1))[: 1 << 20]
    if members:
        one = zlib.compressobj(9, zlib.DEFLATED, GZIP)
        member = one.compress(piece) + one.flush()
        return (gzip_bomb(0, head) if head else b"") + member * megabytes
    packer = zlib.compressobj(9, zlib.DEFLATED, GZIP)
    out = [packer.compress(head)]
    out.extend(packer.compress(piece) for _ in range(megabytes))
    out.append(packer.flush())
    return b"".join(out)
