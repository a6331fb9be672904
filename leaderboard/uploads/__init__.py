"""The participant's upload flow: the submit form, its validation, the run's live
status and the participant's own runs (``/benchmarks/<slug>/submit/``,
``/submissions/<id>/status/``, ``/accounts/runs/``).

- ``forms``: ``SubmissionForm`` (size, name, a first look at the file's head).
- ``views``: the pages, and ``receive_run``, the one path a run takes into the platform
  (the API's submit endpoint calls it too, so both refuse the same files for the same
  reasons and share the daily limit).

May import ``leaderboard.models``, ``leaderboard.pipeline`` (to queue scoring) and the
pages' shortcuts; never the API.
"""
