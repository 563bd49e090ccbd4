"""Versions of an item's text and type (dashboard-only table, DESIGN 1.6)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class VersionEvent(models.TextChoices):
    """Why an item's text or type changed (mem0's history ``event``, in memoryboard's own words)."""

    CREATE = "create", _("Created")
    EDIT = "edit", _("Edited")
    IMPORT = "import", _("Imported")
    EXTRACT = "extract", _("Extracted from a conversation")
    MERGE = "merge", _("Merged")
    REVERT = "revert", _("Reverted")
    RECONCILE = "reconcile", _("Reconciled")


class MemoryVersion(models.Model):
    """One version of an item: what its text and type were before and after a change, who and why.

    Creation is version 1 (``before_*`` empty). ``memory_id`` is no foreign key: the shared table may be
    written by the platform itself; the rows go with the item's erase (``user_data_sections``).
    """

    memory_id = models.CharField(max_length=255)
    version = models.PositiveIntegerField()
    event = models.CharField(max_length=16, choices=VersionEvent.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Who, when there is no signed-in actor: "agent" (the memory tools), "system" (jobs, extraction).
    actor_label = models.CharField(max_length=150, blank=True)
    reason = models.CharField(max_length=255, blank=True)
    details = models.JSONField(null=True, blank=True)  # what the reason is about (models.labels)
    before_content = models.TextField(null=True, blank=True)
    before_type = models.CharField(max_length=16, blank=True)
    after_content = models.TextField()
    after_type = models.CharField(max_length=16)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "memoryboard_memory_version"
        verbose_name = _("memory version")
        verbose_name_plural = _("memory versions")
        ordering = ["memory_id", "version"]
        constraints = [
            models.UniqueConstraint(fields=["memory_id", "version"], name="uniq_memory_version"),
        ]

    def __str__(self) -> str:
        return f"{self.memory_id} v{self.version}"
