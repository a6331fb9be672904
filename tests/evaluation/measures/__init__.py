"""Tests of ``evaluation.measures``."""
