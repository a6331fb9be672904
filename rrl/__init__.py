"""``rrl``: the participants' and organizers' client (no Django, no numpy, no pandas).

- :mod:`rrl.trec`: a run or qrels held in Python (a pandas DataFrame, a ranx ``Run``
  or ``Qrels``, a ``{query: {doc: score}}`` dict, ir_measures ``ScoredDoc`` / ``Qrel``
  tuples) or a TREC file, written as TREC text, gzipped for an upload. The engine
  (:mod:`evaluation.trec.inputs`) reads the same inputs through it, so a run scored
  locally is the run the platform will score.
- :mod:`rrl.client`: ``rrl.Client``, the platform's API on ``httpx`` (login, submit in
  any of those shapes, status, runs, board, compare, download, withdraw), and its
  errors ``ApiError``, ``Conflict``, ``RunFailed``; the organizers' endpoints it
  inherits are in :mod:`rrl.organizer_calls`, the HTTP and retry core both stand on in
  :mod:`rrl.session`.
- :mod:`rrl.config` and :mod:`rrl.cli`: the ``rrl`` command (``python -m rrl``) and
  where it keeps the token.

Imports: the standard library only (the HTTP client adds ``httpx``); nothing of
:mod:`evaluation` or :mod:`leaderboard`, which may import this package, never the
reverse. ``httpx`` is imported only when ``Client`` or its errors are first used (the
engine imports ``rrl.trec`` and should not pay for an HTTP library). pandas and ranx
are never imported: their objects are recognised by what they have (``columns``,
``to_dict``), so neither needs to be installed.
"""

from rrl.trec import qrels_text, run_gzip, run_text, write_run

__all__ = [
    "ApiError",
    "Client",
    "Conflict",
    "RunFailed",
    "qrels_text",
    "run_gzip",
    "run_text",
    "write_run",
]

_CLIENT_NAMES = {"ApiError", "Client", "Conflict", "RunFailed"}


def __getattr__(name: str):
    """``rrl.Client`` and its errors, imported (with httpx) on first use."""
    if name in _CLIENT_NAMES:
        from rrl import client

        return getattr(client, name)
    raise AttributeError(f"module 'rrl' has no attribute {name!r}")
