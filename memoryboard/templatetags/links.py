"""``{{ m.conversation_id|conversation_url }}``: the owner's page of a conversation, or "" when the
stored id cannot be part of an address (ids written before ids were checked, or by the platform)."""

from __future__ import annotations

from django import template
from django.urls import NoReverseMatch, reverse

register = template.Library()


@register.filter
def conversation_url(conversation_id) -> str:
    if not conversation_id:
        return ""
    try:
        return reverse("my-conversation", args=[str(conversation_id)])
    except NoReverseMatch:
        return ""
