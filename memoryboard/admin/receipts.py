"""Admin of retrieval receipts: what each agent turn's retrieval considered, injected and left out.

Said in words, as the item page's "Recent retrievals" table says it: the user by name, the agent by its
display name, the kind and the outcomes translated, the candidates as a table of their texts. Developers
also get the stored candidates as JSON (the ids and every score part).
"""

from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.translation import gettext, gettext_lazy as _

from memoryboard.admin.common import ReadOnlyAdminMixin, person_link, pretty_json
from memoryboard.admin.paginator import CappedCountAdminMixin
from memoryboard.agents_config import agent_labels, get_agents_config
from memoryboard.models import LongTermMemory, MemoryAccess, RetrievalReceipt
from memoryboard.roles import is_developer
from memoryboard.users import person

KIND_LABELS = dict(MemoryAccess.Kind.choices)


def counts_in_words(receipt: RetrievalReceipt) -> str:
    """"1 returned · 2 below the minimum relevance": a count, then what happened to those candidates."""
    parts = [gettext("%(count)d %(outcome)s") % {"count": n, "outcome": label} for label, n in receipt.count_labels()]
    return " · ".join(parts) or "—"


class KindFilter(admin.SimpleListFilter):
    title = _("kind")
    parameter_name = "kind"

    def lookups(self, request, model_admin):
        return list(MemoryAccess.Kind.choices)

    def queryset(self, request, queryset):
        return queryset.filter(kind=self.value()) if self.value() else queryset


class ReceiptAgentFilter(admin.SimpleListFilter):
    title = _("agent")
    parameter_name = "agent_id"

    def lookups(self, request, model_admin):
        return [(agent_id, cfg.label) for agent_id, cfg in sorted(get_agents_config().agents.items())]

    def queryset(self, request, queryset):
        return queryset.filter(agent_id=self.value()) if self.value() else queryset


@admin.register(RetrievalReceipt)
class RetrievalReceiptAdmin(ReadOnlyAdminMixin, CappedCountAdminMixin, admin.ModelAdmin):
    list_display = ["created_at", "agent_text", "user_text", "kind_text", "query", "counts_text"]
    list_filter = [KindFilter, ReceiptAgentFilter]
    search_fields = ["=conversation_id", "=user_id"]
    readonly_fields = ["created_at", "agent_text", "user_text", "conversation_link", "kind_text", "query", "k",
                       "model_name", "min_relevance", "index_text", "counts_text", "candidates_table",
                       "candidates_json"]
    show_full_result_count = False

    def get_fields(self, request, obj=None):
        fields = ["created_at", "agent_text", "user_text", "conversation_link", "kind_text", "query", "k",
                  "min_relevance", "index_text", "counts_text", "candidates_table"]
        if is_developer(request.user):
            fields += ["model_name", "candidates_json"]
        return fields

    @admin.display(description=_("agent"), ordering="agent_id")
    def agent_text(self, obj):
        return agent_labels().get(obj.agent_id, obj.agent_id)

    @admin.display(description=_("user"))
    def user_text(self, obj):
        return person_link(person(obj.user_id)) if obj.user_id else "—"

    @admin.display(description=_("kind"))
    def kind_text(self, obj):
        return KIND_LABELS.get(obj.kind, obj.kind)

    @admin.display(description=_("index"))
    def index_text(self, obj):
        return obj.index_label

    @admin.display(description=_("conversation"))
    def conversation_link(self, obj):
        if not obj.conversation_id:
            return "—"
        url = reverse("admin:memoryboard_chatmessage_changelist") + "?" + urlencode(
            {"conversation_id": obj.conversation_id})
        return format_html('<a href="{}">{}</a>', url, gettext("open the conversation"))

    @admin.display(description=_("candidates"))
    def counts_text(self, obj):
        return counts_in_words(obj)

    @admin.display(description=_("candidates (best first)"))
    def candidates_table(self, obj):
        rows = obj.candidate_rows()
        if not rows:
            return "—"
        texts = dict((pk, (v or {}).get("content", "") if isinstance(v, dict) else "") for pk, v in
                     LongTermMemory.objects.filter(pk__in=[r.get("id") for r in rows]).values_list("pk", "value_json"))

        def score(value) -> str:
            return f"{value:.3f}" if isinstance(value, (int, float)) else "—"

        body = format_html_join(
            "", '<tr data-outcome="{}"><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>',
            ((r.get("outcome", ""),
              format_html('<a href="{}">{}</a>', reverse("admin:memoryboard_longtermmemory_change", args=[r["id"]]),
                          texts[r["id"]][:120]) if r.get("id") in texts else gettext("an item no longer stored"),
              r["label"], score(r.get("semantic")), score(r.get("final"))) for r in rows),
        )
        return format_html(
            '<table class="mb-receipt-parts"><thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr></thead>'
            "<tbody>{}</tbody></table>",
            gettext("item"), gettext("Outcome"), gettext("Semantic"), gettext("Final"), body,
        )

    @admin.display(description=_("candidates as stored"))
    def candidates_json(self, obj):
        return pretty_json(obj.candidates)
