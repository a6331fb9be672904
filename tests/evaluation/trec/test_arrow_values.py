"""``arrays.array_values``, ``to_numpy`` and ``arrow_array``: Arrow and numpy values
exchanged without pandas, the same values pyarrow's own conversions give."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.trec.arrays import array_values, arrow_array, to_numpy

TYPES = [pa.int32(), pa.int64(), pa.uint64(), pa.float64(), pa.int8()]


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(TYPES),
    st.lists(st.one_of(st.none(), st.integers(0, 100)), min_size=0, max_size=40),
    st.data(),
)
def test_values_of_a_slice_with_nulls_are_pyarrows(kind, items, data):
    """A slice (an offset into the buffers, into the validity bits too) with or without
    nulls: the values pyarrow's to_numpy gives (nulls as NaN), or ``fill`` for nulls."""
    whole = pa.array(items, kind)
    start = data.draw(st.integers(0, len(items)))
    part = whole.slice(start, data.draw(st.integers(0, len(items) - start)))
    expected = part.to_numpy(zero_copy_only=False)
    got = array_values(part)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)  # NaN where NaN
    filled = array_values(part, fill=7)
    assert filled.tolist() == [7 if item is None else item for item in part.to_pylist()]
    chunked = pa.chunked_array([part, whole], kind)
    np.testing.assert_array_equal(to_numpy(chunked, np.float64), np.concatenate(
        [expected, whole.to_numpy(zero_copy_only=False)]).astype(np.float64))  # fmt: skip


def test_arrow_array_shares_the_numpy_memory_and_types():
    values = np.arange(5, dtype=np.int64) * 3
    array = arrow_array(values)
    assert array.type == pa.int64() and array.to_pylist() == [0, 3, 6, 9, 12]
    assert arrow_array(values[::2]).to_pylist() == [0, 6, 12]  # a strided view is copied
    assert arrow_array(np.array([1.5], np.float32)).type == pa.float32()
