"""Admin of retrieval receipts: what each agent turn's retrieval considered, injected and left out."""

from __future__ import annotations

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from memoryboard.admin.audit import ReadOnlyAdminMixin, pretty_json
from memoryboard.admin.paginator import CappedCountAdminMixin
from memoryboard.models import RetrievalReceipt


@admin.register(RetrievalReceipt)
class RetrievalReceiptAdmin(ReadOnlyAdminMixin, CappedCountAdminMixin, admin.ModelAdmin):
    list_display = ["created_at", "agent_id", "user_id", "kind", "query", "counts"]
    list_filter = ["kind", "agent_id"]
    search_fields = ["=conversation_id", "=user_id"]
    fields = ["created_at", "agent_id", "user_id", "conversation_id", "kind", "query", "k", "model_name",
              "min_relevance", "index", "counts", "candidates_table"]
    readonly_fields = fields
    show_full_result_count = False

    @admin.display(description=_("candidates (best first)"))
    def candidates_table(self, obj):
        return pretty_json(obj.candidates)
