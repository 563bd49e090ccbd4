"""What a search builds for a scope, kept in each process and changed in place by the rows that changed.

The vectors, type weights, days, keyword index (BM25), centralities and ``relevance_score`` of a scope's
candidates are built once and kept here under the scope's name (the model, and the SQL that selects the
candidates: one user's items, one namespace, everyone's), with the position of the items' change log
(``ltm.store.change_log``, kept by the database's triggers for every writer) they were read at. The next
search of the scope reads the log past that position:

- nothing: the kept scope, as it is;
- a few rows: those items only are read through the scope's query (gone, archived, moved out, changed or only
  rescored) and a new scope is made from the kept one (:meth:`ScopeData.with_items`): the vectors spliced in
  and out in order (a copy of the kept rows by runs), the keyword index changed by those rows
  (``ltm.search.keywords``: a small delta beside its main postings), the sum of the vectors changed by them
  (in fixed point: the same integers whatever the order of the changes), and each item's cosine with the new
  mean computed again;
- the log pruned past the position, more than ``CHANGED_MAX_SHARE`` of the scope changed, or nothing kept (a
  cold process): every candidate's id, ``updated_at`` and score is read, and compared with what is kept
  (:func:`keys_changed`: the same splice by the rows that differ), or built in full.

A write on another host, or by the agent platform straight into the table, is in the log the same way. A
changed scope is the scope a full build would make, to the bit: the same rows in the same order, the same
keyword counts, the same integer sum (``tests/ltm/test_scope_changes.py`` checks random sequences of writes,
edits, archives and deletes against cold builds; ``test_scope_change_log.py`` the platform's writes by SQL). A
scope is never changed once made: searches running in other threads keep reading theirs.

A scope is kept only once every candidate has its vector (an item embedded during the search, or beyond
the budget of ``MAX_EMBED_ON_THE_FLY``, is read again by the next search).

Bounded by ``MEMORYBOARD_VECTOR_CACHE_MB`` (least recently used out first), thread-safe. A scope
larger than the whole budget is not kept, and each of its searches builds it again: the vectors are
kept as 16-bit integers with a float32 scale per row (1,028 bytes for 512 dimensions, its day 8, type
weight 4, cosine with the scope's mean 4, plus the ids, versions and keyword index, ~400 bytes per item
of a few words: 1.44 KB per item of eight words), so the default 160 MB holds a scope of ~110,000 items. Cosines are computed in float32,
a block of rows widened at a time, then scaled: within 1e-5 of the float32 product.

Whether an item is paused (flags and pause rules, in other tables) and its expiry are read by every search.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

# Bytes counted per item besides its arrays and keyword index: its id and version (two short str and
# their list slots).
ITEM_OVERHEAD = 180
# A scope with more than this share of its rows changed since it was kept is built again.
CHANGED_MAX_SHARE = 0.2
# The vectors' sum is kept in integers of 2**-FIXED_BITS (exact: the same in any order of changes).
FIXED_BITS = 40
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


def fixed_sum(ints: np.ndarray, scales: np.ndarray | None) -> np.ndarray:
    """The sum of the rows ``ints * scales`` in integers of ``2**-FIXED_BITS`` (exact)."""
    total = np.zeros(ints.shape[1] if ints.ndim == 2 else 0, dtype=np.int64)
    for start in range(0, len(ints), COSINE_BLOCK):
        block = ints[start : start + COSINE_BLOCK].astype(np.float64)
        if scales is not None:
            block *= scales[start : start + COSINE_BLOCK, None].astype(np.float64)
        total += np.rint(np.ldexp(block, FIXED_BITS)).astype(np.int64).sum(axis=0)
    return total


def spliced(old: np.ndarray, gone: np.ndarray, added: np.ndarray, new: np.ndarray, size: int) -> np.ndarray:
    """``old`` without its rows at ``gone`` (sorted positions), with the rows ``new`` at ``added`` (sorted
    positions of the result, ``size`` rows): the kept rows copied by runs, in order."""
    out = np.empty((size, *old.shape[1:]), dtype=old.dtype)
    if len(added):
        out[added] = new
    o = n = 0
    gi = ai = 0
    gone, added = gone.tolist(), added.tolist()
    while n < size:
        if ai < len(added) and added[ai] == n:
            n, ai = n + 1, ai + 1
            continue
        if gi < len(gone) and gone[gi] == o:
            o, gi = o + 1, gi + 1
            continue
        run = min((gone[gi] if gi < len(gone) else len(old)) - o, (added[ai] if ai < len(added) else size) - n)
        out[n : n + run] = old[o : o + run]
        o, n = o + run, n + run
    return out


def version_keys(ids: list[str], versions: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The ids and versions (sorted by id) as numpy strings: what :func:`keys_changed` compares. Two
    arrays made in C instead of two dicts and two passes in Python: 31 ms instead of 75 ms at 100,000
    rows on this machine under load (the difference a search after a write pays). Bytes when every id is
    ASCII (a quarter of the memory of ``str``), else ``str``."""
    return _strings(ids), _strings(versions)


def _strings(values: list[str]) -> np.ndarray:
    try:
        if values and len(set(map(len, values))) == 1:
            # All of one length (hex ids, ``updated_at`` as text): one string made and cut in C, the same
            # array as ``np.asarray(values, dtype=bytes)`` in a twentieth of its time (0.05 ms at 5,000).
            width = len(values[0])
            if width:
                return np.frombuffer("".join(values).encode("ascii"), dtype=f"S{width}")
        return np.asarray(values, dtype=bytes)
    except UnicodeEncodeError:  # an id written by the agent platform outside ASCII
        return np.asarray(values, dtype=str)


def keys_changed(old: tuple[np.ndarray, np.ndarray],
                 new: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(positions of ``old`` whose id is gone or whose version changed, positions of ``new`` that are not
    in ``old`` as they are): both sorted, each ``version_keys`` of ids sorted and unique."""
    if any(a.dtype.kind != b.dtype.kind for a, b in zip(old, new)):  # bytes beside str: both as str
        old, new = tuple(a.astype(str) for a in old), tuple(b.astype(str) for b in new)
    old_ids, old_versions = old
    new_ids, new_versions = new
    if not len(new_ids):
        return np.arange(len(old_ids)), np.zeros(0, np.int64)
    at = np.minimum(np.searchsorted(new_ids, old_ids), len(new_ids) - 1)
    kept = (new_ids[at] == old_ids) & (new_versions[at] == old_versions)
    matched = np.zeros(len(new_ids), dtype=bool)
    matched[at[kept]] = True
    return np.flatnonzero(~kept), np.flatnonzero(~matched)


@dataclass(frozen=True)
class Rows:
    """Items read for a scope (or a change of one), in order: ids, vectors (compact), texts, types, days."""

    ids: list[str]
    ints: np.ndarray
    scales: np.ndarray
    texts: list[str]
    type_weights: np.ndarray
    days: np.ndarray


@dataclass(frozen=True)
class ScopeData:
    """A scope's candidates (sorted by id) with their versions, vectors (read-only, ``VECTOR_DTYPE``), type
    weights, days, BM25 and centralities: see the module docstring."""

    ids: list[str]
    matrix: np.ndarray
    scales: np.ndarray | None  # per row, when ``matrix`` holds integers (compact_vectors)
    type_weights: np.ndarray
    keywords: Any  # ranking.KeywordIndex
    days: np.ndarray | None = None  # when each item was said or became true (ltm.search.time_expressions.item_day)
    # Each item's cosine with the mean of the scope's vectors (ranking.centrality).
    mean_cosines: np.ndarray | None = None
    versions: list[str] | None = None  # each item's ``updated_at`` as text
    total: np.ndarray | None = None  # the vectors' sum (fixed_sum)
    # Each item's ``relevance_score`` and the change log's position they and the rows were read at
    # (``ltm.store.change_log.LogPosition``): a scope with both follows the log (``with_items``).
    relevances: np.ndarray | None = None
    log: Any = None

    @classmethod
    def build(cls, rows: Rows, versions: list[str], keyword_index) -> ScopeData:
        """A scope of ``rows`` (sorted by id) and their ``versions``; ``keyword_index(texts)`` makes its BM25."""
        data = cls(ids=rows.ids, matrix=rows.ints, scales=rows.scales, type_weights=rows.type_weights,
                   keywords=keyword_index(rows.texts), days=rows.days, versions=versions,
                   total=fixed_sum(rows.ints, rows.scales))
        return data._with_centrality()

    @cached_property
    def keys(self) -> tuple[np.ndarray, np.ndarray]:
        """``version_keys`` of this scope (made when a change is first compared with it)."""
        return version_keys(self.ids, self.versions or [])

    def changed(self, *, ids: list[str], versions: list[str], gone: np.ndarray, added: np.ndarray,
                rows: Rows, keys: tuple[np.ndarray, np.ndarray] | None = None) -> ScopeData:
        """This scope after a change: the new ``ids`` and ``versions`` (sorted by id); its rows at ``gone``
        (sorted positions) removed and ``rows`` added at ``added`` (sorted positions of the new scope);
        ``keys``: their ``version_keys`` when the caller made them (kept for the next change)."""
        size = len(ids)
        gone, added = np.asarray(gone, np.int64), np.asarray(added, np.int64)
        old_to_new = np.full(len(self.ids), -1, np.int64)
        old_to_new[np.delete(np.arange(len(self.ids)), gone)] = np.delete(np.arange(size), added)
        total = self.total - fixed_sum(self.matrix[gone], None if self.scales is None else self.scales[gone])
        total = total + fixed_sum(rows.ints, rows.scales)
        matrix = spliced(self.matrix, gone, added, rows.ints, size)
        scales = None if self.scales is None else spliced(self.scales, gone, added, rows.scales, size)
        for part in (matrix, scales):
            if part is not None:
                part.flags.writeable = False
        data = replace(
            self, ids=ids, versions=versions, matrix=matrix, scales=scales, total=total, relevances=None, log=None,
            type_weights=spliced(self.type_weights, gone, added, rows.type_weights, size),
            days=spliced(self.days, gone, added, rows.days, size),
            keywords=self.keywords.changed(old_to_new=old_to_new, size=size,
                                           added=list(zip(added.tolist(), rows.texts))))
        data = data._with_centrality()
        if keys is not None:
            data.__dict__["keys"] = keys  # the cached_property, already made by the caller
        return data

    def with_items(self, *, removed: list[str], rows: Rows, versions: list[str], relevances: list[float],
                   rescored: dict[str, float], log: Any) -> ScopeData:
        """This scope after the log's rows past its position: the items ``removed`` (ids, sorted; gone or
        changed) taken out, ``rows`` (sorted by id; of ``versions`` and ``relevances``) put in, the kept
        items in ``rescored`` given their new ``relevance_score``; at the position ``log``. Needs
        ``relevances``; the same scope as :meth:`build` of the candidates read in full."""
        ids = self.ids
        gone = [i for i, pk in zip((bisect_left(ids, pk) for pk in removed), removed) if i < len(ids) and ids[i] == pk]
        kept_ids = _without(ids, gone)
        kept_versions = _without(self.versions or [], gone)
        added = [bisect_left(kept_ids, pk) + j for j, pk in enumerate(rows.ids)]
        new_ids, new_versions = _with(kept_ids, added, rows.ids), _with(kept_versions, added, versions)
        gone_at, added_at = np.asarray(gone, np.int64), np.asarray(added, np.int64)
        data = self if not gone and not added else self.changed(
            ids=new_ids, versions=new_versions, gone=gone_at, added=added_at, rows=rows)
        scores = spliced(self.relevances, gone_at, added_at, np.asarray(relevances, np.float32), len(new_ids))
        for pk, relevance in rescored.items():
            at = bisect_left(new_ids, pk)
            if at < len(new_ids) and new_ids[at] == pk:
                scores[at] = relevance
        scores.flags.writeable = False
        return replace(data, relevances=scores, log=log)

    def _with_centrality(self) -> ScopeData:
        count = len(self.ids)
        mean = (np.ldexp(self.total.astype(np.float64), -FIXED_BITS) / count).astype(np.float32) if count else None
        return replace(self, mean_cosines=self.cosines(mean) if count else np.zeros(0, np.float32))

    @property
    def nbytes(self) -> int:
        arrays = (self.matrix, self.scales, self.days, self.mean_cosines, self.type_weights, self.total,
                  self.relevances)
        arrays += self.__dict__.get("keys", ())
        extra = sum(int(part.nbytes) for part in arrays if part is not None)
        return extra + int(getattr(self.keywords, "nbytes", 0)) + ITEM_OVERHEAD * len(self.ids)

    @cached_property
    def position(self) -> dict[str, int]:
        """Each id's row (built when asked: only a scope with items lacking a vector needs it)."""
        return {pk: i for i, pk in enumerate(self.ids)}

    def vectors(self, positions: np.ndarray) -> np.ndarray:
        """The float32 vectors of the items at ``positions``."""
        rows = self.matrix[positions].astype(np.float32)
        return rows if self.scales is None else rows * self.scales[positions][:, None]

    def cosines(self, query: np.ndarray) -> np.ndarray:
        """``matrix @ query`` in float32, ``COSINE_BLOCK`` rows widened at a time into one buffer. ``query``:
        one vector, or one vector per column (several statements at once: one row of cosines per item,
        each block of rows widened once for all of them)."""
        query = np.asarray(query, dtype=np.float32)
        if self.scales is None:
            return self.matrix @ query
        query = np.ascontiguousarray(query)
        count = len(self.matrix)
        out = np.empty((count, *query.shape[1:]), dtype=np.float32)
        buffer = np.empty((min(count, COSINE_BLOCK), self.matrix.shape[1]), dtype=np.float32)
        for start in range(0, count, COSINE_BLOCK):
            block = self.matrix[start : start + COSINE_BLOCK]
            wide = buffer[: len(block)]
            np.copyto(wide, block)
            np.matmul(wide, query, out=out[start : start + len(block)])
        out *= self.scales if query.ndim == 1 else self.scales[:, None]
        return out


def _without(values: list, positions: list[int]) -> list:
    """``values`` without the items at ``positions`` (sorted), copied by runs."""
    if not positions:
        return values
    out, start = [], 0
    for at in positions:
        out += values[start:at]
        start = at + 1
    return out + values[start:]


def _with(values: list, positions: list[int], new: list) -> list:
    """``values`` with ``new`` put at ``positions`` (sorted positions of the result), copied by runs."""
    if not positions:
        return values
    out, start = [], 0
    for at, item in zip(positions, new):
        take = at - len(out)
        out += values[start : start + take]
        start += take
        out.append(item)
    return out + values[start:]


class ScopeCache:
    """scope name -> ``ScopeData``, least recently used out first beyond ``max_bytes``."""

    def __init__(self) -> None:
        self._items: OrderedDict[Hashable, ScopeData] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def max_bytes(self) -> int:
        return int(float(settings.MEMORYBOARD_VECTOR_CACHE_MB) * 1024 * 1024)

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable) -> ScopeData | None:
        with self._lock:
            data = self._items.get(key)
            if data is not None:
                self._items.move_to_end(key)
            return data

    def find(self, match: Callable[[Hashable], bool]) -> ScopeData | None:
        """A kept scope whose name ``match`` accepts (the least recently used order is left as it is)."""
        with self._lock:
            return next((data for key, data in self._items.items() if match(key)), None)

    def put(self, key: Hashable, data: ScopeData) -> None:
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
