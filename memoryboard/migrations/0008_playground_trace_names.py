from django.db import migrations


class Migration(migrations.Migration):

    replaces = [
        ('memoryboard', '0010_i15b_trace_names'),
    ]

    dependencies = [
        ('memoryboard', '0007_audit_labels_model_names'),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='playgroundtrace',
            options={'verbose_name': 'playground trace', 'verbose_name_plural': 'playground traces'},
        ),
    ]
