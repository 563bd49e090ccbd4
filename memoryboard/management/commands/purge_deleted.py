"""Purge items that users deleted longer ago than the retention period (dry run unless --apply)."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand

from memoryboard.ltm.store.items import memory_purge_deleted
from memoryboard.management.database import require_migrated
from memoryboard.playground_traces import trace_purge_expired


class Command(BaseCommand):
    help = (
        "Physically remove long-term memory items deleted by their users more than "
        "MEMORYBOARD_DELETED_RETENTION_DAYS ago, and playground traces not opened for "
        "MEMORYBOARD_PLAYGROUND_TRACE_RETENTION_DAYS. Prints what it would do unless --apply is given."
    )

    def add_arguments(self, parser):
        parser.add_argument("--apply", action="store_true", help="Really delete (default: dry run).")

    def handle(self, *args, apply: bool = False, **options):
        require_migrated()
        ids = memory_purge_deleted(dry_run=not apply, actor="purge_deleted")
        days = settings.MEMORYBOARD_DELETED_RETENTION_DAYS
        verb = "Purged" if apply else "Would purge"
        self.stdout.write(f"{verb} {len(ids)} item(s) deleted more than {days} days ago.")
        for memory_id in ids[:50]:
            self.stdout.write(f"  {memory_id}")
        if len(ids) > 50:
            self.stdout.write(f"  ... and {len(ids) - 50} more")
        traces = trace_purge_expired(dry_run=not apply, actor="purge_deleted")
        trace_days = settings.MEMORYBOARD_PLAYGROUND_TRACE_RETENTION_DAYS
        if trace_days > 0:
            self.stdout.write(f"{verb} {len(traces)} playground trace(s) not opened for {trace_days} days.")
        if (ids or traces) and not apply:
            self.stdout.write("Dry run: nothing was deleted. Run again with --apply to delete.")
