"""Evaluate retrieval on a JSON set of items and queries: recall@1/@5/@10 and MRR (docs/retrieval.md)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memoryboard.ltm.evaluation import CUTOFFS, MODES, EvalSetError, memory_evaluate, validate_eval_set
from memoryboard.management.database import require_migrated


class Command(BaseCommand):
    help = "Evaluate the memory search on FILE.json (items, queries, expected ids); writes nothing."

    def add_arguments(self, parser):
        parser.add_argument("file", help="The evaluation set (JSON).")
        parser.add_argument("--format", choices=["table", "json"], default="table", help="Output format.")
        parser.add_argument("--embedder", choices=["use", "hashing", "openai"], default=None,
                            help="Embedder to evaluate (default: MEMORYBOARD_EMBEDDER).")
        parser.add_argument("--no-progress", action="store_true", help="Do not show the progress bar.")

    def handle(self, *args, file: str, format: str = "table", embedder: str | None = None,
               no_progress: bool = False, **options):
        try:
            with open(file, encoding="utf-8") as handle:
                data = json.load(handle)
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc.strerror or exc}") from exc
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise CommandError(f"{file} is not JSON: {exc}") from exc
        try:
            validate_eval_set(data)
        except EvalSetError as exc:
            raise CommandError(f"{file}: {exc}") from exc
        require_migrated()
        model = None
        if embedder is not None:
            from django.test.utils import override_settings

            from memoryboard.llm.factory import get_embedder

            with override_settings(MEMORYBOARD_EMBEDDER=embedder):
                model = get_embedder()
        with tqdm(total=len(data["queries"]), unit="query", desc="evaluating", disable=no_progress,
                  file=self.stderr) as bar:
            report = memory_evaluate(data=data, embedder=model, on_query=bar.update)
        if format == "json":
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=2))
            return
        self.stdout.write(f"model {report['model']}: {report['items']} items, {report['queries']} queries\n")
        self._table("overall", {"all": report["overall"]})
        for group in ("by_language", "by_kind", "by_type", "by_half"):
            self._table(group.replace("by_", "by "), report[group])

    def _table(self, title: str, rows: dict) -> None:
        columns = [f"R@{c}" for c in CUTOFFS] + ["MRR"]
        header = f"{title:<18}{'n':>5}  " + "  ".join(f"{mode:<{7 * len(columns)}}" for mode in MODES)
        self.stdout.write(header)
        self.stdout.write(" " * 25 + "  ".join("".join(f"{c:>7}" for c in columns) for _ in MODES))
        for key, modes in rows.items():
            cells = []
            for mode in MODES:
                m = modes[mode]
                cells.append("".join(f"{m[f'recall@{c}']:>7.3f}" for c in CUTOFFS) + f"{m['mrr']:>7.3f}")
            self.stdout.write(f"{key:<18}{modes['hybrid']['queries']:>5}  " + "  ".join(cells))
        self.stdout.write("")
