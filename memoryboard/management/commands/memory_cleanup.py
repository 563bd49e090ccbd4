"""Archive (never delete) items with a low score and few accesses (dry run unless --apply)."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand

from memoryboard.ltm.store.expiry import memory_archive_expired
from memoryboard.ltm.store.lifecycle import memory_cleanup
from memoryboard.management.database import require_migrated
from memoryboard.management.listing import write_listing


class Command(BaseCommand):
    help = (
        "Archive active long-term memory items whose relevance score is below the threshold and whose "
        "access count is below the minimum (reason 'decay'), and items past their expiry (reason 'expired'); "
        "restorable. Dry run unless --apply."
    )

    def add_arguments(self, parser):
        parser.add_argument("--apply", action="store_true", help="Archive them (default: dry run).")
        parser.add_argument("--threshold", type=float, default=None,
                            help="Score threshold (default MEMORYBOARD_CLEANUP_SCORE_THRESHOLD).")
        parser.add_argument("--min-access", type=int, default=None,
                            help="Access count below which items go (default MEMORYBOARD_CLEANUP_MIN_ACCESS).")

    def handle(self, *args, apply: bool = False, threshold=None, min_access=None, **options):
        require_migrated()
        threshold = settings.MEMORYBOARD_CLEANUP_SCORE_THRESHOLD if threshold is None else threshold
        min_access = settings.MEMORYBOARD_CLEANUP_MIN_ACCESS if min_access is None else min_access
        verb = "Archived" if apply else "Would archive"
        # Expired items first: an item past its expiry is "expired", whatever its score.
        expired = memory_archive_expired(dry_run=not apply, actor="memory_cleanup")
        self.stdout.write(f"{verb} {len(expired)} expired item(s) (reason 'expired').")
        write_listing(self.stdout, expired, applied=apply, hint="")
        ids = memory_cleanup(threshold=threshold, min_access=min_access, dry_run=not apply, actor="memory_cleanup")
        verb = "Archived" if apply else "Would archive"
        self.stdout.write(f"{verb} {len(ids)} item(s) with score < {threshold} and access count < {min_access}.")
        write_listing(self.stdout, ids, applied=apply,
                      hint="Dry run: nothing was changed. Run again with --apply to archive.")
