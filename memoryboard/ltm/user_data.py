"""Everything stored about one platform user, for support and privacy requests: overview, export, erase.

Every read starts from ``ltm.selectors.own_memories`` (the one rule of which items are a user's), so the
user page, the export and the erase see exactly the same items as the user's own "My memories".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Count, Max, Min
from django.db.models.fields.json import KT
from django.utils import timezone

from memoryboard.audit import audit_record
from memoryboard.ltm.namespaces import parse_namespace
from memoryboard.ltm.selectors import own_memories
from memoryboard.ltm.services import memory_delete_all_for_user
from memoryboard.models import (
    ArchivedReason,
    AuditLog,
    ChatMessage,
    MemoryAccess,
    MemoryFlag,
    MemoryState,
    MemoryType,
)

RECENT_ACCESSES = 20
RECENT_AUDIT = 50
RECENT_CONVERSATIONS = 50
# An erase larger than this is refused (the per-item services run in one transaction).
MAX_ERASE_ITEMS = 10_000


@dataclass
class AgentCounts:
    """One agent's items of a user: counts by state and by type."""

    agent: str
    states: dict[str, int] = field(default_factory=lambda: {s: 0 for s in MemoryState.values if s != "purged"})
    types: dict[str, int] = field(default_factory=lambda: {t: 0 for t in MemoryType.values})
    total: int = 0


def memory_counts(*, user_id: str) -> list[AgentCounts]:
    """Per agent: the user's items by state (active, paused, archived, deleted) and by type."""
    qs = own_memories(user_id=user_id)
    rows = (
        qs.annotate(mtype=KT("value_json__type"))
        .values("namespace", "archived", "archived_reason", "mtype")
        .annotate(n=Count("pk"))
        .order_by()
    )
    paused = (
        qs.filter(archived=False, pk__in=MemoryFlag.objects.filter(paused=True).values("memory_id"))
        .values("namespace").annotate(n=Count("pk")).order_by()
    )
    by_agent: dict[str, AgentCounts] = {}

    def counts(namespace: str) -> AgentCounts:
        ns = parse_namespace(namespace)
        agent = ns.agent if ns else namespace
        return by_agent.setdefault(agent, AgentCounts(agent=agent))

    for row in rows:
        c = counts(row["namespace"])
        if not row["archived"]:
            state = MemoryState.ACTIVE
        elif row["archived_reason"] == ArchivedReason.USER_DELETED:
            state = MemoryState.DELETED
        else:
            state = MemoryState.ARCHIVED
        c.states[state] += row["n"]
        mtype = str(row["mtype"] or "").upper()
        c.types[mtype] = c.types.get(mtype, 0) + row["n"]
        c.total += row["n"]
    for row in paused:
        c = counts(row["namespace"])
        c.states[MemoryState.PAUSED] += row["n"]
        c.states[MemoryState.ACTIVE] -= row["n"]
    return sorted(by_agent.values(), key=lambda c: c.agent)


def recent_accesses(*, user_id: str, limit: int = RECENT_ACCESSES) -> list[MemoryAccess]:
    """The latest reads of the user's items by agents (retrieval, tool search, injection)."""
    ids = own_memories(user_id=user_id).values("pk")
    return list(MemoryAccess.objects.filter(memory_id__in=ids).order_by("-created_at", "-id")[:limit])


def audit_trail(*, user_id: str, limit: int = RECENT_AUDIT) -> list[AuditLog]:
    """The audit entries of the user's items and of the user (exports, erasures), newest first."""
    from django.db.models import Q

    ids = own_memories(user_id=user_id).values("pk")
    q = Q(object_type="memory", object_id__in=ids) | Q(object_type="user", object_id=user_id)
    entries = list(AuditLog.objects.filter(q).order_by("-created_at", "-id")[:limit])
    for e in entries:  # the item's content as the entry recorded it, to tell the items apart
        snapshot = e.after if isinstance(e.after, dict) and "value_json" in e.after else e.before
        value = snapshot.get("value_json") if isinstance(snapshot, dict) else None
        e.item_text = str(value.get("content", "")) if isinstance(value, dict) else ""
    return entries


def conversations(*, user_id: str, limit: int = RECENT_CONVERSATIONS) -> list[dict]:
    """The user's conversations, latest first: id, agent, message count, first and last time."""
    return list(
        ChatMessage.objects.filter(user_id=user_id)
        .values("conversation_id", "agent_id")
        .annotate(messages=Count("id"), started=Min("created_at"), last=Max("created_at"))
        .order_by("-last")[:limit]
    )


def memory_export_payload(*, user_id: str) -> dict:
    """Every item of the user (archived and deleted ones flagged), as exported to the user or for them."""
    items = [
        {
            "id": m.pk,
            "type": m.memory_type,
            "content": m.content,
            "source": m.source,
            "agent": m.agent_id,
            "namespace": m.namespace,
            "created_at": m.created_at.isoformat(),
            "updated_at": m.updated_at.isoformat(),
            "archived": m.archived,
            "archived_reason": m.archived_reason,
            "archived_at": m.archived_at.isoformat() if m.archived_at else None,
            "access_count": m.access_count,
            "last_accessed_at": m.last_accessed_at.isoformat() if m.last_accessed_at else None,
            "relevance_score": m.relevance_score,
        }
        for m in own_memories(user_id=user_id).order_by("created_at", "id").iterator()
    ]
    return {"user_id": user_id, "exported_at": timezone.now().isoformat(), "memories": items}


def memory_export_for_user(*, user_id: str, actor) -> dict:
    """Staff export on a user's behalf (a privacy request): the same payload, recorded in the audit log."""
    payload = memory_export_payload(user_id=user_id)
    audit_record(
        actor=actor, action=AuditLog.Action.EXPORT, object_type="user", object_id=user_id,
        after={"count": len(payload["memories"])}, reason="privacy request",
    )
    return payload


def erasable(*, user_id: str):
    """The user's items that an erase would delete: all but those already deleted."""
    return own_memories(user_id=user_id).exclude(archived=True, archived_reason=ArchivedReason.USER_DELETED)


class EraseTooLarge(ValueError):
    pass


def memory_erase_user(*, user_id: str, actor) -> list[str]:
    """Erase everything stored about a user (a privacy request), in one transaction.

    The user's own "delete all" (``ltm.services.memory_delete_all_for_user``): every item becomes
    ``user_deleted`` whatever its state (restorable during the retention period, then purged by
    ``purge_deleted``), each with its audit entry and state change; one ``erase`` entry for the user
    records the count and ids.

    Raises:
        EraseTooLarge: more than ``MAX_ERASE_ITEMS`` items.
    """
    with transaction.atomic():
        ids = list(erasable(user_id=user_id).order_by("pk").values_list("pk", flat=True)[: MAX_ERASE_ITEMS + 1])
        if len(ids) > MAX_ERASE_ITEMS:
            raise EraseTooLarge(f"more than {MAX_ERASE_ITEMS} items")
        memory_delete_all_for_user(user_id=user_id, actor=actor)
        audit_record(
            actor=actor, action=AuditLog.Action.ERASE, object_type="user", object_id=user_id,
            after={"count": len(ids), "ids": ids}, reason="privacy request",
        )
    return ids

