"""Accounts: sign-up (``views``) and the API tokens page (``tokens``); log in, log out
and password change come from ``django.contrib.auth``. Forms live beside their views.

May import ``leaderboard.models``; nothing else of the platform.
"""
