"""Template filters that show stored codes by their translated names (see ``memoryboard.models.labels``):
``{{ row.role|role_label }}``, ``{{ m.memory_type|type_label }}``, ``{{ m.source|source_label }}``,
``{{ entry.reason|reason_label }}``."""

from __future__ import annotations

from django import template

from memoryboard.models import labels

register = template.Library()
for _name in ("role_label", "type_label", "source_label", "reason_label"):
    register.filter(_name, getattr(labels, _name))


@register.filter
def break_at_underscores(value) -> str:
    """A strategy name that may wrap after each underscore (``CLEAR_TOOL_<wbr>RESULTS``), escaped."""
    from django.utils.html import escape
    from django.utils.safestring import mark_safe

    return mark_safe(escape(value).replace("_", "_<wbr>"))


@register.filter
def for_reader(row, show_ids):
    """A playground row as its reader sees it (``web.playground.row_for_reader``): ``show_ids`` for developers."""
    from memoryboard.web.playground import row_for_reader

    return row_for_reader(row, bool(show_ids))
