"""Accounts: sign-up and the account page (display name, email, run mail, team:
``views``), the API tokens page (``tokens``) and the throttling of
failed log-ins and unknown API tokens (``throttle``); log in, log out, password change and
reset come from ``django.contrib.auth`` (their pages in templates/registration/). Forms
live beside their views.

May import ``leaderboard.models``; nothing else of the platform.
"""
