"""Semantic retrieval of long-term memory: cosine top-K with numpy, and the injected prompt block.

Vectors are unit length (every embedder normalizes), so the cosine is a dot product. One query
reads the candidate ids, vectors and pause flags (LEFT JOINs of the scoped items with their vectors for
the current model and their flags); items without a vector are embedded on the fly and stored; a
second query loads the top-K rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import Exists, FilteredRelation, OuterRef, Q, QuerySet
from django.utils import timezone

from memoryboard.ltm.embeddings import memory_embed_many
from memoryboard.ltm.namespaces import Namespace, agent_prefix, user_suffix
from memoryboard.models import (
    LongTermMemory,
    MemoryAccess,
    MemoryEmbedding,
    MemoryFlag,
    PauseRule,
    UserMemorySettings,
)

DEFAULT_K = 10
MAX_K = 100
# Rows scored per step: bounds memory when a staff search spans every user's items.
CHUNK_ROWS = 20_000
# Items without a vector embedded during one search at most; ``manage.py reembed`` does the rest.
MAX_EMBED_ON_THE_FLY = 1_000

MEMORY_BLOCK_HEADER = "以下是你对该用户的长期记忆："


@dataclass(frozen=True)
class ScoredMemory:
    """A retrieved item and its cosine similarity to the query."""

    memory: LongTermMemory
    score: float

    def to_dict(self) -> dict:
        """The JSON shape used by the agent endpoint and the memory_search tool."""
        return {
            "id": self.memory.pk,
            "type": self.memory.memory_type,
            "content": self.memory.content,
            "score": round(float(self.score), 4),
        }


def _embedder(embedder=None):
    if embedder is not None:
        return embedder
    from memoryboard.llm.factory import get_embedder

    return get_embedder()


def _pause_rule_q(rules: Iterable[tuple[str, str, str]]) -> Q | None:
    """A Q matching items covered by pause rules ``(user_id, agent_namespace, memory_type)``."""
    combined: Q | None = None
    for user_id, agent_namespace, memory_type in rules:
        q = Q(namespace__endswith=user_suffix(user_id))
        if agent_namespace:
            q &= Q(namespace__startswith=agent_prefix(agent_namespace))
        if memory_type:
            q &= Q(value_json__type=memory_type.upper())
        combined = q if combined is None else combined | q
    return combined


def _not_paused_by_rules(qs: QuerySet[LongTermMemory], user_id: str | None) -> QuerySet[LongTermMemory]:
    """``qs`` without the items covered by pause rules: the given user's rules, or every rule.

    The rules are read with a plain query (one indexed lookup for a user; the ORM's compilation
    would cost more than the query on the search's hot path).
    """
    sql = f"SELECT user_id, agent_namespace, memory_type FROM {PauseRule._meta.db_table}"
    with connection.cursor() as cursor:
        cursor.execute(sql if user_id is None else sql + " WHERE user_id = %s", [] if user_id is None else [user_id])
        rule_q = _pause_rule_q(cursor.fetchall())
    return qs if rule_q is None else qs.exclude(rule_q)


def active_memories(qs: QuerySet[LongTermMemory], *, user_id: str | None = None) -> QuerySet[LongTermMemory]:
    """Restrict ``qs`` to items that may be retrieved: not archived, not paused (flag or rule).

    Args:
        qs: a caller-scoped queryset.
        user_id: when the caller is known to read one user's items, only that user's pause rules
            are read; otherwise every rule is applied.

    Returns:
        The filtered queryset.
    """
    qs = qs.filter(archived=False).exclude(
        Exists(MemoryFlag.objects.filter(memory_id=OuterRef("pk"), paused=True))
    )
    return _not_paused_by_rules(qs, user_id)


def _joined_rows(qs: QuerySet[LongTermMemory], embedder, *, limit: int) -> list[tuple]:
    """``(id, vector or None, paused or None)`` of at most ``limit`` items of ``qs``: one query.

    ``qs`` is compiled as a derived table of ids (MariaDB and SQLite merge it into a plain join),
    LEFT JOINed with the vectors of this model and the pause flags.
    """
    try:
        inner, params = qs.order_by().values_list("id").query.sql_with_params()
    except EmptyResultSet:  # e.g. ``objects.none()``
        return []
    sql = (
        f"SELECT s.id, e.vector, f.paused FROM ({inner}) s "
        f"LEFT JOIN {MemoryEmbedding._meta.db_table} e ON e.memory_id = s.id AND e.model_name = %s "
        f"LEFT JOIN {MemoryFlag._meta.db_table} f ON f.memory_id = s.id "
        f"LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, embedder.name, limit])
        return cursor.fetchall()


def _paged_rows(qs: QuerySet[LongTermMemory], embedder) -> Iterator[tuple[str, bytes | None]]:
    """``(id, vector bytes or None)`` of the unflagged items of ``qs``, in pages of ``CHUNK_ROWS`` by
    primary key: no cursor stays open while missing vectors are written, and memory stays bounded."""
    base = (
        qs.exclude(Exists(MemoryFlag.objects.filter(memory_id=OuterRef("pk"), paused=True)))
        .order_by("pk")
        .annotate(vec=FilteredRelation("embeddings", condition=Q(embeddings__model_name=embedder.name)))
        .values_list("pk", "vec__vector")
    )
    last = None
    while True:
        rows = list((base if last is None else base.filter(pk__gt=last))[:CHUNK_ROWS])
        yield from rows
        if len(rows) < CHUNK_ROWS:
            return
        last = rows[-1][0]


def _candidate_rows(qs: QuerySet[LongTermMemory], embedder) -> Iterator[tuple[str, bytes | None]]:
    """``(id, vector bytes or None)`` of the items of ``qs`` that no flag pauses.

    ``qs`` is already restricted to unarchived items outside the pause rules. A scope of at most
    ``CHUNK_ROWS`` items (an end user's items) is read in one hand-written query, paused flags dropped
    here from a LEFT JOIN (cheaper for the database than a ``NOT EXISTS`` per row, and no ORM
    compilation of a ``FilteredRelation``); a larger one (staff searching every user's items) is
    read again in pages.
    """
    rows = _joined_rows(qs, embedder, limit=CHUNK_ROWS + 1)
    if len(rows) <= CHUNK_ROWS:
        yield from ((pk, vector) for pk, vector, paused in rows if not paused)
    else:
        yield from _paged_rows(qs, embedder)


def _matrix(rows: list[tuple[str, bytes | None]], embedder, budget: list[int]) -> tuple[list[str], np.ndarray]:
    """Ids and the matrix of their vectors.

    Items missing a vector of this model are embedded now and stored, up to ``budget[0]`` items per
    search (decremented); the rest are left out until ``manage.py reembed`` has run.
    """
    dim = int(embedder.dim)
    size = dim * 4
    missing = [pk for pk, blob in rows if blob is None or len(blob) != size]
    if not missing:
        matrix = np.frombuffer(b"".join([bytes(row[1]) for row in rows]), dtype=np.float32)
        return [row[0] for row in rows], matrix.reshape(len(rows), dim)
    memories = list(LongTermMemory.objects.filter(pk__in=missing[: max(budget[0], 0)]))
    budget[0] -= len(memories)
    fresh: dict[str, np.ndarray] = {}
    if memories:
        memory_embed_many(memories, embedder=embedder)
        fresh = dict(zip([m.pk for m in memories], embedder.embed([m.content for m in memories]), strict=True))
    ids: list[str] = []
    vectors: list[np.ndarray] = []
    for pk, blob in rows:
        if pk in fresh:
            vectors.append(fresh[pk])
        elif blob is not None and len(blob) == size:
            vectors.append(np.frombuffer(blob, dtype=np.float32))
        else:
            continue
        ids.append(pk)
    if not ids:
        return [], np.empty((0, dim), dtype=np.float32)
    return ids, np.vstack(vectors).astype(np.float32, copy=False)


def top_k(matrix: np.ndarray, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indexes and scores of the ``k`` rows of ``matrix`` most similar to ``query``, best first.

    Args:
        matrix: ``(n, dim)`` float32 unit rows.
        query: ``(dim,)`` float32 unit vector.
        k: how many.

    Returns:
        ``(indexes, scores)``, both of length ``min(k, n)``.
    """
    scores = matrix @ query
    n = scores.shape[0]
    k = min(k, n)
    if k <= 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
    if k < n:
        part = np.argpartition(-scores, k - 1)[:k]
    else:
        part = np.arange(n)
    order = part[np.argsort(-scores[part], kind="stable")]
    return order, scores[order]


def _load(ids: list[str]) -> dict[str, LongTermMemory]:
    """The items by id, with a plain SELECT (half the cost of ``in_bulk`` on this hot path)."""
    if not ids:
        return {}
    placeholders = ", ".join(["%s"] * len(ids))
    sql = f"SELECT * FROM {LongTermMemory._meta.db_table} WHERE id IN ({placeholders})"
    return {memory.pk: memory for memory in LongTermMemory.objects.raw(sql, ids)}


def _chunks(rows: Iterable, size: int) -> Iterator[list]:
    chunk = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _rank(rows: Iterable[tuple[str, bytes | None]], query: str, k: int, embedder) -> list[ScoredMemory]:
    """Score candidate rows against the query, chunk by chunk (memory stays bounded for any number of
    rows), keep the running top-K, then load the top-K items (one query)."""
    best_ids: list[str] = []
    best_scores = np.empty(0, dtype=np.float32)
    qvec = None
    budget = [MAX_EMBED_ON_THE_FLY]
    for chunk in _chunks(rows, CHUNK_ROWS):
        ids, matrix = _matrix(chunk, embedder, budget)
        if not ids:
            continue
        if qvec is None:  # embed the query only when there is something to compare it with
            qvec = np.asarray(embedder.embed([query])[0], dtype=np.float32)
        order, scores = top_k(matrix, qvec, k)
        if not best_ids:
            best_ids, best_scores = [ids[i] for i in order], scores
            continue
        merged_ids = best_ids + [ids[i] for i in order]
        merged_scores = np.concatenate([best_scores, scores])
        keep = np.argsort(-merged_scores, kind="stable")[:k]
        best_ids, best_scores = [merged_ids[i] for i in keep], merged_scores[keep]
    by_id = _load(best_ids)
    return [
        ScoredMemory(memory=by_id[pk], score=float(score))
        for pk, score in zip(best_ids, best_scores, strict=True)
        if pk in by_id
    ]


def memory_search(
    *,
    queryset: QuerySet[LongTermMemory],
    query: str,
    k: int = DEFAULT_K,
    embedder=None,
    user_id: str | None = None,
) -> list[ScoredMemory]:
    """Semantic search over the active items of a caller-scoped queryset.

    Used by the API search endpoint, "My memories" and the admin. Access statistics are not touched:
    only an agent's retrieval counts as a use.

    Args:
        queryset: what the caller may read (see ``selectors.memory_queryset_for``), possibly filtered.
        query: the text to search for; blank returns ``[]``.
        k: how many items at most (capped at 100).
        embedder: the embedder; default the configured one.
        user_id: when ``queryset`` holds only this user's items (an end user's own scope), only their
            pause rules are read; otherwise every rule is applied.

    Returns:
        Items best first, with their cosine similarity.
    """
    k = max(0, min(int(k), MAX_K))
    if not query or not query.strip() or k == 0:
        return []
    embedder = _embedder(embedder)
    retrievable = _not_paused_by_rules(queryset.filter(archived=False), user_id)
    return _rank(_candidate_rows(retrievable, embedder), query, k, embedder)


def memory_retrieval_enabled(user_id: str) -> bool:
    """The user's "use my memories" switch (on unless turned off)."""
    value = UserMemorySettings.objects.filter(user_id=user_id).values_list("use_memories", flat=True).first()
    return value is not False


def _retrieval_gate(user_id: str) -> tuple[bool, list[tuple[str, str]]]:
    """The user's "use my memories" switch and pause rules ``(agent_namespace, memory_type)``: one query."""
    settings_table = UserMemorySettings._meta.db_table
    rules_table = PauseRule._meta.db_table
    sql = (
        f"SELECT 0, use_memories, '', '' FROM {settings_table} WHERE user_id = %s "
        f"UNION ALL SELECT 1, 0, agent_namespace, memory_type FROM {rules_table} WHERE user_id = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [user_id, user_id])
        rows = cursor.fetchall()
    enabled = True
    rules = []
    for kind, use_memories, agent_namespace, memory_type in rows:
        if kind == 0:
            enabled = bool(use_memories)
        else:
            rules.append((agent_namespace or "", memory_type or ""))
    return enabled, rules


def _namespace_rows(namespace: Namespace, embedder) -> list[tuple[str, bytes | None]]:
    """Candidate rows of one namespace without pause rules to apply: one hand-written LEFT JOIN.

    The hot path of every agent turn; the ORM's query compilation would cost as much as the query.
    """
    memory = LongTermMemory._meta.db_table
    vectors = MemoryEmbedding._meta.db_table
    flags = MemoryFlag._meta.db_table
    sql = (
        f"SELECT m.id, e.vector FROM {memory} m "
        f"LEFT JOIN {vectors} e ON e.memory_id = m.id AND e.model_name = %s "
        f"WHERE m.namespace = %s AND m.archived = %s "
        f"AND NOT EXISTS (SELECT 1 FROM {flags} f WHERE f.memory_id = m.id AND f.paused = %s)"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [embedder.name, namespace.as_text(), False, True])
        return cursor.fetchall()


def memory_log_access(
    items: Sequence[ScoredMemory], *, agent_id: str, conversation_id: str, kind: str, now=None
) -> None:
    """Count a use of each item and record it in the access log.

    The in-memory items are updated at once; the database writes (one UPDATE, one bulk INSERT) go
    through :mod:`memoryboard.ltm.access_log`, off the request path unless tasks run inline.
    """
    if not items:
        return
    from memoryboard.ltm.access_log import record_access

    now = now or timezone.now()
    for item in items:
        item.memory.access_count += 1
        item.memory.last_accessed_at = now
    record_access(
        ids=[item.memory.pk for item in items],
        relevances=[float(item.score) for item in items],
        agent_id=agent_id,
        conversation_id=conversation_id or "",
        kind=kind,
        at=now,
    )


def memory_retrieve(
    *,
    namespace: Namespace,
    query: str,
    k: int = DEFAULT_K,
    agent_id: str = "",
    conversation_id: str = "",
    kind: str = MemoryAccess.Kind.RETRIEVAL,
    embedder=None,
    log_access: bool = True,
) -> list[ScoredMemory]:
    """Session-start retrieval for one namespace: top-K active items by cosine similarity.

    Honours pause (item flags and the user's pause rules) and the user's "use my memories" switch.
    The returned items' ``access_count`` and ``last_accessed_at`` are updated in one UPDATE, and one
    access-log row per item is written in one bulk INSERT (see :func:`memory_log_access`).

    Args:
        namespace: built on the server from the authenticated user and the agent's configuration.
        query: usually the user's message.
        k: how many items at most (the agent's ``load-max-items``).
        agent_id: the reading agent, for the access log.
        conversation_id: the reading conversation, for the access log.
        kind: ``retrieval``, ``tool_search`` or ``injection``.
        embedder: the embedder; default the configured one.
        log_access: False skips the access statistics (benchmarks and previews).

    Returns:
        Items best first; ``[]`` when the user turned memories off.

    Raises:
        ValueError: for an unknown ``kind``.
    """
    if kind not in MemoryAccess.Kind.values:
        raise ValueError(f"unknown access kind {kind!r}")
    k = max(0, min(int(k), MAX_K))
    if not query or not query.strip() or k == 0:
        return []
    enabled, rules = _retrieval_gate(namespace.user_id)
    if not enabled:
        return []
    rules = [(agent, kind_) for agent, kind_ in rules if agent in ("", namespace.agent)]
    if any(not memory_type for _, memory_type in rules):
        return []  # the whole agent (or every agent) is paused for this user
    embedder = _embedder(embedder)
    if rules:
        qs = LongTermMemory.objects.filter(namespace=namespace.as_text())
        rows = _candidate_rows(_not_paused_by_rules(qs.filter(archived=False), namespace.user_id), embedder)
    else:
        rows = _namespace_rows(namespace, embedder)
    items = _rank(rows, query, k, embedder)
    if log_access:
        memory_log_access(items, agent_id=agent_id, conversation_id=conversation_id, kind=kind)
    return items


def format_memory_block(items: Sequence[ScoredMemory]) -> str:
    """The ``<long_term_memory>`` block of the system prompt; ``""`` for no items.

    Example::

        <long_term_memory>
        以下是你对该用户的长期记忆：
        1. [FACT] 用户是Java后端开发者 (相关度: 0.92)
        </long_term_memory>
    """
    if not items:
        return ""
    lines = ["<long_term_memory>", MEMORY_BLOCK_HEADER]
    for number, item in enumerate(items, start=1):
        content = " ".join(item.memory.content.split())
        lines.append(f"{number}. [{item.memory.memory_type}] {content} (相关度: {item.score:.2f})")
    lines.append("</long_term_memory>")
    return "\n".join(lines)
