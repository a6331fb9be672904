"""Create or update a benchmark from a needs file and a qrels file, or from an ir_datasets id
(``load_benchmark --ir-datasets msmarco-passage/trec-dl-2019/judged``: its queries become
the needs, its qrels the next judgments version; the slug defaults to the id with ``/``
as ``-``)."""

from __future__ import annotations

import os
import time

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils.text import slugify

from evaluation.measures import UnknownMeasure, resolve
from evaluation.trec import TrecFormatError
from leaderboard.models import Benchmark
from leaderboard.pipeline.datasets import DatasetError, dataset_files, load_dataset
from leaderboard.pipeline.loading import load_judgments, load_needs


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
        except TrecFormatError as error:
            raise CommandError(str(error)) from error
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
