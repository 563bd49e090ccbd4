"""Template filters that show stored codes by their translated names (see ``memoryboard.models.labels``):
``{{ row.role|role_label }}``, ``{{ m.memory_type|type_label }}``, ``{{ m.source|source_label }}``,
``{{ entry.reason|reason_label }}``; ``{{ entry.details|reason_details_text }}`` (ids: developers only)."""

from __future__ import annotations

from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

from memoryboard.models import labels
from memoryboard.web.playground.rows import row_for_reader

register = template.Library()
for _name in ("role_label", "type_label", "source_label", "reason_label", "reason_details_text"):
    register.filter(_name, getattr(labels, _name))


@register.filter
def break_at_underscores(value) -> str:
    """A strategy name that may wrap after each underscore (``CLEAR_TOOL_<wbr>RESULTS``), escaped."""
    return mark_safe(escape(value).replace("_", "_<wbr>"))


@register.filter
def for_reader(row, show_ids):
    """A playground row as its reader sees it (``web.playground.rows.row_for_reader``): ``show_ids`` for developers."""
    return row_for_reader(row, bool(show_ids))
