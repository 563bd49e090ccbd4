"""Vectors of memory items in ``memoryboard_embedding``, one row per item and model."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

from memoryboard.models import LongTermMemory, MemoryEmbedding, vector_checksum


def _embedder(embedder=None):
    if embedder is not None:
        return embedder
    from memoryboard.llm.factory import get_embedder

    return get_embedder()


def memory_embed_many(memories: Sequence[LongTermMemory], *, embedder=None, return_vectors: bool = False):
    """Embed the items' content with the current model and store (or replace) the vectors.

    Returns:
        How many were stored, or (``return_vectors``) their vectors, aligned with ``memories``.
    """
    memories = [m for m in memories if m is not None]
    if not memories:
        return np.zeros((0, 0), dtype=np.float32) if return_vectors else 0
    embedder = _embedder(embedder)
    vectors = np.asarray(embedder.embed([m.content for m in memories]), dtype=np.float32)
    now = timezone.now()
    blobs = [vector.tobytes() for vector in vectors]
    rows = [
        MemoryEmbedding(
            memory_id=m.pk,
            model_name=embedder.name,
            dim=int(vectors.shape[1]),
            vector=blob,
            checksum=vector_checksum(blob),
            updated_at=now,
        )
        for m, blob in zip(memories, blobs, strict=True)
    ]
    unique_fields = (
        ["memory", "model_name"] if connection.features.supports_update_conflicts_with_target else None
    )
    with transaction.atomic():
        MemoryEmbedding.objects.bulk_create(
            rows,
            batch_size=500,
            update_conflicts=True,
            unique_fields=unique_fields,
            update_fields=["dim", "vector", "checksum", "updated_at"],
        )
        _queue_index_update(embedder.name, [m.pk for m in memories])
    return vectors if return_vectors else len(rows)


def _queue_index_update(model_name: str, memory_ids: list[str]) -> None:
    """When the model has an HNSW index (``ltm.ann``): record these items as pending in the caller's
    transaction, and after the commit queue the task that applies every pending row of the model."""
    from memoryboard.ltm.ann import ann_pending_add, index_path

    if not index_path(model_name).exists():
        return
    ann_pending_add(model_name=model_name, memory_ids=memory_ids)

    def enqueue() -> None:
        from memoryboard.tasks import ann_update_task

        ann_update_task.enqueue(model_name=model_name)

    transaction.on_commit(enqueue)


def queue_index_state_update(*, memory_ids: list[str]) -> None:
    """After the commit, update every HNSW index holding these items: archived ones leave, restored ones return.

    Called by the archive, delete and restore services; does nothing (no query) when there is no index.
    """
    from memoryboard.ltm.ann import any_index

    if not memory_ids or not any_index():
        return
    models = MemoryEmbedding.objects.filter(memory_id__in=list(memory_ids)).values_list("model_name", flat=True)
    for model_name in sorted(set(models)):
        _queue_index_update(model_name, list(memory_ids))


def _reembed_queryset(*, missing_only: bool, embedder):
    from django.db.models import Exists, OuterRef

    qs = LongTermMemory.objects.order_by("pk")
    if missing_only:
        qs = qs.exclude(Exists(MemoryEmbedding.objects.filter(memory_id=OuterRef("pk"), model_name=embedder.name)))
    return qs


def memory_reembed_count(*, missing_only: bool = False, embedder=None) -> int:
    """How many items :func:`memory_reembed` would embed."""
    return _reembed_queryset(missing_only=missing_only, embedder=_embedder(embedder)).count()


def memory_reembed(
    *, missing_only: bool = False, batch_size: int = 200, embedder=None, on_batch=None
) -> int:
    """Re-embed every item (or only those without a vector of the current model), in batches.

    Items are walked by primary key (keyset pagination), so a batch never skips or repeats an item
    while vectors are written.

    Args:
        missing_only: only items with no vector for the current embedder model.
        batch_size: items per embedder call and per write.
        embedder: default the configured one.
        on_batch: called with the number of items of each finished batch (a progress bar).

    Returns:
        The number of items embedded.
    """
    embedder = _embedder(embedder)
    qs = _reembed_queryset(missing_only=missing_only, embedder=embedder)
    done = 0
    last_pk = None
    while True:
        page = qs if last_pk is None else qs.filter(pk__gt=last_pk)
        batch = list(page.only("pk", "namespace", "value_json")[:batch_size])
        if not batch:
            return done
        memory_embed_many(batch, embedder=embedder)
        done += len(batch)
        last_pk = batch[-1].pk
        if on_batch is not None:
            on_batch(len(batch))
