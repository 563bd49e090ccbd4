from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


# What an entry is about (``object_type``), by name.
OBJECT_TYPES = {
    "memory": _("memory item"),
    "user": _("user"),
    "job": _("job"),
    "conversation": _("conversation"),
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
            from memoryboard.audit import audit_subjects

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
        from memoryboard.labels import reason_label

        return reason_label(self.reason)

    def __str__(self) -> str:
        # The object's id is not in the name (support reads entries; the id is on the entry's page for
        # developers and in the API).
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor_text} {self.get_action_display()} {self.object_type_label}"
