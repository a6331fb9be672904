"""Create or update a benchmark from a needs file and a qrels file, or from an ir_datasets id
(``load_benchmark --ir-datasets msmarco-passage/trec-dl-2019/judged``: its queries become
the needs, its qrels the next judgments version; the slug defaults to the id with ``/``
as ``-``)."""

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

from evaluation.measures import UnknownMeasure, resolve
from evaluation.trec import TrecFormatError
from leaderboard.models import Benchmark
from leaderboard.pipeline.datasets import DatasetError, dataset_files, load_dataset
from leaderboard.pipeline.loading import load_judgments, load_needs
from leaderboard.pipeline.tasks import queue_split


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
        parser.add_argument("--primary-measure", default=None)
        parser.add_argument("--relevance-level", type=int, default=None)
        split_arguments(parser)

    def handle(
        self,
        *args,
        slug: str,
        title: str,
        needs,
        qrels,
        primary_measure,
        relevance_level,
        ir_datasets=None,
        **options,
    ) -> None:
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
        if primary_measure:  # either name system, stored as its column (as the admin does)
            try:
                primary_measure = resolve(primary_measure).column
            except UnknownMeasure as error:
                raise CommandError(f"--primary-measure: {error}") from error
        for option, path in (("--needs", needs), ("--qrels", qrels)):
            if path and not os.access(path, os.R_OK):
                reason = "no such file" if not os.path.exists(path) else "not readable"
                raise CommandError(f"{option} {path}: {reason}")
        try:  # all or nothing: a file that fails halfway leaves no benchmark and no needs
            with transaction.atomic():
                self.load(slug, title, needs, qrels, primary_measure, relevance_level, dataset)
                if said := set_campaign_split(slug, options):
                    self.stdout.write(said)
        except TrecFormatError as error:
            raise CommandError(str(error)) from error
        except ValidationError as error:
            raise CommandError("; ".join(error.messages)) from error
        except OSError as error:
            raise CommandError(f"{error.filename or 'file'}: {error.strerror or error}") from error

    def load(self, slug, title, needs, qrels, primary_measure, relevance_level, dataset) -> None:
        benchmark, created = Benchmark.objects.get_or_create(
            slug=slug, defaults={"title": title or slug}
        )
        changed = []
        if title and not created and benchmark.title != title:
            benchmark.title = title
            changed.append("title")
        if primary_measure:
            benchmark.primary_measure = primary_measure
            changed.append("primary_measure")
        if relevance_level is not None:
            benchmark.relevance_level = relevance_level
            changed.append("relevance_level")
        if changed:
            benchmark.save(update_fields=changed)
        self.stdout.write(f"{'created' if created else 'updating'} benchmark {slug}")
        if dataset is not None:
            count, judgments = load_dataset(benchmark, dataset)
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
