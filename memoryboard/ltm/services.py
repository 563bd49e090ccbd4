"""Writes to long-term memory: create, update, archive, restore, delete, purge.

Every write records its audit entry and state change in the same transaction.
Namespaces are built by the caller from the authenticated user (see namespaces.py).
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memoryboard.audit import audit_record
from memoryboard.ltm.embeddings import memory_embed_many, queue_index_state_update
from memoryboard.ltm.namespaces import Namespace
from memoryboard.ltm.store import memory_upsert_many
from memoryboard.models import (
    OWN_STATE_REASONS,
    ArchivedReason,
    AuditLog,
    LongTermMemory,
    MemoryFlag,
    MemoryState,
    MemoryStateChange,
    MemoryType,
    MemoryVersion,
    Source,
)


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


def memory_state(memory: LongTermMemory, *, paused: bool | None = None) -> str:
    if memory.archived:
        if memory.archived_reason == ArchivedReason.USER_DELETED:
            return MemoryState.DELETED
        if memory.archived_reason in OWN_STATE_REASONS:
            return MemoryState(memory.archived_reason)
        return MemoryState.ARCHIVED
    if paused is None:
        paused = MemoryFlag.objects.filter(memory_id=memory.pk, paused=True).exists()
    return MemoryState.PAUSED if paused else MemoryState.ACTIVE


def _validate_content(content: str) -> str:
    if not isinstance(content, str) or not content.strip():
        raise MemoryError("Content must be a non-empty string.", field="content")
    content = content.strip()
    if len(content) > MAX_CONTENT_CHARS:
        raise MemoryError(f"Content is longer than {MAX_CONTENT_CHARS} characters.", field="content")
    return content


def _validate_type(memory_type: str) -> str:
    value = str(memory_type or "").upper()
    if value not in MemoryType.values:
        raise MemoryError(
            f"Unknown memory type {memory_type!r}; use one of {', '.join(MemoryType.values)}.", field="type"
        )
    return value


def _record_state(memory_id: str, old: str, new: str, actor, reason: str) -> None:
    if old != new:
        MemoryStateChange.objects.create(
            memory_id=memory_id,
            old_state=old,
            new_state=new,
            actor=actor if getattr(actor, "is_authenticated", False) else None,
            reason=reason[:255],
        )


def memory_build(
    *, namespace: Namespace, content: str, memory_type: str, source: str, agent_id: str, memory_id: str | None = None,
    conversation_id: str = "",
    expires_at=None,
    low_confidence: bool = False,
    review: bool | None = None,
) -> LongTermMemory:
    """An unsaved item in the platform's shape (a random id unless ``memory_id`` is given).

    An item the agent's ``memory-review`` wants reviewed (``ltm.review``; ``low_confidence`` when the
    writer was unsure, ``review`` to decide it here) is built waiting for review: stored archived with
    reason ``pending_review``, not used until approved.

    ``expires_at`` (a datetime or ISO text) sets its expiry; without it, the agent's ``ttl-days`` for the
    type does (``ltm.expiry``), if any.

    ``conversation_id``, when known, is the conversation the item came from (``value_json.conversationId``,
    an extra key the platform ignores): "My memories" links to it.
    """
    now = timezone.now()
    key = memory_id or uuid.uuid4().hex
    value = {
        "content": _validate_content(content),
        "agentId": agent_id,
        "source": source,
        "type": _validate_type(memory_type),
    }
    if conversation_id:
        value["conversationId"] = str(conversation_id)
    from memoryboard.ltm.expiry import default_expiry, parse_expiry

    try:
        expiry = parse_expiry(expires_at) if expires_at is not None else default_expiry(agent_id, value["type"], now=now)
    except ValueError as exc:
        raise MemoryError(str(exc), field="expires_at") from None
    if expiry:
        value["expiresAt"] = expiry
    from memoryboard.ltm.review import review_required

    pending = review_required(agent_id=agent_id, source=source, low_confidence=low_confidence) if review is None else review
    return LongTermMemory(
        id=key,
        namespace=namespace.as_text(),
        key_name=key,
        value_json=value,
        created_at=now,
        updated_at=now,
        archived=pending,
        archived_at=now if pending else None,
        archived_reason=ArchivedReason.PENDING_REVIEW if pending else None,
    )


def memory_create(
    *,
    namespace: Namespace,
    content: str,
    memory_type: str,
    source: str = Source.MANUAL,
    agent_id: str,
    actor=None,
    embedder=None,
    memory_id: str | None = None,
    conversation_id: str = "",
    event: str = "create",
    reason: str = "",
    expires_at=None,
    low_confidence: bool = False,
    memory: LongTermMemory | None = None,
    vector=None,
) -> LongTermMemory:
    """Store a new item: its vector, audit entry and version 1 in one transaction.

    ``memory``: the item already built by :func:`memory_build` (the other item arguments are then not
    read); ``vector``: its vector, already computed by ``embedder``.
    """
    from memoryboard.ltm.versions import version_record_created_many

    if memory is None:
        memory = memory_build(
            namespace=namespace, content=content, memory_type=memory_type, source=source, agent_id=agent_id,
            memory_id=memory_id, conversation_id=conversation_id, expires_at=expires_at,
            low_confidence=low_confidence,
        )
    with transaction.atomic():
        memory_upsert_many([memory])
        memory_embed_many([memory], embedder=embedder, vectors=None if vector is None else [vector])
        audit_record(
            actor=actor,
            action=AuditLog.Action.CREATE,
            object_type="memory",
            object_id=memory.pk,
            after=memory_snapshot(memory),
            reason=reason,
        )
        version_record_created_many([memory], actor=actor, event=event, reason=reason)
    return memory


def memory_update(
    *, memory: LongTermMemory, actor, content: str | None = None, memory_type: str | None = None, embedder=None,
    event: str = "edit", reason: str = "", reconcile: bool = True,
) -> LongTermMemory:
    """Change content and/or type; the content is re-embedded, before/after audited and kept as a new
    version (``event`` and ``reason`` say why: an edit, a revert, a merge, …).

    A changed text of a current item is reconciled against the owner's other current items
    (``ltm.reconcile.memory_reconcile_edit``) in the same lock and transaction.
    """
    from contextlib import nullcontext

    from memoryboard.ltm.locks import namespace_lock
    from memoryboard.ltm.namespaces import parse_namespace
    from memoryboard.ltm.versions import version_record_change

    namespace = parse_namespace(memory.namespace) if reconcile and content is not None else None
    with namespace_lock(namespace) if namespace is not None else nullcontext(), transaction.atomic():
        memory = LongTermMemory.objects.select_for_update().get(pk=memory.pk)
        before = memory_snapshot(memory)
        value = dict(memory.value_json or {})
        if content is not None:
            value["content"] = _validate_content(content)
        if memory_type is not None:
            value["type"] = _validate_type(memory_type)
        if value == memory.value_json:
            return memory
        before_value = dict(memory.value_json or {})
        memory.value_json = value
        memory.updated_at = timezone.now()
        memory.save(update_fields=["value_json", "updated_at"])
        text_changed = content is not None and value.get("content") != (before["value_json"] or {}).get("content")
        if text_changed and namespace is not None:
            from memoryboard.ltm.reconcile import shared_embedder

            embedder = shared_embedder(embedder)
        if content is not None:
            memory_embed_many([memory], embedder=embedder)
        after = memory_snapshot(memory)
        if text_changed and namespace is not None and not memory.archived:
            from memoryboard.ltm.reconcile import memory_reconcile_edit

            decision = memory_reconcile_edit(memory=memory, namespace=namespace, actor=actor, embedder=embedder)
            after = {**memory_snapshot(memory), "reconcile": decision.as_dict()}
        audit_record(
            actor=actor,
            action=AuditLog.Action.UPDATE,
            object_type="memory",
            object_id=memory.pk,
            before=before,
            after=after,
            reason=reason,
        )
        version_record_change(memory=memory, before_value=before_value, actor=actor, event=event, reason=reason)
    return memory


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
    """Archive an item. ``note`` is why, in the actor's words (support's typed reason): kept with the
    reason code as ``"<reason>: <note>"`` in the audit entry and the state change (``labels.reason_label``
    shows it as "<reason in words>: <note>")."""
    if reason not in ArchivedReason.values:
        raise MemoryError(f"Unknown archive reason {reason!r}.", field="reason")
    note = clean_note(note)
    recorded = f"{reason}: {note}" if note else reason
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
            before=before, after=memory_snapshot(memory), reason=recorded,
        )
        _record_state(memory.pk, old_state, memory_state(memory), actor, recorded)
        if old_state not in (MemoryState.ARCHIVED, MemoryState.DELETED):
            queue_index_state_update(memory_ids=[memory.pk])
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
        _record_state(memory.pk, old_state, MemoryState.DELETED, actor, ArchivedReason.USER_DELETED)
        if old_state != MemoryState.ARCHIVED:
            queue_index_state_update(memory_ids=[memory.pk])
    return memory


# The reason recorded when a restore finds the same item in use (followed by that item's id).
SAME_ITEM_IN_USE = "not restored: same item in use: "


def same_content_key(memory: LongTermMemory) -> tuple[object, str]:
    """What makes two items the same item: their scope (the namespace, whatever its spelling) and their
    content as the tools' dedup compares it (case, spaces, end punctuation)."""
    from memoryboard.ltm.namespaces import parse_namespace
    from memoryboard.ltm.tools import normalize_content

    return parse_namespace(memory.namespace) or memory.namespace, normalize_content(memory.content)


def active_twin(memory: LongTermMemory) -> LongTermMemory | None:
    """Another item of the same scope with the same content that is in use (active or paused), if any:
    a restore of ``memory`` would make it a second copy."""
    from memoryboard.ltm.namespaces import parse_namespace
    from memoryboard.ltm.selectors import namespace_q

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
    reason = f"{SAME_ITEM_IN_USE}{twin.pk}"
    audit_record(actor=actor, action=AuditLog.Action.ARCHIVE, object_type="memory", object_id=memory.pk,
                 before=before, after=memory_snapshot(memory), reason=reason)
    _record_state(memory.pk, old_state, MemoryState.SUPERSEDED, actor, reason)
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
            before=before, after=memory_snapshot(memory), reason=f"undo delete: back to {previous}",
        )
        _record_state(memory.pk, MemoryState.DELETED, MemoryState.ARCHIVED, actor, "restore")
    return memory


def memory_delete_all_for_user(*, user_id: str, actor) -> list[str]:
    """"Delete all": every item stored about the user that is not already deleted, in every state
    (active, paused, archived by staff, decay or the limit), becomes ``user_deleted`` in one transaction,
    restorable during the retention period, then purged: with what was already deleted, exactly what
    the export lists. Audited per item (bulk inserts).

    Returns:
        The ids of the items deleted (what an undo of this "delete all" would restore).
    """
    from memoryboard.audit import audit_record_many
    from memoryboard.ltm.selectors import own_memories

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
            from django.db import connection

            MemoryFlag.objects.bulk_create(  # ON DUPLICATE KEY UPDATE (MySQL) / ON CONFLICT (SQLite)
                flags, update_conflicts=True, update_fields=["deleted_from", "deleted_from_at"],
                unique_fields=["memory_id"] if connection.features.supports_update_conflicts_with_target else None,
            )
        audit_record_many(entries)
        MemoryStateChange.objects.bulk_create(changes, batch_size=500)
        queue_index_state_update(memory_ids=[m.pk for m, c in zip(memories, changes) if c.old_state != MemoryState.ARCHIVED])
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
        _record_state(memory.pk, old_state, memory_state(memory), actor, "restore")
        queue_index_state_update(memory_ids=[memory.pk])
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
            _record_state(memory.pk, MemoryState.DELETED, MemoryState.PURGED, actor, "retention period over")
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
        _record_state(memory.pk, old_state, memory_state(memory, paused=paused), actor, "pause" if paused else "resume")
    return memory


def memory_respell_namespaces(*, texts: list[str], actor=None) -> int:
    """Rewrite items stored under odd spellings of a memories namespace (``selectors.odd_namespace_texts``)
    to the spelling memoryboard writes, in one transaction, audited per namespace text.

    Texts that are not a memories namespace are left alone.

    Returns:
        The number of items rewritten.
    """
    from memoryboard.ltm.namespaces import parse_namespace
    from memoryboard.ltm.selectors import namespace_texts_q

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
