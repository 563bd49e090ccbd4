import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    replaces = [
        ('memoryboard', '0005_i15b_playground_trace'),
    ]

    dependencies = [
        ('memoryboard', '0004_vector_generation'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='PlaygroundTrace',
            fields=[
                ('id', models.CharField(max_length=64, primary_key=True, serialize=False)),
                ('messages', models.JSONField()),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'db_table': 'memoryboard_playground_trace',
            },
        ),
    ]
