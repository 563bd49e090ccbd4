"""What the store announces to the layers above without importing them.

A receiver is connected in ``AppConfig.ready()`` (``memoryboard.signals.connect``) with a ``dispatch_uid``.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.dispatch import Signal

from memoryboard.models import LongTermMemory

# Items archived, deleted, restored or approved, in the transaction that changed them (``memory_ids``):
# the HNSW index logs, in that same transaction, that they leave or return (``ltm.search.embeddings``).
memory_states_changed = Signal()


def announce_states_changed(*, memory_ids: Iterable[str]) -> None:
    """Send :data:`memory_states_changed` for these items (call it inside the transaction that changed them)."""
    memory_states_changed.send(sender=LongTermMemory, memory_ids=list(memory_ids))
