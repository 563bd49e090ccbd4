from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Min
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from memoryboard.models.chat import ChatMessage, ConversationOwner
from memoryboard.models.labels import reason_label
from memoryboard.models.memory import LongTermMemory
from memoryboard.models.namespaces import parse_namespace


# What an entry is about (``object_type``), by name.
OBJECT_TYPES = {
    "memory": _("memory item"),
    "user": _("user"),
    "job": _("job"),
    "conversation": _("conversation"),
    "import": _("import"),
    "pause_rules": _("pause rules"),
    "memory_delete_batch": _("memories deleted together"),
    "namespace": _("agent's memories"),
}


class AuditLog(models.Model):
    """Every change made through the dashboard, API, commands and tasks, with before and after."""

    class Action(models.TextChoices):
        CREATE = "create", _("Create")
        UPDATE = "update", _("Update")
        ARCHIVE = "archive", _("Archive")
        RESTORE = "restore", _("Restore")
        PAUSE = "pause", _("Pause")
        RESUME = "resume", _("Resume")
        DELETE = "delete", _("Delete")
        PURGE = "purge", _("Purge")
        REEMBED = "reembed", _("Re-embed")
        MERGE = "merge", _("Merge")
        APPLY_STRATEGY = "apply_strategy", _("Apply memory strategy")
        BULK = "bulk", _("Bulk action")
        EXPORT = "export", _("Export")
        ERASE = "erase", _("Erase all")

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        verbose_name=_("actor"),
    )
    actor_label = models.CharField(_("actor"), max_length=150, blank=True)
    action = models.CharField(_("action"), max_length=32, choices=Action.choices)
    object_type = models.CharField(_("object type"), max_length=32)
    object_id = models.CharField(_("object id"), max_length=255)
    before = models.JSONField(_("before"), null=True, blank=True)
    after = models.JSONField(_("after"), null=True, blank=True)
    reason = models.CharField(_("reason"), max_length=255, blank=True)
    # What the reason is about, as data (models.labels): an item's id, a version, the words a person typed.
    details = models.JSONField(_("reason details"), null=True, blank=True)
    created_at = models.DateTimeField(_("time"), default=timezone.now, db_index=True)
    # The platform user whose data the entry is about ("" for none, or once erased): see memoryboard.audit.
    subject_user_id = models.CharField(_("subject user"), max_length=255, blank=True, default="", db_index=True)

    class Meta:
        db_table = "memoryboard_audit_log"
        verbose_name = _("audit log entry")
        verbose_name_plural = _("audit log entries")
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["object_type", "object_id"], name="idx_audit_object")]

    def save(self, *args, **kwargs):
        if not self.subject_user_id and self._state.adding:
            audit_subjects([self])
        super().save(*args, **kwargs)

    @property
    def actor_text(self) -> str:
        """Who did it: the user name, or "system" (translated) for jobs and the agent runtime."""
        if self.actor_id is None and self.actor_label in ("", "system"):
            return str(_("system"))
        return self.actor_label

    @property
    def object_type_label(self) -> str:
        return str(OBJECT_TYPES.get(self.object_type, self.object_type))

    @property
    def reason_label(self) -> str:
        return reason_label(self.reason, self.details)

    def __str__(self) -> str:
        # The object's id is not in the name (support reads entries; the id is on the entry's page for
        # developers and in the API).
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor_text} {self.get_action_display()} {self.object_type_label}"


# Object types whose id is the platform user id itself.
USER_OBJECT_TYPES = ("user", "import", "pause_rules")
# A bulk delete of My memories (``web.my_memories``): ``after.user_id`` names the user.
DELETE_BATCH = "memory_delete_batch"


def _namespace_user(text) -> str:
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
    items, messages, owners = models or (LongTermMemory, ChatMessage, ConversationOwner)
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
