"""Generated malformed run files, each with the line a correct refusal must name.

``malformed(i)`` gives file number ``i`` of a deterministic mix: random bytes, truncated
lines, wrong column counts, bad scores (``nan``, ``1e999``, ``abc``...), repeated
documents, huge lines, bad UTF-8, NUL bytes, CRLF endings, empty files, comment-only
files, damaged gzip, and bad lines deep in the file (past the upload check's first 1,000
lines, which it reads by the same rules as the rest). Valid lines before the bad one come with blank
and comment lines mixed in, so a line number is only right if every line is counted.
"""

from __future__ import annotations

import gzip
import random
import re
from dataclasses import dataclass

COLUMNS = "expected 6 columns (need_id Q0 doc_id rank score tag), got {}"
NOT_A_NUMBER = ["abc", "1,5", "0x10", "1.2.3", "--1", "+-1", "1e", "e5", "\u0661\u0662", "1e5x"]
# the library benchmark's judged needs: a run answering none of them is refused at upload
NEEDS = ["atwood", "cs-foundations", "russian-novels", "stage-plays"]
NOT_FINITE = ["nan", "NaN", "inf", "-inf", "Infinity", "1e999", "-1e400", "+nan"]


@dataclass
class Malformed:
    name: str
    content: bytes
    line: int | None  # the line the refusal must name; None: any line (random bytes...)
    reason: str  # a regex the reason must match
    deep: bool = False  # past the upload check's first 1,000 lines

    @property
    def expected(self) -> re.Pattern:
        line = r"\d+" if self.line is None else str(self.line)
        return re.compile(rf"{re.escape(self.name)}:{line}: {self.reason}")


class _Writer:
    """Valid run lines (unique docs), with blank and comment lines mixed in."""

    def __init__(self, rng: random.Random, crlf: bool = False) -> None:
        self.rng, self.lines, self.docs = rng, [], []
        self.end = "\r\n" if crlf else "\n"

    def valid(self, count: int) -> None:
        for _ in range(count):
            roll = self.rng.random()
            if roll < 0.05:
                self.lines.append(self.rng.choice(["", "   ", "\t"]))
            elif roll < 0.08:
                self.lines.append("# a comment Q0 with six words here")
            else:
                need = NEEDS[len(self.docs) // 50 % len(NEEDS)]
                doc = f"doc-{len(self.docs)}"
                self.docs.append((need, doc, len(self.lines) + 1))
                rank = len(self.docs)
                self.lines.append(f"{need} Q0 {doc} {rank} {1000 - rank / 7:.4f} tag")

    def add(self, text: str) -> int:
        self.lines.append(text)
        return len(self.lines)

    def bytes(self, bad: bytes | None = None, at: int | None = None) -> bytes:
        encoded = [line.encode() for line in self.lines]
        if bad is not None:
            encoded[at - 1] = bad
        return self.end.encode().join(encoded) + self.end.encode()


def _prefix(rng: random.Random, crlf: bool = False, deep: bool = False) -> _Writer:
    writer = _Writer(rng, crlf)
    writer.valid(rng.randint(1300, 1400) if deep else rng.randint(0, 40))
    return writer


def _bad_line(rng: random.Random, writer: _Writer) -> tuple[str | bytes, str]:
    """One bad line and the reason it must be refused with."""
    kind = rng.choice(["columns", "truncated", "nan", "number", "duplicate"])
    need = f"q{rng.randint(0, 3)}"
    if kind == "columns" or (kind == "duplicate" and not writer.docs):
        count = rng.choice([1, 2, 3, 4, 5])
        fields = [need, "Q0", "doc-x", "1", "0.5"][:count]
        return " ".join(fields), re.escape(COLUMNS.format(count))
    if kind == "truncated":
        full = f"{need} Q0 doc-cut 7 0.25 tag"
        cut = rng.randint(1, full.rindex(" ") - 1)  # before the sixth field starts
        text = full[:cut].rstrip()
        return text, re.escape(COLUMNS.format(len(text.split())))
    if kind == "nan":
        value = rng.choice(NOT_FINITE)
        return f"{need} Q0 doc-nan 1 {value} tag", re.escape(f"score '{value}' is not finite")
    if kind == "number":
        value = rng.choice(NOT_A_NUMBER)
        return f"{need} Q0 doc-abc 1 {value} tag", re.escape(f"score '{value}' is not a number")
    need, doc, first = rng.choice(writer.docs)
    reason = f"doc_id '{doc}' twice for need '{need}' (first on line {first})"
    return f"{need} Q0 {doc} 99 0.001 tag", re.escape(reason)


def _with_bad_line(rng: random.Random, name: str, crlf=False, deep=False, zipped=False):
    writer = _prefix(rng, crlf, deep)
    text, reason = _bad_line(rng, writer)
    line = writer.add(text)
    writer.valid(rng.randint(0, 20))
    content = writer.bytes()
    return Malformed(name, gzip.compress(content) if zipped else content, line, reason, deep)


def _special(rng: random.Random, name: str, kind: str) -> Malformed:
    writer = _prefix(rng)
    line = writer.add("placeholder")
    writer.valid(rng.randint(0, 10))
    if kind == "huge":
        size = rng.randint(10_001, 60_000)
        bad = (b"q1 Q0 doc-long 1 0.5 " + b"x" * size) if rng.random() < 0.7 else b" " * size
        return Malformed(name, writer.bytes(bad, line), line, "line longer than 10000 characters")
    if kind == "utf8":
        bad = (
            b"q1 Q0 doc-\xff\xfe" + rng.choice([b"\xc3", b"\xed\xa0\x80", b"\x80"]) + b" 1 0.5 tag"
        )
        return Malformed(
            name, writer.bytes(bad, line), line, re.escape("binary file (not UTF-8 text)")
        )
    bad = b"q1 Q0 doc-\x00 1 0.5 tag"  # NUL
    return Malformed(name, writer.bytes(bad, line), line, re.escape("binary file (NUL byte)"))


def _empty(rng: random.Random, name: str) -> Malformed:
    kind = rng.choice(["nothing", "blank", "comments"])
    if kind == "nothing":  # refused by the run check, named as any bad file
        return Malformed(name, b"", 1, "empty file")
    if kind == "blank":
        return Malformed(name, b"\n \n\t\r\n" * rng.randint(1, 50), 1, "empty file")
    content = b"# no run here\n\n# still nothing\n" * rng.randint(1, 5)
    return Malformed(name, content, 1, re.escape("empty file (no content lines)"))


def _damaged_gzip(rng: random.Random, name: str) -> Malformed:
    writer = _prefix(rng)
    writer.valid(rng.randint(1200, 2000))  # more than the head: only the whole stream tells
    packed = gzip.compress(writer.bytes())
    kind = rng.choice(["truncated", "garbage", "crc"])
    if kind == "truncated":
        data = packed[: rng.randint(len(packed) // 2, len(packed) - 1)]
        reason = re.escape("truncated gzip data (the file ends inside the gzip stream)")
        return Malformed(name, data, None, reason)
    if kind == "garbage":
        junk = rng.randbytes(rng.randint(1, 64)).lstrip(b"\0") or b"!"
        reason = re.escape("data after the end of the gzip stream (trailing garbage)")
        return Malformed(name, packed + junk, len(writer.lines) + 1, reason)
    data = bytearray(packed)
    data[-8 + rng.randrange(4)] ^= 1 << rng.randrange(8)
    reason = re.escape("corrupt gzip data (CRC check failed)")
    return Malformed(name, bytes(data), len(writer.lines) + 1, reason)


def malformed(i: int) -> Malformed:
    rng = random.Random(i)
    kind = [
        "random",
        "bad-line",
        "crlf",
        "huge",
        "utf8",
        "nul",
        "empty",
        "gzip-bad-line",
        "gzip-damaged",
        "bad-line",
        "deep",
        "bad-line",
    ][i % 12]
    name = f"run-{i}.txt" + (".gz" if kind.startswith("gzip") else "")
    if kind == "random":
        data = rng.randbytes(rng.randint(1, 4000))
        return Malformed(name, data, None, ".+")
    if kind in ("bad-line", "crlf", "deep", "gzip-bad-line"):
        return _with_bad_line(
            rng, name, crlf=kind == "crlf", deep=kind == "deep", zipped=kind == "gzip-bad-line"
        )
    if kind in ("huge", "utf8", "nul"):
        return _special(rng, name, kind)
    if kind == "empty":
        return _empty(rng, name)
    return _damaged_gzip(rng, name)
