"""``gains._group_cumsum``: running sums inside groups, the same doubles as trec_eval's
loop (one addition per element, in order), on every path it takes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.measures import gains


def sequential(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    """trec_eval's loop: a running total restarted at each new group."""
    out = np.empty(len(values))
    total = 0.0
    for i, value in enumerate(values.tolist()):
        total = value if i == 0 or group[i] != group[i - 1] else total + value
        out[i] = total
    return out


doubles = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(1, 12), min_size=1, max_size=30),
    st.booleans(),
    st.data(),
)
def test_same_doubles_as_the_loop(lengths, equal, data):
    if equal:  # every group as long: the one 2-D cumsum
        lengths = [lengths[0]] * len(lengths)
    group = np.repeat(np.arange(len(lengths)), lengths)
    values = np.array(data.draw(st.lists(doubles, min_size=len(group), max_size=len(group))))
    values = values / 3.0  # fractions that round: an order change would show
    got = gains._group_cumsum(values, group)
    assert got.tobytes() == sequential(values, group).tobytes()


def test_equal_groups_take_one_cumsum(monkeypatch):
    """7,000 needs x 1,000 documents is the usual shape: no per-position loop there."""

    def no_loop(group):
        raise AssertionError("the per-position loop ran")

    monkeypatch.setattr(gains, "within_group_position", no_loop)
    rng = np.random.default_rng(3)
    group = np.repeat(np.arange(50), 20)
    values = rng.random(len(group)) / 7
    got = gains._group_cumsum(values, group)
    assert got.tobytes() == sequential(values, group).tobytes()
    with pytest.raises(AssertionError, match="per-position loop"):  # ragged still loops
        gains._group_cumsum(values[:-1], group[:-1])
