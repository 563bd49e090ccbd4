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
def ann_update_task(*, model_name: str, memory_ids: list[str]) -> int:
    """Bring the HNSW index of ``model_name`` up to date with these items' vectors (``ltm.ann``)."""
    from memoryboard.ltm.ann import ann_update
    from memoryboard.models import MemoryEmbedding

    rows = MemoryEmbedding.objects.filter(memory_id__in=memory_ids, model_name=model_name)
    return ann_update(model_name=model_name, embedding_ids=list(rows.values_list("id", flat=True)))
