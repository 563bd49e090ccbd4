"""Admin of stored chat messages, grouped by conversation; read-only except for superusers."""

from __future__ import annotations

from django.contrib import admin
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.text import Truncator
from django.utils.translation import gettext_lazy as _

from django.db.models import Q

from memoryboard.admin.filters import ChatUserFilter, ConversationFilter
from memoryboard.admin.logentry import IdOnlyLogMixin
from memoryboard.admin.memory import PeopleChangeList, person_link
from memoryboard.admin.paginator import CappedCountAdminMixin
from memoryboard.models import ChatMessage


@admin.register(ChatMessage)
class ChatMessageAdmin(IdOnlyLogMixin, CappedCountAdminMixin, admin.ModelAdmin):
    list_display = ["message_id", "conversation", "role", "preview", "agent_id", "user", "created_at"]
    list_display_links = ["message_id"]
    list_filter = [ChatUserFilter, ConversationFilter, "role", "agent_id"]
    search_fields = ["=conversation_id"]
    search_help_text = _("With a user chosen, searches the content of their messages; otherwise an exact "
                         "conversation id.")
    # The (conversation_id, id) index serves this order: a conversation reads as one block.
    ordering = ["conversation_id", "id"]
    sortable_by = ["conversation", "message_id"]
    list_per_page = 50
    show_facets = admin.ShowFacets.NEVER

    def get_changelist(self, request, **kwargs):
        return PeopleChangeList

    def get_search_results(self, request, queryset, search_term):
        """Content (case-insensitive substring) within the chosen user, or an exact conversation id.

        A substring scan of the whole message table has no index to use; one user's messages are few.
        """
        term = (search_term or "").strip()
        if not term:
            return queryset, False
        if request.GET.get(ChatUserFilter.parameter_name, "").strip():
            return queryset.filter(Q(content__icontains=term) | Q(conversation_id=term)), False
        return queryset.filter(conversation_id=term), False

    @admin.display(description=_("id"), ordering="id")
    def message_id(self, obj):
        return obj.pk

    @admin.display(description=_("user"))
    def user(self, obj):
        return person_link(getattr(obj, "person", None))

    @admin.display(description=_("conversation"), ordering="conversation_id")
    def conversation(self, obj):
        url = "?" + urlencode({ConversationFilter.parameter_name: obj.conversation_id})
        return format_html('{} <a class="mb-conv-link" href="{}">{}</a>', obj.conversation_id, url,
                           _("view whole conversation"))

    @admin.display(description=_("content"))
    def preview(self, obj):
        return Truncator(obj.content).chars(120)

    def _superuser(self, request) -> bool:
        return bool(request.user.is_active and request.user.is_superuser)

    def has_add_permission(self, request):
        return self._superuser(request)

    def has_change_permission(self, request, obj=None):
        return self._superuser(request)

    def has_delete_permission(self, request, obj=None):
        return self._superuser(request)
