# The upload_to functions moved with the models' split into a package
# (leaderboard.models -> leaderboard.models.benchmarks / .submissions). Nothing in the
# database changes; this records their new dotted paths. leaderboard.models still
# re-exports both names because 0001_initial imports them from there.

import leaderboard.models.benchmarks
import leaderboard.models.submissions
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0002_apitoken"),
    ]

    operations = [
        migrations.AlterField(
            model_name="judgments",
            name="file",
            field=models.FileField(
                max_length=300, upload_to=leaderboard.models.benchmarks.judgments_path
            ),
        ),
        migrations.AlterField(
            model_name="submission",
            name="file",
            field=models.FileField(
                max_length=300, upload_to=leaderboard.models.submissions.submission_path
            ),
        ),
    ]
