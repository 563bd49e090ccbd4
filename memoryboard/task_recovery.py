"""Tasks outlive their workers: a task left RUNNING by a worker that died is retried or marked failed.

django-tasks-db (0.13) leaves such a task RUNNING for ever (its issue #46; the "worker pings" pull
request #133 was closed unmerged), so memoryboard adds what it lacks, outside the package:

- ``manage.py tasks_worker`` is ``db_worker`` plus a thread that writes the worker's heartbeat
  (:class:`~memoryboard.models.WorkerHeartbeat`) every ``MEMORYBOARD_WORKER_HEARTBEAT_SECONDS`` and runs
  :func:`tasks_recover` every minute;
- :func:`tasks_recover` finds RUNNING tasks whose worker has not beaten for ``MEMORYBOARD_WORKER_LOST_SECONDS``
  (or, for a worker that never beat, a plain ``db_worker``, that started longer than
  ``MEMORYBOARD_TASK_STALE_SECONDS`` ago). A task that is safe to run again (the extraction, whose items
  have ids derived from the turn, and the index update) goes back to READY, at most
  ``MAX_ATTEMPTS`` runs in all; any other, or one out of attempts, is marked FAILED with
  :class:`WorkerLost` as its error, which the support pages list.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta

from django.apps import apps
from django.conf import settings
from django.db import close_old_connections, connection, connections, transaction
from django.utils import timezone
from django_tasks.base import TaskResultStatus

from memoryboard.models import WorkerHeartbeat

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
RECOVER_EVERY_SECONDS = 60
# The extraction task as the task table names it (``ltm.write.tasks``). Rows written before it moved there
# keep its old path: the erase and the support pages find those too.
EXTRACT_TASK_PATH = "memoryboard.ltm.write.tasks.extract_memories_task"
EXTRACT_TASK_PATHS = (EXTRACT_TASK_PATH, "memoryboard.tasks.extract_memories_task")
# Tasks that may run again after a lost run without doing anything twice.
RETRY_SAFE_TASKS = frozenset({
    EXTRACT_TASK_PATH,
    "memoryboard.ltm.search.tasks.ann_update_task",
    "memoryboard.ltm.store.tasks.archive_expired_task",
})
WORKER_LOST_PATH = "memoryboard.task_recovery.WorkerLost"


class WorkerLost(RuntimeError):
    """The worker running the task stopped (killed, crashed, its host gone) before the task ended."""


@dataclass
class RecoverySummary:
    retried: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def _seconds(name: str, default: int) -> timedelta:
    return timedelta(seconds=int(getattr(settings, name, default)))


def task_result_model():
    """``django_tasks_db``'s ``DBTaskResult``, or None when that app is not installed (tasks run elsewhere)."""
    for config in apps.get_app_configs():
        if config.name == "django_tasks_db":
            return config.get_model("DBTaskResult")
    return None


def worker_heartbeat(*, worker_id: str, now=None) -> None:
    unique = ["worker_id"] if connection.features.supports_update_conflicts_with_target else None
    WorkerHeartbeat.objects.bulk_create([WorkerHeartbeat(worker_id=worker_id[:64], seen_at=now or timezone.now())],
                                        update_conflicts=True, unique_fields=unique, update_fields=["seen_at"])


def tasks_recover(*, now=None) -> RecoverySummary:
    """Retry (or fail) the RUNNING tasks whose worker is gone; see the module's docstring.

    Returns:
        The ids of the tasks put back to READY and of those marked FAILED.
    """
    DBTaskResult = task_result_model()
    now = now or timezone.now()
    lost_after = _seconds("MEMORYBOARD_WORKER_LOST_SECONDS", 60)
    stale_after = _seconds("MEMORYBOARD_TASK_STALE_SECONDS", 900)
    summary = RecoverySummary()
    with transaction.atomic():
        running = list(DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING)
                       .select_for_update(skip_locked=True).order_by())
        beats = dict(WorkerHeartbeat.objects.values_list("worker_id", "seen_at"))
        for task in running:
            worker = task.worker_ids[-1] if task.worker_ids else None
            seen = beats.get(str(worker)[:64]) if worker else None
            if seen is not None:
                lost = seen < now - lost_after
            else:
                lost = task.started_at is None or task.started_at < now - stale_after
            if not lost:
                continue
            if task.task_path in RETRY_SAFE_TASKS and len(task.worker_ids) < MAX_ATTEMPTS:
                task.status, task.started_at, task.run_after = TaskResultStatus.READY, None, now
                task.save(update_fields=["status", "started_at", "run_after"])
                summary.retried.append(str(task.pk))
            else:
                task.status, task.finished_at, task.return_value = TaskResultStatus.FAILED, now, None
                task.exception_class_path = WORKER_LOST_PATH
                task.traceback = (f"WorkerLost: worker {worker} stopped while running this task "
                                  f"(run {len(task.worker_ids)} of at most {MAX_ATTEMPTS}).")
                task.save(update_fields=["status", "finished_at", "return_value", "exception_class_path",
                                         "traceback"])
                summary.failed.append(str(task.pk))
        WorkerHeartbeat.objects.filter(seen_at__lt=now - timedelta(days=1)).delete()
    for pk in summary.retried:
        logger.warning("task %s: its worker was lost; queued again", pk)
    for pk in summary.failed:
        logger.error("task %s: its worker was lost; marked failed", pk)
    return summary


class HeartbeatThread(threading.Thread):
    """Beats for ``worker_id`` and recovers lost tasks, on its own connection, until stopped."""

    def __init__(self, worker_id: str) -> None:
        super().__init__(name="memoryboard-heartbeat", daemon=True)
        self.worker_id = worker_id
        self.stopped = threading.Event()

    def run(self) -> None:
        every = float(getattr(settings, "MEMORYBOARD_WORKER_HEARTBEAT_SECONDS", 10))
        last_recovery = 0.0
        while not self.stopped.is_set():
            close_old_connections()
            try:
                worker_heartbeat(worker_id=self.worker_id)
                if time.monotonic() - last_recovery >= float(
                        getattr(settings, "MEMORYBOARD_TASK_RECOVER_SECONDS", RECOVER_EVERY_SECONDS)):
                    last_recovery = time.monotonic()
                    tasks_recover()
            except Exception:  # noqa: BLE001 - a database hiccup must not stop the beats
                logger.exception("worker heartbeat failed")
            self.stopped.wait(every)
        connections.close_all()


def failed_extractions(*, user_id: str | None = None, limit: int = 50) -> list[dict]:
    """Failed extraction tasks, newest first (of one platform user when given): when, conversation, why."""
    DBTaskResult = task_result_model()
    if DBTaskResult is None:
        return []
    qs = DBTaskResult.objects.filter(task_path__in=EXTRACT_TASK_PATHS, status=TaskResultStatus.FAILED)
    if user_id is not None:
        qs = qs.filter(args_kwargs__kwargs__user_id=str(user_id))
    out = []
    for task in qs.order_by("-finished_at")[: limit * 2]:
        kwargs = (task.args_kwargs or {}).get("kwargs") or {}
        if user_id is not None and kwargs.get("user_id") != str(user_id):
            continue  # the JSON key compared case-insensitively on MySQL
        out.append({"id": str(task.pk), "finished_at": task.finished_at, "agent": kwargs.get("agent_id", ""),
                    "conversation_id": kwargs.get("conversation_id", ""),
                    "worker_lost": task.exception_class_path == WORKER_LOST_PATH,
                    "error": task.exception_class_path.rsplit(".", 1)[-1], "runs": len(task.worker_ids)})
        if len(out) >= limit:
            break
    return out
