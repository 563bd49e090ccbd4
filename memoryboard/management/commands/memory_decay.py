"""Decay relevance scores: ``score *= factor ** days_since_access`` (dry run unless --apply)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from memoryboard.ltm.store.lifecycle import memory_decay
from memoryboard.management.database import require_migrated
from memoryboard.management.listing import write_listing


class Command(BaseCommand):
    help = (
        "Decay the relevance score of active long-term memory items by MEMORYBOARD_DECAY_FACTOR per day "
        "since their last access. Idempotent (only days not yet applied count). Dry run unless --apply."
    )

    def add_arguments(self, parser):
        parser.add_argument("--apply", action="store_true", help="Write the new scores (default: dry run).")
        parser.add_argument("--factor", type=float, default=None, help="Decay factor per day, in (0, 1].")

    def handle(self, *args, apply: bool = False, factor: float | None = None, **options):
        require_migrated()
        changes = memory_decay(decay_factor=factor, dry_run=not apply, actor="memory_decay")
        verb = "Decayed" if apply else "Would decay"
        self.stdout.write(f"{verb} {len(changes)} item(s).")
        write_listing(self.stdout, [f"{pk}: {old:.4f} -> {new:.4f}" for pk, old, new in changes], applied=apply,
                      hint="Dry run: nothing was changed. Run again with --apply to write.")
