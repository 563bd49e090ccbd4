from django.db import migrations, models


class Migration(migrations.Migration):

    replaces = [
        ('memoryboard', '0014_y15_memory_flag_deleted_from_at'),
    ]

    dependencies = [
        ('memoryboard', '0011_retrieval_receipt'),
    ]

    operations = [
        migrations.AddField(
            model_name='memoryflag',
            name='deleted_from_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
