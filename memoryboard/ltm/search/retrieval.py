"""Long-term memory search: one path for every caller, and the injected prompt block.

:func:`memory_rank` serves the end user's search, staff search across users, the agent's session-start
retrieval and the ``memory_search`` tool; what differs is the scope (a queryset from
``ltm.store.selectors``) and whose pause rules apply. A search:

1. takes the scope's unarchived candidates (id, ``updated_at``, ``relevance_score``) from the scope this
   process keeps, brought up to the items' change log (the log's rows past its position and the items they
   name, read through the scope's query: :func:`_followed_scope`), or reads them all (one query, no content,
   no vector); then the ids of the paused ones (one query: flags and pause rules); a scope larger than
   ``EXACT_MAX`` (staff across every user) takes its candidates from the HNSW index instead
   (``ltm.search.ann``), filtered by the same queryset. The database is the one source of truth: the log is
   written by its triggers, whoever the writer;
2. embeds the query (``ranking.query_vector``: the query and its content words); takes the scope's
   vectors, types, keyword index and item days from ``ltm.search.vector_cache`` (keyed by what the
   candidates are, so never stale) or reads and builds them (one query);
3. reads the time the query names, if any (``ltm.search.time_expressions``: "last May", 上个月, "before she
   moved"), and scores every candidate with the one function of ``ltm.search.ranking``; keeps the best ``k``
   whose match reaches the minimum relevance; the others are left out with a
   reason (paused, below threshold, beyond K), which is what a retrieval receipt records.
"""

from __future__ import annotations

import json
import logging
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import compress
from datetime import datetime
from operator import itemgetter

import numpy as np
from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import CharField, Exists, FilteredRelation, Min, OuterRef, Q, QuerySet
from django.db.models.functions import Cast
from django.utils import timezone

from memoryboard.llm.clauses import split_clauses
from memoryboard.llm.cues import asks_about_the_user, tells_of_someone_else
from memoryboard.llm.factory import get_embedder
from memoryboard.ltm.search import ranking
from memoryboard.ltm.search.access_log import record_access
from memoryboard.ltm.search.ann import ann_candidates, ann_wait_for_start
from memoryboard.ltm.search.embeddings import memory_embed_many
from memoryboard.ltm.search.receipts import receipt_record
from memoryboard.ltm.search.results import Ranking, ScoredMemory
from memoryboard.ltm.search.time_expressions import item_day, query_window
from memoryboard.ltm.search.vector_cache import (
    CHANGED_MAX_SHARE,
    VECTOR_DTYPE,
    Rows,
    ScopeData,
    compact_vectors,
    keys_changed,
    scope_cache,
    version_keys,
)
from memoryboard.ltm.store import expiry
from memoryboard.ltm.store.change_log import LogPosition, log_kept, log_moved, log_pruned_past, log_rows_past, log_start
from memoryboard.ltm.store.selectors import namespace_q, user_namespaces_q
from memoryboard.ltm.store.states import current_q, is_past_expiry, state_q
from memoryboard.ltm.store.tasks import archive_expired_met
from memoryboard.models import (
    ArchivedReason,
    LongTermMemory,
    MemoryAccess,
    MemoryFlag,
    MemoryState,
    MemoryStateChange,
    PauseRule,
    UserMemorySettings,
)
from memoryboard.models.namespaces import Namespace, namespace_spellings
from memoryboard.rows import instances, select_columns

logger = logging.getLogger(__name__)

DEFAULT_K = 10
MAX_K = 100
MAX_QUERY_CHARS = 2000  # the longest query a search form or the API takes
# Larger scopes take their candidates from the HNSW index (``ltm.search.ann``) when it is built.
EXACT_MAX = 20_000
# Candidates asked of the HNSW index per search (then filtered by scope and state, and re-ranked).
# Recall depends on the index's ef_search, not on this (200,000 clustered vectors, queries of cosine ~0.5:
# 0.975 for 100 to 1,000 candidates at ef 1000; 1M items through the API: 0.953 with 1,000 and with 200);
# each candidate costs random reads of tables larger than MariaDB's buffer pool (1M items, load 8: p50
# 395 ms with 1,000 candidates, 59 ms with 200).
# Figures: benchmarks/README.md § Staff search.
ANN_CANDIDATES = 200
# Items without a vector embedded during one search at most; ``manage.py reembed`` does the rest.
MAX_EMBED_ON_THE_FLY = 1_000
# Rows read per query by id (well under SQLite's variable limit).
READ_BATCH = 2_000

MEMORY_BLOCK_HEADER = "以下是你对该用户的长期记忆："


def _bounded_k(query: str, k: int) -> int:
    """``k`` capped to 0..MAX_K; 0 for a blank query (nothing to search for)."""
    k = max(0, min(int(k), MAX_K))
    return k if query and query.strip() else 0


def _embedder(embedder=None):
    if embedder is not None:
        return embedder

    return get_embedder()


def _pause_rules_q(user_id: str | None) -> Q | None:
    """Items covered by pause rules: one user's rules (``user_id``), or every user's (``None``)."""
    combined: Q | None = None
    for rule_user, agent, memory_type in _pause_rule_rows(user_id):
        q = user_namespaces_q(rule_user, agents=[agent] if agent else None)
        if memory_type:
            q &= Q(value_json__type=memory_type.upper())
        combined = q if combined is None else combined | q
    return combined


def _pause_rule_rows(user_id: str | None) -> list[tuple[str, str, str]]:
    """``(user_id, agent_namespace, memory_type)`` of one user's pause rules, or of every user's.

    Hand-written, as ``memory_switches``: every search reads them, and the ORM's compilation of this
    one-table query cost several times the database's time."""
    qn = connection.ops.quote_name
    sql = (f"SELECT {qn('user_id')}, {qn('agent_namespace')}, {qn('memory_type')} "
           f"FROM {qn(PauseRule._meta.db_table)}")
    with connection.cursor() as cursor:
        if user_id is None:
            cursor.execute(sql)
        else:
            cursor.execute(f"{sql} WHERE {qn('user_id')} = %s", [str(user_id)])
        return list(cursor.fetchall())


# The candidates' SQL by scope (``memory_rank``'s ``scope_key``: an agent's namespace, or the API caller's
# scope from ``selectors.memory_scope_for``; no pause rule): built
# and compiled by the ORM each time, reading the candidates took 1.39 ms of CPU; with the SQL reused
# 0.26 ms (benchmarks/README.md § Proxy CPU per request). Bounded: emptied when full.
_CANDIDATE_SQL: dict[tuple, tuple[str, tuple] | None] = {}
_CANDIDATE_SQL_MAX = 4096


def _compiled(qs: QuerySet | Callable[[], QuerySet], sql_key: tuple | None) -> tuple[str, tuple] | None:
    """``(sql, params)`` of ``qs`` (None: it selects nothing), compiled once per ``sql_key`` (a hashable
    name of that SQL: same key, same SQL). ``qs`` may be a function returning the queryset, called only
    to compile it."""
    compiled = _CANDIDATE_SQL.get(sql_key, False) if sql_key is not None else False
    if compiled is False:
        qs = qs() if callable(qs) else qs
        try:
            sql, params = qs.query.sql_with_params()
            compiled = (sql, tuple(params))
        except EmptyResultSet:  # e.g. ``objects.none()``
            compiled = None
        if sql_key is not None:
            if len(_CANDIDATE_SQL) >= _CANDIDATE_SQL_MAX:
                _CANDIDATE_SQL.clear()
            _CANDIDATE_SQL[sql_key] = compiled
    return compiled


def _read_rows(qs: QuerySet | Callable[[], QuerySet], sql_key: tuple | None) -> list[tuple]:
    """The rows of ``qs`` as the database returns them, its SQL compiled once per ``sql_key``
    (:func:`_compiled`), read without the ORM's per-value converters (a third of the time at 5,000 rows)."""
    compiled = _compiled(qs, sql_key)
    if compiled is None:
        return []
    sql, params = compiled
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _candidates(base: QuerySet[LongTermMemory], extra: Sequence[str] = ()) -> QuerySet:
    return (base.order_by().annotate(version=Cast("updated_at", output_field=CharField()))
            .values_list("pk", "version", "relevance_score", *extra))


def _candidate_rows(base: QuerySet[LongTermMemory], *, sql_key: tuple | None = None,
                    extra: Sequence[str] = ()) -> list[tuple]:
    """``(id, updated_at as text, relevance_score, *extra)`` of the scope's items: one query, no content,
    no vector unless ``extra`` names them (``updated_at`` only names a version of the item: as text, it
    costs no parsing). Whether an item is paused is read apart (:func:`_paused_ids`).

    ``sql_key``: a hashable name of the SQL of ``base`` and ``extra``, to compile it once.
    """
    # The queryset is built only when its SQL is compiled (once per ``sql_key``).
    return list(_read_rows(lambda: _candidates(base, extra), None if sql_key is None else (*sql_key, "rows", *extra)))


def _candidate_rows_of(base: QuerySet[LongTermMemory], ids: list[str], *, sql_key: tuple | None = None) -> list[tuple]:
    """:func:`_candidate_rows` of the items ``ids`` only (those the scope still has): the candidates' SQL
    (compiled once per ``sql_key``) narrowed to them by primary key."""
    return _rows_by_ids(_compiled(lambda: _candidates(base), None if sql_key is None else (*sql_key, "rows")), ids)


def rows_by_ids(qs: Callable[[], QuerySet], ids: list[str], *, sql_key: tuple) -> list[tuple]:
    """The rows of the queryset ``qs()`` (its first column the id, named ``pk``) whose id is one of ``ids``:
    its SQL compiled once per ``sql_key`` (no ORM per call) and narrowed by primary key; the values as the
    database returns them (no converters)."""
    return _rows_by_ids(_compiled(qs, sql_key), ids)


def _rows_by_ids(compiled: tuple[str, tuple] | None, ids: list[str]) -> list[tuple]:
    """The rows of the compiled SQL ``compiled`` (its first column the id, named ``pk``) whose id is one of
    ``ids``: one query per ``READ_BATCH`` ids, the SQL wrapped (MariaDB and SQLite merge it: a
    primary-key lookup)."""
    if compiled is None or not ids:
        return []
    sql, params = compiled
    qn = connection.ops.quote_name
    rows: list[tuple] = []
    with connection.cursor() as cursor:
        for start in range(0, len(ids), READ_BATCH):
            batch = ids[start : start + READ_BATCH]
            cursor.execute(f"SELECT * FROM ({sql}) {qn('scoped')} WHERE {qn('scoped')}.{qn('pk')} IN "
                           f"({', '.join(['%s'] * len(batch))})", (*params, *batch))
            rows += cursor.fetchall()
    return rows


def _versions(base: QuerySet[LongTermMemory]) -> QuerySet:
    return base.order_by().annotate(version=Cast("updated_at", output_field=CharField())).values_list("pk", "version")


def version_rows(base: Callable[[], QuerySet[LongTermMemory]], *, sql_key: tuple) -> list[tuple]:
    """``(id, updated_at as text)`` of the scope's items, paused ones included (the reconcile step's
    candidates: 2.5 ms of CPU at 5,000 items, 4.5 ms with a pause check); ``base`` is called only when the
    SQL is compiled, once per ``sql_key``. Served, when this process keeps a search's scope of the same SQL
    following the change log, from its ids and versions and the log's rows past its position (the items
    they name re-read): two small queries instead of every row; nothing is kept (the caller may be in a
    transaction)."""
    if log_kept():
        followed = _followed_versions(base, sql_key=sql_key)
        if followed is not None:
            return followed
    return list(_read_rows(lambda: _versions(base()), (*sql_key, "versions")))


def versions_logged_past(base: Callable[[], QuerySet[LongTermMemory]], position: LogPosition, *, sql_key: tuple,
                         most: int) -> tuple[dict[str, str | None], LogPosition] | None:
    """The items the change log names past ``position`` and their versions in the scope now (None: not in
    it), and the position after those rows: one query by primary key for the log's rows, one for the items
    (the SQL of :func:`version_rows`, narrowed to them). ``None`` when the log was pruned past ``position``
    or holds more than ``most`` rows past it: the caller reads the scope in full."""
    past = _logged_past(position, most)
    if past is None:
        return None
    rows, logged = past
    fresh = dict(rows_by_ids(lambda: _versions(base()), logged, sql_key=(*sql_key, "versions")))
    return {pk: fresh.get(pk) for pk in logged}, log_moved(position, rows)


def _followed_versions(base: Callable[[], QuerySet[LongTermMemory]], *, sql_key: tuple) -> list[tuple] | None:
    """:func:`version_rows` from a kept scope of the same SQL (any model's) and the change log past its
    position; ``None`` when there is none, or the log was pruned past it or holds too many rows."""
    name = _compiled(lambda: base().order_by().values_list("pk"), (*sql_key, "name"))
    data = None if name is None else scope_cache.find(lambda key: tuple(key[1:]) == (connection.alias, *name))
    if data is None or data.log is None or data.versions is None:
        return None
    past = versions_logged_past(base, data.log, sql_key=sql_key, most=_changes_most(data))
    if past is None:
        return None
    now, _position = past
    kept = list(zip(data.ids, data.versions))
    if not now:
        return kept
    return [(pk, version) for pk, version in kept if pk not in now] + [
        (pk, version) for pk, version in now.items() if version is not None]


def _changes_most(data: ScopeData) -> int:
    """The log's rows past a kept scope's position beyond which it is read in full: ``CHANGED_MAX_SHARE`` of
    it (at least 16)."""
    return max(16, int(CHANGED_MAX_SHARE * len(data.ids)))


def _logged_past(position: LogPosition, most: int) -> tuple[list[tuple], list[str]] | None:
    """The change log's rows past ``position`` and the item ids they name (sorted, unique); ``None`` when
    the scope must be read in full: the log was pruned past the position, or it holds more than ``most``
    rows past it."""
    rows = log_rows_past(position, most + 1)
    if len(rows) > most or log_pruned_past(rows, position):
        return None
    return rows, sorted({memory_id for _seq, memory_id, through in rows if through is None and memory_id})


def _paused_ids(base: QuerySet[LongTermMemory], rules: Q | None, *, sql_key: tuple | None = None) -> set[str]:
    """The ids of the scope's items that are paused: flagged (``MemoryFlag.paused``) or covered by
    ``rules`` (:func:`_pause_rules_q`). One query returning only those ids.

    Read apart from the candidates' rows: as an ``EXISTS`` on each of them it cost MariaDB ~0.5 s per
    100,000 candidates (the same sums with and without it, benchmarks/README.md § Retrieval)."""
    def paused() -> QuerySet:  # built only when its SQL is compiled (once per ``sql_key``)
        flagged = Q(pk__in=MemoryFlag.objects.filter(paused=True).values("memory_id"))
        return base.order_by().filter(flagged if rules is None else flagged | rules).values_list("pk")
    return {row[0] for row in _read_rows(paused, None if sql_key is None else (*sql_key, "paused"))}


def _index_candidate_rows(base: QuerySet[LongTermMemory], keys: list[int],
                          model_name: str) -> tuple[list[tuple], dict[str, tuple]]:
    """The candidates of a large scope found by the HNSW index (``keys``: embedding row ids), filtered by
    the scope's queryset and state like :func:`_candidate_rows`, and their content and vector, in one
    query per ``READ_BATCH`` keys: ``(rows as _candidate_rows, {id: (value, vector)})``.

    One query instead of three (embedding ids to items, the candidate rows, their content and
    vectors): each read ~1,000 random rows of tables larger than MariaDB's buffer pool at 1M items;
    see benchmarks/README.md § Staff search."""
    rows, found = [], {}
    for start in range(0, len(keys), READ_BATCH):
        qs = base.filter(embeddings__id__in=keys[start : start + READ_BATCH], embeddings__model_name=model_name)
        for pk, version, relevance, value, vector in _candidate_rows(qs, extra=("value_json", "embeddings__vector")):
            rows.append((pk, version, relevance))
            found[pk] = (json.loads(value) if isinstance(value, str) else value or {}, vector)
    return rows, found


def _scope_name(base: QuerySet[LongTermMemory], model_name: str, sql_key: tuple | None = None) -> tuple | None:
    """What names a scope in the cache: the model and the SQL selecting its candidates (None: no SQL),
    that SQL compiled once per ``sql_key`` (:func:`_compiled`)."""
    compiled = _compiled(lambda: base.order_by().values_list("pk"), None if sql_key is None else (*sql_key, "name"))
    return None if compiled is None else (model_name, connection.alias, *compiled)


def _read_items(base: QuerySet[LongTermMemory], ids: list[str], embedder,
                found: dict[str, tuple] | None = None) -> tuple[Rows, bool]:
    """The items ``ids`` (sorted) as :class:`Rows`: read (one query per ``READ_BATCH`` ids; ``found`` when
    the caller read them already: ``{id: (value, vector)}``), vectors missing embedded (at most
    ``MAX_EMBED_ON_THE_FLY``), compacted; and whether every item was there with its stored vector."""
    # Read, embedded if need be and compacted ``READ_BATCH`` items at a time: holding every item's
    # float32 vector and stacking them took a 929 MB peak to build a 100,000-item scope (a 98 MB matrix
    # kept); see benchmarks/README.md § Retrieval.
    size, dim = int(embedder.dim) * 4, int(embedder.dim)
    ints = np.empty((len(ids), dim), dtype=VECTOR_DTYPE)
    scales = np.empty(len(ids), dtype=np.float32)
    kept_ids, texts, types, days = [], [], [], []
    complete = True
    budget = MAX_EMBED_ON_THE_FLY
    for start in range(0, len(ids), READ_BATCH):
        batch_ids = ids[start : start + READ_BATCH]
        if found is None:
            qs = (
                base.filter(pk__in=batch_ids)
                .order_by()
                .annotate(vec=FilteredRelation("embeddings", condition=Q(embeddings__model_name=embedder.name)))
                .values_list("pk", "value_json", "vec__vector", "created_at")
            )
            rows = {pk: (value or {}, vector, created) for pk, value, vector, created in qs}
        else:
            rows = found
        missing = [pk for pk in batch_ids if pk in rows and (rows[pk][1] is None or len(rows[pk][1]) != size)]
        fresh: dict[str, np.ndarray] = {}
        if missing:
            complete = False
            memories = list(LongTermMemory.objects.filter(pk__in=missing[:budget])) if budget > 0 else []
            budget -= len(memories)
            if memories:
                vectors = memory_embed_many(memories, embedder=embedder, return_vectors=True)
                fresh = dict(zip([m.pk for m in memories], vectors, strict=True))
        vectors = []
        for pk in batch_ids:
            if pk not in rows:
                continue
            value, blob, *created = rows[pk]
            if pk in fresh:
                vector = fresh[pk]
            elif blob is not None and len(blob) == size:
                vector = np.frombuffer(blob, dtype=np.float32)
            else:
                continue
            kept_ids.append(pk)
            vectors.append(vector)
            texts.append(str(value.get("content", "")))
            types.append(str(value.get("type", "")))
            days.append(item_day(value, created[0] if created else None))
        if vectors:
            done = len(kept_ids) - len(vectors)
            batch = np.vstack(vectors).astype(np.float32, copy=False)
            ints[done : len(kept_ids)], scales[done : len(kept_ids)] = compact_vectors(batch)
    ints, scales = ints[: len(kept_ids)], scales[: len(kept_ids)]
    ints.flags.writeable = False
    scales.flags.writeable = False
    rows = Rows(ids=kept_ids, ints=ints, scales=scales, texts=texts, type_weights=ranking.type_weights(types),
                days=np.asarray(days, dtype=np.float64))
    return rows, complete and len(kept_ids) == len(ids)


def _changed_scope(data: ScopeData, base: QuerySet[LongTermMemory], ids: list[str], versions: list[str],
                   embedder) -> tuple[ScopeData, bool] | None:
    """``data`` changed into the scope of the candidates ``ids`` and ``versions`` by the rows that differ
    (read by id), and whether it may be kept; None when too much changed (a full build is cheaper)."""
    keys = version_keys(ids, versions)
    gone, added = keys_changed(data.keys, keys)
    if len(gone) + len(added) > max(16, CHANGED_MAX_SHARE * len(ids)):
        return None
    rows, complete = _read_items(base, [ids[i] for i in added.tolist()], embedder)
    if len(rows.ids) < len(added):  # items without a vector (beyond the embedding budget) or gone: left out
        present = set(rows.ids)
        keep = np.ones(len(ids), dtype=bool)
        keep[[i for i in added.tolist() if ids[i] not in present]] = False
        ids, versions = list(compress(ids, keep)), list(compress(versions, keep))
        keys = (keys[0][keep], keys[1][keep])
        gone, added = keys_changed(data.keys, keys)
    changed = data.changed(ids=ids, versions=versions, gone=gone, added=added, rows=rows, keys=keys)
    return changed, complete


def scope_data(
    base: QuerySet[LongTermMemory], ids: list[str], versions: list[str], embedder, *, cacheable: bool,
    found: dict[str, tuple] | None = None, sql_key: tuple | None = None,
    relevances: list[float] | None = None, log: LogPosition | None = None,
) -> ScopeData:
    """The vectors, types, keyword index, days and centralities (``vector_cache.ScopeData``) of the
    candidates ``ids`` (sorted) of versions ``versions``: the scope kept by this process if it has the
    same candidates, or it changed by the rows that differ, or read and built (``found`` when the caller
    read the rows already: ``{id: (value, vector)}``, never kept); vectors missing are embedded.

    Kept only when every candidate has its vector: an item changes ``updated_at`` when its content
    (and so its vector) changes, so the ids and versions name the vectors too. With ``relevances`` (the
    candidates' scores) and ``log`` (the change log's position taken before they were read), the kept
    scope follows the log from there (:func:`_followed_scope`). ``sql_key``: a hashable
    name of the SQL of ``base`` (``memory_rank``'s), to compile it once.
    """
    name = _scope_name(base, embedder.name, sql_key) if cacheable and found is None else None
    data = scope_cache.get(name) if name is not None else None

    def keep(data: ScopeData) -> ScopeData:
        if log is not None and relevances is not None:  # it follows the change log from ``log`` on
            scores = np.asarray(relevances, dtype=np.float32)
            scores.flags.writeable = False
            data = replace(data, relevances=scores, log=log)
        scope_cache.put(name, data)
        return data

    if data is not None:
        if data.ids == ids and data.versions == versions:
            return keep(data) if log is not None else data
        changed = _changed_scope(data, base, ids, versions, embedder)
        if changed is not None:
            data, complete = changed
            return keep(data) if complete else data
    rows, complete = _read_items(base, ids, embedder, found)
    data = ScopeData.build(rows, versions if complete else _versions_of(rows.ids, ids, versions),
                           ranking.KeywordIndex)
    if name is not None and complete:
        data = keep(data)
    return data


def _followed_scope(base: QuerySet[LongTermMemory], embedder, *, sql_key: tuple | None,
                    keep: bool) -> ScopeData | None:
    """The scope this process keeps, brought up to the change log (``ltm.store.change_log``): the log's rows
    past its position (one query by primary key), the items they name re-read through the scope's own
    query (:func:`_candidate_rows_of`: gone, moved out, archived, changed, or only rescored) and those new
    or changed read in full, spliced in (``ScopeData.with_items``): the scope a full read would build.
    ``None`` when it must be read in full: not kept, kept without a position, the log pruned past it, more
    than ``CHANGED_MAX_SHARE`` of it changed (a bulk decay), or an item without its vector. ``keep``: keep
    the result with its new position (not inside a transaction, whose writes a rollback would take back)."""
    name = _scope_name(base, embedder.name, sql_key)
    data = scope_cache.get(name) if name is not None else None
    if data is None or data.log is None or data.relevances is None:
        return None
    past = _logged_past(data.log, _changes_most(data))
    if past is None:
        return None
    rows, logged = past
    if not rows and not data.log.gaps:
        return data
    fresh = {pk: (version, relevance) for pk, version, relevance in _candidate_rows_of(base, logged, sql_key=sql_key)}
    ids, versions = data.ids, data.versions or []
    removed, added, rescored = [], [], {}
    for pk in logged:
        at = bisect_left(ids, pk)
        present = at < len(ids) and ids[at] == pk
        now = fresh.get(pk)
        if present and now is not None and versions[at] == now[0]:
            rescored[pk] = now[1]
            continue
        if present:
            removed.append(pk)
        if now is not None:
            added.append(pk)
    items, complete = _read_items(base, added, embedder)
    if not complete or items.ids != added:
        return None
    data = data.with_items(removed=removed, rows=items, versions=[fresh[pk][0] for pk in added],
                           relevances=[fresh[pk][1] for pk in added], rescored=rescored, log=log_moved(data.log, rows))
    if keep:
        scope_cache.put(name, data)
    return data


def _outside_transactions() -> bool:
    """Whether this connection runs in no transaction of ours (a test case's own does not count): what a
    search read inside one may include its writes, which a rollback takes back with their log rows."""
    return all(getattr(block, "_from_testcase", False) for block in connection.atomic_blocks)


def _versions_of(kept: list[str], ids: list[str], versions: list[str]) -> list[str]:
    version = dict(zip(ids, versions))
    return [version[pk] for pk in kept]


def memories_by_id(ids: list[str]) -> dict[str, LongTermMemory]:
    """``LongTermMemory.objects.in_bulk(ids)`` as one hand-written SELECT whose rows the ORM's converters
    turn into the same instances (``memoryboard.rows``): ``in_bulk`` took 1.1 ms of CPU for 10 items, this
    0.5 ms (benchmarks/README.md § Proxy CPU per request; every search and agent turn loads them)."""
    if not ids:
        return {}
    qn = connection.ops.quote_name
    meta = LongTermMemory._meta
    sql = (f"SELECT {select_columns(LongTermMemory, 'm')} FROM {qn(meta.db_table)} m "
           f"WHERE m.{qn(meta.pk.column)} IN ({', '.join(['%s'] * len(ids))})")
    with connection.cursor() as cursor:
        cursor.execute(sql, list(ids))
        rows = cursor.fetchall()
    return {memory.pk: memory for memory, _extra in instances(LongTermMemory, rows)}


class MemoEmbedder:
    """An embedder remembering the vectors it made, for one search or one save: the query and its view
    are embedded once for the current and the superseded items, and a saved statement's vector is the
    one its candidate search made."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self._memo: dict[str, np.ndarray] = {}

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def remember(self, text: str, vector) -> None:
        """Take ``vector`` as the embedding of ``text`` (computed by the same model earlier)."""
        self._memo[text] = np.asarray(vector, dtype=np.float32)

    def embed(self, texts):
        texts = list(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if missing:
            self._memo.update(zip(missing, np.asarray(self._inner.embed(missing), dtype=np.float32)))
        return np.vstack([self._memo[t] for t in texts]) if texts else np.zeros((0, 0), np.float32)


def _validity_scope(queryset: QuerySet[LongTermMemory], *, include_superseded: bool,
                    as_of: datetime | None) -> QuerySet[LongTermMemory]:
    """The items a search considers: current ones (``ltm.store.states``: not archived here, their expiry
    checked as they are loaded); with ``include_superseded`` also superseded ones; ``as_of`` every state
    that was ever believed, so neither deleted, nor waiting for review, nor rejected (then filtered by
    :func:`_valid_at`: what was current then)."""
    if as_of is not None:
        return queryset.exclude(archived=True, archived_reason__in=[
            ArchivedReason.USER_DELETED, ArchivedReason.PENDING_REVIEW, ArchivedReason.REJECTED])
    if include_superseded:
        return queryset.filter(Q(archived=False) | Q(archived_reason=ArchivedReason.SUPERSEDED))
    return queryset.filter(archived=False)


def _valid_at(rows: list[tuple], as_of: datetime) -> list[tuple]:
    """The candidate rows whose item was current at ``as_of``: ``validFrom`` (else ``created_at``) <= as_of
    < ``validTo`` (open when absent), not past its expiry then, and not waiting for review then (an item
    approved later was believed from its approval on, as its state changes record)."""
    keep: set[str] = set()
    ids = [row[0] for row in rows]
    for start in range(0, len(ids), READ_BATCH):
        batch = ids[start : start + READ_BATCH]
        reviewed = dict(MemoryStateChange.objects.filter(memory_id__in=batch, old_state=MemoryState.PENDING_REVIEW)
                        .order_by().values("memory_id").annotate(at=Min("created_at")).values_list("memory_id", "at"))
        for memory in LongTermMemory.objects.filter(pk__in=batch).only("id", "value_json", "created_at"):
            valid_to = memory.valid_to
            if (memory.valid_from <= as_of and (valid_to is None or as_of < valid_to)
                    and not is_past_expiry(memory, now=as_of) and reviewed.get(memory.pk, as_of) <= as_of):
                keep.add(memory.pk)
    return [row for row in rows if row[0] in keep]


def memory_rank(
    *,
    queryset: QuerySet[LongTermMemory],
    query: str,
    k: int = DEFAULT_K,
    embedder=None,
    user_id: str | None = None,
    min_relevance: float | None = None,
    scope_key: tuple | None = None,
    now=None,
    include_superseded: bool = False,
    as_of: datetime | None = None,
    follow_superseded: bool = True,
) -> Ranking:
    """Rank the active items of a scope for a query: the one search of long-term memory.

    Args:
        queryset: the scope: what the caller may read (``ltm.store.selectors``), possibly filtered.
        query: the text to search for; blank finds nothing.
        k: how many items at most (capped at ``MAX_K``).
        embedder: default the configured one.
        user_id: whose pause rules apply when the scope is one user's; ``None`` applies every rule.
        min_relevance: the least match returned (default ``ranking.MIN_RELEVANCE``, the agent's; 0 for
            the k best whatever they score, as :func:`memory_search` does).
        scope_key: a hashable name of ``queryset`` (equal keys, the same SQL), when the caller has one:
            the candidates' SQL is then compiled once per scope while the user has no pause rule.
        now: when the query is asked (default now): "last month", 去年 are relative to it.
        include_superseded: superseded items are candidates too (by default only current ones are).
        as_of: "what did we believe then": the items current at that time (``validFrom <= as_of <
            validTo``, not expired then) whatever their state now, except deleted ones and those never
            believed (waiting for review, rejected).
        follow_superseded: a superseded item matching the query brings in the current item that
            replaced it (:func:`_with_successors`; not with ``include_superseded`` or ``as_of``).

    Returns:
        The results best first (each with its score parts) and every candidate with its outcome.
    """
    embedder = _embedder(embedder)
    if follow_superseded and not isinstance(embedder, MemoEmbedder):
        embedder = MemoEmbedder(embedder)  # the superseded items' ranking reuses the query's vector
    minimum = ranking.MIN_RELEVANCE if min_relevance is None else float(min_relevance)
    k = _bounded_k(query, k)
    result = Ranking(query=query, k=k, model=embedder.name, min_relevance=minimum)
    if k == 0:
        return result
    base = _validity_scope(queryset, include_superseded=include_superseded, as_of=as_of)
    if as_of is not None or include_superseded:
        scope_key = None
    if user_id is None:  # staff: a process answers its first one once its host's index follows the log
        ann_wait_for_start()
    rules = _pause_rules_q(user_id)
    # One user's scope is searched exactly whatever its size (bounded by max-items); a scope across
    # users larger than EXACT_MAX takes its candidates from the HNSW index.
    large = user_id is None and bool(base.order_by().values_list("pk")[EXACT_MAX : EXACT_MAX + 1])
    qvec, found, data, start = None, None, None, None
    if large:
        qvec = ranking.query_vector(embedder, query)
        keys = ann_candidates(model_name=embedder.name, dim=int(embedder.dim), vector=qvec, count=ANN_CANDIDATES)
        if keys is None:
            logger.warning("no HNSW index for %s: exact search over a large scope", embedder.name)
            rows = _candidate_rows(base)
        else:
            rows, found = _index_candidate_rows(base, keys, embedder.name)
            result.index = "hnsw"
        sql_key = None
    else:
        sql_key = None if scope_key is None or rules is not None else (scope_key, user_id, connection.vendor)
        # A scope this process keeps follows the change log (only the items changed since are read);
        # otherwise every candidate is read, the log's position taken first.
        if as_of is None and log_kept():
            keep = _outside_transactions()
            data = _followed_scope(base, embedder, sql_key=sql_key, keep=keep)
            start = log_start() if data is None and keep else None
        rows = _candidate_rows(base, sql_key=sql_key) if data is None else []
    if as_of is not None:
        rows = _valid_at(rows, as_of)
    if not rows and (data is None or not data.ids):
        return result  # nothing to compare with: the query is not even embedded
    paused_ids = _paused_ids(base if found is None else base.filter(pk__in=[row[0] for row in rows]), rules,
                             sql_key=sql_key)
    if qvec is None:
        qvec = ranking.query_vector(embedder, query)
    if data is None:
        rows.sort(key=itemgetter(0))  # ids are unique: 10 ms less than comparing tuples at 100,000 rows (SQLite)
        # One column at a time: ``zip(*rows)`` took 57 ms of CPU for 100,000 rows, this 5 ms.
        ids, versions, relevances = (list(map(itemgetter(column), rows)) for column in range(3))
        data = scope_data(base, ids, versions, embedder, cacheable=result.index == "exact", found=found,
                          sql_key=sql_key, relevances=relevances, log=start)
    else:
        ids, relevances = data.ids, data.relevances
    present = data.ids
    if len(present) < len(ids):  # some candidates have no vector: align the columns with ``present``
        result._unscored = [pk for pk in ids if pk not in data.position]
        relevances = [relevance for pk, relevance in zip(ids, relevances) if pk in data.position]
    if not present:
        return result
    paused_flags = np.zeros(len(present), dtype=bool)
    if paused_ids:
        position = data.position
        paused_flags[[position[pk] for pk in paused_ids if pk in position]] = True
    relevances = np.asarray(relevances, dtype=np.float32)
    # Candidates from the HNSW index are the query's neighbours, not a scope: no centrality.
    central = None
    if result.index == "exact" and data.mean_cosines is not None:
        central = ranking.centrality(data.mean_cosines)
    scores = ranking.score(
        cosine=data.cosines(qvec),
        keyword=data.keywords.scores(query),
        types=data.type_weights,
        relevance_scores=relevances,
        model_name=embedder.name,
        time=_time_matches(data, query, now, embedder, relevances, central),
        centrality=central,
        attribute=ranking.attribute_affinity(embedder, qvec, data.cosines, data.vectors),
    )
    scores = _related_by_clauses(scores, present, paused_flags, qvec, embedder)
    order = ranking.rank_order(scores)
    paused = paused_flags[order]
    below = (scores.relevance < minimum)[order]
    eligible = ~paused & ~below
    # Diversity among the first eligible items that are related at all (the agent's minimum): an item
    # is never put below one that is probably unrelated for being like one above it.
    related = eligible & (scores.relevance >= ranking.MIN_RELEVANCE)[order]
    pool = np.flatnonzero(related)[: ranking.DIVERSITY_POOL]
    order, scores, loaded = _own_facts_first(order, pool, scores, present, query)
    order, scores = _diversified(order, pool, scores, data)
    result._scored, result._order = present, order
    result._scores = scores.reordered(order)
    returned, expired, memories = _load_unexpired(present, order, np.flatnonzero(eligible), k, now=as_of or now,
                                                  loaded=loaded)
    order = _newer_in_conflict_first(order, np.flatnonzero(returned), result, present, memories, data, embedder)
    # Outcomes as codes, named when read (``Ranking._outcomes``, ``Ranking.top_candidates``).
    result._codes = np.where(paused, 0, np.where(below, 1, np.where(returned, 2, np.where(expired, 4, 3))))
    chosen = [(present[order[i]], result._scores.parts(int(i))) for i in np.flatnonzero(returned)]
    result.results = [
        ScoredMemory(memory=memories[pk], score=parts.final, parts=parts) for pk, parts in chosen if pk in memories
    ]
    if follow_superseded and not include_superseded and as_of is None:
        result.results = _with_successors(result.results, queryset=queryset, query=query, k=k, embedder=embedder,
                                          user_id=user_id, minimum=minimum, rules=rules, sql_key=sql_key)
    return result


def _related_by_clauses(scores: ranking.Scores, present: Sequence[str], paused: np.ndarray, qvec: np.ndarray,
                        embedder) -> ranking.Scores:
    """``scores`` with the ``ranking.CLAUSE_POOL`` candidates ranked first below the agent's minimum that share a
    word with the query or its attribute related by their best clause (``ranking.with_clause_cosines``), whoever
    searches (the agent is given what a search shows, less what is under its minimum): "cancelled PureGym,
    joined the climbing wall near work instead" is far from "Where does the user work out?" as a whole (0.13), its
    second clause is not (0.20). The attribute term is read of each clause too: "feeling human again. anyway I'm a
    night-shift nurse so back to work tomorrow" has 0.54 of one's job as a whole, "I'm a night-shift nurse" 1.
    Items of one clause are left as they are; the clauses' vectors are the embedder's
    (the shipped one remembers its last 1,024 texts), and only an offline one's: an embeddings endpoint would be
    asked a second time per search."""
    if not getattr(embedder, "is_offline", False):
        return scores
    below = np.flatnonzero((scores.relevance < ranking.MIN_RELEVANCE) & ~paused
                           & ((scores.keyword > 0) | (scores.attribute > 0)))
    if not len(below):
        return scores
    top = below[np.argsort(-scores.final[below], kind="stable")[: ranking.CLAUSE_POOL]]
    memories = memories_by_id([present[i] for i in top])
    positions, texts, owners = [], [], []
    for i in top.tolist():
        memory = memories.get(present[i])
        pieces = [clause.text for clause in split_clauses(memory.content)] if memory is not None else []
        if len(pieces) > 1:
            positions.append(i)
            owners.extend([len(positions) - 1] * len(pieces))
            texts.extend(pieces)
    if not texts:
        return scores
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    cosines = vectors @ np.asarray(qvec, dtype=np.float32)
    best = np.full(len(positions), -1.0, np.float32)
    np.maximum.at(best, np.asarray(owners), cosines)
    attributes = ranking.attribute_affinity(embedder, qvec, lambda v: vectors @ v, lambda at: vectors[at])
    if attributes is not None:
        attributes_best = np.zeros(len(positions), np.float32)
        np.maximum.at(attributes_best, np.asarray(owners), attributes)
        attributes = attributes_best
    return ranking.with_clause_cosines(scores, np.asarray(positions), best, embedder.name, attributes)


def _newer_in_conflict_first(order: np.ndarray, ranks: np.ndarray, result: Ranking, present: Sequence[str],
                             memories: dict[str, LongTermMemory], data: ScopeData, embedder) -> np.ndarray:
    """``order`` with the given items at ``ranks`` in the order of ``ranking.newer_in_conflict_first`` (their
    ``conflictWith``, read of the loaded rows; their nearest attributes only when one is in conflict), ``result``'s
    order and scores with it."""
    given = order[ranks]
    loaded = [memories[present[i]] for i in given.tolist()]
    rivals = [memory.conflict_with for memory in loaded]
    if len(loaded) < 2 or not any(rivals):
        return order
    nearest = ranking.nearest_attributes(embedder, data.vectors(given))
    items = list(zip([memory.pk for memory in loaded], [memory.valid_from for memory in loaded], rivals,
                     result._scores.attribute[ranks].tolist(), nearest))
    moved = ranking.newer_in_conflict_first(items)
    if moved == list(range(len(items))):
        return order
    permutation = np.arange(len(order))
    permutation[ranks] = ranks[moved]
    order = order[permutation]
    result._order, result._scores = order, result._scores.reordered(permutation)
    return order


def _own_facts_first(order: np.ndarray, ranks: np.ndarray, scores: ranking.Scores, present: Sequence[str],
                     query: str) -> tuple[np.ndarray, ranking.Scores, dict[str, LongTermMemory]]:
    """When ``query`` asks about the person (``llm.cues.asks_about_the_user``), the candidates at ``ranks`` (the first
    related ones) that are about someone else of theirs ("my husband just started as a paramedic" for "What does the
    user do for work?") lower by ``ranking.SUBJECT_WEIGHT`` (``ranking.about_someone_else``), in order again; and the
    items read to know it, by id (the results are among them)."""
    if len(ranks) < 2 or not asks_about_the_user(query):
        return order, scores, {}
    positions = order[ranks]
    loaded = memories_by_id([present[i] for i in positions])
    others = np.array([present[i] in loaded and tells_of_someone_else(loaded[present[i]].content)
                       for i in positions.tolist()])
    if not others.any():
        return order, scores, loaded
    scores = ranking.about_someone_else(scores, positions, others)
    order = order.copy()
    # Of two as near, the person's own first (a scope of two items has z-scores of ±1: the weight ties them).
    order[ranks] = positions[np.lexsort((others, -scores.final[positions]))]
    return order, scores, loaded


def _diversified(order: np.ndarray, ranks: np.ndarray, scores: ranking.Scores,
                 data: ScopeData) -> tuple[np.ndarray, ranking.Scores]:
    """``order`` with the candidates at ``ranks`` (the first eligible ones) put in the order of
    ``ranking.diversify``, and the scores with their redundancy and final score."""
    if len(ranks) < 2:
        return order, scores
    positions = order[ranks]
    chosen, redundancy, final = ranking.diversify(scores.final[positions], data.vectors(positions))
    order = order.copy()
    order[ranks] = positions[chosen]
    redundancies, finals = scores.redundancy.copy(), scores.final.copy()
    redundancies[positions[chosen]] = redundancy
    finals[positions[chosen]] = final
    return order, replace(scores, redundancy=redundancies, final=finals)


def _time_matches(data: ScopeData, query: str, now, embedder, relevances: np.ndarray,
                  central: np.ndarray | None = None) -> np.ndarray | None:
    """``ranking.time_matches`` of the scope's items for the time ``query`` names (``None`` if it names
    none); an event's words ("before she moved") are matched like a query, to find its day."""
    window = query_window(query, now or timezone.now())
    if window is None:
        return None
    anchor = None
    if window.anchor:
        avec = ranking.query_vector(embedder, window.anchor)
        anchor = ranking.score(
            cosine=data.cosines(avec), keyword=data.keywords.scores(window.anchor), types=data.type_weights,
            relevance_scores=relevances, model_name=embedder.name, centrality=central,
        )
    return ranking.time_matches(data.days, window, anchor)


def _load_unexpired(ids: list[str], order: np.ndarray, eligible: np.ndarray, k: int, *,
                    now=None, loaded: dict[str, LongTermMemory] | None = None) -> tuple[np.ndarray, np.ndarray, dict]:
    """The best ``k`` eligible candidates not past their expiry at ``now`` (``ltm.store.states``: current),
    loaded: masks over the ranked candidates (returned, expired) and the loaded items by id.
    ``ids[order[i]]`` is the ``i``-th ranked candidate; ``eligible`` are ranks.

    Expiry is checked on the items about to be returned only (their rows are read anyway), not in the
    candidates' SQL: an expired item is rare (the worker's sweep archives it) and each one found costs one
    more read for the next candidate. One found not archived yet is archived at once
    (``ltm.store.tasks.archive_expired_met``). ``loaded``: items of this search already read, by id."""
    returned = np.zeros(len(order), dtype=bool)
    expired = np.zeros(len(order), dtype=bool)
    memories: dict[str, LongTermMemory] = {}
    now = now or timezone.now()
    cursor, taken, met = 0, 0, []
    read = dict(loaded or {})
    while taken < k and cursor < len(eligible):
        batch = eligible[cursor : cursor + (k - taken)]
        cursor += len(batch)
        read.update(memories_by_id([ids[order[i]] for i in batch if ids[order[i]] not in read]))
        for i in batch.tolist():
            memory = read.get(ids[order[i]])
            if memory is None:
                continue
            if is_past_expiry(memory, now=now):
                expired[i] = True
                if not memory.archived and is_past_expiry(memory):
                    met.append(memory.pk)
                continue
            returned[i] = True
            memories[memory.pk] = memory
            taken += 1
    archive_expired_met(met)
    return returned, expired, memories


# Hops followed from a superseded item to the current one (a chain of updates).
MAX_SUCCESSOR_HOPS = 10


def _with_successors(results: list[ScoredMemory], *, queryset: QuerySet[LongTermMemory], query: str, k: int,
                     embedder, user_id: str | None, minimum: float, rules: Q | None,
                     sql_key: tuple | None = None) -> list[ScoredMemory]:
    """A superseded item that matches the query stands in for the current item that replaced it.

    "What is the user's job?" matched "I work as a Java backend developer"; "I am a Rust developer now"
    superseded it and may be worded so that the query alone does not reach it. The superseded items of
    the scope are ranked for the query (usually few: no model call, the query's vector is reused), and
    the current successor of each one returned takes its place with its score, unless the successor is
    already among the results with a better one. Paused and out-of-scope successors are not added.
    """
    def stale_scope() -> QuerySet[LongTermMemory]:
        return queryset.filter(archived=True, archived_reason=ArchivedReason.SUPERSEDED)

    # One query for one id: most scopes have none. Its SQL is compiled once per scope, as the candidates'
    # (0.35 ms of CPU per agent turn less in benchmarks/proxy_profile.py).
    if not _read_rows(lambda: stale_scope().order_by().values_list("pk")[:1],
                      None if sql_key is None else (*sql_key, "superseded")):
        return results
    # A stale item stands in only when it is about the query, whatever the search's own minimum.
    ranked = memory_rank(queryset=stale_scope(), query=query, k=k, embedder=embedder, user_id=user_id,
                         min_relevance=max(minimum, ranking.MIN_RELEVANCE), include_superseded=True,
                         follow_superseded=False).results
    if not ranked:
        return results
    best: dict[str, ScoredMemory] = {item.memory.pk: item for item in results}
    stand_ins: dict[str, ScoredMemory] = {}
    for stale in ranked:
        successor, hops, seen = stale.memory.superseded_by, 0, {stale.memory.pk}
        while successor and hops < MAX_SUCCESSOR_HOPS and successor not in seen:
            seen.add(successor)
            row = LongTermMemory.objects.filter(pk=successor).values_list("archived", "archived_reason", "value_json").first()
            if row is None:
                successor = None
                break
            archived, reason, value = row
            if not archived:
                break
            successor = (value or {}).get("supersededBy") if reason == ArchivedReason.SUPERSEDED else None
            hops += 1
        if successor and not archived and (successor not in stand_ins or stale.score > stand_ins[successor].score):
            stand_ins[successor] = stale
    eligible = set(
        queryset.filter(current_q(), pk__in=list(stand_ins))
        .exclude(Exists(MemoryFlag.objects.filter(memory_id=OuterRef("pk"), paused=True)))
        .values_list("pk", flat=True)
    )
    if rules is not None and eligible:  # the caller's pause rules (memory_rank read them once)
        eligible -= set(LongTermMemory.objects.filter(rules, pk__in=list(eligible)).values_list("pk", flat=True))
    added = {pk: stale for pk, stale in stand_ins.items() if pk in eligible
             and (pk not in best or best[pk].score < stale.score)}
    if not added:
        return results
    memories = memories_by_id(list(added))
    for pk, stale in added.items():
        if pk in memories:
            best[pk] = ScoredMemory(memory=memories[pk], score=stale.score, parts=None, related=stale.relevance)
    return sorted(best.values(), key=lambda item: -item.score)[:k]


def memory_search(
    *,
    queryset: QuerySet[LongTermMemory],
    query: str,
    k: int = DEFAULT_K,
    embedder=None,
    user_id: str | None = None,
    include_superseded: bool = False,
    as_of: datetime | None = None,
    min_relevance: float = 0.0,
    scope_key: tuple | None = None,
) -> list[ScoredMemory]:
    """The results of :func:`memory_rank` for a search someone asks for (API search, "My memories",
    the admin's related items): the ``k`` best, ranked, without the agent's minimum relevance unless
    ``min_relevance`` is given (a paraphrase's evidence often scores below it: docs/retrieval.md
    § Fusion; each result's ``parts.match`` says how close it is). Access statistics are not touched:
    only an agent's retrieval counts as a use. ``scope_key``: as :func:`memory_rank`'s (e.g. from
    ``selectors.memory_scope_for``), for a ``queryset`` that no filter narrowed."""
    return memory_rank(queryset=queryset, query=query, k=k, embedder=embedder, user_id=user_id,
                       include_superseded=include_superseded, as_of=as_of, min_relevance=min_relevance,
                       scope_key=scope_key).results


def memory_retrieval_enabled(user_id: str) -> bool:
    """The user's "use my memories" switch (on unless turned off)."""
    value = UserMemorySettings.objects.filter(user_id=user_id).values_list("use_memories", flat=True).first()
    return value is not False


def memory_switches(user_id: str) -> tuple[bool, bool]:
    """The user's two switches, "use my memories" and "save new memories" (each on unless turned off),
    in one query: an agent turn reads both (retrieval, then the extraction filter)."""
    # Hand-written: the two ORM queries it replaces cost 1.0 ms of CPU, this 0.09 ms (benchmarks/README.md
    # § Proxy CPU per request).
    qn = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {qn('use_memories')}, {qn('save_memories')} FROM "
                       f"{qn(UserMemorySettings._meta.db_table)} WHERE {qn('user_id')} = %s", [str(user_id)])
        row = cursor.fetchone()
    return (True, True) if row is None else (bool(row[0]), bool(row[1]))


def memory_log_access(
    items: Sequence[ScoredMemory], *, agent_id: str, conversation_id: str, kind: str, now=None
) -> None:
    """Count a use of each item and record it in the access log.

    The in-memory items are updated at once; the database writes (one UPDATE, one bulk INSERT) go
    through :mod:`memoryboard.ltm.search.access_log`, off the request path unless tasks run inline.
    """
    if not items:
        return

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


def namespace_scope(namespace: Namespace) -> QuerySet[LongTermMemory]:
    """The items of one agent and user, in every spelling of their namespace (``selectors.namespace_q``)."""
    return LongTermMemory.objects.filter(namespace_q(namespace))


def retrievable_items(namespace: Namespace) -> QuerySet[LongTermMemory]:
    """The items a retrieval for ``namespace`` chooses from: current, not paused and not covered by the
    user's pause rules (the user's "use my memories" switch is :func:`memory_switches`)."""
    items = namespace_scope(namespace).filter(state_q("active"))
    rules = _pause_rules_q(namespace.user_id)
    return items.exclude(rules) if rules is not None else items


def memory_retrieve_ranking(
    *,
    namespace: Namespace,
    query: str,
    k: int = DEFAULT_K,
    agent_id: str = "",
    conversation_id: str = "",
    kind: str = MemoryAccess.Kind.RETRIEVAL,
    embedder=None,
    log_access: bool = True,
    receipt: bool = False,
    enabled: bool | None = None,
    now=None,
) -> Ranking | None:
    """Session-start retrieval (and the ``memory_search`` tool) for one namespace: :func:`memory_rank`
    over the namespace's items with the user's pause rules and "use my memories" switch.

    The returned items' ``access_count`` and ``last_accessed_at`` are updated, and one access-log row
    per item is written (see :func:`memory_log_access`), unless ``log_access`` is False (previews).

    Args:
        namespace: built on the server from the authenticated user and the agent's configuration.
        query: usually the user's message.
        k: how many items at most (the agent's ``load-max-items``).
        agent_id: the reading agent, for the access log.
        conversation_id: the reading conversation, for the access log.
        kind: ``retrieval``, ``tool_search`` or ``injection``.
        embedder: the embedder; default the configured one.
        log_access: False skips the access statistics (benchmarks and previews).
        receipt: store a retrieval receipt (``ltm.search.receipts``; agent turns).
        enabled: the user's "use my memories" switch when the caller has read it (:func:`memory_switches`);
            ``None`` reads it.
        now: when the query is asked (default now; the evaluation replays questions asked earlier).

    Returns:
        The whole ranking (results best first, candidates with outcomes); ``None`` when the user
        turned memories off.

    Raises:
        ValueError: for an unknown ``kind``.
    """
    if kind not in MemoryAccess.Kind.values:
        raise ValueError(f"unknown access kind {kind!r}")
    if not (memory_retrieval_enabled(namespace.user_id) if enabled is None else enabled):
        return None
    found = memory_rank(queryset=namespace_scope(namespace), query=query, k=k, embedder=embedder,
                        user_id=namespace.user_id, scope_key=("namespace", *namespace_spellings(namespace)), now=now)
    if log_access:
        memory_log_access(found.results, agent_id=agent_id, conversation_id=conversation_id, kind=kind)
        expiry.memory_refresh_on_read([item.memory for item in found.results], agent_id=agent_id)
    if receipt:
        receipt_record(ranking=found, agent_id=agent_id, user_id=namespace.user_id,
                       conversation_id=conversation_id, kind=kind)
    return found


def memory_retrieve(**options) -> list[ScoredMemory]:
    """The results of :func:`memory_retrieve_ranking` (same keyword arguments); ``[]`` when the user
    turned memories off."""
    found = memory_retrieve_ranking(**options)
    return [] if found is None else found.results


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
        lines.append(f"{number}. [{item.memory.memory_type}] {content} (相关度: {item.relevance:.2f})")
    lines.append("</long_term_memory>")
    return "\n".join(lines)
