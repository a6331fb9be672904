"""Tests of ``evaluation.trec``."""
