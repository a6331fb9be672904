"""Tests of ``evaluation.significance``."""
