import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    replaces = [
        ('memoryboard', '0005_i12_conversation_owner'),
        ('memoryboard', '0006_i12_memory_flag_deleted_from'),
        ('memoryboard', '0007_i15b_merge_i12'),
    ]

    dependencies = [
        ('memoryboard', '0005_playground_trace'),
    ]

    operations = [
        migrations.CreateModel(
            name='ConversationOwner',
            fields=[
                ('conversation_id', models.CharField(max_length=255, primary_key=True, serialize=False)),
                ('user_id', models.CharField(max_length=255)),
                ('agent_id', models.CharField(max_length=255)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                'db_table': 'memoryboard_conversation_owner',
            },
        ),
        migrations.AddField(
            model_name='memoryflag',
            name='deleted_from',
            field=models.CharField(blank=True, default='', max_length=32),
        ),
    ]
