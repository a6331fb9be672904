"""Queue every run of a benchmark for rescoring against its latest judgments."""

from django.core.management.base import BaseCommand, CommandError

from leaderboard.models import Benchmark
from leaderboard.pipeline.loading import rescore_benchmark


class Command(BaseCommand):
    help = "Queue all live runs of BENCHMARK for rescoring."

    def add_arguments(self, parser) -> None:
        parser.add_argument("benchmark", help="the benchmark's slug")

    def handle(self, *args, benchmark: str, **options) -> None:
        found = Benchmark.objects.filter(slug=benchmark).first()
        if found is None:
            raise CommandError(f"no benchmark with slug {benchmark!r}")
        self.stdout.write(f"queued {rescore_benchmark(found)} runs of {found.slug}")
