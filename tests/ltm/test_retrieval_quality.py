"""Retrieval quality of the offline embedder on a small bilingual set shipped with the tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.search.retrieval import memory_retrieve
from memoryboard.ltm.write.items import memory_build
from memoryboard.ltm.search.embeddings import memory_embed_many
from memoryboard.ltm.store.upsert import memory_upsert_many

pytestmark = pytest.mark.django_db

DATA = json.loads((Path(__file__).parents[1] / "data" / "retrieval_quality.json").read_text(encoding="utf-8"))
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


# --- the bilingual evaluation set (tests/data/bilingual_eval.json) ----------------------------

EVAL_SET = json.loads((Path(__file__).parents[1] / "data" / "bilingual_eval.json").read_text(encoding="utf-8"))
# The floor of recall@1 of the search as users meet it (hybrid, minimum relevance applied): 0.85 while
# the constants were tuned on this set, 0.81 while they were chosen on its dev split and the team's
# conversations; since they are chosen on the development conversations written from a brief of how
# people talk (tests/data/dev), this set of one-sentence facts asked in the other language is a guard
# that the ranking does not collapse: 0.795, the model alone 0.821 (without the query's content words,
# which paid here but not on the blind conversations: docs/retrieval.md § The ranking).
MIN_RECALL_AT_1 = 0.78
# How far below the model's plain cosine the hybrid's recall@1 may be on this set.
MODEL_MARGIN = 0.04
# Queries the default model places away from every item of the set (best cosine < 0.16).
UNRELATED = ["What is the boiling point of mercury?", "Who won the 1998 football World Cup?",
             "1998年世界杯冠军是谁", "火山是怎么形成的"]


def test_hybrid_does_not_collapse_on_short_facts_asked_in_the_other_language(use_embedder):
    from memoryboard.evaluation.retrieval import memory_evaluate

    report = memory_evaluate(data=EVAL_SET, embedder=use_embedder)
    hybrid, semantic, model = (report["overall"][mode] for mode in ("hybrid", "semantic", "model"))
    assert hybrid["recall@1"] >= MIN_RECALL_AT_1, report["overall"]
    assert hybrid["recall@5"] >= 0.95 and hybrid["mrr"] >= semantic["mrr"] - 0.04, report["overall"]
    # The model's plain cosine (no query view) is the plain baseline the score stays near.
    assert hybrid["recall@1"] >= model["recall@1"] - MODEL_MARGIN, report["overall"]


def test_an_unrelated_query_returns_nothing(use_embedder):
    from memoryboard.ltm.search.retrieval import memory_rank, namespace_scope

    ns = build_namespace(agent_namespace="chat", user_id="42")
    items = [memory_build(namespace=ns, content=item["content"], memory_type=item["type"], source="manual",
                          agent_id="chat", memory_id=item["id"]) for item in EVAL_SET["items"]]
    memory_upsert_many(items)
    memory_embed_many(items)
    for query in UNRELATED:
        found = memory_rank(queryset=namespace_scope(ns), query=query, k=10, user_id="42")
        assert found.results == [], (query, [(r.memory.content, r.parts.cosine) for r in found.results])
        assert found.summary() == {"below_threshold": len(items)}
    # The same scope still answers a related query, in the other language.
    found = memory_rank(queryset=namespace_scope(ns), query="does the user own any pets?", k=1, user_id="42")
    assert [r.memory.pk for r in found.results] == ["cat"]


# --- the conversation set (tests/data/conversation_eval.json) ------------------------------------

CONVERSATIONS = json.loads((Path(__file__).parents[1] / "data" / "conversation_eval.json").read_text(encoding="utf-8"))


def test_on_held_out_conversations_the_search_beats_every_plain_baseline_on_every_kind(use_embedder):
    """The test split (conversations never looked at while choosing the constants), both stores: the
    end user's search holds at least as much of the evidence as BM25, the model or their fusion on every
    kind of question; the agent's memory block (minimum relevance applied) holds no more than the search,
    and more than every baseline overall and on single facts and time questions (on paraphrases the
    minimum relevance costs it against the model alone: docs/retrieval.md § Fusion)."""
    from memoryboard.evaluation.retrieval import conversation_evaluate

    test = {"conversations": [c for c in CONVERSATIONS["conversations"] if c["split"] == "test"]}
    test["queries"] = [q for q in CONVERSATIONS["queries"] if q["split"] == "test"]
    report = conversation_evaluate(data=test, embedder=use_embedder)
    for store, kinds in report["by_split"]["test"].items():
        assert set(kinds) == {"all", "single", "multi", "time", "paraphrase"}, kinds.keys()
        for kind, by_mode in kinds.items():
            modes = {mode: m["recall@10"] for mode, m in by_mode.items()}
            best = max(modes["bm25"], modes["model"], modes["rrf"])
            assert modes["search"] >= best and modes["agent"] <= modes["search"], (store, kind, modes)
            if kind in ("all", "single", "time"):
                assert modes["agent"] >= best, (store, kind, modes)
        assert kinds["time"]["search"]["recall@10"] >= 0.75, (store, kinds["time"])
