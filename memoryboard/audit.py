"""The audit log: one function writes every entry, and says whose data it is about.

``subject_user_id`` is the platform user whose data an entry is about, kept in an indexed column so that
the user page, the admin's "subject user" filter and the export/erase find a user's entries by it, also
those of items purged since (their ids no longer name anyone). It is read from the entry itself: an item's
namespace (recorded in its snapshot, or the item's own while it exists), the user an entry names (``user``,
``import``, ``pause_rules``), a bulk delete's ``user_id``, a conversation's owner. An erase empties it
with the snapshots (``ltm.user_data``): who did what to which id and when stays, whose it was goes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memoryboard.models import AuditLog

# Object types whose id is the platform user id itself.
USER_OBJECT_TYPES = ("user", "import", "pause_rules")
# A bulk delete of My memories (``ltm.user_data.DELETE_BATCH``): ``after.user_id`` names the user.
DELETE_BATCH = "memory_delete_batch"


def _namespace_user(text) -> str:
    from memoryboard.ltm.namespaces import parse_namespace

    ns = parse_namespace(text) if isinstance(text, (str, list)) and text else None
    return ns.user_id if ns else ""


def _recorded_subject(object_type: str, object_id: str, before: Any, after: Any) -> str | None:
    """Whose data the entry is about, from the entry alone; ``None`` when only a lookup can tell."""
    if object_type in USER_OBJECT_TYPES:
        return str(object_id)
    if object_type == DELETE_BATCH:
        return str(after.get("user_id") or "") if isinstance(after, dict) else ""
    if object_type == "namespace":
        return _namespace_user(object_id)
    if object_type == "memory":
        for snapshot in (after, before):
            if isinstance(snapshot, dict) and snapshot.get("namespace"):
                return _namespace_user(snapshot["namespace"])
        return None
    if object_type == "conversation":
        return None
    return ""


def audit_subjects(entries: Iterable[AuditLog], *, models=None) -> None:
    """Set ``subject_user_id`` on the entries that have none: from what each entry recorded, else (an
    item entry without a snapshot, a pause; a conversation's entry) from the item or conversation as it
    is now, looked up in one query per kind. ``models``: the (item, message, conversation owner) models
    to look in (a migration passes its historical ones)."""
    from django.db.models import Min

    if models is None:
        from memoryboard.models import ChatMessage, ConversationOwner, LongTermMemory

        models = (LongTermMemory, ChatMessage, ConversationOwner)
    items, messages, owners = models
    pending: dict[str, list[AuditLog]] = {"memory": [], "conversation": []}
    for entry in entries:
        if entry.subject_user_id:
            continue
        found = _recorded_subject(entry.object_type, entry.object_id, entry.before, entry.after)
        if found is None:
            pending[entry.object_type].append(entry)
        else:
            entry.subject_user_id = found[:255]
    if pending["memory"]:
        namespaces = dict(items.objects.filter(pk__in={e.object_id for e in pending["memory"]})
                          .values_list("pk", "namespace"))
        for entry in pending["memory"]:
            entry.subject_user_id = _namespace_user(namespaces.get(entry.object_id))[:255]
    if pending["conversation"]:
        ids = {e.object_id for e in pending["conversation"]}
        found_owners = dict(owners.objects.filter(conversation_id__in=ids).values_list("conversation_id", "user_id"))
        found_owners.update(messages.objects.filter(conversation_id__in=ids).exclude(user_id="")
                            .values("conversation_id").annotate(user=Min("user_id"))
                            .values_list("conversation_id", "user").order_by())
        for entry in pending["conversation"]:
            entry.subject_user_id = str(found_owners.get(entry.object_id) or "")[:255]


def item_texts(item_ids) -> tuple[dict[str, str], dict[str, dict]]:
    """For audit entries' items: the text of each one still stored, and for those gone the latest snapshot
    an entry recorded (:func:`recorded_snapshots`). Two queries."""
    from memoryboard.models import LongTermMemory

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
                subject_user_id=str(e.get("subject_user_id") or "")[:255],
            )
        )
    audit_subjects(rows)
    AuditLog.objects.bulk_create(rows, batch_size=500)
