"""Semantic retrieval of long-term memory: cosine top-K with numpy, and the injected prompt block.

Vectors are unit length (every embedder normalizes), so the cosine is a dot product. A search:

1. reads its candidates in one query: the ids of the scoped, unarchived items outside the pause
   rules, LEFT JOINed with the row id and checksum of their vector for the current model (both from
   an index: no vector is read here);
2. takes the vectors from the process's cache (``ltm.vector_cache``), the ones it lacks from one
   query; items without a vector are embedded on the fly and stored;
3. loads the best-scored items with their pause flags, K at a time, until K unpaused items are found
   (flags are few, so the first K almost always do).
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
from memoryboard.ltm.namespaces import Namespace
from memoryboard.ltm.selectors import namespace_q, own_memories, user_namespaces, user_namespaces_q
from memoryboard.ltm.vector_cache import Scope, scope_vectors, vectors_for
from memoryboard.models import (
    LongTermMemory,
    MemoryAccess,
    MemoryEmbedding,
    MemoryFlag,
    PauseRule,
    UserMemorySettings,
    VectorGeneration,
)
from memoryboard.rows import instances, select_columns

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


def _bounded_k(query: str, k: int) -> int:
    """``k`` capped to 0..MAX_K; 0 for a blank query (nothing to search for)."""
    k = max(0, min(int(k), MAX_K))
    return k if query and query.strip() else 0


def _query_vector(query: str, embedder) -> np.ndarray:
    return np.asarray(embedder.embed([query])[0], dtype=np.float32)


def _embedder(embedder=None):
    if embedder is not None:
        return embedder
    from memoryboard.llm.factory import get_embedder

    return get_embedder()


def _pause_rule_q(rules: Iterable[tuple[str, str, str]]) -> Q | None:
    """A Q matching items covered by pause rules ``(user_id, agent_namespace, memory_type)``."""
    combined: Q | None = None
    for user_id, agent_namespace, memory_type in rules:
        q = user_namespaces_q(user_id, agents=[agent_namespace] if agent_namespace else None)
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


Candidate = tuple[str, "int | None", "int | None"]  # (item id, embedding row id, checksum)

# How many pause rules a user has (one parameter): counted with a search's candidates, read only if any.
_RULE_COUNT = f"(SELECT COUNT(*) FROM {PauseRule._meta.db_table} WHERE user_id = %s)"


def _vector_join(item: str) -> str:
    """``LEFT JOIN`` of the vector row ids and checksums of item alias ``item`` (model name: one param).

    MariaDB/MySQL would pick the unique (item, model) index and read each row for its checksum; the
    hint makes it read ``idx_embedding_checksum`` alone (0.2-0.3 ms of a user's 200 items).
    """
    hint = " USE INDEX (idx_embedding_checksum)" if connection.vendor == "mysql" else ""
    return (
        f"LEFT JOIN {MemoryEmbedding._meta.db_table} e{hint} "
        f"ON e.memory_id = {item}.id AND e.model_name = %s"
    )


def _joined_rows(
    qs: QuerySet[LongTermMemory], embedder, *, limit: int, count_rules_of: str | None = None
) -> tuple[list[Candidate], int]:
    """At most ``limit`` candidates of ``qs``, and how many pause rules ``count_rules_of`` has (0 when
    not asked): one query, no vector read.

    ``qs`` is compiled as a derived table of ids (MariaDB and SQLite merge it into a plain join),
    LEFT JOINed with the row id and checksum of each item's vector for this model, both read from
    the index ``idx_embedding_checksum``. The rule count is an uncorrelated subquery (run once).
    """
    try:
        inner, params = qs.order_by().values_list("id").query.sql_with_params()
    except EmptyResultSet:  # e.g. ``objects.none()``
        return [], 0
    if count_rules_of is None:
        rules, rule_params = "0", []
    else:
        rules, rule_params = _RULE_COUNT, [count_rules_of]
    sql = f"SELECT s.id, e.id, e.checksum, {rules} FROM ({inner}) s {_vector_join('s')} LIMIT %s"
    with connection.cursor() as cursor:
        cursor.execute(sql, [*rule_params, *params, embedder.name, limit])
        rows = cursor.fetchall()
    return [row[:3] for row in rows], (rows[0][3] if rows else 0)


def _paged_rows(qs: QuerySet[LongTermMemory], embedder) -> Iterator[Candidate]:
    """The candidates of a large scope that no flag pauses, in pages of ``CHUNK_ROWS`` by primary key:
    no cursor stays open while missing vectors are written, and memory stays bounded."""
    base = (
        qs.exclude(Exists(MemoryFlag.objects.filter(memory_id=OuterRef("pk"), paused=True)))
        .order_by("pk")
        .annotate(vec=FilteredRelation("embeddings", condition=Q(embeddings__model_name=embedder.name)))
        .values_list("pk", "vec__id", "vec__checksum")
    )
    last = None
    while True:
        rows = list((base if last is None else base.filter(pk__gt=last))[:CHUNK_ROWS])
        yield from rows
        if len(rows) < CHUNK_ROWS:
            return
        last = rows[-1][0]


def _matrix(rows: list[Candidate], embedder, budget: list[int], *, remember: bool) -> tuple[list[str], np.ndarray]:
    """Ids and the matrix of their vectors (from ``ltm.vector_cache``).

    Items missing a vector of this model are embedded now and stored, up to ``budget[0]`` items per
    search (decremented); the rest are left out until ``manage.py reembed`` has run.
    """
    dim = int(embedder.dim)
    blobs = vectors_for([(row_id, checksum) for _pk, row_id, checksum in rows], size=dim * 4, remember=remember)
    missing = [row[0] for row, blob in zip(rows, blobs, strict=True) if blob is None]
    if not missing:
        matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(rows), dim)
        return [row[0] for row in rows], matrix
    memories = list(LongTermMemory.objects.filter(pk__in=missing[: max(budget[0], 0)]))
    budget[0] -= len(memories)
    fresh: dict[str, np.ndarray] = {}
    if memories:
        memory_embed_many(memories, embedder=embedder)
        fresh = dict(zip([m.pk for m in memories], embedder.embed([m.content for m in memories]), strict=True))
    ids: list[str] = []
    vectors: list[np.ndarray] = []
    for row, blob in zip(rows, blobs, strict=True):
        pk = row[0]
        if blob is not None:
            vectors.append(np.frombuffer(blob, dtype=np.float32))
        elif pk in fresh:
            vectors.append(fresh[pk])
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


def _chunks(rows: Iterable, size: int) -> Iterator[list]:
    chunk = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _score(
    chunks: Iterable[list[Candidate]], query: str, embedder, *, keep: int | None, remember: bool
) -> tuple[list[str], np.ndarray]:
    """Candidate ids and their scores, best first: every candidate (``keep=None``) or the top ``keep``.

    Chunk by chunk, so the vectors in memory stay bounded for any number of candidates.
    """
    budget = [MAX_EMBED_ON_THE_FLY]
    qvec = None
    best_ids: list[str] = []
    best_scores = np.empty(0, dtype=np.float32)
    for chunk in chunks:
        ids, matrix = _matrix(chunk, embedder, budget, remember=remember)
        if not ids:
            continue
        if qvec is None:  # embed the query only when there is something to compare it with
            qvec = _query_vector(query, embedder)
        if keep is None:
            order, scores = np.arange(len(ids)), matrix @ qvec
        else:
            order, scores = top_k(matrix, qvec, keep)
        merged_ids = best_ids + [ids[i] for i in order]
        merged_scores = np.concatenate([best_scores, scores])
        best = np.argsort(-merged_scores, kind="stable")[:keep]
        best_ids, best_scores = [merged_ids[i] for i in best], merged_scores[best]
    return best_ids, best_scores


def _rank_all(ids: list[str], matrix: np.ndarray, query: str, embedder) -> tuple[list[str], np.ndarray]:
    """``ids`` and their scores against the query, best first."""
    if not ids:
        return [], np.empty(0, dtype=np.float32)
    scores = matrix @ _query_vector(query, embedder)
    order = np.argsort(-scores, kind="stable")
    return [ids[i] for i in order], scores[order]


def _ranked(
    qs: QuerySet[LongTermMemory], query: str, k: int, embedder, *, rows: list[Candidate] | None = None
) -> tuple[list[str], np.ndarray]:
    """The candidates of ``qs`` best first (``rows``: its first read, when already made).

    A scope of at most ``CHUNK_ROWS`` items (an end user's items) is read in one query and ranked
    whole, its paused flags checked when the best are loaded (cheaper for the database than a join
    per row); a larger one (staff searching every user's items) is read again in pages without the
    paused items, keeping only the top ``k`` (its vectors are not cached: they would push out the
    ones other searches use).
    """
    if rows is None:
        rows, _rules = _joined_rows(qs, embedder, limit=CHUNK_ROWS + 1)
    if len(rows) <= CHUNK_ROWS:
        return _score([rows], query, embedder, keep=None, remember=True)
    return _score(_chunks(_paged_rows(qs, embedder), CHUNK_ROWS), query, embedder, keep=k, remember=False)


def _load(ids: list[str]) -> dict[str, LongTermMemory]:
    """The items by id with their pause flag as ``is_paused``: one plain SELECT (a third of the cost
    of ``raw()``, half of ``in_bulk``, on this hot path)."""
    if not ids:
        return {}
    placeholders = ", ".join(["%s"] * len(ids))
    sql = (
        f"SELECT {select_columns(LongTermMemory, 'm')}, f.paused FROM {LongTermMemory._meta.db_table} m "
        f"LEFT JOIN {MemoryFlag._meta.db_table} f ON f.memory_id = m.id WHERE m.id IN ({placeholders})"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, ids)
        rows = cursor.fetchall()
    found = {}
    for memory, (paused,) in instances(LongTermMemory, rows):
        memory.is_paused = bool(paused)
        found[memory.pk] = memory
    return found


def _load_unpaused(ids: list[str], scores: np.ndarray, k: int) -> list[ScoredMemory]:
    """The first ``k`` ranked items that no flag pauses, loaded in batches (``k`` first, then growing)."""
    found: list[ScoredMemory] = []
    start, size = 0, k
    while start < len(ids) and len(found) < k:
        batch = ids[start : start + size]
        by_id = _load(batch)
        for pk, score in zip(batch, scores[start : start + size], strict=True):
            memory = by_id.get(pk)
            if memory is not None and not memory.is_paused:
                found.append(ScoredMemory(memory=memory, score=float(score)))
                if len(found) == k:
                    break
        start, size = start + size, size * 2
    return found


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
    k = _bounded_k(query, k)
    if k == 0:
        return []
    embedder = _embedder(embedder)
    unarchived = queryset.filter(archived=False)
    rows = None
    if user_id is not None:
        # Pause rules are few: the user's are counted with the first read, and read only if any.
        rows, rule_count = _joined_rows(unarchived, embedder, limit=CHUNK_ROWS + 1, count_rules_of=user_id)
        if rule_count:
            rows = None
    retrievable = unarchived if rows is not None else _not_paused_by_rules(unarchived, user_id)
    return _load_unpaused(*_ranked(retrievable, query, k, embedder, rows=rows), k)


def memory_search_own(*, user_id: str, query: str, k: int = DEFAULT_K, embedder=None) -> list[ScoredMemory]:
    """:func:`memory_search` over one user's own items (``selectors.own_memories``), unfiltered: the
    end user's search of the API, with no ORM on its path.

    The user's pause rules are counted with the candidates; when there are any, the search is made
    again by :func:`memory_search` with the rules applied.
    """
    k = _bounded_k(query, k)
    if k == 0:
        return []
    embedder = _embedder(embedder)
    rows, rule_count, scope = _own_rows(user_id, embedder)
    if rule_count or len(rows) > CHUNK_ROWS:
        return memory_search(queryset=own_memories(user_id=user_id), query=query, k=k, embedder=embedder, user_id=user_id)
    ids = [row[0] for row in rows]
    ranked = scope.ranked if scope is not None else None
    if ranked is not None and ranked[0] == ids:  # the same candidates as the last search: the same matrix
        matrix = ranked[1]
    else:
        if scope is not None:
            rows = [scope.vectors.get(row[0]) or row for row in rows]
        ids, matrix = _matrix(rows, embedder, [MAX_EMBED_ON_THE_FLY], remember=True)
        if scope is not None and len(ids) == len(rows):  # every candidate has its vector
            matrix.flags.writeable = False
            scope.ranked = (ids, matrix)
            scope_vectors.put((user_id, embedder.name), scope)
    return _load_unpaused(*_rank_all(ids, matrix, query, embedder), k)


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


def _namespace_rows(
    namespaces: list[str], embedder, *, user_id: str | None = None, join_vectors: bool = True
) -> tuple[list[Candidate], int, int]:
    """The unarchived candidates of the given namespaces, with (for ``user_id``) the number of their
    pause rules and their vector generation: one hand-written query.

    The hot path of every agent turn and of an end user's search; the ORM's building and compiling of
    the same query would cost more than running it. The namespace comes back from the index and is
    compared here, exactly (a case-insensitive collation would let ``IN`` match another case).
    Without ``join_vectors`` the candidates carry no vector (``(id, None, None)``): the caller knows
    them. Paused flags are checked when the best items are loaded.
    """
    if not namespaces:
        return [], 0, 0
    if user_id is None:
        extra, extra_params = "0, 0", []
    else:
        extra = (
            f"{_RULE_COUNT}, "
            f"COALESCE((SELECT generation FROM {VectorGeneration._meta.db_table} WHERE user_id = %s), 0)"
        )
        extra_params = [user_id, user_id]
    if join_vectors:
        vector_columns, vector_join, vector_params = "e.id, e.checksum", _vector_join("m"), [embedder.name]
    else:
        vector_columns, vector_join, vector_params = "NULL, NULL", "", []
    placeholders = ", ".join(["%s"] * len(namespaces))
    sql = (
        f"SELECT m.id, {vector_columns}, m.namespace, {extra} "
        f"FROM {LongTermMemory._meta.db_table} m {vector_join} "
        f"WHERE m.namespace IN ({placeholders}) AND m.archived = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*extra_params, *vector_params, *namespaces, False])
        rows = cursor.fetchall()
    wanted = set(namespaces)
    rule_count, generation = (rows[0][4], rows[0][5]) if rows else (0, 0)
    return [row[:3] for row in rows if row[3] in wanted], rule_count, generation


def _own_rows(user_id: str, embedder) -> tuple[list[Candidate], int, Scope | None]:
    """The candidates of one user's own items, the number of their pause rules, and what this process
    knows of their vectors at the current generation (``None`` from inside a transaction).

    While the user's vector generation is the one their item-to-vector map was taken at
    (``vector_cache.scope_vectors``), the query skips the join with the embedding table and the rows
    come without vectors (``(id, None, None)``): the scope has them, and an item its map lacks had no
    vector at that generation, and still has none.
    """
    namespaces = user_namespaces(user_id)
    key = (user_id, embedder.name)
    if scope_vectors.known(key):
        rows, rule_count, generation = _namespace_rows(namespaces, embedder, user_id=user_id, join_vectors=False)
        scope = scope_vectors.get(key, generation)
        if scope is not None:
            return rows, rule_count, scope  # rows without vectors: the scope has them
    rows, rule_count, generation = _namespace_rows(namespaces, embedder, user_id=user_id)
    if connection.in_atomic_block:  # what a transaction sees may yet be rolled back
        return rows, rule_count, None
    scope = Scope(generation=generation, vectors={row[0]: row for row in rows if row[1] is not None})
    scope_vectors.put(key, scope)
    return rows, rule_count, scope


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
    k = _bounded_k(query, k)
    if k == 0:
        return []
    enabled, rules = _retrieval_gate(namespace.user_id)
    if not enabled:
        return []
    rules = [(agent, kind_) for agent, kind_ in rules if agent in ("", namespace.agent)]
    if any(not memory_type for _, memory_type in rules):
        return []  # the whole agent (or every agent) is paused for this user
    embedder = _embedder(embedder)
    if rules:
        qs = LongTermMemory.objects.filter(namespace_q(namespace))
        ranked = _ranked(_not_paused_by_rules(qs.filter(archived=False), namespace.user_id), query, k, embedder)
    else:
        rows, _rules, _generation = _namespace_rows(namespace.spellings(), embedder)
        ranked = _score(_chunks(rows, CHUNK_ROWS), query, embedder, keep=None, remember=len(rows) <= CHUNK_ROWS)
    items = _load_unpaused(*ranked, k)
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
