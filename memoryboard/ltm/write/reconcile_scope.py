"""The reconcile step's candidates: an owner's current items nearest to a statement, and those about
the same slot.

What the decision needs (``ltm.write.reconcile``: the rules of ``ltm.write.statements`` or the judge) is the few
current items of the namespace that a statement may repeat or replace:

- the nearest by meaning: the cosine of the statement's own vector, the one its save stores (no other
  model call, no query view, no keyword index: the statement is compared with statements, not asked as
  a question);
- the items holding one of its slots (where one lives, one's job, likes tea, …) wherever they rank: among
  5,000 items the nearest to "I moved to Paris." are other sentences about Paris, not "I live in London."
  (the evaluation set's scenarios of several steps, each put in 5,000 items of the benchmark's kind with
  their real vectors: the 16 nearest by cosine missed the item to replace in 13 updates, "when" and
  expiry scenarios, the search's 16 best (what the step used before) in 15, the 256 nearest still in 2;
  with the items of the same slot added, in none).

A save, or a batch of statements (a chat turn's; :func:`nearest_current_many`, their cosines one matrix
product), brings the namespace's index up to now once (:func:`current_scope`). Kept per namespace in the
process (:class:`ScopeIndex`, the ``KEPT_SCOPES`` used last), named by the items' ids and versions
(``updated_at``), so never stale: the vectors of the items as of the last full build
(``retrieval.scope_data``, from the vector cache when a search has just built the same scope), the vectors of
the items written since (read by id), and each item's slot keys (``statements.statement_slots``, carried over
from build to build). After ``REBUILD_AFTER`` items written or removed since the build, it is built again (a
5,000-item scope: ~200 ms of CPU for the vectors and keyword index, ~230 ms more for the slots of every item
the first time).

What is current now is read along the items' change log (``ltm.store.change_log``, kept by the database for
every writer) from the index's position: the log's rows past it and the items they name, read by id (two
small queries). Without a position (a new index, a log pruned past it, more than ``REBUILD_AFTER`` rows), every
item's id and version is read (one query, no content, no vector: at 5,000 items, about 5 ms of a save). A
save is one transaction, and what it reads may include its own writes, which a rollback takes back: the
position and what it read are kept only once that transaction commits (``transaction.on_commit``).

The caller holds the namespace's lock (``ltm.store.locks``), which serialises the use of one namespace's index.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import orjson
from django.db import connection, transaction
from django.db.models import CharField, FilteredRelation, Q, QuerySet
from django.db.models.functions import Cast

from memoryboard.ltm.search.retrieval import (
    namespace_scope, rows_by_ids, scope_data, version_rows, versions_logged_past,
)
from memoryboard.ltm.search.vector_cache import ScopeData
from memoryboard.ltm.store.change_log import LogPosition, log_kept, log_start
from memoryboard.ltm.write.statements import statement_slots
from memoryboard.models import LongTermMemory
from memoryboard.models.namespaces import Namespace, namespace_spellings

# Items written or removed since the last full build after which the scope is built again.
REBUILD_AFTER = 256
# Namespaces whose index a process keeps (the ones reconciled last).
KEPT_SCOPES = 16
READ_BATCH = 2_000
# Statements whose cosines are one matrix product (bounds its memory: 32 x 100,000 items x 4 bytes).
STATEMENTS_AT_ONCE = 32


@dataclass
class ScopeIndex:
    """One namespace's items as of its last full build (``data``, ``versions``), the items written
    since (``written``), and the slot keys of both (``slots``, ``by_slot``: of the built items)."""

    data: ScopeData
    versions: dict[str, str]  # id -> version, the items of ``data``
    slots: dict[str, tuple[str, frozenset[str]]]  # id -> (version, slot keys)
    by_slot: dict[str, list[str]]  # slot key -> ids of ``data`` holding it
    written: dict[str, tuple[str, np.ndarray]] = field(default_factory=dict)  # id -> (version, vector)
    # Committed state along the change log: its position and, as of it, the items not current as built
    # (id -> version now, or None: no longer current). None: not followed yet (every item's version is read).
    followed: tuple[LogPosition, dict[str, str | None]] | None = None


_indexes: OrderedDict[tuple, ScopeIndex] = OrderedDict()
_indexes_lock = threading.Lock()


def forget_scope_indexes() -> None:
    """Drop every kept index (tests)."""
    with _indexes_lock:
        _indexes.clear()


def _kept(key: tuple) -> ScopeIndex | None:
    with _indexes_lock:
        index = _indexes.get(key)
        if index is not None:
            _indexes.move_to_end(key)
        return index


def _keep(key: tuple, index: ScopeIndex) -> None:
    with _indexes_lock:
        _indexes[key] = index
        _indexes.move_to_end(key)
        while len(_indexes) > KEPT_SCOPES:
            _indexes.popitem(last=False)


def _slot_keys(content: str) -> frozenset[str]:
    return frozenset(slot.key for slot in statement_slots(content))


def _contents(scope, ids: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for start in range(0, len(ids), READ_BATCH):
        rows = scope.filter(pk__in=ids[start : start + READ_BATCH]).order_by().values_list("pk", "value_json")
        found.update((pk, str((value or {}).get("content", ""))) for pk, value in rows)
    return found


def _build(scope, current: dict[str, str], embedder, previous: ScopeIndex | None) -> ScopeIndex:
    ids = sorted(current)
    data = scope_data(scope, ids, [current[pk] for pk in ids], embedder, cacheable=True)
    versions = {pk: current[pk] for pk in data.ids}
    known = previous.slots if previous is not None else {}
    slots = {pk: known[pk] for pk, version in versions.items() if pk in known and known[pk][0] == version}
    missing = [pk for pk in versions if pk not in slots]
    for pk, content in _contents(scope, missing).items():
        slots[pk] = (versions[pk], _slot_keys(content))
    by_slot: dict[str, list[str]] = {}
    for pk in data.ids:
        for key in slots.get(pk, ("", frozenset()))[1]:
            by_slot.setdefault(key, []).append(pk)
    return ScopeIndex(data=data, versions=versions, slots=slots, by_slot=by_slot)


def _read_written(ids: list[str], embedder) -> dict[str, tuple[str, object, str]] | None:
    """``{id: (version, vector blob, content)}`` of items written since the build (ids the scope's query
    just returned); None when one has no vector of the model (a full build embeds it). One query per
    ``READ_BATCH`` ids, its SQL compiled once per model and database."""
    def written() -> QuerySet:
        return (LongTermMemory.objects.order_by()
                .annotate(vec=FilteredRelation("embeddings", condition=Q(embeddings__model_name=embedder.name)),
                          version=Cast("updated_at", output_field=CharField()))
                .values_list("pk", "version", "vec__vector", "value_json"))

    size = int(embedder.dim) * 4
    found = {}
    for pk, version, blob, value in rows_by_ids(written, ids, sql_key=("reconcile-written", embedder.name,
                                                                       connection.alias, connection.vendor)):
        if blob is None or len(blob) != size:
            return None
        value = orjson.loads(value) if isinstance(value, (str, bytes)) else value
        found[pk] = (version, blob, str((value or {}).get("content", "")))
    return found


@dataclass
class ScopeView:
    """A namespace's current items as the statements of one save or one turn are compared with them: the
    kept index patched with the items written since its build, read once. The caller holds the namespace's
    lock, so nothing else writes the scope while the view is used; a batch's statements are all decided
    before any of them is written (``reconcile.memory_reconcile_many``)."""

    index: ScopeIndex
    ids: list[str]  # the built items, then the items written since
    stale: np.ndarray | None  # the built items no longer current as they were built (None: none)
    written_ids: list[str]
    written: np.ndarray | None  # the vectors of ``written_ids``, one row each

    def cosines(self, vectors: np.ndarray) -> np.ndarray:
        """The cosines of each row of ``vectors`` with every item of ``ids`` (``-inf``: no longer current),
        one row per vector: one matrix product for all of them."""
        vectors, data = np.asarray(vectors, dtype=np.float32), self.index.data
        if len(vectors) == 1:  # one statement (a single save): the scope's own product, as a search makes it
            built = data.cosines(vectors[0])[None, :] if len(data.ids) else np.zeros((1, 0), np.float32)
            added = (self.written @ vectors[0])[None, :] if self.written is not None else None
        else:
            # one row per statement, as many rows of the scope widened at once (ScopeData.cosines)
            built = np.ascontiguousarray(data.cosines(vectors.T).T)
            added = (self.written @ vectors.T).T if self.written is not None else None
        if self.stale is not None:
            built[:, self.stale] = -np.inf
        return built if added is None else np.concatenate([built, added], axis=1)

    def nearest(self, cosines: np.ndarray, *, slot_keys: Iterable[str], count: int, exclude_ids: Iterable[str] = (),
                vectors_out: dict[str, np.ndarray] | None = None) -> list[tuple[str, float]]:
        """``(id, cosine)`` nearest first from one row of :meth:`cosines` (changed in place): the ``count``
        nearest and, of the items holding one of ``slot_keys``, the ``count`` nearest; never ``exclude_ids``.
        ``vectors_out`` receives the returned items' vectors."""
        index, ids = self.index, self.ids
        data, built = index.data, len(index.data.ids)
        for pk in set(exclude_ids):
            position = data.position.get(pk) if pk not in index.written else built + self.written_ids.index(pk)
            if position is not None:
                cosines[position] = -np.inf

        def nearest_first(positions) -> list[int]:  # ties by id: the same whatever the order of the rows
            return sorted(positions, key=lambda i: (-cosines[i], ids[i]))

        usable = int(np.isfinite(cosines).sum())
        take = min(count, usable)
        chosen: set[int] = set()
        if take:
            kth = -np.partition(-cosines, take - 1)[take - 1]  # the take-th best cosine
            chosen.update(nearest_first(np.flatnonzero(cosines >= kth).tolist())[:take])
        wanted = set(slot_keys)
        if wanted:
            holders = [data.position[pk] for key in wanted for pk in index.by_slot.get(key, ())]
            holders += [built + i for i, pk in enumerate(self.written_ids)
                        if index.slots.get(pk, ("", frozenset()))[1] & wanted]
            chosen.update(nearest_first({i for i in holders if np.isfinite(cosines[i])})[:count])
        found = nearest_first(chosen)
        if vectors_out is not None:
            inside = [i for i in found if i < built]
            vectors_out.update(zip((ids[i] for i in inside), data.vectors(np.asarray(inside, dtype=np.int64))))
            vectors_out.update((ids[i], index.written[ids[i]][1]) for i in found if i >= built)
        return [(ids[i], float(cosines[i])) for i in found]


def current_scope(*, namespace: Namespace, embedder) -> ScopeView | None:
    """The namespace's current items (paused ones included; expired ones too: the caller loads the items
    and checks) as a :class:`ScopeView`; None when it holds none. The kept index brought up to now: along
    the change log from its position (the items the log names past it, read by id), else by one read of
    every item's id and version; the vectors of the items written since the kept build (read by id), or a
    full build."""
    spellings = tuple(namespace_spellings(namespace))

    def scope():
        return namespace_scope(namespace).filter(archived=False)

    sql_key = ("reconcile", spellings, connection.vendor)

    def every_version() -> tuple[LogPosition | None, list[tuple[str, str]]]:
        """Every item's ``(id, version)``, and the log's position taken before the read."""
        position = log_start() if log_kept() else None
        return position, version_rows(scope, sql_key=sql_key)

    key = (spellings, embedder.name, connection.alias)
    index = _kept(key)
    moved, position, rows = None, None, None
    if index is not None and index.followed is not None and log_kept():
        along = _moved_along_log(scope, index, sql_key=sql_key)
        if along is not None:
            moved, position = along
    if moved is None:
        position, rows = every_version()
        if not rows:
            return None
        moved = {} if index is None else _moved_from_rows(index, rows)
    # Items of the build no longer current as they were (removed, or changed: then also among ``changed``),
    # and the items not in the build as they are now.
    gone = 0 if index is None else sum(pk in index.versions for pk in moved)
    changed = [(pk, version) for pk, version in moved.items() if version is not None]
    if index is not None and len(index.versions) - gone + len(changed) == 0:
        return None
    read = None
    if index is not None and len(changed) + gone <= REBUILD_AFTER:
        to_read = [pk for pk, version in changed if index.written.get(pk, ("",))[0] != version]
        read = _read_written(to_read, embedder) if to_read else {}
    if read is None:  # no index yet, too many changes, or an item without a vector: a full build (it embeds)
        if rows is None:
            position, rows = every_version()
            if not rows:
                return None
        index, moved, changed, gone = _build(scope(), dict(rows), embedder, index), {}, [], 0
        _keep(key, index)
    else:
        for pk, (version, blob, content) in read.items():
            index.written[pk] = (version, np.frombuffer(blob, dtype=np.float32))
            index.slots[pk] = (version, _slot_keys(content))
    # Only what is current counts: a write rolled back, or an item removed since, is left out.
    index.written = {pk: index.written[pk] for pk, version in changed
                     if pk in index.written and index.written[pk][0] == version}
    if position is not None:
        _follow_once_committed(index, position, moved)

    data = index.data
    stale = None
    if gone:  # only the built items still current as they were count
        stale = np.zeros(len(data.ids), dtype=bool)
        stale[[data.position[pk] for pk in moved if pk in index.versions]] = True
    written_ids = list(index.written)
    written = np.vstack([index.written[pk][1] for pk in written_ids]) if written_ids else None
    return ScopeView(index=index, ids=data.ids + written_ids, stale=stale, written_ids=written_ids, written=written)


def _moved_from_rows(index: ScopeIndex, rows: list[tuple[str, str]]) -> dict[str, str | None]:
    """The items not current as ``index`` built them, from every item's ``(id, version)``: ``{id: version
    now, or None when no longer current}``."""
    known = index.versions.get
    moved: dict[str, str | None] = {pk: version for pk, version in rows if known(pk) != version}
    if len(index.versions) > len(rows) - len(moved):  # built items gone
        present = {pk for pk, _version in rows}
        moved.update((pk, None) for pk in index.versions if pk not in present)
    return moved


def _moved_along_log(scope: Callable, index: ScopeIndex, *, sql_key: tuple,
                     ) -> tuple[dict[str, str | None], LogPosition] | None:
    """The index's moved items (:func:`_moved_from_rows`) brought from its position along the change log:
    the items the log names past it, read by id (``retrieval.versions_logged_past``); None when the log was
    pruned past the position or holds more rows than the index rebuilds after."""
    position, moved = index.followed
    past = versions_logged_past(scope, position, sql_key=sql_key, most=REBUILD_AFTER)
    if past is None:
        return None
    now, position = past
    moved = dict(moved)
    for pk, version in now.items():
        if index.versions.get(pk) == version:  # as built, or neither built nor current
            moved.pop(pk, None)
        else:
            moved[pk] = version
    return moved, position


def _follow_once_committed(index: ScopeIndex, position: LogPosition, moved: dict[str, str | None]) -> None:
    """Keep ``position`` and ``moved`` as the index's followed state once the caller's transaction commits
    (all it read is committed then; a rollback keeps nothing, so the kept state never holds a write taken
    back). Of two saves committing one after the other, the later position stays."""
    def follow() -> None:
        with _indexes_lock:
            if index.followed is None or index.followed[0].seq <= position.seq:
                index.followed = (position, moved)

    transaction.on_commit(follow)


def nearest_current_many(
    *, namespace: Namespace, vectors: np.ndarray | Callable[[], np.ndarray], slot_keys: list[Iterable[str]],
    embedder, count: int, exclude_ids: Iterable[str] = (),
    vectors_out: list[dict[str, np.ndarray]] | None = None,
) -> list[list[tuple[str, float]]]:
    """:func:`nearest_current` of several statements (one row of ``vectors`` and one ``slot_keys`` each)
    against one read of the scope, their cosines in one matrix product per ``STATEMENTS_AT_ONCE``."""
    view = current_scope(namespace=namespace, embedder=embedder)
    if view is None:
        return [[] for _ in slot_keys]
    if callable(vectors):  # made only when there is something to compare with
        vectors = vectors()
    vectors = np.asarray(vectors, dtype=np.float32).reshape(len(slot_keys), -1)
    found = []
    for start in range(0, len(vectors), STATEMENTS_AT_ONCE):
        cosines = view.cosines(vectors[start : start + STATEMENTS_AT_ONCE])
        for offset, row in enumerate(cosines):
            i = start + offset
            found.append(view.nearest(row, slot_keys=slot_keys[i], count=count, exclude_ids=exclude_ids,
                                      vectors_out=None if vectors_out is None else vectors_out[i]))
    return found


def nearest_current(
    *, namespace: Namespace, vector: np.ndarray | Callable[[], np.ndarray], slot_keys: Iterable[str], embedder,
    count: int,
    exclude_ids: Iterable[str] = (),
    vectors_out: dict[str, np.ndarray] | None = None,
) -> list[tuple[str, float]]:
    """``(id, cosine)`` of the namespace's current items (paused ones included; expired ones too: the
    caller loads the items and checks), nearest first: the ``count`` nearest to ``vector`` and, of the
    items holding one of ``slot_keys``, the ``count`` nearest; never ``exclude_ids``. ``vectors_out``
    receives the returned items' vectors (no model call: the decision compares them too)."""
    return nearest_current_many(
        namespace=namespace, vectors=vector, slot_keys=[slot_keys],
        embedder=embedder, count=count, exclude_ids=exclude_ids,
        vectors_out=None if vectors_out is None else [vectors_out])[0]
