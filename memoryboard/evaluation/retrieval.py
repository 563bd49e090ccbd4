"""Retrieval evaluation: recall@1/@5/@10 and MRR of the one search on a set of items and queries.

The set is JSON (documented in docs/retrieval.md)::

    {"items": [{"id": "tea", "content": "User likes green tea", "type": "PREFERENCE", "lang": "en"}, ...],
     "queries": [{"query": "我平时爱喝什么", "expected": ["tea"], "lang": "zh", "kind": "cross_lingual"}, ...]}

The items are written under a namespace of their own inside a transaction that is rolled back at the
end: nothing stays in the database. Each query is searched with ``retrieval.memory_rank`` (the hybrid
score and the minimum relevance, as an agent's retrieval applies them); the same ranking, ordered by its cosine
part alone or by the keyword score alone, gives the semantic and keyword baselines (no threshold). The
model baseline orders the items by the plain cosine of the embedder's vectors of the query and the
items (no query view, no language axis: what the model gives by itself).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
from django.db import transaction

from memoryboard.llm.factory import get_embedder
from memoryboard.ltm.search.embeddings import memory_embed_many
from memoryboard.ltm.search.ranking import KeywordIndex
from memoryboard.ltm.search.retrieval import (
    format_memory_block,
    memory_rank,
    memory_retrieve_ranking,
    namespace_scope,
)
from memoryboard.ltm.store.upsert import memory_upsert_many
from memoryboard.ltm.write.items import memory_build
from memoryboard.models.namespaces import build_namespace

CUTOFFS = (1, 5, 10)
EVAL_AGENT = "memory-eval"
EVAL_USER = "memory-eval"
MODES = ("hybrid", "semantic", "keyword", "model")
# Each query's ``split`` (fixed in the file): the constants of ``ltm.search.ranking`` are chosen on dev, test is
# held out (docs/retrieval.md). The bilingual set's dev is its queries at even positions.
SPLITS = ("dev", "test")


class EvalSetError(ValueError):
    """The evaluation file is not of the documented shape; ``field`` names the place."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def validate_eval_set(data: Any) -> None:
    """Raise :class:`EvalSetError` naming the first field at fault."""
    if not isinstance(data, dict):
        raise EvalSetError("$", "must be an object with 'items' and 'queries'")
    items, queries = data.get("items"), data.get("queries")
    if not isinstance(items, list) or not items:
        raise EvalSetError("items", "must be a non-empty list")
    if not isinstance(queries, list) or not queries:
        raise EvalSetError("queries", "must be a non-empty list")
    ids = set()
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise EvalSetError(f"items[{i}]", "must be an object")
        for key in ("id", "content"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise EvalSetError(f"items[{i}].{key}", "must be a non-empty string")
        if item["id"] in ids:
            raise EvalSetError(f"items[{i}].id", f"duplicate id {item['id']!r}")
        ids.add(item["id"])
    for i, query in enumerate(queries):
        if not isinstance(query, dict):
            raise EvalSetError(f"queries[{i}]", "must be an object")
        if not isinstance(query.get("query"), str) or not query["query"].strip():
            raise EvalSetError(f"queries[{i}].query", "must be a non-empty string")
        expected = query.get("expected")
        if not isinstance(expected, list) or not expected or not all(isinstance(e, str) for e in expected):
            raise EvalSetError(f"queries[{i}].expected", "must be a non-empty list of item ids")
        unknown = [e for e in expected if e not in ids]
        if unknown:
            raise EvalSetError(f"queries[{i}].expected", f"unknown item id {unknown[0]!r}")


class _Rollback(Exception):
    pass


def _metrics(ranks: list[int | None]) -> dict[str, float]:
    """recall@N and MRR from the rank (1-based) of each query's first expected item, None if missed."""
    n = len(ranks) or 1
    out = {f"recall@{c}": sum(1 for r in ranks if r is not None and r <= c) / n for c in CUTOFFS}
    out["mrr"] = sum(1.0 / r for r in ranks if r is not None) / n
    out["queries"] = len(ranks)
    return {key: round(value, 4) if isinstance(value, float) else value for key, value in out.items()}


def _order(candidates, part: str) -> list[str]:
    """Candidate ids by one score part alone (ties by id, so no other part breaks them)."""
    scored = [c for c in candidates if c.parts is not None]
    return [c.memory_id for c in sorted(scored, key=lambda c: (-getattr(c.parts, part), c.memory_id))]


def memory_evaluate(
    *, data: dict, embedder=None, on_query: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Evaluate the search on ``data`` (see the module docstring).

    Returns:
        ``{"model", "items", "queries", "overall": {mode: metrics}, "by_language": {"en→zh": {mode:
        metrics}}, "by_type": {...}, "by_kind": {...}, "by_split": {...}}``; metrics are recall@1/5/10,
        mrr, queries. ``by_split`` groups the queries by their ``split`` (dev, test).
    """
    validate_eval_set(data)
    if embedder is None:
        embedder = get_embedder()
    namespace = build_namespace(agent_namespace=EVAL_AGENT, user_id=EVAL_USER)
    items = {item["id"]: item for item in data["items"]}
    groups: dict[str, dict[str, dict[str, list]]] = {
        "overall": defaultdict(lambda: defaultdict(list)),
        "by_language": defaultdict(lambda: defaultdict(list)),
        "by_type": defaultdict(lambda: defaultdict(list)),
        "by_kind": defaultdict(lambda: defaultdict(list)),
        "by_split": defaultdict(lambda: defaultdict(list)),
    }
    report: dict[str, Any] = {}
    try:
        with transaction.atomic():
            memories = [
                memory_build(namespace=namespace, content=item["content"], memory_type=item.get("type") or "FACT",
                             source="manual", agent_id=EVAL_AGENT, memory_id="eval:" + item["id"])
                for item in data["items"]
            ]
            memory_upsert_many(memories)
            vectors = memory_embed_many(memories, embedder=embedder, return_vectors=True)
            query_vectors = embedder.embed([query["query"] for query in data["queries"]])
            scope = namespace_scope(namespace)
            for position, query in enumerate(data["queries"]):
                found = memory_rank(queryset=scope, query=query["query"], k=max(CUTOFFS), embedder=embedder)
                expected = {"eval:" + e for e in query["expected"]}
                orders = {
                    "hybrid": [r.memory.pk for r in found.results],
                    "semantic": _order(found.candidates, "cosine"),
                    "keyword": _order(found.candidates, "keyword"),
                    "model": [memories[i].pk for i in np.argsort(-(vectors @ query_vectors[position]), kind="stable")],
                }
                first = items[query["expected"][0]]
                pair = f"{query.get('lang') or '?'}→{first.get('lang') or '?'}"
                keys = {"overall": "all", "by_language": pair, "by_type": (first.get("type") or "FACT").upper(),
                        "by_kind": query.get("kind") or "?", "by_split": query.get("split") or "?"}
                for mode, order in orders.items():
                    rank = next((i + 1 for i, pk in enumerate(order) if pk in expected), None)
                    for group, key in keys.items():
                        groups[group][key][mode].append(rank)
                if on_query is not None:
                    on_query(1)
            raise _Rollback
    except _Rollback:
        pass
    report["model"] = embedder.name
    report["items"] = len(data["items"])
    report["queries"] = len(data["queries"])
    for group, by_key in groups.items():
        table = {key: {mode: _metrics(ranks) for mode, ranks in modes.items()} for key, modes in sorted(by_key.items())}
        report[group] = table["all"] if group == "overall" else table
    return report


# --- the conversation set (tests/data/conversation_eval.json) -------------------------------------

STORES = ("turns", "observations")


def conversation_items(conversation: dict, store: str) -> list[dict]:
    """The items one conversation stores: its raw turns ("[date] Speaker: text", type EPISODE, dated by
    the text) or its extracted observations (dated by ``validFrom``)."""
    if store == "turns":
        return [{"id": turn["id"], "content": f"[{session['date']}] {turn['speaker']}: {turn['text']}",
                 "type": "EPISODE"}
                for session in conversation["sessions"] for turn in session["turns"]]
    return [{"id": item["id"], "content": item["content"], "type": item.get("type") or "FACT",
             "validFrom": item.get("validFrom")} for item in conversation["observations"]]


def conversation_expected(query: dict, conversation: dict, store: str) -> set[str]:
    """The items of ``store`` that hold a query's evidence: its turns, or the observations made of them."""
    evidence = set(query["evidence"])
    if store == "turns":
        return evidence
    return {item["id"] for item in conversation["observations"] if evidence & set(item.get("evidence") or [])}


CONVERSATION_MODES = ("search", "agent", "bm25", "model", "rrf")
RRF_K = 60  # reciprocal rank fusion's constant for the plain baseline (the usual 60)


def is_conversation_set(data: Any) -> bool:
    return isinstance(data, dict) and "conversations" in data


def validate_conversation_set(data: Any) -> None:
    """Raise :class:`EvalSetError` naming the first field at fault (the conversation set's shape)."""
    conversations, queries = data.get("conversations"), data.get("queries")
    if not isinstance(conversations, list) or not conversations:
        raise EvalSetError("conversations", "must be a non-empty list")
    if not isinstance(queries, list) or not queries:
        raise EvalSetError("queries", "must be a non-empty list")
    turns: dict[str, set[str]] = {}
    for i, conversation in enumerate(conversations):
        if not isinstance(conversation, dict) or not isinstance(conversation.get("id"), str):
            raise EvalSetError(f"conversations[{i}].id", "must be a string")
        if not isinstance(conversation.get("sessions"), list) or not conversation["sessions"]:
            raise EvalSetError(f"conversations[{i}].sessions", "must be a non-empty list")
        ids = turns.setdefault(conversation["id"], set())
        for j, session in enumerate(conversation["sessions"]):
            if not isinstance(session, dict) or not isinstance(session.get("date"), str):
                raise EvalSetError(f"conversations[{i}].sessions[{j}].date", "must be a date (YYYY-MM-DD)")
            for k, turn in enumerate(session.get("turns") or []):
                for key in ("id", "speaker", "text"):
                    if not isinstance(turn, dict) or not isinstance(turn.get(key), str) or not turn[key].strip():
                        raise EvalSetError(f"conversations[{i}].sessions[{j}].turns[{k}].{key}",
                                           "must be a non-empty string")
                ids.add(turn["id"])
        for j, item in enumerate(conversation.get("observations") or []):
            if not isinstance(item, dict) or not isinstance(item.get("content"), str) or not item["content"].strip():
                raise EvalSetError(f"conversations[{i}].observations[{j}].content", "must be a non-empty string")
    for i, query in enumerate(queries):
        if not isinstance(query, dict) or not isinstance(query.get("query"), str) or not query["query"].strip():
            raise EvalSetError(f"queries[{i}].query", "must be a non-empty string")
        if query.get("conversation") not in turns:
            raise EvalSetError(f"queries[{i}].conversation", "must name a conversation")
        evidence = query.get("evidence")
        if not isinstance(evidence, list) or not evidence or not set(evidence) <= turns[query["conversation"]]:
            raise EvalSetError(f"queries[{i}].evidence", "must be a non-empty list of the conversation's turn ids")


def _evidence_recall(order: list[str], expected: set[str], cutoff: int) -> float:
    return len(set(order[:cutoff]) & expected) / len(expected)


def _rank_positions(scores: np.ndarray) -> np.ndarray:
    order = np.argsort(-scores, kind="stable")
    ranks = np.empty(len(scores), dtype=np.float64)
    ranks[order] = np.arange(1, len(scores) + 1)
    return ranks


def conversation_evaluate(
    *, data: dict, embedder=None, on_query: Callable[[int], None] | None = None, k: int = 10,
    split: str | None = None,
) -> dict[str, Any]:
    """Evaluate the search on the conversation set: each conversation's turns, then its observations,
    stored as one user's items (a user per conversation and store); each question asked at its
    ``asked_at`` date through the end user's search (``search``: ``memory_rank`` over the user's items,
    the k best without the agent's minimum relevance, as ``memory_search``) and the agent's injection
    path (``agent``: ``memory_retrieve`` and ``format_memory_block`` with K = ``k``, minimum relevance
    applied: is the evidence in the memory block?), next to the plain
    baselines over the same items: ``bm25`` (bm25s with the project's tokens), ``model`` (the
    embedder's plain cosine), ``rrf`` (reciprocal rank fusion of both, k = 60).

    Args:
        split: the name the figures are reported under; default each conversation's ``split`` ("all"
            when it has none: the development and blind sets are one split each, by file).

    Returns:
        ``{"model", "conversations", "queries", "k", "by_split": {split: {store: {kind: {mode: {"recall@k",
        "hit@1", "queries"}}}}}, "by_language": {split: {store: {lang: {mode: ...}}}}}``; kind "all" is every
        question, lang the question's. recall@k is the share of a question's evidence items found in the
        first ``k``, averaged over the questions.
    """
    validate_conversation_set(data)
    if embedder is None:
        embedder = get_embedder()
    table: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(lambda: defaultdict(list))))
    languages: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(lambda: defaultdict(list))))
    unanswerable: dict = defaultdict(lambda: defaultdict(int))
    queries_of: dict[str, list[dict]] = defaultdict(list)
    for query in data["queries"]:
        queries_of[query["conversation"]].append(query)
    try:
        with transaction.atomic():
            for conversation in data["conversations"]:
                label = split or conversation.get("split") or "all"
                for store in STORES:
                    items = conversation_items(conversation, store)
                    if not items:
                        continue
                    namespace = build_namespace(agent_namespace=EVAL_AGENT,
                                                user_id=f"{EVAL_USER}-{conversation['id']}-{store}")
                    memories = []
                    for item in items:
                        memory = memory_build(namespace=namespace, content=item["content"],
                                              memory_type=item["type"], source="manual", agent_id=EVAL_AGENT,
                                              memory_id=f"eval:{store}:{item['id']}")
                        if item.get("validFrom"):
                            memory.value_json["validFrom"] = f"{item['validFrom']}T00:00:00Z"
                        memories.append(memory)
                    memory_upsert_many(memories)
                    vectors = memory_embed_many(memories, embedder=embedder, return_vectors=True)
                    contents = [m.content for m in memories]
                    keywords = KeywordIndex(contents)
                    pks = [m.pk for m in memories]
                    scope = namespace_scope(namespace)
                    for query in queries_of[conversation["id"]]:
                        text = query["query"]
                        asked = dt.datetime.fromisoformat(query["asked_at"]).replace(tzinfo=dt.UTC)
                        expected = {f"eval:{store}:{e}" for e in conversation_expected(query, conversation, store)}
                        if not expected:  # no observation was made of the question's evidence turns
                            unanswerable[label][store] += 1
                            if on_query is not None:
                                on_query(1)
                            continue
                        # The end user's search (memory_search's k best, no minimum), asked at its date.
                        found = memory_rank(queryset=scope, query=text, k=k, embedder=embedder,
                                            user_id=namespace.user_id, now=asked, min_relevance=0.0)
                        agent = memory_retrieve_ranking(namespace=namespace, query=text, k=k, embedder=embedder,
                                                        log_access=False, enabled=True, now=asked)
                        block = format_memory_block(agent.results if agent else [])
                        lines = block.splitlines()[2:-1]  # "N. [TYPE] content (相关度: 0.92)"
                        in_block = [pk for line in lines for pk, content in zip(pks, contents)
                                    if f"] {' '.join(content.split())} (相关度:" in line]
                        model = vectors @ np.asarray(embedder.embed([text])[0], dtype=np.float32)
                        bm25 = keywords.raw_scores(text)
                        rrf = 1.0 / (RRF_K + _rank_positions(model)) + np.where(
                            bm25 > 0, 1.0 / (RRF_K + _rank_positions(bm25)), 0.0)
                        orders = {
                            "search": [r.memory.pk for r in found.results],
                            "agent": in_block,
                            "bm25": [pks[i] for i in np.argsort(-bm25, kind="stable") if bm25[i] > 0],
                            "model": [pks[i] for i in np.argsort(-model, kind="stable")],
                            "rrf": [pks[i] for i in np.argsort(-rrf, kind="stable")],
                        }
                        for mode, order in orders.items():
                            # The block: every item whose text it holds (two items may say the same).
                            recall = _evidence_recall(order, expected, len(order) if mode == "agent" else k)
                            hit = 1.0 if order[:1] and order[0] in expected else 0.0
                            for kind in (query.get("kind") or "?", "all"):
                                table[label][store][kind][mode].append((recall, hit))
                            languages[label][store][query.get("lang") or "?"][mode].append((recall, hit))
                        if on_query is not None:
                            on_query(1)
            raise _Rollback
    except _Rollback:
        pass
    report: dict[str, Any] = {"model": embedder.name, "conversations": len(data["conversations"]),
                              "queries": len(data["queries"]), "k": k, "by_split": {}, "by_language": {},
                              "unanswerable": {label: dict(stores) for label, stores in unanswerable.items()}}
    for key, source in (("by_split", table), ("by_language", languages)):
        for label, stores in sorted(source.items()):
            report[key][label] = {
                store: {kind: {mode: {f"recall@{k}": round(float(np.mean([r for r, _h in values])), 4),
                                      "hit@1": round(float(np.mean([h for _r, h in values])), 4),
                                      "queries": len(values)}
                               for mode, values in modes.items()}
                        for kind, modes in sorted(kinds.items())}
                for store, kinds in stores.items()}
    return report
