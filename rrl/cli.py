"""The ``rrl`` command (also ``python -m rrl``): log in, submit, follow and read runs.

    rrl --url https://lb.example.org login --username alice   # the password is asked
    rrl submit robust04 bm25.run.gz --name bm25 --wait
    rrl status 42 ; rrl runs --benchmark robust04 ; rrl board robust04 --measure P@10
    rrl compare robust04 41 42 ; rrl download robust04 --format json -o board.json
    rrl final 42 41   # the team's final runs, in priority order
    rrl results 42 --measure P_10
    rrl pool build robust04 --depth 100 --runs-per-team 2 --wait ; rrl pool export robust04
    rrl benchmark update robust04 --final-runs 2 ; rrl phase add robust04 Test --opens ...
    rrl judgments robust04 qrels-v2.txt   # the organizers' commands: rrl.organizing

The site and token come from ``--url``/``RRL_URL`` and ``RRL_TOKEN``, else from the
configuration ``login`` wrote (:mod:`rrl.config`). ``login`` takes the password from
``RRL_PASSWORD`` or a prompt (never an argument: it would stay in the shell's history).
Exit status: 0 done, 1 refused by the server or a failed run (the reason on stderr, a
run file's as ``file:line: reason``), 2 a usage error. ``--json`` prints the API's answer.
Progress goes to stderr as plain text (no extra dependency), results to stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import os
import sys

from rrl import config, organizing
from rrl.output import Progress as _Progress
from rrl.output import fail as _fail
from rrl.output import judgments_line as _judgments_line
from rrl.output import measure_label as _label
from rrl.output import number as _number
from rrl.output import print_json as _print_json
from rrl.output import print_phase as _print_phase
from rrl.output import print_summary as _print_summary
from rrl.output import print_table as _print_table
from rrl.output import print_warnings as _print_warnings
from rrl.output import utc as _utc

__all__ = ["main"]


def positive(text: str) -> int:
    """A run, pool or judgments number: a whole number from 1 (the server has no other)."""
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"a whole number from 1, not {text!r}")
    return number


URL_HELP = "The site's address (default: RRL_URL or the last login)."
JSON_HELP = "Print the API's JSON answer."


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="rrl", description="The leaderboard's client.")
    top.add_argument("--url", help=URL_HELP)
    top.add_argument("--json", action="store_true", help=JSON_HELP)
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    login = commands.add_parser("login", help="Get a token and keep it in the config file.")
    login.add_argument("--username", required=True)
    login.add_argument("--token-name", default="rrl", help="What the token is for.")

    submit = commands.add_parser("submit", help="Submit a TREC run file (plain or gzip).")
    submit.add_argument("benchmark", help="The benchmark's slug.")
    submit.add_argument("file")
    submit.add_argument("--name", help="The run's name (default: the file's tag).")
    submit.add_argument("--description", default="")
    submit.add_argument("--wait", action="store_true", help="Wait until it is scored.")

    status = commands.add_parser("status", help="One run's status and scores.")
    status.add_argument("id", type=positive)

    runs = commands.add_parser("runs", help="Your runs, newest first.")
    runs.add_argument("--benchmark")
    runs.add_argument("--status", choices=["queued", "running", "scored", "failed", "withdrawn"])

    board = commands.add_parser("board", help="A benchmark's leaderboard.")
    board.add_argument("benchmark")
    board.add_argument("--measure")
    board.add_argument(
        "--judgments", type=positive, help="A judgments version (default: the current)."
    )
    board.add_argument(
        "--needs", choices=["public", "private", "all"], help="Default: what the board shows you."
    )

    compare = commands.add_parser("compare", help="Two runs compared, with paired tests.")
    compare.add_argument("benchmark")
    compare.add_argument("a", type=positive)
    compare.add_argument("b", type=positive)
    compare.add_argument(
        "--measure", help="In either name system; by default the benchmark's primary measure."
    )
    compare.add_argument(
        "--judgments", type=positive, help="A judgments version (default: the current)."
    )
    compare.add_argument(
        "--needs", choices=["public", "private", "all"], help="Default: what the board shows you."
    )

    download = commands.add_parser("download", help="The leaderboard as CSV or JSON.")
    download.add_argument("benchmark")
    download.add_argument("--format", choices=["csv", "json"], default="csv")
    download.add_argument("-o", "--output", help="Where to write it.")

    withdraw = commands.add_parser("withdraw", help="Withdraw one of your runs, for good.")
    withdraw.add_argument("id", type=positive)

    final = commands.add_parser(
        "final", help="Mark your team's final runs, in priority order (none: show them)."
    )
    final.add_argument("ids", type=positive, nargs="*", metavar="RUN_ID")
    final.add_argument("--benchmark", help="Its slug (default: the first run's benchmark).")
    final.add_argument("--phase", help="Default: the phase open now.")
    final.add_argument("--clear", action="store_true", help="Unmark all: the latest count.")

    results = commands.add_parser(
        "results", help="A run's per-need values beside the best, median and worst runs."
    )
    results.add_argument("id", type=positive)
    results.add_argument("--measure", help="A stored measure (default: the primary one).")
    results.add_argument(
        "--judgments", type=positive, help="A judgments version (default: the current)."
    )
    results.add_argument(
        "--needs", choices=["public", "private", "all"], help="Default: what the board shows you."
    )

    organizing.add_commands(commands)
    _take_options_after(commands)
    return top


def _take_options_after(commands: argparse._SubParsersAction) -> None:
    """``--url`` and ``--json`` after the command too (``rrl runs --json``), as people
    type them: each command's copy has no default of its own (SUPPRESS), so it leaves a
    value given before the command alone unless given again."""
    for command in {id(sub): sub for sub in commands.choices.values()}.values():
        command.add_argument("--url", default=argparse.SUPPRESS, help=URL_HELP)
        command.add_argument(
            "--json", action="store_true", default=argparse.SUPPRESS, help=JSON_HELP
        )
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                _take_options_after(action)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    path = config.config_path()
    try:
        settings = config.resolve(args.url, path)
    except ValueError as error:
        return _fail(str(error))
    if settings.url is None:
        return _fail("which site? Give --url URL (or set RRL_URL), or log in first.", 2)

    import httpx

    from rrl.client import ApiError, Client, Conflict, RunFailed

    try:
        with Client(settings.url, settings.token) as client:
            return COMMANDS[args.command](client, args, path)
    except BrokenPipeError:  # `rrl runs | head`: the reader has what it wanted
        with contextlib.suppress(OSError, ValueError):  # no flush error at exit either
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except httpx.TransportError as error:  # down, unreachable, or an answer lost
        said = f"cannot reach {settings.url}: {error or type(error).__name__}"
        if args.command == "submit":  # the run may have arrived before the answer was lost
            said += (
                f"\nthe run may have been stored: `rrl runs --benchmark {args.benchmark}` "
                "lists your runs"
            )
        return _fail(said)
    except RunFailed as error:
        print(
            f"run {error.run.get('run_name')} (id {error.run.get('id')}) failed:", file=sys.stderr
        )
        print(error.reason, file=sys.stderr)
        return 1
    except Conflict as error:
        existing = error.existing
        where = existing.get("url") or existing.get("run_name", "")
        return _fail(f"{error.error}\nexisting run: {where}" if where else error.error)
    except ApiError as error:
        return _fail(error.error)
    except (OSError, ValueError, TimeoutError) as error:
        return _fail(str(error))
    except KeyboardInterrupt:
        return 130


# --- The commands ---------------------------------------------------------------------


def login(client, args, path) -> int:
    password = os.environ.get("RRL_PASSWORD") or getpass.getpass(f"Password for {args.username}: ")
    token = client.login(args.username, password, name=args.token_name)
    config.save_token(path, client.url, token)
    print(f"Logged in to {client.url} as {args.username}; token kept in {path}")
    return 0


def submit(client, args, path) -> int:
    run = client.submit(
        args.benchmark,
        args.file,
        name=args.name,
        description=args.description,
        wait=args.wait,
        progress=_Progress() if args.wait else None,
    )
    if args.json:
        return _print_json(run)
    board = client.board(args.benchmark)
    if not args.wait:
        print(f"Submitted run {run['run_name']} (id {run['id']}): {run['status']}")
        print(run["page"])
        _print_phase(board)
        return 0
    print(f"Run {run['run_name']} (id {run['id']}) is scored on {args.benchmark}:")
    _print_summary(run, [board["primary_measure"], *board["shown_measures"]])
    _print_warnings(run)
    print(run["page"])
    _print_phase(board)
    return 0


def status(client, args, path) -> int:
    run = client.status(args.id)
    if args.json:
        return _print_json(run)
    print(f"Run {run['run_name']} (id {run['id']}) on {run['benchmark']}: {run['status']}")
    if run["failure_reason"]:
        print(run["failure_reason"])
    if run.get("summary"):  # the measures its benchmark shows, as its pages and submit do
        board = client.board(run["benchmark"])
        _print_summary(run, [board["primary_measure"], *board["shown_measures"]])
    _print_warnings(run)
    return 0


def runs(client, args, path) -> int:
    found = client.runs(benchmark=args.benchmark, status=args.status)
    if args.json:
        return _print_json(found)
    rows = [
        (r["id"], r["benchmark"], r["run_name"], r["status"], _utc(r["submitted"])) for r in found
    ]
    _print_table(("id", "benchmark", "run", "status", "submitted"), rows)
    return 0


def board(client, args, path) -> int:
    answer = client.board(args.benchmark, args.measure, args.judgments, args.needs)
    if args.json:
        return _print_json(answer)
    leaderboard = answer["leaderboard"]
    measure = _label(leaderboard, leaderboard["ranked_by"])
    runs = leaderboard["runs"]
    teams = any(r.get("team") for r in runs)  # the team the run was submitted under
    rows = [
        (
            r["rank"] or "",
            r["run_name"],
            r["participant"],
            *((r.get("team") or "",) if teams else ()),
            _number(r["value"]),
            r["submission_id"],
        )
        for r in runs
    ]
    print(f"{answer['title']}, ranked by {measure}")
    print(_judgments_line(leaderboard.get("judgments_version"), leaderboard.get("needs")))
    _print_phase(answer)
    header = ("rank", "run", "participant", *(("team",) if teams else ()), measure, "id")
    _print_table(header, rows)
    return 0


def compare(client, args, path) -> int:
    answer = client.compare(
        args.benchmark, args.a, args.b, args.measure, args.judgments, args.needs
    )
    if args.json:
        return _print_json(answer)
    a, b = answer["a"], answer["b"]
    label = _label(answer, answer["measure"])
    print(f"{label}: {a['run']} {_number(a['mean'])} vs {b['run']} {_number(b['mean'])}")
    print(_judgments_line(answer.get("judgments_version"), answer.get("needs")))
    if answer.get("verdict"):  # the server's sentence, as the comparison page says it
        print(answer["verdict"])
    print(f"difference: {answer['difference']}")
    for name, value in answer["tests"].items():
        print(f"  {name}: {value}")
    return 0


def download(client, args, path) -> int:
    target = client.download(args.benchmark, args.format, args.output)
    print(f"Wrote {target}")
    return 0


def withdraw(client, args, path) -> int:
    run = client.withdraw(args.id)
    if args.json:
        return _print_json(run)
    print(f"Run {run['run_name']} (id {run['id']}) is withdrawn.")
    return 0


def final(client, args, path) -> int:
    benchmark = args.benchmark
    if benchmark is None:
        if not args.ids:
            return _fail("give run ids, or --benchmark SLUG to show the final runs", 2)
        benchmark = client.status(args.ids[0])["benchmark"]
    if args.ids or args.clear:
        answer = client.set_final_runs(benchmark, [] if args.clear else args.ids, args.phase)
    else:
        answer = client.final_runs(benchmark, args.phase)
    if args.json:
        return _print_json(answer)
    phase = f" in the phase {answer['phase']}" if answer["phase"] else ""
    print(f"Final runs of your team on {answer['benchmark']}{phase} (at most {answer['limit']}):")
    rows = [
        (r["priority"], r["run_name"], r["id"], "chosen" if r["chosen"] else "latest")
        for r in answer["runs"]
    ]
    _print_table(("priority", "run", "id", "as"), rows)
    if answer["closes"]:
        state = "change until" if answer["open"] else "closed at"
        print(f"Final runs {state} {_utc(answer['closes'])}")
    return 0


def results(client, args, path) -> int:
    answer = client.results(args.id, args.measure, args.judgments, args.needs)
    if args.json:
        return _print_json(answer)
    print(
        f"Run {answer['run_name']} (id {answer['id']}), {_label(answer, answer['measure'])} "
        f"per need, beside "
        f"the {answer['field']} ({answer['field_runs']}):"
    )
    print(_judgments_line(answer.get("judgments_version"), answer.get("judgments_needs")))
    rows = [
        (n["need_id"], *(_number(n[k]) for k in ("run", "best", "median", "worst")))
        for n in answer["needs"]
    ]
    _print_table(("need", "run", "best", "median", "worst"), rows)
    return 0


COMMANDS = {
    "login": login,
    "submit": submit,
    "status": status,
    "runs": runs,
    "board": board,
    "compare": compare,
    "download": download,
    "withdraw": withdraw,
    "final": final,
    "results": results,
    **organizing.COMMANDS,
}
