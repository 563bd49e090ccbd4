"""List (and with --apply rewrite) items stored under a namespace spelling no known writer produces."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from memoryboard.ltm.store.items import memory_respell_namespaces
from memoryboard.ltm.store.selectors import odd_namespace_texts
from memoryboard.management.database import require_migrated


class Command(BaseCommand):
    help = (
        "Find namespace texts that readers do not look up (a memories namespace spelled with unusual "
        "whitespace or escapes) and, with --apply, rewrite them to MEMORYBOARD_NAMESPACE_SPELLING. "
        "Prints what it would do unless --apply is given."
    )

    def add_arguments(self, parser):
        parser.add_argument("--apply", action="store_true", help="Really rewrite (default: dry run).")

    def handle(self, *args, apply: bool = False, **options):
        require_migrated()
        odd = odd_namespace_texts()
        fixable = [text for text, ns in odd if ns is not None]
        for text, ns in odd:
            target = ns.as_text() if ns is not None else "(not a memories namespace: left alone)"
            self.stdout.write(f"  {text}  ->  {target}")
        if not fixable:
            self.stdout.write("Every memories namespace is stored in a spelling readers look up.")
            return
        if not apply:
            self.stdout.write(f"Would rewrite {len(fixable)} namespace text(s). Dry run: run again with --apply.")
            return
        count = memory_respell_namespaces(texts=fixable, actor="respell_namespaces")
        self.stdout.write(f"Rewrote {count} item(s) under {len(fixable)} namespace text(s).")
