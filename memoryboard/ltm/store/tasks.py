"""Background tasks of the store (Django Tasks API): thin wrappers around its services, and the sweep's schedule.

Items past their ``expiresAt`` are archived (reason ``expired``) two ways, as LangGraph's store sweeps its
TTLs (``sweep_interval_minutes``): every ``MEMORYBOARD_EXPIRY_SWEEP_MINUTES`` by one process of the
deployment (:func:`expiry_sweep_start`, started with each serving or working process), and at once when a
read meets one (:func:`archive_expired_met`). Either way the work is :func:`archive_expired_task`: on the
embedded backend a thread of the process, with ``django_tasks_db`` the ``db_worker``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable

from datetime import datetime

from django.conf import settings
from django.core.cache import caches
from django.db.models import Q, QuerySet
from django.utils import timezone
from django_tasks import task

from memoryboard.ltm.store.change_log import memory_change_prune_now_and_then
from memoryboard.ltm.store.expiry import memory_archive_expired
from memoryboard.ltm.store.schedule import Schedule
from memoryboard.ltm.store.states import current_q, is_past_expiry, past_expiry_q
from memoryboard.models import LongTermMemory

logger = logging.getLogger(__name__)

SWEEP_CACHE_KEY = "memoryboard:expiry-sweep"
EXPIRY_ACTOR = "expiry"  # the audit entries' actor of an archive for expiry


@task()
def archive_expired_task(*, memory_ids: list[str] | None = None) -> int:
    """Archive (reason ``expired``) the items past their expiry: those of ``memory_ids`` (a read met them),
    or every one (the sweep, which also prunes the items' change log). Returns how many were archived;
    safe to run twice."""
    archived = len(memory_archive_expired(dry_run=False, actor=EXPIRY_ACTOR, ids=memory_ids))
    if memory_ids is None:
        memory_change_prune_now_and_then()
    return archived


def archive_expired_met(memory_ids: Iterable[str]) -> None:
    """A read met these items not archived past their expiry: archive them now, by the task (the read itself
    writes nothing; the agent's turn writes only in its commit)."""
    ids = sorted(set(memory_ids))
    if ids:
        archive_expired_task.enqueue(memory_ids=ids)


def archive_expired_among(memories: Iterable[LongTermMemory]) -> None:
    """Of the items a read loaded, archive at once those not archived past their expiry."""
    archive_expired_met(m.pk for m in memories if not m.archived and is_past_expiry(m))


# At most this many items met past their expiry are archived by one read (the sweep does the rest).
MET_MAX = 1_000


def current_items(queryset: QuerySet[LongTermMemory], *, now: datetime | None = None) -> QuerySet[LongTermMemory]:
    """The current items of ``queryset`` (``ltm.store.states.current_q``), for a list of one user's items
    (My memories, MCP ``memory_list``): those of it not archived but past their expiry are left out and
    archived at once (one query over the scope; a list across every user archives what its page loaded,
    :func:`archive_expired_among`)."""
    now = now or timezone.now()
    archive_expired_met(queryset.filter(Q(archived=False) & past_expiry_q(now=now)).order_by()
                        .values_list("pk", flat=True)[:MET_MAX])
    return queryset.filter(current_q(now=now))


def _sweep_interval() -> float:
    return float(settings.MEMORYBOARD_EXPIRY_SWEEP_MINUTES) * 60


def expiry_sweep_due() -> bool:
    """Whether this process runs the sweep now: one process of the deployment per interval, the one that
    first marks it in the shared cache (``CACHES["shared"]``, which every process reads)."""
    seconds = _sweep_interval()
    return seconds > 0 and caches["shared"].add(SWEEP_CACHE_KEY, os.getpid(), timeout=max(1, int(seconds) - 1))


def expiry_sweep_now() -> None:
    """Queue the sweep if it is due (:func:`expiry_sweep_due`)."""
    if expiry_sweep_due():
        archive_expired_task.enqueue()


# Now, then every interval (read at each turn: set to 0, the schedule stops); once per process.
_sweeper = Schedule("expiry-sweep", interval=lambda: _sweep_interval(), turn=lambda: expiry_sweep_now(),
                    failed="queuing the expiry sweep failed")


def expiry_sweep_start() -> None:
    """Start this process's sweep schedule (once per process; nothing when the interval is 0): now, then
    every ``MEMORYBOARD_EXPIRY_SWEEP_MINUTES`` (read at each turn: set to 0, the schedule stops)."""
    _sweeper.start()
