"""Expiry of items: ``expiresAt`` in ``value_json``, ``ttl-days`` per agent and type, ``refresh-on-read``.

As LangGraph's store ``TTLConfig``: an item saved by an agent whose ``agents.yaml`` gives its type a
``ttl-days`` expires that many days later; with ``refresh-on-read`` every retrieval that returns it
pushes its expiry forward again. An item past its expiry is not current (``ltm.store.states``): no read
surface uses it, and it is archived with reason ``expired`` (restorable, like every archive) by the worker's
sweep every ``MEMORYBOARD_EXPIRY_SWEEP_MINUTES`` and at once when a read meets it (``ltm.store.tasks``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models.fields.json import KT
from django.db.models.lookups import GreaterThan, LessThanOrEqual
from django.utils import timezone

from memoryboard.agents_config import get_agents_config
from memoryboard.audit import audit_record
from memoryboard.ltm.store.items import MemoryError, memory_snapshot
from memoryboard.ltm.store.lifecycle import memory_archive_many
from memoryboard.models import ArchivedReason, AuditLog, LongTermMemory
from memoryboard.models.memory import parse_value_time, value_time_text

# A read refreshes the expiry only when it would move it by more than this share of the TTL: an item
# read every turn is not rewritten every turn.
REFRESH_MIN_SHARE = 0.01


def expiry_text(moment: datetime) -> str:
    """``expiresAt`` as stored: ISO 8601 in UTC, seconds, ``Z`` (``models.memory.value_time_text``)."""
    return value_time_text(moment)


def ttl_days_for(agent_id: str, memory_type: str) -> int | None:
    """The configured life of a new item of this agent and type, in days (None: no expiry)."""
    config = get_agents_config().get(str(agent_id or ""))
    return config.long_term_memory.ttl_for(memory_type) if config else None


def default_expiry(agent_id: str, memory_type: str, *, now: datetime | None = None) -> str | None:
    days = ttl_days_for(agent_id, memory_type)
    return expiry_text((now or timezone.now()) + timedelta(days=days)) if days else None


def is_expired(value: dict | None, *, now: datetime | None = None) -> bool:
    moment = parse_value_time((value or {}).get("expiresAt"))
    return moment is not None and moment <= (now or timezone.now())


def expired_flags(texts: Sequence[str | None], *, now: datetime | None = None) -> list[bool]:
    """For each ``expiresAt`` text (None: none), whether it has passed (the retrieval's filter)."""
    now = now or timezone.now()
    out = []
    for text in texts:
        moment = parse_value_time(text) if text else None
        out.append(moment is not None and moment <= now)
    return out


def parse_expiry(value) -> str | None:
    """An ``expires_at`` input (ISO 8601 text or a datetime; None clears it) as stored.

    Raises:
        ValueError: not a date or time.
    """
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return expiry_text(value)
    moment = parse_value_time(value) if isinstance(value, str) else None
    if moment is None:
        raise ValueError("expires_at must be an ISO 8601 date or time, e.g. 2027-01-31T12:00:00Z.")
    return expiry_text(moment)


def memory_set_expiry(*, memory: LongTermMemory, actor, expires_at) -> LongTermMemory:
    """Set (or with None clear) an item's ``expiresAt``; audited. Not a version: text and type are unchanged.

    Raises:
        MemoryError: ``expires_at`` is not a date or time (``field="expires_at"``).
    """
    try:
        text = parse_expiry(expires_at)
    except ValueError as exc:
        raise MemoryError(str(exc), field="expires_at") from None
    with transaction.atomic():
        memory = LongTermMemory.objects.select_for_update().get(pk=memory.pk)
        value = dict(memory.value_json or {})
        if value.get("expiresAt") == text or (text is None and "expiresAt" not in value):
            return memory
        before = memory_snapshot(memory)
        if text is None:
            value.pop("expiresAt", None)
        else:
            value["expiresAt"] = text
        memory.value_json = value
        memory.save(update_fields=["value_json"])
        audit_record(actor=actor, action=AuditLog.Action.UPDATE, object_type="memory", object_id=memory.pk,
                     before=before, after=memory_snapshot(memory), reason="expiry")
    return memory


def memory_refresh_on_read(memories: Iterable[LongTermMemory], *, agent_id: str, now: datetime | None = None) -> list[str]:
    """Push the expiry of items an agent just read forward by their TTL (``refresh-on-read``).

    Only items that have an expiry and whose agent and type have a TTL; only when it moves by more than
    ``REFRESH_MIN_SHARE`` of the TTL. Returns the ids refreshed.
    """
    config = get_agents_config().get(str(agent_id or ""))
    if config is None or not config.long_term_memory.refresh_on_read:
        return []
    now = now or timezone.now()
    due = {}
    for memory in memories:
        days = config.long_term_memory.ttl_for(memory.memory_type)
        current = memory.expires_at
        if not days or current is None:
            continue
        target = now + timedelta(days=days)
        if (target - current) > timedelta(days=days) * REFRESH_MIN_SHARE:
            due[memory.pk] = expiry_text(target)
    if not due:
        return []
    with transaction.atomic():
        rows = list(LongTermMemory.objects.select_for_update().filter(pk__in=sorted(due), archived=False))
        for row in rows:
            row.value_json = {**(row.value_json or {}), "expiresAt": due[row.pk]}
        LongTermMemory.objects.bulk_update(rows, ["value_json"])
    for memory in memories:
        if memory.pk in due:
            memory.value_json = {**(memory.value_json or {}), "expiresAt": due[memory.pk]}
    return [row.pk for row in rows]


def expired_ids(*, now: datetime | None = None, ids: Sequence[str] | None = None) -> list[str]:
    """Items not archived whose ``expiresAt`` has passed, oldest expiry first (of ``ids`` only, when given)."""
    now = now or timezone.now()
    rows = LongTermMemory.objects.filter(archived=False, value_json__has_key="expiresAt")
    if ids is not None:
        rows = rows.filter(pk__in=list(ids))
    found = []
    for pk, value in rows.values_list("pk", "value_json").iterator(chunk_size=2000):
        moment = parse_value_time((value or {}).get("expiresAt"))
        if moment is not None and moment <= now:
            found.append((moment, pk))
    return [pk for _moment, pk in sorted(found)]


def memory_archive_expired(*, now: datetime | None = None, dry_run: bool = True, actor=None,
                           ids: Sequence[str] | None = None) -> list[str]:
    """Archive (reason ``expired``, restorable) every item not archived past its expiry (of ``ids`` only,
    when given: the items a read met); the worker's sweep and ``memory_cleanup --apply``."""
    found = expired_ids(now=now, ids=ids)
    if dry_run or not found:
        return found
    return memory_archive_many(ids=found, actor=actor, reason=ArchivedReason.EXPIRED)


def expiring_soon(queryset, *, days: int = 7, now: datetime | None = None):
    """The active items of ``queryset`` whose expiry falls within ``days`` from now (compared as text:
    memoryboard stores expiries as UTC ``Z`` text, whose order is the time order)."""
    now = now or timezone.now()
    text = KT("value_json__expiresAt")
    return queryset.filter(
        GreaterThan(text, expiry_text(now)), LessThanOrEqual(text, expiry_text(now + timedelta(days=days))),
        archived=False,
    )
