import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    replaces = [
        ('memoryboard', '0005_i15a_audit_labels'),
        ('memoryboard', '0007_i15a_merge_i12'),
        ('memoryboard', '0008_i15a_model_names'),
        ('memoryboard', '0009_i15b_merge_i15a'),
    ]

    dependencies = [
        ('memoryboard', '0006_conversation_owner_deleted_from'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='memoryaccess',
            options={'ordering': ['-created_at', '-id'], 'verbose_name': 'memory access', 'verbose_name_plural': 'memory accesses'},
        ),
        migrations.AlterModelOptions(
            name='memoryembedding',
            options={'verbose_name': 'memory vector', 'verbose_name_plural': 'memory vectors'},
        ),
        migrations.AlterModelOptions(
            name='memoryflag',
            options={'verbose_name': 'memory flag', 'verbose_name_plural': 'memory flags'},
        ),
        migrations.AlterModelOptions(
            name='memorystatechange',
            options={'ordering': ['-created_at', '-id'], 'verbose_name': 'state change', 'verbose_name_plural': 'state changes'},
        ),
        migrations.AlterModelOptions(
            name='pauserule',
            options={'verbose_name': 'pause rule', 'verbose_name_plural': 'pause rules'},
        ),
        migrations.AlterModelOptions(
            name='usermemorysettings',
            options={'verbose_name': 'memory switch', 'verbose_name_plural': 'memory switches'},
        ),
        migrations.AlterModelOptions(
            name='vectorgeneration',
            options={'verbose_name': 'vector generation', 'verbose_name_plural': 'vector generations'},
        ),
        migrations.AlterField(
            model_name='auditlog',
            name='action',
            field=models.CharField(choices=[('create', 'Create'), ('update', 'Update'), ('archive', 'Archive'), ('restore', 'Restore'), ('pause', 'Pause'), ('resume', 'Resume'), ('delete', 'Delete'), ('purge', 'Purge'), ('reembed', 'Re-embed'), ('merge', 'Merge'), ('apply_strategy', 'Apply memory strategy'), ('bulk', 'Bulk action'), ('export', 'Export'), ('erase', 'Erase all')], max_length=32, verbose_name='action'),
        ),
        migrations.AlterField(
            model_name='auditlog',
            name='actor',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='actor'),
        ),
        migrations.AlterModelOptions(
            name='auditlog',
            options={'ordering': ['-created_at', '-id'], 'verbose_name': 'audit log entry', 'verbose_name_plural': 'audit log entries'},
        ),
        migrations.AlterModelOptions(
            name='conversationowner',
            options={'verbose_name': 'conversation owner', 'verbose_name_plural': 'conversation owners'},
        ),
    ]
