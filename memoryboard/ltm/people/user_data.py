"""Everything stored about one platform user, for support and privacy requests: overview, export, erase.

Every read starts from ``ltm.store.selectors.own_memories`` (the one rule of which items are a user's), so
the user page, the export and the erase see exactly the same items as the user's own "My memories".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.apps import apps
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.db.models import BigIntegerField, Count, Min, Q, QuerySet
from django.db.models.fields.json import KT
from django.db.models.functions import Cast
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django_tasks.base import TaskResultStatus

from memoryboard.audit import audit_record, item_texts
from memoryboard.conversations import conversation_list
from memoryboard.ltm.people.process_texts import forget_user_texts
from memoryboard.ltm.search.ann import ann_erase
from memoryboard.ltm.store.change_log import memory_changes_erase
from memoryboard.ltm.store.erase_gate import erase_gate_close
from memoryboard.ltm.store.selectors import exact_text_q, own_memories, user_namespaces_q
from memoryboard.ltm.store.states import state_counts, state_of
from memoryboard.models import (
    AskFirst,
    AuditLog,
    ChatMessage,
    ConversationOwner,
    LongTermMemory,
    MemoryAccess,
    MemoryEmbedding,
    MemoryFlag,
    MemoryState,
    MemoryStateChange,
    MemoryType,
    MemoryVersion,
    PauseRule,
    PlaygroundTrace,
    ReplayShare,
    RetrievalReceipt,
    SummaryCacheEntry,
    UserMemorySettings,
)
from memoryboard.models.audit import USER_OBJECT_TYPES
from memoryboard.models.labels import MERGED_INTO, SAME_ITEM_IN_USE
from memoryboard.models.namespaces import parse_namespace
from memoryboard.playground_traces import ERASED_TRACES
from memoryboard.task_recovery import EXTRACT_TASK_PATHS, task_result_model

RECENT_ACCESSES = 20
RECENT_AUDIT = 50
RECENT_CONVERSATIONS = 50
# Rows erased per statement: one ``IN`` of a heavy account's ids (years of access-log rows) would pass
# SQLite's host-parameter limit (999 before SQLite 3.32, Django's own assumption; 250,000 on Debian's)
# and make one statement of megabytes on MariaDB (``max_allowed_packet``).
ERASE_BATCH = 900
TRACE_MATCH_MIN_CHARS = 16


@dataclass
class AgentCounts:
    """One agent's items of a user: counts by state and by type."""

    agent: str
    states: dict[str, int] = field(default_factory=lambda: {s: 0 for s in MemoryState.values if s != "purged"})
    types: dict[str, int] = field(default_factory=lambda: {t: 0 for t in MemoryType.values})
    total: int = 0


def memory_counts(*, user_id: str) -> list[AgentCounts]:
    """Per agent: the user's items by state (active, paused, archived, deleted) and by type."""
    qs = own_memories(user_id=user_id)
    rows = (
        qs.annotate(mtype=KT("value_json__type"))
        .values("namespace", "archived", "archived_reason", "mtype")
        .annotate(n=Count("pk"))
        .order_by()
    )
    paused = (
        qs.filter(archived=False, pk__in=MemoryFlag.objects.filter(paused=True).values("memory_id"))
        .values("namespace").annotate(n=Count("pk")).order_by()
    )
    by_agent: dict[str, AgentCounts] = {}

    def counts(namespace: str) -> AgentCounts:
        ns = parse_namespace(namespace)
        agent = ns.agent if ns else namespace
        return by_agent.setdefault(agent, AgentCounts(agent=agent))

    for row in rows:
        c = counts(row["namespace"])
        state = state_of(archived=row["archived"], archived_reason=row["archived_reason"])
        c.states[state] += row["n"]
        mtype = str(row["mtype"] or "").upper()
        c.types[mtype] = c.types.get(mtype, 0) + row["n"]
        c.total += row["n"]
    for row in paused:
        c = counts(row["namespace"])
        c.states[MemoryState.PAUSED] += row["n"]
        c.states[MemoryState.ACTIVE] -= row["n"]
    return sorted(by_agent.values(), key=lambda c: c.agent)


def recent_accesses(*, user_id: str, limit: int = RECENT_ACCESSES) -> list[MemoryAccess]:
    """The latest reads of the user's items by agents (retrieval, tool search, injection)."""
    ids = own_memories(user_id=user_id).values("pk")
    return list(MemoryAccess.objects.filter(memory_id__in=ids).order_by("-created_at", "-id")[:limit])


def audit_trail(*, user_id: str, limit: int = RECENT_AUDIT) -> list[AuditLog]:
    """The audit entries about the user, newest first: of their items (those purged since too), of the user
    (exports, erasures), of their bulk deletes and conversations (``subject_user_id``).

    Each item entry gets ``item_text`` (the item's text now, else as an entry recorded it) and
    ``item_gone`` (the item is no longer stored)."""
    entries = list(_audit_rows(str(user_id)).order_by("-created_at", "-id")[:limit])
    texts, recorded = item_texts({e.object_id for e in entries if e.object_type == "memory"})
    for e in entries:
        e.item_gone = e.object_type == "memory" and e.object_id not in texts
        snapshot = recorded.get(e.object_id) or {}
        e.item_text = texts.get(e.object_id) or str((snapshot.get("value_json") or {}).get("content", ""))
    return entries


def conversations(*, user_id: str, limit: int = RECENT_CONVERSATIONS) -> list:
    """The user's conversations, latest first (``conversations.conversation_list``: one message count)."""
    return conversation_list(queryset=ChatMessage.objects.filter(user_id=user_id), limit=limit)



def conversation_ids(*, user_id: str) -> set[str]:
    """The person's conversations, as every page counts them (the user page, the erase confirmation, both
    exports): every conversation with a stored message of theirs or a recorded owner (an owner row alone is
    written only when a conversation id is claimed)."""
    ids = set(ChatMessage.objects.filter(_user_q(user_id)).values_list("conversation_id", flat=True).distinct())
    ids |= set(ConversationOwner.objects.filter(_user_q(user_id)).values_list("conversation_id", flat=True))
    return ids


def audit_kept_counts(*, user_id: str) -> tuple[int, int]:
    """The person's audit entries an erase keeps without content: ``(still on their trail, no longer
    linked to them)``. Entries whose object is the person themself (exports, erasures, imports, settings)
    stay on their trail; the others lose whose they were (``user_data_erase``)."""
    rows = _audit_rows(str(user_id))
    on_trail = rows.filter(object_type__in=USER_OBJECT_TYPES).count()
    return on_trail, rows.count() - on_trail


def conversation_openings(conversation_ids: list[str]) -> dict[str, str]:
    """Each conversation's first user message (what it was about, to tell apart several with one agent)."""
    firsts = (ChatMessage.objects.filter(conversation_id__in=conversation_ids, role=ChatMessage.Role.USER)
              .values("conversation_id").annotate(first=Min("id")).values_list("first", flat=True))
    return dict(ChatMessage.objects.filter(pk__in=list(firsts)).values_list("conversation_id", "content"))


# --- Everything stored about a user, table by table: what the export lists is what the erase removes ------



@dataclass(frozen=True)
class Section:
    """One table's rows about a user: the export's key, how to find the rows, what erasing does.

    ``erase`` is ``"delete"`` (the row goes) or ``"anonymise"`` (the row stays with its content removed:
    audit entries keep who did what to which id and when, not what the content was).
    """

    key: str
    model: type
    rows: Callable[[str], QuerySet]
    fields: tuple[str, ...]
    erase: str = "delete"
    # Rows found through a JSON key are re-checked in Python, byte for byte: MySQL compares the extracted
    # text under the column's case-insensitive collation. Given the user id, returns the row predicate.
    check: Callable[[str], Callable[[dict], bool]] | None = None

    @property
    def table(self) -> str:
        return self.model._meta.db_table


def _items(user_id: str) -> QuerySet:
    return own_memories(user_id=user_id)


def _item_ids(user_id: str) -> QuerySet:
    return _items(user_id).values("pk")


def _user_q(user_id: str, field: str = "user_id") -> Q:
    return exact_text_q(field, [user_id])


def _conversation_q(user_id: str, field: str = "conversation_id") -> Q:
    """The user's conversations: those holding their messages and those they claimed (conversation ids
    compare as ``chat_message.conversation_id`` does: case-insensitively on MySQL)."""
    return (Q(**{f"{field}__in": ChatMessage.objects.filter(_user_q(user_id)).values("conversation_id")})
            | Q(**{f"{field}__in": ConversationOwner.objects.filter(_user_q(user_id)).values("conversation_id")}))


def _audit_rows(user_id: str) -> QuerySet:
    """Audit entries about the user (``subject_user_id``, see ``memoryboard.audit``): of their items, also
    items purged since, of the user (exports, erasures, imports, pause rules), of their bulk deletes and of
    their conversations (a memory strategy's entry records the rows it deleted). Matched byte for byte."""
    return AuditLog.objects.filter(exact_text_q("subject_user_id", [user_id]))


def _snapshot_key(value, key: str):
    return value.get(key) if isinstance(value, dict) else None


def _task_check(user_id: str) -> Callable[[dict], bool]:
    return lambda row: _snapshot_key(_snapshot_key(row["args_kwargs"], "kwargs"), "user_id") == user_id


def _task_rows(user_id: str) -> QuerySet:
    """Queued and finished extraction tasks of the user's turns (their arguments hold the turn's text)."""
    task_model = task_result_model()
    if task_model is None:
        return LongTermMemory.objects.none()
    return task_model.objects.filter(task_path__in=EXTRACT_TASK_PATHS, args_kwargs__kwargs__user_id=user_id)


def _erase_tasks(qs: QuerySet) -> None:
    """Queued and finished tasks go; a running one loses its arguments instead (its worker updates the row
    when it ends, and would stop on a missing row). Whatever it then tries to save is refused by the
    erase tombstone (``ltm.store.erase_gate``)."""
    qs.filter(status=TaskResultStatus.RUNNING).update(args_kwargs={"args": [], "kwargs": {}})
    qs.exclude(status=TaskResultStatus.RUNNING).delete()


def _admin_log_rows(user_id: str) -> QuerySet:
    """The Django admin's own history ("Recent actions") of the user's items and messages: rows written
    before the admin stopped putting item text into ``object_repr`` carry it, and every row names them."""
    # Message ids compared as numbers (a cast of the id to text would carry the connection's collation,
    # which MySQL refuses to compare with the column's).
    return apps.get_model("admin", "LogEntry").objects.annotate(numeric_id=Cast("object_id", BigIntegerField())).filter(
        Q(content_type=ContentType.objects.get_for_model(LongTermMemory), object_id__in=_item_ids(user_id))
        | Q(content_type=ContentType.objects.get_for_model(ChatMessage),
            numeric_id__in=ChatMessage.objects.filter(_user_q(user_id)).values("pk"))
    )


def _message_texts(value) -> list[str]:
    """The texts of pasted messages (OpenAI or Anthropic shapes: a string, or parts with ``text``)."""
    out = []
    for message in value if isinstance(value, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            out.append(content.strip())
        elif isinstance(content, list):
            out.extend(str(part.get("text", "")).strip() for part in content if isinstance(part, dict))
    return [t for t in out if t]


def _trace_check(user_id: str) -> Callable[[dict], bool]:
    """A playground trace is built from the user's data when one of its messages is, word for word, one of
    the user's own messages or item texts (staff paste a conversation to try strategies on it). Texts
    shorter than ``TRACE_MATCH_MIN_CHARS`` ("hi", "thanks") and the agents' replies (the same words may
    answer anyone) do not count."""
    user_messages = ChatMessage.objects.filter(_user_q(user_id), role=ChatMessage.Role.USER)
    texts = {str(t).strip() for t in user_messages.values_list("content", flat=True)}
    texts |= {m.content.strip() for m in _items(user_id).only("value_json")}
    texts = {t for t in texts if len(t) >= TRACE_MATCH_MIN_CHARS}
    return lambda row: bool(texts) and any(t in texts for t in _message_texts(row["messages"]))


def _trace_rows(user_id: str) -> QuerySet:
    # Every trace is read and checked in Python (traces are few: they expire, see playground_traces).
    return PlaygroundTrace.objects.all()


def user_data_sections() -> list[Section]:
    """Every table that stores something about a platform user, in erase order (dependents first).

    Not in the list, on purpose (docs/decisions.md): the user's account, sessions and API tokens (the user
    stays able to sign in), and the erase tombstone (``ltm.store.erase_gate``: a hash of the user id and a time).
    Playground traces are in it when one of their messages is one of the user's texts, word for word.
    """
    sections = [
        Section("memory_vectors", MemoryEmbedding, lambda u: MemoryEmbedding.objects.filter(memory_id__in=_item_ids(u)),
                ("memory_id", "model_name", "dim", "updated_at")),
        Section("memory_flags", MemoryFlag, lambda u: MemoryFlag.objects.filter(memory_id__in=_item_ids(u)),
                ("memory_id", "paused", "paused_at", "deleted_from", "deleted_from_at")),
        Section("memory_state_changes", MemoryStateChange,
                lambda u: MemoryStateChange.objects.filter(memory_id__in=_item_ids(u)),
                ("memory_id", "old_state", "new_state", "reason", "created_at")),
        Section("memory_versions", MemoryVersion, lambda u: MemoryVersion.objects.filter(memory_id__in=_item_ids(u)),
                ("memory_id", "version", "event", "reason", "before_content", "before_type", "after_content",
                 "after_type", "created_at")),
        Section("memory_accesses", MemoryAccess, lambda u: MemoryAccess.objects.filter(memory_id__in=_item_ids(u)),
                ("memory_id", "agent_id", "conversation_id", "kind", "relevance", "created_at")),
        Section("audit_log", AuditLog, _audit_rows,
                ("created_at", "action", "object_type", "object_id", "before", "after", "reason"), erase="anonymise"),
        Section("summary_cache", SummaryCacheEntry, lambda u: SummaryCacheEntry.objects.filter(_conversation_q(u)),
                ("conversation_id", "model", "message_count", "summary", "created_at")),
        Section("replay_shares", ReplayShare, lambda u: ReplayShare.objects.filter(_conversation_q(u)),
                ("conversation_id", "query", "created_at")),
        Section("retrieval_receipts", RetrievalReceipt, lambda u: RetrievalReceipt.objects.filter(_user_q(u)),
                ("created_at", "agent_id", "conversation_id", "kind", "query", "k", "counts", "candidates")),
        Section("chat_messages", ChatMessage, lambda u: ChatMessage.objects.filter(_user_q(u)),
                ("conversation_id", "agent_id", "role", "content", "metadata", "created_at")),
        Section("conversations", ConversationOwner, lambda u: ConversationOwner.objects.filter(_user_q(u)),
                ("conversation_id", "agent_id", "created_at")),
        Section("pause_rules", PauseRule, lambda u: PauseRule.objects.filter(_user_q(u)),
                ("agent_namespace", "memory_type", "created_at")),
        Section("ask_first", AskFirst, lambda u: AskFirst.objects.filter(_user_q(u)),
                ("agent_id", "ask_first", "updated_at")),
        Section("memory_settings", UserMemorySettings, lambda u: UserMemorySettings.objects.filter(_user_q(u)),
                ("use_memories", "save_memories", "updated_at")),
        Section("playground_traces", PlaygroundTrace, _trace_rows, ("messages", "created_at"), check=_trace_check),
    ]
    if apps.is_installed("django.contrib.admin"):
        sections.insert(0, Section("admin_log", apps.get_model("admin", "LogEntry"), _admin_log_rows,
                                   ("action_time", "action_flag", "object_id", "object_repr", "change_message")))
    task_model = task_result_model()
    if task_model is not None:
        sections.append(Section("tasks", task_model, _task_rows,
                                ("status", "task_path", "args_kwargs", "enqueued_at", "finished_at"), check=_task_check))
    # The items last: the other sections find their rows through the items' ids.
    sections.append(Section("memories", LongTermMemory, _items, ()))
    return sections


def _plain(value):
    return value.isoformat() if hasattr(value, "isoformat") else value


def _memory_row(m: LongTermMemory) -> dict:
    return {
        "id": m.pk,
        "type": m.memory_type,
        "content": m.content,
        "source": m.source,
        "agent": m.agent_id,
        "namespace": m.namespace,
        "created_at": m.created_at.isoformat(),
        "updated_at": m.updated_at.isoformat(),
        "archived": m.archived,
        "archived_reason": m.archived_reason,
        "archived_at": m.archived_at.isoformat() if m.archived_at else None,
        "access_count": m.access_count,
        "last_accessed_at": m.last_accessed_at.isoformat() if m.last_accessed_at else None,
        "relevance_score": m.relevance_score,
    }


def _section_rows(section: Section, user_id: str) -> list[dict]:
    qs = section.rows(user_id).order_by("pk")
    if section.model is LongTermMemory:
        return [_memory_row(m) for m in qs.order_by("created_at", "id").iterator()]
    rows = qs.values("pk", *section.fields).iterator()
    if section.check is not None:
        check = section.check(user_id)
        rows = (row for row in rows if check(row))
    return [{"id": str(row.pop("pk")), **{k: _plain(v) for k, v in row.items()}} for row in rows]


def _section_ids(section: Section, user_id: str) -> list[str]:
    """The ids of the section's rows about the user (what the export lists)."""
    qs = section.rows(user_id).order_by()
    if section.check is None:
        return [str(pk) for pk in qs.values_list("pk", flat=True)]
    check = section.check(user_id)
    return [str(row["pk"]) for row in qs.values("pk", *section.fields) if check(row)]


def memory_export_payload(*, user_id: str) -> dict:
    """Everything stored about the user, by table, as exported to the user or for them.

    ``memories`` (every item, archived and deleted ones flagged) keeps the format ``memory_import`` reads;
    the other keys are the other tables of :func:`user_data_sections`, each row with its ``id``, and
    ``tables`` names the table behind each key. Exactly the rows :func:`user_data_erase` removes.
    """
    user_id = str(user_id)
    payload: dict = {"user_id": user_id, "exported_at": timezone.now().isoformat()}
    tables = {}
    for section in user_data_sections():
        payload[section.key] = _section_rows(section, user_id)
        tables[section.key] = section.table
    payload["tables"] = tables
    payload["summary"] = export_summary(user_id=user_id)
    return payload


def export_summary(*, user_id: str) -> dict:
    """What the export holds, counted as every page counts it: items per state (``ltm.store.states``),
    conversations (:func:`conversation_ids`) and audit entries about the person."""
    return {
        "memories": state_counts(_items(str(user_id))),
        "conversations": len(conversation_ids(user_id=user_id)),
        "audit_entries": _audit_rows(str(user_id)).count(),
    }


# What each section is, in words, for the confirmation pages (in the order they are shown).
SECTION_LABELS = {
    "memories": _("memory items, in every state (active, paused, archived, recently deleted)"),
    "memory_vectors": _("vectors computed from those items"),
    "memory_flags": _("pause and delete marks of those items"),
    "memory_state_changes": _("state history of those items"),
    "memory_accesses": _("records of agents reading those items"),
    "conversations": _("conversations"),
    "chat_messages": _("messages of those conversations, every kind (yours, the agents' replies, tool results, "
                       "instructions to the agent)"),
    "summary_cache": _("cached summaries of those conversations"),
    "retrieval_receipts": _("retrieval receipts (your questions and the items found for them)"),
    "tasks": _("queued and finished memory extraction jobs"),
    "pause_rules": _("pause rules"),
    "memory_settings": _("memory switch settings"),
    "ask_first": _("“ask me first” choices"),
    "audit_log": _("audit log entries: kept without content (who did what, to which item, when)"),
    "admin_log": _("entries of the admin site's history about those items and messages"),
    "playground_traces": _("playground traces made from your conversations or items"),
    "replay_shares": _("short links of replays of your conversations"),
}


# Support erases on someone's behalf: the sections that say "your" to the person, said of them.
SUPPORT_LABELS = {
    "chat_messages": _("messages of those conversations, every kind (theirs, the agents' replies, "
                       "tool results, instructions to the agent)"),
    "retrieval_receipts": _("retrieval receipts (their questions and the items found for them)"),
    "playground_traces": _("playground traces made from their conversations or items"),
    "replay_shares": _("short links of replays of their conversations"),
}


def user_data_counts(*, user_id: str) -> list[tuple[str, str, int]]:
    """``(export key, label, rows)`` for each section, as the confirmation pages show them."""
    counts = {s.key: len(_section_ids(s, str(user_id))) for s in user_data_sections()}
    return [(key, str(label), counts[key]) for key, label in SECTION_LABELS.items() if key in counts]


def memory_export_for_user(*, user_id: str, actor) -> dict:
    """Staff export on a user's behalf (a privacy request): the same payload, recorded in the audit log."""
    payload = memory_export_payload(user_id=user_id)
    audit_record(
        actor=actor, action=AuditLog.Action.EXPORT, object_type="user", object_id=user_id,
        after={"count": len(payload["memories"]),
               "tables": {payload["tables"][k]: len(payload[k]) for k in payload["tables"]}},
        reason="privacy request",
    )
    return payload


def _erase_typed_reasons(qs: QuerySet) -> None:
    """What a reason is about goes with the content (the words staff typed when archiving may quote the
    user; the kinds of secret withheld say what the user said): the reason's code stays, its details go,
    but for the ids of the items a merge or a restore pointed at (what happened to which id stays)."""
    qs.exclude(reason__in=[MERGED_INTO, SAME_ITEM_IN_USE]).update(details=None)


def _leave_ann_indexes(user_id: str) -> None:
    """Take the user's vectors out of every HNSW index (staff search, ``ltm.search.ann``) before the rows go: out
    of this host's files now, and logged (ids only) so every other host scrubs them when it follows."""
    ann_erase(vectors=list(MemoryEmbedding.objects.filter(memory_id__in=_item_ids(user_id))
                           .values_list("model_name", "memory_id", "id")))


def user_data_erase(*, user_id: str, actor, reason: str = "privacy request") -> dict[str, list[str]]:
    """Erase everything stored about a user, in one transaction: no undo.

    Every row of :func:`user_data_sections` is deleted, except audit entries, which are anonymised (their
    ``before``/``after`` snapshots are emptied: who did what to which id and when stays, the content
    goes). Items leave whatever their state, with their vectors, flags, state history and access log; the
    user's messages, conversation claims, cached summaries, retrieval receipts, pause rules, memory
    switch and extraction tasks go too. One ``erase`` entry records the counts per table, no content.
    Another user's rows are never touched: every section is scoped by the user's id or their items.

    Returns:
        Per table name, the ids of the rows removed or anonymised (what the export listed).
    """
    user_id = str(user_id)
    erased: dict[str, list[str]] = {}
    with transaction.atomic():
        # First: waits for writers of the user that passed the gate, holds back those that come later.
        erase_gate_close(user_id=user_id, at=timezone.now())
        sections = user_data_sections()
        # Every section's rows are listed before any is deleted: several are found through the items.
        found = {s.key: _section_ids(s, user_id) for s in sections}
        namespaces = user_namespaces_q(user_id)  # the texts the items had (known agents), taken before they go
        _leave_ann_indexes(user_id)
        for section in sections:
            ids = found[section.key]
            erased[section.table] = ids
            if not ids:
                continue
            for start in range(0, len(ids), ERASE_BATCH):
                qs = section.model.objects.filter(pk__in=ids[start : start + ERASE_BATCH])
                if section.erase == "anonymise":
                    qs.update(before=None, after=None)
                    # Whose it was goes with the content; an entry whose id is the user's own keeps it.
                    qs.exclude(object_type__in=USER_OBJECT_TYPES).update(subject_user_id="")
                    # A conversation's id is the client's choice (it may say anything): it goes too.
                    qs.filter(object_type="conversation").update(object_id="")
                    _erase_typed_reasons(qs)
                elif section.model is LongTermMemory:
                    qs._raw_delete(qs.db)  # vectors already went with their section; no cascade query
                elif section.key == "tasks":
                    _erase_tasks(qs)
                else:
                    qs.delete()
        # The items' change log names them and their namespaces: its rows of the user go, those the
        # items' deletion just wrote too.
        memory_changes_erase(namespaces=namespaces)
        audit_record(
            actor=actor, action=AuditLog.Action.ERASE, object_type="user", object_id=user_id,
            after={"tables": {table: len(ids) for table, ids in erased.items()},
                   # The traces' ids (digests of their messages): the playground says why one is gone.
                   ERASED_TRACES: erased.get(PlaygroundTrace._meta.db_table, [])},
            reason=reason,
        )
    # This process's memory of what users said (other processes: ltm.people.process_texts's follower).
    forget_user_texts()
    return erased
