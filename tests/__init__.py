"""The test suite mirrors the code: ``tests/evaluation/<package>/`` and
``tests/leaderboard/<package>/`` hold the tests of ``evaluation/<package>/`` and
``leaderboard/<package>/``; helpers shared by a tree's sub-folders sit at its top.

Paths to the repository's files are taken from here, never counted up from a test's own
file (``parents[n]``), so a test can move between folders without changing what it reads.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
DEMO = ROOT / "leaderboard" / "demo"
