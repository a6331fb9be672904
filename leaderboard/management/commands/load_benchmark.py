"""Create or update a benchmark from a needs file and a qrels file, or from an ir_datasets id
(``load_benchmark --ir-datasets msmarco-passage/trec-dl-2019/judged``: its queries become
the needs, its qrels the next judgments version; the slug defaults to the id with ``/``
as ``-``), with its settings and phases.

Settings and phases are checked by the admin's own forms (``filled_benchmark_form``,
``PhaseForm``): measures in either name system, a phase that closes after it opens and
overlaps no other. A phase is ``--phase NAME,OPENS,CLOSES[,FIELD=VALUE...]`` (repeatable;
times in ISO 8601, UTC without an offset; fields: the limits, ``board``, ``final_runs``);
a phase of that name already there is changed. Everything loads, or nothing is stored.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import time

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.text import slugify

from evaluation.trec import TrecFormatError
from leaderboard.admin_forms import PhaseForm, filled_benchmark_form, phase_form
from leaderboard.models import Benchmark, Judgments, Phase
from leaderboard.pipeline.datasets import DatasetError, dataset_files, load_dataset
from leaderboard.pipeline.files import discard
from leaderboard.pipeline.loading import load_judgments, load_needs, settings_changed
from leaderboard.pipeline.tasks import queue_split

# The form's field -> the option that sets it (the others keep their names).
OPTIONS = {"significance_measures": "tested_measures"}
SETTINGS = (
    "primary_measure",
    "shown_measures",
    "tested_measures",
    "relevance_level",
    "max_depth",
    "daily_limit",
    "final_runs",
)


def refusal(error: BaseException) -> BaseException:
    """The CommandError a refused file or value stops the command with; anything else
    as it is."""
    if isinstance(error, TrecFormatError):
        return CommandError(str(error))
    if isinstance(error, ValidationError):
        return CommandError("; ".join(error.messages))
    if isinstance(error, OSError):
        return CommandError(f"{error.filename or 'file'}: {error.strerror or error}")
    return error


def parse_phase(text: str) -> tuple[str, dict]:
    """``NAME,OPENS,CLOSES[,FIELD=VALUE...]`` as the phase's name and its form values."""
    parts = [part.strip() for part in text.split(",")]
    if len(parts) < 3 or not parts[0]:
        raise CommandError(f"--phase {text!r}: give NAME,OPENS,CLOSES[,FIELD=VALUE...]")
    values = {"name": parts[0], "opens": parts[1], "closes": parts[2]}
    fields = set(PhaseForm._meta.fields) - set(values)
    for extra in parts[3:]:
        field, _, value = extra.partition("=")
        if field not in fields or not value:
            known = ", ".join(sorted(fields))
            raise CommandError(f"--phase {parts[0]}: {extra!r} is not FIELD=VALUE ({known})")
        values[field] = value
    return parts[0], values


def form_error(form, prefix: str = "") -> CommandError:
    """The form's first error, named by the option (or after ``prefix``)."""
    field, messages = next(iter(form.errors.items()))
    if field == "__all__":
        return CommandError(f"{prefix}{messages[0]}")
    if prefix:
        return CommandError(f"{prefix}{field}: {messages[0]}")
    option = "--" + OPTIONS.get(field, field).replace("_", "-")
    return CommandError(f"{option}: {messages[0]}")


class Command(BaseCommand):
    help = "Load needs and judgments into a benchmark (created if missing); queues rescoring."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", nargs="?", help="default with --ir-datasets: from the id")
        parser.add_argument("--title", default="")
        parser.add_argument("--needs", help="TSV or TREC topics file (gzip ok)")
        parser.add_argument("--qrels", help="qrels file (gzip ok)")
        parser.add_argument(
            "--ir-datasets",
            metavar="ID",
            help="an ir_datasets id: its queries as needs, its qrels as judgments",
        )
        parser.add_argument("--primary-measure", help="either name system (nDCG@10)")
        parser.add_argument("--shown-measures", help="the board's columns: 'P@10, map'")
        parser.add_argument("--tested-measures", help="tested for every pair besides the primary")
        parser.add_argument("--relevance-level", type=int, help="trec_eval's -l")
        parser.add_argument("--max-depth", type=int, help="trec_eval's -M")
        parser.add_argument("--daily-limit", type=int, help="runs per participant per UTC day")
        parser.add_argument("--final-runs", type=int, help="final runs per team")
        parser.add_argument(
            "--phase",
            action="append",
            default=[],
            metavar="NAME,OPENS,CLOSES[,FIELD=VALUE...]",
            help="a phase, e.g. 'Test,2026-12-01T00:00Z,2026-12-15T00:00Z,daily_limit=2'",
        )
        split_arguments(parser)

    def handle(self, *args, slug, title, needs, qrels, ir_datasets=None, **options) -> None:
        dataset = None
        if ir_datasets:
            if needs or qrels:
                raise CommandError("give either --ir-datasets or --needs/--qrels, not both")
            try:  # read (and downloaded) before anything is created
                self.stdout.write(f"reading {ir_datasets} through ir_datasets ...")
                dataset = dataset_files(ir_datasets)
            except DatasetError as error:
                raise CommandError(str(error)) from error
            slug = slug or slugify(ir_datasets.replace("/", "-"))[:80]
            title = title or ir_datasets
        if not slug:
            raise CommandError("give the benchmark a slug (optional only with --ir-datasets)")
        settings = {name: options[name] for name in SETTINGS if options.get(name) is not None}
        phases = [parse_phase(text) for text in options.get("phase") or []]
        for option, path in (("--needs", needs), ("--qrels", qrels)):
            if path and not os.access(path, os.R_OK):
                reason = "no such file" if not os.path.exists(path) else "not readable"
                raise CommandError(f"{option} {path}: {reason}")
        stored: list[Judgments] = []
        try:  # all or nothing: a file that fails halfway leaves no benchmark and no needs
            with transaction.atomic():
                benchmark = self.settle(slug, title, settings)
                for name, values in phases:
                    self.phase(benchmark, name, values)
                self.load(benchmark, needs, qrels, dataset, stored)
                if said := set_campaign_split(slug, options):
                    self.stdout.write(said)
        except BaseException as error:
            for judgments in stored:  # rolled back: their files would be orphans
                discard(judgments.file.storage, judgments.file.name)
            raise refusal(error) from error

    def settle(self, slug: str, title: str, settings: dict) -> Benchmark:
        """The benchmark, created or with its settings changed, as the admin's form takes
        them; a change that calls for rescoring or tests queues them."""
        benchmark = Benchmark.objects.filter(slug=slug).first()
        values = {"slug": slug, "title": title or (benchmark.title if benchmark else slug)}
        fields = {option: field for field, option in OPTIONS.items()}
        values.update({fields.get(option, option): value for option, value in settings.items()})
        form = filled_benchmark_form(values, benchmark)
        if not form.is_valid():
            raise form_error(form)
        self.stdout.write(f"{'updating' if benchmark else 'created'} benchmark {slug}")
        saved = form.save()
        if benchmark is not None:
            rescored, compared = settings_changed(saved, form.changed_data)
            if rescored or compared:
                self.stdout.write(f"  queued: {rescored} runs to rescore, {compared} to test")
        return saved

    def phase(self, benchmark: Benchmark, name: str, values: dict) -> None:
        phase = benchmark.phases.filter(name=name).first() or Phase(benchmark=benchmark)
        form = phase_form(phase, values)
        if not form.is_valid():
            raise form_error(form, f"--phase {name}: ")
        saved = form.save()
        self.stdout.write(f"  phase {saved}")

    def load(self, benchmark: Benchmark, needs, qrels, dataset, stored: list) -> None:
        """Needs and judgments into ``benchmark``; each new judgments version (its file
        already in the store) is appended to ``stored``."""
        before = set(benchmark.judgments.values_list("pk", flat=True))
        if dataset is not None:
            count, judgments = load_dataset(benchmark, dataset)
            stored += [judgments] if judgments.pk not in before else []
            self.stdout.write(
                f"  {count} needs (titles from the queries' {dataset.title_field!r}); "
                f"judgments v{judgments.version}: {judgments.num_judged} judgments, "
                f"{judgments.num_needs} needs, {judgments.num_relevant} relevant"
            )
        if needs:
            started = time.monotonic()
            self.stdout.write(f"reading needs from {needs} ...")
            with open(needs, "rb") as stream:
                count = load_needs(benchmark, stream, os.path.basename(needs))
            self.stdout.write(f"  {count} needs in {time.monotonic() - started:.1f} s")
        if qrels:
            started = time.monotonic()
            self.stdout.write(f"reading judgments from {qrels} ...")
            with open(qrels, "rb") as stream:
                judgments = load_judgments(benchmark, stream, os.path.basename(qrels))
            stored += [judgments] if judgments.pk not in before else []
            self.stdout.write(
                f"  judgments v{judgments.version}: {judgments.num_judged} judgments, "
                f"{judgments.num_needs} needs, {judgments.num_relevant} relevant "
                f"in {time.monotonic() - started:.1f} s"
            )


# --- the public/private split, the reveal and pseudonyms --------------------------------


def split_arguments(parser) -> None:
    group = parser.add_argument_group("campaign split (see docs/campaigns.md)")
    group.add_argument(
        "--private-needs",
        metavar="FILE|IDS",
        help="needs hidden until the reveal: a file of need ids (one per line) or ids "
        "separated by commas; '' clears the split",
    )
    group.add_argument(
        "--private-fraction", type=float, metavar="F", help="draw this share of needs as private"
    )
    group.add_argument("--split-seed", type=int, metavar="S", help="the draw's seed (stored)")
    group.add_argument("--final-needs", choices=["private", "all"], help="the final board ranks by")
    group.add_argument(
        "--reveal-at", metavar="ISO", help="the reveal, ISO 8601 (UTC unless it says); '' unsets"
    )
    group.add_argument(
        "--anonymous",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="pseudonyms until the reveal",
    )


def _need_ids(value: str) -> list[str]:
    if os.path.isfile(value):
        with open(value, encoding="utf-8") as stream:
            return [line.strip() for line in stream if line.strip() and not line.startswith("#")]
    return [need.strip() for need in value.split(",") if need.strip()]


def _reveal(value: str):
    if not value:
        return None
    moment = parse_datetime(value)
    if moment is None:
        raise CommandError(f"--reveal-at {value!r}: not an ISO 8601 date and time")
    return moment if timezone.is_aware(moment) else timezone.make_aware(moment, dt.UTC)


def set_campaign_split(slug: str, options: dict) -> str:
    """Apply the split options to the benchmark (ValidationError naming a bad one); the
    parts' results are derived once the transaction commits. Returns a line to print."""
    private, fraction = options.get("private_needs"), options.get("private_fraction")
    seed = options.get("split_seed")
    if private is not None and fraction is not None:
        raise CommandError("give either --private-needs or --private-fraction, not both")
    if seed is not None and fraction is None:
        raise CommandError("--split-seed draws with --private-fraction only")
    benchmark = Benchmark.objects.get(slug=slug)
    said = []
    fields = {}
    if options.get("final_needs"):
        fields["final_needs"] = options["final_needs"]
    if options.get("reveal_at") is not None:
        fields["reveal_at"] = _reveal(options["reveal_at"])
    if options.get("anonymous") is not None:
        fields["anonymous"] = options["anonymous"]
    if fields:
        Benchmark.objects.filter(pk=benchmark.pk).update(**fields)
        said.append(", ".join(f"{key} {value}" for key, value in fields.items()))
    if private is not None or fraction is not None:
        needs = _need_ids(private) if private is not None else None
        if benchmark.set_split(needs, fraction, seed):
            queue_split(benchmark)
        benchmark.refresh_from_db()
        drawn = f" (drawn with seed {benchmark.split_seed})" if fraction is not None else ""
        said.append(f"{len(benchmark.private_needs)} private needs{drawn}")
    return "  split: " + "; ".join(said) if said else ""
