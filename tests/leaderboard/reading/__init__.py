"""Tests of ``leaderboard.reading``."""
