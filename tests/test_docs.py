"""The docs are reference, not a diary, and they keep up with the code.

- size: README.md and the docs that tend to grow stay within the lines a reader reads;
- no history in the docs, the README, code comments and docstrings, the Makefile and the
  deployment files: no development rounds, issue or session numbers, ISO dates, machine
  names, worktrees, or ``before -> after`` timings. What changed and what it measured goes
  in the commit message; ``docs/performance.md`` names its machine once;
- ``docs/architecture.md`` lists every module of ``evaluation``, ``leaderboard`` and
  ``rrl`` on a line of its own, and no module that does not exist;
- the settings table is in one place, ``docs/settings.md``, and names every variable
  ``leaderboard/settings.py`` reads and ``.env.example`` sets;
- the README links every page under ``docs/``;
- ``docs/engine.md``'s module table names the engine's modules, and only those;
- the Python shown in the docs imports what it calls;
- the command lines shown in ```sh blocks are accepted: ``make`` targets exist, ``rrl``,
  ``manage.py`` and ``python -m evaluation`` lines parse, README's engine lines run on
  the demo, ``docker compose`` lines name services and profiles of docker-compose.yml.

The files are read as text, Python through ``tokenize`` and ``ast``; only the checks of
what the docs show a user (measure names, imports) import the packages they name.
Left out of the history check: the test fixtures (data files, some of them dated by their
authors), Django's migrations (generated with a date in their header; a migration is a
record of a change by design), and this file, which spells the patterns out.
"""

from __future__ import annotations

import ast
import contextlib
import gzip
import io
import re
import shlex
import tokenize
from pathlib import Path

import pytest

from tests import image_environment

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PACKAGES = ("evaluation", "leaderboard", "rrl")

MAX_LINES = {
    "README.md": 250,
    "docs/engine.md": 600,
    "docs/performance.md": 150,
    "docs/scaling.md": 250,
}

ORDINALS = (
    "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth"
    "|thirteenth|earlier|previous|this|next|last|latest|another"
)
UNIT = r"(?:s|ms|µs|MB|GB|GiB|MiB|KB|%|x)"
HISTORY = {
    "a development round": re.compile(rf"\b(?:{ORDINALS})\s+rounds?\b|\brounds?\s+\d+\b", re.I),
    "an issue number": re.compile(r"\b(?:issues?|PR|pull request)\s*#?\s*\d+\b", re.I),
    "a work session": re.compile(r"\bsessions?\s+\d+\b|\bsession['’]s\s+(?:VM|machine)\b", re.I),
    "an ISO date": re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b"),
    "a worktree": re.compile(r"\bworktrees?\b|/work/wt/", re.I),
    "a before -> after reading": re.compile(
        rf"\d\s*{UNIT}?\)?\s*(?:->|→)\s*~?\d[\d.,]*(?:-[\d.,]+)?\s*{UNIT}\b"
    ),
}
MACHINE = re.compile(r"\b(?:Intel|Xeon|EPYC|AMD|Ryzen|VMs?)\b")

# Files whose whole text is checked: docs, and the build and deployment files.
TEXT_FILES = (
    "README.md",
    "Makefile",
    "Dockerfile",
    "docker-compose.yml",
    ".env.example",
    "pyproject.toml",
    ".ci/run",
)
# Python whose comments and docstrings are checked.
PYTHON_ROOTS = ("evaluation", "leaderboard", "rrl", "bench", "tests")
SKIPPED = {Path(__file__).resolve()}


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def python_files(*roots: str) -> list[Path]:
    found = []
    for root in roots:
        for path in sorted((ROOT / root).rglob("*.py")):
            parts = path.relative_to(ROOT).parts
            if "migrations" in parts or "fixtures" in parts or ".venv" in parts:
                continue
            found.append(path)
    return found


def prose_of_python(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every comment and every docstring-like string statement."""
    source = path.read_text(encoding="utf-8")
    lines = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            lines.append((token.start[0], token.string))
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            for offset, text in enumerate(node.value.value.splitlines()):
                lines.append((node.lineno + offset, text))
    return lines


def prose_of_text(path: Path) -> list[tuple[int, str]]:
    return list(enumerate(path.read_text(encoding="utf-8").splitlines(), start=1))


def checked_files() -> list[tuple[str, list[tuple[int, str]]]]:
    files = [(relative(p), prose_of_text(p)) for p in sorted(DOCS.glob("*.md"))]
    files += [(name, prose_of_text(ROOT / name)) for name in TEXT_FILES if (ROOT / name).exists()]
    for path in python_files(*PYTHON_ROOTS):
        name = relative(path)
        if path.resolve() in SKIPPED:
            continue
        files.append((name, prose_of_python(path)))
    return files


def history_in(lines: list[tuple[int, str]]) -> list[tuple[int, str, str]]:
    return [
        (number, what, match.group(0))
        for number, text in lines
        for what, pattern in HISTORY.items()
        for match in pattern.finditer(text)
    ]


@pytest.mark.parametrize("name", sorted(MAX_LINES))
def test_docs_stay_short(name):
    lines = (ROOT / name).read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES[name], f"{name}: {lines} lines, at most {MAX_LINES[name]}"


def test_no_history_in_docs_comments_or_docstrings():
    found = [
        f"{name}:{number}: {what} ({text!r})"
        for name, lines in checked_files()
        for number, what, text in history_in(lines)
    ]
    assert not found, "History belongs in the commit message; say why, not when:\n" + "\n".join(
        found
    )


def test_machines_are_named_once_in_the_performance_page():
    found = []
    for name, lines in checked_files():
        hits = [(n, t) for n, t in lines if MACHINE.search(t)]
        if name == "docs/performance.md":
            assert len(hits) == 1, f"{name} names its machine on {len(hits)} lines, not one"
        else:
            found += [f"{name}:{n}: {MACHINE.search(t).group(0)!r}" for n, t in hits]
    assert not found, "A machine is named in docs/performance.md only:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("### Fifth round: the small reader", "a development round"),
        ("see docs/engine.md, Tenth round", "a development round"),
        ("the shapes of issue #16", "an issue number"),
        ("Benchmark health (issue 17)", "an issue number"),
        ("on session 11's VM", "a work session"),
        ("measured 2026-12-03 16:32 UTC", "an ISO date"),
        ("in the worktree of the platform", "a worktree"),
        ("a 7M-line run: 3.0 -> 2.2-2.5 s", "a before -> after reading"),
        ("peak 1.21 GB -> 1.16 GB", "a before -> after reading"),
    ],
)
def test_the_history_patterns_catch_diary_words(text, what):
    assert [w for _, w, _ in history_in([(1, text)])] == [what]


@pytest.mark.parametrize(
    "text",
    [
        "scores round half away from zero; a round axis bound; kombu's round robin",
        "tests against #1; the leader is #1",
        "(long)(r * R + 0.9) -> 2 relevant documents",
        "def f(x: int) -> float:",
        "A 0 -> 0.35; B 1, 1, 1, 1 -> 1",
        "request.session and SESSION_COOKIE_AGE",
    ],
)
def test_the_history_patterns_leave_ordinary_words_alone(text):
    assert history_in([(1, text)]) == []


# --- docs/architecture.md: every module on a line of its own ----------------------------

LISTED = re.compile(r"^- `((?:evaluation|leaderboard|rrl)/[\w/]+\.py)`")
MENTIONED = re.compile(r"(?<![\w/])((?:evaluation|leaderboard|rrl)/[\w/]+\.py)\b")


def modules_on_disk() -> set[str]:
    return {relative(p) for p in python_files(*PACKAGES)}


def test_architecture_lists_every_module_and_only_those():
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    listed = [m.group(1) for line in text.splitlines() if (m := LISTED.match(line))]
    on_disk = modules_on_disk()
    missing = sorted(on_disk - set(listed))
    gone = sorted(set(listed) - on_disk)
    twice = sorted({m for m in listed if listed.count(m) > 1})
    problems = []
    if missing:
        problems.append(
            "add a line '- `path`: what it does' under its package for:\n  " + "\n  ".join(missing)
        )
    if gone:
        problems.append("remove the lines of modules that do not exist:\n  " + "\n  ".join(gone))
    if twice:
        problems.append("list once:\n  " + "\n  ".join(twice))
    assert not problems, "docs/architecture.md (migrations excepted):\n" + "\n".join(problems)


def test_the_docs_mention_no_module_that_does_not_exist():
    on_disk = modules_on_disk()
    found = []
    for path in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for number, line in prose_of_text(path):
            for match in MENTIONED.finditer(line):
                name = match.group(1)
                if "migrations" not in name and name not in on_disk:
                    found.append(f"{relative(path)}:{number}: {name}")
    assert not found, "Modules named in the docs that do not exist:\n" + "\n".join(found)


# --- settings: one table, every variable -------------------------------------------------

SETTINGS_READ = re.compile(r"""\benv\w*\(\s*["']([A-Z][A-Z0-9_]+)["']""")
ENV_EXAMPLE = re.compile(r"^#?\s*([A-Z][A-Z0-9_]+)=", re.M)
TABLE_ROW = re.compile(r"^\|\s*`([A-Z][A-Z0-9_]+)`")
TABLE_NAMES = re.compile(r"`([A-Z][A-Z0-9_]+)`")


def settings_read() -> dict[str, object]:
    """Every variable ``leaderboard/settings.py`` reads through a helper of
    ``leaderboard/environment.py`` (``env_int``, ``queue_name``, ``broker_url``, ...), with
    its default when that is a literal (else ``...``)."""
    environment = ast.parse((ROOT / "leaderboard/environment.py").read_text())
    helpers = {node.name for node in environment.body if isinstance(node, ast.FunctionDef)}
    read: dict[str, object] = {}
    for node in ast.walk(ast.parse((ROOT / "leaderboard/settings.py").read_text())):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        called = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        name = node.args[0]
        if called in helpers and isinstance(name, ast.Constant) and isinstance(name.value, str):
            default = node.args[1] if len(node.args) > 1 else None
            default = next((k.value for k in node.keywords if k.arg == "default"), default)
            read[name.value] = default.value if isinstance(default, ast.Constant) else ...
    return read


def settings_variables() -> set[str]:
    read = set(SETTINGS_READ.findall((ROOT / "leaderboard/settings.py").read_text()))
    read |= set(settings_read())
    example = set(ENV_EXAMPLE.findall((ROOT / ".env.example").read_text()))
    return read | example | set(image_environment())


def table_variables(path: Path) -> set[str]:
    names = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if TABLE_ROW.match(line):
            names.update(TABLE_NAMES.findall(line.split("|")[1]))
    return names


def test_settings_md_has_every_variable():
    assert settings_variables(), "no variable found: the patterns no longer fit settings.py"
    documented = table_variables(DOCS / "settings.md")
    missing = sorted(settings_variables() - documented)
    unknown = sorted(documented - settings_variables())
    assert not missing, f"docs/settings.md: add rows for {', '.join(missing)}"
    assert not unknown, f"docs/settings.md: no such variable, remove {', '.join(unknown)}"


def test_the_settings_table_gives_the_defaults_the_code_has():
    """A row's default, when it is a value (`` `60` ``, `` `INFO` ``; a switch `` `1` `` or
    `` `0` ``), is what settings.py falls back to."""
    rows = {}
    for line in (DOCS / "settings.md").read_text(encoding="utf-8").splitlines():
        if match := re.match(r"^\| `([A-Z][A-Z0-9_]+)` \| ([^|]*) \|", line):
            rows[match[1]] = match[2].strip()
    read = settings_read()
    assert {"LEASE_SECONDS", "CELERY_QUEUE", "DEBUG"} <= set(read), read
    wrong = []
    for name, default in read.items():
        if name not in rows or default is ... or default in ("", None):
            continue
        shown = str(int(default)) if isinstance(default, bool) else str(default)
        if not rows[name].startswith(f"`{shown}`"):
            wrong.append(f"{name}: table {rows[name]!r}, settings.py {shown!r}")
    assert not wrong, "docs/settings.md's defaults differ from settings.py:\n" + "\n".join(wrong)


def test_the_settings_table_is_in_one_place():
    variables = settings_variables()
    elsewhere = [
        f"{relative(path)}: {', '.join(sorted(table_variables(path) & variables))}"
        for path in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
        if path.name != "settings.md" and table_variables(path) & variables
    ]
    assert not elsewhere, "Settings rows outside docs/settings.md:\n" + "\n".join(elsewhere)


def test_the_readme_links_every_doc():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in sorted(DOCS.glob("*.md")) if f"(docs/{p.name})" not in readme]
    assert not missing, f"README.md: add to the index of the docs: {', '.join(missing)}"


# --- docs/engine.md: the name table agrees with the catalog ------------------------------


def name_pairs() -> list[tuple[str, str]]:
    """(ir_measures name, trec_eval column) of every cell pair of engine.md's name table,
    ``k`` read as 10 and ``r`` as 0.10."""
    text = (DOCS / "engine.md").read_text(encoding="utf-8")
    table = text[text.index("| ir_measures | trec_eval |") :].split("\n\n")[0].splitlines()[2:]
    pairs = []
    for row in table:
        cells = [c.strip() for c in row.strip("|").split("|")]
        for ir, trec in (cells[0:2], cells[3:5]):
            ir_names = re.findall(r"`([^`]+)`", ir)
            trec_names = re.findall(r"`([^`]+)`", trec)
            assert len(ir_names) == len(trec_names), f"engine.md: {row}"
            for a, b in zip(ir_names, trec_names, strict=True):
                a = a.replace("@k", "@10").replace("@r", "@0.10")
                b = re.sub(r"_k$", "_10", b).replace("recall_r", "recall_0.10")
                pairs.append((a, b))
    return pairs


def test_the_engine_name_table_is_the_catalog():
    from evaluation.measures import resolve

    pairs = name_pairs()
    assert len(pairs) >= 20, pairs
    wrong = [
        f"{a}: table {b}, catalog {resolve(a).column}" for a, b in pairs if resolve(a).column != b
    ]
    assert not wrong, "docs/engine.md's name table:\n" + "\n".join(wrong)


# --- references into the docs point at pages and sections that exist ---------------------

DOC_SECTION = re.compile(r"\b(README(?:\.md)?|docs/\w+\.md)[,:]?\s*\(?\"([^\"]+)\"")
DOC_PAGE = re.compile(r"(?<![\w/])docs/(\w+\.md)")


def headings(path: Path) -> set[str]:
    return {
        line.lstrip("#").strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    }


def test_references_to_the_docs_exist():
    found = []
    for name, lines in checked_files():
        for number, text in lines:
            for match in DOC_PAGE.finditer(text):
                if not (DOCS / match.group(1)).exists():
                    found.append(f"{name}:{number}: no page docs/{match.group(1)}")
            for match in DOC_SECTION.finditer(text):
                page = ROOT / (
                    "README.md" if match.group(1).startswith("README") else match.group(1)
                )
                if page.exists() and not any(h.startswith(match.group(2)) for h in headings(page)):
                    found.append(
                        f"{name}:{number}: no section {match.group(2)!r} in {relative(page)}"
                    )
    assert not found, "References to the docs that lead nowhere:\n" + "\n".join(found)


def test_the_reference_patterns_find_sections_and_pages():
    text = 'see README, "Many workers" and (docs/engine.md, "Speed") and docs/nowhere.md'
    assert [m.groups() for m in DOC_SECTION.finditer(text)] == [
        ("README", "Many workers"),
        ("docs/engine.md", "Speed"),
    ]
    assert [m.group(1) for m in DOC_PAGE.finditer(text)] == ["engine.md", "nowhere.md"]
    assert "Speed" not in headings(DOCS / "engine.md")


# --- docs/engine.md's module table is the engine's tree ----------------------------------


def engine_table() -> list[str]:
    """The modules and sub-packages named in the first column of engine.md's module table,
    relative to ``evaluation/`` (``trec/readers.py``, ``significance/``)."""
    text = (DOCS / "engine.md").read_text(encoding="utf-8")
    table = text[text.index("| module | concern |") :].split("\n\n")[0].splitlines()[2:]
    return [name for row in table for name in re.findall(r"`([\w/.]+)`", row.split("|")[1])]


def test_the_engine_module_table_is_the_tree():
    engine = ROOT / "evaluation"
    listed = engine_table()
    folders = [name for name in listed if name.endswith("/")]
    gone = sorted(name for name in listed if not (engine / name).exists())
    missing = sorted(
        module
        for path in engine.rglob("*.py")
        if not (module := path.relative_to(engine).as_posix()).endswith("/__init__.py")
        and module not in listed
        and not any(module.startswith(folder) for folder in folders)
    )
    assert not gone, f"docs/engine.md's module table names what is not in evaluation/: {gone}"
    assert not missing, f"docs/engine.md's module table: add a row for {missing}"


# --- Python shown in the docs: what it calls, it imports ---------------------------------


def python_blocks() -> list[tuple[str, ast.Module]]:
    """(page, parsed code) of every ```python block that is Python (signatures with
    ``-> type`` are not: they are read, not pasted)."""
    blocks = []
    for path in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for code in re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S):
            try:
                blocks.append((relative(path), ast.parse(code)))
            except SyntaxError:
                continue
    return blocks


def test_the_docs_python_imports_what_it_uses():
    """Pasted into a notebook, each example runs as far as its placeholders (``frame``,
    ``password``): its imports work, and every function it calls by bare name and every
    package of the project it names is imported in the block itself."""
    import builtins
    import importlib

    blocks = python_blocks()
    assert len(blocks) >= 4, blocks
    problems = []
    for page, tree in blocks:
        bound = set(dir(builtins))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    bound.add(alias.asname or alias.name.split(".")[0])
                    module = node.module if isinstance(node, ast.ImportFrom) else alias.name
                    if module.split(".")[0] not in PACKAGES:
                        continue
                    imported = importlib.import_module(module)
                    if isinstance(node, ast.ImportFrom) and not hasattr(imported, alias.name):
                        problems.append(f"{page}: {module} has no {alias.name}")
            elif isinstance(node, ast.Assign):
                bound.update(t.id for t in node.targets if isinstance(t, ast.Name))
        for node in ast.walk(tree):
            called = isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            name = node.func.id if called else getattr(node, "id", None)
            if name and name not in bound and (called or name in PACKAGES):
                problems.append(f"{page}: {name} is used but not imported")
    assert not problems, "Examples a reader cannot paste:\n" + "\n".join(sorted(set(problems)))


# --- the command lines the docs show -----------------------------------------------------


def shell_commands() -> list[tuple[str, list[str]]]:
    """(page, argv) of every command in the docs' ```sh blocks: continuation lines joined,
    comments dropped, ``;`` and ``&&`` separating commands, ``NAME=value`` prefixes kept."""
    found = []
    for path in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for block in re.findall(r"```(?:sh|bash|shell)\n(.*?)```", text, re.S):
            for line in block.replace("\\\n", " ").splitlines():
                command: list[str] = []
                for word in [*shlex.split(line, comments=True), ";"]:
                    if word in (";", "&&") or word.endswith(";"):
                        command += [word[:-1]] if len(word) > 1 and word != "&&" else []
                        if command:
                            found.append((relative(path), command))
                        command = []
                    else:
                        command.append(word)
    return found


def commands_of(program: str) -> list[tuple[str, list[str]]]:
    """The commands that run ``program`` (after any ``NAME=value``), with its arguments."""
    picked = []
    for page, argv in shell_commands():
        while argv and re.fullmatch(r"[A-Z_]+=\S*", argv[0]):
            argv = argv[1:]
        if argv[: len(program.split())] == program.split():
            picked.append((page, argv[len(program.split()) :]))
    return picked


def refused(parse, argv: list[str]) -> str | None:
    """What argparse says of ``argv`` (None: accepted)."""
    error = io.StringIO()
    try:
        with contextlib.redirect_stderr(error):
            parse(argv)
    except SystemExit as exit:
        return error.getvalue().strip().splitlines()[-1] if error.getvalue() else str(exit)
    except Exception as exc:  # Django's parser raises CommandError where argparse exits
        return str(exc)
    return None


def test_every_make_target_the_docs_name_exists():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([\w-]+):", makefile, re.M))
    named = commands_of("make")
    assert {"run", "test", "bench"} <= {argv[0] for _, argv in named}, named
    prose = {
        m.group(1)
        for path in [ROOT / "README.md", *DOCS.glob("*.md")]
        for m in re.finditer(r"`make (\w+)", path.read_text(encoding="utf-8"))
    }
    missing = sorted(({argv[0] for _, argv in named} | prose) - targets)
    assert not missing, f"the docs name make targets the Makefile lacks: {missing}"


def test_every_rrl_command_line_in_the_docs_parses():
    from rrl import cli

    lines = commands_of("rrl")
    assert len(lines) >= 30, lines
    wrong = [
        f"{page}: rrl {shlex.join(argv)}: {why}"
        for page, argv in lines
        if (why := refused(cli.parser().parse_args, argv))
    ]
    assert not wrong, "rrl commands in the docs that rrl refuses:\n" + "\n".join(wrong)


def test_rrl_is_installed_by_what_the_docs_install_before_it():
    """``pip install httpx && rrl ...`` leaves no ``rrl`` command: the project's
    distribution (its console script) must be what is installed."""
    project = re.search(r'^name = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)[1]
    for page, argv in shell_commands():
        if argv[:2] == ["pip", "install"]:
            line = [other for p, other in shell_commands() if p == page]
            follows = line[line.index(argv) + 1 :][:1]
            if follows and follows[0][0] == "rrl":
                assert project in argv[2:] or "." in argv[2:], f"{page}: {shlex.join(argv)}"


def test_every_manage_py_command_line_in_the_docs_parses():
    from django.core.management import get_commands, load_command_class

    lines = [
        (page, argv[argv.index("manage.py") + 1 :])
        for page, argv in shell_commands()
        if "manage.py" in argv
    ]
    assert len(lines) >= 5, lines
    commands = get_commands()
    wrong = []
    for page, (name, *args) in lines:
        if name not in commands:
            wrong.append(f"{page}: no command {name}")
            continue
        parser = load_command_class(commands[name], name).create_parser("manage.py", name)
        if why := refused(parser.parse_args, args):
            wrong.append(f"{page}: manage.py {name} {shlex.join(args)}: {why}")
    assert not wrong, "manage.py commands in the docs that Django refuses:\n" + "\n".join(wrong)


def test_every_evaluation_command_line_in_the_docs_parses():
    from evaluation.cli import compare, score

    lines = commands_of("python -m evaluation")
    assert len(lines) >= 7, lines
    parsers = {"compare": compare.build_parser().parse_args}
    wrong = [
        f"{page}: python -m evaluation {shlex.join(argv)}: {why}"
        for page, argv in lines
        if argv[0] not in ("power", "discrim", "tau", "poolbias")  # run below
        and (
            why := refused(
                parsers.get(argv[0], score._parser().parse_args), argv[argv[0] in parsers :]
            )
        )
    ]
    assert not wrong, "python -m evaluation lines the parser refuses:\n" + "\n".join(wrong)


def test_the_readme_engine_commands_run_on_the_demo(tmp_path, monkeypatch, capsys):
    """README's "The engine on the command line", each line run as written, on the
    demo's files under the names it uses: exit status 0 and some output."""
    import shutil

    from evaluation.__main__ import main
    from tests import DEMO, FIXTURES

    shutil.copy(DEMO / "qrels.txt", tmp_path / "qrels.txt")
    for name, source in (("run.txt", "run-A.txt"), ("runA.txt", "run-A.txt")):
        shutil.copy(DEMO / source, tmp_path / name)
    shutil.copy(DEMO / "run-B.txt", tmp_path / "runB.txt")
    (tmp_path / "runs").mkdir()
    shutil.copy(DEMO / "run-A.txt", tmp_path / "runs" / "a.txt")
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "b.gz").write_bytes(gzip.compress((DEMO / "run-B.txt").read_bytes()))
    shutil.copy(FIXTURES / "trec8-per-topic" / "adhoc8_ap.csv", tmp_path / "per-topic-ap.csv")
    monkeypatch.chdir(tmp_path)
    readme = [argv for page, argv in commands_of("python -m evaluation") if page == "README.md"]
    assert len(readme) >= 7, readme
    for argv in readme:
        try:
            status = main(argv)
        except SystemExit as exit:  # argparse refusing the line
            status = exit.code
        out, err = capsys.readouterr()
        assert status == 0 and out, f"python -m evaluation {shlex.join(argv)}: {status}\n{err}"


def test_the_docker_compose_commands_name_its_services_and_profiles():
    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    services = compose["services"]
    profiles = {p for service in services.values() for p in service.get("profiles", [])}
    lines = commands_of("docker compose")
    assert len(lines) >= 4, lines
    wrong = []
    for page, argv in lines:
        named = [argv[i + 1] for i, word in enumerate(argv[:-1]) if word == "exec"]
        named += [w.split("=")[0] for i, w in enumerate(argv[1:]) if argv[i] == "--scale"]
        wrong += [f"{page}: no service {name!r}" for name in named if name not in services]
        wanted = [argv[i + 1] for i, word in enumerate(argv[:-1]) if word == "--profile"]
        wrong += [f"{page}: no profile {name!r}" for name in wanted if name not in profiles]
    assert not wrong, "docker compose lines in the docs:\n" + "\n".join(wrong)
