"""Admin of the audit log: browsable and filterable by everyone with view permission, changed by nobody."""

from __future__ import annotations

import json

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from memoryboard.admin.paginator import CappedCountAdminMixin
from memoryboard.models import AuditLog


class ReadOnlyAdminMixin:
    """No add, change or delete for anyone; viewing follows the model's view permission."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def pretty_json(value) -> str:
    """Indented JSON in a <pre>, escaped (memory content may hold markup)."""
    if value is None:
        return "—"
    return format_html('<pre class="mb-json">{}</pre>', json.dumps(value, indent=2, ensure_ascii=False,
                                                                  sort_keys=True, default=str))


@admin.register(AuditLog)
class AuditLogAdmin(ReadOnlyAdminMixin, CappedCountAdminMixin, admin.ModelAdmin):
    list_display = ["created_at", "actor_label", "action", "object_type", "object_link", "reason"]
    list_filter = ["action", "object_type", ("actor", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["=object_id", "actor_label", "reason"]
    search_help_text = _("Searches the exact object id, the actor and the reason.")
    date_hierarchy = "created_at"
    ordering = ["-created_at", "-id"]
    list_per_page = 100
    show_facets = admin.ShowFacets.NEVER
    fields = ["created_at", "actor_label", "action", "object_type", "object_id", "reason", "before_json",
              "after_json"]
    readonly_fields = fields

    class Media:
        css = {"all": ["memoryboard/admin.css"]}

    @admin.display(description=_("object id"), ordering="object_id")
    def object_link(self, obj):
        # No existence check (one query per row): a purged item's page says it no longer exists.
        if obj.object_type == "memory" and obj.action not in (AuditLog.Action.BULK, AuditLog.Action.PURGE):
            url = reverse("admin:memoryboard_longtermmemory_change", args=[obj.object_id])
            return format_html('<a href="{}">{}</a>', url, obj.object_id)
        return obj.object_id

    @admin.display(description=_("before"))
    def before_json(self, obj):
        return pretty_json(obj.before)

    @admin.display(description=_("after"))
    def after_json(self, obj):
        return pretty_json(obj.after)
