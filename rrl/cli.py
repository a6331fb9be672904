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
import datetime as dt
import getpass
import os
import sys
from typing import Any

from rrl import config, organizing
from rrl.output import fail as _fail
from rrl.output import print_json as _print_json
from rrl.output import print_table as _print_table

__all__ = ["main"]

SHOWN = ("map", "P_10", "ndcg_cut_10", "recip_rank")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="rrl", description="The leaderboard's client.")
    top.add_argument("--url", help="The site's address (default: RRL_URL or the last login).")
    top.add_argument("--json", action="store_true", help="Print the API's JSON answer.")
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
    status.add_argument("id", type=int)

    runs = commands.add_parser("runs", help="Your runs, newest first.")
    runs.add_argument("--benchmark")
    runs.add_argument("--status", choices=["queued", "running", "scored", "failed", "withdrawn"])

    board = commands.add_parser("board", help="A benchmark's leaderboard.")
    board.add_argument("benchmark")
    board.add_argument("--measure")
    board.add_argument("--judgments", type=int, help="A judgments version (default: the current).")
    board.add_argument(
        "--needs", choices=["public", "private", "all"], help="Default: what the board shows you."
    )

    compare = commands.add_parser("compare", help="Two runs compared, with paired tests.")
    compare.add_argument("benchmark")
    compare.add_argument("a", type=int)
    compare.add_argument("b", type=int)
    compare.add_argument(
        "--measure", help="In either name system; by default the benchmark's primary measure."
    )
    compare.add_argument(
        "--judgments", type=int, help="A judgments version (default: the current)."
    )
    compare.add_argument(
        "--needs", choices=["public", "private", "all"], help="Default: what the board shows you."
    )

    download = commands.add_parser("download", help="The leaderboard as CSV or JSON.")
    download.add_argument("benchmark")
    download.add_argument("--format", choices=["csv", "json"], default="csv")
    download.add_argument("-o", "--output", help="Where to write it.")

    withdraw = commands.add_parser("withdraw", help="Withdraw one of your runs, for good.")
    withdraw.add_argument("id", type=int)

    final = commands.add_parser(
        "final", help="Mark your team's final runs, in priority order (none: show them)."
    )
    final.add_argument("ids", type=int, nargs="*", metavar="RUN_ID")
    final.add_argument("--benchmark", help="Its slug (default: the first run's benchmark).")
    final.add_argument("--phase", help="Default: the phase open now.")
    final.add_argument("--clear", action="store_true", help="Unmark all: the latest count.")

    results = commands.add_parser(
        "results", help="A run's per-need values beside the best, median and worst runs."
    )
    results.add_argument("id", type=int)
    results.add_argument("--measure", help="A stored measure (default: the primary one).")
    results.add_argument(
        "--judgments", type=int, help="A judgments version (default: the current)."
    )
    results.add_argument(
        "--needs", choices=["public", "private", "all"], help="Default: what the board shows you."
    )

    pool = commands.add_parser("pool", help="Organizers: build a pool, export it for assessors.")
    pool_commands = pool.add_subparsers(dest="pool_command", required=True, metavar="ACTION")
    build = pool_commands.add_parser("build", help="Pool the final runs (in the background).")
    build.add_argument("benchmark")
    build.add_argument("--depth", type=int, required=True)
    build.add_argument("--runs-per-team", type=int, required=True)
    build.add_argument("--phase", help="Default: the phase open now, else the last.")
    build.add_argument("--wait", action="store_true", help="Wait until it is built.")
    export = pool_commands.add_parser("export", help="The pairs to judge, as a qrels file.")
    export.add_argument("benchmark")
    export.add_argument("id", type=int, nargs="?", help="Default: the newest pool.")
    export.add_argument("-o", "--output", help="Where to write it.")

    organizing.add_commands(commands)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    path = config.config_path()
    try:
        settings = config.resolve(args.url, path)
    except ValueError as error:
        return _fail(str(error))
    if settings.url is None:
        return _fail("which site? Give --url URL (or set RRL_URL), or log in first.", 2)

    from rrl.client import ApiError, Client, Conflict, RunFailed

    try:
        with Client(settings.url, settings.token) as client:
            return COMMANDS[args.command](client, args, path)
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


def _when(stamp: str) -> dt.datetime:
    return dt.datetime.fromisoformat(stamp)


def _utc(stamp: str) -> str:
    """An API time (ISO 8601) as a person reads it, in UTC to the minute."""
    return _when(stamp).astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def phase_line(benchmark: dict, now: dt.datetime | None = None) -> str:
    """A campaign's phase: the open one (the server's ``current_phase``) and when it
    closes, else the next and when it opens, else the last and when it closed; empty
    on a benchmark without phases."""
    phases = benchmark.get("phases") or []
    current = next((p for p in phases if p["name"] == benchmark.get("current_phase")), None)
    if current is not None:
        return f"Phase {current['name']} is open until {_utc(current['closes'])}."
    now = now or dt.datetime.now(dt.UTC)
    upcoming = [p for p in phases if _when(p["opens"]) > now]
    if upcoming:
        first = min(upcoming, key=lambda p: _when(p["opens"]))
        return f"Submissions are closed; phase {first['name']} opens at {_utc(first['opens'])}."
    if phases:
        last = max(phases, key=lambda p: _when(p["closes"]))
        return f"Submissions are closed: phase {last['name']} closed at {_utc(last['closes'])}."
    return ""


def _print_phase(benchmark: dict) -> None:
    line = phase_line(benchmark)
    if line:
        print(line)


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
    if run.get("summary"):
        _print_summary(run, list(SHOWN))
    _print_warnings(run)
    return 0


def runs(client, args, path) -> int:
    found = client.runs(benchmark=args.benchmark, status=args.status)
    if args.json:
        return _print_json(found)
    rows = [(r["id"], r["benchmark"], r["run_name"], r["status"], r["submitted"]) for r in found]
    _print_table(("id", "benchmark", "run", "status", "submitted"), rows)
    return 0


def board(client, args, path) -> int:
    answer = client.board(args.benchmark, args.measure, args.judgments, args.needs)
    if args.json:
        return _print_json(answer)
    leaderboard = answer["leaderboard"]
    measure = _label(leaderboard, leaderboard["ranked_by"])
    rows = [
        (r["rank"] or "", r["run_name"], r["participant"], _number(r["value"]), r["submission_id"])
        for r in leaderboard["runs"]
    ]
    print(f"{answer['title']}, ranked by {measure}")
    print(_judgments_line(leaderboard.get("judgments_version"), leaderboard.get("needs")))
    _print_phase(answer)
    _print_table(("rank", "run", "participant", measure, "id"), rows)
    return 0


def _judgments_line(version, needs) -> str:
    """Which judgments the scores below are on: "Judgments v2, public needs"."""
    if version is None:
        return "No judgments yet."
    return f"Judgments v{version}, {needs or 'all'} needs"


def compare(client, args, path) -> int:
    answer = client.compare(
        args.benchmark, args.a, args.b, args.measure, args.judgments, args.needs
    )
    if args.json:
        return _print_json(answer)
    a, b = answer["a"], answer["b"]
    label = _label(answer, answer["measure"])
    print(f"{label}: {a['run']} {_number(a['mean'])} vs {b['run']} {_number(b['mean'])}")
    if answer.get("verdict"):  # the server's sentence, as the comparison page says it
        print(answer["verdict"])
    print(f"difference: {answer['difference']}")
    for name, value in answer["tests"].items():
        print(f"  {name}: {value}")
    print(_judgments_line(answer.get("judgments_version"), answer.get("needs")))
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
        print(f"Final runs {state} {answer['closes']}")
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


def pool(client, args, path) -> int:
    if args.pool_command == "export":
        found = client.pool(args.benchmark, args.id)
        if found["status"] != "built":
            return _fail(f"pool {found['id']} is {found['status']}, not built")
        target = client.export_pool(args.benchmark, found["id"], args.output)
        print(f"Wrote {target} ({found['stats']['to_judge']} pairs to judge)")
        return 0
    made = client.build_pool(args.benchmark, args.depth, args.runs_per_team, args.phase)
    if args.wait:
        made = client.wait_pool(args.benchmark, made["id"])
    if args.json:
        return _print_json(made)
    print(f"Pool {made['id']} of {args.benchmark}: {made['status']}")
    if made["status"] == "failed":
        return _fail(made["failure_reason"])
    if made["status"] == "built":
        stats = made["stats"]
        print(f"{stats['pairs']} pairs, {stats['to_judge']} to judge")
        rows = [(t["team"], t["runs"], t["contributed"], t["unique"]) for t in stats["teams"]]
        _print_table(("team", "runs", "contributed", "unique"), rows)
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
    "pool": pool,
    **organizing.COMMANDS,
}


# --- Output ---------------------------------------------------------------------------


class _Progress:
    """Upload and scoring progress on stderr, plain text."""

    def __init__(self) -> None:
        self.shown = -1

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage == "upload":
            percent = 100 * done // total if total else 100
            if percent != self.shown:
                self.shown = percent
                end = "\n" if done >= total else ""
                print(f"\ruploading: {percent:3d}% of {total:,} bytes", end=end, file=sys.stderr)
        else:
            print(f"scoring: {stage}", file=sys.stderr)
        sys.stderr.flush()


def _number(value: Any) -> str:
    return "" if value is None else f"{value:.4f}"


def _label(answer: dict, measure: str) -> str:
    """The name the server's pages show for ``measure`` (``nDCG@10`` for ``ndcg_cut_10``):
    the answer's ``labels``; the name itself from a server that sends none."""
    return (answer.get("labels") or {}).get(measure, measure)


def _print_summary(run: dict, measures: list[str]) -> None:
    summary = run.get("summary") or {}
    names = [m for m in dict.fromkeys(measures) if m in summary] or sorted(summary)
    labels = [_label(run, name) for name in names]
    width = max((len(label) for label in labels), default=0)
    for name, label in zip(names, labels, strict=True):
        print(f"  {label:<{width}}  {_number(summary[name])}")


def _print_warnings(run: dict) -> None:
    """Scoring's warnings (needs not answered, ranks past the depth): on stdout with the
    scores they qualify."""
    for warning in run.get("warnings") or []:
        print(f"warning: {warning}")
