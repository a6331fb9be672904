"""Tests of ``leaderboard.accounts``."""
