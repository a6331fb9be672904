"""Recall levels and the interpolation rules by name, with the standard library alone:
what the command line's argument parser and its numpy-free path
(:mod:`evaluation.measures.plain`) need of :mod:`evaluation.measures.interpolation`
(which holds the rules' definitions and imports these from here)."""

from __future__ import annotations

__all__ = ["MODES", "STANDARD_LEVELS", "check_mode", "exact_fraction"]

STANDARD_LEVELS = ("0.0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0")
#: the interpolation rules: the seed's exact definition, trec_eval 9.0.8's, 10.0's
MODES = ("exact", "trec_eval-9", "trec_eval-10")


def check_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`MODES`, else ValueError naming them."""
    if mode not in MODES:
        raise ValueError(f"interpolation must be one of {', '.join(MODES)}, not {mode!r}")
    return mode


def exact_fraction(level: str) -> tuple[int, int]:
    """The decimal text as an exact fraction (numerator, denominator): ``"0.25"`` is
    (25, 100). Plain decimals are read here; anything else (a sign, an exponent,
    blanks) by :class:`fractions.Fraction`, whose import (with decimal) is ~4 ms of a
    small run's 0.15 s; both give the same value (tests/evaluation/test_modes.py)."""
    whole, _, decimals = level.partition(".")
    digits = whole + decimals
    if digits.isascii() and digits.isdigit():
        return int(digits), 10 ** len(decimals)
    from fractions import Fraction

    fraction = Fraction(level)
    return fraction.numerator, fraction.denominator
