"""The change log of ``ah_long_term_memory`` (``MemoryChange``), kept by the database's triggers for every writer.

A reader keeps a position (:class:`LogPosition`): the last ``seq`` (row id) it has taken in, and the
numbers it saw missing below it. On MariaDB a row's number is given when its transaction inserts it and
seen when it commits, so a transaction still open leaves a gap that fills later: a gap is read again
until it is ``GAP_WAIT`` seconds old (then taken as rolled back), as the HNSW index does with its own log
(``ltm.search.ann``). Rows are read past a position in one query by primary key (:func:`log_rows_past`).

Rows leave the log when pruned (:func:`memory_change_prune`: older than ``KEEP_SECONDS`` or beyond the
newest ``KEEP_ROWS``) or erased with their user (:func:`memory_changes_erase`); either appends a marker
row (``pruned_through``) so that a reader whose position is below it reads everything again.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import connection
from django.db.models import Max, Q
from django.utils import timezone

from memoryboard.models import MemoryChange

# A number missing below a position (its transaction was still open) is looked for this long.
GAP_WAIT = 600.0
GAPS_MAX = 10_000
# A position taken before a full read: the newest rows read to find the numbers missing among them.
START_WINDOW = 2_000
# The log keeps a day of changes and at most this many rows (a bulk decay writes one per item).
KEEP_SECONDS = 24 * 3600
KEEP_ROWS = 200_000
DELETE_CHUNK = 10_000
# The vendors whose migration created the triggers.
LOGGED_VENDORS = ("sqlite", "mysql")


@dataclass(frozen=True)
class LogPosition:
    """The log taken in up to ``seq``, but for ``gaps`` ({seq: when first seen missing})."""

    seq: int = 0
    gaps: dict[int, float] = field(default_factory=dict)


# The triggers that keep it (migration 0023_memory_change_log).
TRIGGERS = tuple(f"{MemoryChange._meta.db_table}_{event}" for event in ("insert", "update", "delete"))
_kept: dict[tuple, bool] = {}


def log_kept() -> bool:
    """Whether this database keeps the log: its triggers are there (looked up once per process and
    database). Without them (another vendor, or a table remade on SQLite by a later migration, which drops
    its triggers) every search reads its candidates in full, as before the log."""
    key = (connection.alias, connection.vendor, str(connection.settings_dict.get("NAME")))
    if key not in _kept:
        _kept[key] = connection.vendor in LOGGED_VENDORS and _triggers_found() == len(TRIGGERS)
    return _kept[key]


def _triggers_found() -> int:
    names = ", ".join(["%s"] * len(TRIGGERS))
    if connection.vendor == "sqlite":
        sql = f"SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name IN ({names})"
    else:
        sql = (f"SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() "
               f"AND TRIGGER_NAME IN ({names})")
    with connection.cursor() as cursor:
        cursor.execute(sql, TRIGGERS)
        return int(cursor.fetchone()[0])


def log_advance(seq: int, gaps: dict[int, float], seen: Iterable[int], now: float, *,
                wait: float = GAP_WAIT, most: int = GAPS_MAX) -> tuple[int, dict[int, float]]:
    """The position ``(seq, gaps)`` after reading the rows numbered ``seen``: the last number read; those
    skipped below it are gaps, kept ``wait`` seconds (a transaction that was still open commits them
    later), at most ``most`` of them (the newest)."""
    seen = set(seen)
    last = max(seen, default=seq)
    kept = {s: first for s, first in gaps.items() if s not in seen and now - first < wait}
    if last > seq:
        missing = [s for s in range(seq + 1, last) if s not in seen]
        kept.update((s, now) for s in missing[-most:])
    if len(kept) > most:
        kept = dict(sorted(kept.items())[-most:])
    return max(last, seq), kept


def log_start() -> LogPosition:
    """The position of a reader about to read everything: the newest row, and the numbers missing among
    the ``START_WINDOW`` newest (transactions still open, whose rows the full read does not see either).
    One query by primary key; taken before the full read."""
    qn = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {qn('id')} FROM {qn(MemoryChange._meta.db_table)} ORDER BY {qn('id')} DESC "
                       f"LIMIT {START_WINDOW}")
        seen = [row[0] for row in cursor.fetchall()]
    if not seen:
        return LogPosition()
    seq, gaps = log_advance(min(seen) - 1, {}, seen, time.time())
    return LogPosition(seq=seq, gaps=gaps)


def log_rows_past(position: LogPosition, limit: int) -> list[tuple[int, str, int | None]]:
    """``(seq, memory id, pruned_through)`` of the rows past ``position`` and of those that appeared in its
    gaps, oldest first, at most ``limit``: one query by primary key."""
    qn = connection.ops.quote_name
    where, params = f"{qn('id')} > %s", [position.seq]
    if position.gaps:
        gaps = sorted(position.gaps)
        where += f" OR {qn('id')} IN ({', '.join(['%s'] * len(gaps))})"
        params += gaps
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {qn('id')}, {qn('memory_id')}, {qn('pruned_through')} FROM "
                       f"{qn(MemoryChange._meta.db_table)} WHERE {where} ORDER BY {qn('id')} LIMIT {int(limit)}", params)
        return list(cursor.fetchall())


def log_moved(position: LogPosition, rows: Sequence[tuple]) -> LogPosition:
    """``position`` after taking in ``rows`` (:func:`log_rows_past`'s)."""
    seq, gaps = log_advance(position.seq, position.gaps, (row[0] for row in rows), time.time())
    return LogPosition(seq=seq, gaps=gaps)


def log_pruned_past(rows: Sequence[tuple], position: LogPosition) -> bool:
    """Whether rows the reader has not taken in were deleted (a marker past its position)."""
    return any(through is not None and through > position.seq for _seq, _memory_id, through in rows)


def _mark_deleted(through: int) -> None:
    """One marker for every deletion so far: through the highest number any marker named."""
    markers = MemoryChange.objects.filter(pruned_through__isnull=False)
    through = max(through, markers.aggregate(most=Max("pruned_through"))["most"] or 0)
    markers.delete()
    MemoryChange.objects.create(pruned_through=through)


def memory_change_prune(*, now=None) -> int:
    """Delete the log's rows older than ``KEEP_SECONDS`` or beyond the newest ``KEEP_ROWS`` (a bulk decay
    writes a row per item), then mark how far: a reader behind that reads in full. Returns the rows
    deleted."""
    now = now or timezone.now()
    last = MemoryChange.objects.order_by("-id").values_list("id", flat=True).first() or 0
    old = (MemoryChange.objects.filter(created_at__lt=now - timedelta(seconds=KEEP_SECONDS))
           .order_by("-id").values_list("id", flat=True).first() or 0)
    through = max(old, last - KEEP_ROWS)
    doomed = MemoryChange.objects.filter(id__lte=through, pruned_through__isnull=True)
    deleted = 0
    while through > 0:
        ids = list(doomed.order_by("id").values_list("id", flat=True)[:DELETE_CHUNK])
        if not ids:
            break
        deleted += MemoryChange.objects.filter(id__in=ids).delete()[0]
    if deleted:
        _mark_deleted(through)
    return deleted


_last_prune = {"at": 0.0}
PRUNE_EVERY = 600.0


def memory_change_prune_now_and_then() -> int:
    """:func:`memory_change_prune` at most every ``PRUNE_EVERY`` seconds per process."""
    if _last_prune["at"] and time.monotonic() - _last_prune["at"] < PRUNE_EVERY:
        return 0
    _last_prune["at"] = time.monotonic()
    return memory_change_prune()


def memory_changes_erase(*, namespaces: Q) -> int:
    """Delete the log rows of a user's items (``namespaces``: a filter on ``namespace``, e.g.
    ``selectors.user_namespaces_q``), in the erase's transaction, after the items (their deletion writes
    rows too); a marker then sends every reader behind them to a full read."""
    doomed = MemoryChange.objects.filter(namespaces, pruned_through__isnull=True)
    through = doomed.aggregate(most=Max("id"))["most"]
    if through is None:
        return 0
    deleted = doomed.delete()[0]
    _mark_deleted(through)
    return deleted
