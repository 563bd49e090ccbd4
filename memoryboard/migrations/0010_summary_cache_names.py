from django.db import migrations


class Migration(migrations.Migration):

    replaces = [
        ('memoryboard', '0012_i11_summary_cache_names'),
    ]

    dependencies = [
        ('memoryboard', '0009_summary_cache'),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='summarycacheentry',
            options={'verbose_name': 'cached summary', 'verbose_name_plural': 'cached summaries'},
        ),
    ]
