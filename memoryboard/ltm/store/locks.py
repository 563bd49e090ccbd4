"""A lock per namespace, so check-then-write sequences (dedup, limits) do not race.

MySQL/MariaDB: a named server lock (``GET_LOCK``), held by this connection across the
transaction, so it serializes writers in every process and on every host. SQLite (the embedded,
single-host mode): a lock in this process.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

from memoryboard.models.namespaces import Namespace

LOCK_TIMEOUT_SECONDS = 10

_local_locks: dict[str, threading.RLock] = {}
_local_guard = threading.Lock()


class NamespaceLockTimeout(RuntimeError):
    pass


def _lock_name(namespace: Namespace) -> str:
    # GET_LOCK names are at most 64 characters.
    return "mb:ns:" + hashlib.sha1(namespace.key().encode("utf-8")).hexdigest()


@contextmanager
def namespace_lock(namespace: Namespace) -> Iterator[None]:
    """Hold the namespace's lock for the duration of the block (enter it outside any transaction).

    Re-entrant in one thread (MariaDB's ``GET_LOCK`` counts a session's nested holds; SQLite's lock is an
    ``RLock``): an edit inside an import, which holds the lock already, takes it again.

    Raises:
        NamespaceLockTimeout: when the lock is not obtained within 10 seconds.
    """
    name = _lock_name(namespace)
    if connection.vendor == "mysql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT GET_LOCK(%s, %s)", [name, LOCK_TIMEOUT_SECONDS])
            (got,) = cursor.fetchone()
        if got != 1:
            raise NamespaceLockTimeout(name)
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SELECT RELEASE_LOCK(%s)", [name])
        return
    with _local_guard:
        lock = _local_locks.setdefault(name, threading.RLock())
    if not lock.acquire(timeout=LOCK_TIMEOUT_SECONDS):
        raise NamespaceLockTimeout(name)
    try:
        yield
    finally:
        lock.release()
