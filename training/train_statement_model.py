"""Train the offline statement classifier and write ``memoryboard/llm/statement_model.npz``.

    .venv/bin/python training/train_statement_model.py            # fit with the constants below, write the weights
    .venv/bin/python training/train_statement_model.py --search   # cross-validate a grid of constants, write nothing

Data: the development set ``tests/data/dev/extraction.json`` (its keep messages' clauses labelled by hand in
``training/dev_clause_labels.json``, every clause of a skip message 0) and the clauses written for it in
``training/statement_examples.tsv`` (which also carry the types). Never the blind set: it is only run by
``manage.py memory_eval --suite extraction`` to report.

The constants (penalty, weight of the written examples, threshold) are chosen by 5-fold cross-validation over
the development set's messages (folds by message id, the written examples in every training fold), on the
product's path (the chat filter, then the clauses): message-level F1, precision first on a tie. The
cross-validated figures are what ``memory_eval`` reports for dev.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryboard.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402

from memoryboard.evaluation.extraction import (  # noqa: E402
    FOLDS,
    fit_rows,
    fold_extractors,
    read_clause_labels,
    read_examples,
    set_fingerprint,
    training_rows,
)
from memoryboard.llm.embeddings import UniversalSentenceEncoder  # noqa: E402
from memoryboard.llm.extraction import clause_inputs, item_content  # noqa: E402
from memoryboard.llm.statement_model import WEIGHTS_FILE  # noqa: E402
from memoryboard.ltm.search.retrieval import MemoEmbedder  # noqa: E402
from memoryboard.ltm.write.extraction import text_skip_reason  # noqa: E402

DEV = ROOT / "tests" / "data" / "dev" / "extraction.json"

# Chosen with --search (see the module docstring).
HYPER = {"l2": 1.0, "type_l2": 0.03, "threshold": 0.55, "example_weight": 2.0}
GRID = {"l2": [0.1, 0.3, 1.0, 3.0], "example_weight": [0.5, 1.0, 2.0]}
THRESHOLDS = [round(t, 2) for t in np.arange(0.2, 0.81, 0.05)]


def message_scores(dev, rows, encoder, hyper):
    """Per message, held out: its scored clauses' keep probabilities ([] when the chat filter drops it)."""
    scores = {}
    for held_out, extractor in fold_extractors(data=dev, rows=rows, encoder=encoder, hyper=hyper):
        for item in held_out:
            dropped = item.get("channel", "chat") == "chat" and text_skip_reason(item["text"], [])
            scores[item["id"]] = [] if dropped else [
                c.probability for c in extractor.score([item["text"]])[0] if not c.skipped_as]
    return scores


def f_measure(dev, scores, threshold):
    keep = {i["id"] for i in dev["items"] if i["label"] == "keep"}
    stored = {mid for mid, probs in scores.items() if any(p >= threshold for p in probs)}
    recall = len(stored & keep) / len(keep)
    precision = len(stored & keep) / len(stored) if stored else 0.0
    f1 = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
    return f1, precision, recall


def type_accuracy(rows, encoder, type_l2):
    """Leave-one-fold-out accuracy of the types over the written keep examples (5 folds by position)."""
    typed = [r for r in rows if r.keep and r.type]
    hits = 0
    for fold in range(FOLDS):
        train = [r for i, r in enumerate(typed) if i % FOLDS != fold]
        test = [r for i, r in enumerate(typed) if i % FOLDS == fold]
        model = fit_rows(train, encoder, l2=1.0, type_l2=type_l2, threshold=0.5, example_weight=1.0)
        features = clause_inputs(test, encoder.embed([item_content(r.text) for r in test]), [r.previous for r in test])
        hits += sum(kind == r.type for kind, r in zip(model.types(features), test))
    return hits / len(typed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--search", action="store_true", help="cross-validate the grid; write nothing")
    args = parser.parse_args()

    dev = json.loads(DEV.read_text(encoding="utf-8"))
    rows, unmatched = training_rows(dev=dev, clause_labels=read_clause_labels(), examples=read_examples())
    encoder = MemoEmbedder(UniversalSentenceEncoder())
    encoder.embed([item_content(r.text) for r in rows])
    print(f"{len(rows)} training clauses ({sum(r.keep for r in rows)} keep), {unmatched} labelled clauses unmatched")

    if args.search:
        for l2, weight in itertools.product(GRID["l2"], GRID["example_weight"]):
            hyper = {**HYPER, "l2": l2, "example_weight": weight}
            scores = message_scores(dev, rows, encoder, hyper)
            best = max((f_measure(dev, scores, t) + (t,) for t in THRESHOLDS), key=lambda x: (round(x[0], 3), x[1]))
            print(f"l2={l2:<5} examples×{weight:<4} best t={best[3]:.2f}: F1 {best[0]:.3f} "
                  f"precision {best[1]:.3f} recall {best[2]:.3f}")
        for type_l2 in (0.01, 0.03, 0.1, 0.3):
            print(f"types: type_l2={type_l2}: accuracy {type_accuracy(rows, encoder, type_l2):.3f} (written examples)")
        return

    scores = message_scores(dev, rows, encoder, HYPER)
    f1, precision, recall = f_measure(dev, scores, HYPER["threshold"])
    model = fit_rows(rows, encoder, **HYPER, info={
        "hyper": HYPER,
        "trained_on": {"path": "tests/data/dev/extraction.json", "fingerprint": set_fingerprint(dev),
                       "clauses": len(rows), "keep": int(sum(r.keep for r in rows))},
        "cross_validated": {"folds": FOLDS, "f1": round(f1, 4), "precision": round(precision, 4),
                            "recall": round(recall, 4)},
        "written": dt.date.today().isoformat(),
    })
    model.save(WEIGHTS_FILE)
    print(f"cross-validated on dev ({FOLDS} folds): F1 {f1:.3f}, precision {precision:.3f}, recall {recall:.3f}")
    print(f"wrote {WEIGHTS_FILE.relative_to(ROOT)} ({WEIGHTS_FILE.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
