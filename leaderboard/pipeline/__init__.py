"""Background work: everything that turns files into stored scores and tests.

- ``files``: content hashes of stored files.
- ``loading``: needs and judgments files into a benchmark (a new judgments version
  queues every live run for rescoring).
- ``scoring``: one run file -> the engine -> a ``Result`` (what ``score_submission`` runs).
- ``comparing``: a scored run against every other one -> ``Comparison`` rows.
- ``notify``: the mail to a participant when a run is scored or fails (once per run).
- ``tasks``: the thin Celery tasks, and the one place that sends them (``queue_*``).

The only place that calls the engine (``evaluation``) to write scores. May import
``leaderboard.models`` and ``evaluation``; never the pages, the API or the accounts.
"""
