"""``experimental._group_cumsum``: running sums inside groups, the same doubles as trec_eval's
loop (one addition per element, in order), on every path it takes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.measures import experimental, gains


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
    got = experimental._group_cumsum(values, group)
    assert got.tobytes() == sequential(values, group).tobytes()


def test_equal_groups_take_one_cumsum(monkeypatch):
    """7,000 needs x 1,000 documents is the usual shape: no per-position loop there."""

    def no_loop(group):
        raise AssertionError("the per-position loop ran")

    monkeypatch.setattr(experimental, "within_group_position", no_loop)
    rng = np.random.default_rng(3)
    group = np.repeat(np.arange(50), 20)
    values = rng.random(len(group)) / 7
    got = experimental._group_cumsum(values, group)
    assert got.tobytes() == sequential(values, group).tobytes()
    with pytest.raises(AssertionError, match="per-position loop"):  # ragged still loops
        experimental._group_cumsum(values[:-1], group[:-1])


def _ranking(judged, lines, depth=None):
    import pandas as pd

    from evaluation.measures.ranking import rank_run

    qrels = pd.DataFrame(judged, columns=["need_id", "doc_id", "relevance"])
    run = pd.DataFrame(lines, columns=["need_id", "doc_id", "score"])
    return rank_run(qrels, run, max_depth=depth, complete=True)


@settings(max_examples=120, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(0, 40),
    st.lists(st.sampled_from([-1, 0, 0, 1, 2, 3, 9]), min_size=120, max_size=120),
    st.lists(st.integers(0, 6), min_size=240, max_size=240),
    st.sampled_from(
        [[], [("1", 1.0), ("2", 4.0)], [("1", 0.5)], [("2", 2.25), ("0", -1.0)], [("3", 1e16)]]
    ),
    st.sampled_from([None, 5]),
)
def test_g_at_the_non_zero_rows_is_g_from_every_row(needs, docs, levels, scores, pairs, depth):
    """G's running sums taken at the rows with a gain (``_g_sums_at``: the ideal prefix
    plus one per rank, the non-zero gains alone) give the doubles of summing every row;
    gains that are not whole numbers (0.5, 2.25, a sum past 2**52) take every row."""
    judged = [(f"q{n}", f"d{d}", levels[(n * 20 + d) % len(levels)])
              for n in range(needs) for d in range(0, 40, 2)]  # fmt: skip
    lines = [(f"q{n}", f"d{d}", float(scores[(n * 40 + d) % len(scores)]))
             for n in range(needs + 1) for d in range(docs)]  # fmt: skip
    ranking = _ranking(judged, lines, depth)
    fast = experimental.g_measure(ranking, list(pairs), "G")["G"]
    original = experimental._g_sums_at
    try:
        experimental._g_sums_at = lambda *args: None  # every row, as before the shortcut
        every_row = experimental.g_measure(ranking, list(pairs), "G")["G"]
    finally:
        experimental._g_sums_at = original
    assert fast.tobytes() == every_row.tobytes()


def test_g_shortcut_declines_costs_that_are_not_whole_numbers():
    ranking = _ranking([("q", "a", 1), ("q", "b", 2)], [("q", "a", 2.0), ("q", "b", 1.0)])
    table = gains._gains(ranking, [("1", 0.5)])
    row_gains = gains._row_gains(ranking, table)
    ideal_need, ideal_gain, _, m = experimental._ideal_by_position(ranking, table)
    starts = np.concatenate(([0], np.cumsum(m)[:-1]))
    args = (ranking, row_gains, row_gains != 0, ideal_need, ideal_gain, m, starts)
    assert experimental._g_sums_at(*args) is not None  # max(0.5, 1) = 1: whole costs
    table = gains._gains(ranking, [("2", 2.5)])
    row_gains = gains._row_gains(ranking, table)
    ideal_need, ideal_gain, _, m = experimental._ideal_by_position(ranking, table)
    args = (ranking, row_gains, row_gains != 0, ideal_need, ideal_gain, m, starts)
    assert experimental._g_sums_at(*args) is None


def test_log2_of_huge_steps_is_the_c_library_s_without_a_table_that_large():
    """G with a gain of 1e16 asks log2 of steps near 1e16: computed for the distinct
    values (a table up to them would need petabytes), the same doubles as math.log2."""
    import math

    k = np.array([[3, 10**16], [1621, 10**16 + 2]])
    got = gains.log2_of(k)
    assert got.shape == k.shape
    assert got.ravel().tolist() == [math.log2(x) for x in k.ravel().tolist()]
