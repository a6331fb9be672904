"""``interpolation._suffix_max``: the best value from each hit to the end of its need, as
a loop over each need's hits finds it (the interpolated precisions rest on it)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.measures.interpolation import _suffix_max


def each_need(values: np.ndarray, group: np.ndarray) -> list[float]:
    """The maximum over the rest of each element's group, one element at a time."""
    out = []
    for i, value in enumerate(values.tolist()):
        best, j = value, i + 1
        while j < len(values) and group[j] == group[i]:
            best = max(best, float(values[j]))
            j += 1
        out.append(best)
    return out


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(1, 40), min_size=0, max_size=25),
    st.data(),
)
def test_the_suffix_maximum_is_each_needs_own(lengths, data):
    """Groups of 1 to 40 hits (one group longer than every doubling step but the
    last, groups of one), values with repeats and signed zeros."""
    group = np.repeat(np.arange(len(lengths)) * 3, lengths)  # ascending, not consecutive
    values = np.array(
        data.draw(
            st.lists(
                st.sampled_from([0.0, -0.0, 0.25, 1 / 3, 0.5, 1.0]) | st.floats(0, 1),
                min_size=len(group),
                max_size=len(group),
            )
        ),
        dtype=np.float64,
    )
    before = values.copy()
    got = _suffix_max(values, group)
    assert got.tolist() == each_need(values, group)
    assert values.tolist() == before.tolist()  # the input is not written to


def test_a_long_need_among_short_ones():
    """1,000 rising hits of one need between needs of one hit: each takes its need's
    last, and the neighbours keep their own."""
    values = np.concatenate(([0.9], np.linspace(0.0, 1.0, 1000) * 0.5, [0.1]))
    group = np.array([0] + [1] * 1000 + [2])
    got = _suffix_max(values, group)
    assert got[0] == 0.9 and got[-1] == 0.1
    assert got[1:1001].tolist() == [0.5] * 1000
