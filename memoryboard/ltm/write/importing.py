"""Import of long-term memories: memoryboard's own export or a plain JSON list, into one user's namespaces.

One service for the API (``POST /api/v1/memories/import``), the "My memories → Import" page and
``manage.py import_memories``. Every call first checks every row (a dry run stops there); applying
writes nothing unless every row is valid, and writes everything in one transaction: the items
(new ids; a file's ids, users and namespaces are never used), their vectors, an audit entry per item
and one for the import.
"""

from __future__ import annotations

import functools
import operator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime, timezone as dt_timezone
from typing import Any, Literal

from django.conf import settings
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _

from memoryboard.agents_config import get_agents_config
from memoryboard.audit import audit_record
from memoryboard.jsonguard import JSONGuardError, parse_json
from memoryboard.ltm.store.items import MAX_CONTENT_CHARS, memory_restore_for_user, normalize_content
from memoryboard.ltm.store.locks import namespace_lock
from memoryboard.ltm.store.rehearsal import Outcome, perform, rehearse
from memoryboard.ltm.store.selectors import namespace_q
from memoryboard.ltm.write.edits import memory_update
from memoryboard.ltm.write.items import memory_build
from memoryboard.ltm.write.reconcile import ReconcileResult, iso, memory_reconcile_many, shared_embedder
from memoryboard.models import ArchivedReason, AuditLog, LongTermMemory, MemoryType, Source, VersionEvent
from memoryboard.models.namespaces import Namespace, build_namespace, parse_namespace

MAX_IMPORT_ITEMS = 5_000
Mode = Literal["skip", "overwrite"]
MODES = ("skip", "overwrite")


class MemoryImportError(ValueError):
    """The import as a whole cannot be read (not one row: the document). ``field`` names the input."""

    def __init__(self, message: str, *, field: str = "items") -> None:
        super().__init__(message)
        self.message = message
        self.field = field


@dataclass
class ImportSummary:
    new: int = 0
    duplicate: int = 0
    # Rows whose item the user had deleted (recently deleted, not yet purged): that item comes back.
    restored: int = 0
    invalid: list[dict[str, Any]] = field(default_factory=list)
    imported: int = 0
    archived_skipped: int = 0
    dry_run: bool = True
    # Each valid row and what happens to it, in file order: {"index", "type", "agent", "content",
    # "duplicate"} (the import page lists them under its preview; the API's answer keeps its counts).
    rows: list[dict[str, Any]] = field(default_factory=list)
    # What the import does (a dry run: would do) to the items of its namespaces, item by item.
    outcome: Outcome = field(default_factory=Outcome)

    def to_dict(self) -> dict[str, Any]:
        return {"new": self.new, "duplicate": self.duplicate, "restored": self.restored, "invalid": self.invalid,
                "imported": self.imported,
                "archived_skipped": self.archived_skipped, "dry_run": self.dry_run}


@dataclass
class _Row:
    index: int
    content: str
    memory_type: str
    created_at: datetime | None
    agent_id: str
    namespace: Namespace
    source: str


def import_items_from_document(document: Any) -> list:
    """The items of an uploaded document: memoryboard's export (``{"memories": [...]}``), a request body
    (``{"items": [...]}``) or a plain list.

    Raises:
        MemoryImportError: anything else.
    """
    if isinstance(document, list):
        return document
    if isinstance(document, dict):
        for key in ("memories", "items"):
            if isinstance(document.get(key), list):
                return document[key]
    raise MemoryImportError(_("Expected a JSON list of items, or memoryboard’s export (an object with “memories”)."))


def import_items_from_text(text: str) -> list:
    """Parse a JSON document (file or pasted text) into its items.

    Raises:
        MemoryImportError: not JSON, or not an accepted shape.
    """
    try:
        document = parse_json(text)
    except JSONGuardError as exc:
        raise MemoryImportError(_("Not valid JSON: %(error)s") % {"error": exc}, field="file") from exc
    return import_items_from_document(document)


def _check_row(index: int, item: Any, *, user_id: str, default_agent: str) -> tuple[_Row | None, list[dict]]:
    def bad(name: str, message: str) -> tuple[None, list[dict]]:
        return None, [{"index": index, "field": name, "message": message}]

    if not isinstance(item, dict):
        return bad("item", _("Each item must be an object with a “content”."))
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        return bad("content", _("The text is empty: write what to remember."))
    if len(content.strip()) > MAX_CONTENT_CHARS:
        return bad("content", _("The text is longer than %(max)d characters.") % {"max": MAX_CONTENT_CHARS})
    memory_type = item.get("type", MemoryType.FACT)
    if not isinstance(memory_type, str) or memory_type.upper() not in MemoryType.values:
        return bad("type", _("Unknown type; use one of %(types)s.") % {"types": ", ".join(MemoryType.values)})
    created_at = item.get("created_at")
    if created_at is not None:
        parsed = parse_datetime(created_at) if isinstance(created_at, str) else None
        if parsed is None:
            return bad("created_at", _("Not a date and time (ISO 8601, like 2024-05-01T09:30:00Z)."))
        if timezone.is_naive(parsed):
            parsed = timezone.make_aware(parsed, dt_timezone.utc)
        if parsed > timezone.now():
            return bad("created_at", _("The date lies in the future."))
        created_at = parsed
    agent_id = item.get("agent", default_agent)
    agent = get_agents_config().get(agent_id) if isinstance(agent_id, str) else None
    if agent is None:
        return bad("agent", _("Unknown agent."))
    if not agent.long_term_memory.enabled:
        return bad("agent", _("This agent keeps no long-term memory."))
    namespace = build_namespace(agent_namespace=agent.long_term_memory.namespace, user_id=user_id)
    source = item.get("source")
    return _Row(index=index, content=content.strip(), memory_type=memory_type.upper(), created_at=created_at,
                agent_id=agent.agent_id, namespace=namespace,
                source=source if source in Source.values else Source.MANUAL), []


def memory_import(
    *,
    items: Any,
    user_id: str,
    actor,
    mode: Mode = "skip",
    dry_run: bool = True,
    agent_id: str | None = None,
    embedder=None,
) -> ImportSummary:
    """Check, and unless ``dry_run`` write, the items into ``user_id``'s namespaces.

    Args:
        items: the rows: ``{"content", "type"?, "created_at"?, "agent"?}`` (an export's other fields,
            its ids, namespaces and user are not read; its ``source`` is kept when known, else ``manual``;
            rows flagged ``archived`` are skipped).
        user_id: the platform user id of the owner; always the caller's own except for staff.
        actor: who imports (audit).
        mode: a row whose content an active item of the namespace already has (compared as the memory
            tools' dedup normalizes it) is skipped, or with ``overwrite`` replaces that item's content
            and type. A row repeating an earlier row of the same import is a duplicate in both modes.
        dry_run: only count.
        agent_id: the agent of rows that name none (default ``MEMORYBOARD_DEFAULT_AGENT``).

    Returns:
        The summary; ``imported`` is 0 for a dry run or when a row is invalid (nothing is written).

    Raises:
        MemoryImportError: ``items`` is not a list, is empty or too long, or ``mode`` is unknown.
    """
    if mode not in MODES:
        raise MemoryImportError(_("Use “skip” or “overwrite”."), field="mode")
    if not isinstance(items, list) or not items:
        raise MemoryImportError(_("A non-empty list of items is required."))
    if len(items) > MAX_IMPORT_ITEMS:
        raise MemoryImportError(_("At most %(max)d items per import.") % {"max": MAX_IMPORT_ITEMS})
    default_agent = agent_id or settings.MEMORYBOARD_DEFAULT_AGENT
    summary = ImportSummary(dry_run=dry_run)
    rows: list[_Row] = []
    for index, item in enumerate(items):
        if isinstance(item, dict) and item.get("archived") is True:
            summary.archived_skipped += 1
            continue
        row, errors = _check_row(index, item, user_id=str(user_id), default_agent=default_agent)
        summary.invalid += errors
        if row is not None:
            rows.append(row)
    namespaces = sorted({row.namespace for row in rows}, key=lambda ns: (ns.agent, ns.user_id))
    with ExitStack() as locks:
        for namespace in namespaces:
            locks.enter_context(namespace_lock(namespace))
        new_rows, overwrites, restores = _classify(rows, summary, namespaces)
        _check_limits(new_rows, summary)
        if summary.invalid or not rows:
            return summary
        decisions: list[tuple[_Row, ReconcileResult]] = []

        def write() -> int:
            imported = _write(new_rows, overwrites, mode=mode, actor=actor, embedder=embedder, decisions=decisions)
            for memory in restores:  # the user's own delete undone, as "Undo" does it
                memory_restore_for_user(memory=memory, actor=actor)
            imported += len(restores)
            audit_record(actor=actor, action=AuditLog.Action.BULK, object_type="import", object_id=str(user_id),
                         after={**summary.to_dict(), "imported": imported, "mode": mode}, reason="import")
            return imported

        def scope():
            return LongTermMemory.objects.filter(functools.reduce(operator.or_, (namespace_q(ns) for ns in namespaces)))

        # The preview is the import itself, rolled back: what it lists is what the import does.
        imported, summary.outcome = (rehearse if dry_run else perform)(write, scope=scope)
        summary.imported = 0 if dry_run else imported
        _describe_rows(summary, decisions)
    return summary


def _describe_rows(summary: ImportSummary, decisions: list[tuple[_Row, ReconcileResult]]) -> None:
    """Each new row's fate as the write decided it: stored, stored replacing an item (named), a repeat of
    an item (named), or a conflict with one (named)."""
    texts = {}
    outcome = summary.outcome
    for item in [*outcome.created, *outcome.kept, *outcome.lost, *outcome.restored]:
        texts[item.id] = item.content
    for old, new in [*outcome.replaced, *outcome.changed]:
        texts[old.id], texts[new.id] = old.content, new.content
    by_index = {row.index: result for row, result in decisions}
    for entry in summary.rows:
        result = by_index.get(entry["index"])
        if result is None:
            continue
        entry["decision"] = result.decision.verdict
        if not result.created:
            entry["repeats"] = texts.get(result.memory.pk, result.memory.content)
        entry["replaces"] = [texts.get(pk, "") for pk in result.superseded]
        entry["conflicts_with"] = [texts.get(pk, "") for pk in result.conflicts]


def _existing_rank(memory: LongTermMemory) -> int:
    """Which of several items with one content a row is the same item as: the one in use, else one the
    user deleted (it comes back), else one archived or retired (left as it is)."""
    if not memory.archived:
        return 0
    return 1 if memory.archived_reason == ArchivedReason.USER_DELETED else 2


def _classify(rows: list[_Row], summary: ImportSummary, namespaces: list[Namespace]):
    """Split valid rows into new ones, rows that bring back an item the user deleted, and duplicates (of an
    item in any other state, or of an earlier row). An item with the same content in the same namespace is
    the same item whatever its state: an import never makes a second copy of it."""
    existing: dict[tuple[Namespace | None, str], LongTermMemory] = {}
    if namespaces:
        where = functools.reduce(operator.or_, (namespace_q(ns) for ns in namespaces))
        for memory in LongTermMemory.objects.filter(where).order_by("created_at", "id"):
            key = (parse_namespace(memory.namespace), normalize_content(memory.content))
            if key not in existing or _existing_rank(memory) < _existing_rank(existing[key]):
                existing[key] = memory
    seen: set[tuple[Namespace | None, str]] = set()
    new_rows: list[_Row] = []
    overwrites: list[tuple[_Row, LongTermMemory]] = []
    restores: list[LongTermMemory] = []
    for row in rows:
        key = (row.namespace, normalize_content(row.content))
        match = existing.get(key) if key not in seen else None
        restore = match is not None and _existing_rank(match) == 1
        duplicate = key in seen or (key in existing and not restore)
        summary.rows.append({"index": row.index, "type": row.memory_type, "agent": row.agent_id,
                             "content": row.content, "duplicate": duplicate, "restored": restore})
        if restore:
            summary.restored += 1
            restores.append(match)
        elif duplicate:
            summary.duplicate += 1
            if key not in seen and not existing[key].archived:
                overwrites.append((row, existing[key]))
        else:
            summary.new += 1
            new_rows.append(row)
        seen.add(key)
    return new_rows, overwrites, restores


def _check_limits(new_rows: list[_Row], summary: ImportSummary) -> None:
    """Rows beyond an agent's ``max-items`` (active items plus the new ones) are invalid."""
    by_namespace: dict[Namespace, list[_Row]] = {}
    for row in new_rows:
        by_namespace.setdefault(row.namespace, []).append(row)
    over: set[int] = set()
    for namespace, group in by_namespace.items():
        limit = get_agents_config().get(group[0].agent_id).long_term_memory.max_items
        active = LongTermMemory.objects.filter(namespace_q(namespace), archived=False).count()
        for row in group[max(limit - active, 0):]:
            summary.new -= 1
            over.add(row.index)
            summary.invalid.append({"index": row.index, "field": "agent",
                                    "message": _("Over the item limit of %(limit)d for this agent (%(active)d "
                                                 "active items).") % {"limit": limit, "active": active}})
    summary.invalid.sort(key=lambda error: error["index"])
    summary.rows = [row for row in summary.rows if row["index"] not in over]


def _write(new_rows: list[_Row], overwrites, *, mode: Mode, actor, embedder,
           decisions: list[tuple[_Row, ReconcileResult]]) -> int:
    """New rows through the reconcile step, per namespace (a row repeating an item in other words
    reinforces it, an update supersedes it; a row is valid from its ``created_at`` when given)."""
    embedder = shared_embedder(embedder)
    by_namespace: dict[Namespace, list[LongTermMemory]] = {}
    rows_of: dict[Namespace, list[_Row]] = {}
    for row in new_rows:
        rows_of.setdefault(row.namespace, []).append(row)
        memory = memory_build(namespace=row.namespace, content=row.content, memory_type=row.memory_type,
                              source=row.source, agent_id=row.agent_id, review=False)
        if row.created_at:
            memory.created_at = row.created_at
            memory.value_json["validFrom"] = iso(row.created_at)
        by_namespace.setdefault(row.namespace, []).append(memory)
    stored = 0
    for namespace, memories in by_namespace.items():
        results = memory_reconcile_many(namespace=namespace, memories=memories, actor=actor, embedder=embedder,
                                        audit_reason="import", event=VersionEvent.IMPORT)
        stored += sum(1 for result in results if result.created)
        decisions.extend(zip(rows_of[namespace], results, strict=True))
    if mode != "overwrite":
        return stored
    for row, memory in overwrites:
        memory_update(memory=memory, actor=actor, content=row.content, memory_type=row.memory_type, embedder=embedder,
                      event=VersionEvent.IMPORT, reason="import")
    return stored + len(overwrites)
