import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def organizers_hid_the_hidden(apps, schema_editor):
    """Runs hidden before the row said who hid them: whoever it was, the organizers
    may have, so only they may show them again (a participant asks them)."""
    Submission = apps.get_model("leaderboard", "Submission")
    Submission.objects.filter(is_hidden=True).update(hidden_by_organizer=True)


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0013_phases"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="hidden_by",
            field=models.ForeignKey(
                blank=True,
                help_text="Who hid the run (empty while it is public).",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="submission",
            name="hidden_by_organizer",
            field=models.BooleanField(
                default=False,
                help_text="Hidden by the benchmark's organizers: only they may show it again.",
            ),
        ),
        migrations.AddField(
            model_name="submission",
            name="visibility_changed_at",
            field=models.DateTimeField(
                blank=True,
                help_text="When the scored run was last hidden from readers or shown to them again (a board's Last-Modified).",
                null=True,
            ),
        ),
        migrations.RunPython(organizers_hid_the_hidden, migrations.RunPython.noop),
    ]
