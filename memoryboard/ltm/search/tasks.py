"""Background tasks of search (Django Tasks API): thin wrappers around its services.

Arguments are JSON values, as every backend requires (``memoryboard.tasks_backend``).
"""

from __future__ import annotations

from django_tasks import task

from memoryboard.ltm.search.ann import ann_follow, ann_indexed, ann_log, ann_log_prune_now_and_then


@task()
def ann_update_task(*, model_name: str, memory_ids: list[str] | None = None) -> int | None:
    """Make this host's HNSW index of ``model_name``, if it has one, follow the change log
    (``ltm.search.ann.ann_follow``), and prune the log now and then.

    ``memory_ids``: only in tasks queued before changes were logged; they are logged first.
    """
    if memory_ids and ann_indexed(model_name):
        ann_log(model_name=model_name, changes=[("add", pk, None) for pk in memory_ids])
    changed = ann_follow(model_name=model_name, build_missing=False)
    ann_log_prune_now_and_then()
    return changed
