"""Background tasks (Django Tasks API). Thin wrappers around services.

The embedded default runs them on a background thread of the web process
(``memoryboard.tasks_backend.ThreadBackend``); deployments use ``django_tasks_db`` and its
``db_worker``. Arguments are JSON values, as every backend requires.
"""

from __future__ import annotations

from django_tasks import task


@task()
def extract_memories_task(*, agent_id: str, user_id: str, conversation_id: str, conversation: list[dict]) -> list[str]:
    """Channel A: extract long-term memories from a turn and save them; returns the new ids."""
    from memoryboard.ltm.extraction import memory_extract_and_save

    saved = memory_extract_and_save(
        agent_id=agent_id, user_id=user_id, conversation_id=conversation_id, conversation=conversation
    )
    return [memory.pk for memory in saved]


@task()
def ann_update_task(*, model_name: str, memory_ids: list[str] | None = None) -> int:
    """Apply every pending update of the HNSW index of ``model_name`` (``ltm.ann.ann_apply_pending``).

    ``memory_ids``: only in tasks queued before updates were recorded as pending rows; they are recorded
    first, then applied with the rest.
    """
    from memoryboard.ltm.ann import ann_apply_pending, ann_pending_add

    if memory_ids:
        ann_pending_add(model_name=model_name, memory_ids=memory_ids)
    return ann_apply_pending(model_name=model_name)
