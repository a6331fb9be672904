"""Tests of ``leaderboard.uploads``."""
