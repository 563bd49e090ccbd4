"""Writes of an item's state: archive, delete, restore, pause, purge; and what every write checks.

Every write records its audit entry and state change in the same transaction, and announces a changed
state to the index (``store.signals``). Creating and editing an item's text go through
``ltm.write.items`` (an edit is reconciled). Namespaces are built by the caller from the authenticated
user (``models.namespaces``).
"""

from __future__ import annotations

import re
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memoryboard.audit import audit_record, audit_record_many
from memoryboard.ltm.store.selectors import namespace_q, namespace_texts_q, own_memories
from memoryboard.ltm.store.signals import announce_states_changed
from memoryboard.ltm.store.states import memory_state
from memoryboard.models import (
    ArchivedReason,
    AuditLog,
    LongTermMemory,
    MemoryFlag,
    MemoryState,
    MemoryStateChange,
    MemoryType,
    MemoryVersion,
)
from memoryboard.models.labels import NOTE, SAME_ITEM_IN_USE, UNDO_DELETE
from memoryboard.models.namespaces import parse_namespace


class MemoryError(ValueError):
    """A write that cannot be done; ``field`` names the input at fault."""

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field


MAX_CONTENT_CHARS = 20_000


def memory_snapshot(memory: LongTermMemory) -> dict:
    """What the audit log keeps of an item: enough to see and restore what changed."""
    return {
        "namespace": memory.namespace,
        "value_json": memory.value_json,
        "relevance_score": memory.relevance_score,
        "archived": memory.archived,
        "archived_reason": memory.archived_reason,
    }


def clean_content(content: str) -> str:
    """``content`` stripped, checked: non-empty text of at most ``MAX_CONTENT_CHARS``.

    Raises:
        MemoryError: otherwise (``field="content"``).
    """
    if not isinstance(content, str) or not content.strip():
        raise MemoryError("Content must be a non-empty string.", field="content")
    content = content.strip()
    if len(content) > MAX_CONTENT_CHARS:
        raise MemoryError(f"Content is longer than {MAX_CONTENT_CHARS} characters.", field="content")
    return content


def clean_type(memory_type: str) -> str:
    """``memory_type`` upper-cased, checked against :class:`~memoryboard.models.MemoryType`.

    Raises:
        MemoryError: an unknown type (``field="type"``).
    """
    value = str(memory_type or "").upper()
    if value not in MemoryType.values:
        raise MemoryError(
            f"Unknown memory type {memory_type!r}; use one of {', '.join(MemoryType.values)}.", field="type"
        )
    return value


def record_state_change(memory_id: str, old: str, new: str, actor, reason: str, details: dict | None = None) -> None:
    """One ``MemoryStateChange`` row when the state changed (call it in the write's transaction);
    ``details``: what the reason is about, as data (``models.labels``)."""
    if old != new:
        MemoryStateChange.objects.create(
            memory_id=memory_id,
            old_state=old,
            new_state=new,
            actor=actor if getattr(actor, "is_authenticated", False) else None,
            reason=reason[:255],
            details=details or None,
        )


MAX_NOTE_CHARS = 200


def clean_note(note) -> str:
    """The reason a person typed for an action (shown in the audit log), checked.

    Raises:
        MemoryError: not text, or longer than ``MAX_NOTE_CHARS`` (``field="reason"``).
    """
    if note is None:
        return ""
    if not isinstance(note, str):
        raise MemoryError("The reason must be text.", field="reason")
    note = " ".join(note.split())
    if len(note) > MAX_NOTE_CHARS:
        raise MemoryError(f"The reason is longer than {MAX_NOTE_CHARS} characters.", field="reason")
    return note


def memory_archive(
    *, memory: LongTermMemory, actor, reason: str = ArchivedReason.STAFF, note: str = ""
) -> LongTermMemory:
    """Archive an item. ``note`` is why, in the actor's words (support's typed reason): kept next to the
    reason code, in the ``details`` of the audit entry and of the state change (``models.labels.reason_words``
    shows it as "<reason in words>: “<note>”")."""
    if reason not in ArchivedReason.values:
        raise MemoryError(f"Unknown archive reason {reason!r}.", field="reason")
    note = clean_note(note)
    details = {NOTE: note} if note else None
    with transaction.atomic():
        memory = LongTermMemory.objects.select_for_update().get(pk=memory.pk)
        if memory.archived and memory.archived_reason == reason:
            return memory
        before = memory_snapshot(memory)
        old_state = memory_state(memory)
        memory.archived = True
        memory.archived_at = timezone.now()
        memory.archived_reason = reason
        memory.save(update_fields=["archived", "archived_at", "archived_reason"])
        action = AuditLog.Action.DELETE if reason == ArchivedReason.USER_DELETED else AuditLog.Action.ARCHIVE
        audit_record(
            actor=actor, action=action, object_type="memory", object_id=memory.pk,
            before=before, after=memory_snapshot(memory), reason=reason, details=details,
        )
        record_state_change(memory.pk, old_state, memory_state(memory), actor, reason, details)
        if old_state not in (MemoryState.ARCHIVED, MemoryState.DELETED):
            announce_states_changed(memory_ids=[memory.pk])
    return memory


def end_user_may_restore(memory: LongTermMemory) -> bool:
    """An end user restores only what they deleted themselves (``user_deleted``)."""
    return memory.archived and memory.archived_reason == ArchivedReason.USER_DELETED


def end_user_may_edit(memory: LongTermMemory) -> bool:
    """An end user edits only active (or paused) items: never what staff, decay or the limit archived,
    nor what they deleted."""
    return not memory.archived


def memory_delete_for_user(*, memory: LongTermMemory, actor) -> LongTermMemory:
    """An end user's delete: kept as ``user_deleted`` for the retention period (undo), then purged.

    An item that staff, decay or the item limit archived can be deleted (erased) by its user too; its
    archive reason and time are kept (``MemoryFlag.deleted_from``, ``deleted_from_at``) so that an undo
    returns it to that archive exactly as it was, not to active.
    """
    with transaction.atomic():
        memory = LongTermMemory.objects.select_for_update().get(pk=memory.pk)
        if memory.archived and memory.archived_reason == ArchivedReason.USER_DELETED:
            return memory
        before = memory_snapshot(memory)
        old_state = memory_state(memory)
        if memory.archived:
            MemoryFlag.objects.update_or_create(
                memory_id=memory.pk,
                defaults={"deleted_from": memory.archived_reason, "deleted_from_at": memory.archived_at},
            )
        memory.archived, memory.archived_at = True, timezone.now()
        memory.archived_reason = ArchivedReason.USER_DELETED
        memory.save(update_fields=["archived", "archived_at", "archived_reason"])
        audit_record(
            actor=actor, action=AuditLog.Action.DELETE, object_type="memory", object_id=memory.pk,
            before=before, after=memory_snapshot(memory), reason=ArchivedReason.USER_DELETED,
        )
        record_state_change(memory.pk, old_state, MemoryState.DELETED, actor, ArchivedReason.USER_DELETED)
        if old_state != MemoryState.ARCHIVED:
            announce_states_changed(memory_ids=[memory.pk])
    return memory


_SPACES = re.compile(r"\s+")
_EDGE_PUNCT = "。.!！?？;；,，:： \t\n"


def normalize_content(text: str) -> str:
    """The form compared by the substring dedup: case-folded, single spaces, no end punctuation."""
    return _SPACES.sub(" ", str(text)).strip(_EDGE_PUNCT).casefold()


def same_content_key(memory: LongTermMemory) -> tuple[object, str]:
    """What makes two items the same item: their scope (the namespace, whatever its spelling) and their
    content as the tools' dedup compares it (case, spaces, end punctuation)."""
    return parse_namespace(memory.namespace) or memory.namespace, normalize_content(memory.content)


def active_twin(memory: LongTermMemory) -> LongTermMemory | None:
    """Another item of the same scope with the same content that is in use (active or paused), if any:
    a restore of ``memory`` would make it a second copy."""
    namespace = parse_namespace(memory.namespace)
    if namespace is None:
        return None
    key = same_content_key(memory)
    candidates = (LongTermMemory.objects.filter(namespace_q(namespace), archived=False).exclude(pk=memory.pk)
                  .order_by("created_at", "id"))
    return next((other for other in candidates if same_content_key(other) == key), None)


def _supersede_by_twin(memory: LongTermMemory, twin: LongTermMemory, actor) -> LongTermMemory:
    """A restore that would duplicate ``twin``: the item is the same item, so it is recorded as superseded
    by it (one entry, state change ``old → superseded``), and not brought back (caller holds the lock)."""
    before = memory_snapshot(memory)
    old_state = memory_state(memory)
    memory.value_json = {**(memory.value_json or {}), "supersededBy": twin.pk}
    memory.archived, memory.archived_at = True, timezone.now()
    memory.archived_reason = ArchivedReason.SUPERSEDED
    memory.save(update_fields=["value_json", "archived", "archived_at", "archived_reason"])
    MemoryFlag.objects.filter(memory_id=memory.pk).exclude(deleted_from="").update(deleted_from="", deleted_from_at=None)
    details = {"id": twin.pk}
    audit_record(actor=actor, action=AuditLog.Action.ARCHIVE, object_type="memory", object_id=memory.pk,
                 before=before, after=memory_snapshot(memory), reason=SAME_ITEM_IN_USE, details=details)
    record_state_change(memory.pk, old_state, MemoryState.SUPERSEDED, actor, SAME_ITEM_IN_USE, details)
    return memory


def memory_restore_for_user(*, memory: LongTermMemory, actor) -> LongTermMemory:
    """An end user's undo of their own delete: back to active (or paused), or back to the archive
    (decay, over_limit, staff) the item was in when they deleted it.

    Raises:
        MemoryError: the item is not one the user deleted (``field="archived_reason"``).
    """
    with transaction.atomic():
        memory = LongTermMemory.objects.select_for_update().get(pk=memory.pk)
        if not end_user_may_restore(memory):
            raise MemoryError("Only items you deleted yourself can be restored by you.", field="archived_reason")
        previous, previous_at = (
            MemoryFlag.objects.filter(memory_id=memory.pk).exclude(deleted_from="")
            .values_list("deleted_from", "deleted_from_at").first()
        ) or (None, None)
        if previous is None:
            return memory_restore(memory=memory, actor=actor)
        MemoryFlag.objects.filter(memory_id=memory.pk).update(deleted_from="", deleted_from_at=None)
        before = memory_snapshot(memory)
        memory.archived_reason = previous
        memory.archived_at = previous_at or memory.archived_at  # rows deleted before 0014 kept no time
        memory.save(update_fields=["archived_reason", "archived_at"])
        audit_record(
            actor=actor, action=AuditLog.Action.RESTORE, object_type="memory", object_id=memory.pk,
            before=before, after=memory_snapshot(memory), reason=UNDO_DELETE, details={"back_to": previous},
        )
        record_state_change(memory.pk, MemoryState.DELETED, memory_state(memory), actor, UNDO_DELETE,
                            {"back_to": previous})
    return memory


def memory_delete_all_for_user(*, user_id: str, actor) -> list[str]:
    """"Delete all": every item stored about the user that is not already deleted, in every state
    (active, paused, archived by staff, decay or the limit), becomes ``user_deleted`` in one transaction,
    restorable during the retention period, then purged: with what was already deleted, exactly what
    the export lists. Audited per item (bulk inserts).

    Returns:
        The ids of the items deleted (what an undo of this "delete all" would restore).
    """
    now = timezone.now()
    user = actor if getattr(actor, "is_authenticated", False) else None
    with transaction.atomic():
        memories = list(
            own_memories(user_id=str(user_id)).select_for_update()
            .exclude(archived=True, archived_reason=ArchivedReason.USER_DELETED)
        )
        if not memories:
            return []
        ids = [m.pk for m in memories]
        paused = set(MemoryFlag.objects.filter(memory_id__in=ids, paused=True).values_list("memory_id", flat=True))
        entries, changes, flags = [], [], []
        for memory in memories:
            before = memory_snapshot(memory)
            if memory.archived:
                old = MemoryState.ARCHIVED
                flags.append(MemoryFlag(memory_id=memory.pk, deleted_from=memory.archived_reason or "",
                                        deleted_from_at=memory.archived_at))
            else:
                old = MemoryState.PAUSED if memory.pk in paused else MemoryState.ACTIVE
            memory.archived, memory.archived_at, memory.archived_reason = True, now, ArchivedReason.USER_DELETED
            entries.append({"actor": actor, "action": AuditLog.Action.DELETE, "object_type": "memory",
                            "object_id": memory.pk, "before": before, "after": memory_snapshot(memory),
                            "reason": "delete all"})
            changes.append(MemoryStateChange(memory_id=memory.pk, old_state=old, new_state=MemoryState.DELETED,
                                              actor=user, reason="delete all"))
        LongTermMemory.objects.filter(pk__in=ids).update(
            archived=True, archived_at=now, archived_reason=ArchivedReason.USER_DELETED
        )
        if flags:
            MemoryFlag.objects.bulk_create(  # ON DUPLICATE KEY UPDATE (MySQL) / ON CONFLICT (SQLite)
                flags, update_conflicts=True, update_fields=["deleted_from", "deleted_from_at"],
                unique_fields=["memory_id"] if connection.features.supports_update_conflicts_with_target else None,
            )
        audit_record_many(entries)
        MemoryStateChange.objects.bulk_create(changes, batch_size=500)
        announce_states_changed(memory_ids=[m.pk for m, c in zip(memories, changes)
                                            if c.old_state != MemoryState.ARCHIVED])
    return ids


def memory_restore(*, memory: LongTermMemory, actor) -> LongTermMemory:
    """Back to the state before archiving (a paused item comes back paused).

    An item whose content its scope already holds in use (``active_twin``: restored before, imported
    again, saved again by a tool) is not brought back as a second copy: it becomes superseded by it.
    """
    with transaction.atomic():
        memory = LongTermMemory.objects.select_for_update().get(pk=memory.pk)
        if not memory.archived:
            return memory
        twin = active_twin(memory)
        if twin is not None:
            if memory.archived_reason == ArchivedReason.SUPERSEDED and memory.superseded_by == twin.pk:
                return memory
            return _supersede_by_twin(memory, twin, actor)
        before = memory_snapshot(memory)
        old_state = memory_state(memory)
        fields = ["archived", "archived_at", "archived_reason"]
        if memory.archived_reason == ArchivedReason.SUPERSEDED:  # current again: no end, no successor
            memory.value_json = {k: v for k, v in (memory.value_json or {}).items()
                                 if k not in ("validTo", "supersededBy")}
            fields.append("value_json")
        memory.archived = False
        memory.archived_at = None
        memory.archived_reason = None
        memory.save(update_fields=fields)
        MemoryFlag.objects.filter(memory_id=memory.pk).exclude(deleted_from="").update(
            deleted_from="", deleted_from_at=None
        )
        audit_record(
            actor=actor, action=AuditLog.Action.RESTORE, object_type="memory", object_id=memory.pk,
            before=before, after=memory_snapshot(memory),
        )
        record_state_change(memory.pk, old_state, memory_state(memory), actor, "restore")
        announce_states_changed(memory_ids=[memory.pk])
    return memory


def memory_purge_deleted(*, actor=None, now=None, dry_run: bool = True) -> list[str]:
    """Physically remove items that users deleted longer ago than the retention period.

    The only physical delete of memory items; everything else archives.
    """
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.MEMORYBOARD_DELETED_RETENTION_DAYS)
    qs = LongTermMemory.objects.filter(
        archived=True, archived_reason=ArchivedReason.USER_DELETED, archived_at__lt=cutoff
    )
    ids = list(qs.values_list("pk", flat=True))
    if dry_run or not ids:
        return ids
    with transaction.atomic():
        for memory in LongTermMemory.objects.filter(pk__in=ids).select_for_update():
            audit_record(
                actor=actor, action=AuditLog.Action.PURGE, object_type="memory", object_id=memory.pk,
                before=memory_snapshot(memory), reason="retention period over",
            )
            record_state_change(memory.pk, MemoryState.DELETED, MemoryState.PURGED, actor, "retention period over")
        LongTermMemory.objects.filter(pk__in=ids).delete()
        MemoryFlag.objects.filter(memory_id__in=ids).delete()
        MemoryVersion.objects.filter(memory_id__in=ids).delete()  # the texts go with the item
    return ids


def memory_set_paused(*, memory: LongTermMemory, actor, paused: bool) -> LongTermMemory:
    """Pause (kept and visible, never retrieved) or resume one item; audited with its state change."""
    with transaction.atomic():
        memory = LongTermMemory.objects.select_for_update().get(pk=memory.pk)
        old_state = memory_state(memory)
        was_paused = old_state == MemoryState.PAUSED
        if was_paused == paused or memory.archived:
            return memory
        MemoryFlag.objects.update_or_create(
            memory_id=memory.pk, defaults={"paused": paused, "paused_at": timezone.now() if paused else None}
        )
        audit_record(
            actor=actor,
            action=AuditLog.Action.PAUSE if paused else AuditLog.Action.RESUME,
            object_type="memory",
            object_id=memory.pk,
            before={"paused": was_paused},
            after={"paused": paused},
        )
        record_state_change(memory.pk, old_state, memory_state(memory, paused=paused), actor,
                            "pause" if paused else "resume")
    return memory


def memory_respell_namespaces(*, texts: list[str], actor=None) -> int:
    """Rewrite items stored under odd spellings of a memories namespace (``selectors.odd_namespace_texts``)
    to the spelling memoryboard writes, in one transaction, audited per namespace text.

    Texts that are not a memories namespace are left alone.

    Returns:
        The number of items rewritten.
    """
    changed = 0
    with transaction.atomic():
        for text in texts:
            namespace = parse_namespace(text)
            if namespace is None or text == namespace.as_text():
                continue
            ids = list(LongTermMemory.objects.filter(namespace_texts_q([text])).values_list("pk", flat=True))
            count = LongTermMemory.objects.filter(pk__in=ids).update(namespace=namespace.as_text())
            audit_record(
                actor=actor, action=AuditLog.Action.UPDATE, object_type="namespace", object_id=namespace.as_text(),
                before={"namespace": text, "ids": ids[:1000]}, after={"namespace": namespace.as_text()},
                reason="respell namespace",
            )
            changed += count
    return changed
