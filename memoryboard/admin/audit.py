"""Admin of the audit log: browsable and filterable by everyone with view permission, changed by nobody."""

from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.translation import gettext, gettext_lazy as _, ngettext

from memoryboard.admin.common import ReadOnlyAdminMixin, person_link, pretty_json
from memoryboard.admin.filters import SubjectAgentFilter, SubjectUserFilter
from memoryboard.admin.paginator import CappedChangeList, CappedCountAdminMixin
from memoryboard.audit import item_texts, recorded_snapshots
from memoryboard.ltm.people.user_data import SECTION_LABELS, SUPPORT_LABELS, user_data_sections
from memoryboard.models import AuditLog, LongTermMemory, MemoryState
from memoryboard.models.audit import OBJECT_TYPES
from memoryboard.models.labels import reason_details_text, reason_label, type_label
from memoryboard.roles import is_developer
from memoryboard.users import people


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:59] + "…"


def _snapshot_text(entry: AuditLog) -> str:
    """The item's text as the entry recorded it, or as the item says now (to name the item instead of its
    id), shortened."""
    for snapshot in (entry.after, entry.before):
        value = snapshot.get("value_json") if isinstance(snapshot, dict) else None
        if isinstance(value, dict) and value.get("content"):
            return _short(str(value["content"]))
    if hasattr(entry, "item_text"):  # the list page looked the page's items up at once
        return entry.item_text
    if entry.object_type == "memory":
        value = LongTermMemory.objects.filter(pk=entry.object_id).values_list("value_json", flat=True).first()
        if isinstance(value, dict):
            return _short(str(value.get("content") or ""))
    return ""


def _gone_words(entry: AuditLog) -> str:
    """A memory item that no longer exists (purged, or erased with its owner's data), in words: its text
    or type as an entry recorded it, if one did; never its id (developers read that on the entry's page)."""
    for snapshot in (entry.before, entry.after, getattr(entry, "recorded", None)):
        value = snapshot.get("value_json") if isinstance(snapshot, dict) else None
        if isinstance(value, dict) and value.get("content"):
            return gettext("%(text)s (no longer stored)") % {"text": _short(str(value["content"]))}
        if isinstance(value, dict) and value.get("type"):
            return gettext("a deleted memory (%(type)s)") % {"type": type_label(value["type"])}
    return gettext("a deleted memory")


def _state_words(snapshot: dict) -> str:
    if not snapshot.get("archived"):
        return str(MemoryState.ACTIVE.label)
    return reason_label(snapshot.get("archived_reason")) or str(MemoryState.ARCHIVED.label)


def audit_changes(entry: AuditLog) -> list[tuple[str, str, str]]:
    """``(what, before, after)`` in words: an item's text, type, state and score; an erasure's rows by kind
    (not table names); a bulk action's count. Unknown shapes give no rows (developers read the JSON)."""
    before, after = entry.before, entry.after
    if isinstance(after, dict) and isinstance(after.get("tables"), dict):  # an erasure: counts per table

        keys = {section.table: section.key for section in user_data_sections()}
        labels = {**SECTION_LABELS, **SUPPORT_LABELS}  # staff read this page: "their", not "your"
        return [(str(labels.get(keys.get(table), table)), "", str(n))
                for table, n in after["tables"].items() if n]
    snapshots = [v for v in (before, after) if isinstance(v, dict) and "value_json" in v]
    if not snapshots:
        if isinstance(after, dict) and "count" in after:
            return [(gettext("items"), "", str(after["count"]))]
        return []
    b = before if isinstance(before, dict) else {}
    a = after if isinstance(after, dict) else {}
    bv, av = b.get("value_json") or {}, a.get("value_json") or {}
    rows = []

    def add(label, old, new):
        if old != new:
            rows.append((label, old if old not in (None, "") else "—", new if new not in (None, "") else "—"))

    add(gettext("text"), bv.get("content"), av.get("content"))
    add(gettext("type"), type_label(bv.get("type")) if bv else None, type_label(av.get("type")) if av else None)
    add(gettext("state"), _state_words(b) if b else None, _state_words(a) if a else None)
    if b and a and b.get("relevance_score") != a.get("relevance_score"):
        add(gettext("relevance score"), str(b.get("relevance_score")), str(a.get("relevance_score")))
    return rows


class ObjectTypeFilter(admin.SimpleListFilter):
    title = _("object type")
    parameter_name = "object_type"

    def lookups(self, request, model_admin):
        return list(OBJECT_TYPES.items())

    def queryset(self, request, queryset):
        return queryset.filter(object_type=self.value()) if self.value() else queryset


class SubjectChangeList(CappedChangeList):
    """Each entry of the page gets ``subject``: the person whose data it is about (``subject_user_id``).

    Three queries for the page: the texts of its items, the recorded snapshots of those that are gone,
    then the user directory.
    """

    def get_results(self, request):
        super().get_results(request)
        entries = list(self.result_list)
        item_ids = {e.object_id for e in entries if e.object_type == "memory"}
        texts, recorded = item_texts(item_ids)  # the items still stored; snapshots of those gone
        for e in entries:
            e.recorded = recorded.get(e.object_id) if e.object_type == "memory" else None
            e.subject_id = e.subject_user_id or None
        found = people({e.subject_id for e in entries if e.subject_id})
        show_ids = is_developer(request.user)
        for e in entries:
            e.person = found.get(e.subject_id) if e.subject_id else None
            e.item_text = _short(texts.get(e.object_id, "")) if e.object_type == "memory" else ""
            e.show_ids = show_ids
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
    readonly_fields = ["created_at", "actor_text", "action", "object_type_text", "object_id", "object_link",
                       "reason_text", "changes", "before_json", "after_json"]

    def get_object(self, request, object_id, from_field=None):
        obj = super().get_object(request, object_id, from_field)
        if obj is not None:
            obj.show_ids = is_developer(request.user)
            if obj.object_type == "user":
                obj.person = people([obj.object_id]).get(obj.object_id)
            if obj.object_type == "memory" and not LongTermMemory.objects.filter(pk=obj.object_id).exists():
                obj.item_text = ""  # gone: named from what an entry recorded
                obj.recorded = recorded_snapshots([obj.object_id]).get(obj.object_id)
        return obj

    def get_fields(self, request, obj=None):
        """Support reads the change in words; developers also get the stored before/after JSON and ids."""
        if is_developer(request.user):
            return ["created_at", "actor_text", "action", "object_type_text", "object_id", "reason_text", "changes",
                    "before_json", "after_json"]
        return ["created_at", "actor_text", "action", "object_type_text", "object_link", "reason_text", "changes"]

    @admin.display(description=_("what changed"))
    def changes(self, obj):
        rows = audit_changes(obj)
        if not rows:
            return "—"
        return format_html(
            '<table class="mb-audit-diff"><thead><tr><th>{}</th><th>{}</th><th>{}</th></tr></thead><tbody>{}</tbody></table>',
            gettext("what"), gettext("before"), gettext("after"),
            format_html_join("", "<tr><th>{}</th><td><del>{}</del></td><td><ins>{}</ins></td></tr>", rows),
        )

    def get_changelist(self, request, **kwargs):
        return SubjectChangeList

    @admin.display(description=_("subject user"))
    def subject(self, obj):
        return person_link(getattr(obj, "person", None))

    @admin.display(description=_("actor"), ordering="actor_label")
    def actor_text(self, obj):
        return obj.actor_text

    @admin.display(description=_("object type"))
    def object_type_text(self, obj):
        return obj.object_type_label

    @admin.display(description=_("reason"))
    def reason_text(self, obj):
        words = obj.reason_label or "—"
        details = reason_details_text(obj.details) if getattr(obj, "show_ids", False) else ""
        return f"{words} ({details})" if details else words

    @admin.display(description=_("object"), ordering="object_id")
    def object_link(self, obj):
        if obj.action == AuditLog.Action.BULK and isinstance(obj.after, dict) and "count" in obj.after:
            count = int(obj.after["count"])
            return ngettext("%(count)d item", "%(count)d items", count) % {"count": count}
        show_ids = getattr(obj, "show_ids", False)
        if obj.object_type == "user":
            person = getattr(obj, "person", None)
            name = obj.object_id if show_ids or person is None else person.label
            return format_html('<a href="{}">{}</a>', reverse("person", args=[obj.object_id]), name)
        if obj.object_type == "conversation" and not show_ids:
            url = reverse("admin:memoryboard_chatmessage_changelist") + "?" + urlencode(
                {"conversation_id": obj.object_id})
            return format_html('<a href="{}">{}</a>', url, gettext("the conversation"))
        # The list and the entry's page looked the items up (``item_text`` "" : the item is gone).
        gone = getattr(obj, "item_text", None) == ""
        if obj.object_type == "memory" and gone and not show_ids:
            return _gone_words(obj)
        text = _snapshot_text(obj)
        if obj.object_type == "memory" and not gone and obj.action not in (AuditLog.Action.BULK,
                                                                            AuditLog.Action.PURGE):
            url = reverse("admin:memoryboard_longtermmemory_change", args=[obj.object_id])
            return format_html('<a href="{}">{}</a>', url, text or obj.object_id)
        return text or (obj.object_id if show_ids else "—")

    @admin.display(description=_("before"))
    def before_json(self, obj):
        return pretty_json(obj.before)

    @admin.display(description=_("after"))
    def after_json(self, obj):
        return pretty_json(obj.after)
