"""Holm and Benjamini-Hochberg against slow references; Tukey's HSD blocked by need."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evaluation.significance import (
    adjust_frame,
    adjust_p,
    compare_all_pairs,
    compare_pair,
    p_text,
    tukey_hsd_blocked,
)
from evaluation.significance.corrections import (
    P_FLOOR,
    _studentized_range_isf,
    _studentized_range_sf,
)
from tests import FIXTURES


def holm_reference(p: list[float]) -> list[float]:
    """Holm (1979) as written: step down through the sorted p, never decreasing."""
    m = len(p)
    order = sorted(range(m), key=lambda i: (p[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


def bh_reference(p: list[float]) -> list[float]:
    """Benjamini-Hochberg (1995) as written: min over j >= i of m p_(j) / j."""
    m = len(p)
    order = sorted(range(m), key=lambda i: (p[i], i))
    adjusted = [0.0] * m
    for rank, i in enumerate(order):
        adjusted[i] = min(min(1.0, m * p[order[j]] / (j + 1)) for j in range(rank, m))
    return adjusted


probabilities = st.lists(
    st.one_of(
        st.floats(0, 1, allow_nan=False),
        st.sampled_from([0.0, 0.01, 0.05, 1.0]),  # ties and boundaries
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(probabilities)
def test_holm_and_bh_equal_the_references(p: list[float]) -> None:
    np.testing.assert_allclose(adjust_p(p, "holm"), holm_reference(p), rtol=1e-12, atol=0)
    np.testing.assert_allclose(adjust_p(p, "bh"), bh_reference(p), rtol=1e-12, atol=0)
    np.testing.assert_array_equal(adjust_p(p, "none"), p)


def test_bh_equals_scipy() -> None:
    p = np.random.default_rng(0).uniform(size=500) ** 3
    np.testing.assert_allclose(adjust_p(p, "bh"), stats.false_discovery_control(p), rtol=1e-12)


def test_docstring_examples() -> None:
    np.testing.assert_allclose(adjust_p([0.01, 0.04, 0.03], "holm"), [0.03, 0.06, 0.06])
    np.testing.assert_allclose(adjust_p([0.01, 0.04, 0.03], "bh"), [0.03, 0.04, 0.04])


def test_nan_is_outside_the_family() -> None:
    p = [0.01, np.nan, 0.02]
    holm = adjust_p(p, "holm")
    assert np.isnan(holm[1])
    np.testing.assert_allclose(holm[[0, 2]], [0.02, 0.02])  # m = 2, not 3
    assert np.isnan(adjust_p([np.nan], "bh")).all()
    assert adjust_p([], "holm").size == 0


def test_family_of_one_is_unchanged() -> None:
    for method in ("holm", "bh", "none"):
        assert adjust_p([0.03], method).tolist() == [0.03]


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown correction"):
        adjust_p([0.1], "bonferroni")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        adjust_p([1.5])


def test_adjust_frame_for_a_leader_family() -> None:
    rng = np.random.default_rng(4)
    scores = pd.DataFrame(rng.uniform(size=(25, 4)), columns=["lead", "x", "y", "z"])
    pairs = compare_all_pairs(scores, permutations=500, correction="none")
    leader = adjust_frame(pairs[pairs.a == "lead"], "holm")
    np.testing.assert_allclose(leader["t_p_adjusted"], holm_reference(leader["t_p"].tolist()))
    assert len(leader) == 3


# Tukey's HSD on the two-way ANOVA blocked by need.


def tukey_reference(x: np.ndarray) -> tuple[np.ndarray, float, int]:
    """The ANOVA by explicit loops: run means, residual mean square, its df."""
    n, k = x.shape
    grand = sum(x[i, j] for i in range(n) for j in range(k)) / (n * k)
    need = [sum(x[i, :]) / k for i in range(n)]
    run = np.array([sum(x[:, j]) / n for j in range(k)])
    ss = sum((x[i, j] - need[i] - run[j] + grand) ** 2 for i in range(n) for j in range(k))
    df = (n - 1) * (k - 1)
    return run, ss / df, df


def test_tukey_equals_the_slow_reference() -> None:
    rng = np.random.default_rng(21)
    x = rng.uniform(size=(15, 4)) + rng.normal(0, 0.3, size=(15, 1))  # need effects
    frame = pd.DataFrame(x, columns=["p", "q", "r", "s"])
    result = tukey_hsd_blocked(frame)
    run, mse, df = tukey_reference(x)
    se = np.sqrt(mse / 15)
    crit = stats.studentized_range.ppf(0.95, 4, df)
    assert len(result) == 6
    for row in result.itertuples():
        i, j = "pqrs".index(row.a), "pqrs".index(row.b)
        q = abs(run[i] - run[j]) / se
        assert row.mean_diff == pytest.approx(run[i] - run[j], abs=1e-12)
        assert row.q_statistic == pytest.approx(q, rel=1e-9)
        assert row.p == pytest.approx(stats.studentized_range.sf(q, 4, df), abs=1e-9)
        assert row.ci_low == pytest.approx(run[i] - run[j] - crit * se, abs=1e-9)


def test_tukey_with_two_runs_is_the_paired_t_test() -> None:
    rng = np.random.default_rng(22)
    a = rng.uniform(size=30)
    b = np.clip(a - 0.05 + rng.normal(0, 0.1, size=30), 0, 1)
    row = tukey_hsd_blocked(pd.DataFrame({"a": a, "b": b})).iloc[0]
    pair = compare_pair(a, b, permutations=0)
    assert row.q_statistic == pytest.approx(np.sqrt(2) * abs(pair["t_statistic"]), rel=1e-9)
    assert row.p == pytest.approx(pair["t_p"], abs=1e-7)  # numerical integration


def test_tukey_blocking_removes_need_difficulty() -> None:
    """Adding a per-need constant changes nothing; scipy's one-way test loses power."""
    rng = np.random.default_rng(23)
    x = rng.uniform(0, 0.2, size=(20, 3)) + np.array([0.0, 0.05, 0.1])
    hard = x + rng.uniform(0, 0.8, size=(20, 1))
    plain, blocked = tukey_hsd_blocked(pd.DataFrame(x)), tukey_hsd_blocked(pd.DataFrame(hard))
    np.testing.assert_allclose(plain["p"], blocked["p"], atol=1e-9)
    one_way = stats.tukey_hsd(*hard.T).pvalue[0, 2]
    assert blocked["p"].iloc[1] < 0.05 < one_way


def test_tukey_edge_cases() -> None:
    a = np.linspace(0, 1, 10)
    same = tukey_hsd_blocked(pd.DataFrame({"x": a, "y": a, "z": a}))
    assert (same["p"] == 1.0).all() and not same.isna().any().any()
    offset = tukey_hsd_blocked(pd.DataFrame({"x": a, "y": a + 0.1}))
    assert 0 < offset["p"].iloc[0] < 1e-300  # perfect additive fit: at the floor, never 0
    with pytest.raises(ValueError):
        tukey_hsd_blocked(pd.DataFrame({"x": a}))


# The studentized range distribution, vectorised (what Tukey's HSD uses instead of
# scipy.stats.studentized_range, which integrates each value separately: ~6 ms each).

KS = (2, 3, 5, 10, 50, 129, 200)
DFS = (2, 5, 10, 30, 100, 2401, 10_000, 99_999, 1e6, np.inf)
TREC8_AP = FIXTURES / "trec8-per-topic" / "adhoc8_ap.csv"


def q_grid(k: int, df: float, size: int) -> np.ndarray:
    """0, then ``size`` values log-spaced from 0.1 to where P(Q >= q) = 1e-12."""
    return np.concatenate([[0.0], np.geomspace(0.1, _studentized_range_isf(1e-12, k, df), size)])


def test_studentized_range_sf_matches_scipy() -> None:
    """Within 1e-6 absolute and 1e-4 relative wherever scipy's own p is >= 1e-6.

    Below 1e-6 scipy's integration is off by more than 1e-4 relative in places (0 for
    p below about 2e-8 at df = 2; 1e-4 to 3e-3 at p ~ 1e-8 with df >= 2,401; see the
    next tests, which check those tails against exact values), so there only the
    absolute bound is asked of it.
    """
    for k in KS:
        for df in DFS:
            q = q_grid(k, df, 10)
            ours, theirs = _studentized_range_sf(q, k, df), stats.studentized_range.sf(q, k, df)
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6, err_msg=f"{k=} {df=}")
            big = theirs >= 1e-6
            np.testing.assert_allclose(ours[big], theirs[big], rtol=1e-4, err_msg=f"{k=} {df=}")


@pytest.mark.parametrize("df", [1, 2, 3, 5, 30, 2401, 99_999, 1e6, np.inf])
def test_studentized_range_of_two_is_the_t_distribution(df: float) -> None:
    """k = 2: Q = sqrt(2) |t_df|, exact down to p = 1e-300 (the normal above df = 100,000)."""
    q = np.geomspace(0.01, 1e15, 300)
    x = q / np.sqrt(2)
    log_p = np.log(2) + (stats.t.logsf(x, df) if df <= 100_000 else stats.norm.logsf(x))
    keep = log_p > np.log(1e-300)
    np.testing.assert_allclose(
        _studentized_range_sf(q[keep], 2, df), np.exp(log_p[keep]), rtol=1e-7
    )


@pytest.mark.parametrize(
    ("k", "df", "q", "p", "scipy_p"),
    [
        # p by nested adaptive quadrature (scipy.integrate.quad, epsrel 1e-10 over s,
        # 1e-12 over z), where scipy.stats.studentized_range.sf is off
        (5, 5, 275.04266949, 3.796774238091822e-10, 2.75e-10),
        (3, 10_000, 8.42776033, 7.851478959516746e-09, 7.850e-09),
        (10, 99_999, 8.81236325, 2.086198708766001e-08, 2.0933e-08),
        (200, 99_999, 9.6376495, 1.8689725832555607e-07, 1.86965e-07),
        (129, 30, 5.6, 0.34582441512177703, 0.345824415121778),
    ],
)
def test_studentized_range_tails_by_nested_quadrature(
    k: int, df: float, q: float, p: float, scipy_p: float
) -> None:
    assert _studentized_range_sf(np.array([q]), k, df)[0] == pytest.approx(p, rel=1e-7)


def test_studentized_range_sf_edges_and_monotone() -> None:
    assert _studentized_range_sf(np.array([3.0]), 3, 10)[0] == pytest.approx(0.13498, abs=1e-5)
    assert _studentized_range_isf(0.05, 3, 10) == pytest.approx(3.877, abs=1e-3)  # tables
    for k, df in [(2, 2), (3, 10), (50, 2401), (200, 5), (129, 1e6), (10, np.inf)]:
        edges = _studentized_range_sf(np.array([0.0, -1.0, np.nan, np.inf, 1e300]), k, df)
        np.testing.assert_array_equal(edges, [1.0, 1.0, np.nan, P_FLOOR, P_FLOOR])
        q = np.linspace(0, 3_000 if df < 10 else 40, 5001)
        p = _studentized_range_sf(q, k, df)
        assert p[0] == 1.0 and (p >= P_FLOOR).all() and (p <= 1).all()
        # non-increasing; near p = 1 the spline of log P(R >= w) wiggles by up to ~2e-12
        assert (np.diff(p) <= 1e-11).all(), f"{k=} {df=}"
        assert (np.diff(p[p < 0.999]) <= 0).all(), f"{k=} {df=}"


def test_tukey_p_unchanged_from_scipy_on_trec8() -> None:
    """The first 20 TREC-8 ad hoc runs (AP, 50 needs): 190 pairs, df = 49 * 19 = 931."""
    scores = pd.read_csv(TREC8_AP).iloc[:, :20]
    result = tukey_hsd_blocked(scores)
    n, k = scores.shape
    df = (n - 1) * (k - 1)
    assert len(result) == 190
    q = result["q_statistic"].to_numpy()
    scipy_p = np.clip(stats.studentized_range.sf(q, k, df), P_FLOOR, 1)
    np.testing.assert_allclose(result["p"], scipy_p, rtol=0, atol=1e-8)
    big = scipy_p >= 1e-6
    np.testing.assert_allclose(result["p"][big], scipy_p[big], rtol=1e-6)
    half = stats.studentized_range.ppf(0.95, k, df) * (result["mean_diff"] / q).abs()
    np.testing.assert_allclose(result["ci_high"] - result["mean_diff"], half, rtol=1e-8)


@pytest.mark.parametrize(
    ("p", "decimals", "text"),
    [
        (0.04996, 4, "0.04996"),  # "0.0500" would read as alpha beside "significant"
        (0.0499999, 3, "0.0499999"),
        (0.05, 4, "0.0500"),
        (0.050004, 4, "0.0500"),  # at or above alpha rounding cannot cross it
        (0.0312, 4, "0.0312"),
        (0.62, 2, "0.62"),
    ],
)
def test_p_text_never_rounds_a_p_below_alpha_up_to_it(p: float, decimals: int, text: str) -> None:
    assert p_text(p, decimals) == text
    assert (float(p_text(p, decimals)) < 0.05) == (p < 0.05)
    assert p_text(0.0096, 2, alpha=0.01) == "0.0096"
