import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    replaces = [
        ('memoryboard', '0006_i11_summary_cache'),
        ('memoryboard', '0011_i15b_merge_i11'),
    ]

    dependencies = [
        ('memoryboard', '0008_playground_trace_names'),
    ]

    operations = [
        migrations.CreateModel(
            name='SummaryCacheEntry',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('conversation_id', models.CharField(max_length=255)),
                ('model', models.CharField(max_length=255)),
                ('prompt_hash', models.CharField(max_length=32)),
                ('prefix_hash', models.CharField(max_length=64)),
                ('message_count', models.PositiveIntegerField()),
                ('summary', models.TextField()),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                'db_table': 'memoryboard_summary_cache',
                'constraints': [models.UniqueConstraint(fields=('conversation_id', 'model', 'prompt_hash', 'prefix_hash'), name='summary_cache_key')],
            },
        ),
    ]
