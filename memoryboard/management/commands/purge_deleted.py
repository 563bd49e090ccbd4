"""Purge items that users deleted longer ago than the retention period (dry run unless --apply)."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand

from memoryboard.ltm.services import memory_purge_deleted


class Command(BaseCommand):
    help = (
        "Physically remove long-term memory items deleted by their users more than "
        "MEMORYBOARD_DELETED_RETENTION_DAYS ago. Prints what it would do unless --apply is given."
    )

    def add_arguments(self, parser):
        parser.add_argument("--apply", action="store_true", help="Really delete (default: dry run).")

    def handle(self, *args, apply: bool = False, **options):
        ids = memory_purge_deleted(dry_run=not apply, actor="purge_deleted")
        days = settings.MEMORYBOARD_DELETED_RETENTION_DAYS
        verb = "Purged" if apply else "Would purge"
        self.stdout.write(f"{verb} {len(ids)} item(s) deleted more than {days} days ago.")
        for memory_id in ids[:50]:
            self.stdout.write(f"  {memory_id}")
        if len(ids) > 50:
            self.stdout.write(f"  ... and {len(ids) - 50} more")
        if ids and not apply:
            self.stdout.write("Dry run: nothing was deleted. Run again with --apply to delete.")
