from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('leaderboard', '0014_submission_hidden_by'),
    ]

    operations = [
        migrations.AddField(
            model_name='apitoken',
            name='expires',
            field=models.DateTimeField(blank=True, help_text='Refused from then on.', null=True),
        ),
        migrations.AddField(
            model_name='apitoken',
            name='scope',
            field=models.CharField(choices=[('full', 'Full: everything you can do'), ('submit', 'Submit: read and submit runs only'), ('read', 'Read: read only')], default='full', max_length=10),
        ),
    ]
