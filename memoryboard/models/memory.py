from __future__ import annotations

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from memoryboard.ltm.namespaces import parse_namespace


class MemoryType(models.TextChoices):
    FACT = "FACT", _("Fact")
    PREFERENCE = "PREFERENCE", _("Preference")
    PROCEDURE = "PROCEDURE", _("Procedure")
    EPISODE = "EPISODE", _("Episode")


class Source(models.TextChoices):
    AUTO_EXTRACT = "auto_extract", _("Auto-extracted")
    AGENT_TOOL = "agent_tool", _("Agent tool")
    MANUAL = "manual", _("Added by hand")
    MCP = "mcp", _("MCP client")


class ArchivedReason(models.TextChoices):
    DECAY = "decay", _("Decayed")
    OVER_LIMIT = "over_limit", _("Over the item limit")
    STAFF = "staff", _("Archived by staff")
    USER_DELETED = "user_deleted", _("Deleted by the user")


class LongTermMemory(models.Model):
    """A distilled knowledge item of one agent and user: the platform's ``ah_long_term_memory``.

    The table shape is shared with the agent platform (see docs/schema.sql): keep the columns.
    """

    id = models.CharField(primary_key=True, max_length=255)
    namespace = models.CharField(_("namespace"), max_length=512)
    key_name = models.CharField(_("key"), max_length=255)
    value_json = models.JSONField(_("value"))
    created_at = models.DateTimeField(_("created at"), default=timezone.now)
    updated_at = models.DateTimeField(_("updated at"), default=timezone.now)
    access_count = models.IntegerField(_("access count"), default=0)
    last_accessed_at = models.DateTimeField(_("last accessed at"), null=True, blank=True)
    relevance_score = models.FloatField(_("relevance score"), default=1.0)
    archived = models.BooleanField(_("archived"), default=False)
    archived_at = models.DateTimeField(_("archived at"), null=True, blank=True)
    archived_reason = models.CharField(
        _("archived reason"), max_length=32, null=True, blank=True, choices=ArchivedReason.choices
    )

    class Meta:
        db_table = "ah_long_term_memory"
        verbose_name = _("long-term memory")
        verbose_name_plural = _("long-term memories")
        ordering = ["-updated_at", "id"]
        indexes = [
            models.Index(fields=["namespace", "archived"], name="idx_ltm_ns_archived"),
            models.Index(fields=["archived", "updated_at"], name="idx_ltm_archived_updated"),
            models.Index(fields=["updated_at"], name="idx_ltm_updated"),
        ]

    def __str__(self) -> str:
        return self.content[:80] or self.id

    # The platform keeps everything but the namespace inside value_json; these read it.
    @property
    def content(self) -> str:
        return str((self.value_json or {}).get("content", ""))

    @property
    def memory_type(self) -> str:
        return str((self.value_json or {}).get("type", ""))

    @property
    def source(self) -> str:
        return str((self.value_json or {}).get("source", ""))

    @property
    def agent_id(self) -> str:
        return str((self.value_json or {}).get("agentId", ""))

    @property
    def user_id(self) -> str | None:
        ns = parse_namespace(self.namespace)
        return ns.user_id if ns else None

    @property
    def agent_namespace(self) -> str | None:
        ns = parse_namespace(self.namespace)
        return ns.agent if ns else None
