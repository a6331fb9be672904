"""Tests of ``evaluation.cli``."""
