"""What a search builds for a scope, kept in each process while the scope is unchanged.

A search reads its candidates' ids and ``updated_at`` (no content, no vector); the vectors, type
weights and keyword index (BM25) of those candidates are built once and kept here under a fingerprint
of exactly that list and the model. An item written (its content and so its vector), archived or
deleted changes the list, so the next search has another key: nothing is ever invalidated, and
gunicorn processes need not tell each other anything. A scope is kept only once every candidate has
its vector, so an item embedded later (``reembed``) is not missed.

It pays for itself (``benchmarks/retrieval.py``, benchmarks/README.md § Retrieval): a 5,000-item scope
searched cold (BM25 index built, vectors read) takes 194 ms of CPU, warm 17 ms (1,000 items: 33 vs 6 ms).

Bounded by ``MEMORYBOARD_VECTOR_CACHE_MB`` (least recently used out first), thread-safe. A scope
larger than the whole budget is not kept, and each of its searches builds it again: the vectors are
kept as 16-bit integers with a float32 scale per row (1,028 bytes for 512 dimensions, its day 8, its
cosine with the scope's mean 4, plus ~200 bytes of ids and keyword index per item), so the default 128 MB
holds a scope of ~105,000 items (float32 and
600 bytes counted per item, the former 64 MB held ~25,000: above that every search took seconds).
Cosines are computed in float32, a block of rows widened at a time, then scaled: 9 ms of CPU for
100,000 × 512 (numpy's float16 conversion took 85 ms, and bfloat16 moved cosines by up to 1e-3), within
1e-5 of the float32 product.

Only what an item's id and ``updated_at`` name is kept (vector, content's keywords, type, day); whether it
is paused, its ``relevance_score`` (decayed in place) and its expiry are read by every search, so a write
on another host, or by the agent platform straight into the table, is seen by the next search here.

A worker's memory for search, per process: this cache (at most ``MEMORYBOARD_VECTOR_CACHE_MB``), plus
while a scope is built ``READ_BATCH`` items' rows and float32 vectors at a time and the scope's keyword
index (a 100,000-item scope: 268 MB transient peak, tracemalloc, for 118 MB kept; holding every float32
vector at once took 929 MB), plus while a warm search runs its candidates' rows (100,000 items: 35 MB).
Measured in benchmarks/README.md § Retrieval.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

# Bytes counted per item besides its vector: its id (~90), the keyword index (~90), type weight and
# language-axis component (measured on 20,000 items of 8 words).
ITEM_OVERHEAD = 200
# The stored vectors' type (each row times its scale), and the rows widened back to float32 at a time.
VECTOR_DTYPE = np.int16
COSINE_BLOCK = 1024
_INT16_MAX = 32767


def compact_vectors(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float32 rows as (``VECTOR_DTYPE`` rows, float32 scale per row), rounded, read-only: row ≈ ints × scale."""
    matrix = np.asarray(matrix, dtype=np.float32)
    peak = np.abs(matrix).max(axis=1) if matrix.size else np.zeros(len(matrix), np.float32)
    scales = np.where(peak > 0, peak / _INT16_MAX, 1.0).astype(np.float32)
    ints = np.rint(matrix / scales[:, None]).astype(VECTOR_DTYPE)
    ints.flags.writeable = False
    scales.flags.writeable = False
    return ints, scales


@dataclass(frozen=True)
class ScopeData:
    """A scope's candidates (sorted by id) with their vectors (read-only, ``VECTOR_DTYPE``), type weights
    and BM25."""

    ids: list[str]
    matrix: np.ndarray
    scales: np.ndarray | None  # per row, when ``matrix`` holds integers (compact_vectors)
    type_weights: np.ndarray
    keywords: Any  # ranking.KeywordIndex
    days: np.ndarray | None = None  # when each item was said or became true (ltm.search.time_expressions.item_day)
    # Each item's cosine with the mean of the scope's vectors (ranking.centrality), from the float32 rows
    # when the scope is built: one product (1 ms at 5,000 items; from the compact rows it took 38 ms).
    mean_cosines: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        extra = sum(int(part.nbytes) for part in (self.scales, self.days, self.mean_cosines) if part is not None)
        return int(self.matrix.nbytes) + extra + ITEM_OVERHEAD * len(self.ids)

    @cached_property
    def position(self) -> dict[str, int]:
        """Each id's row (built when asked: only a scope with items lacking a vector needs it)."""
        return {pk: i for i, pk in enumerate(self.ids)}

    def vectors(self, positions: np.ndarray) -> np.ndarray:
        """The float32 vectors of the items at ``positions``."""
        rows = self.matrix[positions].astype(np.float32)
        return rows if self.scales is None else rows * self.scales[positions][:, None]

    def cosines(self, query: np.ndarray) -> np.ndarray:
        """``matrix @ query`` in float32, ``COSINE_BLOCK`` rows widened at a time into one buffer."""
        query = np.asarray(query, dtype=np.float32)
        if self.scales is None:
            return self.matrix @ query
        count = len(self.matrix)
        out = np.empty(count, dtype=np.float32)
        buffer = np.empty((min(count, COSINE_BLOCK), self.matrix.shape[1]), dtype=np.float32)
        for start in range(0, count, COSINE_BLOCK):
            block = self.matrix[start : start + COSINE_BLOCK]
            wide = buffer[: len(block)]
            np.copyto(wide, block)
            np.matmul(wide, query, out=out[start : start + len(block)])
        out *= self.scales
        return out


def fingerprint(model_name: str, ids: Sequence[str], versions: Sequence[str]) -> bytes:
    """A digest of the model and the candidates' ids and versions (``updated_at``), in order."""
    digest = hashlib.blake2b(model_name.encode(), digest_size=16)
    digest.update("\x1e".join(ids).encode())
    digest.update(b"\x1d")
    digest.update("\x1e".join(map(str, versions)).encode())
    return digest.digest()


class ScopeCache:
    """``fingerprint -> ScopeData``, least recently used out first beyond ``max_bytes``."""

    def __init__(self) -> None:
        self._items: OrderedDict[bytes, ScopeData] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def max_bytes(self) -> int:
        return int(float(settings.MEMORYBOARD_VECTOR_CACHE_MB) * 1024 * 1024)

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: bytes) -> ScopeData | None:
        with self._lock:
            data = self._items.get(key)
            if data is not None:
                self._items.move_to_end(key)
            return data

    def put(self, key: bytes, data: ScopeData) -> None:
        limit = self.max_bytes
        if data.nbytes > limit:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            self._items[key] = data
            self._bytes += data.nbytes
            while self._bytes > limit and self._items:
                _key, dropped = self._items.popitem(last=False)
                self._bytes -= dropped.nbytes

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


scope_cache = ScopeCache()


@receiver(setting_changed, dispatch_uid="memoryboard.ltm.search.vector_cache.reset")
def _on_setting_changed(*, setting: str, **kwargs) -> None:
    if setting == "MEMORYBOARD_VECTOR_CACHE_MB":
        scope_cache.clear()
