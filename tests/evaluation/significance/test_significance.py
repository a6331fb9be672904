"""Per-pair statistics against scipy's own calls, and their edge cases."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evaluation.significance import (
    P_FLOOR,
    PAIR_KEYS,
    FewNeedsWarning,
    compare_all_pairs,
    compare_one_against_many,
    compare_pair,
    paired_differences,
    paired_matrix,
)
from evaluation.significance import paired as significance

TOL = 1e-9


def scipy_pair(a: np.ndarray, b: np.ndarray) -> dict:
    """The reference: scipy called on this one pair (Wilcoxon on the noise-free d)."""
    d = paired_differences(a, b)
    t = stats.ttest_rel(a, b)
    ci = t.confidence_interval(0.95)
    w = stats.wilcoxon(d, zero_method="wilcox", correction=False)
    return {
        "mean_diff": d.mean(),
        "ci_low": ci.low,
        "ci_high": ci.high,
        "effect_size": d.mean() / d.std(ddof=1),
        "wins": int((d > 0).sum()),
        "ties": int((d == 0).sum()),
        "losses": int((d < 0).sum()),
        "t_statistic": t.statistic,
        "t_p": t.pvalue,
        "wilcoxon_statistic": w.statistic,
        "wilcoxon_p": w.pvalue,
    }


def assert_matches_scipy(ours: dict, a: np.ndarray, b: np.ndarray) -> None:
    ref = scipy_pair(a, b)
    assert ours["n"] == a.size
    for key, value in ref.items():
        assert ours[key] == pytest.approx(value, abs=TOL, rel=TOL), key


def sample(rng: np.random.Generator, n: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Two runs' per-need scores: continuous, or on a grid (zeros and tied |d|)."""
    if kind == "continuous":
        a = rng.uniform(size=n)
        return a, np.clip(a + rng.normal(0.05, 0.2, size=n), 0, 1)
    a = rng.integers(0, 11, size=n) / 10  # like P_10
    return a, rng.integers(0, 11, size=n) / 10


@pytest.mark.parametrize("kind", ["continuous", "grid"])
@pytest.mark.parametrize("n", [2, 3, 6, 10, 13, 14, 25, 50, 51, 120])
def test_compare_pair_equals_scipy(n: int, kind: str) -> None:
    rng = np.random.default_rng(n)
    for _ in range(5):
        a, b = sample(rng, n, kind)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FewNeedsWarning)
            ours = compare_pair(a, b, permutations=0)
        if np.all(paired_differences(a, b) == 0):
            continue
        assert_matches_scipy(ours, a, b)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=6, max_size=40),
)
def test_compare_pair_equals_scipy_property(values: list[tuple[int, int]]) -> None:
    a = np.array([x for x, _ in values]) / 20
    b = np.array([y for _, y in values]) / 20
    d = paired_differences(a, b)
    ours = compare_pair(a, b, permutations=0)
    if np.all(d == 0):
        assert ours["t_p"] == ours["wilcoxon_p"] == 1.0
    elif np.all(d == d[0]):
        assert np.isinf(ours["t_statistic"]) and ours["t_p"] == P_FLOOR
    else:
        assert_matches_scipy(ours, a, b)


def test_wilcoxon_method_is_chosen_per_pair() -> None:
    """A family mixing tie-free pairs (exact) and tied pairs (asymptotic / enumerated)."""
    rng = np.random.default_rng(7)
    for n in (9, 30):
        continuous = rng.uniform(size=(n, 4))
        grid = rng.integers(0, 5, size=(n, 4)) / 4
        scores = pd.DataFrame(np.hstack([continuous, grid]), columns=[f"r{i}" for i in range(8)])
        pairs = compare_all_pairs(scores, permutations=0)
        for row in pairs.itertuples():
            d = paired_differences(scores[row.a].to_numpy(), scores[row.b].to_numpy())
            alone = stats.wilcoxon(d, correction=False)
            assert row.wilcoxon_statistic == pytest.approx(alone.statistic, abs=TOL)
            assert row.wilcoxon_p == pytest.approx(alone.pvalue, abs=TOL)


def test_batched_auto_would_differ() -> None:
    """Why pairs are grouped by method: scipy's auto decides for the whole batch."""
    rng = np.random.default_rng(3)
    d = np.column_stack([rng.normal(size=20), rng.integers(-3, 4, size=20) / 4])
    d[d[:, 1] == 0, 1] = 0.5
    batch = stats.wilcoxon(d, axis=0, correction=False).pvalue
    alone = [stats.wilcoxon(d[:, j], correction=False).pvalue for j in range(2)]
    assert not np.allclose(batch, alone, atol=TOL)
    ours = significance._wilcoxon(d)[1]
    np.testing.assert_allclose(ours, alone, atol=TOL)


def test_all_pairs_rows_equal_compare_pair() -> None:
    rng = np.random.default_rng(11)
    scores = pd.DataFrame(rng.uniform(size=(40, 5)), columns=list("vwxyz"))
    pairs = compare_all_pairs(scores, permutations=2000, seed=5)
    assert list(pairs[["a", "b"]].itertuples(index=False, name=None)) == [
        (a, b) for i, a in enumerate("vwxyz") for b in "vwxyz"[i + 1 :]
    ]
    for row in pairs.to_dict(orient="records"):
        alone = compare_pair(scores[row["a"]], scores[row["b"]], permutations=2000, seed=5)
        assert set(alone) == set(PAIR_KEYS)
        for key in PAIR_KEYS:
            assert row[key] == alone[key], key  # bit for bit: same code, same signs


def test_one_against_many_equals_all_pairs() -> None:
    rng = np.random.default_rng(12)
    scores = pd.DataFrame(rng.uniform(size=(30, 6)), columns=[f"r{i}" for i in range(6)])
    everything = compare_all_pairs(scores, permutations=3000, seed=9).set_index("b")
    first = everything[everything.a == "r0"]
    incremental = compare_one_against_many(
        scores["r0"], scores.drop(columns="r0"), name="r0", permutations=3000, seed=9
    ).set_index("b")
    assert (incremental.a == "r0").all()
    assert not any(c.endswith("_adjusted") for c in incremental.columns)
    pd.testing.assert_frame_equal(incremental[list(PAIR_KEYS)], first[list(PAIR_KEYS)])


def test_swapping_a_and_b_mirrors_the_result() -> None:
    rng = np.random.default_rng(13)
    a, b = rng.uniform(size=25), rng.uniform(size=25)
    ab, ba = compare_pair(a, b, permutations=1000), compare_pair(b, a, permutations=1000)
    assert ab["mean_diff"] == -ba["mean_diff"] and ab["wins"] == ba["losses"]
    assert (ab["ci_low"], ab["ci_high"]) == pytest.approx((-ba["ci_high"], -ba["ci_low"]))
    for key in ("t_p", "wilcoxon_p", "randomization_p", "wilcoxon_statistic"):
        assert ab[key] == pytest.approx(ba[key], abs=1e-12)


# Edge cases: identical runs, a constant offset, few needs, needs missing from a run.


def test_identical_runs_every_p_is_one() -> None:
    a = np.random.default_rng(1).uniform(size=50)
    for n in (50, 8):
        result = compare_pair(a[:n], a[:n].copy())
        assert result["t_p"] == result["wilcoxon_p"] == result["randomization_p"] == 1.0
        assert not any(np.isnan(v) for v in result.values())
        assert (result["wins"], result["ties"], result["losses"]) == (0, n, 0)
        assert result["effect_size"] == result["mean_diff"] == result["t_statistic"] == 0.0
        assert (result["ci_low"], result["ci_high"]) == (0.0, 0.0)
    pairs = compare_all_pairs(pd.DataFrame({"x": a, "y": a, "z": a + 0.25}))
    same = pairs.iloc[0]
    assert same[[c for c in pairs.columns if "_p" in c]].eq(1.0).all()


def test_constant_offset() -> None:
    a = np.linspace(0.2, 0.6, 50)
    result = compare_pair(a + 0.1, a)
    assert result["mean_diff"] == pytest.approx(0.1, abs=1e-15)
    assert result["ci_low"] == result["ci_high"] == result["mean_diff"]
    assert result["effect_size"] == np.inf and result["t_statistic"] == np.inf
    assert result["t_p"] == P_FLOOR  # scipy says 0: never returned
    assert result["wins"] == 50
    d = paired_differences(a + 0.1, a)
    assert result["wilcoxon_p"] == pytest.approx(stats.wilcoxon(d, correction=False).pvalue)
    # only the identity flips to |sum| >= |observed| (and all-minus): p at its floor
    assert result["randomization_p"] == 1 / 10_001
    small = compare_pair(a[:10] - 0.1, a[:10])
    assert small["randomization_p"] == 2 / 1024  # exact: identity and all-minus
    assert small["effect_size"] == -np.inf


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_few_needs_warn_and_cannot_reach_005(n: int) -> None:
    a = np.arange(1, n + 1) / 10
    with pytest.warns(FewNeedsWarning, match="cannot reach"):
        result = compare_pair(a + 0.05 * np.arange(1, n + 1), a)
    assert result["wilcoxon_p"] >= 0.0625 and result["randomization_p"] >= 0.0625


def test_six_needs_do_not_warn() -> None:
    a = np.arange(6) / 10
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = compare_pair(a + 0.1 + np.arange(6) / 100, a)
    assert result["wilcoxon_p"] == pytest.approx(2 / 64)


def test_one_need_gives_nan_t_not_a_crash() -> None:
    with pytest.warns(FewNeedsWarning):
        result = compare_pair(np.array([0.5]), np.array([0.25]))
    assert np.isnan(result["t_p"]) and result["wins"] == 1
    assert result["randomization_p"] == 1.0  # both signs give |0.25|


def test_needs_missing_from_one_run_score_zero() -> None:
    needs = ["401", "402", "403", "404"]
    per_need = {
        "full": pd.Series({"401": 0.5, "402": 0.25, "403": 0.75, "404": 0.1}),
        "partial": pd.Series({"401": 0.5, "403": 0.5, "999": 1.0}),  # 999: not judged
    }
    matrix = paired_matrix(per_need, needs)
    assert list(matrix.index) == needs and list(matrix.columns) == ["full", "partial"]
    assert matrix["partial"].tolist() == [0.5, 0.0, 0.5, 0.0]
    with pytest.warns(FewNeedsWarning):
        result = compare_pair(matrix["full"], matrix["partial"], permutations=0)
    assert (result["wins"], result["ties"], result["losses"]) == (3, 1, 0)
    assert result["mean_diff"] == pytest.approx((0.25 + 0.25 + 0.1) / 4)


def test_paired_matrix_compares_need_ids_as_strings() -> None:
    matrix = paired_matrix({"r": pd.Series({401: 0.5, 402: 0.25})}, ["401", "402", "403"])
    assert matrix["r"].tolist() == [0.5, 0.25, 0.0]


def test_paired_matrix_rejects_nan_and_duplicates() -> None:
    with pytest.raises(ValueError, match="NaN"):
        paired_matrix({"r": pd.Series({"1": np.nan})}, ["1"])
    with pytest.raises(ValueError, match="twice"):
        paired_matrix({"r": pd.Series([0.1, 0.2], index=["1", "1"])}, ["1"])
    with pytest.raises(ValueError, match="NaN"):
        compare_all_pairs(pd.DataFrame({"x": [0.1, np.nan], "y": [0.2, 0.3]}))


def test_float_noise_is_a_tie() -> None:
    a = np.array([0.1 + 0.2, 0.3, 0.7, 0.4, 0.6, 0.5, 0.9, 0.8])
    b = np.array([0.3, 0.2, 0.6, 0.3, 0.5, 0.4, 0.8, 0.7])  # d: 0 (noise), then 0.1 x 7
    assert (a - b)[0] != 0  # the noise is real
    assert len(set(np.abs(a - b)[1:])) > 1  # and it breaks the tie between the 0.1s
    result = compare_pair(a, b)
    assert (result["wins"], result["ties"], result["losses"]) == (7, 1, 0)
    d = paired_differences(a, b)
    assert d[0] == 0 and len(set(d[1:])) == 1
    assert result["wilcoxon_p"] == pytest.approx(stats.wilcoxon(d, correction=False).pvalue)
    # scipy on the noisy differences sees no zero and no tie: a different test
    noisy = stats.wilcoxon(a - b, correction=False).pvalue
    assert noisy != pytest.approx(result["wilcoxon_p"])
    assert paired_differences([0.1 + 0.2], [0.3]).tolist() == [0.0]
    assert paired_differences([1e-12], [0.0]).tolist() == [0.0]
    assert paired_differences([2e-12], [0.0]).tolist() == [2e-12]


def test_family_of_one() -> None:
    scores = pd.DataFrame({"x": np.linspace(0, 1, 20), "y": np.linspace(0, 1, 20) ** 2})
    for correction in ("holm", "bh", "none"):
        pairs = compare_all_pairs(scores, correction=correction, permutations=500)
        assert len(pairs) == 1
        for key in ("t_p", "wilcoxon_p", "randomization_p"):
            assert pairs[f"{key}_adjusted"].iloc[0] == pairs[key].iloc[0]


def test_no_pairs_and_bad_input() -> None:
    assert compare_all_pairs(pd.DataFrame({"x": [0.1, 0.2]})).empty
    with pytest.raises(ValueError):
        compare_pair(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError):
        compare_all_pairs(pd.DataFrame({"x": [0.1], "y": [0.2]}), correction="bonferroni")
    with pytest.raises(ValueError, match="lacks"):
        compare_one_against_many(pd.Series({"1": 0.1}), pd.DataFrame({"x": [0.1, 0.2]}))
    with pytest.raises(ValueError, match="one score per row"):
        compare_one_against_many(np.zeros(3), pd.DataFrame({"x": [0.1, 0.2]}))
