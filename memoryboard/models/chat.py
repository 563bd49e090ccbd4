from __future__ import annotations

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class Role(models.TextChoices):
    SYSTEM = "SYSTEM", _("System")
    USER = "USER", _("User")
    ASSISTANT = "ASSISTANT", _("Assistant")
    TOOL = "TOOL", _("Tool")


class ChatMessage(models.Model):
    """A stored message of a conversation: the platform's ``chat_message``."""

    Role = Role

    id = models.BigAutoField(primary_key=True)
    conversation_id = models.CharField(_("conversation"), max_length=255)
    agent_id = models.CharField(_("agent"), max_length=255)
    user_id = models.CharField(_("user"), max_length=255)
    role = models.CharField(_("role"), max_length=16, choices=Role.choices)
    content = models.TextField(_("content"))
    metadata = models.JSONField(_("metadata"), null=True, blank=True)
    created_at = models.DateTimeField(_("created at"), default=timezone.now)

    class Meta:
        db_table = "chat_message"
        verbose_name = _("chat message")
        verbose_name_plural = _("chat messages")
        ordering = ["conversation_id", "id"]
        indexes = [
            models.Index(fields=["conversation_id", "id"], name="idx_chat_conv_id"),
            models.Index(fields=["agent_id", "user_id"], name="idx_chat_agent_user"),
        ]

    def __str__(self) -> str:
        # The admin's titles and breadcrumbs, which support reads: who said what, not the ids (developers
        # read them in the message's fields).
        text = " ".join((self.content or "").split())
        if self.role == Role.TOOL and text[:1] in ("[", "{"):  # a tool's JSON answer: its page reads it
            return str(self.get_role_display())
        return f"{self.get_role_display()}: {text[:60] + '…' if len(text) > 60 else text}"


class ConversationOwner(models.Model):
    """Who a conversation id belongs to: claimed by its first writer with one INSERT (dashboard-only table).

    The primary key makes the claim atomic: of two requests that start the same new conversation at
    once, one INSERT succeeds and the other reads the winner's row; nobody checks then inserts.
    """

    conversation_id = models.CharField(primary_key=True, max_length=255)
    user_id = models.CharField(max_length=255)
    agent_id = models.CharField(max_length=255)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "memoryboard_conversation_owner"
        verbose_name = _("conversation owner")
        verbose_name_plural = _("conversation owners")
