"""The reconcile step of every write to long-term memory (DESIGN 1.6).

A new statement (an extracted item, a tool or MCP save, ``POST /api/v1/memories/``, an imported row,
an edited text) is compared with the owner's current items of the same agent, the few nearest by
meaning and those about the same slot (``ltm.write.reconcile_scope``), and one decision is taken:

- ``same``: a repeat or paraphrase. No new row; the existing item is reinforced (``seenCount``,
  ``lastSeenAt`` and the source appended to ``sources`` in its ``value_json``).
- ``update``: the same thing with a new value. The new item is stored; each replaced item is kept,
  ``archived = 1`` with ``archived_reason = superseded``, ``validTo`` = the new item's ``validFrom`` and
  ``supersededBy`` = its id (restorable like any archived item).
- ``new``: stored, nothing touched.
- ``conflict``: unsure. Both kept current, each naming the other in ``conflictWith``, for review.

Online (``OPENAI_BASE_URL`` set) a chat model judges (``llm.judge``: reasoning first, candidates only),
and its ``update`` supersedes only what the offline signals place on the same attribute (or the single
nearest item; the other targets are flagged as conflicts: :func:`bound_judged_update`); when it fails, the
offline decision (``ltm.write.reconcile_offline``: the shipped encoder, attribute prototypes, grammatical
cues and the slot rules of ``ltm.write.statements``) decides and the decision says so. Offline, it decides.
An item approved in review is reconciled too (:func:`reconcile_approved`). Every decision is audited with
its reason and who decided (``judge``: ``rules`` for the offline decision).

The decision and its writes are one transaction under the namespace's lock (``ltm.store.locks``): two
concurrent saves of the same update leave one current item.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone as dt_timezone
from functools import partial

from django.db import connection, transaction
from django.utils import timezone

from memoryboard.audit import audit_record, audit_record_many
from memoryboard.llm.errors import LLMError
from memoryboard.llm.factory import get_chat_model, get_embedder, is_online
from memoryboard.llm.attributes import ends_value
from memoryboard.llm.embeddings import UniversalSentenceEncoder
from memoryboard.llm.judge import judge_statement
from memoryboard.ltm.search.embeddings import memory_embed_many
from memoryboard.ltm.search.retrieval import MemoEmbedder, memories_by_id
from memoryboard.ltm.search.time_expressions import stated_time
from memoryboard.ltm.store.items import memory_snapshot, record_state_change
from memoryboard.ltm.store.locks import NamespaceLockTimeout, namespace_lock
from memoryboard.ltm.store.signals import announce_states_changed
from memoryboard.ltm.store.states import memory_state
from memoryboard.ltm.store.upsert import memory_upsert_many
from memoryboard.ltm.store.versions import version_record_created_many
from memoryboard.ltm.write.items import memory_build
from memoryboard.ltm.write.reconcile_scope import READ_BATCH, STATEMENTS_AT_ONCE, nearest_current_many
from memoryboard.ltm.write.reconcile_offline import clauses, offline_decide, relations
from memoryboard.ltm.write.statements import normalize_statement, rules_decide, statement_slots
from memoryboard.models import ArchivedReason, AuditLog, LongTermMemory, MemoryState, Source
from memoryboard.models.labels import CONFLICT_FLAGGED
from memoryboard.models.namespaces import Namespace

logger = logging.getLogger(__name__)

# Candidates compared by the rules (the nearest by meaning, and as many about the same slot at most),
# and the fewer shown to the judge.
CANDIDATES = 16
JUDGE_CANDIDATES = 5
# ``sources`` entries kept on a reinforced item (the newest).
SOURCES_KEPT = 20

SAME, UPDATE, NEW, CONFLICT = "same", "update", "new", "conflict"


def iso(moment: datetime) -> str:
    """ISO 8601 in UTC with ``Z``, as ``value_json`` keeps times."""
    text = moment.astimezone(dt_timezone.utc).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


@dataclass
class Decision:
    """What the reconcile step decided, why, and who decided (``rules``, ``llm:<model>``, or the rules
    after a failed judge: ``rules (judge failed: timeout)``)."""

    verdict: str
    targets: list[str]
    reason: str
    judge: str
    valid_from: datetime | None = None  # the time the statement names, if any
    candidates: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # beside an update: flagged for review, not superseded

    def as_dict(self) -> dict:
        found = {"decision": self.verdict, "targets": self.targets, "reason": self.reason[:1000],
                 "judge": self.judge, "candidates": self.candidates}
        if self.conflicts:
            found["conflicts"] = self.conflicts
        return found


@dataclass
class ReconcileResult:
    """A reconciled save: the decision, the item stored (or reinforced), what it superseded or conflicts with."""

    decision: Decision
    memory: LongTermMemory
    created: bool
    superseded: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)


def shared_embedder(embedder=None):
    """The embedder (default the configured one) remembering its vectors (``retrieval.MemoEmbedder``)."""
    if isinstance(embedder, MemoEmbedder):
        return embedder
    if embedder is None:
        embedder = get_embedder()
    return MemoEmbedder(embedder)


# --- candidates and the decision -----------------------------------------------------------------


def reconcile_candidates(
    *, namespace: Namespace, content: str, embedder, now: datetime, exclude_ids: tuple[str, ...] = (),
) -> list[tuple[LongTermMemory, float]]:
    """The owner's current items of the agent that ``content`` may repeat or replace, with their cosine,
    nearest first (``reconcile_scope.nearest_current``: the ``CANDIDATES`` nearest by the cosine of the
    statement's vector, the one its save stores, and up to as many holding one of its slots), without
    expired items and ``exclude_ids``."""
    return reconcile_candidates_many(namespace=namespace, contents=[content], embedder=embedder, now=now,
                                     exclude_ids=exclude_ids)[content]()


def reconcile_candidates_many(
    *, namespace: Namespace, contents: list[str], embedder, now: datetime, exclude_ids: tuple[str, ...] = (),
) -> dict[str, Callable[[], list[tuple[LongTermMemory, float]]]]:
    """:func:`reconcile_candidates` of each of ``contents`` (a batch's statements, decided before any of
    them is written) from one read of the scope, one matrix product and one read of the candidate items:
    by content, a call giving its candidates; each call lends the candidates' stored vectors to the
    embedder (the decision compares them again) as that statement is decided."""
    contents = list(dict.fromkeys(contents))
    # The statements are embedded only when the namespace holds items to compare with: a first save
    # embeds its statement when it is written, after the erase gate (ltm.store.erase_gate), as every save does.
    vectors: list[dict] = [{} for _ in contents]
    nearest = nearest_current_many(
        namespace=namespace, vectors=lambda: _embedded_with_clauses(contents, embedder),
        slot_keys=[{slot.key for slot in statement_slots(content)} for content in contents],
        embedder=embedder, count=CANDIDATES, exclude_ids=exclude_ids, vectors_out=vectors)
    ids = list(dict.fromkeys(pk for found in nearest for pk, _cosine in found))
    memories = {}
    for start in range(0, len(ids), READ_BATCH):
        memories.update(memories_by_id(ids[start : start + READ_BATCH]))

    def candidates(found: list[tuple[str, float]], stored: dict) -> list[tuple[LongTermMemory, float]]:
        kept = []
        for pk, cosine in found:
            memory = memories.get(pk)
            if memory is None or memory.archived:
                continue
            if isinstance(embedder, MemoEmbedder) and pk in stored:  # the decision compares them again
                embedder.remember(memory.content, stored[pk])
            expires = memory.expires_at
            if expires is not None and expires <= now:
                continue
            kept.append((memory, cosine))
        return kept

    return {content: partial(candidates, found, stored) for content, found, stored in zip(contents, nearest, vectors)}


def _embedded_with_clauses(contents: list[str], embedder):
    """The statements' vectors; when the decision's encoder is ``embedder`` and it remembers what it made,
    their clauses are embedded in the same call (the decision compares each clause: ``compared``), since one
    call to the encoder costs less than two (a statement of two clauses, then its clauses: 1.9 + 2.3 ms with
    USE; the three texts at once: 2.7 ms)."""
    if not isinstance(embedder, MemoEmbedder) or signal_encoder(embedder) is not embedder:
        return embedder.embed(contents)
    parts = [part for content in contents for part in clauses(content)]
    return embedder.embed([*contents, *parts])[: len(contents)]


def signal_encoder(embedder=None):
    """What the offline decision compares statements with: the shipped encoder (the vectors ``embedder``
    remembers when it is that encoder; else the encoder's own, remembered by the process)."""
    if embedder is not None and getattr(embedder, "name", "") == UniversalSentenceEncoder.name:
        return embedder
    return UniversalSentenceEncoder()


def offline_decision(content: str, candidates: list[tuple[str, str, float]], embedder=None):
    """:func:`reconcile_offline.offline_decide` with the shipped encoder."""
    encoder = signal_encoder(embedder)
    return offline_decide(content, candidates, encode=encoder.embed, encoder_name=UniversalSentenceEncoder.name)


def bound_judged_update(decision: Decision, *, content: str, candidates: list[tuple[LongTermMemory, float]],
                        embedder=None) -> Decision:
    """A judge's ``update`` supersedes only the targets that the offline signals also place on the statement's
    attribute (``reconcile_offline.relations``: not another attribute, not someone else), or, when it
    places none of them, the single nearest target; the other targets are kept current and flagged as
    conflicts for review (a judge naming every candidate cannot retire a user's unrelated items)."""
    if decision.verdict != UPDATE or not decision.targets:
        return decision
    encoder = signal_encoder(embedder)
    named = [(m.pk, m.content, cosine) for m, cosine in candidates if m.pk in decision.targets]
    found = relations(content, named, encode=encoder.embed, encoder_name=UniversalSentenceEncoder.name)
    placed = [pk for pk, _cosine, relation in found if relation.kind != NEW]
    if not placed and found:
        placed = [max(found, key=lambda f: f[1])[0]]
    rest = [pk for pk in decision.targets if pk not in placed]
    if rest:
        decision.targets, decision.conflicts = placed, rest
        decision.reason += (f" (the offline signals place {len(placed)} of the {len(placed) + len(rest)} named "
                            f"items on the same attribute: the others are flagged for review)")
    return decision


def reconcile_decide(*, content: str, candidates: list[tuple[LongTermMemory, float]], now: datetime,
                     use_judge: bool = True, embedder=None) -> Decision:
    """The decision for ``content`` against ``candidates``: the judge online, the offline decision
    (:mod:`ltm.write.reconcile_offline`) offline or when the judge fails. ``use_judge=False``: offline,
    online too (a write phase that must not wait on a model while it holds the database's write lock)."""
    stated = stated_time(content, now=now)
    ids = [m.pk for m, _cosine in candidates]
    if not candidates:
        return Decision(NEW, [], "no current item of this agent to compare with", "rules", stated, ids)
    judge = "rules"
    if not use_judge and is_online():
        judge = "rules (in an agent turn's write phase: no model call under the write lock)"
    elif is_online():
        shown = candidates[:JUDGE_CANDIDATES]
        try:
            verdict = judge_statement(
                chat_model=get_chat_model(), statement=content, today=now.date().isoformat(),
                candidates=[{"id": m.pk, "content": m.content, "valid_from": iso(m.valid_from)} for m, _c in shown],
            )
            judged = Decision(verdict.verdict, verdict.target_ids, verdict.reasoning or "(no reasoning given)",
                              f"llm:{verdict.model}", stated, ids)
            return bound_judged_update(judged, content=content, candidates=shown, embedder=embedder)
        except LLMError as exc:
            logger.warning("reconcile judge failed (%s): the offline rules decide", exc.reason)
            judge = f"rules (judge failed: {exc.reason})"
    rule = offline_decision(content, [(m.pk, m.content, cosine) for m, cosine in candidates], embedder)
    return Decision(rule.verdict, rule.targets, rule.reason, judge, stated, ids)


# --- the writes ----------------------------------------------------------------------------------


def _reason(decision: Decision) -> str:
    """The audit reason: what was decided (a code, ``models.labels``); who decided (the judge) and why (its
    reasoning, which may quote the statements) are in the entry's ``after["reconcile"]``, which an erase
    empties."""
    return f"reconcile {decision.verdict}"


def _reinforce(*, memory: LongTermMemory, source: str, conversation_id: str, actor, decision: Decision,
               now: datetime, audit=audit_record) -> LongTermMemory:
    memory = LongTermMemory.objects.select_for_update().get(pk=memory.pk)
    before = memory_snapshot(memory)
    value = dict(memory.value_json or {})
    value["seenCount"] = int(value.get("seenCount") or 1) + 1
    value["lastSeenAt"] = iso(now)
    sources = [s for s in (value.get("sources") or []) if isinstance(s, dict)]
    if not sources:
        sources.append({"source": str(value.get("source", "")), "at": iso(memory.created_at)})
    entry = {"source": source, "at": iso(now)}
    if conversation_id:
        entry["conversationId"] = str(conversation_id)
    value["sources"] = (sources + [entry])[-SOURCES_KEPT:]
    memory.value_json = value
    # Only value_json: the content, and so the vector and updated_at (which names it), are unchanged.
    LongTermMemory.objects.filter(pk=memory.pk).update(value_json=value)
    audit(actor=actor, action=AuditLog.Action.UPDATE, object_type="memory", object_id=memory.pk,
          before=before, after={**memory_snapshot(memory), "reconcile": decision.as_dict()}, reason=_reason(decision))
    return memory


def _supersede(*, old_id: str, new: LongTermMemory, actor, decision: Decision, now: datetime,
               audit=audit_record) -> bool:
    old = LongTermMemory.objects.select_for_update().filter(pk=old_id).first()
    if old is None or old.archived:
        return False
    before = memory_snapshot(old)
    old_state = memory_state(old)
    value = dict(old.value_json or {})
    value["validTo"] = iso(max(new.valid_from, old.valid_from))
    value["supersededBy"] = new.pk
    old.value_json = value
    old.archived, old.archived_at, old.archived_reason = True, now, ArchivedReason.SUPERSEDED
    old.save(update_fields=["value_json", "archived", "archived_at", "archived_reason"])
    audit(actor=actor, action=AuditLog.Action.ARCHIVE, object_type="memory", object_id=old.pk,
          before=before, after={**memory_snapshot(old), "reconcile": decision.as_dict()},
          reason=ArchivedReason.SUPERSEDED)
    record_state_change(old.pk, old_state, MemoryState.SUPERSEDED, actor, ArchivedReason.SUPERSEDED)
    announce_states_changed(memory_ids=[old.pk])
    return True


def _flag_conflicts(*, other_ids: list[str], new: LongTermMemory, actor, decision: Decision,
                    audit=audit_record) -> list[str]:
    """Flag each of ``other_ids`` still current as in conflict with ``new`` (its ``conflictWith``; only
    ``value_json``, so its version is unchanged); the ids flagged. One locking read and one write for all."""
    wanted = list(dict.fromkeys(other_ids))
    if not wanted:
        return []
    others = {m.pk: m for m in LongTermMemory.objects.select_for_update().filter(pk__in=wanted).order_by("pk")}
    flagged = [others[pk] for pk in wanted if pk in others and not others[pk].archived]
    for other in flagged:
        before = memory_snapshot(other)
        value = dict(other.value_json or {})
        value["conflictWith"] = list(dict.fromkeys([*(value.get("conflictWith") or []), new.pk]))
        other.value_json = value
        audit(actor=actor, action=AuditLog.Action.UPDATE, object_type="memory", object_id=other.pk,
              before=before, after={**memory_snapshot(other), "reconcile": decision.as_dict()}, reason=CONFLICT_FLAGGED)
    _write_values(flagged)
    return [other.pk for other in flagged]


def _write_values(memories: list[LongTermMemory]) -> None:
    """Write each item's ``value_json`` (only it: ``updated_at``, its version, stays), one statement run for
    all of them (``bulk_update``'s CASE over JSON values cost 3 ms for nine items)."""
    if not memories:
        return
    meta, qn = LongTermMemory._meta, connection.ops.quote_name
    field = meta.get_field("value_json")
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {qn(meta.db_table)} SET {qn(field.column)} = %s WHERE {qn(meta.pk.column)} = %s",
            [(field.get_db_prep_save(m.value_json, connection), m.pk) for m in memories])


def _decide(*, memory: LongTermMemory, candidates: list[tuple[LongTermMemory, float]], embedder, now: datetime,
            use_judge: bool = True, judged: Decision | None = None):
    observed = memory.valid_from if (memory.value_json or {}).get("validFrom") else now
    if judged is not None and sorted(judged.candidates) == sorted(m.pk for m, _cosine in candidates):
        decision = judged
    else:
        decision = reconcile_decide(content=memory.content, candidates=candidates, now=observed, use_judge=use_judge,
                                    embedder=embedder)
        if judged is not None and judged.judge.startswith("llm:") and decision.judge != judged.judge:
            decision.judge = "rules (the candidates changed after the judge's call)"
    return decision, {m.pk: m for m, _cosine in candidates}, observed


def reconcile_prejudge(*, namespace: Namespace, memory: LongTermMemory, embedder=None) -> Decision | None:
    """The judge's decision for the unsaved item ``memory``, taken before its write phase (an agent turn's
    think phase, in no transaction): the candidates are read under the namespace's lock, the judge is
    called after it is released. ``None`` offline, or when the lock stayed taken. The write phase
    (:func:`memory_reconcile_write` with ``judged``) follows it when its own candidates are the same ones,
    else the rules decide."""
    if not is_online():
        return None
    embedder = shared_embedder(embedder)
    now = timezone.now()
    observed = memory.valid_from if (memory.value_json or {}).get("validFrom") else now
    try:
        with namespace_lock(namespace):
            candidates = reconcile_candidates(namespace=namespace, content=memory.content, embedder=embedder,
                                              now=now)
    except NamespaceLockTimeout:
        return None
    return reconcile_decide(content=memory.content, candidates=candidates, now=observed, embedder=embedder)


def _stores(*, memory: LongTermMemory, decision: Decision, by_id: dict, observed: datetime) -> bool:
    """Whether ``decision`` stores ``memory`` (else it reinforces the item it repeats); when it does,
    ``memory.value_json`` as it is stored (valid from the stated or the observed time, the items it
    conflicts with)."""
    if decision.verdict == SAME and decision.targets and decision.targets[0] in by_id:
        return False
    if decision.verdict == SAME:  # a judge naming something else: store rather than lose the statement
        decision.verdict, decision.reason = NEW, decision.reason + " (the repeated item is gone: stored)"
    value = dict(memory.value_json or {})
    value["validFrom"] = iso(decision.valid_from or observed)
    if decision.verdict == CONFLICT or decision.conflicts:
        flagged = decision.targets if decision.verdict == CONFLICT else decision.conflicts
        value["conflictWith"] = [pk for pk in flagged if pk in by_id]
    memory.value_json = value
    return True


def _apply(*, memory: LongTermMemory, decision: Decision, by_id: dict, observed: datetime, stored: bool, actor,
           now: datetime, audit, audit_reason: str | None = None, audit_details: dict | None = None) -> ReconcileResult:
    """The writes of one decision besides the new item's row, vector and version (``stored``: written
    already, with the batch's others): the reinforcement of a repeat, or the new item's audit entry, what
    it supersedes and the conflicts it flags."""
    if not stored:
        conversation_id = str((memory.value_json or {}).get("conversationId", ""))
        kept = _reinforce(memory=by_id[decision.targets[0]], source=memory.source, conversation_id=conversation_id,
                          actor=actor, decision=decision, now=now, audit=audit)
        return ReconcileResult(decision=decision, memory=kept, created=False)
    audit(actor=actor, action=AuditLog.Action.CREATE, object_type="memory", object_id=memory.pk,
          after={**memory_snapshot(memory), "reconcile": decision.as_dict()},
          reason=audit_reason or _reason(decision), details=audit_details if audit_reason else None)
    result = ReconcileResult(decision=decision, memory=memory, created=True)
    if memory.archived:  # waiting for review: used only once approved, so it replaces nothing yet
        return result
    newer = []
    for target in decision.targets if decision.verdict == UPDATE else ():
        old = by_id.get(target)
        if old is None:
            continue
        if old.created_at > observed:  # said before the stored one was (an import, an old conversation)
            newer.append(old)
        elif _supersede(old_id=target, new=memory, actor=actor, decision=decision, now=now, audit=audit):
            result.superseded.append(target)
    # A conflict's items, and those beside a bounded update: kept current, flagged for review.
    flagged = [*(decision.targets if decision.verdict == CONFLICT else ()), *decision.conflicts]
    result.conflicts += _flag_conflicts(other_ids=[pk for pk in flagged if pk in by_id], new=memory, actor=actor,
                                        decision=decision, audit=audit)
    if newer:  # stored as what was true before the newer item: superseded by it from the start
        successor = min(newer, key=lambda m: m.valid_from)
        _supersede(old_id=memory.pk, new=successor, actor=actor, decision=decision, now=now, audit=audit)
        memory.refresh_from_db()
    return result


def memory_reconcile_write(
    *, namespace: Namespace, memory: LongTermMemory, actor=None, embedder=None, now: datetime | None = None,
    use_judge: bool = True, judged: Decision | None = None,
) -> ReconcileResult:
    """Reconcile the unsaved item ``memory`` (from ``write.items.memory_build``) and write what was decided.

    The caller holds the namespace's lock and a transaction (:func:`memory_save_reconciled` does both).
    ``memory.value_json`` may already carry ``validFrom`` (the message time) and ``expiresAt``; a time
    the statement names ("last month") takes the place of ``validFrom``. ``judged``: the decision
    :func:`reconcile_prejudge` took for it, followed if the candidates are still the same.
    """
    return memory_reconcile_many(namespace=namespace, memories=[memory], actor=actor, embedder=embedder, now=now,
                                 use_judge=use_judge, judged={memory.pk: judged} if judged else None)[0]


def memory_reconcile_many(
    *, namespace: Namespace, memories: list[LongTermMemory], actor=None, embedder=None, now: datetime | None = None,
    audit_reason: str | None = None, event: str = "create", use_judge: bool = True,
    judged: dict[str, Decision] | None = None, audit_details: dict | None = None,
) -> list[ReconcileResult]:
    """Reconcile several unsaved items of one namespace (the caller holds the lock and a transaction).

    Every item is decided against the namespace as it was before the batch (its items read once for the
    batch: :func:`reconcile_candidates_many`) and against the batch's earlier statements, then the
    decisions are written in order (the new items' rows, vectors, versions and the audit entries each in
    one statement for the batch); a repeat of an earlier item of the batch (same text) is dropped and
    reported as ``same``. ``audit_reason``: the reason of the created items' audit entries
    (e.g. ``import``; the decision is in their ``after.reconcile`` either way). ``event``: the version
    event of the created items (``create``, ``extract``, ``import``). ``judged``: decisions taken before
    (:func:`reconcile_prejudge`) by item id.
    """
    now = now or timezone.now()
    embedder = shared_embedder(embedder)
    texts = [m.content for m in memories]
    if len(texts) > 1:  # one model call for the batch's statements (the candidates' search and the save reuse them)
        for start in range(0, len(texts), 256):
            embedder.embed(list(dict.fromkeys(texts[start : start + 256])))

    planned, first_of, stored_before, candidates_of = [], {}, [], {}
    for position, memory in enumerate(memories):
        key = normalize_statement(memory.content)
        if key in first_of:
            planned.append((memory, None, {}, now, first_of[key], []))
            continue
        if memory.content not in candidates_of:  # the candidates of this and the next statements: one read
            candidates_of = reconcile_candidates_many(
                namespace=namespace, contents=texts[position : position + STATEMENTS_AT_ONCE], embedder=embedder,
                now=now)
        decision, by_id, observed = _decide(memory=memory, candidates=candidates_of[memory.content](),
                                            embedder=embedder, now=now, use_judge=use_judge,
                                            judged=(judged or {}).get(memory.pk))
        # Against the batch's earlier statements too (they are not searchable yet).
        # Statements of one batch are said together: one replaces another only on a recognised slot.
        within = rules_decide(memory.content, [(m.pk, m.content, 0.0) for m in stored_before]) if stored_before \
            else None
        if within is not None and within.verdict == SAME and decision.verdict != SAME:
            planned.append((memory, None, {}, now, next(m for m in stored_before if m.pk == within.targets[0]), []))
            continue
        first_of[key] = memory
        replaces = within.targets if within is not None and within.verdict == UPDATE else []
        if decision.verdict != SAME:
            stored_before.append(memory)
        planned.append((memory, decision, by_id, observed, None, replaces))
    folded = _fold_ended_values(planned)
    results: list[ReconcileResult | None] = [None] * len(planned)
    stores = [repeat_of is None and _stores(memory=memory, decision=decision, by_id=by_id, observed=observed)
              for memory, decision, by_id, observed, repeat_of, _replaces in planned]
    # The new items' rows, vectors and versions in one statement each (the erase gate passed once), before
    # the other writes: nothing of the batch reads them before.
    created = [entry[0] for entry, stored in zip(planned, stores) if stored]
    memory_upsert_many(created)
    memory_embed_many(created, embedder=embedder)
    by_reason: dict[str, list[LongTermMemory]] = {}
    for entry, stored in zip(planned, stores):
        if stored:
            by_reason.setdefault(audit_reason or _reason(entry[1]), []).append(entry[0])
    for reason, group in by_reason.items():
        version_record_created_many(group, actor=actor, event=event, reason=reason,
                                    details=audit_details if audit_reason else None)
    entries: list[dict] = []  # the batch's audit entries, in the order of its writes: one INSERT at its end

    def audit(**entry) -> None:
        entries.append(entry)

    for index, (memory, decision, by_id, observed, repeat_of, replaces) in enumerate(planned):
        if repeat_of is not None:
            continue
        result = _apply(memory=memory, decision=decision, by_id=by_id, observed=observed, stored=stores[index],
                        actor=actor, now=now, audit=audit, audit_reason=audit_reason,
                        audit_details=audit_details)
        for pk in replaces:  # an earlier statement of the batch that this one updates
            if result.created and _supersede(old_id=pk, new=result.memory, actor=actor, decision=decision, now=now,
                                             audit=audit):
                result.superseded.append(pk)
        results[index] = result
    if entries:
        audit_record_many(entries)
    position_of = {id(entry[0]): index for index, entry in enumerate(planned)}
    for index, (memory, _decision, _by_id, _observed, repeat_of, _replaces) in enumerate(planned):
        if repeat_of is None:
            continue
        other = next((r for r in results if r is not None
                      and (r.memory is repeat_of or r.memory.content == repeat_of.content)), None)
        if other is None:  # it repeats a statement that reinforced a stored item said otherwise, or was folded
            at = position_of[id(repeat_of)]
            while results[at] is None:
                at = position_of[id(planned[at][4])]
            other = results[at]
        reason = folded.get(index, "repeats an earlier statement of the same batch")
        results[index] = ReconcileResult(decision=Decision(SAME, [other.memory.pk], reason, "rules"),
                                         memory=other.memory, created=False)
    return results  # type: ignore[return-value]


def _fold_ended_values(planned: list) -> dict[int, str]:
    """A statement that ends a value ("I quit Java", 我从腾讯离职了) followed in the same batch by one that
    replaces the same stored item ("I am a Rust developer now", 现在在阿里巴巴上班) is one change told in two
    clauses: it is not kept as a current fact of its own (it would answer "what is their job?" with the
    value that ended); the later statement supersedes what it ends. Changes ``planned`` in place; returns
    the reasons of the folded entries by index."""
    folded = {}
    for index, (memory, decision, by_id, _observed, repeat_of, _replaces) in enumerate(planned):
        if repeat_of is not None or decision is None or decision.verdict != UPDATE or not ends_value(memory.content):
            continue
        for later in planned[index + 1:]:
            _memory, later_decision, later_by_id, _o, later_repeat, _r = later
            if later_repeat is None and later_decision is not None and later_decision.verdict == UPDATE \
                    and set(later_decision.targets) & set(decision.targets):
                later_decision.targets = list(dict.fromkeys(later_decision.targets + decision.targets))
                later_by_id.update({pk: m for pk, m in by_id.items() if pk in decision.targets})
                planned[index] = (memory, None, {}, _observed, later[0], [])
                folded[index] = "ends the value that a later statement of the same batch replaces"
                break
    return folded


@contextmanager
def _locked_transaction(namespace: Namespace):
    with namespace_lock(namespace):
        with transaction.atomic():
            yield


def memory_save_reconciled(
    *,
    namespace: Namespace,
    content: str,
    memory_type: str,
    agent_id: str,
    source: str = Source.MANUAL,
    actor=None,
    conversation_id: str = "",
    memory_id: str | None = None,
    observed_at: datetime | None = None,
    expires_at: datetime | None = None,
    embedder=None,
    low_confidence: bool = False,
) -> ReconcileResult:
    """Save one statement through the reconcile step: lock, decide, write, audit, in one transaction.

    Args:
        observed_at: when the statement was made (the message time; default now): its ``validFrom``
            unless it names another time, and its ``created_at`` when earlier than now.
        expires_at: stored as ``expiresAt`` (``write.items.memory_build``: else the agent's ``ttl-days``).

    Raises:
        MemoryError: bad content or type (before anything is locked or written).
        NamespaceLockTimeout: the namespace stayed locked.
    """
    memory = memory_build(namespace=namespace, content=content, memory_type=memory_type, source=source,
                          agent_id=agent_id, memory_id=memory_id, conversation_id=conversation_id,
                          expires_at=expires_at, low_confidence=low_confidence)
    if observed_at is not None:
        memory.value_json["validFrom"] = iso(observed_at)
        memory.created_at = min(memory.created_at, observed_at)  # said then (an import's row, the evaluation)
    with _locked_transaction(namespace):
        return memory_reconcile_write(namespace=namespace, memory=memory, actor=actor, embedder=embedder)


def memory_save_many_reconciled(
    *, namespace: Namespace, memories: list[LongTermMemory], actor=None, embedder=None, event: str = "create",
    audit_reason: str | None = None, audit_details: dict | None = None,
) -> list[ReconcileResult]:
    """:func:`memory_reconcile_many` under the namespace's lock, in one transaction: all or nothing.
    ``audit_details``: what ``audit_reason`` is about, as data (``models.labels``)."""
    with _locked_transaction(namespace):
        return memory_reconcile_many(namespace=namespace, memories=memories, actor=actor, embedder=embedder,
                                     event=event, audit_reason=audit_reason, audit_details=audit_details)


def memory_reconcile_edit(*, memory: LongTermMemory, namespace: Namespace, actor=None, embedder=None) -> Decision:
    """Reconcile an item whose text was just edited against the owner's other current items (inside the
    edit's lock and transaction): what it replaces or repeats is superseded by it (an older duplicate only
    when the edited text says at least as much), a conflict is flagged on both, nothing is created.
    The decision is returned for the edit's own audit entry (the items it touched have theirs)."""
    now = timezone.now()
    embedder = shared_embedder(embedder)
    candidates = reconcile_candidates(namespace=namespace, content=memory.content, embedder=embedder, now=now,
                                      exclude_ids=(memory.pk,))
    decision = reconcile_decide(content=memory.content, candidates=candidates, now=now, embedder=embedder)
    by_id = {m.pk: m for m, _cosine in candidates}
    if decision.verdict == SAME:
        target = by_id.get(decision.targets[0])
        edited = normalize_statement(memory.content)
        if target is None or normalize_statement(target.content) not in edited:
            decision.verdict, decision.targets = NEW, []
            decision.reason += " (the other item says more: both kept)"
        else:
            decision.verdict = UPDATE
            decision.reason += " (an edit repeating an older item supersedes it)"
    flagged = decision.targets if decision.verdict == CONFLICT else decision.conflicts
    for target in decision.targets:
        if target in by_id and decision.verdict == UPDATE:
            _supersede(old_id=target, new=memory, actor=actor, decision=decision, now=now)
    conflicting = _flag_conflicts(other_ids=[pk for pk in flagged if pk in by_id], new=memory, actor=actor,
                                  decision=decision)
    if conflicting:
        value = dict(memory.value_json or {})
        value["conflictWith"] = list(dict.fromkeys([*(value.get("conflictWith") or []), *conflicting]))
        memory.value_json = value
        LongTermMemory.objects.filter(pk=memory.pk).update(value_json=value)
    return decision


def reconcile_approved(*, memory: LongTermMemory, namespace: Namespace, actor=None, **_signal) -> Decision:
    """An item just approved in review (``review.memory_approved``, in the approval's lock and transaction),
    reconciled like an edited text (:func:`memory_reconcile_edit`): what it replaces is superseded, an
    identical item is replaced by it, a conflict is flagged; its own audit entry records the decision."""
    decision = memory_reconcile_edit(memory=memory, namespace=namespace, actor=actor)
    if decision.verdict != NEW:
        audit_record(actor=actor, action=AuditLog.Action.UPDATE, object_type="memory", object_id=memory.pk,
                     after={**memory_snapshot(memory), "reconcile": decision.as_dict()}, reason=_reason(decision))
    return decision
