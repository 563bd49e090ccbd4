from django.db import migrations, models


class Migration(migrations.Migration):

    replaces = [
        ('memoryboard', '0017_memory_validity_states'),
    ]

    dependencies = [
        ('memoryboard', '0014_ann_pending'),
    ]

    operations = [
        migrations.AlterField(
            model_name='longtermmemory',
            name='archived_reason',
            field=models.CharField(blank=True, choices=[('decay', 'Decayed'), ('over_limit', 'Over the item limit'), ('staff', 'Archived by staff'), ('user_deleted', 'Deleted by the user'), ('superseded', 'Superseded'), ('expired', 'Expired'), ('pending_review', 'Waiting for review'), ('rejected', 'Rejected in review')], max_length=32, null=True, verbose_name='archived reason'),
        ),
        migrations.AlterField(
            model_name='memorystatechange',
            name='new_state',
            field=models.CharField(choices=[('active', 'Active'), ('paused', 'Paused'), ('archived', 'Archived'), ('deleted', 'Deleted by user'), ('purged', 'Purged'), ('superseded', 'Superseded'), ('expired', 'Expired'), ('pending_review', 'Waiting for review'), ('rejected', 'Rejected in review')], max_length=16),
        ),
        migrations.AlterField(
            model_name='memorystatechange',
            name='old_state',
            field=models.CharField(choices=[('active', 'Active'), ('paused', 'Paused'), ('archived', 'Archived'), ('deleted', 'Deleted by user'), ('purged', 'Purged'), ('superseded', 'Superseded'), ('expired', 'Expired'), ('pending_review', 'Waiting for review'), ('rejected', 'Rejected in review')], max_length=16),
        ),
    ]
