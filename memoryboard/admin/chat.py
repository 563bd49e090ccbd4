"""Admin of stored chat messages, grouped by conversation; read-only except for superusers."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Q
from django.template.defaultfilters import linebreaksbr
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.text import Truncator
from django.utils.translation import gettext, gettext_lazy as _

from memoryboard.admin.common import GoneObjectMixin, PeopleChangeList, person_link
from memoryboard.admin.filters import ChatAgentFilter, ChatUserFilter, ConversationFilter
from memoryboard.admin.logentry import IdOnlyLogMixin
from memoryboard.admin.paginator import CappedCountAdminMixin
from memoryboard.agents_config import agent_labels
from memoryboard.models import ChatMessage
from memoryboard.models.labels import json_words
from memoryboard.roles import is_developer
from memoryboard.users import people


class MessageChangeList(PeopleChangeList):
    """Rows carry ``show_ids``: whether the reader is a developer (who reads ids and stored JSON)."""

    def get_results(self, request):
        super().get_results(request)
        show_ids = is_developer(request.user)
        for message in self.result_list:
            message.show_ids = show_ids


def content_words(message: ChatMessage) -> str:
    """A message's content for support: its text; a tool's JSON answer as "key: value" pairs; an assistant
    turn that only called tools, the tools it called."""
    content = message.content or ""
    if message.role == ChatMessage.Role.TOOL:
        words = json_words(content)
        if words is not None:
            return words
    if not content.strip():
        calls = (message.metadata or {}).get("tool_calls") if isinstance(message.metadata, dict) else None
        names = [str(c.get("name") or (c.get("function") or {}).get("name") or "?") for c in calls or []
                 if isinstance(c, dict)]
        if names:
            return gettext("called %(tools)s") % {"tools": ", ".join(names)}
        return "—"
    return content


@admin.register(ChatMessage)
class ChatMessageAdmin(GoneObjectMixin, IdOnlyLogMixin, CappedCountAdminMixin, admin.ModelAdmin):
    list_display = ["message_id", "conversation", "role", "preview", "agent_id", "user", "created_at"]
    list_display_links = ["message_id"]
    list_filter = [ChatUserFilter, ConversationFilter, "role", ChatAgentFilter]
    search_fields = ["=conversation_id"]
    search_help_text = _("With a user chosen, searches the content of their messages; otherwise an exact "
                         "conversation id.")
    # The (conversation_id, id) index serves this order: a conversation reads as one block.
    ordering = ["conversation_id", "id"]
    sortable_by = ["conversation", "message_id"]
    list_per_page = 50
    show_facets = admin.ShowFacets.NEVER

    def get_changelist(self, request, **kwargs):
        return MessageChangeList

    def get_list_display(self, request):
        """Developers read message and conversation ids; support reads the conversation by its agent and
        opens a message from its text."""
        if is_developer(request.user):
            return self.list_display
        if request.GET.get(ConversationFilter.parameter_name):  # one conversation: no column repeating it
            return ["role", "preview", "agent", "user", "created_at"]
        return ["conversation_words", "role", "preview", "agent", "user", "created_at"]

    def get_fields(self, request, obj=None):
        if is_developer(request.user):
            return super().get_fields(request, obj)
        return ["conversation_words", "agent", "user", "role", "message_text", "created_at"]

    def get_readonly_fields(self, request, obj=None):
        if is_developer(request.user):
            return super().get_readonly_fields(request, obj)
        return self.get_fields(request, obj)

    def get_object(self, request, object_id, from_field=None):
        obj = super().get_object(request, object_id, from_field)
        if obj is not None:
            obj.show_ids = is_developer(request.user)
            obj.person = people([obj.user_id]).get(obj.user_id)
        return obj

    def get_list_display_links(self, request, list_display):
        return self.list_display_links if is_developer(request.user) else ["preview"]

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
                           gettext("view whole conversation"))

    @admin.display(description=_("conversation"), ordering="conversation_id")
    def conversation_words(self, obj):
        url = "?" + urlencode({ConversationFilter.parameter_name: obj.conversation_id})
        return format_html('<a class="mb-conv-link" href="{}">{}</a>', url, gettext("with %(agent)s: whole conversation")
                           % {"agent": self.agent(obj)})

    @admin.display(description=_("agent"), ordering="agent_id")
    def agent(self, obj):
        return agent_labels().get(obj.agent_id, obj.agent_id)

    @admin.display(description=_("content"))
    def preview(self, obj):
        return Truncator(obj.content if getattr(obj, "show_ids", True) else content_words(obj)).chars(120)

    @admin.display(description=_("content"))
    def message_text(self, obj):
        return linebreaksbr(content_words(obj))

    def _superuser(self, request) -> bool:
        return bool(request.user.is_active and request.user.is_superuser)

    def has_add_permission(self, request):
        return self._superuser(request)

    def has_change_permission(self, request, obj=None):
        return self._superuser(request)

    def has_delete_permission(self, request, obj=None):
        return self._superuser(request)
