""""My memories": the items not in use, one section per state (replaced by a newer statement, rejected,
expired, archived), each described in the one vocabulary of states (``shared.item_words``), and the
user's undo of a replacement."""

from __future__ import annotations

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from memoryboard.ltm.store.items import MemoryError
from memoryboard.ltm.store.selectors import filter_memories
from memoryboard.ltm.store.states import state_q
from memoryboard.ltm.write.review import memory_replacement_undo
from memoryboard.models import MemoryState
from memoryboard.roles import platform_user_id
from memoryboard.shared.item_words import describe, state_title
from memoryboard.web.my_memories.common import own_items, with_labels, writes_own_memories

SECTION_ITEMS = 200
# The sections below the items in use, in the page's order: (state, anchor, what the user may do).
SECTIONS = (
    (MemoryState.SUPERSEDED, "replaced"),
    (MemoryState.REJECTED, "rejected"),
    (MemoryState.EXPIRED, "expired"),
    (MemoryState.ARCHIVED, "archived"),
)


def state_sections(request, *, query: str = "") -> list[dict]:
    """Each section: its state, anchor, title and items (described for their owner), newest change first."""
    user_id = platform_user_id(request.user)
    sections = []
    for state, anchor in SECTIONS:
        qs = filter_memories(own_items(request).filter(state_q(state)), search=query or None)
        items = describe(with_labels(list(qs.order_by("-archived_at", "-updated_at")[:SECTION_ITEMS])),
                         user_id=user_id, own=True)
        sections.append({"state": str(state), "anchor": anchor, "title": state_title(state, own=True),
                         "items": items})
    return sections


@login_required
@writes_own_memories
@require_POST
def memory_undo_replacement(request, memory_id: str):
    """The user's undo of a replacement: the replaced statement is in use again, the newer one rejected."""
    memory = get_object_or_404(own_items(request), pk=memory_id)
    try:
        memory_replacement_undo(memory=memory, actor=request.user)
    except MemoryError:
        flash.error(request, _("This memory was not replaced by a newer statement."))
        return redirect(reverse("my-memories") + "#replaced")
    flash.success(request, _("Undone: agents use “%(text)s” again; the newer statement is rejected.")
                  % {"text": memory.content[:80]})
    return redirect(reverse("my-memories") + f"#item-{memory.pk}")
