"""``rrl``: the participants' and organizers' client (no Django, no numpy, no pandas).

- :mod:`rrl.trec`: a run or qrels held in Python (a pandas DataFrame, a ranx ``Run``
  or ``Qrels``, a ``{query: {doc: score}}`` dict, ir_measures ``ScoredDoc`` / ``Qrel``
  tuples) or a TREC file, written as TREC text, gzipped for an upload. The engine
  (:mod:`evaluation.trec.inputs`) reads the same inputs through it, so a run scored
  locally is the run the platform will score.

Imports: the standard library only (the HTTP client adds ``httpx``); nothing of
:mod:`evaluation` or :mod:`leaderboard`, which may import this package, never the
reverse. pandas and ranx are never imported: their objects are recognised by what they
have (``columns``, ``to_dict``), so neither needs to be installed.
"""

from rrl.trec import qrels_text, run_gzip, run_text, write_run

__all__ = ["qrels_text", "run_gzip", "run_text", "write_run"]
