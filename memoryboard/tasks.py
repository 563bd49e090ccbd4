"""Background tasks (Django Tasks API). Thin wrappers around services.

The embedded default runs them on a background thread of the web process
(``memoryboard.tasks_backend.ThreadBackend``); deployments use ``django_tasks_db`` and its
``db_worker``. Arguments are JSON values, as every backend requires.
"""

from __future__ import annotations

import hashlib

from django_tasks import task


@task()
def extract_memories_task(
    *, agent_id: str, user_id: str, conversation_id: str, conversation: list[dict], turn_at: str | None = None
) -> list[str]:
    """Channel A: extract long-term memories from a turn and save them; returns the new ids.

    ``turn_at``: when the turn began (ISO 8601). Nothing is saved if the user's data was erased since
    (``ltm.erase_gate``); tasks queued before the argument existed count from their own start.
    """
    from django.utils.dateparse import parse_datetime

    from memoryboard.ltm.erase_gate import work_begun
    from memoryboard.ltm.extraction import memory_extract_and_save

    turn_key = None
    if turn_at:  # the items' ids follow from the turn: a run after a lost one writes the same rows
        turn_key = hashlib.sha256(f"{user_id}\x00{conversation_id}\x00{turn_at}".encode()).hexdigest()[:28]
    with work_begun(parse_datetime(turn_at) if turn_at else None):
        saved = memory_extract_and_save(
            agent_id=agent_id, user_id=user_id, conversation_id=conversation_id, conversation=conversation,
            turn_key=turn_key,
        )
    return [memory.pk for memory in saved]


@task()
def ann_update_task(*, model_name: str, memory_ids: list[str] | None = None) -> int | None:
    """Make this host's HNSW index of ``model_name``, if it has one, follow the change log
    (``ltm.ann.ann_follow``), and prune the log now and then.

    ``memory_ids``: only in tasks queued before changes were logged; they are logged first.
    """
    from memoryboard.ltm.ann import ann_follow, ann_indexed, ann_log, ann_log_prune_now_and_then

    if memory_ids and ann_indexed(model_name):
        ann_log(model_name=model_name, changes=[("add", pk, None) for pk in memory_ids])
    changed = ann_follow(model_name=model_name, build_missing=False)
    ann_log_prune_now_and_then()
    return changed
