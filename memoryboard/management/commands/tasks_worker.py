"""``db_worker`` with a heartbeat: a task whose worker dies is retried or marked failed (``task_recovery``)."""

from __future__ import annotations

from django_tasks_db.management.commands.db_worker import Command as DbWorkerCommand

from memoryboard.task_recovery import HeartbeatThread


class Command(DbWorkerCommand):
    help = ("Run a database task worker (django-tasks-db's db_worker) that writes a heartbeat and recovers "
            "the tasks of workers that died: retried when safe, else marked failed.")

    def handle(self, *args, **options):
        beat = HeartbeatThread(options["worker_id"])
        beat.start()
        try:
            return super().handle(*args, **options)
        finally:
            beat.stopped.set()
