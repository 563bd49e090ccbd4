from __future__ import annotations

import json

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext_lazy as _


class PlaygroundTrace(models.Model):
    """Messages pasted or uploaded into the playground, kept so the page's URL (``?trace=<id>``) holds the
    whole configuration: a reload keeps it and a link shares it. The id is a keyed HMAC-SHA256 of the
    messages (``SECRET_KEY``): pasting the same trace twice gives the same link, and nobody without the
    key can compute the id of a trace they guess. Ids made before (plain SHA-256) keep working: ids are
    looked up, never recomputed."""

    id = models.CharField(primary_key=True, max_length=64)
    messages = models.JSONField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    # When the trace was last pasted or opened (at most one write a day): retention counts from here, so a
    # link in use keeps working and a forgotten one goes (``playground_traces.trace_purge_expired``).
    last_used_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        db_table = "memoryboard_playground_trace"
        verbose_name = _("playground trace")
        verbose_name_plural = _("playground traces")

    @staticmethod
    def digest(messages) -> str:
        text = json.dumps(messages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        return salted_hmac("memoryboard.playground_trace", text.encode("utf-8", "surrogatepass"),
                           algorithm="sha256").hexdigest()
