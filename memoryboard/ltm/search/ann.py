"""The HNSW index of large scopes (staff search across every user), one per embedding model and host (``usearch``).

Per-user scopes are searched exactly (``ltm.search.retrieval``); a scope larger than ``retrieval.EXACT_MAX``
asks this index for candidates, which the search then filters by the caller's queryset and state
(archived, paused) exactly as exact search does, and re-ranks with the one scoring function.

The database is the one source of truth; each host's file is derived from it and follows it:

- Keys are the ``memoryboard_embedding`` row ids (an item keeps its row when re-embedded).
- Every change of an indexed model's vectors or item states is appended to the change log
  (``memoryboard_ann_change``, ``AnnChange``) in the writer's own transaction. No host consumes it.
- Each host (one ``MEMORYBOARD_ANN_DIR``) keeps one file per model and, beside it, a position file
  (``<model>.usearch.json``): the last log ``seq`` the file contains, the sequence numbers seen missing
  below it (transactions still open when it read), and the file's size and CRC-32.
- A host follows the log (:func:`ann_follow`): it reads the rows past its position (one query by primary
  key), re-reads those items' current vectors and states, changes the index, and replaces the file and
  then the position file. The worker task runs it after each write's commit on the worker's host; each
  web process runs it on a background thread every ``MEMORYBOARD_ANN_FOLLOW_SECONDS``, and at once when a
  search sees a removal past the position. A host without a file, with a broken one, or whose position the log was
  pruned past, rebuilds from the database, then follows.
- A search never waits for a writer: it reads the last verified file (memory-mapped, shared by the
  processes of the host) and scores the items of the log rows past that file's position exactly, so a
  write on any host is found on every host as soon as it is committed.
- Removing a key from a usearch index only marks its slot; the int8 vector stays in the file. Every
  removal here fills the freed slots with filler vectors before saving (:func:`_remove`), so a
  removed vector is gone from the file written next; an erase does it on this host before it returns
  (:func:`ann_erase`) and every other host does it when it follows the erase's ``remove`` rows.
- A file that is empty, truncated or corrupt (its size or CRC differ from the position file, or usearch
  refuses it) is logged and moved aside (``<model>.usearch.broken``); searches are exact until the
  follower has rebuilt it. A usearch index with a damaged graph can crash the process that searches it,
  hence the checksum before a file is opened.
"""

from __future__ import annotations

import fcntl
import json
import logging
import mmap
import os
import re
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import close_old_connections, connection
from django.db.models import Max, Q
from django.utils import timezone
from usearch.index import Index

from memoryboard.ltm.store.change_log import log_advance
from memoryboard.ltm.store.rehearsal import is_rehearsal
from memoryboard.models import AnnChange, LongTermMemory, MemoryEmbedding

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

# Log rows read, and items looked up, per query by a follower.
CHANGE_CHUNK = 1_000
# At most this many log rows past a file's position are scored exactly by a search; more, and the
# search is exact over the scope until the follower has caught up (a bulk import, a host far behind).
DELTA_MAX = 2_000
# A sequence number missing below a position (its transaction was still open) is looked for this long.
GAP_WAIT = 600.0
GAPS_MAX = 10_000
# The log is pruned of rows older than this or beyond this many (each model's newest row stays).
LOG_KEEP_SECONDS = 7 * 24 * 3600
LOG_KEEP_ROWS = 1_000_000
# How long an erase waits for this host's writer (a rebuild) before leaving its removal to that writer,
# which applies the erase's log rows when it finishes.
ERASE_WAIT = 30.0
# Keys of the filler vectors written over freed slots (embedding row ids never come near).
FILLER_KEY = 2**63
# Fillers take the slots of removed vectors until new vectors do; beyond a quarter of the index (and this
# many) the follower rebuilds it.
FILLERS_MIN = 10_000

_view_lock = threading.Lock()
_writer_locks: dict[str, threading.Lock] = {}
_writer_locks_guard = threading.Lock()
# path -> (file signature, position file mtime, index, position)
_views: dict[str, tuple[tuple, int, object, "Position"]] = {}


@dataclass
class Position:
    """What a host's index file contains: the log up to ``seq`` except ``gaps`` ({seq: first seen}), and
    the file's ``size`` and ``crc`` (CRC-32) as written."""

    seq: int = 0
    gaps: dict[int, float] = field(default_factory=dict)
    size: int = -1
    crc: int = -1


def _stem(model_name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", model_name)


def index_path(model_name: str) -> Path:
    return Path(settings.MEMORYBOARD_ANN_DIR) / f"{_stem(model_name)}.usearch"


def position_path(model_name: str) -> Path:
    return Path(settings.MEMORYBOARD_ANN_DIR) / f"{_stem(model_name)}.usearch.json"


def broken_path(model_name: str) -> Path:
    return Path(settings.MEMORYBOARD_ANN_DIR) / f"{_stem(model_name)}.usearch.broken"


def _lock_path(model_name: str) -> Path:
    return Path(settings.MEMORYBOARD_ANN_DIR) / f"{_stem(model_name)}.lock"


def ann_indexed(model_name: str) -> bool:
    """Whether the model is indexed on some host: its change log has a row (one indexed query)."""
    return AnnChange.objects.filter(model_name=model_name).exists()


def _new_index(dim: int):
    return Index(ndim=dim, metric="cos", dtype=STORED_DTYPE, connectivity=CONNECTIVITY,
                 expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)


# --- the files of one host ---------------------------------------------------------------------------


def _digest(path: Path) -> tuple[int, int]:
    """The file's size and CRC-32 (memory-mapped, ~3 GB/s)."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            return 0, 0
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            return size, zlib.crc32(mapped)


def _read_position(model_name: str) -> Position | None:
    try:
        data = json.loads(position_path(model_name).read_text())
        return Position(seq=int(data["seq"]), gaps={int(k): float(v) for k, v in data.get("gaps", {}).items()},
                        size=int(data["size"]), crc=int(data["crc"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _write_position(model_name: str, position: Position) -> None:
    path = position_path(model_name)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}.{threading.get_ident()}")
    tmp.write_text(json.dumps({"seq": position.seq, "gaps": {str(k): v for k, v in position.gaps.items()},
                               "size": position.size, "crc": position.crc}))
    os.replace(tmp, path)


def _save(index, model_name: str, position: Position) -> None:
    """Replace the file, then its position file: a reader between the two sees them disagree while the
    writer's lock is held, and keeps its previous view."""
    path = index_path(model_name)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}.{threading.get_ident()}")
    try:
        index.save(str(tmp))
        position.size, position.crc = _digest(tmp)
        os.replace(tmp, path)  # readers keep the old mapping until they see the new file
    finally:
        tmp.unlink(missing_ok=True)
    _write_position(model_name, position)


def _remove_files(model_name: str) -> None:
    for path in (index_path(model_name), position_path(model_name), broken_path(model_name)):
        path.unlink(missing_ok=True)


@contextmanager
def _writer(model_name: str, *, timeout: float | None = None) -> Iterator[bool]:
    """One writer of the model's files per host at a time: across threads (a lock per model) and
    processes (an exclusive ``flock`` on ``<model>.lock``). Yields whether the lock was taken (always,
    without ``timeout``; ``timeout=0`` only tries)."""
    with _writer_locks_guard:
        lock = _writer_locks.setdefault(model_name, threading.Lock())
    deadline = None if timeout is None else time.monotonic() + timeout
    if not lock.acquire(timeout=-1 if timeout is None else max(0.0, timeout)):
        yield False
        return
    try:
        path = _lock_path(model_name)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as handle:
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | (fcntl.LOCK_NB if deadline is not None else 0))
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        yield False
                        return
                    time.sleep(0.05)
            try:
                yield True
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        lock.release()


def _set_aside(model_name: str, why: str) -> None:
    """Move an unreadable file aside (one kept, for the operator) and drop its position: searches are
    exact until the follower has rebuilt it."""
    path = index_path(model_name)
    logger.error("HNSW index %s is unreadable (%s): moved aside to %s; exact search until it is rebuilt",
                 path, why, broken_path(model_name))
    try:
        os.replace(path, broken_path(model_name))
    except FileNotFoundError:
        pass
    position_path(model_name).unlink(missing_ok=True)


def _verified(model_name: str, path: Path) -> tuple[Position | None, str]:
    position = _read_position(model_name)
    if position is None:
        return None, "no position file"
    size, crc = _digest(path)
    if (size, crc) != (position.size, position.crc):
        return None, f"size {size} and CRC {crc} differ from the position file's {position.size} and {position.crc}"
    return position, ""


def _snapshot(model_name: str):
    """This process's memory-mapped view of the host's last verified file of the model and its position,
    ``(None, None)`` without one. Never waits for a writer: a file being replaced is read once the
    writer has written its position file; until then the previous view serves."""
    path = index_path(model_name)
    try:
        stat = path.stat()
        position_mtime = position_path(model_name).stat().st_mtime_ns
    except FileNotFoundError:
        stat, position_mtime = None, 0
    key = str(path)
    cached = _views.get(key)
    if stat is None:
        if path.exists():  # a writer between its two files
            return (cached[2], cached[3]) if cached else (None, None)
        _views.pop(key, None)
        return None, None
    signature = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
    if cached is not None and cached[0] == signature and cached[1] == position_mtime:
        return cached[2], cached[3]
    # One search per process verifies a new file (its CRC: ~0.3 s at 1M items); the others meanwhile
    # search the previous one.
    if not _view_lock.acquire(blocking=cached is None):
        return cached[2], cached[3]
    try:
        return _open_snapshot(model_name, path, key, signature, position_mtime)
    finally:
        _view_lock.release()


def _open_snapshot(model_name: str, path: Path, key: str, signature: tuple, position_mtime: int):
    cached = _views.get(key)
    if cached is not None and cached[0] == signature:
        position = _read_position(model_name)
        if position is not None and (position.size, position.crc) == (cached[3].size, cached[3].crc):
            _views[key] = (signature, position_mtime, cached[2], position)  # the follower moved on
            return cached[2], position
    position, why = _verified(model_name, path)
    index = None
    if position is not None:
        try:
            index = Index.restore(str(path), view=True)
            if index is None:
                why = "not a usearch index"
        except Exception as error:  # usearch raises ValueError or RuntimeError on bad files
            why = f"usearch: {error}"
            index = None
    if index is None:
        with _writer(model_name, timeout=0) as alone:
            if not alone:  # the writer is replacing the files: keep the previous view meanwhile
                return (cached[2], cached[3]) if cached else (None, None)
            position, why = (None, "missing") if not path.exists() else _verified(model_name, path)
            if position is None and path.exists():
                _set_aside(model_name, why)
            _views.pop(key, None)
        return None, None
    index.expansion_search = EXPANSION_SEARCH
    _views[key] = (signature, position_mtime, index, position)
    return index, position


def _load(model_name: str):
    """The model's file loaded in memory to be changed, with its position, or ``(None, None)`` when there
    is none or it is unreadable (then moved aside). The caller holds the writer's lock."""
    path = index_path(model_name)
    if not path.exists():
        return None, None
    position, why = _verified(model_name, path)
    if position is not None:
        try:
            index = Index.restore(str(path), view=False)
            if index is not None:
                return index, position
            why = "not a usearch index"
        except Exception as error:
            why = f"usearch: {error}"
    _set_aside(model_name, why)
    return None, None


# --- the change log ----------------------------------------------------------------------------------


def ann_log(*, model_name: str, changes: Sequence[tuple[str, str, int | None]]) -> None:
    """Append ``(op, memory id, embedding id or None)`` rows to the change log of ``model_name``, in the
    caller's transaction. The caller checked :func:`ann_indexed`."""
    AnnChange.objects.bulk_create(
        [AnnChange(model_name=model_name, op=op, memory_id=memory_id or "", embedding_id=key)
         for op, memory_id, key in changes], batch_size=CHANGE_CHUNK)


def _last_seq() -> int:
    return AnnChange.objects.order_by("-id").values_list("id", flat=True).first() or 0


def _changes_past(position: Position, limit: int, *, gaps: bool = True) -> list[tuple[int, str, str, str, int | None]]:
    """The log rows past ``position`` (every model's: the sequence is shared), and with ``gaps`` those
    that appeared in its gaps, oldest first, at most ``limit``: one query by primary key."""
    past = Q(id__gt=position.seq)
    if gaps and position.gaps:
        past |= Q(id__in=sorted(position.gaps))
    return list(AnnChange.objects.filter(past).order_by("id")
                .values_list("id", "model_name", "op", "memory_id", "embedding_id")[:limit])


def _pruned_past(rows, position: Position) -> bool:
    return any(op == "pruned" and (key or 0) > position.seq for _seq, _model, op, _memory, key in rows)


def _advance(position: Position, rows, now: float) -> Position:
    """The position after applying ``rows``: the last seq read; numbers skipped below it are gaps, kept
    ``GAP_WAIT`` seconds (a transaction that was still open commits them later)."""
    seq, gaps = log_advance(position.seq, position.gaps, (seq for seq, *_rest in rows), now,
                            wait=GAP_WAIT, most=GAPS_MAX)
    return Position(seq=seq, gaps=gaps, size=position.size, crc=position.crc)


def ann_log_prune(*, now=None) -> int:
    """Delete log rows older than ``LOG_KEEP_SECONDS`` or beyond the newest ``LOG_KEEP_ROWS`` (each model's
    newest row stays: it marks the model as indexed), then append a ``pruned`` row naming the last seq
    deleted: a host whose position is below it rebuilds. Returns the rows deleted."""
    now = now or timezone.now()
    last = _last_seq()
    old = (AnnChange.objects.filter(created_at__lt=now - timedelta(seconds=LOG_KEEP_SECONDS))
           .order_by("-id").values_list("id", flat=True).first() or 0)
    through = max(old, last - LOG_KEEP_ROWS)
    if through <= 0 or not AnnChange.objects.filter(id__lte=through).exclude(op=AnnChange.Op.PRUNED).exists():
        return 0
    keep = set(AnnChange.objects.values("model_name").annotate(newest=Max("id")).values_list("newest", flat=True))
    doomed = AnnChange.objects.filter(id__lte=through).exclude(id__in=keep)
    deleted = 0
    while True:
        ids = list(doomed.order_by("id").values_list("id", flat=True)[:CHANGE_CHUNK * 10])
        if not ids:
            break
        deleted += AnnChange.objects.filter(id__in=ids).delete()[0]
    AnnChange.objects.filter(op=AnnChange.Op.PRUNED).delete()  # the new marker supersedes them
    AnnChange.objects.create(model_name="", op=AnnChange.Op.PRUNED, embedding_id=through)
    return deleted


_last_prune = {"at": 0.0}
PRUNE_EVERY = 600.0


def ann_log_prune_now_and_then() -> int:
    """:func:`ann_log_prune` at most every ``PRUNE_EVERY`` seconds per process (the worker's task)."""
    if time.monotonic() - _last_prune["at"] < PRUNE_EVERY and _last_prune["at"]:
        return 0
    _last_prune["at"] = time.monotonic()
    return ann_log_prune()


# --- changing an index ------------------------------------------------------------------------------


def _vectors(rows: Sequence[tuple[int, bytes]], dim: int) -> tuple[np.ndarray, np.ndarray]:
    good = [(key, blob) for key, blob in rows if blob is not None and len(blob) == dim * 4]
    keys = np.fromiter((key for key, _blob in good), dtype=np.uint64, count=len(good))
    matrix = np.frombuffer(b"".join(blob for _key, blob in good), dtype=np.float32).reshape(len(good), dim)
    return keys, matrix


def _archived(memory_ids: Sequence[str]) -> set[str]:
    """Which of these items are archived (one query by primary key)."""
    if not memory_ids:
        return set()
    return set(LongTermMemory.objects.filter(pk__in=list(set(memory_ids)), archived=True)
               .values_list("pk", flat=True))


def _fillers(index) -> np.ndarray:
    keys = np.asarray(index.keys, dtype=np.uint64)
    return keys[keys >= FILLER_KEY]


def _settled(index) -> bool:
    """Every slot of the index holds a live vector (no slot freed by a removal keeps its old bytes)."""
    return int(index.stats.nodes) == len(index)


def _remove(index, keys) -> bool:
    """Remove these keys (those present) and overwrite their slots: usearch's ``remove`` only marks a slot
    free, its vector stays in the file; a vector added next takes a free slot first. So as many filler
    vectors (random, no data, keys from ``FILLER_KEY``) are added at once; they stay in the index (the
    search skips their keys) until real vectors take their slots (:func:`_add`). Returns False when
    usearch left a slot free (the caller rebuilds the file)."""
    present = [int(key) for key in keys if int(key) in index]
    if not present:
        return True
    index.remove(np.asarray(present, dtype=np.uint64))
    fillers = _fillers(index)
    start = int(fillers.max()) + 1 if len(fillers) else FILLER_KEY
    index.add(np.arange(start, start + len(present), dtype=np.uint64),
              np.random.default_rng(start % 2**32).standard_normal((len(present), index.ndim), dtype=np.float32))
    return _settled(index)


def _add(index, keys: np.ndarray, matrix: np.ndarray) -> bool:
    """Add vectors into the slots of fillers first (which hold no data), then new slots."""
    fillers = _fillers(index)[: len(keys)]
    if len(fillers):
        index.remove(fillers)
    if len(keys):
        index.add(keys, matrix)
    return _settled(index)


def _apply(index, model_name: str, memory_ids: Sequence[str], removed: Sequence[int]) -> tuple[int, bool]:
    """Bring ``index`` up to date for these items (their current vectors of the model and states: the
    vectors of items not archived are added or replaced, the others removed) and remove the keys
    ``removed`` of items that have no vector any more. Returns (vectors changed, slots scrubbed)."""
    rows = []
    ids = sorted(set(memory_ids))
    for start in range(0, len(ids), CHANGE_CHUNK):
        rows += [(key, memory_id, bytes(blob)) for key, memory_id, blob in MemoryEmbedding.objects.filter(
            memory_id__in=ids[start:start + CHANGE_CHUNK], model_name=model_name).values_list(
            "id", "memory_id", "vector")]
    archived = _archived([memory_id for _key, memory_id, _blob in rows])
    keep = [(key, blob) for key, memory_id, blob in rows if memory_id not in archived]
    current = {key for key, _memory_id, _blob in rows}
    gone = [key for key, memory_id, _blob in rows if memory_id in archived]
    gone += [key for key in removed if key not in current]
    keys, matrix = _vectors(keep, index.ndim)
    out = [key for key in gone + keys.tolist() if key in index]
    scrubbed = _remove(index, out) and _add(index, keys, matrix)
    return len(keys) + len([key for key in gone if key in out]), scrubbed


def _catch_up(index, position: Position, model_name: str, *, save: bool, built: bool = False) -> tuple[int, bool]:
    """Apply the log past ``position`` to ``index`` and save it (when ``save`` or anything changed; else
    the position file alone when it moved). Returns (vectors changed, whether the file is current); not
    current: the log was pruned past the position, or a removal could not be scrubbed in place; the caller
    rebuilds."""
    changed, moved_on = 0, False
    while True:
        rows = _changes_past(position, CHANGE_CHUNK)
        if _pruned_past(rows, position) and not built:  # a build read everything before its replay
            return changed, False
        mine = [row for row in rows if row[1] == model_name]
        if mine:
            memory_ids = [memory_id for _seq, _model, op, memory_id, _key in mine if memory_id]
            removed = [key for _seq, _model, op, _memory_id, key in mine if op == "remove" and key is not None]
            count, scrubbed = _apply(index, model_name, memory_ids, removed)
            if not scrubbed:
                return changed, False
            changed += count
            save = save or count > 0
        moved = _advance(position, rows, time.time())
        if (moved.seq, moved.gaps) == (position.seq, position.gaps):
            break
        position, moved_on = moved, True
        if len(rows) < CHANGE_CHUNK:
            break
    if save:
        _save(index, model_name, position)
    elif moved_on:
        _write_position(model_name, position)
    return changed, True


def _stored_vectors(model_name: str, dim: int, skip: set[str]):
    """The model's stored vectors in chunks of ``BUILD_BATCH`` rows, by row id (keyset pagination, the
    ORM's SQL read without its per-value converters): ``(rows read, keys, float32 matrix)``, leaving out
    the items in ``skip`` and vectors of another size."""
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


def _recent_floor(start: int) -> int:
    """The first seq of the rows logged in the last ``GAP_WAIT`` seconds before ``start`` (``start`` without)."""
    return (AnnChange.objects.filter(id__lt=start, created_at__gte=timezone.now() - timedelta(seconds=GAP_WAIT))
            .order_by("id").values_list("id", flat=True).first() or start)


def _model_dim(model_name: str) -> int | None:
    return MemoryEmbedding.objects.filter(model_name=model_name).values_list("dim", flat=True).first()


def _build(model_name: str, dim: int | None, *, on_batch: Callable[[int], None] | None = None,
           threads: int = 0) -> int:
    """Build the model's index on this host from the stored vectors of its items not archived, then apply
    the log from just before the read, and save. The caller holds the writer's lock."""
    dim = dim or _model_dim(model_name)
    if not dim:
        return 0
    # The model is indexed from now on: writers log its changes; this row's seq is where the read starts.
    start = AnnChange.objects.create(model_name=model_name, op=AnnChange.Op.BUILD).pk
    index = _new_index(int(dim))
    archived = set(LongTermMemory.objects.filter(archived=True).values_list("pk", flat=True))
    done = 0
    with ThreadPoolExecutor(max_workers=1) as adder:
        pending = None
        for read, keys, matrix in _stored_vectors(model_name, int(dim), archived):
            if pending is not None:
                pending.result()
            if len(keys):
                pending = adder.submit(index.add, keys, matrix, threads=threads)
            done += len(keys)
            if on_batch is not None:
                on_batch(read)
        if pending is not None:
            pending.result()
    # Rows just before the read may belong to transactions that commit after it: the rows of the last
    # GAP_WAIT seconds are applied again (idempotent), and the numbers missing among them are gaps.
    _catch_up(index, Position(seq=_recent_floor(start) - 1), model_name, save=True, built=True)
    broken_path(model_name).unlink(missing_ok=True)
    return done


def ann_rebuild(*, model_name: str, dim: int, on_batch: Callable[[int], None] | None = None,
                threads: int = 0) -> int:
    """Build this host's index of the model from the stored vectors of its items not archived; replace the
    file. Marks the model as indexed (a ``build`` row), so every write from now on is logged.

    The database is read in large chunks while the previous chunk is being added (``Index.add`` runs
    on every core and releases the GIL); the archived items are read once (their index by state), not
    looked up per vector. Searches meanwhile read the previous file. Figures in benchmarks/README.md
    § Staff search.

    Returns:
        The number of vectors indexed.
    """
    with _writer(model_name):
        return _build(model_name, dim, on_batch=on_batch, threads=threads)


def ann_rebuild_count(*, model_name: str) -> int:
    return MemoryEmbedding.objects.filter(model_name=model_name).count()


def ann_follow(*, model_name: str, dim: int | None = None, wait: bool = True, build_missing: bool = True) -> int | None:
    """Bring this host's index of the model up to the change log: apply the rows past its position, or
    build it when the host has none (a new host), it is unreadable, or the log was pruned past it, or
    filler vectors have come to fill a quarter of it. Nothing without a log of the model and no file here.

    Args:
        wait: wait for another writer of this host; otherwise return ``None`` at once if there is one.
        build_missing: build the index when this host has no file (a web host: yes; the worker's task:
            no, a worker host that serves no search keeps no index unless one was built there).

    Returns:
        The number of vectors changed (a build: indexed); ``None`` when another writer held the lock.
    """
    with _writer(model_name, timeout=None if wait else 0) as alone:
        if not alone:
            return None
        local = index_path(model_name).exists() or broken_path(model_name).exists()
        if not local and (not build_missing or not ann_indexed(model_name)):
            return 0
        if dim is None and not broken_path(model_name).exists():
            # Nothing logged past this host's position (nor in its gaps): the file is current and is not
            # even loaded. Loading and checking it to find nothing cost the worker's tasks ~80 ms each at
            # 100,000 items (benchmarks/ann_updates.py: 49 of 50 tasks, 3.98 s of CPU in all) and ~1 s each
            # at 1M; a search still checks the file before it reads it.
            known = _read_position(model_name)
            now = time.time()
            if (known is not None and all(now - first < GAP_WAIT for first in known.gaps.values())
                    and not _changes_past(known, 1)):
                return 0  # (a gap given up is dropped below, with a new position)
        index, position = _load(model_name)
        if index is not None and (dim is None or index.ndim == dim):
            changed, current = _catch_up(index, position, model_name, save=False)
            if current and len(_fillers(index)) <= max(FILLERS_MIN, len(index) // 4):
                return changed
            logger.warning("HNSW index %s is behind the pruned change log, could not be scrubbed in place or is "
                           "a quarter filler vectors: rebuilding", index_path(model_name))
        return _build(model_name, dim)


def ann_erase(*, vectors: Sequence[tuple[str, str, int]]) -> None:
    """Take these ``(model, memory id, embedding id)`` vectors out of every host's index: log their removal
    (the caller's transaction; every host scrubs them when it follows) and scrub them from this host's
    files now. Never fails because of the index: a file that cannot be read is deleted (it cannot be
    rewritten without them; the follower rebuilds), and a writer busy beyond ``ERASE_WAIT`` (a rebuild)
    applies the logged removal when it finishes."""
    by_model: dict[str, list[tuple[str, int]]] = {}
    for model_name, memory_id, key in vectors:
        by_model.setdefault(model_name, []).append((memory_id, key))
    for model_name, items in sorted(by_model.items()):
        if ann_indexed(model_name):
            ann_log(model_name=model_name, changes=[("remove", memory_id, key) for memory_id, key in items])
        if is_rehearsal():  # a preview's erase: its log rows roll back, the files stay as they are
            continue
        try:
            _erase_here(model_name, [key for _memory_id, key in items])
        except Exception:
            logger.exception("HNSW index %s: the erased vectors could not be scrubbed; deleting the file",
                             index_path(model_name))
            _remove_files(model_name)


def _erase_here(model_name: str, keys: list[int]) -> None:
    broken_path(model_name).unlink(missing_ok=True)  # may hold the vectors; it is never read again
    if not index_path(model_name).exists():
        return
    with _writer(model_name, timeout=ERASE_WAIT) as alone:
        if not alone:
            logger.warning("HNSW index %s: a writer is busy; it removes the erased vectors when it follows the log",
                           index_path(model_name))
            return
        index, position = _load(model_name)
        if index is None:
            _remove_files(model_name)  # set aside as unreadable: it goes, the follower rebuilds
            return
        present = [key for key in keys if key in index]
        if not present:
            return
        if _remove(index, present):
            _save(index, model_name, position)  # same position: the log rows are applied by then
        else:
            _remove_files(model_name)


# --- searching ---------------------------------------------------------------------------------------


def ann_candidates(*, model_name: str, dim: int, vector: np.ndarray, count: int) -> list[int] | None:
    """The keys (``memoryboard_embedding`` row ids) of the vectors nearest to ``vector``, nearest first,
    then those written since the host's file (scored exactly by the caller); ``None`` when the search must
    be exact: no usable file here, the file is too far behind the log, or the index failed in any way
    (logged: a slower search, never a failed one)."""
    try:
        return _candidates(model_name, dim, vector, count)
    except Exception:
        logger.exception("HNSW index %s failed: exact search", index_path(model_name))
        return None


def _candidates(model_name: str, dim: int, vector: np.ndarray, count: int) -> list[int] | None:
    ann_wait_for_start()
    if not settings.MEMORYBOARD_ANN_FOLLOW_SECONDS:
        ann_follow(model_name=model_name, dim=dim, wait=False)  # tests and single-process setups: follow now
    index, position = _snapshot(model_name)
    if index is None or index.ndim != dim:
        _kick(model_name, dim, now=True)
        return None
    # Past the position only (one range query): a row committed late into a gap reaches the search
    # when the follower applies it.
    rows = _changes_past(position, DELTA_MAX + 1, gaps=False)
    if rows:
        # Removals (their bytes must leave the file) and a long delta now; other changes at the next turn:
        # the search scores them exactly meanwhile, and the file is not rewritten after every write.
        _kick(model_name, dim, now=len(rows) > DELTA_MAX // 2 or any(op == "remove" for _s, _m, op, _i, _k in rows))
    if len(rows) > DELTA_MAX or _pruned_past(rows, position):
        logger.warning("HNSW index %s is behind the change log: exact search until it catches up",
                       index_path(model_name))
        return None
    keys = [key for key in index.search(np.asarray(vector, dtype=np.float32), count=min(count, len(index)))
            .keys.tolist() if key < FILLER_KEY] if len(index) else []
    recent = {memory_id for _seq, model, _op, memory_id, _key in rows if model == model_name and memory_id}
    if recent:
        seen = set(keys)
        keys += [key for key in MemoryEmbedding.objects.filter(model_name=model_name, memory_id__in=sorted(recent))
                 .values_list("id", flat=True) if key not in seen]
    return keys if keys or len(index) else None


# --- the follower thread of a process ---------------------------------------------------------------

_follower: dict[str, object] = {"pid": None, "thread": None, "turned": None}
_followed: dict[str, int | None] = {}
_wake = threading.Event()
# How long a process's first staff search waits for its follower's first turn (the log applied to the
# host's files since the process started); a rebuild takes longer: the search is then exact meanwhile.
START_WAIT = 10.0


def _kick(model_name: str | None, dim: int | None = None, *, now: bool = False) -> None:
    """Start this process's follower (it looks at the log at once, then every
    ``MEMORYBOARD_ANN_FOLLOW_SECONDS``), following ``model_name`` too; ``now``: wake it at once."""
    seconds = float(settings.MEMORYBOARD_ANN_FOLLOW_SECONDS)
    if seconds <= 0:
        return
    if model_name:
        _followed.setdefault(model_name, dim)
    thread = _follower["thread"]
    if _follower["pid"] != os.getpid() or thread is None or not thread.is_alive():  # first use, or forked
        turned = threading.Event()
        thread = threading.Thread(target=_follow_forever, args=(seconds, turned), name="ann-follower", daemon=True)
        _follower.update(pid=os.getpid(), thread=thread, turned=turned)
        thread.start()
    if now:
        _wake.set()


def ann_follow_start() -> None:
    """Start this process's follower when the process starts (``memoryboard.background``), not at its first
    write or index search: an idle host scrubs an erase's vectors within ``MEMORYBOARD_ANN_FOLLOW_SECONDS``,
    and a host started after changes applies them at once. It follows every model this host has a file of
    (found by itself at each turn) and those its process writes or searches."""
    _kick(None)


def ann_follow_in_background(*, model_name: str) -> None:
    """Start this process's follower for the model (writers call it: a process that writes follows, at
    its next turn)."""
    _kick(model_name)


def ann_wait_for_start(timeout: float = START_WAIT) -> None:
    """Before this process's first staff search: wait (at most ``timeout``) for its follower's first turn, so
    the host's files hold the changes logged before the process started. At once when there is no follower
    or it has turned already."""
    turned = _follower["turned"]
    if _follower["pid"] == os.getpid() and isinstance(turned, threading.Event) and not turned.is_set():
        turned.wait(timeout)


def _models_here() -> None:
    """Follow every model of which this host has a file (an index or one set aside), as the log names it."""
    directory = Path(settings.MEMORYBOARD_ANN_DIR)
    try:
        stems = {path.name.rsplit(".usearch", 1)[0] for path in directory.iterdir()
                 if path.name.endswith((".usearch", ".usearch.broken"))}
    except OSError:  # no directory yet: no file
        return
    if not stems - {_stem(name) for name in _followed}:
        return
    for name in AnnChange.objects.exclude(model_name="").order_by().values_list("model_name", flat=True).distinct():
        if _stem(name) in stems:
            _followed.setdefault(name, None)


def _follow_forever(seconds: float, turned: threading.Event) -> None:
    while True:
        try:
            _models_here()
        except Exception:
            logger.exception("finding the HNSW index files of this host failed")
        for model_name, dim in list(_followed.items()):
            try:
                ann_follow(model_name=model_name, dim=dim, wait=False)
                # Map the new file and let go of the replaced one (unlinked, it may still hold removed
                # vectors) even in a process that does not search.
                _snapshot(model_name)
            except Exception:
                logger.exception("following the HNSW index change log of %s failed", model_name)
            finally:
                close_old_connections()
        close_old_connections()
        turned.set()
        _wake.wait(seconds)
        _wake.clear()
