"""An in-process task backend: runs each task on a background thread, so a reply never waits.

The embedded default. Deployments use django_tasks_db's DatabaseBackend and its
``db_worker`` instead (see README). With ``MEMORYBOARD_TASKS_INLINE`` on (the tests),
tasks run at once in the caller's thread, exactly like the immediate backend.
"""

from __future__ import annotations

import atexit
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import close_old_connections, connections
from django_tasks.backends.immediate import ImmediateBackend


class ThreadBackend(ImmediateBackend):
    supports_async_task = True

    def __init__(self, alias: str, params: dict):
        super().__init__(alias, params)
        workers = int(params.get("OPTIONS", {}).get("workers", 2))
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="memoryboard-task")
        atexit.register(self._executor.shutdown, wait=True)

    def _execute_task(self, task_result) -> None:
        if getattr(settings, "MEMORYBOARD_TASKS_INLINE", False):
            super()._execute_task(task_result)
            return
        self._executor.submit(self._run_in_thread, task_result)

    def _run_in_thread(self, task_result) -> None:
        close_old_connections()
        try:
            super()._execute_task(task_result)
        finally:
            connections.close_all()
