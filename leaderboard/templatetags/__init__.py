"""Template filters (Django finds them by this package's name).

- ``measures``: ``{{ measure|label }}``, a measure's name as people see it.

They import ``leaderboard.reading`` only: a filter formats, it never reads or writes rows.
"""
