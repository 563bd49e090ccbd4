from __future__ import annotations

import base64
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


class ReplayShare(models.Model):
    """A replay's whole configuration (the trace or conversation, strategies and their parameters, prices,
    cache model) under a short id, for a link short enough to paste: ``/playground/replay/s/<id>/``.

    The id is a keyed HMAC of the configuration (the same configuration gives the same link; nobody
    without the key can compute one). Opening it runs the replay again for whoever opens it, under the
    replay page's own access rules: the playground's roles, and the conversation only if they may read it.
    ``conversation_id`` and ``trace_id`` repeat what the query names, so an erase finds the shares of a
    person's conversations."""

    id = models.CharField(primary_key=True, max_length=16)
    query = models.JSONField(help_text="The replay page's query string as [key, value] pairs.")
    conversation_id = models.CharField(max_length=255, blank=True, default="", db_index=True)
    trace_id = models.CharField(max_length=64, blank=True, default="")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "memoryboard_replay_share"
        verbose_name = _("replay link")
        verbose_name_plural = _("replay links")

    @staticmethod
    def digest(pairs) -> str:
        text = json.dumps(pairs, ensure_ascii=False, separators=(",", ":"))
        mac = salted_hmac("memoryboard.replay_share", text.encode("utf-8", "surrogatepass"), algorithm="sha256")
        return base64.urlsafe_b64encode(mac.digest()[:9]).decode("ascii")  # 12 characters, 72 bits
