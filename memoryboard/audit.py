"""The audit log: one function writes every entry, and says whose data it is about.

``subject_user_id`` is the platform user whose data an entry is about, kept in an indexed column so that
the user page, the admin's "subject user" filter and the export/erase find a user's entries by it, also
those of items purged since (their ids no longer name anyone). It is read from the entry itself: an item's
namespace (recorded in its snapshot, or the item's own while it exists), the user an entry names (``user``,
``import``, ``pause_rules``), a bulk delete's ``user_id``, a conversation's owner
(``models.audit.audit_subjects``, which ``AuditLog.save`` calls too). An erase empties it
with the snapshots (``ltm.people.user_data``): who did what to which id and when stays, whose it was goes.
"""

from __future__ import annotations

from typing import Any

from memoryboard.models import AuditLog, LongTermMemory
from memoryboard.models.audit import audit_subjects


def item_texts(item_ids) -> tuple[dict[str, str], dict[str, dict]]:
    """For audit entries' items: the text of each one still stored, and for those gone the latest snapshot
    an entry recorded (:func:`recorded_snapshots`). Two queries."""
    texts = {pk: str(value.get("content") or "") if isinstance(value, dict) else "" for pk, value in
             LongTermMemory.objects.filter(pk__in=list(item_ids)).values_list("pk", "value_json")}
    return texts, recorded_snapshots(set(item_ids) - set(texts))


def recorded_snapshots(item_ids) -> dict[str, dict]:
    """For items that no longer exist, the latest snapshot of them an audit entry kept (a purge records the
    whole item): what it said, whose it was. One query."""
    found: dict[str, dict] = {}
    rows = (AuditLog.objects.filter(object_type="memory", object_id__in=list(item_ids))
            .order_by("-created_at", "-id").values_list("object_id", "before", "after"))
    for object_id, before, after in rows:
        if object_id in found:
            continue
        for snapshot in (after, before):
            if isinstance(snapshot, dict) and isinstance(snapshot.get("value_json"), dict):
                found[object_id] = snapshot
                break
    return found


def audit_record(
    *,
    actor,
    action: str,
    object_type: str,
    object_id: str,
    before: Any = None,
    after: Any = None,
    reason: str = "",
    details: dict | None = None,
    subject_user_id: str = "",
) -> AuditLog:
    """Write one entry. ``subject_user_id``: whose data it is about, when the caller knows better than the
    entry tells (a conversation whose rows the action deleted); else found by :func:`audit_subjects`."""
    user = actor if getattr(actor, "is_authenticated", False) else None
    label = user.get_username() if user else (str(actor) if actor else "system")
    return AuditLog.objects.create(
        actor=user,
        actor_label=label[:150],
        action=action,
        object_type=object_type,
        object_id=str(object_id)[:255],
        before=before,
        after=after,
        reason=reason[:255],
        details=details or None,
        subject_user_id=str(subject_user_id)[:255],
    )


def audit_record_many(entries: list[dict]) -> None:
    """Bulk variant for bulk actions: one INSERT for many entries."""
    rows = []
    for e in entries:
        actor = e.get("actor")
        user = actor if getattr(actor, "is_authenticated", False) else None
        rows.append(
            AuditLog(
                actor=user,
                actor_label=(user.get_username() if user else (str(actor) if actor else "system"))[:150],
                action=e["action"],
                object_type=e["object_type"],
                object_id=str(e["object_id"])[:255],
                before=e.get("before"),
                after=e.get("after"),
                reason=e.get("reason", "")[:255],
                details=e.get("details") or None,
                subject_user_id=str(e.get("subject_user_id") or "")[:255],
            )
        )
    audit_subjects(rows)
    AuditLog.objects.bulk_create(rows, batch_size=500)


def edit_history(memory_id: str) -> list[dict]:
    """The item's earlier texts, newest first, from the audit log's before/after of each edit."""
    entries = AuditLog.objects.filter(
        object_type="memory", object_id=memory_id, action=AuditLog.Action.UPDATE
    ).order_by("-created_at", "-id")[:50]
    out = []
    for entry in entries:
        before = ((entry.before or {}).get("value_json") or {}).get("content")
        after = ((entry.after or {}).get("value_json") or {}).get("content")
        if before is not None and before != after:
            out.append({"when": entry.created_at, "before": before, "after": after, "by": entry.actor_label})
    return out
