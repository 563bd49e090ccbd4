"""The erase's confirmation, told by the erase itself: ``user_data_erase`` run and rolled back
(``ltm.store.rehearsal``), so the page lists the items and the rows per table that the erase removes."""

from __future__ import annotations

from dataclasses import dataclass, field

from memoryboard.ltm.people.user_data import user_data_erase
from memoryboard.ltm.store.rehearsal import Outcome, rehearse
from memoryboard.ltm.store.selectors import own_memories


@dataclass
class ErasePreview:
    """What an erase removes: the person's items (``outcome.removed``, with their texts) and the rows per
    table (the erase's own count; the audit log's rows are anonymised, not removed)."""

    outcome: Outcome
    tables: dict[str, int] = field(default_factory=dict)


def user_data_erase_preview(*, user_id: str, actor) -> ErasePreview:
    """Run :func:`~memoryboard.ltm.people.user_data.user_data_erase` for ``user_id`` and roll it back."""
    user_id = str(user_id)
    erased, outcome = rehearse(lambda: user_data_erase(user_id=user_id, actor=actor),
                               scope=lambda: own_memories(user_id=user_id))
    return ErasePreview(outcome=outcome, tables={table: len(ids) for table, ids in erased.items()})
