import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    replaces = [
        ('memoryboard', '0015_d16_playground_trace_last_used'),
    ]

    dependencies = [
        ('memoryboard', '0012_memory_flag_deleted_from_at'),
    ]

    operations = [
        migrations.AddField(
            model_name='playgroundtrace',
            name='last_used_at',
            field=models.DateTimeField(db_index=True, default=django.utils.timezone.now),
        ),
    ]
