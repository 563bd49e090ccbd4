"""The squashed migration history: short, linear, named by what changed, and it upgrades old databases.

A database migrated by an earlier main records the old migration names in ``django_migrations``. Each
squashed migration ``replaces`` exactly the migrations that one earlier main added, so such a database has
every replaced migration of a squashed one applied, or none: Django then takes the squashed one as applied
(or applies it) without the old files.
"""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

APP = "memoryboard"
ISSUE_OR_BRANCH = re.compile(r"_(?:[a-z]\d+[a-z]?|merge)(?:_|$)")


def _nodes() -> list:
    return [key for key in MigrationLoader(None, ignore_no_migrations=True).disk_migrations if key[0] == APP]


def _latest() -> str:
    return max(name for _app, name in _nodes())


def test_the_history_is_linear_and_named_by_what_changed():
    loader = MigrationLoader(None, ignore_no_migrations=True)
    names = sorted(name for _app, name in _nodes())
    assert names[0] == "0001_shared_tables"
    for name in names:
        migration = loader.disk_migrations[(APP, name)]
        own = [dep for dep in migration.dependencies if dep[0] == APP]
        assert len(own) <= 1, f"{name} merges branches"
        assert not ISSUE_OR_BRANCH.search(name), f"{name} names an issue, branch or merge"
    numbers = [int(name[:4]) for name in names]
    assert numbers == list(range(1, len(names) + 1)), "numbered 0001, 0002, … without gaps or twins"


def _table_columns() -> dict[str, set[str]]:
    with connection.cursor() as cursor:
        tables = [t for t in connection.introspection.table_names(cursor) if t.startswith(("memoryboard_", "ah_", "chat_"))]
        return {t: {c.name for c in connection.introspection.get_table_description(cursor, t)} for t in tables}


def _replaced_by() -> dict[str, list[str]]:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    return {name: [old for _app, old in m.replaces] for (app, name), m in loader.disk_migrations.items()
            if app == APP and m.replaces}


@pytest.mark.django_db(transaction=True)
def test_first_to_last_and_back_to_the_squashed_head():
    """Down to 0001 (the shared tables stay), up to the last, back to the squash's head, up again."""
    latest = _latest()
    full = _table_columns()
    squashed_head = max(_replaced_by())
    try:
        call_command("migrate", APP, "0001_shared_tables", verbosity=0)
        left = _table_columns()
        assert set(left) == {"ah_long_term_memory", "chat_message"}
        call_command("migrate", APP, latest, verbosity=0)
        assert _table_columns() == full
        call_command("migrate", APP, squashed_head, verbosity=0)
        call_command("migrate", APP, latest, verbosity=0)
        assert _table_columns() == full
    finally:
        call_command("migrate", APP, latest, verbosity=0)


@pytest.mark.django_db(transaction=True)
def test_a_database_of_each_earlier_main_upgrades_without_the_old_files():
    """For each squashed migration: a database whose ``django_migrations`` holds the old names up to it
    (what an earlier main wrote) migrates to the last one and ends with the same tables as a new one."""
    latest = _latest()
    full = _table_columns()
    replaced = _replaced_by()
    recorder = MigrationRecorder(connection)
    try:
        for head in sorted(replaced):
            call_command("migrate", APP, head, verbosity=0)
            # Rewrite the record as the earlier main left it: old names for every squashed migration so far.
            for name, olds in replaced.items():
                if name <= head:
                    recorder.record_unapplied(APP, name)
                    recorded = {n for a, n in recorder.applied_migrations() if a == APP}
                    for old in olds:
                        if old not in recorded:
                            recorder.record_applied(APP, old)
            executor = MigrationExecutor(connection)
            assert (APP, head) in executor.loader.applied_migrations, head
            call_command("migrate", APP, latest, verbosity=0)
            assert _table_columns() == full, head
            applied = {name for app, name in recorder.applied_migrations() if app == APP}
            assert latest in applied and head in applied
    finally:
        call_command("migrate", APP, latest, verbosity=0)
