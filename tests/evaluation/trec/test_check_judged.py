"""The upload check with the judged needs (``check_run(..., judged=...)``): it answers the
same question as collecting every need id (does the run answer a judged need?), refuses
the same files, and reads a plain file only until a line answers one; a gzip stream is
still read to its end (its size and CRC)."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pytest

from evaluation.trec import TrecFormatError, check_run

JUDGED = [f"n{i}" for i in range(0, 60, 3)]  # n0, n3, ... n57


def run_of(needs: list[int], per_need: int = 1000) -> bytes:
    """Lines of need n<k> for each k, ``per_need`` lines each (over a megabyte for 60)."""
    return b"".join(
        b"n%d Q0 doc-%d-%07d %d %d.5 big\n" % (k, j, i, i + 1, 5000 - i)
        for j, k in enumerate(needs)
        for i in range(per_need)
    )


class Counting(io.BytesIO):
    """A seekable stream that counts the bytes read from it."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.taken = 0

    def read(self, size: int | None = -1) -> bytes:
        piece = super().read(size)
        self.taken += len(piece)
        return piece

    def readinto(self, buffer) -> int:
        n = super().readinto(buffer)
        self.taken += n
        return n


class Unseekable(io.RawIOBase):
    """A stream that cannot say how long it is."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        return self._data.readinto(buffer)


def test_a_plain_run_answering_in_its_head_is_not_read_further():
    data = run_of(list(range(60)), per_need=3000)
    stream = Counting(data)
    check = check_run(stream, "run.txt", max_bytes=1 << 30, judged=JUDGED)
    assert check.answers is True and check.need_ids is None
    assert stream.taken <= (1 << 20) + 2 < 5 << 20 < len(data)  # one piece of 6 MB


def test_a_judged_need_past_the_head_is_found_and_the_reading_stops_there():
    before, after = run_of([1, 2, 4, 5, 7, 8], 20_000), run_of([10, 11, 13, 14], 20_000)
    data = before + run_of([9]) + after  # n9 is judged, 4 MB in
    stream = Counting(data)
    check = check_run(stream, "run.txt", max_bytes=1 << 30, judged=JUDGED)
    assert check.answers is True and check.need_ids is None
    assert len(before) < stream.taken <= len(before) + (2 << 20) < len(data)
    unjudged = run_of([1, 2, 4, 5, 7, 8, 10, 11, 13, 14])
    check = check_run(Counting(unjudged), "run.txt", max_bytes=1 << 30, judged=JUDGED)
    assert check.answers is False
    assert check.need_ids == {f"n{k}" for k in (1, 2, 4, 5, 7, 8, 10, 11, 13, 14)}


def test_the_last_line_alone_answering_counts():
    data = run_of([1, 2, 4]) + b"n57 Q0 doc-x 1 1.5 big"  # no newline at the end
    for source in (data, Unseekable(data), gzip.compress(data)):
        check = check_run(source, "run.txt", max_bytes=1 << 30, judged=JUDGED)
        assert check.answers is True


@pytest.mark.parametrize("size", [20, 60, 600])
def test_answers_agrees_with_every_need_id_collected(size):
    """On generated runs (sorted or not, gzipped or not, seekable or not), ``answers``
    is exactly whether the need ids collected without ``judged`` meet the judged ones."""
    rng = np.random.default_rng(size)
    for _ in range(6):
        needs = rng.integers(0, 200, size).tolist()
        data = run_of(needs, per_need=int(rng.integers(1, 100)))
        if rng.random() < 0.5:
            lines = data.splitlines(True)
            data = b"".join(lines[i] for i in rng.permutation(len(lines)))
        judged = [f"n{k}" for k in rng.integers(0, 400, int(rng.integers(1, 5)))]
        every = check_run(data, "run.txt", max_bytes=1 << 30).need_ids
        expected = not every.isdisjoint(judged)
        for source in (data, gzip.compress(data, 1), Unseekable(data)):
            check = check_run(source, "run.txt", max_bytes=1 << 30, judged=judged)
            assert check.answers is expected
            assert check.need_ids == (None if expected else every)


def test_a_gzip_stream_is_still_read_to_its_end():
    data = gzip.compress(run_of(list(range(60))))
    truncated = data[: len(data) - 1000]
    with pytest.raises(TrecFormatError, match=r"truncated gzip data"):
        check_run(truncated, "run.gz", max_bytes=1 << 30, judged=JUDGED)
    with pytest.raises(TrecFormatError, match=r"^run\.gz: expands past 1 MB$"):
        check_run(data, "run.gz", max_bytes=1 << 20, judged=JUDGED)
    assert check_run(data, "run.gz", max_bytes=1 << 30, judged=JUDGED).answers is True


def test_a_plain_file_over_the_limit_is_still_refused():
    data = run_of(list(range(60)))
    for source in (data, Unseekable(data)):
        with pytest.raises(TrecFormatError, match=r"^run\.txt: is larger than 1 MB$"):
            check_run(source, "run.txt", max_bytes=1 << 20, judged=JUDGED)


def test_bad_lines_in_the_head_are_refused_whatever_the_judged_needs():
    data = b"n0 Q0 d1 1 2.5 t\nn0 Q0 d2 2 abc t\n" + run_of([3])
    with pytest.raises(TrecFormatError, match=r"^run\.txt:2: score 'abc' is not a number$"):
        check_run(data, "run.txt", max_bytes=1 << 30, judged=JUDGED)


def test_without_judged_or_the_rest_answers_is_unknown():
    data = run_of(list(range(60)))
    assert check_run(data, "run.txt", max_bytes=1 << 30).answers is None
    head_only = check_run(data, "run.txt", judged=JUDGED)  # no max_bytes: the head only
    assert head_only.answers is True and head_only.need_ids is None
    later = run_of([1]) + run_of([3])
    assert check_run(later, "run.txt", judged=JUDGED).answers is None  # n3 is past the head
    small = run_of([1, 2], per_need=3)  # read to its end: known
    assert check_run(small, "run.txt", judged=JUDGED).answers is False
