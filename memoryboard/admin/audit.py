"""Admin of the audit log: browsable and filterable by everyone with view permission, changed by nobody."""

from __future__ import annotations

import json

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _, ngettext

from memoryboard.admin.filters import SubjectAgentFilter, SubjectUserFilter
from memoryboard.admin.paginator import CappedChangeList, CappedCountAdminMixin
from memoryboard.ltm.namespaces import parse_namespace
from memoryboard.models import AuditLog, LongTermMemory
from memoryboard.models.audit import OBJECT_TYPES
from memoryboard.users import people


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


class ObjectTypeFilter(admin.SimpleListFilter):
    title = _("object type")
    parameter_name = "object_type"

    def lookups(self, request, model_admin):
        return list(OBJECT_TYPES.items())

    def queryset(self, request, queryset):
        return queryset.filter(object_type=self.value()) if self.value() else queryset


class SubjectChangeList(CappedChangeList):
    """Each entry of the page gets ``subject``: the person whose item (or who) it is about.

    Two queries for the page: the namespaces of its items, then the user directory.
    """

    def get_results(self, request):
        super().get_results(request)
        entries = list(self.result_list)
        item_ids = {e.object_id for e in entries if e.object_type == "memory"}
        owners = {}
        for pk, namespace in LongTermMemory.objects.filter(pk__in=item_ids).values_list("pk", "namespace"):
            ns = parse_namespace(namespace)
            if ns:
                owners[pk] = ns.user_id
        for e in entries:
            e.subject_id = owners.get(e.object_id) if e.object_type == "memory" else (
                e.object_id if e.object_type == "user" else None)
        found = people({e.subject_id for e in entries if e.subject_id})
        for e in entries:
            e.person = found.get(e.subject_id) if e.subject_id else None
        self.result_list = entries


@admin.register(AuditLog)
class AuditLogAdmin(ReadOnlyAdminMixin, CappedCountAdminMixin, admin.ModelAdmin):
    list_display = ["created_at", "actor_text", "action", "subject", "object_type_text", "object_link", "reason_text"]
    list_filter = [SubjectUserFilter, SubjectAgentFilter, "action", ObjectTypeFilter,
                   ("actor", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["=object_id", "actor_label", "reason"]
    search_help_text = _("Searches the exact object id, the actor and the reason.")
    date_hierarchy = "created_at"
    ordering = ["-created_at", "-id"]
    list_per_page = 100
    show_facets = admin.ShowFacets.NEVER
    fields = ["created_at", "actor_text", "action", "object_type_text", "object_id", "reason_text", "before_json",
              "after_json"]
    readonly_fields = fields

    def get_changelist(self, request, **kwargs):
        return SubjectChangeList

    @admin.display(description=_("subject user"))
    def subject(self, obj):
        from memoryboard.admin.memory import person_link

        return person_link(getattr(obj, "person", None))

    @admin.display(description=_("actor"), ordering="actor_label")
    def actor_text(self, obj):
        return obj.actor_text

    @admin.display(description=_("object type"))
    def object_type_text(self, obj):
        return obj.object_type_label

    @admin.display(description=_("reason"))
    def reason_text(self, obj):
        return obj.reason_label or "—"

    @admin.display(description=_("object id"), ordering="object_id")
    def object_link(self, obj):
        if obj.action == AuditLog.Action.BULK and isinstance(obj.after, dict) and "count" in obj.after:
            count = int(obj.after["count"])
            return ngettext("%(count)d item", "%(count)d items", count) % {"count": count}
        if obj.object_type == "user":
            return format_html('<a href="{}">{}</a>', reverse("person", args=[obj.object_id]), obj.object_id)
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
