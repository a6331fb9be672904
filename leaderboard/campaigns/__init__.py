"""The campaign's pages that change something: a team's final runs
(``/benchmarks/<slug>/final-runs/``) and the organizers' pool page
(``/benchmarks/<slug>/pool/``: build a pool, download its export).

- ``views``: those pages (thin: ``leaderboard.models.finals`` marks final runs,
  ``leaderboard.pipeline.tasks.queue_pool`` queues a pool).
- ``exports``: ``export_response``, a built pool's export as a download, which the
  organizer API serves too.

May import ``leaderboard.models``, ``leaderboard.pipeline`` (to queue a pool, to read its
stored file) and the pages' read layer (``reading.pools``, ``pages.shortcuts``); never the
API. The read-only campaign pages (a run's per-need results) are in ``leaderboard.pages``.
"""
