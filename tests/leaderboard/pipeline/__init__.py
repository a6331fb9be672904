"""Tests of ``leaderboard.pipeline``."""
