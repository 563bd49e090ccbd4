"""The ``memoryboard_cache`` table of the shared cache (``CACHES["shared"]``, Django's database cache):
created by migrate, so a fresh clone, bin/demo and the tests have it without ``createcachetable``."""

from django.core.management.commands.createcachetable import Command as CreateCacheTable
from django.db import migrations

TABLE = "memoryboard_cache"


def create_cache_table(apps, schema_editor):
    # Django's own DDL for a database cache table; does nothing when the table exists.
    command = CreateCacheTable()
    command.verbosity = 0
    command.create_table(schema_editor.connection.alias, TABLE, dry_run=False)


def drop_cache_table(apps, schema_editor):
    schema_editor.execute(f"DROP TABLE IF EXISTS {schema_editor.quote_name(TABLE)}")


class Migration(migrations.Migration):

    dependencies = [
        ("memoryboard", "0015_memory_validity_states"),
    ]

    operations = [
        # Not atomic: MySQL and MariaDB cannot run DDL inside a transaction (both directions run DDL).
        migrations.RunPython(create_cache_table, drop_cache_table, atomic=False),
    ]
