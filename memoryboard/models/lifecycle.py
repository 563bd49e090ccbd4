"""Dashboard-only lifecycle data around the shared memory table."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from memoryboard.models.labels import reason_label


class MemoryState(models.TextChoices):
    ACTIVE = "active", _("Current")
    PAUSED = "paused", _("Paused")
    ARCHIVED = "archived", _("Archived")
    DELETED = "deleted", _("Deleted by the user")
    PURGED = "purged", _("Purged")
    SUPERSEDED = "superseded", _("Replaced by a newer statement")
    EXPIRED = "expired", _("Expired")
    PENDING_REVIEW = "pending_review", _("Waiting for approval")
    REJECTED = "rejected", _("Rejected")


class MemoryFlag(models.Model):
    """Per-item pause flag; a paused item is kept and visible but never retrieved."""

    memory_id = models.CharField(primary_key=True, max_length=255)
    paused = models.BooleanField(default=False)
    paused_at = models.DateTimeField(null=True, blank=True)
    # The archive reason (decay, over_limit, staff) an item had when its user deleted it: undoing the
    # delete brings it back to that archive, not to active. Blank: it was active.
    deleted_from = models.CharField(max_length=32, blank=True, default="")
    # When that archive happened: an undo puts it back, so the item reads "archived 2 days ago" again
    # (the shared table's ``archived_at`` holds the delete time meanwhile). Null: it was active.
    deleted_from_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "memoryboard_memory_flag"
        verbose_name = _("memory flag")
        verbose_name_plural = _("memory flags")


class PauseRule(models.Model):
    """Pause every item of a user (or everyone) for one agent and/or one type."""

    user_id = models.CharField(max_length=255, db_index=True)
    agent_namespace = models.CharField(max_length=255, blank=True)
    memory_type = models.CharField(max_length=16, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "memoryboard_pause_rule"
        verbose_name = _("pause rule")
        verbose_name_plural = _("pause rules")
        constraints = [
            models.UniqueConstraint(
                fields=["user_id", "agent_namespace", "memory_type"], name="uniq_pause_rule"
            )
        ]


class UserMemorySettings(models.Model):
    """An end user's memory switch: use my memories / save new memories."""

    user_id = models.CharField(primary_key=True, max_length=255)
    use_memories = models.BooleanField(_("use my memories"), default=True)
    save_memories = models.BooleanField(_("save new memories"), default=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "memoryboard_user_settings"
        verbose_name = _("memory switch")
        verbose_name_plural = _("memory switches")


class AskFirst(models.Model):
    """An end user's "ask me first" for one agent: what the agent notes waits for the user's approval (the
    review queue, ``ltm.write.review``), whatever the agent's ``memory-review`` in agents.yaml."""

    user_id = models.CharField(max_length=255)
    agent_id = models.CharField(max_length=255)
    ask_first = models.BooleanField(_("ask me before remembering"), default=False)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "memoryboard_ask_first"
        verbose_name = _("ask-first choice")
        verbose_name_plural = _("ask-first choices")
        constraints = [models.UniqueConstraint(fields=["user_id", "agent_id"], name="uniq_ask_first")]


class MemoryAccess(models.Model):
    """Which agent and conversation read which item, when, with what relevance."""

    class Kind(models.TextChoices):
        RETRIEVAL = "retrieval", _("Retrieval")
        TOOL_SEARCH = "tool_search", _("Tool search")
        INJECTION = "injection", _("Injection")

    memory_id = models.CharField(max_length=255)
    agent_id = models.CharField(max_length=255, blank=True)
    conversation_id = models.CharField(max_length=255, blank=True)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    relevance = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "memoryboard_memory_access"
        verbose_name = _("memory access")
        verbose_name_plural = _("memory accesses")
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["memory_id", "created_at"], name="idx_access_memory_time")]


class MemoryStateChange(models.Model):
    memory_id = models.CharField(max_length=255)
    old_state = models.CharField(max_length=16, choices=MemoryState.choices)
    new_state = models.CharField(max_length=16, choices=MemoryState.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason = models.CharField(max_length=255, blank=True)
    # What the reason is about, as data (models.labels): an item's id, the words a person typed.
    details = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    @property
    def reason_label(self) -> str:
        return reason_label(self.reason, self.details)

    class Meta:
        db_table = "memoryboard_memory_state_change"
        verbose_name = _("state change")
        verbose_name_plural = _("state changes")
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["memory_id", "created_at"], name="idx_state_memory_time")]


class EraseTombstone(models.Model):
    """When a platform user's data was last erased: every late writer (an extraction task, an agent turn, a
    request) checks it in its own transaction before it saves, and is refused if its work began before.

    One row per user who has written or been erased. The user is named by ``user_key`` (the SHA-256 of the
    platform user id: compared byte for byte whatever the database's collation, and no user id kept); the
    row is also the lock that orders an erase against the writers of that user (``ltm.store.erase_gate``).
    ``erased_at`` is null until the first erase; it is never cleared: a write whose work began after it
    (the user coming back) passes, one that began before is refused.
    """

    user_key = models.CharField(primary_key=True, max_length=64)
    erased_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "memoryboard_erase_tombstone"
        verbose_name = _("erase tombstone")
        verbose_name_plural = _("erase tombstones")


class WorkerHeartbeat(models.Model):
    """When a task worker (``manage.py tasks_worker``) last said it was alive: a running task whose worker
    stopped beating is lost (``memoryboard.task_recovery``)."""

    worker_id = models.CharField(primary_key=True, max_length=64)
    seen_at = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "memoryboard_worker_heartbeat"
        verbose_name = _("worker heartbeat")
        verbose_name_plural = _("worker heartbeats")
