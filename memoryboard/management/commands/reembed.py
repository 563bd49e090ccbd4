"""Re-embed long-term memory items with the current embedder model (after a model change)."""

from __future__ import annotations

from django.core.management.base import BaseCommand
from tqdm import tqdm

from memoryboard.llm.factory import get_embedder
from memoryboard.ltm.search.embeddings import memory_reembed, memory_reembed_count
from memoryboard.management.database import require_migrated


class Command(BaseCommand):
    help = "Embed every memory item (or only those missing a vector) with the current embedder model."

    def add_arguments(self, parser):
        parser.add_argument("--missing-only", action="store_true", help="Only items without a vector for the current model.")
        parser.add_argument("--batch-size", type=int, default=200, help="Items per batch (default 200).")
        parser.add_argument("--no-progress", action="store_true", help="Do not show the progress bar.")

    def handle(self, *args, missing_only: bool = False, batch_size: int = 200, no_progress: bool = False, **options):
        require_migrated()

        embedder = get_embedder()
        total = memory_reembed_count(missing_only=missing_only, embedder=embedder)
        with tqdm(total=total, unit="item", desc=f"embedding ({embedder.name})", disable=no_progress,
                  file=self.stderr) as bar:
            done = memory_reembed(missing_only=missing_only, batch_size=max(1, batch_size), embedder=embedder,
                                  on_batch=bar.update)
        self.stdout.write(f"Embedded {done} item(s) with {embedder.name}.")
