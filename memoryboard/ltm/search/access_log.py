"""Access statistics of retrieved items, written off the request path.

Every retrieval counts a use of the returned items (``access_count + 1``, ``last_accessed_at``) and
writes one access-log row per item. Done inline, those two writes cost more than the retrieval itself
(a commit, on SQLite an fsync), so they are queued to one background thread per process, which writes
whatever has accumulated in one transaction: one UPDATE per retrieval, one bulk INSERT for all rows.
With ``MEMORYBOARD_TASKS_INLINE`` (the tests) they are written at once, in the caller's thread.

What is queued when a process dies uncleanly is lost: statistics, never memory content.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
import time
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import close_old_connections, connection, connections, transaction

from memoryboard.ltm.store.erase_gate import erase_gate_lock
from memoryboard.models import LongTermMemory, MemoryAccess
from memoryboard.models.namespaces import parse_namespace

logger = logging.getLogger(__name__)

# Retrievals written per transaction at most, and access-log rows per INSERT statement.
MAX_BATCH = 500
INSERT_BATCH = 500
# How long the writer waits for more retrievals after the first one of a batch, and its connection is
# kept between batches (closed on an error, and by CONN_MAX_AGE as a request's is). Writing each
# retrieval alone on a new connection cost 1.58 ms of the writer's CPU per retrieval in
# ``benchmarks/proxy_profile.py`` (one request after another), gathered for 50 ms on one connection
# 0.56 ms: the erase gate, the owners' query and the commit are shared by the batch.
LINGER = 0.05


@dataclass(frozen=True)
class AccessRecord:
    ids: tuple[str, ...]
    relevances: tuple[float, ...]
    agent_id: str
    conversation_id: str
    kind: str
    at: datetime


def write_access_records(records: list[AccessRecord]) -> None:
    """Write retrievals' statistics in one transaction: an UPDATE per retrieval, one multi-row INSERT.

    Plain SQL: this runs for every retrieval, and the ORM's statement building cost several times the
    statements themselves.
    """
    if not records:
        return
    memory_table = LongTermMemory._meta.db_table
    access_table = MemoryAccess._meta.db_table
    adapt = connection.ops.adapt_datetimefield_value
    with transaction.atomic(), connection.cursor() as cursor:
        records = _not_erased(records)
        rows = [
            (memory_id, record.agent_id[:255], record.conversation_id[:255], record.kind, relevance, adapt(record.at))
            for record in records
            for memory_id, relevance in zip(record.ids, record.relevances, strict=True)
        ]
        for record in records:
            placeholders = ", ".join(["%s"] * len(record.ids))
            cursor.execute(
                f"UPDATE {memory_table} SET access_count = access_count + 1, last_accessed_at = %s "
                f"WHERE id IN ({placeholders})",
                [adapt(record.at), *record.ids],
            )
        for start in range(0, len(rows), INSERT_BATCH):
            batch = rows[start : start + INSERT_BATCH]
            values = ", ".join(["(%s, %s, %s, %s, %s, %s)"] * len(batch))
            cursor.execute(
                f"INSERT INTO {access_table} (memory_id, agent_id, conversation_id, kind, relevance, created_at) "
                f"VALUES {values}",
                [value for row in batch for value in row],
            )


def _not_erased(records: list[AccessRecord]) -> list[AccessRecord]:
    """The records whose items still exist and whose owner was not erased after the read (``ltm.store.erase_gate``):
    a read queued before an erase leaves no row after it."""
    wanted = sorted({memory_id for record in records for memory_id in record.ids})
    owners = {}
    for start in range(0, len(wanted), INSERT_BATCH):
        for pk, namespace in LongTermMemory.objects.filter(pk__in=wanted[start : start + INSERT_BATCH]).values_list(
            "pk", "namespace"
        ):
            ns = parse_namespace(namespace)
            owners[pk] = ns.user_id if ns else None
    erased = erase_gate_lock(user_ids=set(owners.values()))
    out = []
    for record in records:
        keep = [(pk, rel) for pk, rel in zip(record.ids, record.relevances, strict=True) if pk in owners
                and not (erased.get(owners[pk]) and erased[owners[pk]] >= record.at)]
        if keep:
            out.append(AccessRecord(ids=tuple(p for p, _ in keep), relevances=tuple(r for _, r in keep),
                                    agent_id=record.agent_id, conversation_id=record.conversation_id,
                                    kind=record.kind, at=record.at))
    return out


class AccessLogWriter:
    """A queue and a daemon thread that drains it in batches (what arrives within ``LINGER`` of the first)."""

    def __init__(self) -> None:
        self._queue: queue.Queue[AccessRecord | threading.Event] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, record: AccessRecord) -> None:
        self._ensure_thread()
        self._queue.put(record)

    def flush(self, timeout: float = 10.0) -> bool:
        """Block until everything queued so far is written; False on timeout."""
        if self._thread is None:
            return True
        done = threading.Event()
        self._queue.put(done)
        return done.wait(timeout)

    def _ensure_thread(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="memoryboard-access-log", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            batch = [first]
            deadline = time.monotonic() + LINGER
            # A flush ends the wait: everything queued before it is written now.
            while len(batch) < MAX_BATCH and not isinstance(batch[-1], threading.Event):
                try:
                    batch.append(self._queue.get(timeout=max(0.0, deadline - time.monotonic())))
                except queue.Empty:
                    break
            records = [item for item in batch if isinstance(item, AccessRecord)]
            try:
                close_old_connections()
                write_access_records(records)
            except Exception:  # noqa: BLE001 - statistics must never take the thread down
                logger.exception("writing %d access record(s) failed", len(records))
                connections.close_all()
            else:
                close_old_connections()  # as after a request: kept for CONN_MAX_AGE
            for item in batch:
                if isinstance(item, threading.Event):
                    item.set()


_writer = AccessLogWriter()
atexit.register(_writer.flush)


def record_access(
    *, ids: list[str], relevances: list[float], agent_id: str, conversation_id: str, kind: str, at: datetime
) -> None:
    """Queue (or, with tasks inline, write) the statistics of one retrieval."""
    record = AccessRecord(tuple(ids), tuple(relevances), agent_id, conversation_id, kind, at)
    if getattr(settings, "MEMORYBOARD_TASKS_INLINE", False):
        write_access_records([record])
    else:
        _writer.submit(record)


def flush_access_log(timeout: float = 10.0) -> bool:
    """Wait until the queued statistics are written (benchmarks, shutdown, tests of the writer)."""
    return _writer.flush(timeout)
