"""Template filters that show stored codes by their translated names (see ``memoryboard.labels``)."""

from __future__ import annotations

from django import template

from memoryboard import labels

register = template.Library()


@register.filter
def role_label(role) -> str:
    """``user`` / ``ASSISTANT`` → the translated name of the message role."""
    return labels.role_label(role)


@register.filter
def type_label(code) -> str:
    return labels.type_label(code)


@register.filter
def source_label(code) -> str:
    return labels.source_label(code)


@register.filter
def reason_label(reason) -> str:
    return labels.reason_label(reason)
