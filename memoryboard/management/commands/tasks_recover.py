"""Retry or fail the tasks left RUNNING by dead workers, once (``tasks_worker`` does it every minute)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from memoryboard.task_recovery import tasks_recover


class Command(BaseCommand):
    help = "Retry (when safe) or mark failed the tasks whose worker died; tasks_worker runs this every minute."

    def handle(self, *args, **options):
        summary = tasks_recover()
        self.stdout.write(f"{len(summary.retried)} queued again, {len(summary.failed)} marked failed")
