"""Tests of ``evaluation.health``."""
