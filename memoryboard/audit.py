"""The audit log: one function writes every entry."""

from __future__ import annotations

from typing import Any

from memoryboard.models import AuditLog


def audit_record(
    *,
    actor,
    action: str,
    object_type: str,
    object_id: str,
    before: Any = None,
    after: Any = None,
    reason: str = "",
) -> AuditLog:
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
            )
        )
    AuditLog.objects.bulk_create(rows, batch_size=500)
