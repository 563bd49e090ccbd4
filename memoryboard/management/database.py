"""What management commands check of the database before they use it."""

from __future__ import annotations

from django.core.management.base import CommandError
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor


def require_migrated(using: str = DEFAULT_DB_ALIAS) -> None:
    """Raise a :class:`CommandError` saying to run ``migrate`` when migrations are not applied
    (a fresh database has no tables: the command would otherwise end in a traceback)."""
    connection = connections[using]
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if plan:
        raise CommandError(
            f"the database {connection.settings_dict['NAME']} has {len(plan)} unapplied migration(s) "
            f"(first: {plan[0][0].app_label}.{plan[0][0].name}): run `python manage.py migrate` first"
        )
