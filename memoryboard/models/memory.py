from __future__ import annotations

from datetime import datetime, timezone as dt_timezone

from django.db import models
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from django.utils.translation import gettext_lazy as _

from memoryboard.models.namespaces import parse_namespace


def value_time_text(moment: datetime) -> str:
    """A time as memoryboard stores it in value_json (``expiresAt``, ``validFrom``): ISO 8601 in UTC, whole
    seconds, ``Z``; the texts of two times compare as the times do."""
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, dt_timezone.utc)
    return moment.astimezone(dt_timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_value_time(value):
    """An aware datetime from value_json's ISO text (None when absent or unreadable)."""
    if not value or not isinstance(value, str):
        return None
    parsed = parse_datetime(value)
    if parsed is None:
        day = parse_date(value)
        if day is None:
            return None
        parsed = datetime(day.year, day.month, day.day)
    return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed, dt_timezone.utc)


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
    STAFF = "staff", _("Archived by support")
    USER_DELETED = "user_deleted", _("Deleted by the user")
    # Not used any more, but not archived by anyone: memoryboard shows these as their own states
    # (DESIGN 1.6). The platform loads only archived = 0, so they are stored archived.
    SUPERSEDED = "superseded", _("Replaced by a newer statement")
    EXPIRED = "expired", _("Expired")
    PENDING_REVIEW = "pending_review", _("Waiting for approval")
    REJECTED = "rejected", _("Rejected")
    # Kept by a merge into another item (``value_json.mergedInto``): shown as "merged into …".
    MERGED = "merged", _("Merged into another item")


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

    # Validity (DESIGN 1.6), kept in value_json in the platform's camelCase: ISO 8601 UTC strings and ids.
    # valid_from falls back to created_at: an item without it became true when it was stored.
    @property
    def valid_from(self):
        return parse_value_time((self.value_json or {}).get("validFrom")) or self.created_at

    @property
    def valid_to(self):
        return parse_value_time((self.value_json or {}).get("validTo"))

    @property
    def expires_at(self):
        return parse_value_time((self.value_json or {}).get("expiresAt"))

    @property
    def superseded_by(self) -> str | None:
        return (self.value_json or {}).get("supersededBy") or None

    @property
    def conflict_with(self) -> list[str]:
        value = (self.value_json or {}).get("conflictWith") or []
        return [str(v) for v in value] if isinstance(value, list) else [str(value)]

    @property
    def merged_into(self) -> str | None:
        return (self.value_json or {}).get("mergedInto") or None

    @property
    def user_id(self) -> str | None:
        ns = parse_namespace(self.namespace)
        return ns.user_id if ns else None

    @property
    def agent_namespace(self) -> str | None:
        ns = parse_namespace(self.namespace)
        return ns.agent if ns else None


class MemoryChange(models.Model):
    """One change of an ``ah_long_term_memory`` row, appended by the database itself: triggers on that table
    (migration ``0023_memory_change_log``) write a row on every insert, delete and update of anything but the
    access statistics, whoever the writer is (memoryboard, or the agent platform writing the table directly).
    An update that moves an item to another namespace writes one row for each namespace.

    Warm scopes of the search follow it (``ltm.store.change_log``, ``ltm.search.retrieval``): they re-read the
    items of the rows past their position instead of every candidate. A row names the item and its namespace
    (the namespace names the user: an erase deletes the user's rows). A row with ``pruned_through`` set is a
    marker: the rows up to that ``id`` were deleted (pruned, or an erase's), so a scope behind it reads in full.
    """

    memory_id = models.CharField(max_length=255, blank=True)
    namespace = models.CharField(max_length=512, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    pruned_through = models.BigIntegerField(null=True, blank=True)

    class Meta:
        db_table = "memoryboard_memory_change"
        verbose_name = _("memory change")
        verbose_name_plural = _("memory changes")
        indexes = [
            models.Index(fields=["namespace"], name="idx_memory_change_namespace"),
            models.Index(fields=["created_at"], name="idx_memory_change_created"),
        ]
