"""Generated TREC texts for the property tests: need and doc ids, the score and rank
texts, whole (qrels, run) collections, and the files written for one example."""

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


blanks = st.sampled_from([" ", "\t", "  ", " \t "])


@st.composite
def collections(draw):
    """Qrels and run text: needs out of order and unjudged, ties, negative and graded
    judgments, two tags, irregular blanks, an unterminated last line."""
    needs = draw(st.lists(ids, min_size=1, max_size=5, unique=True))
    docs = draw(st.lists(ids, min_size=1, max_size=25, unique=True))
    qrels, run = [], []
    for need in needs:
        judged = draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs)))
        for doc in judged:
            qrels.append(f"{need} 0 {doc} {draw(st.sampled_from(['-1', '0', '1', '2', '3']))}")
        if draw(st.booleans()) or need == needs[0]:
            for doc in draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs))):
                run.append((need, doc))
    for need in draw(st.lists(ids, max_size=2)):  # needs without judgments
        run.append((need, draw(st.sampled_from(docs))))
    run = list(dict.fromkeys(run)) or [(needs[0], docs[0])]
    if draw(st.booleans()):
        run = draw(st.permutations(run))
    sep = draw(blanks) if draw(st.booleans()) else " "
    tags = draw(st.sampled_from([["t"], ["t", "u"]]))
    lines = [
        sep.join([need, "Q0", doc, draw(numbers), draw(numbers), draw(st.sampled_from(tags))])
        for need, doc in run
    ]
    end = draw(st.sampled_from(["\n", ""]))
    return "\n".join(qrels) + "\n", "\n".join(lines) + end
