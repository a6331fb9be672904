"""Re-queue runs stuck in queued/running (the same sweep Celery beat runs)."""

from django.core.management.base import BaseCommand

from leaderboard.pipeline.tasks import sweep_stuck


class Command(BaseCommand):
    help = "Re-queue runs stuck past STUCK_AFTER_SECONDS; fail them after MAX_SCORING_ATTEMPTS."

    def handle(self, *args, **options) -> None:
        outcome = sweep_stuck()
        self.stdout.write(f"re-queued {outcome['requeued']}, failed {outcome['failed']}")
