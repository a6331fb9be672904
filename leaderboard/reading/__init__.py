"""The read layer: what the pages and the API both read, computed once.

- ``boards``: ranked leaderboards (ranks with ties, tests against #1, measure names).
- ``pairs``: one pair's paired scores and tests (stored or fresh), the all-pairs matrix.
- ``comparisons``: two runs compared on a measure (``comparison``).
- ``exports``: the CSV and JSON downloads (leaderboard, per-need, comparison).
- ``runs``: one run's per-need table (the benchmark's measures first, sorted by its primary).
- ``visibility``: what a reader may see (404 otherwise), and ``Problem``.
- ``lenses``: which judgments row (version, public/private part) a reader's scores are on.
- ``summaries``: the organizers' campaign summary (runs per team, the latest pool, Judged@k).

HTML views (``leaderboard.pages``) and DRF views (``leaderboard.api``) call these;
neither imports the other, and nothing here renders a template.
"""
