"""The HNSW index of large scopes (staff search across every user), one per embedding model (``usearch``).

Per-user scopes are searched exactly (``ltm.retrieval``); a scope larger than ``retrieval.EXACT_MAX``
asks this index for candidates, which the search then filters by the caller's queryset and state
(archived, paused) exactly as exact search does, and re-ranks with the one scoring function.

- Keys are the ``memoryboard_embedding`` row ids (an item keeps its row when re-embedded).
- One file per model under ``MEMORYBOARD_ANN_DIR``; web processes open it memory-mapped
  (``Index.restore(path, view=True)``): the operating system shares the pages between processes, and
  a process re-opens the file when it changes.
- Writes go through one writer at a time (the worker task's :func:`ann_apply_pending`, the command
  ``manage.py ann_rebuild``; a lock file across processes), which loads the index, changes it and
  replaces the file atomically.
- Writers record the items to update in ``memoryboard_ann_pending`` (``AnnPending``) in their own
  transaction and queue the task after the commit; the task applies every pending row of the model in one
  load and one save, so the file is rewritten once per batch of accumulated changes, not once per write.
- The index holds the vectors of items that are not archived: archiving (or a user's delete) records
  them, and the task removes them; restoring records them again, and the task adds them back. Searches
  still filter by state, so an update not yet run costs candidates, never a wrong result.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)

# HNSW parameters: graph degree, and the candidate lists while building and searching. ef_add 32
# instead of 64 builds 1.5x faster per CPU second but caps recall at 0.917 whatever ef_search (200,000
# clustered vectors, same queries: 4,058 vs 2,464 vectors per CPU second; recall 0.917 vs 0.997 at
# ef_search 1000). ef_add 128, not 64 (stop 20, staff benchmark at 1M items on MariaDB, 60 queries per
# kind): recall@10 0.952 → 0.997 for near-duplicate queries and 0.938 → 0.997 for paraphrase-like ones
# (ef_search 10,000 with ef_add 64 reached only 0.965 / 0.948, f16 storage 0.953 / 0.938), for a build
# of 3,073 instead of 5,458 vectors per second from the database; the API's p50 90-94 ms either way.
# benchmarks/README.md § Staff search.
# ef_search 3000, not 1000: at 1M items (staff benchmark, 15 queries per kind, load ~8) queries of
# cosine ~0.5 to an item found recall@10 0.820 at ef 1000, 0.953 at 2000 and 3000; near-duplicate
# queries 0.953 / 0.960 / 0.973; the API's p50 52-59 / 61-100 / 66-75 ms (the index's part grows, the
# database's does not). Figures: benchmarks/README.md § Staff search.
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 3000
# Vectors are stored as 8-bit integers (a quarter of float32's size); results are re-ranked exactly.
STORED_DTYPE = "i8"
# Rows read per query while building (~100 MB of 512-d vectors); the previous chunk is added meanwhile.
BUILD_BATCH = 50_000

# Pending updates read, and items looked up, per query by the index's writer.
PENDING_CHUNK = 1_000

_lock = threading.Lock()
_views: dict[str, tuple[float, object]] = {}


def index_path(model_name: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", model_name)
    return Path(settings.MEMORYBOARD_ANN_DIR) / f"{safe}.usearch"


def any_index() -> bool:
    """Whether any model has an index file (without one, every search is exact and nothing is updated)."""
    ann_dir = Path(settings.MEMORYBOARD_ANN_DIR)
    return ann_dir.is_dir() and any(ann_dir.glob("*.usearch"))


def _new_index(dim: int):
    from usearch.index import Index

    return Index(ndim=dim, metric="cos", dtype=STORED_DTYPE, connectivity=CONNECTIVITY,
                 expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)


def _view(model_name: str):
    """This process's memory-mapped view of the model's index (re-opened when the file changed)."""
    path = index_path(model_name)
    try:
        mtime = path.stat().st_mtime_ns
    except FileNotFoundError:
        return None
    key = str(path)
    cached = _views.get(key)
    if cached is not None and cached[0] == mtime:
        return cached[1]
    with _lock:
        from usearch.index import Index

        index = Index.restore(str(path), view=True)
        if index is not None:
            index.expansion_search = EXPANSION_SEARCH
        _views[key] = (mtime, index)
        return index


def ann_candidates(*, model_name: str, dim: int, vector: np.ndarray, count: int) -> list[int] | None:
    """The keys (``memoryboard_embedding`` row ids) of the vectors nearest to ``vector``, nearest
    first; ``None`` without an index."""
    index = _view(model_name)
    if index is None or index.ndim != dim or len(index) == 0:
        return None
    matches = index.search(np.asarray(vector, dtype=np.float32), count=min(count, len(index)))
    return matches.keys.tolist()


@contextmanager
def _writer(model_name: str):
    """One writer of the model's index file at a time: across threads (the lock) and across processes
    (workers, ``ann_rebuild``: an exclusive ``flock`` on a file beside it), so no save overwrites changes
    another writer made, and pending rows are only deleted once their changes are in the file."""
    path = index_path(model_name)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _lock, open(path.with_suffix(".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _save(index, model_name: str) -> None:
    path = index_path(model_name)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    index.save(str(tmp))
    os.replace(tmp, path)  # readers keep the old mapping until they see the new file


def _vectors(rows: Sequence[tuple[int, bytes]], dim: int) -> tuple[np.ndarray, np.ndarray]:
    good = [(key, blob) for key, blob in rows if blob is not None and len(blob) == dim * 4]
    keys = np.fromiter((key for key, _blob in good), dtype=np.uint64, count=len(good))
    matrix = np.frombuffer(b"".join(blob for _key, blob in good), dtype=np.float32).reshape(len(good), dim)
    return keys, matrix


def _archived(memory_ids: Sequence[str]) -> set[str]:
    """Which of these items are archived (one query by primary key)."""
    from memoryboard.models import LongTermMemory

    if not memory_ids:
        return set()
    return set(LongTermMemory.objects.filter(pk__in=list(set(memory_ids)), archived=True)
               .values_list("pk", flat=True))


def _active_rows(rows: Sequence[tuple[int, str, bytes]]) -> tuple[list[tuple[int, bytes]], list[int]]:
    """Split ``(embedding id, memory id, vector)`` rows into the vectors to index and the keys of archived items."""
    archived = _archived([memory_id for _key, memory_id, _blob in rows])
    keep = [(key, blob) for key, memory_id, blob in rows if memory_id not in archived]
    gone = [key for key, memory_id, _blob in rows if memory_id in archived]
    return keep, gone


def _stored_vectors(model_name: str, dim: int, skip: set[str]):
    """The model's stored vectors in chunks of ``BUILD_BATCH`` rows, by row id (keyset pagination, the
    ORM's SQL read without its per-value converters): ``(rows read, keys, float32 matrix)``, leaving out
    the items in ``skip`` and vectors of another size."""
    from memoryboard.models import MemoryEmbedding

    qs = MemoryEmbedding.objects.filter(model_name=model_name).order_by("id").values_list("id", "memory_id", "vector")
    last = 0
    with connection.cursor() as cursor:
        while True:
            sql, params = qs.filter(id__gt=last)[:BUILD_BATCH].query.sql_with_params()
            cursor.execute(sql, params)
            rows = cursor.fetchall()
            if not rows:
                return
            keys, matrix = _vectors([(key, blob) for key, memory_id, blob in rows if memory_id not in skip], dim)
            yield len(rows), keys, matrix
            last = rows[-1][0]


def ann_rebuild(*, model_name: str, dim: int, on_batch: Callable[[int], None] | None = None,
                threads: int = 0) -> int:
    """Build the model's index from the stored vectors of that model's items not archived; replace the file.

    The database is read in large chunks while the previous chunk is being added (``Index.add`` runs
    on every core and releases the GIL); the archived items are read once (their index by state), not
    looked up per vector. Figures in benchmarks/README.md § Staff search.

    Returns:
        The number of vectors indexed.
    """
    from memoryboard.models import AnnPending, LongTermMemory

    # The writer's lock for the whole build: a task waits (its rows stay pending) rather than save a
    # change the new file would then overwrite.
    with _writer(model_name):
        # Pending updates recorded before the read are in the stored vectors: the new file covers them.
        covered = list(AnnPending.objects.filter(model_name=model_name).values_list("id", flat=True))
        index = _new_index(dim)
        archived = set(LongTermMemory.objects.filter(archived=True).values_list("pk", flat=True))
        done = 0
        with ThreadPoolExecutor(max_workers=1) as adder:
            pending = None
            for read, keys, matrix in _stored_vectors(model_name, dim, archived):
                if pending is not None:
                    pending.result()
                if len(keys):
                    pending = adder.submit(index.add, keys, matrix, threads=threads)
                done += len(keys)
                if on_batch is not None:
                    on_batch(read)
            if pending is not None:
                pending.result()
        _save(index, model_name)
        _pending_delete(covered)
    return done


def ann_rebuild_count(*, model_name: str) -> int:
    from memoryboard.models import MemoryEmbedding

    return MemoryEmbedding.objects.filter(model_name=model_name).count()


def ann_update(*, model_name: str, embedding_ids: Sequence[int]) -> int:
    """Bring these embedding rows up to date in the model's index now, if it exists: add (or replace)
    the vectors of items not archived, remove those of archived items; save the file if anything changed.

    The worker goes through :func:`ann_apply_pending` instead; this is for a caller that cannot wait for
    it (a user's erase, before the rows go).

    Returns:
        The number of vectors added or removed.
    """
    from memoryboard.models import MemoryEmbedding

    if not embedding_ids or not index_path(model_name).exists():
        return 0
    with _writer(model_name):
        index = _restore(model_name)
        if index is None:
            return 0
        changed = _apply(index, MemoryEmbedding.objects.filter(id__in=list(embedding_ids), model_name=model_name))
        if changed:
            _save(index, model_name)
    return changed


def ann_pending_add(*, model_name: str, memory_ids: Sequence[str]) -> None:
    """Record, in the caller's transaction, that these items' vectors of ``model_name`` must reach its index."""
    from memoryboard.models import AnnPending

    AnnPending.objects.bulk_create([AnnPending(model_name=model_name, memory_id=pk) for pk in memory_ids],
                                   batch_size=PENDING_CHUNK)


def ann_apply_pending(*, model_name: str) -> int:
    """Apply every pending update of the model's index (``AnnPending``) at once: load the file, change the
    vectors of those items, save it once, then delete the rows read (those recorded meanwhile wait for the
    next run). No pending row: returns at once, the file untouched; so the many tasks queued by many
    writes cost one rewrite of the file per run that finds work, not one each. A failure keeps the rows.
    Without an index file the rows are dropped (a rebuild reads every vector).

    Returns:
        The number of vectors added or removed.
    """
    from memoryboard.models import AnnPending, MemoryEmbedding

    with _writer(model_name):
        pending = list(AnnPending.objects.filter(model_name=model_name).order_by("id").values_list("id", "memory_id"))
        if not pending:
            return 0
        changed = 0
        index = _restore(model_name)
        if index is not None:
            memory_ids = sorted({memory_id for _pk, memory_id in pending})
            for start in range(0, len(memory_ids), PENDING_CHUNK):
                changed += _apply(index, MemoryEmbedding.objects.filter(
                    memory_id__in=memory_ids[start:start + PENDING_CHUNK], model_name=model_name))
            if changed:
                _save(index, model_name)
        _pending_delete([pk for pk, _memory_id in pending])
    return changed


def _pending_delete(ids: Sequence[int]) -> None:
    from memoryboard.models import AnnPending

    for start in range(0, len(ids), PENDING_CHUNK):
        AnnPending.objects.filter(id__in=ids[start:start + PENDING_CHUNK]).delete()


def _restore(model_name: str):
    """The model's index loaded in memory to be changed, or ``None`` without a file."""
    from usearch.index import Index

    path = index_path(model_name)
    if not path.exists():
        return None
    return Index.restore(str(path), view=False)


def _apply(index, rows) -> int:
    """Change ``index`` for these ``MemoryEmbedding`` rows (a queryset): the vectors of items not archived
    are added or replaced, those of archived items removed. Returns how many vectors changed."""
    rows = [(key, memory_id, bytes(blob)) for key, memory_id, blob in rows.values_list("id", "memory_id", "vector")]
    keep, gone = _active_rows(rows)
    keys, matrix = _vectors(keep, index.ndim)
    removed = [key for key in gone if key in index]
    present = [key for key in keys if key in index]
    if present or removed:
        index.remove(present + removed)
    if len(keys):
        index.add(keys, matrix)
    return len(keys) + len(removed)
