"""Vectors of memory items, kept in each process by checksum.

A search reads, for its candidate items, only ``(embedding row id, checksum)`` from the index
``idx_embedding_checksum`` (no row of the embedding table is touched), then takes the vectors from
this cache; the ones it lacks are read by row id in one query and kept. A checksum names the bytes
of a vector (:func:`memoryboard.models.vector_checksum`), and a vector is kept only once its bytes
match it, so a cached vector never goes stale: an item re-embedded has a new checksum, an item
deleted is no longer a candidate.

The cache is bounded (``MEMORYBOARD_VECTOR_CACHE_MB``; the oldest out first: a lookup does not
reorder it, which keeps the hot path to plain dictionary reads) and thread-safe.

A second, smaller cache remembers which vector (row id, checksum) each of a user's items had at
the user's vector generation (``VectorGeneration``, raised with every write of their vectors): while
the generation read with a search's candidates is unchanged, the search skips the join with the
embedding table.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from django.conf import settings
from django.core.signals import setting_changed
from django.db import connection
from django.dispatch import receiver

from memoryboard.models import MemoryEmbedding, vector_checksum

# Row ids per query when reading vectors the cache lacks (well under SQLite's variable limit).
READ_BATCH = 2_000


class VectorCache:
    """Vector bytes by checksum, the oldest out first once ``max_bytes`` is reached."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max(0, int(max_bytes))
        self._items: dict[int, bytes] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get_many(self, checksums: Sequence[int | None]) -> list[bytes | None]:
        """The cached bytes of each checksum, ``None`` where not cached (a dictionary read each, safe
        beside a concurrent ``put_many``: an entry evicted meanwhile reads as not cached)."""
        get = self._items.get
        return [get(checksum) for checksum in checksums]

    def put_many(self, items: Sequence[tuple[int, bytes]]) -> None:
        """Keep ``(checksum, bytes)`` pairs, evicting the oldest beyond the bound."""
        with self._lock:
            for checksum, blob in items:
                if checksum not in self._items:
                    self._items[checksum] = blob
                    self._bytes += len(blob)
            while self._bytes > self.max_bytes and self._items:
                old = self._items.pop(next(iter(self._items)))
                self._bytes -= len(old)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


@dataclass
class Scope:
    """What one user's items had at one vector generation: each item's vector ``(item id, row id,
    checksum)``, and once ranked, ``(candidate ids in query order, their read-only matrix)`` (one
    attribute, so a thread never sees the ids of one search with the matrix of another)."""

    generation: int
    vectors: dict[str, tuple]
    ranked: tuple[list[str], np.ndarray] | None = None


class ScopeVectors:
    """``(user id, model) -> Scope``, least recently used out first beyond ``max_items`` items in all
    (each counted once for its map entry and once for its matrix row)."""

    def __init__(self, max_items: int) -> None:
        self.max_items = max_items
        self._scopes: OrderedDict[tuple[str, str], Scope] = OrderedDict()
        self._sizes: dict[tuple[str, str], int] = {}
        self._items = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str], generation: int) -> Scope | None:
        """The scope of ``key`` if it was taken at ``generation``."""
        with self._lock:
            scope = self._scopes.get(key)
            if scope is None or scope.generation != generation:
                return None
            self._scopes.move_to_end(key)
            return scope

    def known(self, key: tuple[str, str]) -> bool:
        return key in self._scopes

    def put(self, key: tuple[str, str], scope: Scope) -> None:
        """Keep (or replace) the scope of ``key``; again after filling in its ranked matrix."""
        size = len(scope.vectors) + (len(scope.ranked[0]) if scope.ranked is not None else 0)
        with self._lock:
            self._scopes.pop(key, None)
            self._items += size - self._sizes.pop(key, 0)
            self._scopes[key] = scope
            self._sizes[key] = size
            while self._items > self.max_items and self._scopes:
                dropped, _scope = self._scopes.popitem(last=False)
                self._items -= self._sizes.pop(dropped)

    def clear(self) -> None:
        with self._lock:
            self._scopes.clear()
            self._sizes.clear()
            self._items = 0


# Items kept for all users together: 100,000 map entries or matrix rows, ~80 MB at 384 dimensions.
SCOPE_ITEMS = 100_000
scope_vectors = ScopeVectors(SCOPE_ITEMS)

_cache: VectorCache | None = None
_cache_guard = threading.Lock()


def get_vector_cache() -> VectorCache:
    """This process's cache, sized by ``MEMORYBOARD_VECTOR_CACHE_MB``."""
    global _cache
    if _cache is None:
        with _cache_guard:
            if _cache is None:
                _cache = VectorCache(int(settings.MEMORYBOARD_VECTOR_CACHE_MB * 1024 * 1024))
    return _cache


@receiver(setting_changed, dispatch_uid="memoryboard.ltm.vector_cache.reset")
def _on_setting_changed(*, setting: str, **kwargs) -> None:
    global _cache
    if setting == "MEMORYBOARD_VECTOR_CACHE_MB":
        _cache = None


def _read(row_ids: list[int]) -> dict[int, bytes]:
    """Vector bytes of embedding rows by id, in batches."""
    table = MemoryEmbedding._meta.db_table
    found: dict[int, bytes] = {}
    with connection.cursor() as cursor:
        for start in range(0, len(row_ids), READ_BATCH):
            batch = row_ids[start : start + READ_BATCH]
            placeholders = ", ".join(["%s"] * len(batch))
            cursor.execute(f"SELECT id, vector FROM {table} WHERE id IN ({placeholders})", batch)
            found.update((row_id, bytes(vector)) for row_id, vector in cursor.fetchall())
    return found


def vectors_for(rows: Sequence[tuple[int | None, int | None]], *, size: int, remember: bool = True) -> list[bytes | None]:
    """The vector bytes of embedding rows ``(row id, checksum)``, from the cache or one query.

    Args:
        rows: ``(None, None)`` for an item without a vector.
        size: the expected length in bytes (dimension × 4); any other length counts as no vector.
        remember: keep what was read (off for scans larger than the cache, which would only
            push out what other searches use).

    Returns:
        Bytes aligned with ``rows``; ``None`` where there is no usable vector.
    """
    cache = get_vector_cache()
    found = cache.get_many([checksum for _row_id, checksum in rows])
    missing = [i for i, blob in enumerate(found) if blob is None and rows[i][0] is not None]
    if not missing:
        return found  # cached bytes were checked against their checksum (and so their length) when kept
    read = _read([rows[i][0] for i in missing])
    keep: list[tuple[int, bytes]] = []
    for i in missing:
        row_id, checksum = rows[i]
        blob = read.get(row_id)
        found[i] = blob
        if remember and blob is not None and len(blob) == size and vector_checksum(blob) == checksum:
            keep.append((checksum, blob))
    if keep:
        cache.put_many(keep)
    return [blob if blob is not None and len(blob) == size else None for blob in found]
