"""The state of an item, defined once: every page, count, filter and state change reads it from here.

The shared table holds two columns, ``archived`` and ``archived_reason``; the platform loads only
``archived = 0``. memoryboard reads them, with the pause flag (``MemoryFlag.paused``), as one of the
states of :class:`~memoryboard.models.MemoryState`:

- ``active``: not archived, not paused and not past its expiry (in use);
- ``paused``: not archived, paused, not past its expiry (kept and visible, never retrieved);
- ``deleted``: archived with reason ``user_deleted`` (restorable by its user for the retention period);
- ``superseded``, ``expired``, ``pending_review``, ``rejected``: archived with that reason
  (:data:`OWN_STATE_REASONS`: not used any more, but not archived by anyone: DESIGN 1.6);
- ``archived``: archived with any other reason (``staff``, ``decay``, ``over_limit``, ``merged``, none).

An item not archived whose ``expiresAt`` has passed is ``expired`` already, before the worker's sweep
(``ltm.store.tasks``) stores it so: the platform may still load it until then, memoryboard never uses it.

**Current** (:func:`current_q`, :func:`is_current`) is what every read surface uses and shows as in use:
not archived (so not superseded, pending, rejected, deleted or archived) and not past its expiry. Paused
items are current (kept, shown, editable) but never retrieved: a search leaves them out by their flag.

``purged`` is the state an item leaves the table in (its state change records it).
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q
from django.db.models.fields.json import KT
from django.db.models.lookups import Exact, GreaterThan, IsNull, LessThanOrEqual
from django.utils import timezone

from memoryboard.models import ArchivedReason, LongTermMemory, MemoryFlag, MemoryState
from memoryboard.models.memory import value_time_text

# Reasons stored as archived = 1 for the platform that memoryboard shows as states of their own.
OWN_STATE_REASONS = frozenset({
    ArchivedReason.SUPERSEDED, ArchivedReason.EXPIRED, ArchivedReason.PENDING_REVIEW, ArchivedReason.REJECTED,
})
# The states an item can be in while it is stored, in the order pages list them.
STORED_STATES = (
    MemoryState.ACTIVE, MemoryState.PAUSED, MemoryState.ARCHIVED, MemoryState.DELETED, MemoryState.SUPERSEDED,
    MemoryState.EXPIRED, MemoryState.PENDING_REVIEW, MemoryState.REJECTED,
)


def state_of(*, archived: bool, archived_reason: str | None, paused: bool = False,
             expires_at: datetime | None = None, now: datetime | None = None) -> MemoryState:
    """The state of an item stored with these column values (and pause flag, and expiry when known)."""
    if not archived:
        if expires_at is not None and expires_at <= (now or timezone.now()):
            return MemoryState.EXPIRED
        return MemoryState.PAUSED if paused else MemoryState.ACTIVE
    if archived_reason == ArchivedReason.USER_DELETED:
        return MemoryState.DELETED
    if archived_reason in OWN_STATE_REASONS:
        return MemoryState(archived_reason)
    return MemoryState.ARCHIVED


def memory_state(memory: LongTermMemory, *, paused: bool | None = None, now: datetime | None = None) -> MemoryState:
    """The state of ``memory``; ``paused``: its pause flag when the caller has read it (else one query)."""
    expires_at = None if memory.archived else memory.expires_at
    if paused is None and not memory.archived and not is_past_expiry(memory, now=now):
        paused = MemoryFlag.objects.filter(memory_id=memory.pk, paused=True).exists()
    return state_of(archived=memory.archived, archived_reason=memory.archived_reason, paused=bool(paused),
                    expires_at=expires_at, now=now)


def is_past_expiry(memory: LongTermMemory, *, now: datetime | None = None) -> bool:
    """Whether ``memory``'s ``expiresAt`` has passed at ``now`` (archived or not)."""
    expires_at = memory.expires_at
    return expires_at is not None and expires_at <= (now or timezone.now())


def is_current(memory: LongTermMemory, *, now: datetime | None = None) -> bool:
    """Whether ``memory`` is current (see the module): not archived and not past its ``expiresAt``."""
    return not memory.archived and not is_past_expiry(memory, now=now)


def past_expiry_q(*, now: datetime | None = None) -> Q:
    """Items whose ``expiresAt`` has passed (compared as text: memoryboard stores UTC ``Z`` text, whose
    order is the time order; a date alone counts from its midnight). Archived or not."""
    return Q(LessThanOrEqual(KT("value_json__expiresAt"), value_time_text(now or timezone.now()))) & ~Q(
        Exact(KT("value_json__expiresAt"), ""))


def current_q(*, now: datetime | None = None) -> Q:
    """The current items (see the module), as a filter: the queryset form of :func:`is_current`."""
    text = KT("value_json__expiresAt")
    not_past = (Q(IsNull(text, True)) | Q(GreaterThan(text, value_time_text(now or timezone.now())))
                | Q(Exact(text, "")))
    return Q(archived=False) & not_past


def _paused_ids():
    return MemoryFlag.objects.filter(paused=True).values("memory_id")


def state_q(state: str, *, now: datetime | None = None) -> Q:
    """The items in ``state`` (as :func:`state_of` names it), as a filter; nothing for an unknown state."""
    if state == MemoryState.ACTIVE:
        return current_q(now=now) & ~Q(pk__in=_paused_ids())
    if state == MemoryState.PAUSED:
        return current_q(now=now) & Q(pk__in=_paused_ids())
    if state == MemoryState.EXPIRED:
        return Q(archived=True, archived_reason=state) | (Q(archived=False) & past_expiry_q(now=now))
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


def state_counts(queryset, *, now: datetime | None = None) -> dict[str, int]:
    """How many items of ``queryset`` are in each stored state (:data:`STORED_STATES`), each counted once,
    by the same rule as :func:`state_q`: what every page that counts a person's items shows."""
    now = now or timezone.now()
    return {state: queryset.filter(state_q(state, now=now)).count() for state in STORED_STATES}
