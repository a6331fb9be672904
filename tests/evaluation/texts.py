"""Generated TREC texts for the tests that compare the command line's paths byte for byte
(``test_small.py``, ``test_plain.py``): need and doc ids, the score and rank texts the
readers must read alike, and the files written for one example."""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

ids = st.text(alphabet="abcXYZ019_-.:/", min_size=1, max_size=30)
numbers = st.one_of(
    st.integers(-3, 40).map(str),
    st.sampled_from(["1.5", "1.50", "01.5", "-0", "0.0", "-0.0", "1e1", "1E-1", "1e+1", ".5",
                     "5.", "-.25", "2.5e-0", "3.14159265358979323846", "123456789012.125"]),
    st.floats(-1e6, 1e6, allow_nan=False, width=64).map(repr),
)  # fmt: skip


def written(tmp_path_factory, collection: tuple[str, str], prefix: str) -> tuple[Path, Path]:
    """A generated (qrels text, run text) written to a fresh folder: (qrels, run) paths."""
    folder = tmp_path_factory.mktemp(prefix)
    qrels, run = folder / "qrels.txt", folder / "run.txt"
    qrels.write_text(collection[0])
    run.write_text(collection[1])
    return qrels, run
