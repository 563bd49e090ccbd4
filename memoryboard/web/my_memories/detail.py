"""One of the user's items: its page (source conversation, accesses, earlier texts, state history) and
editing its text."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from memoryboard.agents_config import agent_labels
from memoryboard.audit import edit_history
from memoryboard.ltm.store.items import MemoryError
from memoryboard.ltm.store.tasks import archive_expired_among
from memoryboard.ltm.write.edits import memory_update
from memoryboard.models import LongTermMemory, MemoryAccess, MemoryStateChange
from memoryboard.roles import platform_user_id
from memoryboard.shared.item_words import describe, state_title
from memoryboard.web.forms import MemoryEditForm
from memoryboard.web.my_memories.common import item_usage, own_items, own_messages, with_labels, writes_own_memories

ACCESS_PAGE_SIZE = 20
# An item changed within this time of its creation was not "changed" (the write that stored it).
CHANGED_LATER = timedelta(minutes=1)


def _editable(request) -> QuerySet[LongTermMemory]:
    """What an owner may edit: their items that are not archived (active or paused)."""
    return own_items(request).filter(archived=False)


@login_required
@require_GET
def memory_detail(request, memory_id: str):
    """One of the user's items: edit its text, its source conversation, its access log (paginated), its
    earlier texts and its state history."""
    memory = get_object_or_404(own_items(request), pk=memory_id)
    archive_expired_among([memory])
    return _detail(request, memory, MemoryEditForm(initial={"content": memory.content}))


def _detail(request, memory: LongTermMemory, edit_form: MemoryEditForm, status: int = 200):
    page = Paginator(MemoryAccess.objects.filter(memory_id=memory.pk).order_by("-created_at", "-id"),
                     ACCESS_PAGE_SIZE).get_page(request.GET.get("page"))
    memory = with_labels([memory])[0]
    agents = agent_labels()
    for access in page:
        access.agent_label = agents.get(access.agent_id, access.agent_id)
    usage = item_usage([memory.pk]).get(memory.pk)
    described = describe([memory], user_id=platform_user_id(request.user), own=True)[0]
    history = list(MemoryStateChange.objects.filter(memory_id=memory.pk).order_by("-created_at", "-id")[:50])
    for change in history:
        change.old_title, change.new_title = state_title(change.old_state, own=True), state_title(change.new_state,
                                                                                                  own=True)
    return render(request, "web/my_memory_detail.html", {
        "memory": memory,
        "state": described.state,
        "described": described,
        "changed_later": memory.updated_at - memory.created_at >= CHANGED_LATER,
        "accesses": page,
        "usage": usage,
        "conversation_of_last_use": bool(usage and usage["conversation"]) and own_messages(request).filter(
            conversation_id=usage["conversation"]).exists(),
        "history": history,
        "edits": edit_history(memory.pk),
        "edit_form": edit_form if not memory.archived else None,
        "conversation_visible": bool(memory.conversation_id) and own_messages(request).filter(
            conversation_id=memory.conversation_id).exists(),
    }, status=status)


@login_required
@writes_own_memories
@require_POST
def memory_edit(request, memory_id: str):
    """Change an item's text: re-embedded and audited; the previous text stays in its history."""
    memory = get_object_or_404(_editable(request), pk=memory_id)
    form = MemoryEditForm(request.POST)
    if form.is_valid():
        try:
            memory_update(memory=memory, actor=request.user, content=form.cleaned_data["content"])
        except MemoryError as exc:
            form.add_error("content", exc.message)
        else:
            flash.success(request, _("Memory changed. The agents now use the new text."))
            return redirect("my-memories-detail", memory_id=memory.pk)
    return _detail(request, memory, form, status=400)
