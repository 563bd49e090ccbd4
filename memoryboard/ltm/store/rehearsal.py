"""What a write will do, told by the write itself: run it for real, read what changed, roll it back.

A preview (an import's, a conflict's choices, an erase's confirmation, an admin bulk action's) calls
:func:`rehearse` with the very service that the confirmed button calls; :func:`perform` runs it for good
and reads the same difference. Both compare the items of a scope (one person's, or the selected items'
owners') before and after, so a preview cannot say "new" where the write supersedes.

Nothing of a rehearsal is left behind: its rows (items, vectors, audit entries, versions, state changes,
the HNSW change log, queued tasks of the database backend) go with the rolled-back transaction, and the
``transaction.on_commit`` hooks registered inside it (index follow, task enqueues) are discarded by Django
with it. What is not a row checks :func:`is_rehearsal` (the HNSW files an erase scrubs at once). A search
run inside a rehearsal may keep its scope in ``ltm.search.vector_cache``: the next search compares its
candidates' ids and versions with the kept ones and follows them back (tests/ltm/test_rehearsal.py).
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.db import transaction
from django.db.models import QuerySet

from memoryboard.ltm.store.states import state_of
from memoryboard.models import LongTermMemory, MemoryFlag, MemoryState

T = TypeVar("T")
_rehearsing: ContextVar[bool] = ContextVar("memoryboard_rehearsing", default=False)
CURRENT_STATES = frozenset({MemoryState.ACTIVE, MemoryState.PAUSED})


def is_rehearsal() -> bool:
    """Whether the code runs inside :func:`rehearse` (its transaction will be rolled back)."""
    return _rehearsing.get()


@dataclass(frozen=True)
class ItemView:
    """An item as a preview names it: its id, text, type and state."""

    id: str
    content: str
    type: str
    state: str
    successor: str | None = None  # supersededBy / mergedInto

    @property
    def current(self) -> bool:
        return self.state in CURRENT_STATES

    @property
    def state_label(self) -> str:
        return str(MemoryState(self.state).label)


@dataclass
class Outcome:
    """What a write did to the items of its scope, by item text.

    - ``created``: new items (``state`` says whether in use or waiting for review);
    - ``replaced``: (old, new) pairs: an item in use retired in favour of another (superseded, merged);
    - ``changed``: (before, after) pairs: the same item with another text or type;
    - ``lost``: items in use that stop being used with nothing in their place (archived, rejected, deleted);
    - ``restored``: items not in use that come back;
    - ``removed``: items that leave the table (erase, purge), in any state;
    - ``switched``: (before, after) pairs: another state otherwise (paused or resumed; rejected, deleted, …
      while out of use);
    - ``kept``: items in use before and after, unchanged (includes those a repeat reinforced).
    """

    created: list[ItemView] = field(default_factory=list)
    replaced: list[tuple[ItemView, ItemView]] = field(default_factory=list)
    changed: list[tuple[ItemView, ItemView]] = field(default_factory=list)
    lost: list[ItemView] = field(default_factory=list)
    restored: list[ItemView] = field(default_factory=list)
    removed: list[ItemView] = field(default_factory=list)
    switched: list[tuple[ItemView, ItemView]] = field(default_factory=list)
    kept: list[ItemView] = field(default_factory=list)

    def texts(self) -> dict[str, list]:
        """The outcome without ids (a rehearsal's new items get other ids than the write's): comparable."""
        def one(item: ItemView) -> tuple[str, str, str]:
            return (item.content, item.type, item.state)

        return {
            "created": sorted(one(i) for i in self.created),
            "replaced": sorted((one(a), one(b)) for a, b in self.replaced),
            "changed": sorted((one(a), one(b)) for a, b in self.changed),
            "lost": sorted(one(i) for i in self.lost),
            "restored": sorted(one(i) for i in self.restored),
            "removed": sorted(one(i) for i in self.removed),
            "switched": sorted((one(a), one(b)) for a, b in self.switched),
            "kept": sorted(one(i) for i in self.kept),
        }

    @property
    def touched(self) -> bool:
        return any((self.created, self.replaced, self.changed, self.lost, self.restored, self.removed,
                    self.switched))

    def as_dict(self) -> dict[str, Any]:
        def one(item: ItemView) -> dict:
            return {"id": item.id, "content": item.content, "type": item.type, "state": item.state}

        return {
            "created": [one(i) for i in self.created],
            "replaced": [{"old": one(a), "new": one(b)} for a, b in self.replaced],
            "changed": [{"before": one(a), "after": one(b)} for a, b in self.changed],
            "lost": [one(i) for i in self.lost],
            "restored": [one(i) for i in self.restored],
            "removed": [one(i) for i in self.removed],
            "switched": [{"before": one(a), "after": one(b)} for a, b in self.switched],
            "kept": [one(i) for i in self.kept],
        }


def snapshot(scope: QuerySet[LongTermMemory]) -> dict[str, ItemView]:
    """The items of ``scope`` as :func:`outcome_between` compares them (two queries)."""
    items = list(scope.order_by("created_at", "pk"))
    paused = set(MemoryFlag.objects.filter(memory_id__in=[m.pk for m in items], paused=True)
                 .values_list("memory_id", flat=True))
    views = {}
    for m in items:
        state = state_of(archived=m.archived, archived_reason=m.archived_reason, paused=m.pk in paused,
                         expires_at=None if m.archived else m.expires_at)
        views[m.pk] = ItemView(id=m.pk, content=m.content, type=m.memory_type, state=str(state),
                               successor=m.superseded_by or m.merged_into)
    return views


def outcome_between(before: dict[str, ItemView], after: dict[str, ItemView]) -> Outcome:
    """The difference of two snapshots of one scope."""
    outcome = Outcome()
    for pk, new in after.items():
        old = before.get(pk)
        if old is None:
            outcome.created.append(new)
        elif (old.content, old.type) != (new.content, new.type):
            outcome.changed.append((old, new))
        elif old.current and not new.current:
            successor = after.get(new.successor or "")
            if successor is not None:
                outcome.replaced.append((new, successor))
            else:
                outcome.lost.append(new)
        elif not old.current and new.current:
            outcome.restored.append(new)
        elif old.state != new.state:  # paused or resumed; or, out of use either way, rejected, deleted, …
            outcome.switched.append((old, new))
        elif old.current:
            outcome.kept.append(new)
    outcome.removed = [old for pk, old in before.items() if pk not in after]
    return outcome


class _Rehearsed(Exception):
    def __init__(self, value, outcome: Outcome) -> None:
        super().__init__("rehearsal rolled back")
        self.value, self.outcome = value, outcome


def rehearse(action: Callable[[], T], *, scope: Callable[[], QuerySet[LongTermMemory]]) -> tuple[T, Outcome]:
    """Run ``action`` in a transaction that is rolled back; return its value and what it did to ``scope()``.

    ``scope`` is called before and after (a callable: a queryset built once may cache its rows).
    An exception of ``action`` propagates (nothing is written either way).
    """
    token = _rehearsing.set(True)
    try:
        with transaction.atomic():
            before = snapshot(scope())
            value = action()
            raise _Rehearsed(value, outcome_between(before, snapshot(scope())))
    except _Rehearsed as done:
        return done.value, done.outcome
    finally:
        _rehearsing.reset(token)


def perform(action: Callable[[], T], *, scope: Callable[[], QuerySet[LongTermMemory]]) -> tuple[T, Outcome]:
    """Run ``action`` for good, in one transaction; return its value and what it did to ``scope()``."""
    with transaction.atomic():
        before = snapshot(scope())
        value = action()
        return value, outcome_between(before, snapshot(scope()))
