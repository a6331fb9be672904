"""Tests of ``leaderboard.api``."""
