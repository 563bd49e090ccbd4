"""Upsert of memory items: INSERT … ON DUPLICATE KEY UPDATE (MySQL/MariaDB), ON CONFLICT (SQLite)."""

from __future__ import annotations

import time
from collections.abc import Iterable

from django.core.cache import cache
from django.db import OperationalError, connection, transaction

from memoryboard.ltm.store.erase_gate import erase_gate_pass
from memoryboard.ltm.store.selectors import AGENTS_CACHE_KEY
from memoryboard.models import LongTermMemory
from memoryboard.models.namespaces import parse_namespace

# Columns an upsert overwrites; access statistics and archive state survive a re-save.
UPSERT_UPDATE_FIELDS = ["namespace", "key_name", "value_json", "updated_at", "relevance_score"]
_MYSQL_DEADLOCK = 1213


def _note_agent_namespaces(rows: list[LongTermMemory]) -> None:
    """Forget the cached agent list when a write adds an agent it does not hold (user scoping uses it)."""
    cached = cache.get(AGENTS_CACHE_KEY)
    if cached is None:
        return
    for row in rows:
        ns = parse_namespace(row.namespace)
        if ns is not None and ns.agent not in cached:
            cache.delete(AGENTS_CACHE_KEY)
            return


def _pass_erase_gate(rows: list[LongTermMemory]) -> None:
    """Refuse the write if an owner's data was erased after the work began (``ltm.store.erase_gate``)."""
    owners = {ns.user_id for ns in (parse_namespace(row.namespace) for row in rows) if ns is not None}
    erase_gate_pass(user_ids=owners)


def memory_upsert_many(items: Iterable[LongTermMemory], *, batch_size: int = 500) -> int:
    """Insert or update items by primary key in one statement per batch.

    Rows are sorted by id so concurrent writers take row locks in the same order; a
    deadlock that MySQL still reports is retried a few times. The owners' erase tombstones are checked
    first, in the same transaction (``ltm.store.erase_gate``).

    Raises:
        UserDataErased: an owner's data was erased after the work began; nothing is written.

    Returns:
        The number of items written.
    """
    rows = sorted(items, key=lambda item: item.pk)
    if not rows:
        return 0
    unique_fields = ["id"] if connection.features.supports_update_conflicts_with_target else None
    for attempt in range(5):
        try:
            with transaction.atomic():
                _pass_erase_gate(rows)
                LongTermMemory.objects.bulk_create(
                    rows,
                    batch_size=batch_size,
                    update_conflicts=True,
                    unique_fields=unique_fields,
                    update_fields=UPSERT_UPDATE_FIELDS,
                )
            _note_agent_namespaces(rows)
            return len(rows)
        except OperationalError as exc:
            if exc.args and exc.args[0] == _MYSQL_DEADLOCK and attempt < 4:
                time.sleep(0.01 * (attempt + 1))
                continue
            raise
    return 0  # pragma: no cover
