"""The layout's rules, read from the source with ``ast`` (nothing is imported):

- no import circle between the modules of ``evaluation`` and ``leaderboard``: none at
  module level, and none hidden by moving an import into a function either (a circle
  such as ``models -> tasks -> ... -> models`` can hide there); only imports under
  ``if TYPE_CHECKING:`` are left out, as they never run;
- the engine imports nothing of the platform, and no Django; inside it, ``trec`` reads
  files and imports no other sub-package, ``measures`` imports only ``trec``,
  ``significance`` neither;
- a model never imports the pipeline, a page, the API or the accounts;
- the reader's pages never import the pipeline (they read, never write);
- pages and API read through one layer, ``leaderboard.reading``: the API imports no page
  (nothing of ``leaderboard.pages``, no ``views`` module but its own), and the read layer
  imports neither (nor the pipeline, nor the uploads);
- the client, ``rrl``, imports nothing of the engine or the platform, and nothing outside
  the standard library but its HTTP library (``httpx``): a participant installs it
  without numpy, pandas or Django; the engine may import it (``evaluation.trec.inputs``
  reads runs held in Python through ``rrl.trec``, so both read them alike);
- every sub-package opens with a docstring, and no module passes 400 lines unless it is
  on ``LONG_MODULES``, a short list that gives each one's reason; a module on the list
  that is back under 400 lines leaves it.

An edge goes from a module to what it names: ``import a.b`` and ``from a import b`` to
module ``a.b`` when that is a module of the project, else to ``a`` (a package means its
``__init__``). Python's implicit import of parent packages is not an edge: a package
whose ``__init__`` re-exports its modules is not a circle with them, as long as those
modules import each other by their own paths.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("evaluation", "leaderboard", "rrl")
CLIENT_LIBRARIES = {"httpx"}
MAX_LINES = 400
# The only modules allowed past MAX_LINES, each with the reason it is one module. Nothing
# else passes: a docstring cannot buy an exemption. A module leaves the list when it is
# split or shrinks back under the limit (the test below fails on an entry that is short).
LONG_MODULES = {
    "leaderboard/reading/boards.py": "a board's rows, ranks, best-per-team filter and tests "
    "against #1 are one computation whose decisions read best together",
    "evaluation/measures/ranking.py": "the one ordering of a run, the qrels join and the "
    "Ranking they build are one concern",
    "evaluation/measures/catalog.py": "the measure table and its two name systems; split, "
    "there would be two places that name measures",
    "evaluation/trec/parsing.py": "the Arrow parse, the whitespace normalisation and the "
    "line-by-line explainer must agree on what a line is, so they stay side by side",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            modules[module_name(path)] = path
    return modules


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_in(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import of a module, at module level or deferred into a function or class,
    in source order; not those under ``if TYPE_CHECKING:`` (they never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            skipped.update(id(inner) for child in node.body for inner in ast.walk(child))
    found = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in skipped
    ]
    return sorted(found, key=lambda node: (node.lineno, node.col_offset))


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is a module of the project."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def _absolute(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        targets: set[str] = set()
        for node in imports_in(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                source = _absolute(node, name, path.name == "__init__.py")
                names = [f"{source}.{alias.name}" for alias in node.names]
            for imported in names:
                target = _resolve(imported, modules)
                if target is not None and target != name:
                    targets.add(target)
        graph[name] = targets
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as a list of modules (first == last), or None."""
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(graph, white)
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        colour[node] = grey
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if colour.get(target, black) == grey:
                return stack[stack.index(target) :] + [target]
            if colour.get(target) == white and (cycle := visit(target)):
                return cycle
        stack.pop()
        colour[node] = black
        return None

    for node in sorted(graph):
        if colour[node] == white and (cycle := visit(node)):
            return cycle
    return None


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(project_modules())


def test_no_import_circle(graph):
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_circle_finder_finds_circles():
    """The checker itself: a circle through three modules, a chain that is not one, a
    TYPE_CHECKING import (not an edge), a deferred import (an edge), a relative import."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    source = (
        "from typing import TYPE_CHECKING\n"
        "import p.x\n"
        "from p import y\n"
        "from .z import thing\n"
        "if TYPE_CHECKING:\n"
        "    from p.w import W\n"
        "def f():\n"
        "    from p.w import W\n"
    )
    nodes = imports_in(ast.parse(source))
    assert [(type(n).__name__, n.lineno) for n in nodes] == [
        ("ImportFrom", 1),
        ("Import", 2),
        ("ImportFrom", 3),
        ("ImportFrom", 4),
        ("ImportFrom", 8),
    ]
    relative = nodes[3]
    assert isinstance(relative, ast.ImportFrom)
    assert _absolute(relative, "p.q", is_package=False) == "p.z"
    assert _absolute(relative, "p", is_package=True) == "p.z"
    modules = dict.fromkeys(["p", "p.x", "p.y", "p.w"], Path("x.py"))
    assert _resolve("p.y.Thing", modules) == "p.y"
    assert _resolve("p.Thing", modules) == "p"
    assert _resolve("numpy.linalg", modules) is None


def _imports_of(graph: dict[str, set[str]], prefix: str) -> dict[str, set[str]]:
    return {
        name: targets
        for name, targets in graph.items()
        if name == prefix or name.startswith(prefix + ".")
    }


def _forbidden(graph, prefix: str, banned: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{name} -> {target}"
        for name, targets in _imports_of(graph, prefix).items()
        for target in targets
        if any(target == b or target.startswith(b + ".") for b in banned)
    )


def test_the_engine_imports_nothing_of_the_platform(graph):
    assert _forbidden(graph, "evaluation", ("leaderboard",)) == []
    for name, path in project_modules().items():
        if name.startswith("evaluation"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    roots = [alias.name.split(".")[0] for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    roots = [(node.module or "").split(".")[0]]
                else:
                    continue
                assert "django" not in roots, f"{name} imports Django"


def _third_party_roots(path: Path) -> set[str]:
    """The top-level names a module imports (deferred imports too) that are neither the
    standard library's nor one of this repository's packages."""
    roots = set()
    for node in imports_in(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif not node.level:
            roots.add((node.module or "").split(".")[0])
    return roots - set(sys.stdlib_module_names) - set(PACKAGES) - {"__future__"}


def test_the_client_stands_alone(graph):
    assert _forbidden(graph, "rrl", ("evaluation", "leaderboard")) == []
    outside = {
        name: sorted(_third_party_roots(path) - CLIENT_LIBRARIES)
        for name, path in project_modules().items()
        if name == "rrl" or name.startswith("rrl.")
    }
    assert {name: roots for name, roots in outside.items() if roots} == {}


def test_layers_point_one_way(graph):
    engine = ("evaluation.measures", "evaluation.significance", "evaluation.cli")
    assert _forbidden(graph, "evaluation.trec", engine) == []
    assert _forbidden(graph, "evaluation.measures", engine[1:]) == []
    assert _forbidden(graph, "evaluation.significance", ("evaluation.trec", *engine[::2])) == []
    layers = ("leaderboard.pipeline", "leaderboard.pages", "leaderboard.api")
    assert _forbidden(graph, "leaderboard.models", (*layers, "leaderboard.accounts")) == []
    assert _forbidden(graph, "leaderboard.pipeline", layers[1:] + ("leaderboard.uploads",)) == []
    assert _forbidden(graph, "leaderboard.pages", ("leaderboard.pipeline", "leaderboard.api")) == []
    assert _forbidden(graph, "leaderboard.uploads", ("leaderboard.api",)) == []
    reading = (
        "leaderboard.pages",
        "leaderboard.api",
        "leaderboard.pipeline",
        "leaderboard.uploads",
    )
    assert _forbidden(graph, "leaderboard.reading", reading) == []


def page_modules(graph: dict[str, set[str]]) -> tuple[str, ...]:
    """The pages: ``leaderboard.pages`` and every ``views`` module but the API's own."""
    views = sorted(
        name
        for name in graph
        if name.rsplit(".", 1)[-1] == "views" and not name.startswith("leaderboard.api.")
    )
    return ("leaderboard.pages", *views)


def test_the_api_imports_no_page(graph):
    """What the API shares with a page (the upload flow's ``receive_run``, a pool's
    download) lives in a module of its own that both import, never in the page's views."""
    pages = page_modules(graph)
    assert {"leaderboard.uploads.views", "leaderboard.campaigns.views"} <= set(pages)
    assert _forbidden(graph, "leaderboard.api", pages) == []


def long_modules(lengths: dict[str, int], allowed: dict[str, str]) -> list[str]:
    """What the size rule reports, given each module's line count: a module past
    ``MAX_LINES`` that is not on ``allowed``, and an entry of ``allowed`` that is missing
    or no longer past the limit (so the list stays as short as the code allows)."""
    problems = [
        f"{name}: {lines} lines (at most {MAX_LINES} unless on LONG_MODULES)"
        for name, lines in sorted(lengths.items())
        if lines > MAX_LINES and name not in allowed
    ]
    problems += [
        f"{name}: on LONG_MODULES but {lengths[name]} lines; take it off the list"
        if name in lengths
        else f"{name}: on LONG_MODULES but no such module"
        for name in sorted(allowed)
        if lengths.get(name, 0) <= MAX_LINES
    ]
    return problems


def test_the_size_rule_takes_no_word_for_a_reason():
    """The rule reads line counts and the list, never a docstring: a long module whose
    docstring explains itself still fails unless it is listed."""
    lengths = {"a.py": MAX_LINES + 1, "b.py": MAX_LINES, "c.py": 900}
    assert long_modules(lengths, {"c.py": "why"}) == [
        f"a.py: {MAX_LINES + 1} lines (at most {MAX_LINES} unless on LONG_MODULES)"
    ]
    assert long_modules(lengths, {"a.py": "why", "c.py": "why", "b.py": "why", "d.py": "why"}) == [
        f"b.py: on LONG_MODULES but {MAX_LINES} lines; take it off the list",
        "d.py: on LONG_MODULES but no such module",
    ]
    assert all(reason.strip() for reason in LONG_MODULES.values())


def test_sub_packages_say_what_they_hold_and_modules_stay_short():
    problems = []
    lengths = {}
    for name, path in project_modules().items():
        text = path.read_text(encoding="utf-8")
        docstring = ast.get_docstring(ast.parse(text)) or ""
        if path.name == "__init__.py" and "management" not in name:
            if "import" not in docstring:
                problems.append(f"{name}: no docstring saying what lives here and may import")
        lengths[path.relative_to(ROOT).as_posix()] = text.count("\n")
    assert problems + long_modules(lengths, LONG_MODULES) == []


# --- Stored files are read through the storage layer -----------------------

STORAGE_LAYER = "leaderboard.pipeline.files"


def stored_path_uses(tree: ast.AST) -> list[int]:
    """Lines asking a stored file or a storage for a local path (``x.file.path``,
    ``storage.path(name)``): there is none when files live in a bucket."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "path":
            owner = node.value
            name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
            if name == "file" or name.endswith("storage"):
                lines.append(node.lineno)
    return lines


def test_the_path_finder_finds_stored_paths_only():
    source = (
        "a = judgments.file.path\nb = default_storage.path(n)\nc = self.storage.path(n)\n"
        "d = os.path.join(x)\ne = request.path\nf = settings.BASE_DIR.path\n"
    )
    assert stored_path_uses(ast.parse(source)) == [1, 2, 3]


def test_only_the_storage_layer_asks_for_a_stored_files_path():
    """Workers read through ``pipeline/files.py`` (a temporary copy from a bucket), so a
    web process and a worker on different hosts both find every file."""
    found = [
        f"{name}:{line}"
        for name, path in project_modules().items()
        if name != STORAGE_LAYER
        for line in stored_path_uses(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == []
