from django.db import migrations, models


class Migration(migrations.Migration):

    replaces = [
        ('memoryboard', '0016_u13_ann_pending'),
    ]

    dependencies = [
        ('memoryboard', '0013_playground_trace_last_used'),
    ]

    operations = [
        migrations.CreateModel(
            name='AnnPending',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('model_name', models.CharField(max_length=100)),
                ('memory_id', models.CharField(max_length=255)),
            ],
            options={
                'verbose_name': 'pending index update',
                'verbose_name_plural': 'pending index updates',
                'db_table': 'memoryboard_ann_pending',
                'indexes': [models.Index(fields=['model_name', 'id'], name='idx_ann_pending_model')],
            },
        ),
    ]
