"""Vectors of memory items in ``memoryboard_embedding``, one row per item and model."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.db.models.constants import OnConflict
from django.db.models.sql import InsertQuery
from django.utils import timezone

from memoryboard.llm.factory import get_embedder
from memoryboard.ltm.search.ann import ann_follow_in_background, ann_indexed, ann_log
from memoryboard.ltm.search.tasks import ann_update_task
from memoryboard.models import AnnChange, LongTermMemory, MemoryEmbedding, vector_checksum


def _embedder(embedder=None):
    if embedder is not None:
        return embedder
    return get_embedder()


def memory_embed_many(memories: Sequence[LongTermMemory], *, embedder=None, return_vectors: bool = False,
                      vectors=None):
    """Embed the items' content with the current model and store (or replace) the vectors.

    ``vectors``: the items' vectors, already computed by ``embedder`` (an agent turn embeds while it
    waits for the model, outside its write transaction); only stored then.

    Returns:
        How many were stored, or (``return_vectors``) their vectors, aligned with ``memories``.
    """
    memories = [m for m in memories if m is not None]
    if not memories:
        return np.zeros((0, 0), dtype=np.float32) if return_vectors else 0
    embedder = _embedder(embedder)
    if vectors is None:
        vectors = embedder.embed([m.content for m in memories])
    vectors = np.asarray(vectors, dtype=np.float32)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    dim = int(vectors.shape[1])
    rows = []
    for m, vector in zip(memories, vectors, strict=True):
        blob = vector.tobytes()
        rows.append((m.pk, embedder.name, dim, blob, vector_checksum(blob), now))
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.executemany(_upsert_sql(connection.vendor), rows)
        _queue_index_update(embedder.name, [m.pk for m in memories])
    return vectors if return_vectors else len(rows)


@lru_cache(maxsize=8)
def _upsert_sql(vendor: str) -> str:
    """The ORM's own upsert of one ``memoryboard_embedding`` row (``bulk_create(update_conflicts=True)``:
    ON CONFLICT on SQLite/PostgreSQL, ON DUPLICATE KEY UPDATE on MySQL/MariaDB), compiled once and sent
    with ``executemany``. ``bulk_create`` prepared every value of every row through its field: 0.16 ms
    of CPU per vector, half of what ``reembed`` spends besides the model; this way 0.03 ms
    (benchmarks/README.md § Retrieval, the ``reembed`` re-run).
    """
    meta = MemoryEmbedding._meta
    fields = [field for field in meta.concrete_fields if not field.primary_key]
    assert [f.name for f in fields] == ["memory", "model_name", "dim", "vector", "checksum", "updated_at"]
    supports_target = connection.features.supports_update_conflicts_with_target
    query = InsertQuery(
        MemoryEmbedding,
        on_conflict=OnConflict.UPDATE,
        update_fields=[meta.get_field(name) for name in ("dim", "vector", "checksum", "updated_at")],
        unique_fields=[meta.get_field("memory"), meta.get_field("model_name")] if supports_target else [],
    )
    query.insert_values(fields, [MemoryEmbedding(memory_id="", model_name="", dim=0, vector=b"", checksum=0)])
    (sql, _params), = query.get_compiler(connection=connection).as_sql()
    return sql


def _queue_index_update(model_name: str, memory_ids: list[str]) -> None:
    """When the model is indexed (``ltm.search.ann``: its change log has a row): log these items' new vectors in
    the caller's transaction, and after the commit queue the task that makes the worker's host follow the
    log (every other host follows it on its own)."""
    if not ann_indexed(model_name):
        return
    ann_log(model_name=model_name, changes=[("add", pk, None) for pk in memory_ids])
    _follow_after_commit(model_name)


def _follow_after_commit(model_name: str) -> None:
    def enqueue() -> None:
        ann_update_task.enqueue(model_name=model_name)
        ann_follow_in_background(model_name=model_name)

    transaction.on_commit(enqueue)


def queue_index_state_update(*, memory_ids: list[str]) -> None:
    """Log, for every HNSW index holding these items, that archived ones leave (``remove``) and restored
    ones return (``add``); after the commit, queue the worker's follow.

    Called, through ``store.signals.memory_states_changed`` (:func:`follow_states_changed`), by the
    archive, delete, restore and review services; without any index, one query (is the log empty);
    otherwise one for the items' vectors and one per model they have; nothing logged for a model not
    indexed.
    """
    if not memory_ids or not AnnChange.objects.exists():  # no model indexed anywhere: one cheap query
        return
    rows = (MemoryEmbedding.objects.filter(memory_id__in=list(memory_ids))
            .values_list("model_name", "memory_id", "id", "memory__archived"))
    by_model: dict[str, list[tuple[str, str, int]]] = {}
    for model_name, memory_id, key, archived in rows:
        by_model.setdefault(model_name, []).append(("remove" if archived else "add", memory_id, key))
    for model_name, changes in sorted(by_model.items()):
        if ann_indexed(model_name):
            ann_log(model_name=model_name, changes=changes)
            _follow_after_commit(model_name)


def _reembed_queryset(*, missing_only: bool, embedder):
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


def follow_states_changed(sender, *, memory_ids: list[str], **kwargs) -> None:
    """Receiver of ``store.signals.memory_states_changed``: :func:`queue_index_state_update`."""
    queue_index_state_update(memory_ids=memory_ids)
