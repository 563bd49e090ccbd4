"""Rebuild the HNSW index of the configured embedding model (staff search across every user)."""

from __future__ import annotations

from django.core.management.base import BaseCommand
from tqdm import tqdm

from memoryboard.llm.factory import get_embedder
from memoryboard.ltm.search.ann import ann_rebuild, ann_rebuild_count, index_path
from memoryboard.management.database import require_migrated


class Command(BaseCommand):
    help = "Build the HNSW index of every stored vector of the current embedding model and replace its file."

    def add_arguments(self, parser):
        parser.add_argument("--threads", type=int, default=0, help="Build threads (default: every core).")
        parser.add_argument("--no-progress", action="store_true", help="Do not show the progress bar.")

    def handle(self, *args, threads: int = 0, no_progress: bool = False, **options):
        require_migrated()

        embedder = get_embedder()
        total = ann_rebuild_count(model_name=embedder.name)
        with tqdm(total=total, unit="vector", desc=f"indexing ({embedder.name})", disable=no_progress,
                  file=self.stderr) as bar:
            done = ann_rebuild(model_name=embedder.name, dim=int(embedder.dim), on_batch=bar.update,
                               threads=max(0, threads))
        self.stdout.write(f"Indexed {done} vector(s) of {embedder.name} in {index_path(embedder.name)}.")
