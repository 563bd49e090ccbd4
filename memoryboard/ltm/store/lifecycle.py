"""Lifecycle jobs of long-term memory: the per-namespace item limit, decay and cleanup.

Nothing here deletes a row: items are archived (``over_limit``, ``decay``) and can be restored.
Every change is audited; decay runs are idempotent (see docs/decisions.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Coalesce
from django.utils import timezone

from memoryboard.audit import audit_record, audit_record_many
from memoryboard.ltm.store.change_log import memory_change_prune
from memoryboard.ltm.store.items import memory_snapshot
from memoryboard.ltm.store.selectors import namespace_q
from memoryboard.ltm.store.signals import announce_states_changed
from memoryboard.ltm.store.states import state_of
from memoryboard.models import (
    ArchivedReason,
    AuditLog,
    LongTermMemory,
    MemoryFlag,
    MemoryState,
    MemoryStateChange,
)
from memoryboard.models.labels import NOTE
from memoryboard.models.namespaces import Namespace

DAY = timedelta(days=1)
DECAY_JOB = "memory_decay"
# How many changed items a decay run lists in its audit entry (the count is always complete).
DECAY_AUDIT_ITEMS = 1000


def memory_archive_many(*, ids: Sequence[str], actor=None, reason: str, note: str = "") -> list[str]:
    """Archive many active items in one transaction: audit entries and state changes in bulk.

    Args:
        ids: item ids; already archived ones are left alone.
        actor: the user, or None for a job.
        reason: an :class:`ArchivedReason` value.
        note: the reason a person typed; recorded in the ``details`` of the audit entries and state
            changes, as ``items.memory_archive`` does.

    Returns:
        The ids that were archived.
    """
    if not ids:
        return []
    now = timezone.now()
    details = {NOTE: note} if note else None
    with transaction.atomic():
        memories = list(LongTermMemory.objects.select_for_update().filter(pk__in=list(ids), archived=False))
        if not memories:
            return []
        done = [m.pk for m in memories]
        paused = set(MemoryFlag.objects.filter(memory_id__in=done, paused=True).values_list("memory_id", flat=True))
        entries = []
        changes = []
        user = actor if getattr(actor, "is_authenticated", False) else None
        for memory in memories:
            before = memory_snapshot(memory)
            memory.archived, memory.archived_at, memory.archived_reason = True, now, reason
            entries.append({
                "actor": actor, "action": AuditLog.Action.ARCHIVE, "object_type": "memory",
                "object_id": memory.pk, "before": before, "after": memory_snapshot(memory), "reason": reason,
                "details": details,
            })
            old = MemoryState.PAUSED if memory.pk in paused else MemoryState.ACTIVE
            new = state_of(archived=True, archived_reason=reason)
            changes.append(MemoryStateChange(
                memory_id=memory.pk, old_state=old, new_state=new, actor=user, reason=reason, details=details,
            ))
        LongTermMemory.objects.filter(pk__in=done).update(archived=True, archived_at=now, archived_reason=reason)
        audit_record_many(entries)
        MemoryStateChange.objects.bulk_create(changes, batch_size=500)
        announce_states_changed(memory_ids=done)
    return done


def memory_enforce_limit(*, namespace: Namespace, max_items: int, actor=None) -> list[str]:
    """Archive the lowest-scored active items of a namespace beyond ``max_items`` (reason ``over_limit``).

    Lowest score first; among equal scores the least recently used (or created) goes first.

    Returns:
        The archived ids (empty when the namespace is within its limit).
    """
    qs = LongTermMemory.objects.filter(namespace_q(namespace), archived=False)
    if qs.count() <= max_items:
        return []
    keep = list(
        qs.annotate(used=Coalesce("last_accessed_at", "created_at"))
        .order_by("-relevance_score", F("used").desc(), "-created_at", "id")
        .values_list("pk", flat=True)[:max_items]
    )
    over = list(qs.exclude(pk__in=keep).values_list("pk", flat=True))
    return memory_archive_many(ids=over, actor=actor, reason=ArchivedReason.OVER_LIMIT)


def _whole_days(later: datetime, earlier: datetime) -> int:
    return max(0, math.floor((later - earlier) / DAY))


def last_decay_run() -> datetime | None:
    """When decay was last applied (its audit entry), or None."""
    return (
        AuditLog.objects.filter(object_type="job", object_id=DECAY_JOB)
        .order_by("-created_at")
        .values_list("created_at", flat=True)
        .first()
    )


def memory_decay(
    *, now: datetime | None = None, decay_factor: float | None = None, dry_run: bool = True, actor=None
) -> list[tuple[str, float, float]]:
    """Apply ``relevance_score *= decay_factor ** days_since_access`` to active items.

    ``days_since_access`` counts whole days since ``last_accessed_at`` (or ``created_at``). A run applies
    only the whole days that passed since the previous applied run (its audit entry), so running twice
    the same day changes nothing and running daily yields exactly the formula.

    Args:
        now: the time of the run (default now).
        decay_factor: default ``settings.MEMORYBOARD_DECAY_FACTOR``.
        dry_run: True lists what would change without writing anything.
        actor: recorded in the audit entry.

    Returns:
        ``(id, old_score, new_score)`` of each item that changes.
    """
    now = now or timezone.now()
    factor = settings.MEMORYBOARD_DECAY_FACTOR if decay_factor is None else float(decay_factor)
    if not 0 < factor <= 1:
        raise ValueError("decay_factor must be in (0, 1]")
    previous = last_decay_run()
    changes: list[tuple[str, float, float]] = []
    rows = LongTermMemory.objects.filter(archived=False).values_list(
        "pk", "relevance_score", "last_accessed_at", "created_at"
    )
    for pk, score, accessed, created in rows.iterator(chunk_size=2000):
        since = accessed or created
        days = _whole_days(now, since)
        if previous is not None and previous > since:
            days -= _whole_days(previous, since)
        if days <= 0 or factor == 1:
            continue
        new = score * factor**days
        if new != score:
            changes.append((pk, score, new))
    if dry_run:
        return changes
    with transaction.atomic():
        for start in range(0, len(changes), 500):
            batch = [LongTermMemory(pk=pk, relevance_score=new) for pk, _, new in changes[start : start + 500]]
            LongTermMemory.objects.bulk_update(batch, ["relevance_score"])
        entry = audit_record(
            actor=actor,
            action=AuditLog.Action.BULK,
            object_type="job",
            object_id=DECAY_JOB,
            after={
                "factor": factor,
                "changed": len(changes),
                "items": [[pk, old, new] for pk, old, new in changes[:DECAY_AUDIT_ITEMS]],
            },
            reason="decay",
        )
        AuditLog.objects.filter(pk=entry.pk).update(created_at=now)
    if changes:  # a row per item in the items' change log: kept to its newest KEEP_ROWS at once
        memory_change_prune()
    return changes


def memory_cleanup(
    *, threshold: float | None = None, min_access: int | None = None, dry_run: bool = True, actor=None
) -> list[str]:
    """Archive (reason ``decay``, restorable) active items with ``score < threshold`` and ``access_count < min_access``.

    Args:
        threshold: default ``settings.MEMORYBOARD_CLEANUP_SCORE_THRESHOLD``.
        min_access: default ``settings.MEMORYBOARD_CLEANUP_MIN_ACCESS``.
        dry_run: True lists the ids without changing anything.
        actor: recorded in the audit log.

    Returns:
        The ids archived (or that would be).
    """
    threshold = settings.MEMORYBOARD_CLEANUP_SCORE_THRESHOLD if threshold is None else float(threshold)
    min_access = settings.MEMORYBOARD_CLEANUP_MIN_ACCESS if min_access is None else int(min_access)
    ids = list(
        LongTermMemory.objects.filter(
            archived=False, relevance_score__lt=threshold, access_count__lt=min_access
        ).order_by("relevance_score", "id").values_list("pk", flat=True)
    )
    if dry_run:
        return ids
    return memory_archive_many(ids=ids, actor=actor, reason=ArchivedReason.DECAY)
