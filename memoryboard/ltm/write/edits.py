"""Edits of an item's text or type, from any surface: reconciled against the owner's other items.

An edit of a current item's text goes through the reconcile step (``write.reconcile.memory_reconcile_edit``)
in the same lock and transaction: what the new text replaces is superseded, a conflict is flagged. A revert
to an earlier version is an edit too.
"""

from __future__ import annotations

from contextlib import nullcontext

from django.db import transaction
from django.utils import timezone

from memoryboard.audit import audit_record
from memoryboard.ltm.search.embeddings import memory_embed_many
from memoryboard.ltm.store.items import MemoryError, clean_content, clean_type, memory_snapshot
from memoryboard.ltm.store.locks import namespace_lock
from memoryboard.ltm.store.versions import version_record_change
from memoryboard.ltm.write.reconcile import memory_reconcile_edit, shared_embedder
from memoryboard.models import AuditLog, LongTermMemory, MemoryVersion, VersionEvent
from memoryboard.models.labels import REVERT
from memoryboard.models.namespaces import parse_namespace


class VersionNotFound(MemoryError):
    """A revert to a version the item does not have (``field="version"``)."""

    def __init__(self, message: str):
        super().__init__(message, field="version")


def memory_update(
    *, memory: LongTermMemory, actor, content: str | None = None, memory_type: str | None = None, embedder=None,
    event: str = "edit", reason: str = "", details: dict | None = None, reconcile: bool = True,
) -> LongTermMemory:
    """Change content and/or type; the content is re-embedded, before/after audited and kept as a new
    version (``event`` and ``reason`` say why: an edit, a revert, a merge, …).

    A changed text of a current item is reconciled against the owner's other current items
    (``ltm.write.reconcile.memory_reconcile_edit``) in the same lock and transaction.
    """
    namespace = parse_namespace(memory.namespace) if reconcile and content is not None else None
    with namespace_lock(namespace) if namespace is not None else nullcontext(), transaction.atomic():
        memory = LongTermMemory.objects.select_for_update().get(pk=memory.pk)
        before = memory_snapshot(memory)
        value = dict(memory.value_json or {})
        if content is not None:
            value["content"] = clean_content(content)
        if memory_type is not None:
            value["type"] = clean_type(memory_type)
        if value == memory.value_json:
            return memory
        before_value = dict(memory.value_json or {})
        memory.value_json = value
        memory.updated_at = timezone.now()
        memory.save(update_fields=["value_json", "updated_at"])
        text_changed = content is not None and value.get("content") != (before["value_json"] or {}).get("content")
        if text_changed and namespace is not None:
            embedder = shared_embedder(embedder)
        if content is not None:
            memory_embed_many([memory], embedder=embedder)
        after = memory_snapshot(memory)
        if text_changed and namespace is not None and not memory.archived:
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
            details=details,
        )
        version_record_change(memory=memory, before_value=before_value, actor=actor, event=event, reason=reason,
                              details=details)
    return memory


def memory_revert(*, memory: LongTermMemory, actor, version, embedder=None) -> LongTermMemory:
    """Give the item the text and type it had after ``version``: a new version (event ``revert``), audited.

    Raises:
        VersionNotFound: the item has no such version.
    """
    try:
        number = int(version)
    except (TypeError, ValueError):
        raise VersionNotFound("version must be a whole number.") from None
    if isinstance(version, bool) or number < 1:
        raise VersionNotFound("version must be a whole number from 1.")
    target = MemoryVersion.objects.filter(memory_id=memory.pk, version=number).first()
    if target is None:
        if number == 1 and not MemoryVersion.objects.filter(memory_id=memory.pk).exists():
            return memory  # never changed: version 1 is what it is now
        raise VersionNotFound(f"This item has no version {number}.")
    return memory_update(
        memory=memory, actor=actor, content=target.after_content, memory_type=target.after_type or None,
        embedder=embedder, event=VersionEvent.REVERT, reason=REVERT, details={"version": number},
    )
