import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    replaces = [
        ('memoryboard', '0005_i13_retrieval_receipt'),
        ('memoryboard', '0007_i13_merge_i12'),
        ('memoryboard', '0013_i13_merge_main'),
    ]

    dependencies = [
        ('memoryboard', '0010_summary_cache_names'),
    ]

    operations = [
        migrations.CreateModel(
            name='RetrievalReceipt',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now, verbose_name='created at')),
                ('agent_id', models.CharField(max_length=255, verbose_name='agent')),
                ('user_id', models.CharField(max_length=255, verbose_name='user')),
                ('conversation_id', models.CharField(blank=True, max_length=255, verbose_name='conversation')),
                ('kind', models.CharField(max_length=16, verbose_name='kind')),
                ('query', models.TextField(verbose_name='query')),
                ('k', models.PositiveIntegerField()),
                ('model_name', models.CharField(max_length=100, verbose_name='embedding model')),
                ('min_relevance', models.FloatField(verbose_name='minimum relevance')),
                ('index', models.CharField(default='exact', max_length=16, verbose_name='index')),
                ('counts', models.JSONField(default=dict, verbose_name='counts')),
                ('candidates', models.JSONField(default=list, verbose_name='candidates')),
            ],
            options={
                'verbose_name': 'retrieval receipt',
                'verbose_name_plural': 'retrieval receipts',
                'db_table': 'memoryboard_retrieval_receipt',
                'ordering': ['-created_at', '-id'],
            },
        ),
        migrations.DeleteModel(
            name='VectorGeneration',
        ),
        migrations.AddIndex(
            model_name='retrievalreceipt',
            index=models.Index(fields=['conversation_id', 'created_at'], name='idx_receipt_conversation'),
        ),
        migrations.AddIndex(
            model_name='retrievalreceipt',
            index=models.Index(fields=['user_id', 'created_at'], name='idx_receipt_user'),
        ),
    ]
