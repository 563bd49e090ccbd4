"""The agent platform's plain SQL on ``ah_long_term_memory`` (the table spelt ``TABLE``), as the change log's
tests write it: at once, or in a transaction of another connection left open (MariaDB: its log row takes its
number first and commits later)."""

from __future__ import annotations

import threading
from contextlib import contextmanager

from django.db import connection, connections, transaction

from memoryboard.models import LongTermMemory

TABLE = LongTermMemory._meta.db_table


def platform_sql(sql: str, params=()) -> None:
    """Run ``sql`` (``TABLE`` naming the items' table) on this connection."""
    with connection.cursor() as cursor:
        cursor.execute(sql.replace("TABLE", connection.ops.quote_name(TABLE)), params)


@contextmanager
def held_open(sql: str, params=()):
    """Run ``sql`` in a transaction of another connection (a thread) that stays open inside the ``with`` block
    and commits as it leaves."""
    written, release, done = threading.Event(), threading.Event(), threading.Event()

    def slow_writer():
        try:
            with transaction.atomic():
                platform_sql(sql, params)
                written.set()
                release.wait(30)
        finally:
            connections.close_all()
            done.set()

    thread = threading.Thread(target=slow_writer)
    thread.start()
    try:
        assert written.wait(30)
        yield
    finally:
        release.set()
        thread.join(30)
    assert done.is_set()
