"""Score every queued run now, in this process (no worker needed)."""

from django.core.management.base import BaseCommand

from leaderboard.models import Submission
from leaderboard.pipeline import comparing, health, scoring


class Command(BaseCommand):
    help = "Score all queued runs in-process, then compare them."

    def handle(self, *args, **options) -> None:
        pending = list(
            Submission.objects.filter(status=Submission.Status.QUEUED).values_list("pk", flat=True)
        )
        touched: set[tuple[int, int]] = set()
        for pk in pending:
            submission = scoring.run_scoring(pk, task_id="score_pending")
            if submission is None:
                continue
            if submission.status == Submission.Status.SCORED:
                comparing.compare(submission, submission.judgments)
                touched.add((submission.benchmark_id, submission.judgments_id))
            self.stdout.write(
                f"{submission.run_name}: {submission.status} {submission.failure_reason}"
            )
        for benchmark_id, judgments_id in sorted(touched):
            health.compute(benchmark_id, judgments_id)  # the health pages, in-process too
        self.stdout.write(f"{len(pending)} queued runs processed")
