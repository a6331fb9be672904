from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    verbose_name = "Leaderboards"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from leaderboard.pipeline.discarding import discard_with_rows

        discard_with_rows()  # a deleted row's stored files go with it
