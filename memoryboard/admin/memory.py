"""Admin of long-term memory items (``ah_long_term_memory``), built for a million rows.

Every write goes through the services (``ltm.store.items``, ``ltm.write.edits``, ``ltm.write.staff``), so
it is audited. Support staff view, edit, archive, restore and re-embed; developers view; superusers may also purge.
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import connection
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import mark_safe
from django.utils.text import Truncator
from django.utils.timezone import localtime
from django.utils.translation import gettext, gettext_lazy as _, ngettext

from memoryboard.admin.audit import audit_changes
from memoryboard.admin.common import GoneObjectMixin, PeopleChangeList, person_link
from memoryboard.admin.filters import AgentFilter, SourceFilter, StateFilter, TypeFilter, UserFilter, paused_exists
from memoryboard.admin.logentry import IdOnlyLogMixin
from memoryboard.admin.meaning import meaning_search_view
from memoryboard.admin.paginator import CappedCountAdminMixin
from memoryboard.agents_config import agent_labels, get_agents_config
from memoryboard.llm.errors import LLMError
from memoryboard.ltm.search import ranking
from memoryboard.ltm.search.receipts import receipts_for_memory
from memoryboard.ltm.search.retrieval import memory_search
from memoryboard.ltm.store.items import MAX_CONTENT_CHARS, MemoryError
from memoryboard.ltm.store.selectors import (
    configured_agent_namespaces,
    filter_memories,
    memory_queryset_for,
    own_memories,
)
from memoryboard.ltm.store.states import memory_state
from memoryboard.ltm.write.edits import memory_update
from memoryboard.ltm.write.reconcile import memory_save_reconciled
from memoryboard.ltm.write.review import memory_review_approve, memory_review_reject
from memoryboard.ltm.write.staff import (
    MAX_BULK_ITEMS,
    BulkTooLarge,
    memory_archive_many,
    memory_bulk_preview,
    memory_merge,
    memory_merge_selected,
    memory_pause_many,
    memory_purge_many,
    memory_reembed_many,
    memory_restore_many,
    memory_resume_many,
)
from memoryboard.models import (
    ArchivedReason,
    AuditLog,
    LongTermMemory,
    MemoryAccess,
    MemoryState,
    MemoryStateChange,
    MemoryType,
    Source,
)
from memoryboard.models.labels import reason_label, source_label, type_label
from memoryboard.models.namespaces import build_namespace
from memoryboard.roles import can_change_any_memory, can_purge, is_developer
from memoryboard.shared.item_words import describe
from memoryboard.users import attach_people, person

PREVIEW_CHARS = 120
# Above this many rows a content search needs the user filter (a full scan takes seconds).
SEARCH_SCAN_MAX_ROWS = 200_000
SAMPLE_SIZE = 10
ACCESS_PAGE_SIZE = 20
RELATED_K = 5


def _model_failed(exc: LLMError) -> str:
    return gettext("Nothing was saved: the embedding model failed (%(reason)s).") % {"reason": exc.reason}


def memory_table_is_large() -> bool:
    """Whether a full scan of the memory table is too slow for a page (estimated, not counted)."""
    limit = getattr(settings, "MEMORYBOARD_ADMIN_SEARCH_SCAN_MAX_ROWS", SEARCH_SCAN_MAX_ROWS)
    if connection.vendor == "mysql":
        with connection.cursor() as cur:
            cur.execute(
                "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() "
                "AND TABLE_NAME = %s",
                [LongTermMemory._meta.db_table],
            )
            row = cur.fetchone()
        return bool(row and (row[0] or 0) > limit)
    return LongTermMemory.objects.values("pk")[: limit + 1].count() > limit


class _MemoryForm(forms.ModelForm):
    """Content and type as form fields; the stored JSON is never edited by hand."""

    content = forms.CharField(
        label=_("content"), max_length=MAX_CONTENT_CHARS, widget=forms.Textarea(attrs={"rows": 6, "cols": 90})
    )
    memory_type = forms.ChoiceField(label=_("type"), choices=MemoryType.choices)

    class Meta:
        model = LongTermMemory
        fields: list[str] = []


class MemoryChangeForm(_MemoryForm):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance and self.instance.pk:
            self.fields["content"].initial = self.instance.content
            self.fields["memory_type"].initial = self.instance.memory_type.upper()


class MemoryAddForm(_MemoryForm):
    """Manual add by staff: the item is embedded on save with ``source="manual"``."""

    user_id = forms.CharField(label=_("user id"), max_length=200)
    agent = forms.ChoiceField(label=_("agent"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["agent"].choices = configured_agent_namespaces()


def _labelled(memories: list[LongTermMemory]) -> list[LongTermMemory]:
    for m in memories:
        m.type_label = type_label(m.memory_type)
        m.state_label = reason_label(m.archived_reason) if m.archived else MemoryState.ACTIVE.label
    return memories


FROM_ITEM = "_from_item"
PREVIEW_MAX_ITEMS = 1000  # a bulk action's confirmation lists what it does up to this many items


def _bulk_action(name: str, description, title, service, done):
    """An admin action that asks for confirmation (count + sample), then runs ``service``."""

    @admin.action(description=description, permissions=["change"])
    def action(modeladmin, request, queryset):
        return modeladmin._confirmed(request, queryset, action=name, title=title, service=service, done=done)

    action.__name__ = name
    return action


def _review(decision: str, *, memories, actor) -> list[str]:
    """Approve or reject the selected items that wait for review (``ltm.write.review``); others are left alone."""
    service = memory_review_approve if decision == "approve" else memory_review_reject
    return service(memories=memories, actor=actor)


@admin.register(LongTermMemory)
class LongTermMemoryAdmin(GoneObjectMixin, IdOnlyLogMixin, CappedCountAdminMixin, admin.ModelAdmin):
    # Seven columns fit 1366 px next to the filters with the content readable (source and score are on
    # the item page and in the filters).
    list_display = ["preview", "user", "agent", "type", "state", "usage", "updated_at"]
    list_display_links = ["preview"]
    # One state filter (its archive reasons included), in the words the item pages use.
    list_filter = [AgentFilter, UserFilter, TypeFilter, SourceFilter, StateFilter]
    # Only orders an index can serve over a million rows.
    ordering = ["-updated_at", "-id"]
    sortable_by = ["updated_at"]
    search_fields = ["id"]
    search_help_text = _("Searches the content (case-insensitive) or an exact id.")
    # Rendering dominates a page once the queries are bounded: 50 rows keep it well under 300 ms.
    list_per_page = 50
    show_facets = admin.ShowFacets.NEVER
    actions = ["archive_selected", "restore_selected", "pause_selected", "resume_selected", "merge_selected",
               "reembed_selected", "approve_selected", "reject_selected"]
    change_form_template = "admin/memoryboard/longtermmemory/change_form.html"
    object_history_template = "admin/memoryboard/object_history.html"
    change_list_template = "admin/memoryboard/longtermmemory/change_list.html"
    readonly_fields = [
        "id", "namespace_text", "agent", "user", "source", "key_name", "created_at", "updated_at",
        "access_count", "last_accessed_at", "relevance_score", "state", "state_explained", "archived_at",
        "archived_reason", "source_conversation",
    ]

    # Reads -------------------------------------------------------------------------------------

    def get_queryset(self, request):
        return memory_queryset_for(request.user).annotate(is_paused=paused_exists())

    def get_changelist(self, request, **kwargs):
        return PeopleChangeList

    def get_search_results(self, request, queryset, search_term):
        """Content search (case-insensitive substring) or an exact id.

        A substring match cannot use an index; on a large table it runs only within one user (the
        user filter is an indexed prefilter). Otherwise the search matches ids only and says so.
        """
        term = (search_term or "").strip()
        if not term:
            return queryset, False
        if request.GET.get(UserFilter.parameter_name, "").strip() or not memory_table_is_large():
            return filter_memories(queryset, search=term), False
        if not getattr(request, "_mb_search_note", False):
            request._mb_search_note = True
            self.message_user(
                request,
                gettext("The table is large: the search matched ids only. Choose a user to search content."),
                messages.INFO,
            )
        return queryset.filter(pk=term), False

    @admin.display(description=mark_safe('<input type="checkbox" id="action-toggle">'))
    def action_checkbox(self, obj):
        # Django renders a form widget template per row; this is the same markup at a fraction of the cost.
        return format_html(
            '<input type="checkbox" name="{}" value="{}" class="action-select" aria-label="{}">',
            helpers.ACTION_CHECKBOX_NAME, str(obj.pk),
            format_html(gettext("Select this object for an action - {}"), obj),
        )

    @admin.display(description=_("content"))
    def preview(self, obj):
        return Truncator(obj.content).chars(PREVIEW_CHARS)

    @admin.display(description=_("agent"))
    def agent(self, obj):
        agent = obj.agent_namespace or obj.agent_id
        return agent_labels().get(agent, agent)

    @admin.display(description=_("user"))
    def user(self, obj):
        return person_link(getattr(obj, "person", None) or (person(obj.user_id) if obj.user_id else None))

    @admin.display(description=_("namespace"))
    def namespace_text(self, obj):
        return format_html("<code>{}</code>", obj.namespace)

    @admin.display(description=_("used"))
    def usage(self, obj):
        """The use count and the last use, from the item's own columns (as the item page says)."""
        if not obj.access_count:
            return format_html('<span class="mb-muted">{}</span>', gettext("never"))
        return format_html(
            '{}<br><span class="mb-muted">{}</span>',
            ngettext("%(count)d time", "%(count)d times", obj.access_count) % {"count": obj.access_count},
            date_format(localtime(obj.last_accessed_at), "SHORT_DATE_FORMAT") if obj.last_accessed_at else "",
        )

    @admin.display(description=_("type"))
    def type(self, obj):
        return type_label(obj.memory_type)

    @admin.display(description=_("source"))
    def source(self, obj):
        return source_label(obj.source)

    @admin.display(description=_("source conversation"))
    def source_conversation(self, obj):
        conversation = str((obj.value_json or {}).get("conversationId") or "")
        if not conversation:
            return format_html('<span class="mb-muted">{}</span>', gettext("not recorded"))
        url = reverse("admin:memoryboard_chatmessage_changelist") + "?" + urlencode(
            {"conversation_id": conversation})
        return format_html('<a href="{}">{}</a>', url, gettext("open the conversation"))

    @admin.display(description=_("why"))
    def state_explained(self, obj):
        """The state in a sentence: what, when, why (the threshold, the limit, support's words)."""
        item = describe([obj], user_id=obj.user_id or "")[0]
        return item.state_text or "—"

    @admin.display(description=_("state"))
    def state(self, obj):
        code, label = self._state(obj)
        return format_html('<span class="mb-state mb-state-{}">{}</span>', code, label)

    def _state(self, obj) -> tuple[str, str]:
        if obj.archived:
            if obj.archived_reason == ArchivedReason.USER_DELETED:
                return MemoryState.DELETED, MemoryState.DELETED.label
            if obj.archived_reason == ArchivedReason.STAFF:
                return MemoryState.ARCHIVED, ArchivedReason.STAFF.label
            reason = ArchivedReason(obj.archived_reason).label if obj.archived_reason in ArchivedReason.values else ""
            label = f"{MemoryState.ARCHIVED.label} ({reason})" if reason else MemoryState.ARCHIVED.label
            return MemoryState.ARCHIVED, label
        paused = getattr(obj, "is_paused", None)
        if paused is None:
            paused = memory_state(obj) == MemoryState.PAUSED
        state = MemoryState.PAUSED if paused else MemoryState.ACTIVE
        return state, state.label

    # Permissions: Django model permissions (from the role groups) and the roles, both ----------

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and can_change_any_memory(request.user)

    def has_add_permission(self, request):
        return super().has_add_permission(request) and can_change_any_memory(request.user)

    def has_delete_permission(self, request, obj=None):
        return can_purge(request.user) and super().has_delete_permission(request, obj)

    # Forms ---------------------------------------------------------------------------------------

    def get_fieldsets(self, request, obj=None):
        if obj is None:
            return [(None, {"fields": ["user_id", "agent", "memory_type", "content"]})]
        # Ids and the namespace are for developers; support reads who, which agent and where from.
        identity = ["agent", "user", "source", "source_conversation"]
        if is_developer(request.user):
            identity = ["id", "namespace_text", *identity, "key_name"]
        return [
            (None, {"fields": ["memory_type", "content"]}),
            (_("Identity"), {"fields": identity}),
            (_("Statistics and state"), {"fields": [
                "relevance_score", "access_count", "last_accessed_at", "created_at", "updated_at",
                "state", *(["state_explained"] if obj.archived else []),
            ]}),
        ]

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else super().get_readonly_fields(request, obj)

    def get_form(self, request, obj=None, change=False, **kwargs):
        kwargs["form"] = MemoryAddForm if obj is None else MemoryChangeForm
        return super().get_form(request, obj, change=change, **kwargs)

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        if change:
            saved = memory_update(
                memory=obj, actor=request.user, content=data["content"], memory_type=data["memory_type"]
            )
        else:
            agent = data["agent"]
            agent_id = next(
                (aid for aid, cfg in get_agents_config().agents.items() if cfg.long_term_memory.namespace == agent),
                agent,
            )
            saved = memory_save_reconciled(  # a repeat reinforces the existing item, an update supersedes
                namespace=build_namespace(agent_namespace=agent, user_id=data["user_id"].strip()),
                content=data["content"], memory_type=data["memory_type"], source=Source.MANUAL,
                agent_id=agent_id, actor=request.user,
            ).memory
        for field in LongTermMemory._meta.concrete_fields:
            setattr(obj, field.attname, getattr(saved, field.attname))

    def delete_model(self, request, obj):
        memory_purge_many(memories=[obj], actor=request.user)

    def delete_queryset(self, request, queryset):
        memory_purge_many(memories=queryset, actor=request.user)

    # Bulk actions with a confirmation page --------------------------------------------------------

    def _confirmed(self, request, queryset, *, action: str, title: str, service, done):
        """Show the count and a sample first; run ``service`` in one transaction once confirmed."""
        count = queryset.order_by().values("pk")[: MAX_BULK_ITEMS + 1].count()
        if count > MAX_BULK_ITEMS:
            self.message_user(
                request,
                ngettext("More than %(max)s item is selected; one action changes at most %(max)s: narrow the filter.",
                         "More than %(max)s items are selected; one action changes at most %(max)s: narrow the "
                         "filter.", MAX_BULK_ITEMS) % {"max": MAX_BULK_ITEMS},
                messages.ERROR,
            )
            return None
        asks_reason = action == "archive_selected"
        if request.POST.get("confirm") == "yes":
            try:
                note = {"note": request.POST.get("reason", "")} if asks_reason else {}
                ids = service(memories=queryset, actor=request.user, **note)
            except (BulkTooLarge, MemoryError) as exc:
                self.message_user(request, getattr(exc, "message", str(exc)), messages.ERROR)
                return self._back_to_item(request, queryset)
            except LLMError as exc:
                self.message_user(request, _model_failed(exc), messages.ERROR)
                return self._back_to_item(request, queryset)
            self.message_user(request, done(len(ids)), messages.SUCCESS)
            return self._back_to_item(request, queryset)
        # The action itself, rolled back: what each item becomes (re-embedding changes no text or state).
        outcome, preview_error = None, ""
        if action != "reembed_selected" and count <= PREVIEW_MAX_ITEMS:
            try:
                outcome = memory_bulk_preview(service=service, memories=queryset, actor=request.user,
                                              **({"note": ""} if asks_reason else {}))
            except (BulkTooLarge, MemoryError) as exc:
                preview_error = getattr(exc, "message", str(exc))
        context = {
            **self.admin_site.each_context(request),
            "outcome": outcome,
            "preview_error": preview_error,
            "title": str(title),
            "action": action,
            "count": count,
            "sample": _labelled(attach_people(queryset[:SAMPLE_SIZE])),
            "selected": request.POST.getlist(helpers.ACTION_CHECKBOX_NAME),
            "select_across": request.POST.get("select_across", "0"),
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "from_item": bool(request.POST.get(FROM_ITEM)),
            "asks_reason": asks_reason,
            "opts": self.model._meta,
            "media": self.media,
        }
        return TemplateResponse(request, "admin/memoryboard/confirm_bulk_action.html", context)

    def _back_to_item(self, request, queryset):
        """After an action started from an item's page (its buttons), back to that page."""
        if not request.POST.get(FROM_ITEM):
            return None
        ids = request.POST.getlist(helpers.ACTION_CHECKBOX_NAME)
        if len(ids) != 1:
            return None
        return HttpResponseRedirect(reverse("admin:memoryboard_longtermmemory_change", args=[ids[0]]))

    archive_selected = _bulk_action(
        "archive_selected", _("Archive selected items"), _("Archive items"), memory_archive_many,
        lambda n: ngettext("Archived %(count)d item.", "Archived %(count)d items.", n) % {"count": n},
    )
    restore_selected = _bulk_action(
        "restore_selected", _("Restore selected items"), _("Restore items"), memory_restore_many,
        lambda n: ngettext("Restored %(count)d item.", "Restored %(count)d items.", n) % {"count": n},
    )
    pause_selected = _bulk_action(
        "pause_selected", _("Pause selected items (kept, never retrieved)"), _("Pause items"), memory_pause_many,
        lambda n: ngettext("Paused %(count)d item.", "Paused %(count)d items.", n) % {"count": n},
    )
    resume_selected = _bulk_action(
        "resume_selected", _("Resume selected items"), _("Resume items"), memory_resume_many,
        lambda n: ngettext("Resumed %(count)d item.", "Resumed %(count)d items.", n) % {"count": n},
    )
    merge_selected = _bulk_action(
        "merge_selected", _("Merge selected items of one user"),
        _("Merge items: keep the one used most, label the others “merged into” it"), memory_merge_selected,
        lambda n: ngettext("Merged: archived %(count)d item.", "Merged: archived %(count)d items.", n) % {"count": n},
    )
    approve_selected = _bulk_action(
        "approve_selected", _("Approve selected items waiting for review"), _("Approve items"),
        lambda **kw: _review("approve", **kw),
        lambda n: ngettext("Approved %(n)d memory.", "Approved %(n)d memories.", n) % {"n": n},
    )
    reject_selected = _bulk_action(
        "reject_selected", _("Reject selected items waiting for review"), _("Reject items"),
        lambda **kw: _review("reject", **kw),
        lambda n: ngettext("Rejected %(n)d memory.", "Rejected %(n)d memories.", n) % {"n": n},
    )
    reembed_selected = _bulk_action(
        "reembed_selected", _("Re-embed selected items"), _("Re-embed items"), memory_reembed_many,
        lambda n: ngettext("Re-embedded %(count)d item.", "Re-embedded %(count)d items.", n) % {"count": n},
    )

    # The change page: history, state changes, access log, related items, merge -----------------

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        return [
            path("search-by-meaning/", self.admin_site.admin_view(lambda request: meaning_search_view(self, request)),
                 name="%s_%s_meaning" % info),
            path("<path:object_id>/merge/", self.admin_site.admin_view(self.merge_view),
                 name="%s_%s_merge" % info),
        ] + super().get_urls()

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        # Saving re-embeds the content; if the model fails, the whole save rolls back.
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except LLMError as exc:
            self.message_user(request, _model_failed(exc), messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def history_view(self, request, object_id, extra_context=None):
        """Django's history page, with the item's audit entries in words first (most changes are not the
        admin's: agents, the support desk, the owner)."""
        entries = AuditLog.objects.filter(object_type="memory", object_id=unquote(object_id))[:50]
        extra_context = {**(extra_context or {}), "audit_entries": [(e, audit_changes(e)) for e in entries]}
        return super().history_view(request, object_id, extra_context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        obj = self.get_object(request, object_id)
        if obj is not None:
            extra_context.update(self._insight_context(request, obj))
        return super().change_view(request, object_id, form_url, extra_context)

    def _insight_context(self, request, obj) -> dict:
        accesses = Paginator(MemoryAccess.objects.filter(memory_id=obj.pk), ACCESS_PAGE_SIZE)
        access_page = accesses.get_page(request.GET.get("access_page"))
        last_access = access_page.object_list[0] if access_page.number == 1 and access_page.object_list else (
            MemoryAccess.objects.filter(memory_id=obj.pk).first()
        )
        related, related_error = self._related(obj)

        agents = agent_labels()
        for access in access_page.object_list:
            access.agent_label = agents.get(access.agent_id, access.agent_id)
        receipt_rows = receipts_for_memory(memory=obj)
        for receipt, _c in receipt_rows:
            receipt.agent_label = agents.get(receipt.agent_id, receipt.agent_id)
        return {
            "state_text": describe([obj], user_id=obj.user_id or "")[0].state_text,
            "receipt_rows": receipt_rows,
            "audit_entries": AuditLog.objects.filter(object_type="memory", object_id=obj.pk)[:50],
            "state_changes": MemoryStateChange.objects.filter(memory_id=obj.pk).select_related("actor")[:50],
            "access_page": access_page,
            "access_total": accesses.count,
            "last_access": last_access,
            "related": related,
            "related_error": related_error,
            "can_merge": self.has_change_permission(request, obj) and not obj.archived,
            "item_actions": self._item_actions(request, obj),
            "from_item_field": FROM_ITEM,
            "merge_url": reverse("admin:memoryboard_longtermmemory_merge", args=[obj.pk]),
        }

    def _item_actions(self, request, obj) -> list[tuple[str, str]]:
        """The buttons of an item's page: the bulk actions that apply to it, same confirmation and audit."""
        if not self.has_change_permission(request, obj):
            return []
        if obj.archived and obj.archived_reason == ArchivedReason.PENDING_REVIEW:
            return [("approve_selected", gettext("Approve")), ("reject_selected", gettext("Reject"))]
        if obj.archived:
            return [("restore_selected", gettext("Restore"))]

        paused = memory_state(obj) == MemoryState.PAUSED
        return [
            ("archive_selected", gettext("Archive")),
            ("resume_selected", gettext("Resume")) if paused else ("pause_selected", gettext("Pause")),
            ("reembed_selected", gettext("Re-embed")),
        ]

    def _related(self, obj) -> tuple[list, str]:
        """The nearest active items of the same user (duplicates, contradictions), and an error if any."""
        if not obj.user_id or not obj.content:
            return [], ""
        candidates = own_memories(user_id=obj.user_id).exclude(pk=obj.pk)
        try:
            # Items about the same thing only (duplicates, contradictions): the agent's minimum relevance.
            found = memory_search(queryset=candidates, query=obj.content, k=RELATED_K,
                                  min_relevance=ranking.MIN_RELEVANCE)
            _labelled([r.memory for r in found])
            return found, ""
        except LLMError as exc:  # the page still shows the item; the panel says why it is empty
            return [], exc.reason

    def merge_view(self, request, object_id):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        keep = self.get_object(request, object_id)
        if keep is None or not self.has_change_permission(request, keep) or keep.archived:
            raise PermissionDenied
        ids = request.POST.getlist("merge_ids")
        others = own_memories(user_id=keep.user_id or "").filter(pk__in=ids) if keep.user_id else []
        merged = memory_merge(keep=keep, others=others, actor=request.user) if ids else []
        if merged:
            self.message_user(
                request,
                ngettext("Merged: archived %(count)d item.", "Merged: archived %(count)d items.", len(merged))
                % {"count": len(merged)},
                messages.SUCCESS,
            )
        else:
            self.message_user(request, gettext("Nothing was merged: choose related items of the same user."),
                              messages.WARNING)
        return HttpResponseRedirect(reverse("admin:memoryboard_longtermmemory_change", args=[keep.pk]))
