from __future__ import annotations

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class SummaryCacheEntry(models.Model):
    """A context summary of one conversation's first ``message_count`` messages (issue 11, item 7).

    Keyed by exactly what it covers: the conversation, the hash of those messages as the summarizer read
    them, the summarizer's model and the prompt's hash. Dashboard-only (the platform's tables are untouched).
    """

    conversation_id = models.CharField(max_length=255)
    model = models.CharField(max_length=255)
    prompt_hash = models.CharField(max_length=32)
    prefix_hash = models.CharField(max_length=64)
    message_count = models.PositiveIntegerField()
    summary = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "memoryboard_summary_cache"
        verbose_name = _("cached summary")
        verbose_name_plural = _("cached summaries")
        constraints = [
            models.UniqueConstraint(
                fields=["conversation_id", "model", "prompt_hash", "prefix_hash"], name="summary_cache_key"
            )
        ]
