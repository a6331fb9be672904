"""Tests of ``leaderboard.pages``."""
