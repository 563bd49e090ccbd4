"""Retrieval quality of the offline embedder on a small bilingual set shipped with the tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memoryboard.ltm.namespaces import build_namespace
from memoryboard.ltm.retrieval import memory_retrieve
from memoryboard.ltm.services import memory_build
from memoryboard.ltm.embeddings import memory_embed_many
from memoryboard.ltm.store import memory_upsert_many

pytestmark = pytest.mark.django_db

DATA = json.loads((Path(__file__).parent / "data" / "retrieval_quality.json").read_text(encoding="utf-8"))
MIN_RECALL_AT_3 = 0.85


def test_recall_at_3_on_the_bilingual_set(use_embedder):
    ns = build_namespace(agent_namespace="chat", user_id="42")
    items = [
        memory_build(namespace=ns, content=item["content"], memory_type=item["type"], source="manual",
                     agent_id="chat", memory_id=item["id"])
        for item in DATA["items"]
    ]
    memory_upsert_many(items)
    memory_embed_many(items)

    recalls = []
    misses = []
    for case in DATA["queries"]:
        found = [s.memory.pk for s in memory_retrieve(namespace=ns, query=case["query"], k=3, log_access=False)]
        relevant = set(case["relevant"])
        recall = len(relevant & set(found)) / len(relevant)
        recalls.append(recall)
        if recall < 1:
            misses.append((case["query"], found))
    mean = sum(recalls) / len(recalls)
    assert mean >= MIN_RECALL_AT_3, f"recall@3 {mean:.2f}; misses: {misses}"
