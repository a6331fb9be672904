"""Tests of ``leaderboard.models``."""
