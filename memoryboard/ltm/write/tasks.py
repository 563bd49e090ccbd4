"""Background tasks of the write layer (Django Tasks API): thin wrappers around its services.

The embedded default runs them on a background thread of the web process
(``memoryboard.tasks_backend.ThreadBackend``); deployments use ``django_tasks_db`` and its
``db_worker``. Arguments are JSON values, as every backend requires.
"""

from __future__ import annotations

import hashlib

from django.utils.dateparse import parse_datetime
from django_tasks import task

from memoryboard.ltm.store.erase_gate import work_begun
from memoryboard.ltm.write.extraction import memory_extract_and_save


@task()
def extract_memories_task(
    *, agent_id: str, user_id: str, conversation_id: str, conversation: list[dict], turn_at: str | None = None
) -> list[str]:
    """Channel A: extract long-term memories from a turn and save them; returns the new ids.

    ``turn_at``: when the turn began (ISO 8601). Nothing is saved if the user's data was erased since
    (``ltm.store.erase_gate``); tasks queued before the argument existed count from their own start.
    """
    turn_key = None
    if turn_at:  # the items' ids follow from the turn: a run after a lost one writes the same rows
        turn_key = hashlib.sha256(f"{user_id}\x00{conversation_id}\x00{turn_at}".encode()).hexdigest()[:28]
    with work_begun(parse_datetime(turn_at) if turn_at else None):
        saved = memory_extract_and_save(
            agent_id=agent_id, user_id=user_id, conversation_id=conversation_id, conversation=conversation,
            turn_key=turn_key,
        )
    return [memory.pk for memory in saved]
