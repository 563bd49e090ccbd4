"""Review of new items and of conflicts, for agents that want it (``memory-review`` in agents.yaml).

- ``auto`` (default): an agent's new items are used at once.
- ``low_confidence``: items the writer was unsure of wait for review (the writer says so).
- ``all``: every item an agent writes (extraction, its tools, MCP) waits for review.

A waiting item is stored ``archived = 1``, ``archived_reason = pending_review`` (the platform loads only
``archived = 0``, so it is not used) until its user or support approves it (back to active) or rejects it
(``rejected``, kept and restorable by support). Items written by people (the user, staff, an import)
never wait.

Conflicts land in the same queue: the reconcile step marks a pair it could not decide by
``value_json.conflictWith`` (a list of ids) on both items, both still current. Resolving keeps the newer
(the older is superseded: ``validTo``, ``supersededBy``), keeps the older (the newer is rejected) or keeps
both (the marks are cleared). Every decision is audited with its state change, in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Literal

from django.db import transaction
from django.db.models import QuerySet
from django.dispatch import Signal
from django.utils import timezone

from memoryboard.agents_config import get_agents_config
from memoryboard.audit import audit_record
from memoryboard.ltm.store.expiry import expiry_text
from memoryboard.ltm.store.items import MemoryError, memory_snapshot, record_state_change
from memoryboard.ltm.store.locks import namespace_lock
from memoryboard.ltm.store.signals import announce_states_changed
from memoryboard.ltm.store.states import memory_state
from memoryboard.models import ArchivedReason, AuditLog, AskFirst, LongTermMemory, Source
from memoryboard.models.labels import ASK_FIRST, REPLACED_BY_UNDO, REPLACEMENT_UNDONE
from memoryboard.models.namespaces import parse_namespace

# The writers that are the agent (not a person): their items follow the agent's ``memory-review``.
AGENT_SOURCES = frozenset({Source.AUTO_EXTRACT, Source.AGENT_TOOL, Source.MCP})
Keep = Literal["new", "old", "both"]
REASON_APPROVED = "approved in review"
REASON_REJECTED = "rejected in review"
REASON_KEEP_NEW = "conflict: kept the newer"
REASON_KEEP_OLD = "conflict: kept the older"
REASON_KEEP_BOTH = "conflict: kept both"
# An item approved, in the approval's lock and transaction (``memory``, ``namespace``, ``actor``): the reconcile
# step compares it with the owner's current items (``ltm.write.reconcile.reconcile_approved``, connected in
# ``memoryboard.signals``).
memory_approved = Signal()


def ask_first(*, user_id: str, agent_id: str) -> bool:
    """Whether the user asked to approve what ``agent_id`` notes before it is used ("ask me first")."""
    return AskFirst.objects.filter(user_id=str(user_id or ""), agent_id=str(agent_id or ""), ask_first=True).exists()


def ask_first_agents(*, user_id: str) -> set[str]:
    """The agents (their ids in agents.yaml) whose new items the user approves first."""
    return set(AskFirst.objects.filter(user_id=str(user_id), ask_first=True).values_list("agent_id", flat=True))


def ask_first_set(*, user_id: str, agent_ids: Iterable[str], actor) -> None:
    """Set the user's "ask me first" to exactly ``agent_ids`` (the others off), audited when it changed."""
    wanted = {str(a) for a in agent_ids}
    with transaction.atomic():
        before = ask_first_agents(user_id=user_id)
        if before == wanted:
            return
        now = timezone.now()
        for agent in wanted | before:
            AskFirst.objects.update_or_create(user_id=str(user_id), agent_id=agent,
                                              defaults={"ask_first": agent in wanted, "updated_at": now})
        audit_record(actor=actor, action=AuditLog.Action.UPDATE, object_type="user", object_id=str(user_id),
                     before={"ask_first": sorted(before)}, after={"ask_first": sorted(wanted)}, reason=ASK_FIRST)


def review_required(*, agent_id: str, source: str, low_confidence: bool = False, user_id: str = "") -> bool:
    """Whether a new item of this agent and writer waits for review: the agent's ``memory-review``, or
    its user's "ask me first" for this agent (``user_id``: whose item it is)."""
    if source not in AGENT_SOURCES:
        return False
    if user_id and ask_first(user_id=user_id, agent_id=agent_id):
        return True
    config = get_agents_config().get(str(agent_id or ""))
    mode = config.long_term_memory.memory_review if config else "auto"
    return mode == "all" or (mode == "low_confidence" and low_confidence)


def pending_review(queryset: QuerySet[LongTermMemory]) -> QuerySet[LongTermMemory]:
    return queryset.filter(archived=True, archived_reason=ArchivedReason.PENDING_REVIEW)


def _locked(memories: Iterable[LongTermMemory]) -> list[LongTermMemory]:
    ids = sorted({m.pk for m in memories})
    return list(LongTermMemory.objects.filter(pk__in=ids).order_by("pk").select_for_update())


def _set_archived(memory: LongTermMemory, *, archived: bool, reason: str | None, actor, why: str,
                  action: str, value: dict | None = None, details: dict | None = None) -> None:
    before = memory_snapshot(memory)
    old_state = memory_state(memory)
    fields = ["archived", "archived_at", "archived_reason"]
    memory.archived, memory.archived_reason = archived, reason
    memory.archived_at = timezone.now() if archived else None
    if value is not None:
        memory.value_json = value
        fields.append("value_json")
    memory.save(update_fields=fields)
    audit_record(actor=actor, action=action, object_type="memory", object_id=memory.pk,
                 before=before, after=memory_snapshot(memory), reason=why, details=details)
    record_state_change(memory.pk, old_state, memory_state(memory), actor, why, details)
    announce_states_changed(memory_ids=[memory.pk])


def memory_review_approve(*, memories: Iterable[LongTermMemory], actor) -> list[str]:
    """Approve waiting items: they become active (used from now on) and are reconciled, one after the other,
    with the owner's current items (:data:`memory_approved`): an approved repeat or contradiction leaves one
    current item. Others are left alone. Under the namespaces' locks, in one transaction.

    Returns:
        The ids approved.
    """
    done = []
    memories = list(memories)
    namespaces = {m.namespace: parse_namespace(m.namespace) for m in memories}
    namespaces = {text: namespace for text, namespace in namespaces.items() if namespace is not None}
    with ExitStack() as locks:
        for text in sorted(namespaces):
            locks.enter_context(namespace_lock(namespaces[text]))
        with transaction.atomic():
            for memory in sorted(_locked(memories), key=lambda m: (m.created_at, m.pk)):
                if memory.archived and memory.archived_reason == ArchivedReason.PENDING_REVIEW:
                    _set_archived(memory, archived=False, reason=None, actor=actor, why=REASON_APPROVED,
                                  action=AuditLog.Action.RESTORE)
                    if memory.namespace in namespaces:
                        memory_approved.send(sender=LongTermMemory, memory=memory,
                                             namespace=namespaces[memory.namespace], actor=actor)
                    done.append(memory.pk)
    return done


def memory_review_reject(*, memories: Iterable[LongTermMemory], actor) -> list[str]:
    """Reject waiting items (``rejected``: kept, never used; support can restore them)."""
    done = []
    with transaction.atomic():
        for memory in _locked(memories):
            if memory.archived and memory.archived_reason == ArchivedReason.PENDING_REVIEW:
                _set_archived(memory, archived=True, reason=ArchivedReason.REJECTED, actor=actor,
                              why=REASON_REJECTED, action=AuditLog.Action.ARCHIVE)
                done.append(memory.pk)
    return done


# --- conflicts -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConflictPair:
    """Two current items flagged as contradicting each other; ``new`` is the later one."""

    new: LongTermMemory
    old: LongTermMemory

    @property
    def key(self) -> str:
        return f"{self.new.pk}|{self.old.pk}"


def _newer_first(a: LongTermMemory, b: LongTermMemory) -> tuple[LongTermMemory, LongTermMemory]:
    return (a, b) if (a.valid_from, a.created_at, a.pk) >= (b.valid_from, b.created_at, b.pk) else (b, a)


def conflict_pairs(queryset: QuerySet[LongTermMemory], *, limit: int = 200) -> list[ConflictPair]:
    """The flagged pairs among the current items of ``queryset`` (both ends in it), newest first."""
    flagged = list(queryset.filter(archived=False, value_json__has_key="conflictWith")[:limit * 2])
    by_id = {m.pk: m for m in flagged}
    missing = {other for m in flagged for other in m.conflict_with} - set(by_id)
    if missing:
        by_id.update((m.pk, m) for m in queryset.filter(pk__in=missing, archived=False))
    pairs, seen = [], set()
    for memory in flagged:
        for other_id in memory.conflict_with:
            other = by_id.get(other_id)
            if other is None or other.pk == memory.pk:
                continue
            key = frozenset((memory.pk, other.pk))
            if key in seen:
                continue
            seen.add(key)
            pairs.append(ConflictPair(*_newer_first(memory, other)))
    pairs.sort(key=lambda p: (p.new.created_at, p.new.pk), reverse=True)
    return pairs[:limit]


def _without_conflict(value: dict, other_id: str) -> dict:
    value = dict(value or {})
    rest = [str(v) for v in (value.get("conflictWith") or []) if str(v) != other_id]
    if rest:
        value["conflictWith"] = rest
    else:
        value.pop("conflictWith", None)
    return value


def _iso(moment) -> str:
    return expiry_text(moment)


def memory_conflict_resolve(*, new: LongTermMemory, old: LongTermMemory, keep: Keep, actor) -> None:
    """Resolve a flagged pair: keep the newer (the older is superseded), the older (the newer is
    rejected) or both (the marks are cleared). One transaction, audited per item.

    Raises:
        MemoryError: ``keep`` is not new/old/both, the two are not a flagged pair of current items, or
            belong to different users (``field="keep"`` / ``"pair"``).
    """
    if keep not in ("new", "old", "both"):
        raise MemoryError("Choose which to keep: new, old or both.", field="keep")
    with transaction.atomic():
        locked = {m.pk: m for m in _locked([new, old])}
        new, old = locked.get(new.pk), locked.get(old.pk)
        if (new is None or old is None or new.archived or old.archived or new.user_id != old.user_id
                or old.pk not in new.conflict_with and new.pk not in old.conflict_with):
            raise MemoryError("These two items are not a conflict waiting for review.", field="pair")
        now = timezone.now()
        new_value = _without_conflict(new.value_json, old.pk)
        old_value = _without_conflict(old.value_json, new.pk)
        if keep == "new":
            old_value.update(validTo=_iso(now), supersededBy=new.pk)
            _set_archived(old, archived=True, reason=ArchivedReason.SUPERSEDED, actor=actor, why=REASON_KEEP_NEW,
                          action=AuditLog.Action.ARCHIVE, value=old_value)
            _save_value(new, new_value, actor=actor, why=REASON_KEEP_NEW)
        elif keep == "old":
            _set_archived(new, archived=True, reason=ArchivedReason.REJECTED, actor=actor, why=REASON_KEEP_OLD,
                          action=AuditLog.Action.ARCHIVE, value=new_value)
            _save_value(old, old_value, actor=actor, why=REASON_KEEP_OLD)
        else:
            _save_value(new, new_value, actor=actor, why=REASON_KEEP_BOTH)
            _save_value(old, old_value, actor=actor, why=REASON_KEEP_BOTH)


def memory_replacement_undo(*, memory: LongTermMemory, actor) -> LongTermMemory:
    """Undo an item's replacement (its user's "Undo" on "Replaced by a newer statement"): the replaced item
    is current again (no end, no successor) and the newer statement, if still current, is rejected (kept,
    never used; support can restore it). One transaction, audited per item with its state change.

    Raises:
        MemoryError: ``memory`` is not a replaced item (``field="state"``).
    """
    with transaction.atomic():
        old = LongTermMemory.objects.select_for_update().get(pk=memory.pk)
        if not (old.archived and old.archived_reason == ArchivedReason.SUPERSEDED):
            raise MemoryError("This item was not replaced by a newer statement.", field="state")
        newer_id = old.superseded_by
        newer = (LongTermMemory.objects.select_for_update().filter(pk=newer_id, namespace=old.namespace).first()
                 if newer_id else None)
        value = {k: v for k, v in (old.value_json or {}).items() if k not in ("validTo", "supersededBy")}
        _set_archived(old, archived=False, reason=None, actor=actor, why=REPLACED_BY_UNDO,
                      action=AuditLog.Action.RESTORE, value=value, details={"id": newer_id} if newer_id else None)
        if newer is not None and not newer.archived:
            _set_archived(newer, archived=True, reason=ArchivedReason.REJECTED, actor=actor, why=REPLACEMENT_UNDONE,
                          action=AuditLog.Action.ARCHIVE, details={"id": old.pk})
    return old


def _save_value(memory: LongTermMemory, value: dict, *, actor, why: str) -> None:
    if value == memory.value_json:
        return
    before = memory_snapshot(memory)
    memory.value_json = value
    memory.save(update_fields=["value_json"])
    audit_record(actor=actor, action=AuditLog.Action.UPDATE, object_type="memory", object_id=memory.pk,
                 before=before, after=memory_snapshot(memory), reason=why)


def review_counts(queryset: QuerySet[LongTermMemory]) -> dict[str, int]:
    """How many items wait for review, and how many conflicts, in ``queryset``."""
    return {"pending": pending_review(queryset).count(), "conflicts": len(conflict_pairs(queryset))}

