"""Short links of replays: a replay's configuration under a short keyed id (``memoryboard_replay_share``)."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memoryboard', '0020_auditlog_subject_user'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ReplayShare',
            fields=[
                ('id', models.CharField(max_length=16, primary_key=True, serialize=False)),
                ('query', models.JSONField(help_text="The replay page's query string as [key, value] pairs.")),
                ('conversation_id', models.CharField(blank=True, db_index=True, default='', max_length=255)),
                ('trace_id', models.CharField(blank=True, default='', max_length=64)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name': 'replay link',
                'verbose_name_plural': 'replay links',
                'db_table': 'memoryboard_replay_share',
            },
        ),
    ]
