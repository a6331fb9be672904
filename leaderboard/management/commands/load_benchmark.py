"""Create or update a benchmark from a needs file and a qrels file."""

from __future__ import annotations

import os
import time

from django.core.management.base import BaseCommand, CommandError

from evaluation.trec import TrecFormatError
from leaderboard.models import Benchmark
from leaderboard.pipeline.loading import load_judgments, load_needs


class Command(BaseCommand):
    help = "Load needs and judgments into a benchmark (created if missing); queues rescoring."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--title", default="")
        parser.add_argument("--needs", help="TSV or TREC topics file (gzip ok)")
        parser.add_argument("--qrels", help="qrels file (gzip ok)")
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
        **options,
    ) -> None:
        benchmark, created = Benchmark.objects.get_or_create(
            slug=slug, defaults={"title": title or slug}
        )
        changed = []
        if primary_measure:
            benchmark.primary_measure = primary_measure
            changed.append("primary_measure")
        if relevance_level is not None:
            benchmark.relevance_level = relevance_level
            changed.append("relevance_level")
        if changed:
            benchmark.save(update_fields=changed)
        self.stdout.write(f"{'created' if created else 'updating'} benchmark {slug}")
        try:
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
        except TrecFormatError as error:
            raise CommandError(str(error)) from error
