"""The state of an item, defined once: every page, count, filter and state change reads it from here.

The shared table holds two columns, ``archived`` and ``archived_reason``; the platform loads only
``archived = 0``. memoryboard reads them, with the pause flag (``MemoryFlag.paused``), as one of the
states of :class:`~memoryboard.models.MemoryState`:

- ``active``: not archived and not paused (in use);
- ``paused``: not archived, paused (kept and visible, never retrieved);
- ``deleted``: archived with reason ``user_deleted`` (restorable by its user for the retention period);
- ``superseded``, ``expired``, ``pending_review``, ``rejected``: archived with that reason
  (:data:`OWN_STATE_REASONS`: not used any more, but not archived by anyone: DESIGN 1.6);
- ``archived``: archived with any other reason (``staff``, ``decay``, ``over_limit``, ``merged``, none).

``purged`` is the state an item leaves the table in (its state change records it).
"""

from __future__ import annotations

from django.db.models import Q

from memoryboard.models import ArchivedReason, LongTermMemory, MemoryFlag, MemoryState

# Reasons stored as archived = 1 for the platform that memoryboard shows as states of their own.
OWN_STATE_REASONS = frozenset({
    ArchivedReason.SUPERSEDED, ArchivedReason.EXPIRED, ArchivedReason.PENDING_REVIEW, ArchivedReason.REJECTED,
})
# The states an item can be in while it is stored, in the order pages list them.
STORED_STATES = (
    MemoryState.ACTIVE, MemoryState.PAUSED, MemoryState.ARCHIVED, MemoryState.DELETED, MemoryState.SUPERSEDED,
    MemoryState.EXPIRED, MemoryState.PENDING_REVIEW, MemoryState.REJECTED,
)


def state_of(*, archived: bool, archived_reason: str | None, paused: bool = False) -> MemoryState:
    """The state of an item stored with these column values (and pause flag)."""
    if not archived:
        return MemoryState.PAUSED if paused else MemoryState.ACTIVE
    if archived_reason == ArchivedReason.USER_DELETED:
        return MemoryState.DELETED
    if archived_reason in OWN_STATE_REASONS:
        return MemoryState(archived_reason)
    return MemoryState.ARCHIVED


def memory_state(memory: LongTermMemory, *, paused: bool | None = None) -> MemoryState:
    """The state of ``memory``; ``paused``: its pause flag when the caller has read it (else one query)."""
    if paused is None and not memory.archived:
        paused = MemoryFlag.objects.filter(memory_id=memory.pk, paused=True).exists()
    return state_of(archived=memory.archived, archived_reason=memory.archived_reason, paused=bool(paused))


def _paused_ids():
    return MemoryFlag.objects.filter(paused=True).values("memory_id")


def state_q(state: str) -> Q:
    """The items in ``state`` (as :func:`state_of` names it), as a filter; nothing for an unknown state."""
    if state == MemoryState.ACTIVE:
        return Q(archived=False) & ~Q(pk__in=_paused_ids())
    if state == MemoryState.PAUSED:
        return Q(archived=False, pk__in=_paused_ids())
    if state == MemoryState.DELETED:
        return Q(archived=True, archived_reason=ArchivedReason.USER_DELETED)
    if state in OWN_STATE_REASONS:
        return Q(archived=True, archived_reason=state)
    if state == MemoryState.ARCHIVED:
        return Q(archived=True) & (
            Q(archived_reason__isnull=True)
            | ~Q(archived_reason__in=[ArchivedReason.USER_DELETED, *OWN_STATE_REASONS])
        )
    return Q(pk__in=[])
