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


def image_environment() -> dict[str, str]:
    """What the Dockerfile's ``ENV`` lines set for every process of the image."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.split()[1:] for line in text.splitlines() if line.startswith("ENV ")]
    return dict(pair.split("=", 1) for pairs in lines for pair in pairs)
