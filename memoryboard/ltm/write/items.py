"""New items: built in the platform's shape (waiting for review when the agent wants it) and stored.

Every statement an agent, a person or an import saves is built by :func:`memory_build`; the reconcile step
(``write.reconcile``) decides whether it is stored. :func:`memory_create` stores one as it is (no
reconcile: the tests' and benchmarks' fixtures). Edits go through ``write.edits``.
"""

from __future__ import annotations

import uuid

from django.db import transaction
from django.utils import timezone

from memoryboard.audit import audit_record
from memoryboard.ltm.search.embeddings import memory_embed_many
from memoryboard.ltm.store.expiry import default_expiry, parse_expiry
from memoryboard.ltm.store.items import MemoryError, clean_content, clean_type, memory_snapshot
from memoryboard.ltm.store.upsert import memory_upsert_many
from memoryboard.ltm.store.versions import version_record_created_many
from memoryboard.ltm.write.review import review_required
from memoryboard.models import ArchivedReason, AuditLog, LongTermMemory, Source
from memoryboard.models.namespaces import Namespace


def memory_build(
    *, namespace: Namespace, content: str, memory_type: str, source: str, agent_id: str, memory_id: str | None = None,
    conversation_id: str = "",
    expires_at=None,
    low_confidence: bool = False,
    review: bool | None = None,
) -> LongTermMemory:
    """An unsaved item in the platform's shape (a random id unless ``memory_id`` is given).

    An item the agent's ``memory-review`` wants reviewed (``ltm.write.review``; ``low_confidence`` when the
    writer was unsure, ``review`` to decide it here) is built waiting for review: stored archived with
    reason ``pending_review``, not used until approved.

    ``expires_at`` (a datetime or ISO text) sets its expiry; without it, the agent's ``ttl-days`` for the
    type does (``ltm.store.expiry``), if any.

    ``conversation_id``, when known, is the conversation the item came from (``value_json.conversationId``,
    an extra key the platform ignores): "My memories" links to it.
    """
    now = timezone.now()
    key = memory_id or uuid.uuid4().hex
    value = {
        "content": clean_content(content),
        "agentId": agent_id,
        "source": source,
        "type": clean_type(memory_type),
    }
    if conversation_id:
        value["conversationId"] = str(conversation_id)
    try:
        expiry = parse_expiry(expires_at) if expires_at is not None else default_expiry(agent_id, value["type"], now=now)
    except ValueError as exc:
        raise MemoryError(str(exc), field="expires_at") from None
    if expiry:
        value["expiresAt"] = expiry
    if review is None:
        review = review_required(agent_id=agent_id, source=source, low_confidence=low_confidence,
                                 user_id=namespace.user_id)
    pending = review
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
