"""``columns.array_values``, ``to_numpy`` and ``arrow_array``: Arrow and numpy values
exchanged without pandas, the same values pyarrow's own conversions give."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.trec.columns import array_values, arrow_array, to_numpy

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


def test_none_of_them_imports_pandas():
    code = (
        "import sys, numpy as np, pyarrow as pa\n"
        "from evaluation.trec.columns import array_values, arrow_array, to_numpy\n"
        "valid = pa.py_buffer(np.array([0b101], np.uint8))\n"  # 1, null, 3
        "data = pa.py_buffer(np.array([1, 0, 3], np.int64))\n"
        "a = pa.Array.from_buffers(pa.int64(), 3, [valid, data], null_count=1)\n"
        "before = 'pandas' in sys.modules\n"
        "assert array_values(a, fill=-1).tolist() == [1, -1, 3]\n"
        "assert np.isnan(array_values(a)[1])\n"
        "assert to_numpy(pa.chunked_array([a, a]), np.int64, -1).tolist() == [1, -1, 3] * 2\n"
        "assert arrow_array(np.arange(3)).to_pylist() == [0, 1, 2]\n"
        "print(before, 'pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]
