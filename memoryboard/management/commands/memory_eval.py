"""Evaluate retrieval on the shipped sets or a JSON file (docs/retrieval.md § The evaluation harness):
the bilingual set (items and queries: recall@1/@5/@10 and MRR) and the conversation set (turns and
observations: evidence recall@10 through the search and the agent's memory block, next to BM25, the
model and their rank fusion), per split. ``--suite updates``: memories over time; ``--suite extraction``:
which messages the extractor stores something from, the development and blind sets side by side."""

from __future__ import annotations

import json
import os
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.test.utils import override_settings
from tqdm import tqdm

from memoryboard.evaluation.retrieval import (
    CONVERSATION_MODES,
    CUTOFFS,
    MODES,
    EvalSetError,
    conversation_evaluate,
    is_conversation_set,
    memory_evaluate,
    validate_conversation_set,
    validate_eval_set,
)
from memoryboard.evaluation.extraction import (
    ExtractionEvalError,
    extraction_evaluate_set,
    validate_extraction_set,
)
from memoryboard.evaluation.updates import UpdatesEvalError, updates_evaluate, validate_updates_set
from memoryboard.llm.chat import OpenAIChatModel
from memoryboard.llm.extraction import LLMExtractor
from memoryboard.llm.factory import get_embedder
from memoryboard.llm.openai_client import make_client
from memoryboard.management.database import require_migrated


DATA = Path(__file__).resolve().parents[3] / "tests" / "data"
# The shipped retrieval sets by name: the team's two (regression sets), the development conversations
# (constants are chosen on them) and the blind ones (run to report, never read: tests/data/blind/README.md).
NAMED = {"bilingual": DATA / "bilingual_eval.json", "team": DATA / "conversation_eval.json",
         "dev": DATA / "dev" / "conversations.json", "blind": DATA / "blind" / "conversations.json"}
# Conversation sets reported side by side (first: the one tuned on), with the gap between them.
COMPARED = ("dev", "blind")
UPDATES_FILE = Path(__file__).resolve().parents[3] / "tests" / "data" / "updates_eval.json"
UPDATES_FILES = [DATA / part / "updates.json" for part in COMPARED]
UPDATES_FIGURES = ("current_first", "stale_as_current", "collateral_supersede", "duplicates")
EXTRACTION_FILES = [Path(__file__).resolve().parents[3] / "tests" / "data" / part / "extraction.json"
                    for part in ("dev", "blind")]
EXTRACTION_FIGURES = ("recall", "precision", "item_precision", "coverage", "items_per_fact", "secrets_leaked")


def _set_name(file: str) -> str:
    """A set's short name for a column: its folder (dev, blind) or its file name."""
    path = Path(file)
    return path.parent.name if path.name == "extraction.json" else path.stem


def _read_json(file: str):
    """A set file's JSON, or a CommandError naming the file and the problem."""
    try:
        with open(file, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as exc:
        raise CommandError(f"cannot read {file}: {exc.strerror or exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CommandError(f"{file} is not JSON: {exc}") from exc


def _read_set(file: str, validate, error: type[Exception]):
    """A set file read and checked by ``validate``; its ``error`` as a CommandError naming the file."""
    data = _read_json(file)
    try:
        validate(data)
    except error as exc:
        raise CommandError(f"{file}: {exc}") from exc
    return data


def _validate_retrieval_set(data) -> None:
    (validate_conversation_set if is_conversation_set(data) else validate_eval_set)(data)


class Command(BaseCommand):
    help = ("Evaluate the memory search on the shipped sets (bilingual, conversations) or on FILE.json, or with "
            "--suite updates the reconcile step on memories that change over time; writes nothing.")

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="*", metavar="file",
                            help="Evaluation sets (JSON); default the shipped ones (--sets).")
        parser.add_argument("--sets", default=",".join(NAMED),
                            help=f"retrieval suite, without files: which shipped sets, comma-separated (default "
                                 f"{','.join(NAMED)}); dev and blind are printed side by side with the gap.")
        parser.add_argument("--format", choices=["table", "json"], default="table", help="Output format.")
        parser.add_argument("--embedder", choices=["use", "hashing", "openai"], default=None,
                            help="Embedder to evaluate (default: MEMORYBOARD_EMBEDDER).")
        parser.add_argument("--no-progress", action="store_true", help="Do not show the progress bar.")
        parser.add_argument("--suite", choices=["retrieval", "updates", "extraction"], default="retrieval",
                            help="retrieval (default): recall of the search; updates: memories over time "
                                 "(default tests/data/dev and tests/data/blind side by side; with --split, the "
                                 "team's tests/data/updates_eval.json); extraction: messages kept or "
                                 "skipped by the extractor (default tests/data/dev and tests/data/blind).")
        parser.add_argument("--split", choices=["dev", "test", "all"], default="all",
                            help="updates suite: the scenarios of one split of the team's set (default: the dev "
                                 "and blind sets side by side).")
        parser.add_argument("--endpoint", default="", metavar="URL",
                            help="extraction suite: the online LLM extractor at this OpenAI-compatible endpoint "
                                 "(e.g. http://127.0.0.1:8001/v1) instead of the offline one; updates suite: "
                                 "the online reconcile judge there instead of the offline rules.")
        parser.add_argument("--model", default="", help="with --endpoint: the chat model (default OPENAI_CHAT_MODEL).")
        parser.add_argument("--api-key", default="",
                            help="with --endpoint: the API key (default the OPENAI_API_KEY environment variable).")

    def handle(self, *args, files: list[str], format: str = "table", embedder: str | None = None,
                no_progress: bool = False, suite: str = "retrieval", split: str = "all", sets: str = "",
                endpoint: str = "", model: str = "", api_key: str = "", **options):
        if endpoint and suite == "retrieval":
            raise CommandError("--endpoint: only the extraction and updates suites run against an endpoint")
        if suite == "extraction":
            return self._extraction(files or [str(path) for path in EXTRACTION_FILES], format=format,
                                    endpoint=endpoint, model=model, api_key=api_key, no_progress=no_progress)
        if suite == "updates":
            if endpoint:
                # The online judge at that endpoint decides (llm.factory builds it from these settings).
                with override_settings(OPENAI_BASE_URL=endpoint, OPENAI_CHAT_MODEL=model or settings.OPENAI_CHAT_MODEL,
                                       OPENAI_API_KEY=api_key or os.environ.get("OPENAI_API_KEY", "") or "none"):
                    return self._updates_files(files, format=format, embedder=embedder, split=split)
            return self._updates_files(files, format=format, embedder=embedder, split=split)
        names = [name.strip() for name in (sets or ",".join(NAMED)).split(",") if name.strip()]
        unknown = [name for name in names if name not in NAMED]
        if unknown:
            raise CommandError(f"--sets: unknown set {unknown[0]!r} (known: {', '.join(NAMED)})")
        chosen = files or [str(NAMED[name]) for name in names]
        sets_read = []
        for file in chosen:
            sets_read.append((file, _read_set(file, _validate_retrieval_set, EvalSetError)))
        require_migrated()
        model = None
        if embedder is not None:
            with override_settings(MEMORYBOARD_EMBEDDER=embedder):
                model = get_embedder()
        reports = {}
        named = {str(path): name for name, path in NAMED.items()}
        for file, data in sets_read:
            conversations = is_conversation_set(data)
            with tqdm(total=len(data["queries"]), unit="query", desc=f"evaluating {Path(file).name}",
                      disable=no_progress, file=self.stderr) as bar:
                if conversations:
                    report = conversation_evaluate(data=data, embedder=model, on_query=bar.update,
                                                   split=named.get(str(Path(file))))
                else:
                    report = memory_evaluate(data=data, embedder=model, on_query=bar.update)
            reports[file] = report
            if format == "table" and named.get(str(Path(file))) not in COMPARED:
                self._conversation_tables(file, report) if conversations else self._item_tables(file, report)
        compared = {named[str(Path(file))]: report for file, report in reports.items()
                    if named.get(str(Path(file))) in COMPARED}
        if compared and format == "table":
            self._compared_tables(compared)
        if format == "json":
            self.stdout.write(json.dumps(reports if len(reports) > 1 else next(iter(reports.values())),
                                         ensure_ascii=False, indent=2))

    def _item_tables(self, file: str, report: dict) -> None:
        self.stdout.write(f"{file}\nmodel {report['model']}: {report['items']} items, {report['queries']} queries\n")
        self._table("overall", {"all": report["overall"]})
        for group in ("by_split", "by_language", "by_kind", "by_type"):
            self._table(group.replace("by_", "by "), report[group])

    def _updates_files(self, files: list[str], *, format: str, embedder: str | None, split: str) -> None:
        """``--split dev|test`` or one file: the split table of that set (default the team's set);
        else the development and blind sets (or the files given) side by side with the gap."""
        if split != "all" or len(files) == 1:
            return self._updates(files[0] if files else str(UPDATES_FILE), format=format, embedder=embedder,
                                 split=None if split == "all" else split)
        chosen = files or [str(path) for path in UPDATES_FILES]
        sets = []
        for file in chosen:
            sets.append((Path(file).parent.name, _read_set(file, validate_updates_set, UpdatesEvalError)))
        require_migrated()
        model = None
        if embedder is not None:
            with override_settings(MEMORYBOARD_EMBEDDER=embedder):
                model = get_embedder()
        reports = {name: updates_evaluate(data=data, embedder=model, name=name) for name, data in sets}
        if format == "json":
            self.stdout.write(json.dumps(reports, ensure_ascii=False, indent=2))
            return
        first = next(iter(reports.values()))
        names = list(reports)
        self.stdout.write(f"updates suite, model {first['model']}, judge {first['judge']}: "
                          + ", ".join(f"{name} {report['scenarios']} scenarios" for name, report in reports.items()))
        gap = len(names) == 2
        self.stdout.write(f"{'':<24}" + "".join(f"{name:>12}" for name in names) + (f"{'gap':>12}" if gap else ""))
        for figure in UPDATES_FIGURES:
            values = [report["splits"][name][figure] for name, report in reports.items()]
            cells = "".join(f"{'-' if v is None else v:>12}" for v in values)
            if gap and None not in values:
                cells += f"{values[0] - values[1]:>+12.4f}"
            self.stdout.write(f"  {figure:<22}{cells}")
        for name, report in reports.items():
            self.stdout.write(f"{name} decisions: " + ", ".join(
                f"{verdict} {count}" for verdict, count in sorted(report["splits"][name]["decisions"].items())))
        for name, report in reports.items():
            if name == "blind":  # run to report, never read: which scenarios failed is not shown
                continue
            for metric, ids in report["failures"].items():
                self.stdout.write(f"{name} failed {metric} ({len(ids)}): {', '.join(ids)}")

    def _updates(self, file: str, *, format: str, embedder: str | None, split: str | None) -> None:
        data = _read_set(file, validate_updates_set, UpdatesEvalError)
        require_migrated()
        model = None
        if embedder is not None:
            with override_settings(MEMORYBOARD_EMBEDDER=embedder):
                model = get_embedder()
        report = updates_evaluate(data=data, split=split, embedder=model)
        if format == "json":
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=2))
            return
        self.stdout.write(f"updates suite, model {report['model']}, judge {report['judge']}: "
                          f"{report['scenarios']} scenarios (deterministic)\n")
        columns = ["current_first", "current_first_slot", "stale_as_current", "collateral_supersede", "duplicates",
                   "when", "as_of", "expiry"]
        self.stdout.write(f"{'split':<6}{'n':>5}" + "".join(f"{c:>22}" for c in columns))
        for part, figures in report["splits"].items():
            cells = "".join(f"{'-' if figures[c] is None else figures[c]:>22}" for c in columns)
            self.stdout.write(f"{part:<6}{figures['scenarios']:>5}" + cells)
        for metric, ids in report["failures"].items():
            self.stdout.write(f"failed {metric}: {', '.join(ids)}")

    def _extraction(self, files: list[str], *, format: str, endpoint: str, model: str, api_key: str,
                    no_progress: bool) -> None:
        sets = []
        for file in files:
            sets.append((file, _read_set(file, validate_extraction_set, ExtractionEvalError)))
        extractor = None
        if endpoint:
            client = make_client(base_url=endpoint, api_key=api_key or os.environ.get("OPENAI_API_KEY", ""),
                                 timeout=float(settings.OPENAI_TIMEOUT_SECONDS), max_retries=int(settings.OPENAI_MAX_RETRIES))
            extractor = LLMExtractor(OpenAIChatModel(client, model or settings.OPENAI_CHAT_MODEL))
        reports = {}
        for file, data in sets:
            with tqdm(total=len(data["items"]), unit="message", desc=f"evaluating {Path(file).name}",
                      disable=no_progress, file=self.stderr) as bar:
                reports[file] = extraction_evaluate_set(data=data, extractor=extractor,
                                                             on_message=lambda: bar.update())
        if format == "json":
            self.stdout.write(json.dumps(reports, ensure_ascii=False, indent=2))
            return
        names = [_set_name(file) for file in files]
        first = next(iter(reports.values()))
        self.stdout.write(f"extraction suite, extractor {first['extractor']}\n")
        for name, (file, report) in zip(names, reports.items()):
            self.stdout.write(f"{name}: {file} ({report['overall']['messages']} messages): {report['method']}")
        self.stdout.write("")
        gap = len(reports) == 2
        header = f"{'':<26}" + "".join(f"{name:>12}" for name in names) + (f"{'gap':>12}" if gap else "")
        groups = [("all", lambda r: r["overall"])]
        groups += [(f"language {lang}", lambda r, lang=lang: r["by_language"].get(lang)) for lang in ("en", "zh", "mixed")]
        groups += [(f"channel {ch}", lambda r, ch=ch: r["by_channel"].get(ch)) for ch in ("chat", "api")]
        for title, pick in groups:
            parts = [pick(report) for report in reports.values()]
            if not any(parts):
                continue
            counts = " / ".join(str(p["messages"]) if p else "-" for p in parts)
            self.stdout.write(f"{title} ({counts} messages)")
            self.stdout.write(header)
            for figure in EXTRACTION_FIGURES if title == "all" else ("recall", "precision", "coverage"):
                values = [p[figure] if p else None for p in parts]
                cells = "".join(f"{'-' if v is None else v:>12}" for v in values)
                if gap and None not in values:
                    cells += f"{values[0] - values[1]:>+12.4f}"
                self.stdout.write(f"  {figure:<24}{cells}")
            self.stdout.write("")
        for name, report in zip(names, reports.values()):
            for kind, ids in report["failures"].items():
                if ids:
                    self.stdout.write(f"{name} {kind} ({len(ids)}): {', '.join(ids)}")

    def _conversation_tables(self, file: str, report: dict) -> None:
        k = report["k"]
        self.stdout.write(f"{file}\nmodel {report['model']}: {report['conversations']} conversations, "
                          f"{report['queries']} queries; evidence recall@{k}\n")
        for split, stores in report["by_split"].items():
            for store, kinds in stores.items():
                self.stdout.write(f"{split + ' ' + store:<24}{'n':>5}" + "".join(f"{m:>9}" for m in CONVERSATION_MODES))
                for kind, modes in kinds.items():
                    cells = "".join(f"{modes[m][f'recall@{k}']:>9.3f}" for m in CONVERSATION_MODES)
                    self.stdout.write(f"{kind:<24}{modes['search']['queries']:>5}{cells}")
                self.stdout.write("")

    def _compared_tables(self, reports: dict) -> None:
        """The development and blind conversation sets side by side: evidence recall@k of the search and of
        the agent's memory block, then BM25 and the model alone over the same items, per store, kind and
        language, with the gap (development - blind) of the search."""
        names = [name for name in COMPARED if name in reports]
        first = reports[names[0]]
        k = first["k"]
        self.stdout.write(f"conversations, {' and '.join(names)} side by side (model {first['model']}); evidence "
                          f"recall@{k}; gap = {names[0]} - {names[-1]} of the search\n")
        modes = ("search", "agent", "bm25", "model")
        header = f"{'store, questions':<26}" + "".join(f"{name + ' n':>9}" for name in names)
        header += "".join(f"{name[:5] + ' ' + mode:>13}" for mode in modes for name in names)
        self.stdout.write(header + (f"{'gap':>8}" if len(names) == 2 else ""))
        for store in ("turns", "observations"):
            rows: list[tuple[str, dict]] = []
            kinds = sorted({kind for name in names for kind in reports[name]["by_split"][name].get(store, {})},
                           key=lambda kind: (kind != "all", kind))
            for kind in kinds:
                rows.append((kind, {name: reports[name]["by_split"][name].get(store, {}).get(kind) for name in names}))
            langs = sorted({lang for name in names for lang in reports[name]["by_language"][name].get(store, {})})
            for lang in langs:
                rows.append((f"lang {lang}", {name: reports[name]["by_language"][name].get(store, {}).get(lang)
                                              for name in names}))
            for label, by_name in rows:
                cells = "".join(f"{(by_name[name] or {}).get('search', {}).get('queries', 0):>9}" for name in names)
                for mode in modes:
                    for name in names:
                        value = (by_name[name] or {}).get(mode, {}).get(f"recall@{k}")
                        cells += f"{'-' if value is None else f'{value:.3f}':>13}"
                if len(names) == 2:
                    a, b = (((by_name[name] or {}).get("search") or {}).get(f"recall@{k}") for name in names)
                    cells += f"{'-' if a is None or b is None else f'{a - b:+.3f}':>8}"
                self.stdout.write(f"{store[:5] + ' ' + label:<26}{cells}")
            skipped = {name: reports[name].get("unanswerable", {}).get(name, {}).get(store, 0) for name in names}
            if any(skipped.values()):
                self.stdout.write("  questions left out, no item of this store holds their evidence: " + ", ".join(
                    f"{name} {count}" for name, count in skipped.items()))
            self.stdout.write("")

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
