"""The ``extraction`` suite of ``manage.py memory_eval``: which messages the extractor stores something from.

A set (``tests/data/{dev,blind}/extraction.json``, format in ``tests/data/blind/FORMATS.md``) lists single
messages labelled keep / skip, each keep with its facts and, where there is one, the secret that must never
be stored. Each message goes the way a real one goes: a ``chat`` message through the turn's cheap filter
(``ltm.write.extraction.text_skip_reason``) and then the extractor; an ``api`` one (third person, written by
another system) straight to the extractor. Nothing is written.

Figures, overall, per language and per channel:

- ``recall``: keep messages that yield at least one item;
- ``precision``: of the messages that yield an item, the keep ones (a skip message's items count against it);
  ``item_precision``: the same over items;
- ``coverage``: per keep message min(items, facts) / facts, summed over the set (one item per fact);
- ``secrets_leaked``: items holding a message's secret (0 expected); ``withheld`` how often a secret was
  reported withheld;
- the ids of the failures (keep without item, skip with item, leaks, failed model calls), ids only.

The development set is the one the offline classifier was trained on (its clauses by hand,
``training/dev_clause_labels.json``): its figure from the shipped model would be a training score. When a
set's content is the one the shipped model names as its training set, the suite reports it by k-fold
cross-validation instead (the classifier refitted without each fold's messages, with the shipped
hyperparameters) and says so.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memoryboard.llm.clauses import Clause, split_clauses
from memoryboard.llm.embeddings import UniversalSentenceEncoder
from memoryboard.llm.errors import LLMError
from memoryboard.llm.extraction import (
    ExtractionReport,
    MemoryExtractor,
    OfflineExtractor,
    clause_inputs,
    extraction_report,
    hard_skip,
    item_content,
    sentence_context,
)
from memoryboard.llm.statement_model import StatementModel, fit_statement_model, shipped_statement_model
from memoryboard.ltm.search.retrieval import MemoEmbedder
from memoryboard.ltm.write.extraction import text_skip_reason

LABELS = ("keep", "skip")
CHANNELS = ("chat", "api")
LANGUAGES = ("en", "zh", "mixed")
ROOT = Path(__file__).resolve().parents[2]
TRAINING_DIR = ROOT / "training"
CLAUSE_LABELS_FILE = TRAINING_DIR / "dev_clause_labels.json"
EXAMPLES_FILE = TRAINING_DIR / "statement_examples.tsv"
FOLDS = 5


class ExtractionEvalError(ValueError):
    """The set is not of the documented shape; the message names the place."""


def validate_extraction_set(data: Any) -> None:
    """Raise :class:`ExtractionEvalError` naming the first place at fault."""
    if not isinstance(data, dict) or not isinstance(data.get("items"), list) or not data["items"]:
        raise ExtractionEvalError("items: must be a non-empty list")
    seen = set()
    for i, item in enumerate(data["items"]):
        if not isinstance(item, dict):
            raise ExtractionEvalError(f"items[{i}]: must be an object")
        if not isinstance(item.get("id"), str) or item["id"] in seen:
            raise ExtractionEvalError(f"items[{i}].id: must be a string, unique in the file")
        seen.add(item["id"])
        if not isinstance(item.get("text"), str):
            raise ExtractionEvalError(f"items[{i}].text: must be a string")
        if item.get("label") not in LABELS:
            raise ExtractionEvalError(f"items[{i}].label: must be keep or skip")
        if item.get("channel", "chat") not in CHANNELS:
            raise ExtractionEvalError(f"items[{i}].channel: must be chat or api")
        if not isinstance(item.get("facts", []), list):
            raise ExtractionEvalError(f"items[{i}].facts: must be a list")
        if item.get("secret") is not None and not isinstance(item["secret"], str):
            raise ExtractionEvalError(f"items[{i}].secret: must be a string")


def set_fingerprint(data: dict) -> str:
    """A digest of a set's messages and labels (what a model trained on it saw), independent of formatting."""
    canonical = json.dumps([[i["id"], i["text"], i["label"]] for i in data["items"]], ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# --- running a set ----------------------------------------------------------------------------------


def run_message(item: dict, extractor: MemoryExtractor) -> ExtractionReport:
    """One message the way the product handles it: a chat message through the turn's cheap filter first."""
    if item.get("channel", "chat") == "chat" and text_skip_reason(item["text"], []):
        return ExtractionReport(items=[])
    return extraction_report(extractor, [{"role": "user", "content": item["text"]}])


def _rate(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def _figures(rows: list[dict]) -> dict[str, Any]:
    keep = [r for r in rows if r["label"] == "keep"]
    stored = [r for r in rows if r["items"]]
    items = sum(r["items"] for r in rows)
    return {
        "messages": len(rows), "keep": len(keep), "skip": len(rows) - len(keep),
        "recall": _rate(sum(1 for r in keep if r["items"]), len(keep)),
        "precision": _rate(sum(1 for r in stored if r["label"] == "keep"), len(stored)),
        "item_precision": _rate(sum(r["items"] for r in keep), items),
        "coverage": _rate(sum(min(r["items"], r["facts"]) for r in keep), sum(r["facts"] for r in keep)),
        "items_per_fact": _rate(sum(r["items"] for r in keep), sum(r["facts"] for r in keep)),
        "secrets": sum(1 for r in rows if r["secret"]),
        "secrets_leaked": sum(r["leaked"] for r in rows),
        "withheld": sum(1 for r in rows if r["secret"] and r["withheld"]),
    }


def extraction_figures(data: dict, results: dict[str, ExtractionReport]) -> dict[str, Any]:
    """The suite's figures for ``data`` given each message's report (by id)."""
    rows = []
    for item in data["items"]:
        report = results[item["id"]]
        secret = (item.get("secret") or "").strip()
        rows.append({
            "id": item["id"], "label": item["label"], "lang": item.get("lang", "en"),
            "channel": item.get("channel", "chat"), "items": len(report.items),
            "facts": max(1, len(item.get("facts") or [])) if item["label"] == "keep" else 0,
            "secret": bool(secret), "withheld": bool(report.withheld),
            "leaked": sum(1 for i in report.items if secret and secret.casefold() in i.content.casefold()),
        })
    by_language = {lang: _figures([r for r in rows if r["lang"] == lang]) for lang in LANGUAGES
                   if any(r["lang"] == lang for r in rows)}
    by_channel = {ch: _figures([r for r in rows if r["channel"] == ch]) for ch in CHANNELS
                  if any(r["channel"] == ch for r in rows)}
    return {
        "overall": _figures(rows), "by_language": by_language, "by_channel": by_channel,
        "failures": {
            "missed": [r["id"] for r in rows if r["label"] == "keep" and not r["items"]],
            "stored": [r["id"] for r in rows if r["label"] == "skip" and r["items"]],
            "leaked": [r["id"] for r in rows if r["leaked"]],
        },
    }


def extraction_evaluate(*, data: dict, extractor: MemoryExtractor,
                        on_message: Callable[[], None] | None = None) -> dict[str, Any]:
    """Run every message of ``data`` through ``extractor`` (see the module docstring) and return the figures.
    A message whose model call fails yields nothing (as in the product) and is listed under ``errors``."""
    results, errors = {}, []
    for item in data["items"]:
        try:
            results[item["id"]] = run_message(item, extractor)
        except LLMError:
            results[item["id"]] = ExtractionReport(items=[])
            errors.append(item["id"])
        if on_message:
            on_message()
    report = extraction_figures(data, results)
    report["failures"]["errors"] = errors
    report["extractor"] = str(getattr(extractor, "name", type(extractor).__name__))
    report["method"] = "the extractor as shipped"
    return report


# --- the training rows, and cross-validation on the set trained on -------------------------------------


@dataclass(frozen=True)
class TrainingRow:
    """One clause with its label: ``group`` is its message's id in the development set, or ``"examples"``."""

    text: str
    mark: str
    previous: str
    keep: int
    type: str
    group: str


def _scored_clauses(text: str) -> list[tuple[Clause, str]]:
    """The clauses of ``text`` the classifier would score (the extractor's hard skips left out), each with
    the clause before it in its sentence."""
    clauses = split_clauses(text)
    previous, conditional = sentence_context(clauses)
    return [(c, p) for c, p, h in zip(clauses, previous, conditional) if not hard_skip(c.text, conditional=h)]


def training_rows(*, dev: dict, clause_labels: dict[str, list], examples: Iterable[tuple[str, str, str]]
                  ) -> tuple[list[TrainingRow], int]:
    """The classifier's training rows: every clause of the development set (a skip message's all 0, a keep
    message's by ``clause_labels``), and each written example's clauses with its label and type.

    Returns:
        The rows, and how many labelled clauses no longer match the clause splitter's output (dropped).
    """
    rows, unmatched = [], 0
    for item in dev["items"]:
        labels = dict((text, label) for text, label in clause_labels.get(item["id"], []))
        for clause, previous in _scored_clauses(item["text"]):
            if item["label"] == "skip":
                rows.append(TrainingRow(clause.text, clause.mark, previous, 0, "", item["id"]))
            elif clause.text in labels:
                rows.append(TrainingRow(clause.text, clause.mark, previous, int(labels[clause.text]), "", item["id"]))
            else:
                unmatched += 1
    for label, kind, text in examples:
        for clause, previous in _scored_clauses(text):
            rows.append(TrainingRow(clause.text, clause.mark, previous, int(label == "keep"),
                                    kind if label == "keep" else "", "examples"))
    return rows, unmatched


def read_examples(path: Path = EXAMPLES_FILE) -> list[tuple[str, str, str]]:
    """The written examples: (label, type or what it is, text) per line; ``#`` lines are comments."""
    with open(path, encoding="utf-8") as handle:
        lines = [line for line in handle if line.strip() and not line.startswith("#")]
    return [(row[0], row[1], row[2]) for row in csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)]


def read_clause_labels(path: Path = CLAUSE_LABELS_FILE) -> dict[str, list]:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)["messages"]


def fit_rows(rows: Sequence[TrainingRow], encoder, *, l2: float, type_l2: float, threshold: float,
             example_weight: float, info: dict | None = None) -> StatementModel:
    """Fit the classifier on ``rows`` (written examples weighted ``example_weight``, the set's clauses 1)."""
    vectors = encoder.embed([item_content(r.text) for r in rows])
    features = clause_inputs(rows, vectors, [r.previous for r in rows])
    typed = [i for i, r in enumerate(rows) if r.keep and r.type]
    weight = np.array([example_weight if r.group == "examples" else 1.0 for r in rows])
    return fit_statement_model(features, [r.keep for r in rows], features[typed], [rows[i].type for i in typed],
                               l2=l2, type_l2=type_l2, threshold=threshold, keep_weight=weight, info=info)


def fold_of(message_id: str, folds: int = FOLDS) -> int:
    """A message's fold, fixed by its id (stable across runs and machines)."""
    return int(hashlib.sha256(message_id.encode("utf-8")).hexdigest(), 16) % folds


def fold_extractors(*, data: dict, rows: Sequence[TrainingRow], encoder, hyper: dict[str, float],
                    folds: int = FOLDS) -> Iterator[tuple[list[dict], OfflineExtractor]]:
    """Per fold: its messages of ``data``, and an extractor whose classifier was fitted without them (the
    written examples always in)."""
    for fold in range(folds):
        held_out = [i for i in data["items"] if fold_of(i["id"], folds) == fold]
        ids = {i["id"] for i in held_out}
        model = fit_rows([r for r in rows if r.group not in ids], encoder, **hyper)
        yield held_out, OfflineExtractor(encoder=encoder, model=model)


def cross_validate(*, data: dict, rows: Sequence[TrainingRow], encoder, hyper: dict[str, float],
                   on_message: Callable[[], None] | None = None) -> dict[str, ExtractionReport]:
    """Each message of ``data`` run through the product's path by :func:`fold_extractors`' extractor of its
    fold. Returns the report per message id."""
    results: dict[str, ExtractionReport] = {}
    for held_out, extractor in fold_extractors(data=data, rows=rows, encoder=encoder, hyper=hyper):
        for item in held_out:
            results[item["id"]] = run_message(item, extractor)
            if on_message:
                on_message()
    return results


def trained_on(data: dict, model: StatementModel | None = None) -> bool:
    """Whether ``data`` is the set the shipped classifier was trained on."""
    model = model or shipped_statement_model()
    return model.info.get("trained_on", {}).get("fingerprint") == set_fingerprint(data)


def extraction_evaluate_set(*, data: dict, extractor: MemoryExtractor | None = None,
                            on_message: Callable[[], None] | None = None) -> dict[str, Any]:
    """:func:`extraction_evaluate`, except that the offline extractor on the set it was trained on is
    cross-validated (see the module docstring). ``extractor`` None means the offline one."""
    if extractor is not None and not isinstance(extractor, OfflineExtractor):
        return extraction_evaluate(data=data, extractor=extractor, on_message=on_message)
    model = shipped_statement_model()
    if not trained_on(data, model):
        return extraction_evaluate(data=data, extractor=extractor or OfflineExtractor(), on_message=on_message)
    encoder = MemoEmbedder(UniversalSentenceEncoder())
    rows, _unmatched = training_rows(dev=data, clause_labels=read_clause_labels(), examples=read_examples())
    hyper = {key: model.info["hyper"][key] for key in ("l2", "type_l2", "threshold", "example_weight")}
    results = cross_validate(data=data, rows=rows, encoder=encoder, hyper=hyper, on_message=on_message)
    report = extraction_figures(data, results)
    report["extractor"] = OfflineExtractor.name
    report["method"] = f"{FOLDS}-fold cross-validation (the set the shipped classifier was trained on)"
    return report
