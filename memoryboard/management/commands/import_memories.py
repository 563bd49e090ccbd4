"""``manage.py import_memories FILE --user NAME [--apply]``: import memories for one user (dry run by default)."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from memoryboard.ltm.write.importing import MODES, MemoryImportError, import_items_from_text, memory_import
from memoryboard.management.database import require_migrated
from memoryboard.roles import platform_user_id


class Command(BaseCommand):
    help = ("Import long-term memories from memoryboard's export or a JSON list of {content, type?, created_at?} "
            "into one user's namespaces. Prints what it would do unless --apply is given.")

    def add_arguments(self, parser):
        parser.add_argument("file", help="A JSON file ('-' reads standard input).")
        parser.add_argument("--user", required=True, help="The user (user name) who owns the imported items.")
        parser.add_argument("--mode", choices=MODES, default="skip", help="On a duplicate: skip it, or overwrite the item.")
        parser.add_argument("--agent", default=None, help="Agent of rows that name none (default MEMORYBOARD_DEFAULT_AGENT).")
        parser.add_argument("--apply", action="store_true", help="Write the items (default: a dry run).")

    def handle(self, *args, file: str, user: str, mode: str, agent: str | None, apply: bool, **options):
        require_migrated()
        owner = get_user_model().objects.filter(**{get_user_model().USERNAME_FIELD: user}).first()
        if owner is None:
            raise CommandError(f"No user named {user!r}.")
        try:
            text = self.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"Cannot read {file}: {exc}") from exc
        try:
            items = import_items_from_text(text)
            summary = memory_import(items=items, user_id=platform_user_id(owner), actor="manage.py import_memories",
                                    mode=mode, dry_run=not apply, agent_id=agent)
        except MemoryImportError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from exc
        for error in summary.invalid:
            self.stderr.write(f"item {error['index']}, {error['field']}: {error['message']}")
        self.stdout.write(
            f"{summary.new} new, {summary.duplicate} duplicate, "
            + (f"{summary.restored} deleted by the user (brought back), " if summary.restored else "")
            + f"{len(summary.invalid)} invalid, "
            f"{summary.archived_skipped} archived (skipped); imported {summary.imported}"
            + ("" if apply else " (dry run: use --apply to write)")
        )
        # What the import does (a dry run: would do) to the items already there, as it did it.
        verb = "replaced" if apply else "would replace"
        for old, new in summary.outcome.replaced:
            self.stdout.write(f"{verb}: {old.content!r} -> {new.content!r}")
        for before, after in summary.outcome.changed:
            self.stdout.write(f"{'reworded' if apply else 'would reword'}: {before.content!r} -> {after.content!r}")
        if apply and summary.invalid:
            raise CommandError("Nothing was imported: fix the invalid items first.")
