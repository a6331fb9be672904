"""The organizers' ``rrl`` commands: pools, a benchmark's settings, its phases, needs,
judgments, rescoring. Each needs a full token of an organizer of the benchmark (staff to
create one).

    rrl benchmark create robust04 --title "Robust 2004" --primary-measure nDCG@10 \\
        --shown-measures "P@10 map" --daily-limit 5 --final-runs 2 --no-open
    rrl benchmark update robust04 --description @about.md --open
    rrl benchmark update robust04 --reveal-at 2026-12-20T12:00Z --final-needs all --anonymous
    rrl phase add robust04 Test --opens 2026-12-01T00:00Z --closes 2026-12-15T00:00Z \\
        --daily-limit 2 --final-runs 2
    rrl phase list robust04 ; rrl phase update robust04 Test --closes 2026-12-16T00:00Z
    rrl phase delete robust04 Test
    rrl needs robust04 topics.txt ; rrl judgments robust04 qrels-v2.txt --note "assessed pool"
    rrl pool build robust04 --depth 100 --runs-per-team 2 --wait ; rrl pool export robust04
    rrl rescore robust04
    rrl summary robust04   # runs per team, the latest pool, Judged@10 and @100 per run

A text option given as ``@FILE`` (``--description @about.md``) is read from that file.
Times are ISO 8601; without an offset they are UTC.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rrl.output import fail, print_json, print_table

# Option -> the API's field, for the benchmark's settings.
SETTINGS = {
    "title": str,
    "description": str,
    "rules": str,
    "data_description": str,
    "primary_measure": str,
    "shown_measures": str,
    "tested_measures": str,
    "interpolation": str,
    "relevance_level": int,
    "max_depth": int,
    "daily_limit": int,
    "final_runs": int,
    "pool_depth": int,
    "reveal_at": str,
    "final_needs": str,
}
HELP = {
    "reveal_at": "When private scores and hidden boards show (ISO 8601, UTC by default; "
    "'none': not scheduled).",
    "final_needs": "What the final board ranks by once revealed.",
}
PHASE_LIMITS = ("daily_limit", "total_limit", "team_daily_limit", "team_total_limit")


def limit(value: str) -> int | None:
    """A limit, or ``none`` for no limit of the phase's own."""
    if value.lower() == "none":
        return None
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number or 'none', not {value!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError("a limit is 0 or more")
    return number


def add_commands(commands) -> None:
    """The organizers' subcommands on the ``rrl`` parser's ``commands``."""
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

    benchmark = commands.add_parser("benchmark", help="Organizers: create or change a benchmark.")
    actions = benchmark.add_subparsers(dest="benchmark_command", required=True, metavar="ACTION")
    create = actions.add_parser("create", help="A new benchmark (staff).")
    update = actions.add_parser("update", help="Change settings; others keep their values.")
    for parser in (create, update):
        parser.add_argument("slug")
        for name, kind in SETTINGS.items():
            flag = "--" + name.replace("_", "-")
            parser.add_argument(
                flag,
                type=kind,
                required=parser is create and name == "title",
                choices=["private", "all"] if name == "final_needs" else None,
                help=HELP.get(name),
            )
        for name in ("open", "published", "anonymous"):
            parser.add_argument(f"--{name}", action=argparse.BooleanOptionalAction, default=None)
    create.add_argument("--ir-datasets", help="An ir_datasets id: its queries and qrels.")

    phase = commands.add_parser("phase", help="Organizers: a benchmark's phases.")
    actions = phase.add_subparsers(dest="phase_command", required=True, metavar="ACTION")
    actions.add_parser("list", help="The phases.").add_argument("benchmark")
    add = actions.add_parser("add", help="A new phase (it may not overlap another).")
    update = actions.add_parser("update", help="Change a phase; others keep their values.")
    for parser in (add, update):
        parser.add_argument("benchmark")
        parser.add_argument("name")
        parser.add_argument("--opens", required=parser is add, help="ISO 8601; UTC by default.")
        parser.add_argument("--closes", required=parser is add)
        for name in PHASE_LIMITS:
            parser.add_argument(
                "--" + name.replace("_", "-"), type=limit, default=argparse.SUPPRESS
            )
        parser.add_argument("--final-runs", type=limit, default=argparse.SUPPRESS)
        parser.add_argument("--board", choices=["public", "owners", "hidden"])
    update.add_argument("--rename", metavar="NAME", help="A new name for the phase.")
    delete = actions.add_parser("delete", help="Delete a phase (its runs stay).")
    delete.add_argument("benchmark")
    delete.add_argument("name")

    needs = commands.add_parser("needs", help="Organizers: load needs (TSV or TREC topics).")
    needs.add_argument("benchmark")
    needs.add_argument("file")
    judgments = commands.add_parser(
        "judgments", help="Organizers: a qrels file as the next judgments version."
    )
    judgments.add_argument("benchmark")
    judgments.add_argument("file")
    judgments.add_argument("--note", default="", help="What this version is.")
    rescore = commands.add_parser("rescore", help="Organizers: rescore every run.")
    rescore.add_argument("benchmark")
    summary = commands.add_parser(
        "summary", help="Organizers: runs per team, the latest pool, Judged@10/100 per run."
    )
    summary.add_argument("benchmark")
    split = commands.add_parser(
        "split", help="Organizers: the needs kept private until the reveal (none: show them)."
    )
    split.add_argument("benchmark")
    split.add_argument("needs", nargs="*", metavar="NEED_ID", help="The private needs.")
    split.add_argument("--fraction", type=float, help="Draw this share of the needs instead.")
    split.add_argument("--seed", type=int, help="The draw's seed (default: the site draws one).")
    split.add_argument("--clear", action="store_true", help="No private needs.")


def _text(value: str) -> str:
    return Path(value[1:]).read_text(encoding="utf-8") if value.startswith("@") else value


def _settings(args) -> dict:
    fields = {}
    for name in SETTINGS:
        value = getattr(args, name)
        if value is None:
            continue
        if name == "reveal_at" and value.lower() == "none":
            value = None
        elif name.endswith("_measures"):
            value = value.replace(",", " ").split()
        elif isinstance(value, str):
            value = _text(value)
        fields[name] = value
    for name in ("open", "published", "anonymous"):
        if getattr(args, name) is not None:
            fields[name] = getattr(args, name)
    return fields


def benchmark(client, args, path) -> int:
    fields = _settings(args)
    if args.benchmark_command == "create":
        title = fields.pop("title")
        made = client.create_benchmark(args.slug, title, ir_datasets=args.ir_datasets, **fields)
        if args.json:
            return print_json(made)
        print(f"Created {made['slug']} ({made['num_needs']} needs): {made['page']}")
        return 0
    changed = client.update_benchmark(args.slug, **fields)
    if args.json:
        return print_json(changed)
    print(f"Updated {changed['slug']}: {changed['page']}")
    if changed["rescoring"]:
        print(f"{changed['rescoring']} runs queued for rescoring.")
    if changed["testing"]:
        print(f"{changed['testing']} runs queued for the new tests.")
    return 0


def _phase_fields(args) -> dict:
    fields = {n: getattr(args, n) for n in (*PHASE_LIMITS, "final_runs") if hasattr(args, n)}
    for name in ("opens", "closes", "board"):
        if getattr(args, name) is not None:
            fields[name] = getattr(args, name)
    return fields


def phase(client, args, path) -> int:
    if args.phase_command == "list":
        found = client.phases(args.benchmark)
        if args.json:
            return print_json(found)
        rows = [
            (
                p["name"],
                p["opens"],
                p["closes"],
                *("" if p[n] is None else p[n] for n in (*PHASE_LIMITS, "final_runs")),
                p["board"],
            )
            for p in found
        ]
        header = ("phase", "opens", "closes", "daily", "total", "team daily", "team total")
        print_table((*header, "final runs", "board"), rows)
        return 0
    if args.phase_command == "delete":
        client.delete_phase(args.benchmark, args.name)
        print(f"Deleted the phase {args.name} of {args.benchmark}.")
        return 0
    fields = _phase_fields(args)
    if args.phase_command == "add":
        opens, closes = fields.pop("opens"), fields.pop("closes")
        saved = client.add_phase(args.benchmark, args.name, opens, closes, **fields)
    else:
        if args.rename:
            fields["name"] = args.rename
        saved = client.update_phase(args.benchmark, args.name, **fields)
    if args.json:
        return print_json(saved)
    print(f"Phase {saved['name']} of {args.benchmark}: {saved['opens']} to {saved['closes']}")
    return 0


def needs(client, args, path) -> int:
    loaded = client.load_needs(args.benchmark, args.file)
    if args.json:
        return print_json(loaded)
    print(f"Loaded {loaded['loaded']} needs into {loaded['benchmark']}.")
    return 0


def judgments(client, args, path) -> int:
    loaded = client.load_judgments(args.benchmark, args.file, note=args.note)
    if args.json:
        return print_json(loaded)
    if not loaded["created"]:
        print(f"{args.file} is {loaded['benchmark']}'s judgments v{loaded['version']} already.")
        return 0
    print(
        f"Judgments v{loaded['version']} of {loaded['benchmark']}: {loaded['num_judged']} "
        f"judgments of {loaded['num_needs']} needs, {loaded['num_relevant']} relevant."
    )
    print(f"{loaded['queued']} runs queued for rescoring; the board switches when all are done.")
    return 0


def rescore(client, args, path) -> int:
    queued = client.rescore(args.benchmark)
    if args.json:
        return print_json(queued)
    print(f"{queued['queued']} runs of {queued['benchmark']} queued for rescoring.")
    return 0


def split(client, args, path) -> int:
    if sum(map(bool, (args.needs, args.fraction is not None, args.clear))) > 1:
        return fail("give need ids, --fraction or --clear, one of them", 2)
    if args.seed is not None and args.fraction is None:
        return fail("--seed draws with --fraction only", 2)
    if args.needs or args.clear:
        answer = client.set_split(args.benchmark, [] if args.clear else args.needs)
    elif args.fraction is not None:
        answer = client.set_split(args.benchmark, fraction=args.fraction, seed=args.seed)
    else:
        answer = client.split(args.benchmark)
    if args.json:
        return print_json(answer)
    private, public = answer["private_needs"], answer["public_needs"]
    drawn = (
        f", drawn as {answer['fraction']} with seed {answer['seed']}"
        if answer["fraction"] is not None
        else ""
    )
    print(f"{answer['benchmark']}: {len(private)} private and {len(public)} public needs{drawn}")
    if private:
        print("private: " + " ".join(private))
    if answer.get("queued"):
        print("The scored runs' public and private scores are being derived.")
    return 0


def _judged(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def summary(client, args, path) -> int:
    found = client.summary(args.benchmark)
    if args.json:
        return print_json(found)
    counts = ("submitted", "scored", "failed", "final")
    for phase in found["phases"]:
        print(f"Phase {phase['phase']}" if phase["phase"] else "Runs outside any phase")
        for who in ("teams", "participants"):
            rows = [(r["name"], *(r[c] for c in counts)) for r in phase[who]]
            if who == "teams":
                rows.append(("All", *(phase["totals"][c] for c in counts)))
            print_table((who[:-1], *counts), rows)
        print()
    pool = found["pool"]
    if pool is None:
        print("No pool built yet.")
    else:
        print(
            f"Pool {pool['id']} ({pool['phase'] or 'no phase'}): depth {pool['depth']}, "
            f"{pool['runs_pooled']} of {pool['runs_offered']} final runs pooled, "
            f"{pool['size_total']} pairs, {pool['to_judge']} to judge"
        )
        sizes = (pool["needs"], pool["size_min"], pool["size_median"], pool["size_max"])
        print_table(("needs", "smallest", "median", "largest"), [sizes])
        teams = [(t["team"], t["runs"], t["contributed"], t["unique"]) for t in pool["teams"]]
        print_table(("team", "runs pooled", "contributed", "unique"), teams)
    print()
    judged = found["judged"]
    if judged["judgments_version"] is None:
        print("No judgments yet.")
        return 0
    print(f"Judged documents on judgments v{judged['judgments_version']}:")
    rows = [
        (r["id"], r["run"], r["team"], _judged(r["judged_10"]), _judged(r["judged_100"]))
        for r in judged["runs"]
    ]
    print_table(("id", "run", "team", "Judged@10", "Judged@100"), rows)
    return 0


def pool(client, args, path) -> int:
    if args.pool_command == "export":
        found = client.pool(args.benchmark, args.id)
        if found["status"] != "built":
            return fail(f"pool {found['id']} is {found['status']}, not built")
        target = client.export_pool(args.benchmark, found["id"], args.output)
        print(f"Wrote {target} ({found['stats']['to_judge']} pairs to judge)")
        return 0
    made = client.build_pool(args.benchmark, args.depth, args.runs_per_team, args.phase)
    if args.wait:
        made = client.wait_pool(args.benchmark, made["id"])
    if args.json:
        return print_json(made)
    print(f"Pool {made['id']} of {args.benchmark}: {made['status']}")
    if made["status"] == "failed":
        return fail(made["failure_reason"])
    if made["status"] == "built":
        stats = made["stats"]
        print(f"{stats['pairs']} pairs, {stats['to_judge']} to judge")
        rows = [(t["team"], t["runs"], t["contributed"], t["unique"]) for t in stats["teams"]]
        print_table(("team", "runs", "contributed", "unique"), rows)
    return 0


COMMANDS = {
    "pool": pool,
    "benchmark": benchmark,
    "phase": phase,
    "needs": needs,
    "judgments": judgments,
    "rescore": rescore,
    "split": split,
    "summary": summary,
}
