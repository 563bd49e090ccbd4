"""The change log of ``ah_long_term_memory``, kept by the database: triggers append a ``memoryboard_memory_change``
row on every insert, delete, and update of anything but the access statistics (``access_count``,
``last_accessed_at``: each retrieval bumps them, and no search reads them), whoever writes the table. The
platform table's columns do not change (docs/schema.sql). SQLite and MySQL/MariaDB; other databases get no
triggers, and a warm search there reads every candidate as before (``ltm.store.change_log.log_kept``).

Caution for later migrations on SQLite: Django remakes a table to alter it, which drops its triggers; a
migration that alters ``ah_long_term_memory`` must create them again (``create_triggers``).
"""

import django.utils.timezone
from django.db import migrations, models

TABLE = "ah_long_term_memory"
LOG = "memoryboard_memory_change"
# Every column but the access statistics: a change of one of them is logged.
WATCHED = ("id", "namespace", "key_name", "value_json", "created_at", "updated_at", "relevance_score", "archived",
           "archived_at", "archived_reason")
# Text columns compared byte for byte on MySQL (its collations compare case-insensitively).
TEXTS = ("id", "namespace", "key_name", "value_json", "archived_reason")
NAMES = {"insert": f"{LOG}_insert", "update": f"{LOG}_update", "delete": f"{LOG}_delete"}


def _sqlite() -> list[str]:
    now = "strftime('%Y-%m-%d %H:%M:%f', 'now')"
    changed = " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in WATCHED)
    add = f"INSERT INTO {LOG} (memory_id, namespace, created_at) "
    return [
        f"CREATE TRIGGER {NAMES['insert']} AFTER INSERT ON {TABLE} BEGIN "
        f"{add}VALUES (NEW.id, NEW.namespace, {now}); END",
        f"CREATE TRIGGER {NAMES['update']} AFTER UPDATE ON {TABLE} WHEN {changed} BEGIN "
        f"{add}VALUES (NEW.id, NEW.namespace, {now}); "
        f"{add}SELECT OLD.id, OLD.namespace, {now} WHERE OLD.id IS NOT NEW.id OR OLD.namespace IS NOT NEW.namespace; END",
        f"CREATE TRIGGER {NAMES['delete']} AFTER DELETE ON {TABLE} BEGIN "
        f"{add}VALUES (OLD.id, OLD.namespace, {now}); END",
    ]


def _mysql() -> list[str]:
    def same(column: str) -> str:
        if column in TEXTS:
            return f"BINARY OLD.`{column}` <=> BINARY NEW.`{column}`"
        return f"OLD.`{column}` <=> NEW.`{column}`"

    now = "UTC_TIMESTAMP(6)"
    add = f"INSERT INTO `{LOG}` (memory_id, namespace, created_at) "
    return [
        f"CREATE TRIGGER `{NAMES['insert']}` AFTER INSERT ON `{TABLE}` FOR EACH ROW "
        f"{add}VALUES (NEW.id, NEW.namespace, {now})",
        f"CREATE TRIGGER `{NAMES['update']}` AFTER UPDATE ON `{TABLE}` FOR EACH ROW BEGIN "
        f"IF NOT ({' AND '.join(same(c) for c in WATCHED)}) THEN "
        f"{add}VALUES (NEW.id, NEW.namespace, {now}); "
        f"IF NOT ({same('id')} AND {same('namespace')}) THEN {add}VALUES (OLD.id, OLD.namespace, {now}); END IF; "
        f"END IF; END",
        f"CREATE TRIGGER `{NAMES['delete']}` AFTER DELETE ON `{TABLE}` FOR EACH ROW "
        f"{add}VALUES (OLD.id, OLD.namespace, {now})",
    ]


def create_triggers(apps, schema_editor) -> None:
    vendor = schema_editor.connection.vendor
    statements = {"sqlite": _sqlite, "mysql": _mysql}.get(vendor)
    if statements is None:
        return
    drop_triggers(apps, schema_editor)
    for sql in statements():
        schema_editor.execute(sql, params=None)


def drop_triggers(apps, schema_editor) -> None:
    if schema_editor.connection.vendor not in ("sqlite", "mysql"):
        return
    for name in NAMES.values():
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}", params=None)


class Migration(migrations.Migration):

    dependencies = [
        ('memoryboard', '0022_reason_details_ask_first'),
    ]

    operations = [
        migrations.CreateModel(
            name='MemoryChange',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('memory_id', models.CharField(blank=True, max_length=255)),
                ('namespace', models.CharField(blank=True, max_length=512)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('pruned_through', models.BigIntegerField(blank=True, null=True)),
            ],
            options={
                'verbose_name': 'memory change',
                'verbose_name_plural': 'memory changes',
                'db_table': 'memoryboard_memory_change',
                'indexes': [models.Index(fields=['namespace'], name='idx_memory_change_namespace'), models.Index(fields=['created_at'], name='idx_memory_change_created')],
            },
        ),
        migrations.RunPython(create_triggers, drop_triggers, atomic=False),
    ]
