"""Staff writes behind the admin actions: bulk archive/restore/re-embed, merge, purge.

Each bulk write is one transaction of the per-item services, which write one audit entry per item, labelled
by what happened to it (no second, summary entry: docs/decisions.md).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from memoryboard.audit import audit_record, audit_record_many
from memoryboard.ltm.search.embeddings import memory_embed_many
from memoryboard.ltm.store.items import (
    MemoryError,
    clean_note,
    memory_archive,
    memory_restore,
    memory_set_paused,
    memory_snapshot,
    record_state_change,
)
from memoryboard.ltm.store.lifecycle import memory_archive_many as archive_ids
from memoryboard.ltm.store.rehearsal import Outcome, rehearse
from memoryboard.ltm.store.states import memory_state
from memoryboard.ltm.store.versions import version_record_change
from memoryboard.models import (
    ArchivedReason,
    AuditLog,
    LongTermMemory,
    MemoryFlag,
    MemoryState,
    MemoryVersion,
    VersionEvent,
)
from memoryboard.models.labels import MERGED_OTHERS

# A bulk action by filter touches at most this many items; narrow the filter for more.
MAX_BULK_ITEMS = 5_000


class BulkTooLarge(ValueError):
    def __init__(self, count: int):
        super().__init__(f"{count} items is more than {MAX_BULK_ITEMS}; narrow the filter.")
        self.count = count


def memory_bulk_preview(*, service, memories, actor, **options) -> Outcome:
    """What the bulk write ``service(memories=..., actor=..., **options)`` will do to the selected items,
    by running it and rolling it back (``ltm.store.rehearsal``): the confirmation page lists it.

    Raises:
        BulkTooLarge, MemoryError: as ``service`` does.
    """
    ids = sorted({m.pk for m in memories})

    def scope():
        return LongTermMemory.objects.filter(pk__in=ids)

    _value, outcome = rehearse(lambda: service(memories=scope(), actor=actor, **options), scope=scope)
    return outcome


def _locked(memories: Iterable[LongTermMemory]) -> list[LongTermMemory]:
    ids = sorted({m.pk for m in memories})
    if len(ids) > MAX_BULK_ITEMS:
        raise BulkTooLarge(len(ids))
    return list(LongTermMemory.objects.filter(pk__in=ids).order_by("pk").select_for_update())


def _apply_each(memories, *, actor, name: str, change) -> list[str]:
    """Run ``change(memory)`` on each item in one transaction; ``change`` returns whether it changed."""
    with transaction.atomic():
        return [m.pk for m in _locked(memories) if change(m)]


def memory_archive_many(*, memories: Iterable[LongTermMemory], actor, note: str = "") -> list[str]:
    """Archive items (reason ``staff``) in one transaction. Returns the ids that changed.

    ``note``: the reason staff typed, recorded in each item's audit entry. The per-item audit entries and
    state changes are written in bulk by ``ltm.store.lifecycle``.
    """
    note = clean_note(note)
    with transaction.atomic():
        ids = [m.pk for m in _locked(memories)]
        return sorted(archive_ids(ids=ids, actor=actor, reason=ArchivedReason.STAFF, note=note))


def memory_restore_many(*, memories: Iterable[LongTermMemory], actor) -> list[str]:
    """Restore archived (or user-deleted) items to their previous state, in one transaction."""

    def change(memory):
        return memory.archived and memory_restore(memory=memory, actor=actor)

    return _apply_each(memories, actor=actor, name="restore", change=change)


def memory_pause_many(*, memories: Iterable[LongTermMemory], actor, paused: bool = True) -> list[str]:
    """Pause (or resume) active items in one transaction; archived items are left alone."""

    def change(memory):
        if memory.archived or (memory_state(memory) == MemoryState.PAUSED) == paused:
            return False
        return memory_set_paused(memory=memory, actor=actor, paused=paused)

    return _apply_each(memories, actor=actor, name="pause" if paused else "resume", change=change)


def memory_resume_many(*, memories: Iterable[LongTermMemory], actor) -> list[str]:
    return memory_pause_many(memories=memories, actor=actor, paused=False)


def memory_reembed_many(*, memories: Iterable[LongTermMemory], actor, embedder=None) -> list[str]:
    """Recompute the vectors of items with the current embedding model, audited per item."""
    with transaction.atomic():
        items = _locked(memories)
        memory_embed_many(items, embedder=embedder)
        audit_record_many([
            {"actor": actor, "action": AuditLog.Action.REEMBED, "object_type": "memory", "object_id": m.pk}
            for m in items
        ])
    return [m.pk for m in items]


def memory_merge(*, keep: LongTermMemory, others: Iterable[LongTermMemory], actor) -> list[str]:
    """Keep one item and archive the others as "merged into" it, as one audited transaction.

    The kept item takes over the others' uses (``access_count``, the latest ``last_accessed_at``) and
    their sources (``value_json.mergedFrom``: id, source and conversation of each); each other item
    keeps its text, is archived with reason ``merged`` and names the kept one (``mergedInto``), so it
    can be restored. The kept item gets a version (event ``merge``). Only items of the same user as
    ``keep`` are merged; others are ignored.

    Returns:
        The ids merged into ``keep``.
    """
    suffix_user = keep.user_id
    with transaction.atomic():
        locked = _locked([keep, *others])
        keep = next((m for m in locked if m.pk == keep.pk), None)
        if keep is None or keep.archived:
            return []
        merged = [m for m in locked if m.pk != keep.pk and m.user_id == suffix_user and not m.archived]
        if not merged:
            return []
        before_keep = memory_snapshot(keep)
        value = dict(keep.value_json or {})
        sources = list(value.get("mergedFrom") or [])
        for memory in merged:
            sources.append({"id": memory.pk, "source": memory.source, "content": memory.content,
                            **({"conversationId": memory.value_json["conversationId"]}
                               if (memory.value_json or {}).get("conversationId") else {})})
            memory_archive(memory=memory, actor=actor, reason=ArchivedReason.MERGED)
            LongTermMemory.objects.filter(pk=memory.pk).update(
                value_json={**(memory.value_json or {}), "mergedInto": keep.pk})
        value["mergedFrom"] = sources
        before_value = dict(keep.value_json or {})
        keep.value_json = value
        keep.access_count += sum(m.access_count for m in merged)
        used = [t for t in [keep.last_accessed_at, *(m.last_accessed_at for m in merged)] if t is not None]
        keep.last_accessed_at = max(used) if used else None
        keep.save(update_fields=["value_json", "access_count", "last_accessed_at"])
        audit_record(
            actor=actor, action=AuditLog.Action.MERGE, object_type="memory", object_id=keep.pk,
            before={**before_keep, "merged": [{"id": m.pk, **memory_snapshot(m)} for m in merged]},
            after=memory_snapshot(keep), reason=ArchivedReason.MERGED,
        )
        version_record_change(memory=keep, before_value=before_value, actor=actor, event=VersionEvent.MERGE,
                              reason=MERGED_OTHERS, details={"ids": [m.pk for m in merged]})
    return [m.pk for m in merged]


def merge_keeper(items: list[LongTermMemory]) -> LongTermMemory:
    """Which of near-duplicates a merge keeps: the one used most (then the one used last, then the newest)."""
    def key(m: LongTermMemory):
        return (m.access_count, m.last_accessed_at or m.created_at, m.updated_at, m.pk)

    return max(items, key=key)


def memory_merge_selected(*, memories: Iterable[LongTermMemory], actor) -> list[str]:
    """Merge items of one user: keep the one used most, archive the others as merged into it.

    Raises:
        MemoryError: the items belong to more than one user (field ``user``).
    """
    items = [m for m in memories if not m.archived]
    users = {m.user_id for m in items}
    if len(users) > 1:
        raise MemoryError("Merge items of one user at a time.", field="user")
    if len(items) < 2:
        return []
    keep = merge_keeper(items)
    return memory_merge(keep=keep, others=[m for m in items if m.pk != keep.pk], actor=actor)


def memory_purge_many(*, memories: Iterable[LongTermMemory], actor) -> list[str]:
    """Physically delete items (superusers only), auditing each with its last content."""
    with transaction.atomic():
        items = _locked(memories)
        flags = set(MemoryFlag.objects.filter(memory_id__in=[m.pk for m in items], paused=True)
                    .values_list("memory_id", flat=True))
        for memory in items:
            audit_record(
                actor=actor, action=AuditLog.Action.PURGE, object_type="memory", object_id=memory.pk,
                before=memory_snapshot(memory), reason="purged by a superuser",
            )
            record_state_change(memory.pk, memory_state(memory, paused=memory.pk in flags), MemoryState.PURGED,
                          actor, "purged by a superuser")
        ids = [m.pk for m in items]
        LongTermMemory.objects.filter(pk__in=ids).delete()
        MemoryFlag.objects.filter(memory_id__in=ids).delete()
        MemoryVersion.objects.filter(memory_id__in=ids).delete()  # the texts go with the item
    return ids
