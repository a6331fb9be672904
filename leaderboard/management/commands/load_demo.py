"""Load the seed chapter's library example: idempotent, scored, ready to browse."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.files import File
from django.core.management.base import BaseCommand
from django.db import transaction

from evaluation.significance.paired import FEW_NEEDS
from leaderboard.models import Benchmark, Submission
from leaderboard.pipeline import comparing, scoring
from leaderboard.pipeline.files import sha256_of
from leaderboard.pipeline.loading import load_judgments, load_needs

DEMO = Path(__file__).resolve().parents[2] / "demo"

BENCHMARKS = [
    {
        "slug": "library",
        "title": "Library: books for four information needs",
        "description": "The seed chapter's MAP example: CS foundations (15 relevant books), "
        "stage plays (5), Atwood books (2) and Russian novels (1). System B's MAP (0.740) "
        "beats System A's (0.473), though A finds more CS foundations books early.",
        "primary_measure": "map",
        "folder": DEMO,
    },
    {
        "slug": "library-facts",
        "title": "Library facts: one answer each",
        "description": "The seed chapter's MRR example: four fact-lookup needs with a single "
        "correct book each.",
        "primary_measure": "recip_rank",
        "folder": DEMO / "facts",
    },
]


class Command(BaseCommand):
    help = "Load the demo benchmarks (library, library-facts) with two scored runs each."

    def handle(self, *args, **options) -> None:
        participant, created = get_user_model().objects.get_or_create(
            username="demo", defaults={"email": "demo@example.org"}
        )
        if created:
            participant.set_unusable_password()
            participant.save()
        for spec in BENCHMARKS:
            self._load(spec, participant)

    def _load(self, spec: dict, participant) -> None:
        folder: Path = spec["folder"]
        with transaction.atomic():
            benchmark, _ = Benchmark.objects.get_or_create(
                slug=spec["slug"],
                defaults={
                    "title": spec["title"],
                    "description": spec["description"],
                    "primary_measure": spec["primary_measure"],
                },
            )
            with open(folder / "needs.tsv", "rb") as needs:
                load_needs(benchmark, needs, "needs.tsv")
            with open(folder / "qrels.txt", "rb") as qrels:
                judgments = load_judgments(benchmark, qrels, "qrels.txt")
        for path in sorted(folder.glob("run-*.txt")):
            tag = path.read_text().split()[5]
            submission = Submission.objects.filter(benchmark=benchmark, run_name=tag).first()
            if submission is None:
                submission = Submission(
                    benchmark=benchmark,
                    participant=participant,
                    run_name=tag,
                    description=f"The seed chapter's {tag}.",
                    is_baseline=path.name == "run-A.txt",
                )
                with open(path, "rb") as handle:
                    submission.sha256, submission.size = sha256_of([handle.read()])
                    handle.seek(0)
                    submission.file.save(path.name, File(handle), save=False)
                submission.save()
            # Score in-process so the demo is ready even with no worker running.
            if not submission.results.filter(judgments=judgments).exists():
                scoring.run_scoring(submission.pk, task_id="load_demo")
        for submission in benchmark.submissions.scored():
            comparing.compare(submission, judgments)
        benchmark.refresh_from_db()
        needs = benchmark.needs.count()
        # The seed's examples have four needs by design: said once, in words, here.
        few = (
            f" (with fewer than {FEW_NEEDS} needs the Wilcoxon and randomization tests "
            "cannot reach p < 0.05)"
            if needs < FEW_NEEDS
            else ""
        )
        self.stdout.write(
            f"{benchmark.slug}: {needs} needs, "
            f"{benchmark.submissions.scored().count()} scored runs{few}"
        )
