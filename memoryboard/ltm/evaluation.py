"""Retrieval evaluation: recall@1/@5/@10 and MRR of the one search on a set of items and queries.

The set is JSON (documented in docs/retrieval.md)::

    {"items": [{"id": "tea", "content": "User likes green tea", "type": "PREFERENCE", "lang": "en"}, ...],
     "queries": [{"query": "我平时爱喝什么", "expected": ["tea"], "lang": "zh", "kind": "cross_lingual"}, ...]}

The items are written under a namespace of their own inside a transaction that is rolled back at the
end: nothing stays in the database. Each query is searched with ``retrieval.memory_rank`` (the hybrid
score and the minimum relevance, as every user meets them); the same ranking, ordered by its cosine
part alone or by the keyword score alone, gives the semantic and keyword baselines (no threshold). The
model baseline orders the items by the plain cosine of the embedder's vectors of the query and the
items (no query view, no language axis: what the model gives by itself).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
from django.db import transaction

CUTOFFS = (1, 5, 10)
EVAL_AGENT = "memory-eval"
EVAL_USER = "memory-eval"
MODES = ("hybrid", "semantic", "keyword", "model")
# The queries at even positions (0, 2, …) tuned the constants of ``ltm.ranking``; those at odd
# positions were held out (docs/retrieval.md).
HALVES = ("even (tuning)", "odd (held out)")


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
        metrics}}, "by_type": {...}, "by_kind": {...}, "by_half": {...}}``; metrics are recall@1/5/10,
        mrr, queries. ``by_half`` splits the queries by position (even: tuning, odd: held out).
    """
    from memoryboard.ltm.embeddings import memory_embed_many
    from memoryboard.ltm.namespaces import build_namespace
    from memoryboard.ltm.retrieval import memory_rank, namespace_scope
    from memoryboard.ltm.services import memory_build
    from memoryboard.ltm.store import memory_upsert_many

    validate_eval_set(data)
    if embedder is None:
        from memoryboard.llm.factory import get_embedder

        embedder = get_embedder()
    namespace = build_namespace(agent_namespace=EVAL_AGENT, user_id=EVAL_USER)
    items = {item["id"]: item for item in data["items"]}
    groups: dict[str, dict[str, dict[str, list]]] = {
        "overall": defaultdict(lambda: defaultdict(list)),
        "by_language": defaultdict(lambda: defaultdict(list)),
        "by_type": defaultdict(lambda: defaultdict(list)),
        "by_kind": defaultdict(lambda: defaultdict(list)),
        "by_half": defaultdict(lambda: defaultdict(list)),
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
                        "by_kind": query.get("kind") or "?", "by_half": HALVES[position % 2]}
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
