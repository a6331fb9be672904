"""The paired randomization test: exact enumeration, Monte-Carlo error, reproducibility."""

from __future__ import annotations

import contextlib
import itertools
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evaluation.significance import (
    compare_all_pairs,
    compare_one_against_many,
    compare_pair,
    sign_flips,
)
from evaluation.significance import paired as significance


def enumerated_p(d: list[int]) -> Fraction:
    """Slow reference on integer differences: every sign vector, exact arithmetic."""
    observed = abs(sum(d))
    hits = sum(
        abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= observed
        for signs in itertools.product((1, -1), repeat=len(d))
    )
    return Fraction(hits, 2 ** len(d))


def exact_p_meet_in_middle(d: np.ndarray) -> float:
    """Exact two-sided sign-flip p for integer d with n ~ 20 (2^n sums, in halves)."""
    half = d.size // 2

    def sums(part: np.ndarray) -> np.ndarray:
        signs = 1 - 2 * ((np.arange(1 << part.size)[:, None] >> np.arange(part.size)) & 1)
        return signs @ part

    total = sums(d[:half])[:, None] + sums(d[half:])[None, :]
    return float(np.mean(np.abs(total) >= abs(d.sum())))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 13])
def test_small_n_is_exact_enumeration(n: int) -> None:
    rng = np.random.default_rng(n)
    for _ in range(10):
        d = rng.integers(-4, 5, size=n)  # ties and zeros on purpose
        b = rng.integers(0, 10, size=n) / 10
        a = b + d / 10
        with pytest.warns(significance.FewNeedsWarning) if n < 6 else contextlib.nullcontext():
            ours = compare_pair(a, b, permutations=2**n)
        assert ours["randomization_p"] == float(enumerated_p(d.tolist()))


def test_exact_equals_scipy_permutation_test() -> None:
    """scipy's own exact sign-flip test (permutation_type='samples', one sample)."""
    rng = np.random.default_rng(5)
    for n in (6, 9, 12):
        a, b = rng.uniform(size=n), rng.uniform(size=n)
        d = significance.paired_differences(a, b)
        ref = stats.permutation_test(
            (d,), np.mean, permutation_type="samples", n_resamples=np.inf, axis=-1
        )
        assert compare_pair(a, b, permutations=10_000)["randomization_p"] == pytest.approx(
            ref.pvalue, abs=1e-12
        )


def test_monte_carlo_is_within_error_of_exact() -> None:
    """n = 20: 2^20 > B, so sampled; the exact p comes from all 2^20 sign vectors."""
    rng = np.random.default_rng(20)
    checked = 0
    for _ in range(6):
        d = rng.integers(-3, 6, size=20)
        exact = exact_p_meet_in_middle(d)
        b = np.full(20, 0.5)
        p = compare_pair(b + d / 100, b, permutations=10_000, seed=checked)["randomization_p"]
        error = np.sqrt(exact * (1 - exact) / 10_000)
        assert abs(p - exact) <= 4.5 * error + 2 / 10_001
        checked += 1


def test_monte_carlo_is_within_error_of_a_long_run() -> None:
    rng = np.random.default_rng(50)
    a = rng.uniform(size=50)
    for shift in (0.02, 0.05, 0.1):
        b = np.clip(a - shift + rng.normal(0, 0.15, size=50), 0, 1)
        long = compare_pair(a, b, permutations=400_000, seed=1)["randomization_p"]
        short = compare_pair(a, b, permutations=10_000, seed=2)["randomization_p"]
        error = np.sqrt(long * (1 - long) / 10_000 + long * (1 - long) / 400_000)
        assert abs(short - long) <= 4.5 * error + 2 / 10_001
        # and the t-test agrees roughly, as it should for 50 needs
        assert long == pytest.approx(compare_pair(a, b, permutations=0)["t_p"], abs=0.02)


def test_same_seed_same_p_other_seed_close() -> None:
    rng = np.random.default_rng(8)
    a, b = rng.uniform(size=40), rng.uniform(size=40)
    first = compare_pair(a, b, seed=3)["randomization_p"]
    assert compare_pair(a, b, seed=3)["randomization_p"] == first
    other = compare_pair(a, b, seed=4)["randomization_p"]
    assert other != first
    assert abs(other - first) <= 6 * np.sqrt(first * (1 - first) / 10_000) + 2 / 10_001


def test_sign_matrix_depends_on_n_b_seed_only() -> None:
    first = np.vstack(list(sign_flips(50, 10_000, 7)))
    again = np.vstack(list(sign_flips(50, 10_000, 7)))
    assert first.shape == (10_000, 50) and set(np.unique(first)) == {-1.0, 1.0}
    np.testing.assert_array_equal(first, again)
    assert abs(first.mean()) < 0.01  # fair coin
    large = list(sign_flips(7000, 1000, 7))
    assert len(large) > 1 and sum(block.shape[0] for block in large) == 1000


def test_p_does_not_depend_on_the_family(monkeypatch: pytest.MonkeyPatch) -> None:
    """Same pair, same seed: alone, in all pairs, one against many, any block sizes."""
    rng = np.random.default_rng(9)
    scores = pd.DataFrame(rng.uniform(size=(30, 5)), columns=list("abcde"))
    alone = compare_pair(scores["b"], scores["d"], seed=11)["randomization_p"]
    family = compare_all_pairs(scores, seed=11).set_index(["a", "b"])
    assert family.loc[("b", "d"), "randomization_p"] == alone
    many = compare_one_against_many(scores["b"], scores[["e", "d", "a"]], seed=11)
    assert many.set_index("b").loc["d", "randomization_p"] == alone
    monkeypatch.setattr(significance, "_DIFF_BLOCK", 60)
    monkeypatch.setattr(significance, "_FLIP_BLOCK", 20_000)
    small_blocks = compare_all_pairs(scores, seed=11).set_index(["a", "b"])
    pd.testing.assert_frame_equal(small_blocks, family)


def test_never_zero_floor_is_one_over_b_plus_one() -> None:
    a = np.linspace(0.5, 0.9, 60)
    result = compare_pair(a, a - 0.2 - np.linspace(0, 0.01, 60), permutations=999)
    assert result["randomization_p"] == 1 / 1000
    assert compare_pair(a, a, permutations=999)["randomization_p"] == 1.0


def test_permutations_zero_skips_the_test() -> None:
    a = np.linspace(0, 1, 10)
    assert np.isnan(compare_pair(a, a[::-1], permutations=0)["randomization_p"])
    pairs = compare_all_pairs(pd.DataFrame({"x": a, "y": a[::-1]}), permutations=0)
    assert pairs["randomization_p"].isna().all()
    assert pairs["randomization_p_adjusted"].isna().all()
    assert pairs["t_p_adjusted"].notna().all()
