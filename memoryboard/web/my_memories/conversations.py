"""One of the user's own conversations, read-only: where a memory came from."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from memoryboard.agents_config import agent_labels
from memoryboard.ltm.store.tasks import current_items
from memoryboard.web.conversation_turns import describe_turns
from memoryboard.web.my_memories.common import own_items, own_messages, with_labels

CONVERSATION_PAGE_SIZE = 100


@login_required
@require_GET
def conversation_detail(request, conversation_id: str):
    """One of the user's own conversations, read-only: where a memory came from."""
    rows = own_messages(request).filter(conversation_id=conversation_id).order_by("id")
    page = Paginator(rows, CONVERSATION_PAGE_SIZE).get_page(request.GET.get("page"))
    if not page.object_list:
        raise Http404(_("No such conversation."))
    first = rows.first()

    describe_turns(page.object_list)
    return render(request, "web/my_conversation.html", {
        "conversation_id": conversation_id,
        "agent_label": agent_labels().get(first.agent_id, first.agent_id),
        "messages_page": page,
        "memories": with_labels(list(
            current_items(own_items(request).filter(value_json__conversationId=conversation_id)).order_by("-updated_at")[:50]
        )),
    })
